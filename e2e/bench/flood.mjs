// Spam flood while an honest client transacts (on a gasless chain spam costs nothing).
//   node bench/flood.mjs path/to/l2node [SECONDS]
// Starts its own dev node (fresh data dir, --block-time FLOOD_BLOCK_TIME = 2 s, loopback
// ports FLOOD_PORT / +1), then for SECONDS (default 60) runs at once:
//   - nonce-gap flood: fresh zero-balance keys send nonces 1..500 (nonce 0 never comes) at gas
//     price 0, 100 per batch, new keys every round;
//   - large transactions: a funded account keeps sending transfers with the whole block gas
//     limit as their gas limit;
//   - heavy reads: FLOOD_READERS loops of eth_getBlockByNumber("pending", true),
//     eth_feeHistory(1024, "pending", [50]), eth_getLogs over the whole chain, eth_estimateGas;
//   - idle connections: FLOOD_IDLE sockets that send half a request and nothing more (each is
//     reopened when the node closes it);
//   - the honest client: one 1-wei transfer every 500 ms from dev account 0.
// Samples the node's resident memory every 500 ms: VmRSS less the pages of the database file it
// has mapped in (OS page cache the node reads its database through, not memory it holds).
// Afterwards waits up to 60 s for every honest receipt and reads the block timestamps of the run.
// Prints the figures and FLOOD_RESULT ...; exits 1 unless every honest transfer was mined, the
// largest gap between blocks is at most 2x the block period (with 1 s of timestamp rounding),
// and the peak memory stays under FLOOD_MAX_RSS_MB (default 1024).
import { spawn } from 'node:child_process';
import { readFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import net from 'node:net';
import { keccak256, pad, toHex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';

const [BIN, SECS] = process.argv.slice(2);
if (!BIN) {
  console.error('usage: flood.mjs path/to/l2node [SECONDS]');
  process.exit(2);
}
const env = (k, d) => Number(process.env[k] || d);
const SECONDS = Number(SECS || 60);
const PERIOD = env('FLOOD_BLOCK_TIME', 2);
const PORT = env('FLOOD_PORT', 18745);
const READERS = env('FLOOD_READERS', 8);
const IDLE = env('FLOOD_IDLE', 100);
const MAX_RSS_MB = env('FLOOD_MAX_RSS_MB', 1024);
const URL_ = `http://127.0.0.1:${PORT}`;
const keys = JSON.parse(readFileSync(new URL('../lib/accounts.json', import.meta.url)));
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const dir = mkdtempSync(join(tmpdir(), 'l2node-flood-'));
const node = spawn(BIN, ['run', '--dev', '--block-time', String(PERIOD), '--data-path', dir,
  '--rpc-http-port', String(PORT), '--rpc-ws-port', String(PORT + 1), '--log-level', 'warn'],
{ stdio: ['ignore', 'ignore', 'inherit'] });
const stopNode = () => { try { node.kill('SIGTERM'); } catch { /* gone */ } };
process.on('exit', () => { stopNode(); rmSync(dir, { recursive: true, force: true }); });

let reqId = 0;
async function call(body) {
  const r = await fetch(URL_, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  if (!r.ok) throw new Error(`HTTP ${r.status}: ${(await r.text()).trim()}`);
  return r.json();
}
async function one(method, params) {
  const r = await call({ jsonrpc: '2.0', id: ++reqId, method, params });
  if (r.error) throw new Error(`${method}: ${r.error.message}`);
  return r.result;
}
for (let i = 0; ; i++) {
  try { await one('eth_blockNumber', []); break; } catch (e) {
    if (i > 600) throw new Error(`node did not start: ${e.message}`);
    await sleep(100);
  }
}
const chainId = Number(await one('eth_chainId', []));
const startBlock = Number(await one('eth_blockNumber', []));
const latest = await one('eth_getBlockByNumber', ['latest', false]);
const gasLimit = BigInt(latest.gasLimit);
let running = true;
const stats = { gapSent: 0, gapAccepted: 0, bigSent: 0, reads: 0, readErrors: 0, idleOpened: 0, rssMaxKb: 0 };

// Memory sampler.
const rssKb = () => {
  let kb = 0;
  let db = false;
  for (const line of readFileSync(`/proc/${node.pid}/smaps`, 'utf8').split('\n')) {
    if (/^[0-9a-f]+-[0-9a-f]+ /.test(line)) db = line.trimEnd().endsWith('.redb');
    else if (!db && line.startsWith('Rss:')) kb += Number(line.split(/\s+/)[1]);
  }
  return kb;
};
const sampler = setInterval(() => { try { stats.rssMaxKb = Math.max(stats.rssMaxKb, rssKb()); } catch { /* exited */ } }, 500);

async function gapFlood() {
  while (running) {
    const account = privateKeyToAccount(generatePrivateKey());
    for (let start = 1; start <= 500 && running; start += 100) {
      const body = [];
      for (let nonce = start; nonce < start + 100; nonce++) {
        const raw = await account.signTransaction({
          to: account.address, value: 0n, gas: 21000n, nonce, chainId, type: 'eip1559',
          maxFeePerGas: 0n, maxPriorityFeePerGas: 0n,
        });
        body.push({ jsonrpc: '2.0', id: nonce, method: 'eth_sendRawTransaction', params: [raw] });
      }
      const res = await call(body).catch(() => []);
      stats.gapSent += body.length;
      stats.gapAccepted += res.filter((r) => !r.error).length;
    }
  }
}

const bigAccount = privateKeyToAccount(keys[7].privateKey);
const bigStart = Number(await one('eth_getTransactionCount', [bigAccount.address, 'pending']));
async function bigTransactions() {
  const account = bigAccount;
  let nonce = bigStart;
  while (running) {
    const raw = await account.signTransaction({
      to: account.address, value: 0n, gas: gasLimit, nonce, chainId, type: 'eip1559',
      maxFeePerGas: 0n, maxPriorityFeePerGas: 0n,
    });
    const r = await call({ jsonrpc: '2.0', id: ++reqId, method: 'eth_sendRawTransaction', params: [raw] }).catch(() => ({}));
    if (!r.error) nonce++;
    stats.bigSent++;
    await sleep(100);
  }
}

async function heavyReads() {
  const reads = [
    ['eth_getBlockByNumber', ['pending', true]],
    ['eth_feeHistory', ['0x400', 'pending', [50]]],
    ['eth_getLogs', [{ fromBlock: '0x0', toBlock: 'latest' }]],
    ['eth_estimateGas', [{ from: keys[3].address, to: keys[4].address, value: '0x1' }]],
  ];
  for (let i = 0; running; i++) {
    const [method, params] = reads[i % reads.length];
    const r = await call({ jsonrpc: '2.0', id: ++reqId, method, params }).catch(() => ({ error: true }));
    stats.reads++;
    if (r.error) stats.readErrors++;
  }
}

function idleSocket() {
  if (!running) return;
  const s = net.connect(PORT, '127.0.0.1', () => {
    stats.idleOpened++;
    s.write('POST / HTTP/1.1\r\nHost: 127.0.0.1\r\n');
  });
  s.on('error', () => {});
  s.on('close', () => setTimeout(idleSocket, 100));
}

// The honest client.
const honest = privateKeyToAccount(keys[0].privateKey);
const honestTxs = [];
const honestStart = Number(await one('eth_getTransactionCount', [honest.address, 'pending']));
async function honestClient() {
  let nonce = honestStart;
  while (running) {
    const raw = await honest.signTransaction({
      to: pad(toHex(0x30000 + nonce), { size: 20 }), value: 1n, gas: 21000n, nonce, chainId,
      type: 'eip1559', maxFeePerGas: 0n, maxPriorityFeePerGas: 0n,
    });
    const sent = Date.now();
    // Like any client: a dropped connection is retried (the same signed bytes, so at most
    // "already known"); an answer from the node is final.
    let outcome;
    for (let attempt = 0; attempt < 3 && !outcome; attempt++) {
      try {
        const r = await call({ jsonrpc: '2.0', id: ++reqId, method: 'eth_sendRawTransaction', params: [raw] });
        if (!r.error) outcome = { hash: r.result, sent };
        else if (/already known/.test(r.error.message)) outcome = { hash: keccak256(raw), sent };
        else outcome = { error: r.error.message, sent };
      } catch (e) {
        if (attempt === 2) outcome = { error: e.message, sent };
      }
    }
    honestTxs.push(outcome);
    if (outcome.hash) nonce++;
    await sleep(500);
  }
}

console.log(`flood ${URL_}: ${SECONDS} s, block time ${PERIOD} s, ${READERS} readers, ${IDLE} idle sockets`);
for (let i = 0; i < IDLE; i++) idleSocket();
const tasks = [gapFlood(), gapFlood(), bigTransactions(), honestClient(),
  ...Array.from({ length: READERS }, heavyReads)];
await sleep(SECONDS * 1000);
running = false;
await Promise.allSettled(tasks);
const endBlock = Number(await one('eth_blockNumber', []));

// Every honest transfer must be mined.
const refused = honestTxs.filter((t) => t.error);
let pending = honestTxs.filter((t) => t.hash);
const minedIn = [];
const waitUntil = Date.now() + 60_000;
while (pending.length && Date.now() < waitUntil) {
  const res = await call(pending.map((t, i) => ({ jsonrpc: '2.0', id: i, method: 'eth_getTransactionReceipt', params: [t.hash] })));
  const still = [];
  for (const r of res) {
    const t = pending[r.id];
    if (r.result) minedIn.push({ sent: t.sent, block: Number(r.result.blockNumber) }); else still.push(t);
  }
  pending = still;
  if (pending.length) await sleep(250);
}
clearInterval(sampler);

// Block times over the run.
const lastBlock = Math.max(endBlock, ...minedIn.map((m) => m.block));
const stampOf = new Map();
for (let n = startBlock; n <= lastBlock; n += 100) {
  const body = [];
  for (let k = n; k < Math.min(n + 100, lastBlock + 1); k++) body.push({ jsonrpc: '2.0', id: k, method: 'eth_getBlockByNumber', params: [toHex(k), false] });
  for (const r of await call(body)) stampOf.set(r.id, Number(r.result.timestamp));
}
const stamps = [];
for (let k = startBlock + 1; k <= endBlock; k++) stamps.push(stampOf.get(k));
// Send to inclusion: the including block's timestamp (whole seconds) minus the send time.
const latencies = minedIn.map((m) => Math.max(0, stampOf.get(m.block) * 1000 - m.sent));
const gaps = stamps.slice(1).map((t, i) => t - stamps[i]);
const maxGap = gaps.length ? Math.max(...gaps) : Infinity;
const status = await one('txpool_status', []).catch(() => null);
latencies.sort((a, b) => a - b);
const p = (q) => (latencies.length ? (latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] / 1000).toFixed(1) : 'n/a');
const mined = honestTxs.length - refused.length - pending.length;
const rssMb = (stats.rssMaxKb / 1024).toFixed(0);

console.log(`honest: ${mined}/${honestTxs.length} mined (${refused.length} refused, ${pending.length} without receipt), send-to-inclusion (block time, 1 s resolution) p50 ${p(0.5)} s, p99 ${p(0.99)} s`);
if (refused.length) console.log(`  first refusal: ${refused[0].error}`);
console.log(`blocks: ${endBlock - startBlock} in ${SECONDS} s, largest gap ${maxGap} s (period ${PERIOD} s)`);
console.log(`spam: ${stats.gapSent} nonce-gap txs sent (${stats.gapAccepted} accepted), ${stats.bigSent} block-sized txs, ` +
  `${stats.reads} heavy reads (${stats.readErrors} errors), ${stats.idleOpened} idle sockets opened`);
console.log(`pool after: ${status ? `${Number(status.pending)} pending, ${Number(status.queued)} queued` : 'n/a'}; peak RSS ${rssMb} MiB (bound ${MAX_RSS_MB} MiB)`);
const ok = mined === honestTxs.length && honestTxs.length > 0 && maxGap <= 2 * PERIOD + 1 && stats.rssMaxKb / 1024 <= MAX_RSS_MB;
console.log(`FLOOD_RESULT ok=${ok} honest=${mined}/${honestTxs.length} max_gap_s=${maxGap} rss_mb=${rssMb} gap_accepted=${stats.gapAccepted} reads=${stats.reads}`);
stopNode();
process.exit(ok ? 0 : 1);
