//! Integration tests of the `l2node` binary: real processes, real signals.

mod common;
mod config;
mod crash;
mod db;
mod estimate_send;
mod network;
mod readme;
