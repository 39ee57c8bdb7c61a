//! In-memory trie nodes and their Ethereum RLP encoding (via `alloy_trie::nodes`).

use alloy_primitives::{keccak256, B256};
use alloy_rlp::{Decodable, Encodable, Header, EMPTY_STRING_CODE};
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
    /// RLP-encode this node (into a vector of its exact size: a branch is about 530 bytes, and
    /// growing a vector to it from a guess reallocates several times).
    pub(crate) fn encode(&self) -> Encoded {
        let mut rlp = Vec::new();
        let node_ref = match self {
            Self::Leaf { key, value } => {
                let node = LeafNodeRef::new(key, value);
                rlp.reserve_exact(node.length());
                node.rlp(&mut rlp)
            }
            Self::Extension { key, child } => {
                let node = ExtensionNodeRef::new(key, child);
                rlp.reserve_exact(node.length());
                node.rlp(&mut rlp)
            }
            Self::Branch { children } => {
                let mut mask = TrieMask::default();
                let mut stack: [RlpNode; 16] = Default::default();
                let mut len = 0;
                for (i, child) in children.iter().enumerate() {
                    if let Some(child) = child {
                        mask.set_bit(i as u8);
                        stack[len] = child.clone();
                        len += 1;
                    }
                }
                let node = BranchNodeRef::new(&stack[..len], mask);
                rlp.reserve_exact(node.length());
                node.rlp(&mut rlp)
            }
        };
        Encoded { rlp, node_ref }
    }

    /// Decode a node from its RLP. A branch goes straight into its sixteen slots; leaves and
    /// extensions through alloy's decoder.
    pub(crate) fn decode(bytes: &[u8]) -> Result<Self, TrieError> {
        let corrupt = |e: alloy_rlp::Error| TrieError::Corrupt(e.to_string());
        if let Some(children) = decode_branch(bytes).map_err(corrupt)? {
            return Ok(Self::Branch { children });
        }
        Ok(match TrieNode::decode(&mut &bytes[..]).map_err(corrupt)? {
            TrieNode::Leaf(leaf) => Self::Leaf {
                key: leaf.key,
                value: leaf.value,
            },
            TrieNode::Extension(ext) => Self::Extension {
                key: ext.key,
                child: ext.child,
            },
            // A list of 17 items was a branch above: what is left is the empty root.
            TrieNode::Branch(_) | TrieNode::EmptyRoot => {
                return Err(TrieError::Corrupt("empty node stored".into()))
            }
        })
    }
}

/// The children of the branch whose RLP is `bytes`, `None` when `bytes` is not a list of 17
/// items (a leaf, an extension, or something [`TrieNode::decode`] then refuses). Checks what
/// that decoder checks of a branch: every item's header and length, and an empty value.
fn decode_branch(bytes: &[u8]) -> alloy_rlp::Result<Option<Box<[Option<RlpNode>; 16]>>> {
    let mut buf = bytes;
    let header = Header::decode(&mut buf)?;
    if !header.list {
        return Ok(None);
    }
    // `Header::decode` checks that the buffer holds the payload.
    let mut payload = &buf[..header.payload_length];
    let mut items = [&[][..]; 17];
    for item in &mut items {
        if payload.is_empty() {
            return Ok(None);
        }
        let start = payload;
        let Header { payload_length, .. } = Header::decode(&mut payload)?;
        payload = &payload[payload_length..];
        *item = &start[..start.len() - payload.len()];
    }
    if !payload.is_empty() {
        return Ok(None);
    }
    if items[16] != [EMPTY_STRING_CODE] {
        return Err(alloy_rlp::Error::Custom(
            "branch node values are not supported",
        ));
    }
    let mut children: Box<[Option<RlpNode>; 16]> = Box::default();
    for (slot, item) in children.iter_mut().zip(items) {
        if item != [EMPTY_STRING_CODE] {
            *slot = Some(RlpNode::from_raw_rlp(item)?);
        }
    }
    Ok(Some(children))
}

/// Whether `rlp` is a leaf's: a list of two items, the first a string whose hex-prefix flag says
/// leaf. Anything else (a branch, an extension, bytes that do not decode) is not.
pub(crate) fn is_leaf(rlp: &[u8]) -> bool {
    let mut buf = rlp;
    let Ok(header) = Header::decode(&mut buf) else {
        return false;
    };
    let Some(mut payload) = buf.get(..header.payload_length).filter(|_| header.list) else {
        return false;
    };
    let Ok(path) = Header::decode_bytes(&mut payload, false) else {
        return false;
    };
    let Ok(value) = Header::decode(&mut payload) else {
        return false;
    };
    // Two items exactly, and the path's first nibble 2 or 3 (leaf, even or odd).
    payload.len() == value.payload_length && path.first().is_some_and(|flag| flag >> 4 >= 2)
}

/// Root hash of a trie whose root node has the given RLP: keccak of it even when short.
pub(crate) fn root_hash(root_rlp: &[u8]) -> B256 {
    keccak256(root_rlp)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn branches_decode_as_alloy_decodes_them() {
        // A branch with a hash child and an embedded (short) child.
        let mut children: Box<[Option<RlpNode>; 16]> = Box::default();
        children[0] = Some(RlpNode::word_rlp(&B256::repeat_byte(1)));
        children[15] = Some(
            Node::Leaf {
                key: Nibbles::from_nibbles([4]),
                value: vec![9],
            }
            .encode()
            .node_ref,
        );
        let rlp = Node::Branch { children }.encode().rlp;
        let TrieNode::Branch(alloy) = TrieNode::decode(&mut &rlp[..]).unwrap() else {
            panic!("not a branch")
        };
        let Node::Branch { children } = Node::decode(&rlp).unwrap() else {
            panic!("not a branch")
        };
        let ours: Vec<RlpNode> = children.iter().flatten().cloned().collect();
        assert_eq!(ours, alloy.stack);
        assert!(children[15].as_ref().is_some_and(|c| !c.is_hash()));

        // What alloy refuses is refused: a value in the branch, 16 or 18 items, a cut payload.
        let list = |items: usize, value: u8| {
            let mut payload = vec![EMPTY_STRING_CODE; items - 1];
            payload.push(value);
            let mut rlp = vec![0xc0 + payload.len() as u8];
            rlp.extend(payload);
            rlp
        };
        for bad in [
            list(17, 0x01),
            list(16, EMPTY_STRING_CODE),
            list(18, EMPTY_STRING_CODE),
            rlp[..rlp.len() - 1].to_vec(),
        ] {
            assert!(TrieNode::decode(&mut &bad[..]).is_err());
            assert!(Node::decode(&bad).is_err(), "{bad:?}");
        }
    }

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
