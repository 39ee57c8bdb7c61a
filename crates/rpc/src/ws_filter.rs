//! The client-to-server half of an upgraded WebSocket, rewritten on the socket before jsonrpsee
//! reads it, so that WebSocket requests get the answers HTTP requests get (see `http_layer`).
//!
//! jsonrpsee reads WebSocket messages itself and shows the RPC middleware only what it parsed, so
//! (as over HTTP before `http_layer`) a request whose id is a bool, a float, a negative number or
//! an object vanished as a notification, an array inside a batch was answered with its first
//! element as id, a JSON value that is no request got `-32700`, and an oversized message
//! jsonrpsee's own `-32007`. Here each complete message goes through the same
//! [`sanitize`](super::http_layer::sanitize) as an HTTP body, and a message over the limit is
//! replaced by a call of [`OVERSIZED_METHOD`], which the wire rules answer with `-32005` naming
//! the limit and its flag.
//!
//! Frames are parsed as RFC 6455 lays them out. Control frames pass through at once; the frames
//! of a data message are unmasked and reassembled, and the message is sent on as one frame with a
//! zero mask key when its last frame arrives. Payload bytes are never buffered past the limit.
//! A frame the RFC does not allow from a client (reserved bits, unknown opcode, no mask,
//! fragmented or long control frame, a continuation out of place) turns the filter off: from
//! there on the bytes pass unchanged and jsonrpsee closes the connection as before.

use super::http_layer::{sanitize, Sanitized};

/// Method name of the stand-in for an oversized message. Reserved: JSON-RPC keeps `rpc.` names
/// for the transport itself.
pub(crate) const OVERSIZED_METHOD: &str = "rpc.l2node.messageTooLarge";

const OVERSIZED_CALL: &[u8] =
    br#"{"jsonrpc":"2.0","id":null,"method":"rpc.l2node.messageTooLarge","params":[]}"#;

const OP_CONTINUATION: u8 = 0x0;
const OP_TEXT: u8 = 0x1;
const OP_BINARY: u8 = 0x2;
/// Opcodes 0x8 and up are control frames (close, ping, pong).
const OP_CONTROL: u8 = 0x8;
/// RFC 6455 5.5: control frames carry at most 125 bytes.
const MAX_CONTROL_PAYLOAD: usize = 125;

/// Where the parser stands in the client's byte stream.
#[derive(Debug)]
enum State {
    /// Collecting a frame header (a control frame: header and payload) in `head`.
    Head,
    /// Inside the payload of a data frame.
    Payload {
        remaining: u64,
        mask: [u8; 4],
        /// Payload bytes of this frame already unmasked (position in the mask).
        done: u64,
        fin: bool,
    },
    /// Something the RFC forbids: everything passes unchanged.
    Off,
}

/// Rewrites the client's half of one WebSocket connection; see the module docs.
#[derive(Debug)]
pub(crate) struct WsFilter {
    limit: usize,
    state: State,
    /// Bytes of the frame header being read (a whole control frame).
    head: Vec<u8>,
    /// Opcode of the data message being reassembled.
    message: Option<u8>,
    /// Its unmasked payload so far (emptied once it passes the limit).
    payload: Vec<u8>,
    oversized: bool,
    /// Bytes ready for the reader, from `read`.
    out: Vec<u8>,
    read: usize,
}

impl WsFilter {
    /// A filter for messages of at most `limit` bytes.
    pub(crate) fn new(limit: u32) -> Self {
        Self {
            limit: limit as usize,
            state: State::Head,
            head: Vec::new(),
            message: None,
            payload: Vec::new(),
            oversized: false,
            out: Vec::new(),
            read: 0,
        }
    }

    /// Filtered bytes not yet read.
    pub(crate) fn pending(&self) -> &[u8] {
        &self.out[self.read..]
    }

    /// Marks `n` bytes of [`Self::pending`] as read.
    pub(crate) fn consume(&mut self, n: usize) {
        self.read += n;
        if self.read == self.out.len() {
            self.out.clear();
            self.read = 0;
        }
    }

    /// Feeds bytes received from the client.
    pub(crate) fn feed(&mut self, mut input: &[u8]) {
        while !input.is_empty() {
            match &mut self.state {
                State::Off => {
                    self.out.extend_from_slice(input);
                    return;
                }
                State::Head => {
                    let needed = frame_head_len(&self.head).saturating_sub(self.head.len());
                    let take = needed.clamp(1, input.len());
                    self.head.extend_from_slice(&input[..take]);
                    input = &input[take..];
                    if self.head.len() == frame_head_len(&self.head) {
                        self.frame_head_complete();
                    }
                }
                State::Payload {
                    remaining,
                    mask,
                    done,
                    fin,
                } => {
                    let take = (*remaining).min(input.len() as u64) as usize;
                    let (chunk, rest) = input.split_at(take);
                    input = rest;
                    if !self.oversized && self.payload.len() + take > self.limit {
                        self.oversized = true;
                        self.payload = Vec::new();
                    }
                    if !self.oversized {
                        let start = *done;
                        self.payload.extend(
                            chunk
                                .iter()
                                .enumerate()
                                .map(|(i, b)| b ^ mask[((start + i as u64) % 4) as usize]),
                        );
                    }
                    *done += take as u64;
                    *remaining -= take as u64;
                    if *remaining == 0 {
                        let fin = *fin;
                        self.state = State::Head;
                        if fin {
                            self.message_complete();
                        }
                    }
                }
            }
        }
    }

    /// A whole header (or control frame) is in `head`: pass it on or start its payload.
    fn frame_head_complete(&mut self) {
        let (b0, b1) = (self.head[0], self.head[1]);
        let (fin, opcode, masked) = (b0 & 0x80 != 0, b0 & 0x0f, b1 & 0x80 != 0);
        let sound = b0 & 0x70 == 0
            && masked
            && match opcode {
                OP_CONTINUATION => self.message.is_some(),
                OP_TEXT | OP_BINARY => self.message.is_none(),
                0x8..=0xa => fin && payload_len(&self.head) <= MAX_CONTROL_PAYLOAD as u64,
                _ => false,
            };
        if !sound {
            self.out.append(&mut self.head);
            self.state = State::Off;
            return;
        }
        if opcode >= OP_CONTROL {
            self.out.append(&mut self.head);
            return;
        }
        if opcode != OP_CONTINUATION {
            self.message = Some(opcode);
        }
        let len = payload_len(&self.head);
        let mask: [u8; 4] = self.head[self.head.len() - 4..]
            .try_into()
            .expect("a masked header ends with its key");
        self.head.clear();
        self.state = State::Payload {
            remaining: len,
            mask,
            done: 0,
            fin,
        };
        if len == 0 && fin {
            self.state = State::Head;
            self.message_complete();
        }
    }

    /// The last frame of a data message arrived: send the (rewritten) message as one frame.
    fn message_complete(&mut self) {
        let opcode = self.message.take().expect("a message was started");
        let payload = std::mem::take(&mut self.payload);
        let oversized = std::mem::take(&mut self.oversized);
        let body: std::borrow::Cow<'_, [u8]> = if oversized {
            OVERSIZED_CALL.into()
        } else {
            match sanitize(&payload) {
                // Not JSON: jsonrpsee answers `-32700` itself.
                Sanitized::Unchanged(_) | Sanitized::ParseError => payload.into(),
                Sanitized::Rewritten(body) if body.len() <= self.limit => body.into_bytes().into(),
                Sanitized::Rewritten(_) => OVERSIZED_CALL.into(),
            }
        };
        self.out.push(0x80 | opcode);
        let len = body.len();
        if len < 126 {
            self.out.push(0x80 | len as u8);
        } else if let Ok(len) = u16::try_from(len) {
            self.out.push(0x80 | 126);
            self.out.extend_from_slice(&len.to_be_bytes());
        } else {
            self.out.push(0x80 | 127);
            self.out.extend_from_slice(&(len as u64).to_be_bytes());
        }
        // A zero mask key: the payload goes as it is.
        self.out.extend_from_slice(&[0; 4]);
        self.out.extend_from_slice(&body);
    }
}

/// Length of the frame header starting `head` (a control frame: header and payload), as far as
/// the bytes so far tell; at least 2.
fn frame_head_len(head: &[u8]) -> usize {
    let Some(&b1) = head.get(1) else {
        return 2;
    };
    let ext = match b1 & 0x7f {
        126 => 2,
        127 => 8,
        _ => 0,
    };
    let mask = if b1 & 0x80 != 0 { 4 } else { 0 };
    let header = 2 + ext + mask;
    let is_control = head[0] & 0x0f >= OP_CONTROL;
    if is_control && head.len() >= header {
        header + (payload_len(head) as usize).min(MAX_CONTROL_PAYLOAD + 1)
    } else {
        header
    }
}

/// The payload length a complete header declares.
fn payload_len(head: &[u8]) -> u64 {
    match head[1] & 0x7f {
        126 => u64::from(u16::from_be_bytes([head[2], head[3]])),
        127 => u64::from_be_bytes(head[2..10].try_into().expect("8-byte length")),
        len => u64::from(len),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A client frame: masked with `key`.
    fn frame(fin: bool, opcode: u8, payload: &[u8], key: [u8; 4]) -> Vec<u8> {
        let mut f = vec![if fin { 0x80 } else { 0 } | opcode];
        let len = payload.len();
        if len < 126 {
            f.push(0x80 | len as u8);
        } else if len <= 0xffff {
            f.push(0x80 | 126);
            f.extend_from_slice(&(len as u16).to_be_bytes());
        } else {
            f.push(0x80 | 127);
            f.extend_from_slice(&(len as u64).to_be_bytes());
        }
        f.extend_from_slice(&key);
        f.extend(payload.iter().enumerate().map(|(i, b)| b ^ key[i % 4]));
        f
    }

    fn run(filter: &mut WsFilter, bytes: &[u8], chunk: usize) -> Vec<u8> {
        for piece in bytes.chunks(chunk) {
            filter.feed(piece);
        }
        let out = filter.pending().to_vec();
        filter.consume(out.len());
        out
    }

    const KEY: [u8; 4] = [0x12, 0x34, 0x56, 0x78];

    #[test]
    fn sound_messages_pass_as_one_frame_whatever_the_read_sizes() {
        let request = br#"{"jsonrpc":"2.0","id":1,"method":"eth_chainId"}"#;
        let big = format!(
            r#"{{"jsonrpc":"2.0","id":2,"method":"x","params":["{}"]}}"#,
            "a".repeat(70_000)
        );
        for chunk in [1, 3, 7, 4096] {
            let mut f = WsFilter::new(1 << 20);
            assert_eq!(
                run(&mut f, &frame(true, OP_TEXT, request, KEY), chunk),
                frame(true, OP_TEXT, request, [0; 4])
            );
            assert_eq!(
                run(&mut f, &frame(true, OP_TEXT, big.as_bytes(), KEY), chunk),
                frame(true, OP_TEXT, big.as_bytes(), [0; 4])
            );
        }
    }

    #[test]
    fn fragments_are_joined_and_control_frames_pass_between_them() {
        let mut f = WsFilter::new(1 << 20);
        let mut bytes = frame(false, OP_TEXT, br#"{"jsonrpc":"2.0","#, KEY);
        bytes.extend(frame(true, 0x9, b"ping", KEY));
        bytes.extend(frame(
            true,
            OP_CONTINUATION,
            br#""id":true,"method":"m"}"#,
            KEY,
        ));
        let mut expected = frame(true, 0x9, b"ping", KEY);
        expected.extend(frame(true, OP_TEXT, br#"{"id":null}"#, [0; 4]));
        assert_eq!(run(&mut f, &bytes, 5), expected);
    }

    #[test]
    fn misread_requests_are_rewritten_like_http_bodies() {
        let mut f = WsFilter::new(1 << 20);
        let cases: [(&[u8], &[u8]); 3] = [
            (
                br#"{"jsonrpc":"2.0","id":-1,"method":"m"}"#,
                br#"{"id":null}"#,
            ),
            (
                br#"[["x"],{"jsonrpc":"2.0","id":1,"method":"m"}]"#,
                br#"[{"id":null},{"jsonrpc":"2.0","id":1,"method":"m"}]"#,
            ),
            (b"{not json", b"{not json"),
        ];
        for (sent, forwarded) in cases {
            assert_eq!(
                run(&mut f, &frame(true, OP_TEXT, sent, KEY), 64),
                frame(true, OP_TEXT, forwarded, [0; 4])
            );
        }
    }

    #[test]
    fn an_oversized_message_becomes_the_stand_in_call_without_being_buffered() {
        let mut f = WsFilter::new(1000);
        let payload = vec![b' '; 5000];
        let mut bytes = frame(false, OP_TEXT, &payload[..3000], KEY);
        bytes.extend(frame(true, OP_CONTINUATION, &payload[3000..], KEY));
        for piece in bytes.chunks(100) {
            f.feed(piece);
            assert!(f.payload.len() <= 1000);
        }
        assert_eq!(f.pending(), frame(true, OP_TEXT, OVERSIZED_CALL, [0; 4]));
        assert_eq!(
            std::str::from_utf8(OVERSIZED_CALL)
                .unwrap()
                .matches(OVERSIZED_METHOD)
                .count(),
            1
        );
    }

    #[test]
    fn a_frame_the_rfc_forbids_turns_the_filter_off() {
        let mut f = WsFilter::new(1 << 20);
        let mut unmasked = frame(true, OP_TEXT, b"{}", KEY);
        unmasked[1] &= 0x7f;
        let mut bytes = unmasked.clone();
        bytes.extend_from_slice(b"anything after");
        assert_eq!(run(&mut f, &bytes, 3), bytes);
    }
}
