//! Joining from a state snapshot (`--syncmode snap`): a fresh follower asks its peers which
//! snapshot they offer, takes the block most of them offer, checks that block's header (the
//! sequencer's seal, and the 256 headers before it by their hashes), the top of its account
//! trie against the header's state root, then fetches the chunks from all those peers at once.
//! Each chunk is stored only if it rebuilds its subtrie; a refused chunk is fetched again from
//! another peer and the peer that sent it is not asked again. Once the whole state is in, the
//! block is the head and block sync goes on from it. Range sync waits meanwhile.

use std::{
    collections::{BTreeMap, HashMap, VecDeque},
    sync::{
        atomic::{AtomicBool, Ordering},
        Arc,
    },
    time::{Duration, Instant},
};

use alloy_consensus::Header;
use alloy_rlp::Decodable;
use futures::{stream::FuturesUnordered, StreamExt};
use libp2p::PeerId;
use tokio::sync::{mpsc, oneshot};

use super::{Command, NetStatus};
use crate::chain::Chain;
use crate::constants::{
    P2P_BAN_DURATION, SNAPSHOT_CHUNKS_IN_FLIGHT, SNAPSHOT_HEADERS, SNAPSHOT_INTERVAL,
    SNAPSHOT_MAX_CHUNK_BYTES, SNAPSHOT_PEERS_SETTLE,
};
use crate::sync::{snap::SnapManifest, SyncRequest, SyncResponse};
use l2node_trie::snap::{plan_chunks, ChunkPlan, TopNode};

/// Peers whose chunk did not match its state root, until when they are not asked.
#[derive(Default)]
struct Bad(HashMap<PeerId, Instant>);

impl Bad {
    fn insert(&mut self, peer: PeerId) {
        self.0.insert(peer, Instant::now() + P2P_BAN_DURATION);
    }

    fn contains(&self, peer: &PeerId) -> bool {
        self.0
            .get(peer)
            .is_some_and(|until| *until > Instant::now())
    }
}

/// Asks peers through the swarm task.
#[derive(Clone)]
pub(super) struct Requests(pub(super) mpsc::UnboundedSender<Command>);

impl Requests {
    /// `peer`'s answer, `None` when the request failed (timeout, disconnect).
    async fn ask(&self, peer: PeerId, request: SyncRequest) -> Option<SyncResponse> {
        let (reply, answer) = oneshot::channel();
        self.0
            .send(Command::Request {
                peer,
                request,
                reply,
            })
            .ok()?;
        answer.await.ok().flatten()
    }
}

/// What a join did (kept in [`NetStatus`] for `admin`-style inspection and tests).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SnapshotJoin {
    /// The snapshot's block.
    pub number: u64,
    /// Accounts written.
    pub accounts: usize,
    /// Chunks written.
    pub chunks: usize,
    /// Chunks refused (they did not rebuild their subtrie) and fetched again elsewhere.
    pub refused: usize,
    /// From the first question to the head at the snapshot's block.
    pub elapsed: Duration,
}

/// Why an attempt did not complete; the next one starts over.
#[derive(Debug, thiserror::Error)]
enum Failed {
    #[error("no peer with a known head yet")]
    NoPeer,
    #[error("no peer offers a snapshot")]
    NoOffer,
    #[error("{0}")]
    Other(String),
}

/// Peers whose head is known (they answered their status).
fn answered(status: &NetStatus) -> usize {
    status.peers().iter().filter(|p| p.head.is_some()).count()
}

/// Waits until `bootnodes` peers answered, or [`SNAPSHOT_PEERS_SETTLE`] after the first did.
async fn settle(status: &NetStatus, bootnodes: usize) {
    let mut first = None;
    loop {
        let n = answered(status);
        if n >= bootnodes.max(1) {
            return;
        }
        if n > 0 && first.get_or_insert_with(Instant::now).elapsed() >= SNAPSHOT_PEERS_SETTLE {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Joins from a snapshot, then lets range sync go on (clears `snapping`). First waits for its
/// `bootnodes` to answer (see [`SNAPSHOT_PEERS_SETTLE`]). Gives up and syncs blocks from
/// genesis when peers are connected but none offers a snapshot for a while.
pub(super) async fn join(
    requests: Requests,
    chain: Arc<Chain>,
    status: Arc<NetStatus>,
    snapping: Arc<AtomicBool>,
    bootnodes: usize,
) {
    let started = Instant::now();
    settle(&status, bootnodes).await;
    let mut no_offer = 0;
    // Peers that sent a chunk that does not match its state root: not asked again for
    // P2P_BAN_DURATION.
    let mut bad = Bad::default();
    // Once the state was cleared for a snapshot (now, or before a restart), only a snapshot
    // can complete it.
    let mut begun = blocking(&chain, |c| Ok(c.storage().snapshot_pending()?.is_some()))
        .await
        .unwrap_or(true);
    loop {
        let mut pause = Duration::from_secs(1);
        match attempt(&requests, &chain, &status, &mut bad, &mut begun, started).await {
            Ok(report) => {
                tracing::info!(target: "l2node::p2p", number = report.number, accounts = report.accounts, chunks = report.chunks, refused = report.refused, elapsed = ?report.elapsed, "joined the chain from a state snapshot; syncing the blocks after it");
                status.set_snapshot_join(report);
                break;
            }
            Err(Failed::NoOffer) => {
                no_offer += 1;
                // A chain younger than two intervals has little to skip; ten seconds of peers
                // without an offer: peers that serve none.
                if !begun && (no_offer >= 10 || status.best_peer_head() < 2 * SNAPSHOT_INTERVAL) {
                    tracing::info!(target: "l2node::p2p", "no peer offers a state snapshot; syncing blocks from genesis instead");
                    break;
                }
            }
            Err(Failed::NoPeer) => pause = Duration::from_millis(200),
            Err(Failed::Other(why)) => {
                tracing::warn!(target: "l2node::p2p", reason = %why, "state snapshot attempt failed; trying again");
            }
        }
        tokio::time::sleep(pause).await;
    }
    // Block sync takes over (and says whether it is still behind).
    status.set_sync(None);
    snapping.store(false, Ordering::SeqCst);
}

async fn attempt(
    requests: &Requests,
    chain: &Arc<Chain>,
    status: &NetStatus,
    bad: &mut Bad,
    begun: &mut bool,
    started: Instant,
) -> Result<SnapshotJoin, Failed> {
    let known: Vec<PeerId> = status
        .peers()
        .iter()
        .filter(|p| p.head.is_some())
        .filter_map(|p| p.id.parse().ok())
        .collect();
    let peers: Vec<PeerId> = known.iter().filter(|p| !bad.contains(p)).copied().collect();
    if peers.is_empty() {
        return Err(if known.is_empty() {
            Failed::NoPeer
        } else {
            Failed::Other(format!(
                "each of the {} peers sent a chunk that did not match its state root in the last {} min; waiting for other peers",
                known.len(),
                P2P_BAN_DURATION.as_secs() / 60
            ))
        });
    }
    // The offers, grouped: the block most peers offer (then the highest).
    let offers = futures::future::join_all(
        peers
            .iter()
            .map(|p| requests.ask(*p, SyncRequest::SnapshotManifest)),
    )
    .await;
    let mut groups: BTreeMap<(u64, alloy_primitives::B256), (SnapManifest, Vec<PeerId>)> =
        BTreeMap::new();
    for (peer, offer) in peers.iter().zip(offers) {
        if let Some(SyncResponse::SnapshotManifest(Some(m))) = offer {
            // A snapshot of the genesis block has nothing to skip (and no block before it).
            if m.number == 0 {
                continue;
            }
            groups
                .entry((m.number, m.hash))
                .or_insert_with(|| (m, Vec::new()))
                .1
                .push(*peer);
        }
    }
    let (manifest, group) = groups
        .into_values()
        .max_by_key(|(m, peers)| (peers.len(), m.number))
        .ok_or(Failed::NoOffer)?;
    let number = manifest.number;
    // eth_syncing and the `syncing` subscription say so while the state is written.
    status.set_sync(Some(super::SyncProgress {
        starting: 0,
        highest: status.best_peer_head(),
    }));
    let headers = headers(requests, chain, &manifest, &group).await?;
    let top: Vec<TopNode> = manifest
        .top
        .iter()
        .map(|(p, n)| (p.to_vec(), n.to_vec()))
        .collect();
    let state_root = headers.last().expect("checked").state_root;
    let plan = plan_chunks(state_root, &top)
        .map_err(|e| Failed::Other(format!("the offered top of block {number}'s trie: {e}")))?;
    tracing::info!(target: "l2node::p2p", number, peers = group.len(), chunks = plan.len(), "joining from the state snapshot of block {number}");
    blocking(chain, move |c| c.snapshot_begin(number)).await?;
    *begun = true;
    let (accounts, refused) = chunks(requests, chain, number, plan.clone(), group, bad).await?;
    let tiers = manifest.tiers.map(|(b, t)| (b, t.to_vec()));
    blocking(chain, move |c| c.snapshot_finish(&headers, &top, tiers)).await?;
    Ok(SnapshotJoin {
        number,
        accounts,
        chunks: plan.len(),
        refused,
        elapsed: started.elapsed(),
    })
}

/// Runs chain work on the blocking pool.
async fn blocking<T: Send + 'static>(
    chain: &Arc<Chain>,
    f: impl FnOnce(&Chain) -> Result<T, crate::chain::ChainError> + Send + 'static,
) -> Result<T, Failed> {
    let chain = chain.clone();
    tokio::task::spawn_blocking(move || f(&chain))
        .await
        .map_err(|e| Failed::Other(e.to_string()))?
        .map_err(|e| Failed::Other(e.to_string()))
}

/// The snapshot block's header and the [`SNAPSHOT_HEADERS`] before it (for BLOCKHASH),
/// ascending: the last one sealed by a signer of the chain and the offered hash, each the
/// parent of the next.
async fn headers(
    requests: &Requests,
    chain: &Arc<Chain>,
    manifest: &SnapManifest,
    group: &[PeerId],
) -> Result<Vec<Header>, Failed> {
    let number = manifest.number;
    let first = number.saturating_sub(SNAPSHOT_HEADERS - 1).max(1);
    let mut headers: Vec<Header> = Vec::new();
    let mut next = first;
    // Answers that brought no header: each peer gets a few.
    let (mut asked, mut failed) = (0, 0);
    while next <= number {
        let peer = group[asked % group.len()];
        asked += 1;
        if failed > 2 * group.len() + 2 {
            return Err(Failed::Other(format!(
                "peers did not send headers {next}..={number}"
            )));
        }
        let before = next;
        let (from, count) = (next, number + 1 - next);
        let answer = match requests
            .ask(peer, SyncRequest::Headers { from, count })
            .await
        {
            Some(SyncResponse::Headers(raws)) => Some((raws, false)),
            // A peer of an earlier version knows no header request: its blocks' headers.
            _ => match requests
                .ask(peer, SyncRequest::Blocks { from, count })
                .await
            {
                Some(SyncResponse::Blocks(blocks)) => Some((blocks, true)),
                _ => None,
            },
        };
        let Some((raws, blocks)) = answer else {
            failed += 1;
            continue;
        };
        for raw in raws {
            let header = if blocks {
                header_of_block(&raw)
            } else {
                Header::decode(&mut raw.as_ref())
            }
            .map_err(|e| Failed::Other(format!("a header from {peer} does not decode: {e}")))?;
            if header.number != next {
                break;
            }
            headers.push(header);
            next += 1;
            if next > number {
                break;
            }
        }
        if next == before {
            failed += 1;
        }
    }
    let last = headers.last().ok_or_else(|| {
        Failed::Other(format!(
            "the peers offered a snapshot of block {number} without its header"
        ))
    })?;
    if last.hash_slow() != manifest.hash {
        return Err(Failed::Other(format!(
            "block {number} from the peers is not the offered {}",
            manifest.hash
        )));
    }
    let sealed = last.clone();
    blocking(chain, move |c| c.check_snapshot_header(&sealed)).await?;
    for pair in headers.windows(2) {
        if pair[1].parent_hash != pair[0].hash_slow() {
            return Err(Failed::Other(format!(
                "block {} from the peers is not the parent of block {}",
                pair[0].number, pair[1].number
            )));
        }
    }
    Ok(headers)
}

/// The header of an RLP-encoded block: the first item of its list, the transactions not
/// decoded.
fn header_of_block(mut raw: &[u8]) -> alloy_rlp::Result<Header> {
    if !alloy_rlp::Header::decode(&mut raw)?.list {
        return Err(alloy_rlp::Error::UnexpectedString);
    }
    Header::decode(&mut raw)
}

/// Fetches and stores every chunk, spread over `group`; a chunk that is refused or not sent is
/// asked of another peer, and a peer whose chunk was refused is put in `bad` and asked no
/// more. Returns the accounts written and the chunks refused.
async fn chunks(
    requests: &Requests,
    chain: &Arc<Chain>,
    number: u64,
    plan: Vec<ChunkPlan>,
    group: Vec<PeerId>,
    bad: &mut Bad,
) -> Result<(usize, usize), Failed> {
    let plan = Arc::new(plan);
    // (chunk, turn): the turn picks the peer, and moves on each time the chunk is asked again.
    let mut queue: VecDeque<(usize, usize)> = (0..plan.len()).map(|i| (i, i)).collect();
    let mut in_flight = FuturesUnordered::new();
    let (mut accounts, mut refused) = (0, 0);
    loop {
        while in_flight.len() < SNAPSHOT_CHUNKS_IN_FLIGHT {
            let Some((index, turn)) = queue.pop_front() else {
                break;
            };
            let good: Vec<PeerId> = group.iter().filter(|p| !bad.contains(p)).copied().collect();
            if good.is_empty() {
                return Err(Failed::Other(format!(
                    "every peer offering block {number} sent a chunk that does not match its state root; asking the other peers for their offers"
                )));
            }
            if turn - index > 4 * group.len() {
                return Err(Failed::Other(format!(
                    "the peers stopped serving block {number}'s snapshot (a newer one replaced it); asking them for their offers again"
                )));
            }
            let peer = good[turn % good.len()];
            let (requests, chain, plan) = (requests.clone(), chain.clone(), plan.clone());
            in_flight.push(async move {
                if turn != index {
                    // Asked again: give a peer that just failed a moment.
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                let outcome = match fetch(&requests, peer, number, &plan[index].path).await {
                    Some(pages) => tokio::task::spawn_blocking(move || {
                        chain.snapshot_write_chunk(number, &plan[index], &pages)
                    })
                    .await
                    .map_err(|e| e.to_string())
                    .and_then(|r| r.map_err(|e| e.to_string()))
                    .map(Some),
                    None => Ok(None),
                };
                (index, turn, peer, outcome)
            });
        }
        let Some((index, turn, peer, outcome)) = in_flight.next().await else {
            return Ok((accounts, refused));
        };
        match outcome {
            Ok(Some(Ok(n))) => accounts += n,
            Ok(Some(Err(why))) => {
                tracing::warn!(target: "l2node::p2p", %peer, chunk = ?plan[index].path, reason = %why, "refused a snapshot chunk; asking another peer");
                refused += 1;
                bad.insert(peer);
                queue.push_back((index, turn + 1));
            }
            // Not sent (the peer stopped serving that block, or left): another peer's turn.
            Ok(None) => queue.push_back((index, turn + 1)),
            Err(e) => return Err(Failed::Other(e)),
        }
    }
}

/// Every page of one chunk from `peer`, or `None` when one is not sent. A peer whose pages
/// go past [`SNAPSHOT_MAX_CHUNK_BYTES`] or do not move forward is cut short (and the chunk
/// refused).
async fn fetch(
    requests: &Requests,
    peer: PeerId,
    number: u64,
    path: &[u8],
) -> Option<Vec<alloy_primitives::Bytes>> {
    let mut pages: Vec<alloy_primitives::Bytes> = Vec::new();
    let mut from = None;
    let mut bytes = 0;
    loop {
        let request = SyncRequest::SnapshotChunk {
            number,
            path: path.to_vec(),
            from,
        };
        let Some(SyncResponse::SnapshotChunk(Some(page))) = requests.ask(peer, request).await
        else {
            return None;
        };
        let next = l2node_storage::next_page(&page);
        bytes += page.len();
        pages.push(page);
        match next {
            Some(n) if Some(n) > from && bytes < SNAPSHOT_MAX_CHUNK_BYTES => from = Some(n),
            _ => return Some(pages),
        }
    }
}

#[cfg(test)]
mod tests {
    use alloy_consensus::{Block, TxEnvelope};
    use alloy_rlp::Encodable;

    use super::*;

    /// A peer of an earlier version cannot read a header request (its stream fails, and the
    /// request answers `None`): the joining node asks it for the blocks instead and takes
    /// their headers, checked as the headers would be.
    #[tokio::test]
    async fn headers_come_from_blocks_when_a_peer_knows_no_header_request() {
        let spec = std::sync::Arc::new(
            crate::chainspec::ChainSpec::from_genesis(crate::dev::dev_genesis(0)).unwrap(),
        );
        let open = |dir: &tempfile::TempDir| {
            let storage = l2node_storage::Storage::open(&dir.path().join("chain.redb")).unwrap();
            Chain::open(storage, spec.clone()).unwrap()
        };
        let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let (miner, joiner) = (Arc::new(open(&a)), Arc::new(open(&b)));
        for _ in 0..5 {
            crate::test_utils::produce_block(&miner, Vec::new());
        }
        let head = miner.head();
        let manifest = SnapManifest {
            number: head.header.number,
            hash: head.hash,
            top: Vec::new(),
            tiers: None,
        };

        let (commands, mut asked) = mpsc::unbounded_channel();
        let peer = PeerId::random();
        let old_peer = tokio::spawn({
            let miner = miner.clone();
            async move {
                let mut requests = Vec::new();
                while let Some(Command::Request { request, reply, .. }) = asked.recv().await {
                    let answer = match &request {
                        SyncRequest::Blocks { from, count } => {
                            let blocks = crate::sync::serve_blocks(&miner, *from, *count);
                            Some(SyncResponse::Blocks(blocks.unwrap()))
                        }
                        _ => None,
                    };
                    requests.push(request);
                    let _ = reply.send(answer);
                }
                requests
            }
        });
        let got = headers(&Requests(commands), &joiner, &manifest, &[peer])
            .await
            .unwrap_or_else(|e| panic!("{e:?}"));
        let expected: Vec<Header> = (1..=5)
            .map(|n| miner.storage().block(n).unwrap().unwrap().header)
            .collect();
        assert_eq!(got, expected);
        assert_eq!(
            old_peer.await.unwrap(),
            [
                SyncRequest::Headers { from: 1, count: 5 },
                SyncRequest::Blocks { from: 1, count: 5 }
            ]
        );
    }

    /// A block's header read from its RLP, as asked of a peer that knows no header request.
    #[test]
    fn a_blocks_header_is_its_lists_first_item() {
        let header = Header {
            number: 768,
            gas_limit: 30_000_000,
            extra_data: vec![7; 97].into(),
            ..Header::default()
        };
        let block = Block::<TxEnvelope> {
            header: header.clone(),
            body: Default::default(),
        };
        let mut raw = Vec::new();
        block.encode(&mut raw);
        assert_eq!(header_of_block(&raw).unwrap(), header);
        let mut bare = Vec::new();
        header.encode(&mut bare);
        // A header is a list too, but its first item is no header.
        assert!(header_of_block(&bare).is_err());
        assert!(header_of_block(&alloy_rlp::encode(b"not a list".as_slice())).is_err());
    }
}
