//! The step interpreter (SPEC §5). Pure: no I/O, no database, no wall clock.
