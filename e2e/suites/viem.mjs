// viem suite: HTTP (batch: true) and WebSocket transports against any node.
// Usage: node suites/viem.mjs HTTP_URL WS_URL. Signs locally (dev account 2), sends raw.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import {
  createPublicClient, createWalletClient, defineChain, http, webSocket, parseAbiItem,
  ContractFunctionRevertedError, BaseError, parseGwei, encodeFunctionData,
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { makeHarness, rawRpc, sleep } from '../lib/harness.mjs';

const [HTTP_URL, WS_URL] = process.argv.slice(2);
if (!HTTP_URL || !WS_URL) { console.error('usage: viem.mjs HTTP_URL WS_URL'); process.exit(2); }
const TX_TIMEOUT = Number(process.env.E2E_TX_TIMEOUT || 60) * 1000;
const WS_TIMEOUT = Number(process.env.E2E_WS_TIMEOUT || 30) * 1000;
const POLL = Number(process.env.E2E_POLL_MS || 250);

const here = new URL('..', import.meta.url);
const { abi, bytecode } = JSON.parse(readFileSync(new URL('build/Token.json', here)));
const accounts = JSON.parse(readFileSync(new URL('lib/accounts.json', here)));
const account = privateKeyToAccount(accounts[2].privateKey);
const OTHER = accounts[8].address;
const transferEvent = parseAbiItem('event Transfer(address indexed from, address indexed to, uint256 value)');
const SUPPLY = 10n ** 24n;

const { test, skip, finish } = makeHarness('viem');
console.log(`== viem suite against ${HTTP_URL} / ${WS_URL}`);

// Raw JSON-RPC (to probe optional methods and check answers independently of the client).
const rpc = rawRpc(HTTP_URL);

const chainId = Number((await rpc('eth_chainId')).result);
const chain = defineChain({
  id: chainId, name: 'e2e', nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
  rpcUrls: { default: { http: [HTTP_URL], webSocket: [WS_URL] } },
});
const batchBodies = [];
const pub = createPublicClient({
  chain, pollingInterval: POLL,
  transport: http(HTTP_URL, { batch: true, onFetchRequest: async (req) => { batchBodies.push(await req.clone().text()); } }),
});
const wallet = createWalletClient({ account, chain, transport: http(HTTP_URL) });
const wait = (hash) => pub.waitForTransactionReceipt({ hash, timeout: TX_TIMEOUT, pollingInterval: POLL });

let token, transferReceipt;

await test('HTTP batch: true sends one JSON array and every result is right', async () => {
  batchBodies.length = 0;
  const [id, bn, bal, nonce] = await Promise.all([
    pub.getChainId(), pub.getBlockNumber({ cacheTime: 0 }), pub.getBalance({ address: account.address }),
    pub.getTransactionCount({ address: account.address }),
  ]);
  assert.equal(id, chainId);
  assert.equal(typeof bn, 'bigint');
  assert.ok(bal > 0n, 'account 2 funded');
  assert.equal(typeof nonce, 'number');
  assert.ok(batchBodies.some((b) => b.trimStart().startsWith('[') && JSON.parse(b).length >= 2),
    `expected a batched body, saw ${JSON.stringify(batchBodies).slice(0, 300)}`);
});

await test('raw JSON-RPC batch of 3 returns 3 responses matched by id', async () => {
  const res = await fetch(HTTP_URL, {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify([
      { jsonrpc: '2.0', id: 11, method: 'eth_chainId', params: [] },
      { jsonrpc: '2.0', id: 12, method: 'eth_blockNumber', params: [] },
      { jsonrpc: '2.0', id: 13, method: 'eth_getBalance', params: [account.address, 'latest'] },
    ]),
  });
  const body = await res.json();
  assert.ok(Array.isArray(body) && body.length === 3);
  const byId = Object.fromEntries(body.map((r) => [r.id, r]));
  assert.equal(Number(byId[11].result), chainId);
  assert.match(byId[12].result, /^0x[0-9a-f]+$/);
  assert.ok(BigInt(byId[13].result) > 0n);
});

await test('deploy Token (signed locally) and wait for the receipt', async () => {
  const hash = await wallet.deployContract({ abi, bytecode, args: [SUPPLY] });
  const r = await wait(hash);
  assert.equal(r.status, 'success');
  assert.ok(r.contractAddress, 'receipt has contractAddress');
  token = r.contractAddress;
  const code = await pub.getCode({ address: token });
  assert.ok(code && code.length > 100, 'code deployed');
});

await test('readContract balanceOf(deployer) == supply, name()', async () => {
  assert.equal(await pub.readContract({ address: token, abi, functionName: 'balanceOf', args: [account.address] }), SUPPLY);
  assert.equal(await pub.readContract({ address: token, abi, functionName: 'name' }), 'E2E Token');
});

await test('writeContract transfer, receipt success with one Transfer log', async () => {
  const hash = await wallet.writeContract({ address: token, abi, functionName: 'transfer', args: [OTHER, 777n] });
  transferReceipt = await wait(hash);
  assert.equal(transferReceipt.status, 'success');
  assert.equal(transferReceipt.logs.length, 1);
  assert.equal(transferReceipt.logs[0].address.toLowerCase(), token.toLowerCase());
  assert.equal(await pub.readContract({ address: token, abi, functionName: 'balanceOf', args: [OTHER] }) >= 777n, true);
});

await test('debug_traceTransaction with callTracer: the transfer call and its Transfer log', async () => {
  const trace = await pub.request({
    method: 'debug_traceTransaction',
    params: [transferReceipt.transactionHash, { tracer: 'callTracer', tracerConfig: { withLog: true } }],
  });
  assert.equal(trace.type, 'CALL');
  assert.equal(trace.from.toLowerCase(), account.address.toLowerCase());
  assert.equal(trace.to.toLowerCase(), token.toLowerCase());
  assert.equal(BigInt(trace.gasUsed), transferReceipt.gasUsed);
  assert.equal(trace.logs.length, 1);
  assert.equal(trace.logs[0].topics[0], transferReceipt.logs[0].topics[0]);
});

await test('getTransaction / getTransactionReceipt agree with the sent tx', async () => {
  const tx = await pub.getTransaction({ hash: transferReceipt.transactionHash });
  assert.equal(tx.from.toLowerCase(), account.address.toLowerCase());
  assert.equal(tx.blockNumber, transferReceipt.blockNumber);
  const r = await pub.getTransactionReceipt({ hash: transferReceipt.transactionHash });
  assert.equal(r.blockHash, transferReceipt.blockHash);
});

await test('sendTransaction ETH transfer moves exactly the value', async () => {
  const before = await pub.getBalance({ address: OTHER });
  const hash = await wallet.sendTransaction({ to: OTHER, value: 123456789n });
  const r = await wait(hash);
  assert.equal(r.status, 'success');
  assert.equal(r.gasUsed, 21000n);
  const after = await pub.getBalance({ address: OTHER, blockNumber: r.blockNumber });
  assert.equal(after - before, 123456789n);
});

await test('getLogs with event filter (address + indexed to) finds the transfer', async () => {
  const bn = transferReceipt.blockNumber;
  const logs = await pub.getLogs({ address: token, event: transferEvent, args: { to: OTHER }, fromBlock: bn, toBlock: bn });
  assert.equal(logs.length, 1);
  assert.equal(logs[0].args.value, 777n);
  assert.equal(logs[0].args.from.toLowerCase(), account.address.toLowerCase());
  assert.equal(logs[0].transactionHash, transferReceipt.transactionHash);
  const none = await pub.getLogs({ address: token, event: transferEvent, args: { to: account.address }, fromBlock: bn, toBlock: bn });
  assert.equal(none.length, 0, 'non-matching topic filter returns nothing');
  const ranged = await pub.getContractEvents({ address: token, abi, eventName: 'Transfer', fromBlock: 0n, toBlock: 'latest' });
  assert.ok(ranged.length >= 2, 'mint + transfer over the full range');
});

await test('getBlock latest and pending', async () => {
  const latest = await pub.getBlock({ blockTag: 'latest' });
  assert.ok(latest.number >= transferReceipt.blockNumber);
  assert.match(latest.hash, /^0x[0-9a-f]{64}$/);
  assert.ok(latest.timestamp > 0n);
  const byNum = await pub.getBlock({ blockNumber: transferReceipt.blockNumber, includeTransactions: true });
  assert.ok(byNum.transactions.some((t) => t.hash === transferReceipt.transactionHash));
  const pending = await pub.getBlock({ blockTag: 'pending' });
  assert.ok(pending, 'pending block returned');
  if (pending.number !== null) assert.ok(pending.number >= latest.number);
});

await test('estimateGas: ETH transfer == 21000, token transfer in (21000, 200000)', async () => {
  assert.equal(await pub.estimateGas({ account: account.address, to: OTHER, value: 1n }), 21000n);
  const g = await pub.estimateContractGas({ account: account.address, address: token, abi, functionName: 'transfer', args: [OTHER, 1n] });
  assert.ok(g > 21000n && g < 200000n, `got ${g}`);
});

await test('revert reason "nope" surfaces as ContractFunctionRevertedError', async () => {
  let err;
  try { await pub.simulateContract({ account: account.address, address: token, abi, functionName: 'fail' }); } catch (e) { err = e; }
  assert.ok(err instanceof BaseError, 'simulate must throw');
  const rev = err.walk((e) => e instanceof ContractFunctionRevertedError);
  assert.ok(rev, `not a ContractFunctionRevertedError: ${err.shortMessage}`);
  assert.equal(rev.reason, 'nope');
});

await test('getFeeHistory(4 blocks, [25,75]) is well-formed', async () => {
  const fh = await pub.getFeeHistory({ blockCount: 4, rewardPercentiles: [25, 75], blockTag: 'latest' });
  assert.equal(typeof fh.oldestBlock, 'bigint');
  assert.ok(fh.gasUsedRatio.length >= 1 && fh.gasUsedRatio.length <= 4);
  assert.equal(fh.baseFeePerGas.length, fh.gasUsedRatio.length + 1);
  assert.equal(fh.reward.length, fh.gasUsedRatio.length);
  for (const r of fh.reward) assert.equal(r.length, 2);
  const fees = await pub.estimateFeesPerGas();
  assert.equal(typeof fees.maxFeePerGas, 'bigint');
});

// ---- Karma-aware fees: l2_estimateGas / linea_estimateGas ----
// The fields of an estimate build the transaction: gas = gasLimit, maxPriorityFeePerGas =
// priorityFeePerGas, maxFeePerGas = 2 x baseFeePerGas + priorityFeePerGas.
const GWEI12 = 12_000_000_000n;
const NO_KARMA = privateKeyToAccount(accounts[9].privateKey);   // always premium
const ENTRY = privateKeyToAccount(accounts[8].privateKey);      // entry tier: 2 free a day
const l2Estimate = async (method, call) => {
  const r = await rpc(method, [call]);
  assert.ok(!r.error, `${method}: ${JSON.stringify(r.error)}`);
  return r.result;
};
const feesOf = (e) => ({
  gas: BigInt(e.gasLimit),
  maxPriorityFeePerGas: BigInt(e.priorityFeePerGas),
  maxFeePerGas: 2n * BigInt(e.baseFeePerGas) + BigInt(e.priorityFeePerGas),
});
// A chain whose fee estimator asks the node's linea_estimateGas, as viem's Linea chains do,
// with this network's maxFee rule.
const karmaChain = defineChain({
  ...chain,
  fees: {
    async estimateFeesPerGas({ client, request }) {
      const from = request?.account?.address ?? request?.account;
      const e = await client.request({
        method: 'linea_estimateGas',
        params: [{ from, to: request?.to, value: request?.value != null ? `0x${request.value.toString(16)}` : undefined, data: request?.data }],
      });
      const { maxFeePerGas, maxPriorityFeePerGas } = feesOf(e);
      return { maxFeePerGas, maxPriorityFeePerGas };
    },
  },
});
const karmaWallet = (acct) => createWalletClient({ account: acct, chain: karmaChain, transport: http(HTTP_URL) });

for (const method of ['l2_estimateGas', 'linea_estimateGas']) {
  await test(`${method} returns {gasLimit, baseFeePerGas, priorityFeePerGas}, gasLimit == eth_estimateGas`, async () => {
    const call = { from: account.address, to: OTHER, value: '0x1' };
    const e = await l2Estimate(method, call);
    for (const v of [e.gasLimit, e.baseFeePerGas, e.priorityFeePerGas]) assert.match(v, /^0x[0-9a-f]+$/);
    const eth = await rpc('eth_estimateGas', [call]);
    assert.equal(BigInt(e.gasLimit), BigInt(eth.result));
    assert.equal(BigInt(e.priorityFeePerGas), 0n, 'account 2 holds Karma: gasless');
  });
}

await test('l2_estimateGas == linea_estimateGas; ERC-20 gasLimit == eth_estimateGas; missing from is -32602', async () => {
  const data = encodeFunctionData({ abi, functionName: 'transfer', args: [OTHER, 1n] });
  const call = { from: account.address, to: token, data };
  const [a, b, eth] = await Promise.all([l2Estimate('l2_estimateGas', call), l2Estimate('linea_estimateGas', call), rpc('eth_estimateGas', [call])]);
  assert.deepEqual(a, b);
  assert.equal(BigInt(a.gasLimit), BigInt(eth.result));
  const missing = await rpc('l2_estimateGas', [{ to: OTHER }]);
  assert.equal(missing.error?.code, -32602);
  assert.match(missing.error.message, /from is required/);
});

await test('gasless transfer through a chain whose fee estimator calls linea_estimateGas', async () => {
  const hash = await karmaWallet(account).sendTransaction({ to: OTHER, value: 3n });
  const r = await wait(hash);
  assert.equal(r.status, 'success');
  assert.equal(r.effectiveGasPrice, 0n);
});

await test('premium transfer from a sender without Karma through the same chain', async () => {
  const status = await rpc('l2_getKarmaStatus', [NO_KARMA.address]);
  assert.equal(status.result.feeState, 'premium');
  assert.equal(status.result.tier.name, 'none');
  const e = await l2Estimate('linea_estimateGas', { from: NO_KARMA.address, to: OTHER, value: '0x1' });
  assert.ok(BigInt(e.priorityFeePerGas) >= GWEI12, JSON.stringify(e));
  const hash = await karmaWallet(NO_KARMA).sendTransaction({ to: OTHER, value: 1n, gas: BigInt(e.gasLimit) });
  const r = await wait(hash);
  assert.equal(r.status, 'success');
  assert.ok(r.effectiveGasPrice >= GWEI12);
});

await test('entry tier: 2 free, then premium estimate and a clear refusal, premium buys bonus quota', async () => {
  const w = createWalletClient({ account: ENTRY, chain, transport: http(HTTP_URL) });
  const call = { from: ENTRY.address, to: OTHER, value: '0x1' };
  let s = (await rpc('l2_getKarmaStatus', [ENTRY.address])).result;
  // Quotas are per UTC day: a run that would cross midnight starts after it instead.
  const left = Number(BigInt(s.epochEndsAt)) - Date.now() / 1000;
  if (left < 60) {
    await new Promise((done) => setTimeout(done, (left + 5) * 1000));
    s = (await rpc('l2_getKarmaStatus', [ENTRY.address])).result;
  }
  assert.equal(s.tier.name, 'entry');
  assert.equal(s.feeState, 'gasless');
  for (let i = 0; i < 2; i++) {
    const e = await l2Estimate('l2_estimateGas', call);
    assert.equal(BigInt(e.priorityFeePerGas), 0n);
    const r = await wait(await w.sendTransaction({ to: OTHER, value: 1n, ...feesOf(e) }));
    assert.equal(r.status, 'success');
  }
  const e = await l2Estimate('l2_estimateGas', call);
  assert.ok(BigInt(e.priorityFeePerGas) >= GWEI12, 'premium after the quota');
  const nonce = await pub.getTransactionCount({ address: ENTRY.address, blockTag: 'pending' });
  const free = await ENTRY.signTransaction({ chainId, type: 'eip1559', to: OTHER, value: 1n, nonce, gas: 21000n, maxFeePerGas: 0n, maxPriorityFeePerGas: 0n });
  const refused = await rpc('eth_sendRawTransaction', [free]);
  assert.equal(refused.error?.code, -32000);
  assert.match(refused.error.message, /Free transaction limit reached/);
  const r = await wait(await w.sendTransaction({ to: OTHER, value: 1n, ...feesOf(e) }));
  assert.equal(r.status, 'success');
  s = (await rpc('l2_getKarmaStatus', [ENTRY.address])).result;
  assert.equal(s.denied, false);
  assert.equal(BigInt(s.remaining), 2n, 'one tier of bonus quota');
  assert.equal(BigInt((await l2Estimate('l2_estimateGas', call)).priorityFeePerGas), 0n);
});

// ---- WebSocket transport ----
const ws = createPublicClient({ chain, transport: webSocket(WS_URL, { timeout: WS_TIMEOUT }) });
// Produces blocks on nodes that only mine on transactions (anvil automine, --block-time 0);
// harmless on interval-mining nodes. Bounded: at most `max` txs, one per `everyMs`.
async function nudgeUntil(done, { max = 10, everyMs = 1500 } = {}) {
  const deadline = Date.now() + WS_TIMEOUT;
  let sent = 0;
  while (!done() && Date.now() < deadline) {
    await sleep(everyMs);
    if (!done() && sent < max) { sent++; await wallet.sendTransaction({ to: OTHER, value: 1n }).catch(() => {}); }
  }
}

await test('WS: watchBlocks receives >= 2 new consecutive blocks', async () => {
  const seen = [];
  let errored;
  const start = await ws.getBlockNumber({ cacheTime: 0 });
  const unwatch = ws.watchBlocks({ onBlock: (b) => seen.push(b), onError: (e) => { errored = e; } });
  try {
    await nudgeUntil(() => seen.length >= 2 || errored);
  } finally { unwatch(); }
  if (errored) throw errored;
  assert.ok(seen.length >= 2, `only ${seen.length} blocks in ${WS_TIMEOUT} ms`);
  assert.ok(seen[0].number > start, 'blocks are new');
  assert.equal(seen[1].number, seen[0].number + 1n, 'consecutive');
  assert.equal(seen[1].parentHash, seen[0].hash, 'parentHash links');
});

await test('WS: watchContractEvent gets a Transfer sent after subscribing; unwatch stops delivery', async () => {
  const got = [];
  let errored;
  const unwatch = ws.watchContractEvent({
    address: token, abi, eventName: 'Transfer', args: { to: OTHER },
    onLogs: (logs) => got.push(...logs), onError: (e) => { errored = e; },
  });
  await sleep(500); // let eth_subscribe land
  const hash = await wallet.writeContract({ address: token, abi, functionName: 'transfer', args: [OTHER, 4242n] });
  await wait(hash);
  const deadline = Date.now() + WS_TIMEOUT;
  while (!got.some((l) => l.transactionHash === hash) && !errored && Date.now() < deadline) await sleep(100);
  unwatch();
  if (errored) throw errored;
  const log = got.find((l) => l.transactionHash === hash);
  assert.ok(log, `no Transfer log for ${hash} within ${WS_TIMEOUT} ms (got ${got.length})`);
  assert.equal(log.args.value, 4242n);
  // after unwatch no further deliveries
  const count = got.length;
  await sleep(300);
  const h2 = await wallet.writeContract({ address: token, abi, functionName: 'transfer', args: [OTHER, 1n] });
  await wait(h2);
  await sleep(1000);
  assert.equal(got.length, count, 'no events after unwatch');
});

await test('WS: plain request/response over the socket (eth_chainId, eth_blockNumber)', async () => {
  assert.equal(await ws.getChainId(), chainId);
  assert.equal(typeof (await ws.getBlockNumber({ cacheTime: 0 })), 'bigint');
});

const ok = finish();
process.exit(ok ? 0 : 1);
