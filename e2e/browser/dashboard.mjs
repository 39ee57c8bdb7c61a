// Browser suite: the node's dashboard page in headless Chromium (Debian's `chromium`, driven by
// playwright-core). Usage: node browser/dashboard.mjs HTTP_URL. Screenshots go to
// e2e/browser/artifacts/ (kept as test artifacts, gitignored).
import assert from 'node:assert/strict';
import { mkdirSync, existsSync } from 'node:fs';
import { readFileSync } from 'node:fs';
import { chromium } from 'playwright-core';
import { privateKeyToAccount } from 'viem/accounts';
import { keccak256 } from 'viem';
import { makeHarness } from '../lib/harness.mjs';

const [HTTP_URL] = process.argv.slice(2);
if (!HTTP_URL) { console.error('usage: dashboard.mjs HTTP_URL'); process.exit(2); }
const CHROMIUM = process.env.CHROMIUM || ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find(existsSync);
const ARTIFACTS = new URL('./artifacts/', import.meta.url).pathname;
mkdirSync(ARTIFACTS, { recursive: true });
const KARMA_HOLDER = '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266';   // dev account 0: legendary tier
const NO_KARMA = '0xa0Ee7A142d267C1f36714E4a8F75612F20a79720';       // dev account 9: no Karma

const accounts = JSON.parse(readFileSync(new URL('../lib/accounts.json', import.meta.url)));
const NUDGER = privateKeyToAccount(accounts[5].privateKey);   // regular tier: free transfers
let rpcId = 0;
async function rpc(method, params = []) {
  const r = await fetch(HTTP_URL, { method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: ++rpcId, method, params }) });
  const body = await r.json();
  if (body.error) throw new Error(`${method}: ${body.error.message}`);
  return body.result;
}
// A free transfer, so a node that seals only non-empty blocks makes a new one.
async function nudge() {
  const [chainId, nonce] = await Promise.all([rpc('eth_chainId'), rpc('eth_getTransactionCount', [NUDGER.address, 'pending'])]);
  const raw = await NUDGER.signTransaction({ chainId: Number(chainId), type: 'eip1559', nonce: Number(nonce),
    to: NO_KARMA, value: 1n, gas: 21000n, maxFeePerGas: 0n, maxPriorityFeePerGas: 0n });
  await rpc('eth_sendRawTransaction', [raw]);
}

const { test, finish } = makeHarness('browser');
console.log(`== browser suite against ${HTTP_URL} (chromium: ${CHROMIUM})`);
const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
const page = await browser.newPage({ viewport: { width: 1100, height: 1000 } });
const errors = [];
page.on('pageerror', (e) => errors.push(String(e)));
const shot = (name) => page.screenshot({ path: `${ARTIFACTS}${name}.png`, fullPage: true });

await test('GET / renders the dashboard with no script errors', async () => {
  const res = await page.goto(HTTP_URL, { waitUntil: 'load' });
  assert.equal(res.status(), 200);
  assert.match(res.headers()['content-type'], /text\/html/);
  await page.waitForSelector('#checks li', { timeout: 15000 });
  assert.deepEqual(errors, []);
});

await test('health panel: height grows live, the three checks, the peer check follows net_peerCount', async () => {
  const first = BigInt(await page.textContent('#height'));
  await nudge();
  await page.waitForFunction((n) => BigInt(document.getElementById('height').textContent) > BigInt(n), String(first), { timeout: 20000 });
  assert.match(await page.textContent('#live'), /live|polling/);
  const checks = await page.$$eval('#checks li', (lis) => lis.map((l) => [l.className, l.textContent]));
  assert.equal(checks.length, 3);
  assert.equal(checks[0][0], 'pass', checks[0][1]);
  assert.match(checks[0][1], /block number/);
  assert.deepEqual([checks[1][0], /eth_syncing is false/.test(checks[1][1])], ['pass', true]);
  // A lone node fails the peer check; one with a follower (e2e/ci.sh starts one) passes it.
  const peers = Number(await rpc('net_peerCount'));
  assert.deepEqual([checks[2][0], new RegExp(`net_peerCount is ${peers}`).test(checks[2][1])], [peers > 0 ? 'pass' : 'fail', true]);
  await shot('health');
});

await test('fee panel: a Karma holder sees the free-transaction state and no fee', async () => {
  await page.fill('#from', KARMA_HOLDER);
  await page.fill('#to', NO_KARMA);
  await page.waitForSelector('#quote [data-state="gasless"]', { timeout: 15000 });
  const text = await page.textContent('#quote');
  assert.match(text, /Free transaction/);
  assert.doesNotMatch(text, /gwei|ETH|Premium/);
  assert.match(await page.textContent('#karma'), /legendary/);
  await shot('gasless');
});

await test('fee panel: a sender without Karma sees the premium fee, why, and when the window refreshes', async () => {
  await page.fill('#from', NO_KARMA);
  await page.waitForSelector('#quote [data-state="premium"]', { timeout: 15000 });
  const text = (await page.textContent('#quote')).replace(/\s+/g, ' ');
  assert.match(text, /Premium fee: 12 gwei per gas/);
  assert.match(text, /\d ETH/);
  assert.match(text, /holds no Karma/);
  assert.match(text, /pay it now, or wait until the window refreshes at .+ \(in \d/);
  assert.match(await page.textContent('#karma'), /none/);
  await shot('premium');
});

await test('fee panel re-estimates on every change (a bad address, then a good one again)', async () => {
  await page.fill('#from', '0x1234');
  await page.waitForSelector('#quote .error', { timeout: 5000 });
  await page.fill('#from', KARMA_HOLDER);
  await page.waitForSelector('#quote [data-state="gasless"]', { timeout: 15000 });
  assert.deepEqual(errors, []);
});

await test('fee panel: with only a sender it quotes a plain transfer and says so', async () => {
  await page.fill('#to', '');
  await page.fill('#from', KARMA_HOLDER);
  await page.waitForSelector('#quote [data-plain-transfer]', { timeout: 15000 });
  const text = (await page.textContent('#quote')).replace(/\s+/g, ' ');
  assert.match(text, /plain transfer/);
  assert.match(text, /Gas limit 21,000/);
});

await test('fee panel: a bonus after a premium transaction is shown as free + bonus', async () => {
  // Dev account 8 (entry tier, 2 free a day): two free transfers, then a premium one buys a
  // tier's worth of bonus.
  const entry = privateKeyToAccount(accounts[8].privateKey);
  const chainId = Number(await rpc('eth_chainId'));
  const send = async (tip) => {
    const nonce = Number(await rpc('eth_getTransactionCount', [entry.address, 'pending']));
    const raw = await entry.signTransaction({ chainId, type: 'eip1559', nonce, to: NO_KARMA, value: 1n, gas: 21000n,
      maxFeePerGas: tip, maxPriorityFeePerGas: tip });
    const hash = await rpc('eth_sendRawTransaction', [raw]);
    for (let i = 0; i < 200 && !(await rpc('eth_getTransactionReceipt', [hash])); i++) await new Promise((r) => setTimeout(r, 100));
  };
  let st = await rpc('l2_getKarmaStatus', [entry.address]);
  while (BigInt(st.remaining) > 0n) { await send(0n); st = await rpc('l2_getKarmaStatus', [entry.address]); }
  await send(12_000_000_000n);
  await page.fill('#from', entry.address);
  await page.waitForSelector('#karma [data-bonus]', { timeout: 15000 });
  assert.match((await page.textContent('#karma')).replace(/\s+/g, ' '), /2 free \+ \d+ bonus after your premium transaction/);
  await shot('bonus');
});

await test('chart: the last blocks from the moment the page opens, with axes', async () => {
  const fresh = await browser.newPage({ viewport: { width: 1100, height: 1000 } });
  await fresh.goto(HTTP_URL, { waitUntil: 'load' });
  // Drawn without waiting for a new block: the axis labels name blocks before the page opened.
  const head = BigInt(await rpc('eth_blockNumber'));
  await fresh.waitForFunction(() => {
    const c = document.getElementById('chart');
    const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    for (let i = 3; i < d.length; i += 4) if (d[i] !== 0) return true;
    return false;
  }, null, { timeout: 10000 });
  assert.ok(head > 1n);
  await fresh.screenshot({ path: `${ARTIFACTS}chart.png`, fullPage: true });
  await fresh.close();
});

await test('a transaction that never landed: the dashboard says why', async () => {
  // Account 9 holds no Karma: a free transfer is refused, and the node keeps the record.
  const none = privateKeyToAccount(accounts[9].privateKey);
  const chainId = Number(await rpc('eth_chainId'));
  const nonce = Number(await rpc('eth_getTransactionCount', [none.address, 'pending']));
  const raw = await none.signTransaction({ chainId, type: 'eip1559', nonce, to: KARMA_HOLDER, value: 1n, gas: 21000n,
    maxFeePerGas: 0n, maxPriorityFeePerGas: 0n });
  await assert.rejects(rpc('eth_sendRawTransaction', [raw]), /holds no Karma/);
  await page.fill('#txhash', keccak256(raw));
  await page.waitForSelector('#txstatus [data-tx="excluded"]', { timeout: 10000 });
  const text = (await page.textContent('#txstatus')).replace(/\s+/g, ' ');
  assert.match(text, /Not mined: this node refused it when it was sent/);
  assert.match(text, /holds no Karma/);
  await shot('excluded');
});

await browser.close();
process.exit(finish() ? 0 : 1);
