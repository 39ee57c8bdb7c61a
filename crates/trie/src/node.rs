//! In-memory trie nodes and their Ethereum RLP encoding (via `alloy_trie::nodes`).

use alloy_primitives::{keccak256, B256};
use alloy_rlp::Decodable;
use alloy_trie::{
    nodes::{BranchNodeRef, ExtensionNodeRef, LeafNodeRef, RlpNode, TrieNode},
    Nibbles, TrieMask,
};

use super::TrieError;

/// One Merkle Patricia Trie node, as stored at its nibble path.
///
/// Children are referenced by [`RlpNode`]: the keccak hash of the child's RLP, or the RLP itself
/// when shorter than 32 bytes (an embedded node). Every node, embedded or not, is also stored
/// under its own path so traversal never needs to decode embedded children.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Node {
    /// Leaf: the rest of the key and the value.
    Leaf {
        /// Key nibbles after the node's path.
        key: Nibbles,
        /// The leaf value (raw bytes, RLP-string-wrapped in the encoding).
        value: Vec<u8>,
    },
    /// Extension: a shared key segment leading to one branch.
    Extension {
        /// The shared nibbles.
        key: Nibbles,
        /// Reference to the branch at `path ++ key`.
        child: RlpNode,
    },
    /// Branch with up to 16 children (secure tries never store values in branches).
    Branch {
        /// Child references by nibble.
        children: Box<[Option<RlpNode>; 16]>,
    },
}

/// A node's RLP encoding and its reference as seen by its parent.
pub(crate) struct Encoded {
    /// The node's RLP.
    pub rlp: Vec<u8>,
    /// Hash reference or the inlined RLP.
    pub node_ref: RlpNode,
}

impl Node {
    /// RLP-encode this node.
    pub(crate) fn encode(&self) -> Encoded {
        let mut rlp = Vec::with_capacity(64);
        let node_ref = match self {
            Self::Leaf { key, value } => LeafNodeRef::new(key, value).rlp(&mut rlp),
            Self::Extension { key, child } => ExtensionNodeRef::new(key, child).rlp(&mut rlp),
            Self::Branch { children } => {
                let mut mask = TrieMask::default();
                let mut stack = Vec::with_capacity(16);
                for (i, child) in children.iter().enumerate() {
                    if let Some(child) = child {
                        mask.set_bit(i as u8);
                        stack.push(child.clone());
                    }
                }
                BranchNodeRef::new(&stack, mask).rlp(&mut rlp)
            }
        };
        Encoded { rlp, node_ref }
    }

    /// Decode a node from its RLP.
    pub(crate) fn decode(bytes: &[u8]) -> Result<Self, TrieError> {
        let corrupt = TrieError::Corrupt;
        let node = TrieNode::decode(&mut &bytes[..]).map_err(|e| corrupt(e.to_string()))?;
        Ok(match node {
            TrieNode::Leaf(leaf) => Self::Leaf {
                key: leaf.key,
                value: leaf.value,
            },
            TrieNode::Extension(ext) => Self::Extension {
                key: ext.key,
                child: ext.child,
            },
            TrieNode::Branch(branch) => {
                let mut children: Box<[Option<RlpNode>; 16]> = Box::default();
                let mut stack = branch.stack.into_iter();
                for (i, slot) in children.iter_mut().enumerate() {
                    if branch.state_mask.is_bit_set(i as u8) {
                        *slot = Some(stack.next().ok_or_else(|| corrupt("short branch".into()))?);
                    }
                }
                Self::Branch { children }
            }
            TrieNode::EmptyRoot => return Err(corrupt("empty node stored".into())),
        })
    }
}

/// Root hash of a trie whose root node has the given RLP: keccak of it even when short.
pub(crate) fn root_hash(root_rlp: &[u8]) -> B256 {
    keccak256(root_rlp)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nodes_roundtrip_through_rlp() {
        let leaf = Node::Leaf {
            key: Nibbles::from_nibbles([1, 2, 3]),
            value: vec![0x42],
        };
        let ext = Node::Extension {
            key: Nibbles::from_nibbles([5]),
            child: RlpNode::word_rlp(&B256::repeat_byte(7)),
        };
        let mut children: Box<[Option<RlpNode>; 16]> = Box::default();
        children[3] = Some(leaf.encode().node_ref);
        children[9] = Some(ext.encode().node_ref);
        let branch = Node::Branch { children };
        for node in [leaf, ext, branch] {
            let enc = node.encode();
            assert_eq!(Node::decode(&enc.rlp).unwrap(), node);
            assert_eq!(enc.node_ref, RlpNode::from_rlp(&enc.rlp));
        }
    }
}
