//! The client against a real node.

mod send;
