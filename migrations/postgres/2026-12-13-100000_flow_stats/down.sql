DROP TABLE variant_states;
DROP TABLE exposures;
DROP TABLE flow_counts;
