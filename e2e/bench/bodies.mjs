// Writes one JSON-RPC request body per benchmark scenario for a node (from its setup state)
// and checks each once against the node, so a scenario that errors is never timed.
//   node bench/bodies.mjs URL STATE_FILE OUT_DIR     (prints the scenario names that are OK)
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';

const [URL_, STATE, OUT] = process.argv.slice(2);
const s = JSON.parse(readFileSync(STATE));
const accounts = JSON.parse(readFileSync(new URL('../lib/accounts.json', import.meta.url)));
const hex = (n) => '0x' + n.toString(16);
const req = (method, params, id = 1) => ({ jsonrpc: '2.0', id, method, params });
const balAddrs = [...accounts.map((a) => a.address), ...s.holders].slice(0, 100);
while (balAddrs.length < 100) balAddrs.push('0x' + (0x20000 + balAddrs.length).toString(16).padStart(40, '0'));

const scenarios = {
  eth_blockNumber: req('eth_blockNumber', []),
  eth_call_balanceOf: req('eth_call', [{ to: s.token, data: '0x70a08231' + s.holder.slice(2).padStart(64, '0') }, 'latest']),
  eth_estimateGas_transfer: req('eth_estimateGas', [{ from: accounts[0].address, to: accounts[1].address, value: '0x1' }]),
  batch100_eth_getBalance: balAddrs.map((a, i) => req('eth_getBalance', [a, 'latest'], i + 1)),
  eth_getLogs_10k_blocks: req('eth_getLogs', [{ address: s.token, fromBlock: hex(s.fromBlock), toBlock: hex(s.toBlock) }]),
};
const expect = {
  eth_call_balanceOf: (r) => BigInt(r.result) === 1000n,
  eth_estimateGas_transfer: (r) => BigInt(r.result) === 21000n,
  batch100_eth_getBalance: (r) => Array.isArray(r) && r.length === 100 && r.every((x) => x.result !== undefined),
  eth_getLogs_10k_blocks: (r) => Array.isArray(r.result) && r.result.length === s.logsInRange && r.result.length > s.transfers,
};

mkdirSync(OUT, { recursive: true });
const ok = [];
for (const [name, body] of Object.entries(scenarios)) {
  writeFileSync(`${OUT}/${name}.json`, JSON.stringify(body));
  try {
    const res = await fetch(URL_, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body),
      signal: AbortSignal.timeout(30_000) });
    const r = await res.json();
    const good = Array.isArray(body) ? expect[name](r) : (r.error === undefined && (expect[name] ? expect[name](r) : r.result !== undefined));
    if (good) ok.push(name);
    else console.error(`preflight ${name} @ ${URL_}: unexpected response ${JSON.stringify(r).slice(0, 300)}`);
  } catch (e) {
    console.error(`preflight ${name} @ ${URL_}: ${e.message}`);
  }
}
console.log(ok.join(' '));
