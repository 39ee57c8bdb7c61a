//! Integration tests of the node crate: each starts a real node on port 0 in a temp dir.

mod common;
mod node;
