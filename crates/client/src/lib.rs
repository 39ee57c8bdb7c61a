//! l2node client crate.
