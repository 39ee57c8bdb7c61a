//! Minimal raw clients for the wire tests: HTTP/1.1 over a TcpStream and a WebSocket that sends
//! masked text frames, so the tests see exactly the bytes the servers send.

use std::net::SocketAddr;
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// A raw HTTP/1.1 response.
#[derive(Debug)]
pub(crate) struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Reply {
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
    pub(crate) fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|e| {
            panic!(
                "body is not JSON ({e}): {:?}",
                String::from_utf8_lossy(&self.body)
            )
        })
    }
    pub(crate) fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

/// Sends one raw HTTP/1.1 request (`Connection: close`) and reads the whole response.
pub(crate) async fn raw_http(
    addr: SocketAddr,
    method: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> Reply {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    let mut head = format!("{method} / HTTP/1.1\r\nConnection: close\r\n");
    if !headers.iter().any(|(n, _)| n.eq_ignore_ascii_case("host")) {
        head.push_str(&format!("Host: localhost:{}\r\n", addr.port()));
    }
    for (n, v) in headers {
        head.push_str(&format!("{n}: {v}\r\n"));
    }
    head.push_str(&format!("Content-Length: {}\r\n\r\n", body.len()));
    stream.write_all(head.as_bytes()).await.unwrap();
    // The server may answer (413) before reading an oversized body: ignore write errors.
    let _ = stream.write_all(body).await;
    let mut raw = Vec::new();
    // Generous: a loaded 2-core CI machine runs many test nodes at once.
    let _ = tokio::time::timeout(Duration::from_secs(30), stream.read_to_end(&mut raw)).await;
    parse_reply(&raw)
}

pub(crate) fn parse_reply(raw: &[u8]) -> Reply {
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("no HTTP head");
    let head = std::str::from_utf8(&raw[..split]).unwrap();
    let mut lines = head.split("\r\n");
    let status = lines
        .next()
        .unwrap()
        .split(' ')
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_owned(), v.trim().to_owned()))
        .collect();
    let mut body = raw[split + 4..].to_vec();
    let chunked = headers
        .iter()
        .any(|(n, v)| n.eq_ignore_ascii_case("transfer-encoding") && v.contains("chunked"));
    if chunked {
        let mut out = Vec::new();
        let mut rest = &body[..];
        loop {
            let eol = rest.windows(2).position(|w| w == b"\r\n").unwrap();
            let len = usize::from_str_radix(std::str::from_utf8(&rest[..eol]).unwrap().trim(), 16)
                .unwrap();
            if len == 0 {
                break;
            }
            out.extend_from_slice(&rest[eol + 2..eol + 2 + len]);
            rest = &rest[eol + 2 + len + 2..];
        }
        body = out;
    }
    Reply {
        status,
        headers,
        body,
    }
}

/// A minimal WebSocket client: text frames out (masked), frames in.
pub(crate) struct Ws(pub TcpStream);

impl Ws {
    pub(crate) async fn connect(addr: SocketAddr) -> Ws {
        let mut s = TcpStream::connect(addr).await.unwrap();
        let req = format!(
            "GET / HTTP/1.1\r\nHost: localhost:{}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
             Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n",
            addr.port()
        );
        s.write_all(req.as_bytes()).await.unwrap();
        let mut head = Vec::new();
        while !head.ends_with(b"\r\n\r\n") {
            head.push(s.read_u8().await.unwrap());
        }
        let head = String::from_utf8(head).unwrap();
        assert!(head.starts_with("HTTP/1.1 101"), "{head}");
        Ws(s)
    }

    pub(crate) async fn send(&mut self, text: &str) {
        let payload = text.as_bytes();
        let mut frame = vec![0x81u8];
        match payload.len() {
            n if n < 126 => frame.push(0x80 | n as u8),
            n if n <= u16::MAX as usize => {
                frame.push(0x80 | 126);
                frame.extend_from_slice(&(n as u16).to_be_bytes());
            }
            n => {
                frame.push(0x80 | 127);
                frame.extend_from_slice(&(n as u64).to_be_bytes());
            }
        }
        let mask = [0x12u8, 0x34, 0x56, 0x78];
        frame.extend_from_slice(&mask);
        frame.extend(payload.iter().enumerate().map(|(i, b)| b ^ mask[i % 4]));
        self.0.write_all(&frame).await.unwrap();
    }

    /// Next text message as JSON (control frames skipped).
    pub(crate) async fn recv(&mut self) -> Value {
        tokio::time::timeout(Duration::from_secs(10), self.recv_inner())
            .await
            .expect("no WS message")
    }

    async fn recv_inner(&mut self) -> Value {
        loop {
            let b0 = self.0.read_u8().await.unwrap();
            let b1 = self.0.read_u8().await.unwrap();
            let len = match b1 & 0x7f {
                126 => self.0.read_u16().await.unwrap() as usize,
                127 => self.0.read_u64().await.unwrap() as usize,
                n => n as usize,
            };
            let mut payload = vec![0; len];
            self.0.read_exact(&mut payload).await.unwrap();
            if b0 & 0x0f == 0x1 {
                return serde_json::from_slice(&payload).unwrap();
            }
        }
    }

    /// Asserts nothing arrives for a short while.
    pub(crate) async fn assert_silent(&mut self) {
        let got = tokio::time::timeout(Duration::from_millis(300), self.recv_inner()).await;
        assert!(got.is_err(), "unexpected message: {:?}", got.unwrap());
    }
}
