//! Every default of the node, each with the reason for its value.
