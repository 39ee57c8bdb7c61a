// Writes one JSON-RPC request body per benchmark scenario for a node (from its setup state)
// and checks each once against the node, so a scenario that errors is never timed.
//   node bench/bodies.mjs URL STATE_FILE OUT_DIR     (prints the scenario names that are OK)
// OUT_DIR/preflight.json records each scenario's outcome: "ok", "unsupported" (the node
// answers "method not found", e.g. anvil for l2_estimateGas: skipped, not a failure) or
// "failed", with the response (run.sh and estimate.sh read it).
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';

const [URL_, STATE, OUT] = process.argv.slice(2);
const s = JSON.parse(readFileSync(STATE));
const accounts = JSON.parse(readFileSync(new URL('../lib/accounts.json', import.meta.url)));
const hex = (n) => '0x' + n.toString(16);
const req = (method, params, id = 1) => ({ jsonrpc: '2.0', id, method, params });
const balAddrs = [...accounts.map((a) => a.address), ...s.holders].slice(0, 100);
while (balAddrs.length < 100) balAddrs.push('0x' + (0x20000 + balAddrs.length).toString(16).padStart(40, '0'));

// A 1-wei ETH transfer from dev account `i`.
const transfer = (i) => ({ from: accounts[i].address, to: accounts[1].address, value: '0x1' });
// Token.transfer(holder, 1) from the account that deployed the token and holds the supply.
const erc20 = { from: s.from, to: s.token, data: '0xa9059cbb' + s.holder.slice(2).padStart(64, '0') + '1'.padStart(64, '0') };

const scenarios = {
  eth_blockNumber: req('eth_blockNumber', []),
  eth_call_balanceOf: req('eth_call', [{ to: s.token, data: '0x70a08231' + s.holder.slice(2).padStart(64, '0') }, 'latest']),
  eth_estimateGas_transfer: req('eth_estimateGas', [transfer(0)]),
  // Karma-aware estimates (l2node only): account 0 is at the top Karma tier (gasless), account 9
  // holds no Karma (premium: the fee formula over the compressed transaction).
  l2_estimateGas_transfer: req('l2_estimateGas', [transfer(0)]),
  l2_estimateGas_premium_transfer: req('l2_estimateGas', [transfer(9)]),
  l2_estimateGas_erc20: req('l2_estimateGas', [erc20]),
  eth_estimateGas_erc20: req('eth_estimateGas', [erc20]),
  eth_getBalance: req('eth_getBalance', [accounts[1].address, 'latest']),
  batch10_eth_getBalance: balAddrs.slice(0, 10).map((a, i) => req('eth_getBalance', [a, 'latest'], i + 1)),
  batch100_eth_getBalance: balAddrs.map((a, i) => req('eth_getBalance', [a, 'latest'], i + 1)),
  eth_getLogs_10k_blocks: req('eth_getLogs', [{ address: s.token, fromBlock: hex(s.fromBlock), toBlock: hex(s.toBlock) }]),
  // geth's callTracer over an ERC-20 transfer mined at the end of the setup (l2node: with
  // DEBUG in --rpc-http-api).
  debug_traceTransaction_callTracer_erc20: req('debug_traceTransaction', [s.recentTransferTx, { tracer: 'callTracer' }]),
};
const erc20Gas = (g) => g > 21000n && g < 100000n;
const l2 = (r, gas, fee) => BigInt(r.result.baseFeePerGas) >= 0n && gas(BigInt(r.result.gasLimit)) && fee(BigInt(r.result.priorityFeePerGas));
const expect = {
  eth_call_balanceOf: (r) => BigInt(r.result) === 1000n,
  eth_estimateGas_transfer: (r) => BigInt(r.result) === 21000n,
  l2_estimateGas_transfer: (r) => l2(r, (g) => g === 21000n, (fee) => fee === 0n),
  l2_estimateGas_premium_transfer: (r) => l2(r, (g) => g === 21000n, (fee) => fee > 0n),
  l2_estimateGas_erc20: (r) => l2(r, erc20Gas, () => true),
  eth_estimateGas_erc20: (r) => erc20Gas(BigInt(r.result)),
  batch10_eth_getBalance: (r) => Array.isArray(r) && r.length === 10 && r.every((x) => x.result !== undefined),
  batch100_eth_getBalance: (r) => Array.isArray(r) && r.length === 100 && r.every((x) => x.result !== undefined),
  debug_traceTransaction_callTracer_erc20: (r) =>
    r.result.type === 'CALL' && r.result.to.toLowerCase() === s.token.toLowerCase() && r.result.input.startsWith('0xa9059cbb'),
  eth_getLogs_10k_blocks: (r) => Array.isArray(r.result) && r.result.length === s.logsInRange && r.result.length > s.transfers,
};

mkdirSync(OUT, { recursive: true });
const ok = [];
const preflight = {};
for (const [name, body] of Object.entries(scenarios)) {
  writeFileSync(`${OUT}/${name}.json`, JSON.stringify(body));
  try {
    const res = await fetch(URL_, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body),
      signal: AbortSignal.timeout(30_000) });
    const r = await res.json();
    let good = false;
    try {
      good = Array.isArray(body) ? expect[name](r) : (r.error === undefined && (expect[name] ? expect[name](r) : r.result !== undefined));
    } catch { /* a malformed result: not good */ }
    if (good) {
      ok.push(name);
      preflight[name] = { status: 'ok', response: r };
    } else if (!Array.isArray(r) && r.error?.code === -32601) {
      preflight[name] = { status: 'unsupported', response: r };
      console.error(`preflight ${name} @ ${URL_}: ${body.method} not supported by this node, skipped`);
    } else {
      preflight[name] = { status: 'failed', response: r };
      console.error(`preflight ${name} @ ${URL_}: unexpected response ${JSON.stringify(r).slice(0, 300)}`);
    }
  } catch (e) {
    preflight[name] = { status: 'failed', error: e.message };
    console.error(`preflight ${name} @ ${URL_}: ${e.message}`);
  }
}
writeFileSync(`${OUT}/preflight.json`, JSON.stringify(preflight, (k, v) => (k === 'response' && Array.isArray(v) ? `[${v.length} results]` : v), 2));
console.log(ok.join(' '));
