//! l2node api crate.
