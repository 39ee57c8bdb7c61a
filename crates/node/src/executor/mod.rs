//! executor (in progress).
