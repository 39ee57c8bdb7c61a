//! pool (in progress).
