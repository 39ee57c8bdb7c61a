//! Integration tests of the `l2node` binary: real processes, real signals.

mod crash;
mod estimate_send;
