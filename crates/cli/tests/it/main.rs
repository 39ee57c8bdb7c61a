//! Integration tests of the `l2node` binary: real processes, real signals.

mod common;
mod crash;
mod estimate_send;
mod network;
