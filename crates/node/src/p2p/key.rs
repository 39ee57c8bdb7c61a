//! The node key (`p2p.key`): the libp2p identity, loaded at start and created on first start,
//! so the peer id survives restarts.

use std::path::Path;

use libp2p::identity;

use crate::p2p::P2pError;

/// Loads the node key from `path`, creating it on first start (so the peer id survives
/// restarts and can be written into other nodes' `--bootnodes`).
pub fn load_or_create_key(path: &Path) -> Result<identity::Keypair, P2pError> {
    let io = |source| P2pError::KeyIo {
        path: path.to_owned(),
        source,
    };
    match std::fs::read(path) {
        Ok(bytes) => {
            identity::Keypair::from_protobuf_encoding(&bytes).map_err(|e| P2pError::KeyFormat {
                path: path.to_owned(),
                reason: e.to_string(),
            })
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let key = identity::Keypair::generate_ed25519();
            let bytes = key
                .to_protobuf_encoding()
                .map_err(|e| P2pError::Setup(e.to_string()))?;
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir).map_err(io)?;
            }
            // Written aside and renamed, so a crash never leaves half a key behind.
            let tmp = path.with_extension("tmp");
            write_private(&tmp, &bytes).map_err(io)?;
            std::fs::rename(&tmp, path).map_err(io)?;
            Ok(key)
        }
        Err(e) => Err(io(e)),
    }
}

/// Writes `bytes` to `path`, readable by the owner only (the key is the node's identity).
fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut opts, 0o600);
    let mut f = opts.open(path)?;
    f.write_all(bytes)?;
    f.sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_is_created_once_and_kept() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub").join("p2p.key");
        let created = load_or_create_key(&path).unwrap();
        assert!(!path.with_extension("tmp").exists());
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        let loaded = load_or_create_key(&path).unwrap();
        assert_eq!(created.public().to_peer_id(), loaded.public().to_peer_id());
    }

    #[test]
    fn a_file_that_is_no_key_is_refused_not_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p2p.key");
        std::fs::write(&path, b"not a key").unwrap();
        assert!(matches!(
            load_or_create_key(&path),
            Err(P2pError::KeyFormat { .. })
        ));
        assert_eq!(std::fs::read(&path).unwrap(), b"not a key");
    }
}
