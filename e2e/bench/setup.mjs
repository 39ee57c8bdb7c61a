// Benchmark fixture: deploys Token and spreads token transfers over >= BENCH_BLOCKS blocks,
// then writes a state file that bench/run.sh uses to build request bodies.
//   node bench/setup.mjs URL STATE_FILE
// Block filling is pluggable:
//   - node has anvil_mine / hardhat_mine (anvil): transfers are sent one by one and the gap
//     between two transfers is filled with one `anvil_mine(count)` call.  Fast (seconds).
//   - otherwise (l2node, run it with --block-time 0 so every tx makes a block): the gaps are
//     filled with 0-value self-transfers, sent in chunks of BENCH_CHUNK signed raw txs.
//     Bounded by BENCH_MAX_TXS and BENCH_SETUP_TIMEOUT.
// Env: BENCH_BLOCKS=10000  BENCH_TRANSFERS=100  BENCH_CHUNK=50  BENCH_MAX_TXS=30000
//      BENCH_SETUP_TIMEOUT=1800 (s)  BENCH_ACCOUNT=4 (dev account index that signs)
//      BENCH_FILLER=txs forces the self-transfer filler even where a mine RPC exists
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { createPublicClient, createWalletClient, defineChain, http, pad, toHex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';

const [URL_, STATE] = process.argv.slice(2);
if (!URL_ || !STATE) { console.error('usage: setup.mjs URL STATE_FILE'); process.exit(2); }
const BLOCKS = Number(process.env.BENCH_BLOCKS || 10000);
const TRANSFERS = Number(process.env.BENCH_TRANSFERS || 100);
const CHUNK = Number(process.env.BENCH_CHUNK || 50);
const MAX_TXS = Number(process.env.BENCH_MAX_TXS || 30000);
const deadline = Date.now() + Number(process.env.BENCH_SETUP_TIMEOUT || 1800) * 1000;
const here = new URL('..', import.meta.url);
const { abi, bytecode } = JSON.parse(readFileSync(new URL('build/Token.json', here)));
const accounts = JSON.parse(readFileSync(new URL('lib/accounts.json', here)));
const account = privateKeyToAccount(accounts[Number(process.env.BENCH_ACCOUNT || 4)].privateKey);

async function rpc(method, params = []) {
  const r = await fetch(URL_, { method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) });
  return r.json();
}
const chainId = Number((await rpc('eth_chainId')).result);
const chain = defineChain({ id: chainId, name: 'bench', nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
  rpcUrls: { default: { http: [URL_] } } });
const pub = createPublicClient({ chain, pollingInterval: 100, transport: http(URL_) });
const wallet = createWalletClient({ account, chain, transport: http(URL_) });
const wait = (hash) => pub.waitForTransactionReceipt({ hash, timeout: 120_000, pollingInterval: 100 });
const checkTime = () => { if (Date.now() > deadline) throw new Error('BENCH_SETUP_TIMEOUT reached'); };

let mineMethod = null;
for (const m of process.env.BENCH_FILLER === 'txs' ? [] : ['anvil_mine', 'hardhat_mine']) {
  const r = await rpc(m, ['0x1', '0x0']);
  if (!r.error) { mineMethod = m; break; }
}
console.log(`setup ${URL_}: chain ${chainId}, block filler: ${mineMethod || 'self-transfers (no mine RPC)'}`);

let fees = await pub.estimateFeesPerGas();
let nonce = await pub.getTransactionCount({ address: account.address, blockTag: 'pending' });
let txCount = 0;
// On a Karma chain the free path ends with the sender's daily quota (well below the 10,000
// filler transactions): from then on the fee fields are l2_estimateGas's premium ones.
async function premiumFees(req) {
  const r = await rpc('l2_estimateGas', [{ from: account.address, to: req.to, value: toHex(req.value ?? 0n),
    data: req.data, gas: toHex(req.gas) }]);
  if (r.error) throw new Error(`l2_estimateGas: ${r.error.message}`);
  const tip = BigInt(r.result.priorityFeePerGas);
  return { maxPriorityFeePerGas: tip, maxFeePerGas: 2n * BigInt(r.result.baseFeePerGas) + tip };
}
async function sendRaw(req) {
  if (++txCount > MAX_TXS) throw new Error(`BENCH_MAX_TXS (${MAX_TXS}) reached`);
  const sign = () => wallet.signTransaction({ ...req, nonce, chainId, type: 'eip1559',
    maxFeePerGas: fees.maxFeePerGas, maxPriorityFeePerGas: fees.maxPriorityFeePerGas });
  let hash;
  try {
    hash = await pub.sendRawTransaction({ serializedTransaction: await sign() });
  } catch (e) {
    if (!/Free transaction limit reached/.test(e.details ?? e.message)) throw e;
    fees = await premiumFees(req);
    hash = await pub.sendRawTransaction({ serializedTransaction: await sign() });
  }
  nonce++;
  return hash;
}

const deployHash = await wallet.deployContract({ abi, bytecode, args: [10n ** 27n] });
const deployRcpt = await wait(deployHash);
if (deployRcpt.status !== 'success') throw new Error('deploy failed');
nonce = await pub.getTransactionCount({ address: account.address, blockTag: 'pending' });
const token = deployRcpt.contractAddress;
const fromBlock = Number(deployRcpt.blockNumber);
const target = fromBlock + BLOCKS - 1;
const holders = Array.from({ length: TRANSFERS }, (_, i) => pad(toHex(0x10000 + i), { size: 20 }));
const transferData = (to, v) => '0x' + 'a9059cbb' + to.slice(2).padStart(64, '0') + v.toString(16).padStart(64, '0');
const gap = Math.max(0, Math.floor(BLOCKS / TRANSFERS) - 1);

async function fillBlocks(n) {
  if (n <= 0) return;
  if (mineMethod) { await rpc(mineMethod, [toHex(n), '0x0']); return; }
  // No mine RPC: every self-transfer should make a block on --block-time 0.
  let left = n;
  while (left > 0) {
    checkTime();
    const start = await pub.getBlockNumber({ cacheTime: 0 });
    const k = Math.min(left, CHUNK);
    let last;
    for (let i = 0; i < k; i++) last = await sendRaw({ to: account.address, value: 0n, gas: 21000n });
    const r = await wait(last);
    left -= Number(r.blockNumber - start);
  }
}

const t0 = Date.now();
let transfersSent = 0;
let transferTx = null;
for (let i = 0; i < TRANSFERS; i++) {
  checkTime();
  const h = await sendRaw({ to: token, data: transferData(holders[i], 1000n + BigInt(i)), gas: 100000n });
  const r = await wait(h);
  if (r.status !== 'success') throw new Error(`transfer ${i} failed`);
  transfersSent++;
  transferTx ??= h;
  const head = Number(await pub.getBlockNumber({ cacheTime: 0 }));
  await fillBlocks(Math.min(gap, target - head));
}
let head = Number(await pub.getBlockNumber({ cacheTime: 0 }));
await fillBlocks(target - head);
head = Number(await pub.getBlockNumber({ cacheTime: 0 }));
const toBlock = Math.min(head, target);
// One more transfer at the head, for the trace scenarios: a node that keeps only recent states
// (anvil by default) cannot replay the first transfer, thousands of blocks back.
const recent = await sendRaw({ to: token, data: transferData(account.address, 1n), gas: 100000n });
if ((await wait(recent)).status !== 'success') throw new Error('the recent transfer failed');
const logs = await rpc('eth_getLogs', [{ address: token, fromBlock: toHex(fromBlock), toBlock: toHex(toBlock) }]);
const state = {
  url: URL_, chainId, token, from: account.address, holder: holders[0], holders,
  fromBlock, toBlock, blocks: toBlock - fromBlock + 1, transfers: transfersSent, transferTx, recentTransferTx: recent,
  logsInRange: logs.result ? logs.result.length : null, txsSent: txCount + 1, filler: mineMethod || 'self-transfers',
  setupSeconds: (Date.now() - t0) / 1000, createdAt: new Date().toISOString(),
};
mkdirSync(dirname(STATE), { recursive: true });
writeFileSync(STATE, JSON.stringify(state, null, 2));
console.log(`setup done: token ${token}, blocks ${fromBlock}..${toBlock} (${state.blocks}), ` +
  `${transfersSent} transfers, ${state.logsInRange} logs in range, ${state.txsSent} txs, ${state.setupSeconds}s`);
