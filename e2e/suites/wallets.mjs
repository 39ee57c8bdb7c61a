// Wallet defaults suite: after a run of blocks in which most transactions paid the premium, the
// default fee flows of cast (alloy's estimator), viem, ethers v6, web3.py and a MetaMask-style
// estimate (eth_feeHistory over the last 5 blocks at percentiles 10/20/30, averaged) keep a
// Karma holder with quota on the gasless path; a sender without Karma using the same defaults is
// refused with a message that says how to pay the premium, never charged it silently.
// Usage: node suites/wallets.mjs HTTP_URL. Needs a Karma chain (l2node --dev).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { createPublicClient, createWalletClient, defineChain, http } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { JsonRpcProvider, Wallet } from 'ethers';
import { makeHarness, rawRpc } from '../lib/harness.mjs';

const [HTTP_URL] = process.argv.slice(2);
if (!HTTP_URL) { console.error('usage: wallets.mjs HTTP_URL'); process.exit(2); }
const TX_TIMEOUT = Number(process.env.E2E_TX_TIMEOUT || 60) * 1000;
const POLL = Number(process.env.E2E_POLL_MS || 250);
const here = new URL('..', import.meta.url);
const accounts = JSON.parse(readFileSync(new URL('lib/accounts.json', here)));
const TO = accounts[1].address;
// The dev chain's premium threshold: 12 gwei.
const THRESHOLD = 12_000_000_000n;

const { test, skip, finish } = makeHarness('wallets');
console.log(`== wallets suite against ${HTTP_URL}`);

// Raw JSON-RPC (to probe optional methods and check answers independently of the client).
const rpc = rawRpc(HTTP_URL);

const chainId = Number((await rpc('eth_chainId')).result);
const chain = defineChain({
  id: chainId, name: 'e2e', nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
  rpcUrls: { default: { http: [HTTP_URL] } },
});
const pub = createPublicClient({ chain, pollingInterval: POLL, transport: http(HTTP_URL) });
const wait = (hash) => pub.waitForTransactionReceipt({ hash, timeout: TX_TIMEOUT, pollingInterval: POLL });
const status = async (addr) => (await rpc('l2_getKarmaStatus', [addr])).result;

/// A receipt on the gasless path: mined, effective price below the threshold, one unit of the
/// sender's quota used (`before`: its Karma status before sending). Quotas are per UTC day: if
/// the day changed meanwhile, the transaction used one unit of the old day's quota or of the
/// new one's.
async function assertGasless(receipt, from, before) {
  assert.equal(receipt.status, 'success');
  assert.ok(receipt.effectiveGasPrice < THRESHOLD, `effectiveGasPrice ${receipt.effectiveGasPrice} is premium`);
  const after = await status(from);
  if (after.epoch !== before.epoch) {
    assert.ok(BigInt(after.used) <= 1n, `quota used ${after.used} in the new day`);
    return;
  }
  assert.equal(BigInt(after.used), BigInt(before.used) + 1n, `quota used ${before.used} -> ${after.used}`);
}

const karma = (await rpc('l2_getKarmaStatus', [accounts[0].address])).result;
if (!karma) {
  skip('every default flow', 'the node has no Karma (l2_getKarmaStatus answered nothing)');
  process.exit(finish() ? 0 : 1);
}

// A premium-heavy run: account 9 (no Karma) pays 20 gwei tips in several blocks, so every
// recent block's samples are premium unless the node leaves them out.
await test('a run of premium blocks', async () => {
  const payer = createWalletClient({ account: privateKeyToAccount(accounts[9].privateKey), chain, transport: http(HTTP_URL) });
  let last;
  for (let i = 0; i < 6; i++) {
    const hashes = [];
    for (let j = 0; j < 3; j++) {
      hashes.push(await payer.sendTransaction({
        to: TO, value: 1n, gas: 21000n, maxFeePerGas: 20_000_000_000n, maxPriorityFeePerGas: 20_000_000_000n,
      }));
    }
    for (const h of hashes) last = await wait(h);
    assert.ok(last.effectiveGasPrice >= THRESHOLD);
  }
  const raw = await rpc('eth_feeHistory', ['0x5', 'latest', [10, 20, 30]]);
  const premiumBlocks = raw.result.reward.filter((r) => r.some((x) => BigInt(x) >= THRESHOLD)).length;
  console.log(`    feeHistory rewards after the run: ${JSON.stringify(raw.result.reward)} (${premiumBlocks} premium)`);
});

await test('cast send with its defaults stays gasless', async () => {
  const from = accounts[4];
  const before = await status(from.address);
  const cast = new URL('node_modules/.bin/cast', here).pathname;
  const out = execFileSync(cast, ['send', '--json', '--rpc-url', HTTP_URL, '--private-key', from.privateKey, '--value', '1', TO],
    { encoding: 'utf8', timeout: TX_TIMEOUT });
  const r = JSON.parse(out);
  await assertGasless({ status: r.status === '0x1' ? 'success' : 'reverted', effectiveGasPrice: BigInt(r.effectiveGasPrice) }, from.address, before);
});

await test('viem sendTransaction with its defaults stays gasless', async () => {
  const from = accounts[5];
  const before = await status(from.address);
  const wallet = createWalletClient({ account: privateKeyToAccount(from.privateKey), chain, transport: http(HTTP_URL) });
  await assertGasless(await wait(await wallet.sendTransaction({ to: TO, value: 1n })), from.address, before);
});

await test('ethers v6 sendTransaction with its defaults stays gasless', async () => {
  const from = accounts[6];
  const before = await status(from.address);
  const wallet = new Wallet(from.privateKey, new JsonRpcProvider(HTTP_URL, undefined, { polling: true, pollingInterval: POLL }));
  const tx = await wallet.sendTransaction({ to: TO, value: 1n });
  const r = await tx.wait(1, TX_TIMEOUT);
  await assertGasless({ status: r.status === 1 ? 'success' : 'reverted', effectiveGasPrice: r.gasPrice }, from.address, before);
});

await test('web3.py send_transaction with its defaults (and the POA middleware) stays gasless', async () => {
  const from = accounts[3];
  const before = await status(from.address);
  const python = new URL('.venv/bin/python', here).pathname;
  const script = `
import sys
from web3 import Web3
from web3.middleware import ExtraDataToPOAMiddleware, SignAndSendRawMiddlewareBuilder
from eth_account import Account
w3 = Web3(Web3.HTTPProvider(sys.argv[1]))
# Clique-sealed blocks carry 97 bytes of extraData: web3.py's documented setting for such chains.
w3.middleware_onion.inject(ExtraDataToPOAMiddleware, layer=0)
acct = Account.from_key(sys.argv[2])
w3.middleware_onion.inject(SignAndSendRawMiddlewareBuilder.build(acct), layer=0)
h = w3.eth.send_transaction({'from': acct.address, 'to': sys.argv[3], 'value': 1})
r = w3.eth.wait_for_transaction_receipt(h, timeout=60)
print(r['status'], r['effectiveGasPrice'])
`;
  const [st, price] = execFileSync(python, ['-c', script, HTTP_URL, from.privateKey, TO], { encoding: 'utf8', timeout: TX_TIMEOUT })
    .trim().split(/\s+/);
  await assertGasless({ status: st === '1' ? 'success' : 'reverted', effectiveGasPrice: BigInt(price) }, from.address, before);
});

await test('a MetaMask-style feeHistory estimate stays gasless', async () => {
  const from = accounts[1];
  const before = await status(from.address);
  // MetaMask's medium suggestion: the average of the 20th percentile rewards of the last 5
  // blocks (it asks for 10/20/30), on top of the next base fee.
  const h = (await rpc('eth_feeHistory', ['0x5', 'latest', [10, 20, 30]])).result;
  const rewards = h.reward.map((r) => BigInt(r[1]));
  const tip = rewards.reduce((a, b) => a + b, 0n) / BigInt(rewards.length);
  const base = BigInt(h.baseFeePerGas[h.baseFeePerGas.length - 1]);
  const wallet = createWalletClient({ account: privateKeyToAccount(from.privateKey), chain, transport: http(HTTP_URL) });
  const hash = await wallet.sendTransaction({ to: TO, value: 1n, maxPriorityFeePerGas: tip, maxFeePerGas: 2n * base + tip });
  await assertGasless(await wait(hash), from.address, before);
});

await test('a sender without Karma using the defaults is told how to pay the premium', async () => {
  const wallet = createWalletClient({ account: privateKeyToAccount(accounts[9].privateKey), chain, transport: http(HTTP_URL) });
  const before = await pub.getTransactionCount({ address: accounts[9].address });
  let message = '';
  try {
    await wallet.sendTransaction({ to: TO, value: 1n });
  } catch (e) {
    message = String(e.details || e.shortMessage || e.message);
  }
  assert.match(message, /premium/i, `no refusal naming the premium: ${message}`);
  assert.match(message, /12 gwei/, `the refusal does not say what to pay: ${message}`);
  assert.equal(await pub.getTransactionCount({ address: accounts[9].address }), before, 'something was sent');
});

process.exit(finish() ? 0 : 1);
