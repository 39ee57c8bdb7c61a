//! trie (in progress).
