//! Step experiments: which variant of a step a contact gets ([`assign`]), and what the counts
//! say ([`stats`]: the always-valid test and the sample-ratio check). Pure: no I/O, no
//! stored randomness — the same contact, flow and step give the same variant on every replica
//! and in every replay, and any implementation of GrowthBook's published hashing predicts it.

pub mod assign;
pub mod stats;

pub use assign::{assign, bucket, fnv1a32, seed, Assigned};
