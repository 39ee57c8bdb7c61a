//! The genesis stored with the chain and its comparison with the configured one on every start
//! (geth's "mismatching genesis" / incompatible config check, made strict: any difference).
//!
//! The genesis header hash does not see a changed fork schedule (a later `cancunTime` leaves the
//! genesis header as it is) nor a changed alloc (the stored genesis' state root is reused), so
//! the whole genesis, config and alloc included, is kept in the database as canonical JSON.

use std::collections::BTreeSet;

use alloy_genesis::Genesis;
use serde_json::Value;

use super::ChainError;
use crate::constants::MAX_GENESIS_DIFFERENCES_REPORTED;
use l2node_storage::StorageError;

/// Config fields that may differ between starts. `config.clique.period` only paces the
/// sequencer (`--dev` takes it from `--block-time`), and no check of a block reads it.
const MAY_CHANGE: &[&str] = &["config.clique.period"];

/// Longest value quoted in a difference; a longer one (code, a whole account) is cut.
const MAX_SHOWN_VALUE: usize = 80;

/// The canonical JSON of `genesis`, as stored with the chain.
pub(super) fn canonical_json(genesis: &Genesis) -> Vec<u8> {
    serde_json::to_vec(genesis).expect("a genesis serializes to JSON")
}

/// Refuses a configured genesis that differs from the `stored` JSON, naming the differences.
pub(super) fn compare(stored: &[u8], configured: &Genesis) -> Result<(), ChainError> {
    // Through `Genesis` and back, so that both sides have this version's serialization; a
    // record this version cannot read as a genesis is compared as plain JSON.
    let stored: Value = match serde_json::from_slice::<Genesis>(stored) {
        Ok(genesis) => serde_json::to_value(genesis).expect("a genesis serializes to JSON"),
        Err(_) => serde_json::from_slice(stored).map_err(|e| StorageError::Corrupt {
            table: "config",
            reason: format!("stored genesis is not JSON: {e}"),
        })?,
    };
    let configured = serde_json::to_value(configured).expect("a genesis serializes to JSON");
    let mut found = Vec::new();
    diff("", &stored, &configured, &mut found);
    if found.is_empty() {
        return Ok(());
    }
    let total = found.len();
    found.truncate(MAX_GENESIS_DIFFERENCES_REPORTED);
    let mut differences = found.join("; ");
    if total > found.len() {
        differences.push_str(&format!("; and {} more", total - found.len()));
    }
    Err(ChainError::GenesisConfigMismatch { differences })
}

/// Appends `path: stored X, configured Y` for every leaf where the two differ (an absent key
/// and `null` are the same).
fn diff(path: &str, stored: &Value, configured: &Value, out: &mut Vec<String>) {
    if MAY_CHANGE.contains(&path) {
        return;
    }
    match (stored, configured) {
        (Value::Object(a), Value::Object(b)) => {
            let keys: BTreeSet<&String> = a.keys().chain(b.keys()).collect();
            for key in keys {
                let path = if path.is_empty() {
                    key.clone()
                } else {
                    format!("{path}.{key}")
                };
                let a = a.get(key).unwrap_or(&Value::Null);
                let b = b.get(key).unwrap_or(&Value::Null);
                diff(&path, a, b, out);
            }
        }
        (a, b) if a == b => {}
        (a, b) => out.push(format!(
            "{path}: stored {}, configured {}",
            shown(a),
            shown(b)
        )),
    }
}

fn shown(value: &Value) -> String {
    let text = match value {
        Value::Null => return "absent".to_string(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    if text.len() <= MAX_SHOWN_VALUE {
        return text;
    }
    let mut end = MAX_SHOWN_VALUE;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}...", &text[..end])
}
