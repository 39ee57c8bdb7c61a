//! An etcd server for tests and benches (`test-utils` feature).

use std::{
    net::TcpListener,
    process::{Child, Command, Stdio},
    time::{Duration, Instant},
};

/// An etcd server of its own, stopped on drop.
pub struct EtcdServer {
    child: Child,
    /// Its client URL.
    pub url: String,
    _dir: tempfile::TempDir,
}

impl Drop for EtcdServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A port nothing listens on now.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Starts etcd with short election timings (its smallest lease is then under a second), or
/// `None` when it is not installed. Its ports are picked free and may be taken before etcd
/// binds them: then it exits, and it is started again on others.
pub fn start_etcd() -> Option<EtcdServer> {
    if Command::new("etcd").arg("--version").output().is_err() {
        eprintln!("etcd is not installed (apt-get install etcd-server): group tests skipped");
        return None;
    }
    let mut last_words = String::new();
    for attempt in 0..3 {
        // Memory first; the disk next, should memory be too small (a container's /dev/shm
        // may be 64 MB).
        match try_start_etcd(attempt != 1) {
            Ok(server) => return Some(server),
            Err(stderr) => last_words = stderr,
        }
    }
    let lines: Vec<&str> = last_words.lines().collect();
    panic!(
        "etcd exited three times before it was healthy; the last one said:\n{}",
        lines[lines.len().saturating_sub(20)..].join("\n")
    );
}

/// etcd's data directory. etcd preallocates 64 MB for its log before it serves anything and
/// panics when the disk cannot hold that, so the data goes to memory (`/dev/shm`, `in_memory`)
/// where the machine has it: a test of the group's logic should not fail because a shared disk
/// is full.
fn data_dir(in_memory: bool) -> tempfile::TempDir {
    let mut shm = tempfile::Builder::new();
    shm.prefix("l2node-etcd");
    match in_memory.then(|| shm.tempdir_in("/dev/shm")) {
        Some(Ok(dir)) => dir,
        _ => tempfile::tempdir().unwrap(),
    }
}

/// One try of [`start_etcd`]: what etcd wrote to stderr when it exits before it is healthy.
fn try_start_etcd(in_memory: bool) -> Result<EtcdServer, String> {
    let dir = data_dir(in_memory);
    let stderr_path = dir.path().join("stderr.log");
    let stderr = std::fs::File::create(&stderr_path).unwrap();
    let (client, peer) = (free_port(), free_port());
    let url = format!("http://127.0.0.1:{client}");
    let peer_url = format!("http://127.0.0.1:{peer}");
    let child = Command::new("etcd")
        .args(["--data-dir", dir.path().join("data").to_str().unwrap()])
        .args([
            "--listen-client-urls",
            &url,
            "--advertise-client-urls",
            &url,
        ])
        .args(["--listen-peer-urls", &peer_url])
        .args(["--initial-advertise-peer-urls", &peer_url])
        .args(["--initial-cluster", &format!("default={peer_url}")])
        .args(["--heartbeat-interval", "50", "--election-timeout", "500"])
        .stdout(Stdio::null())
        .stderr(stderr)
        .spawn()
        .unwrap();
    let mut server = EtcdServer {
        child,
        url,
        _dir: dir,
    };
    // Under a full test suite on two cores etcd may take several seconds.
    let deadline = Instant::now() + Duration::from_secs(60);
    let health = format!("{}/health", server.url);
    while Instant::now() < deadline {
        // Exited first: what answers on its port would be someone else's.
        if let Ok(Some(_)) = server.child.try_wait() {
            return Err(std::fs::read_to_string(&stderr_path).unwrap_or_default());
        }
        if healthy(&health) {
            return Ok(server);
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    panic!("etcd did not come up at {}", server.url);
}

/// Whether etcd's `/health` answers `"health":"true"` (a plain HTTP/1.0 GET).
fn healthy(url: &str) -> bool {
    use std::io::{Read, Write};
    let addr = url.trim_start_matches("http://").split('/').next().unwrap();
    let Ok(mut s) = std::net::TcpStream::connect(addr) else {
        return false;
    };
    let _ = s.write_all(b"GET /health HTTP/1.0\r\n\r\n");
    let mut out = String::new();
    let _ = s.read_to_string(&mut out);
    out.contains(r#""health":"true""#)
}
