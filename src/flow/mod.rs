//! The flow language: the JSON model of SPEC §1 and its validator. Pure: no I/O.
