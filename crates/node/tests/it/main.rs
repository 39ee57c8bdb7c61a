//! Integration tests of the node crate: one binary, one module per area.

mod wire;
