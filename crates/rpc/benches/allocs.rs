//! Heap allocations per request on the node's side, for the hot methods (issue: a lean request
//! path). A bench binary, not criterion: it starts a dev node in this process, counts every
//! allocation made by any thread except the client's, and sends each request a few thousand
//! times over one keep-alive HTTP connection. One line per method: allocations and bytes per
//! request.
//!
//! `cargo bench -p l2node-rpc --bench allocs` (env: BENCH_ALLOC_REQUESTS, default 5,000).

use std::{
    alloc::{GlobalAlloc, Layout, System},
    cell::Cell,
    io::{Read, Write},
    net::{SocketAddr, TcpStream},
    sync::atomic::{AtomicU64, Ordering},
    time::Duration,
};

use l2node_launch::NodeConfig;
use l2node_node::constants::DEV_KARMA_ADDRESS;
use l2node_node::dev::dev_accounts;

/// The system allocator, counting what every thread but the client's allocates.
struct Counting;

static ALLOCS: AtomicU64 = AtomicU64::new(0);
static BYTES: AtomicU64 = AtomicU64::new(0);

thread_local! {
    /// Set on the client's thread: its own allocations are not the node's.
    static UNCOUNTED: Cell<bool> = const { Cell::new(false) };
}

fn count(size: usize) {
    if !UNCOUNTED.with(Cell::get) {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        BYTES.fetch_add(size as u64, Ordering::Relaxed);
    }
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count(layout.size());
        System.alloc(layout)
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count(layout.size());
        System.alloc_zeroed(layout)
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count(new_size);
        System.realloc(ptr, layout, new_size)
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout)
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn env_or(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// One keep-alive HTTP/1.1 connection sending a fixed JSON-RPC body.
struct Client {
    stream: TcpStream,
    buf: Vec<u8>,
}

impl Client {
    fn connect(addr: SocketAddr) -> Self {
        let stream = TcpStream::connect(addr).unwrap();
        stream.set_nodelay(true).unwrap();
        Self {
            stream,
            buf: Vec::with_capacity(64 * 1024),
        }
    }

    /// Sends `body` and reads the whole response; returns the response body.
    fn post(&mut self, body: &str) -> &[u8] {
        let request = format!(
            "POST / HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n\
             Content-Length: {}\r\n\r\n{body}",
            body.len()
        );
        self.stream.write_all(request.as_bytes()).unwrap();
        self.buf.clear();
        let mut chunk = [0u8; 16 * 1024];
        loop {
            let n = self.stream.read(&mut chunk).unwrap();
            assert!(n > 0, "the node closed the connection");
            self.buf.extend_from_slice(&chunk[..n]);
            let mut headers = [httparse::EMPTY_HEADER; 32];
            let mut response = httparse::Response::new(&mut headers);
            if let httparse::Status::Complete(head) = response.parse(&self.buf).unwrap() {
                assert_eq!(response.code, Some(200), "{body}");
                let length: usize = response
                    .headers
                    .iter()
                    .find(|h| h.name.eq_ignore_ascii_case("content-length"))
                    .map(|h| std::str::from_utf8(h.value).unwrap().parse().unwrap())
                    .expect("a content-length");
                if self.buf.len() >= head + length {
                    return &self.buf[head..head + length];
                }
            }
        }
    }
}

fn request(method: &str, params: &str) -> String {
    format!(r#"{{"jsonrpc":"2.0","id":1,"method":"{method}","params":{params}}}"#)
}

fn main() {
    let requests = env_or("BENCH_ALLOC_REQUESTS", 5_000);
    let dir = tempfile::tempdir().unwrap();
    let _any: SocketAddr = "127.0.0.1:0".parse().unwrap();
    let config = NodeConfig::dev(dir.path(), Duration::ZERO);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let node = rt.block_on(l2node_launch::spawn(config)).unwrap();
    let addr = node.rpc.http_addr.unwrap();

    let holder = dev_accounts()[0].address();
    let stranger = alloy_primitives::Address::repeat_byte(0x42);
    let balance_of = format!("0x70a08231{:0>64}", alloy_primitives::hex::encode(holder));
    let get_balance = request("eth_getBalance", &format!(r#"["{holder}","latest"]"#));
    let batch = format!("[{}]", [get_balance.as_str(); 10].join(","));
    let transfer = format!(r#"{{"from":"{holder}","to":"{stranger}","value":"0x1"}}"#);
    let cases: Vec<(&str, String)> = vec![
        ("eth_blockNumber", request("eth_blockNumber", "[]")),
        ("eth_chainId", request("eth_chainId", "[]")),
        ("eth_gasPrice", request("eth_gasPrice", "[]")),
        ("eth_getBalance", get_balance.clone()),
        ("batch of 10 eth_getBalance", batch),
        (
            "eth_getBlockByNumber latest",
            request("eth_getBlockByNumber", r#"["latest",false]"#),
        ),
        (
            "eth_call balanceOf",
            request(
                "eth_call",
                &format!(r#"[{{"to":"{DEV_KARMA_ADDRESS}","data":"{balance_of}"}},"latest"]"#),
            ),
        ),
        (
            "eth_estimateGas transfer",
            request("eth_estimateGas", &format!("[{transfer}]")),
        ),
        (
            "l2_estimateGas transfer",
            request("l2_estimateGas", &format!("[{transfer}]")),
        ),
    ];

    std::thread::spawn(move || {
        UNCOUNTED.with(|c| c.set(true));
        let mut client = Client::connect(addr);
        println!(
            "{:<30} {:>14} {:>14}   ({requests} requests each, one connection)",
            "method", "allocs/req", "bytes/req"
        );
        for (name, body) in &cases {
            // Warm up: caches, lazily built tables, the connection's buffers.
            for _ in 0..200 {
                let answer = client.post(body);
                assert!(
                    !answer.windows(8).any(|w| w == b"\"error\":"),
                    "{name}: {}",
                    String::from_utf8_lossy(answer)
                );
            }
            let (a0, b0) = (
                ALLOCS.load(Ordering::Relaxed),
                BYTES.load(Ordering::Relaxed),
            );
            for _ in 0..requests {
                client.post(body);
            }
            let (a1, b1) = (
                ALLOCS.load(Ordering::Relaxed),
                BYTES.load(Ordering::Relaxed),
            );
            println!(
                "{name:<30} {:>14.1} {:>14.0}",
                (a1 - a0) as f64 / requests as f64,
                (b1 - b0) as f64 / requests as f64
            );
        }
    })
    .join()
    .unwrap();
    drop(node);
}
