// Transaction throughput: N signed ETH transfers sent as fast as the node takes them, then
// waits until every one has a receipt.
//   node bench/throughput.mjs URL [N]
// The transfers are pre-signed (not timed) from dev accounts BENCH_TP_ACCOUNTS (default 5..9,
// so the suites and bench/setup.mjs keep their nonces), round-robin, 1 wei each to fresh
// addresses. They go out as JSON-RPC batches of BENCH_TP_BATCH (100) eth_sendRawTransaction with
// BENCH_TP_INFLIGHT (4) batches in flight. A transaction the node refuses for a full pool or a
// full per-account queue (batches arriving out of order) is re-sent after 100 ms (a node may bound its pool below N); any other error fails the run.
// Prints: send phase tx/s, and "included" tx/s = N / (first send .. last receipt seen).
// Bounded by BENCH_TP_TIMEOUT (600 s). Loopback URLs only.
import { readFileSync } from 'node:fs';
import { pad, toHex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';

const [URL_, NARG] = process.argv.slice(2);
if (!URL_ || !/^http:\/\/(127\.|localhost|\[::1\])/.test(URL_)) {
  console.error('usage: throughput.mjs http://127.0.0.1:PORT [N]');
  process.exit(2);
}
const N = Number(NARG || 10000);
const BATCH = Number(process.env.BENCH_TP_BATCH || 100);
const INFLIGHT = Number(process.env.BENCH_TP_INFLIGHT || 4);
const deadline = Date.now() + Number(process.env.BENCH_TP_TIMEOUT || 600) * 1000;
// Dev accounts 0, 2 and 3 hold the most Karma (480,000, 108,000 and 240,000 free transactions a
// day): the default run stays gasless, as most traffic on this network is.
const idx = (process.env.BENCH_TP_ACCOUNTS || '0,2,3').split(',').map(Number);
const keys = JSON.parse(readFileSync(new URL('../lib/accounts.json', import.meta.url)));
const accounts = idx.map((i) => privateKeyToAccount(keys[i].privateKey));

let reqId = 0;
async function call(body) {
  const r = await fetch(URL_, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return r.json();
}
const one = async (method, params) => {
  const r = await call({ jsonrpc: '2.0', id: ++reqId, method, params });
  if (r.error) throw new Error(`${method}: ${r.error.message}`);
  return r.result;
};
const chainId = Number(await one('eth_chainId', []));
const tip = BigInt(await one('eth_maxPriorityFeePerGas', []));
const block = await one('eth_getBlockByNumber', ['latest', false]);
const base = BigInt(block.baseFeePerGas || '0x0');
const nonces = await Promise.all(accounts.map((a) => one('eth_getTransactionCount', [a.address, 'pending'])));
const startBlock = Number(block.number);

console.log(`throughput ${URL_}: chain ${chainId}, ${N} transfers from ${accounts.length} accounts; signing...`);
const signed = [];
for (let i = 0; i < N; i++) {
  const a = i % accounts.length;
  const nonce = Number(nonces[a]) + Math.floor(i / accounts.length);
  const raw = await accounts[a].signTransaction({
    to: pad(toHex(0x20000 + (i % 5000)), { size: 20 }), value: 1n, gas: 21000n, nonce, chainId,
    type: 'eip1559', maxFeePerGas: 2n * base + tip, maxPriorityFeePerGas: tip,
  });
  signed.push(raw);
}

const hashes = new Array(N);
let queue = Array.from({ length: N }, (_, i) => i);
let refused = 0;
const t0 = performance.now();
while (queue.length) {
  if (Date.now() > deadline) throw new Error('BENCH_TP_TIMEOUT reached while sending');
  const retry = [];
  let next = 0;
  const worker = async () => {
    while (next < queue.length) {
      const part = queue.slice(next, next + BATCH);
      next += BATCH;
      const body = part.map((i) => ({ jsonrpc: '2.0', id: i, method: 'eth_sendRawTransaction', params: [signed[i]] }));
      const res = await call(body);
      for (const r of res) {
        if (!r.error) hashes[r.id] = r.result;
        // Refused for now: the pool is full, or batches overtook each other and the sender's
        // queue behind a nonce gap is at its limit (64 per account, as geth): send again later.
        else if (/full|account limit exceeded/i.test(r.error.message)) { retry.push(r.id); refused++; }
        else if (/already known/i.test(r.error.message)) { /* sent twice after a retry: fine */ }
        else throw new Error(`tx ${r.id}: ${r.error.message}`);
      }
    }
  };
  await Promise.all(Array.from({ length: INFLIGHT }, worker));
  queue = retry.sort((a, b) => a - b);
  if (queue.length) await new Promise((r) => setTimeout(r, 100));
}
const tSent = performance.now();

// Poll receipts (batches of BATCH) until every transaction has one.
let missing = hashes.map((h, i) => i);
let lastBlock = startBlock;
let failed = 0;
while (missing.length) {
  if (Date.now() > deadline) throw new Error(`BENCH_TP_TIMEOUT reached: ${missing.length} without receipt`);
  const still = [];
  for (let k = 0; k < missing.length; k += BATCH) {
    const part = missing.slice(k, k + BATCH);
    const res = await call(part.map((i) => ({ jsonrpc: '2.0', id: i, method: 'eth_getTransactionReceipt', params: [hashes[i]] })));
    for (const r of res) {
      if (r.error || !r.result) { still.push(r.id); continue; }
      if (r.result.status !== '0x1') failed++;
      lastBlock = Math.max(lastBlock, Number(r.result.blockNumber));
    }
  }
  missing = still.sort((a, b) => a - b);
  if (missing.length) await new Promise((r) => setTimeout(r, 50));
}
const tDone = performance.now();
const s = (ms) => (ms / 1000).toFixed(2);
const blocks = lastBlock - startBlock;
console.log(`sent ${N} in ${s(tSent - t0)} s (${(N / ((tSent - t0) / 1000)).toFixed(0)} tx/s accepted, ${refused} pool-full retries)`);
console.log(`all ${N} receipts after ${s(tDone - t0)} s: ${(N / ((tDone - t0) / 1000)).toFixed(0)} tx/s included, ` +
  `${blocks} blocks (${(N / Math.max(blocks, 1)).toFixed(1)} tx/block), ${failed} failed`);
console.log(`THROUGHPUT_RESULT n=${N} send_s=${s(tSent - t0)} total_s=${s(tDone - t0)} tps=${(N / ((tDone - t0) / 1000)).toFixed(0)} blocks=${blocks} failed=${failed}`);
process.exitCode = failed ? 1 : 0;
