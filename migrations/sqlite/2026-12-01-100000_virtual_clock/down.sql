DROP TABLE virtual_clock;
