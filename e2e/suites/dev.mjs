// Dev-node suite: what anvil and geth --dev users do with their tools' defaults, against an
// l2node --dev sequencer (with DEV enabled) and, when E2E_FOLLOWER_URL is set, a follower that
// must end on the same head: cast send --unlocked, a contract deployed through ethers'
// provider.getSigner(), cast rpc evm_mine / evm_setNextBlockTimestamp, viem's simulateCalls
// (eth_simulateV1 on an Osaka chain, calls without gas) and sendRawTransactionSync (EIP-7966),
// and the clear refusal of a state cheat (anvil_setBalance).
// Usage: node suites/dev.mjs HTTP_URL
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { createPublicClient, createWalletClient, defineChain, encodeDeployData, http, parseEther } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { ContractFactory, JsonRpcProvider, verifyTypedData } from 'ethers';
import { makeHarness, rawRpc, sleep } from '../lib/harness.mjs';

const [HTTP_URL] = process.argv.slice(2);
if (!HTTP_URL) { console.error('usage: dev.mjs HTTP_URL'); process.exit(2); }
const FOLLOWER_URL = process.env.E2E_FOLLOWER_URL;
const TX_TIMEOUT = Number(process.env.E2E_TX_TIMEOUT || 60) * 1000;
const POLL = Number(process.env.E2E_POLL_MS || 250);
const here = new URL('..', import.meta.url);
const CAST = new URL('node_modules/.bin/cast', here).pathname;
const accounts = JSON.parse(readFileSync(new URL('lib/accounts.json', here)));
const { abi, bytecode } = JSON.parse(readFileSync(new URL('build/Token.json', here)));
// The dev chain's premium threshold: 12 gwei; below it a transaction is gasless.
const THRESHOLD = 12_000_000_000n;

const { test, skip, finish } = makeHarness('dev');
console.log(`== dev suite against ${HTTP_URL}${FOLLOWER_URL ? ` (follower ${FOLLOWER_URL})` : ''}`);
const rpc = rawRpc(HTTP_URL);
const cast = (...args) => execFileSync(CAST, [...args, '--rpc-url', HTTP_URL], { encoding: 'utf8', timeout: TX_TIMEOUT }).trim();

const chainId = Number((await rpc('eth_chainId')).result);
const chain = defineChain({
  id: chainId, name: 'e2e', nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
  rpcUrls: { default: { http: [HTTP_URL] } },
});
const pub = createPublicClient({ chain, pollingInterval: POLL, transport: http(HTTP_URL) });

const unlocked = (await rpc('eth_accounts')).result || [];
if ((await rpc('evm_mine', [])).error?.code === -32601) {
  skip('every dev check', 'the node does not serve the DEV namespace (start it with --dev)');
  process.exit(finish() ? 0 : 1);
}

await test('eth_accounts lists the unlocked dev accounts', async () => {
  assert.equal(unlocked.length, 10);
  assert.equal(unlocked[0].toLowerCase(), accounts[0].address.toLowerCase());
});

await test('cast send --unlocked from a Karma holder is mined on the gasless path', async () => {
  const out = cast('send', '--unlocked', '--from', accounts[3].address, accounts[4].address, '--value', '1', '--json');
  const receipt = JSON.parse(out);
  assert.equal(receipt.status, '0x1');
  assert.ok(BigInt(receipt.effectiveGasPrice) < THRESHOLD, `effectiveGasPrice ${receipt.effectiveGasPrice}`);
});

await test('eth_sendTransaction without fees or nonce is filled on the gasless path', async () => {
  const res = await rpc('eth_sendTransaction', [{ from: accounts[3].address, to: accounts[4].address, value: '0x2' }]);
  assert.ok(res.result, JSON.stringify(res.error));
  const receipt = await pub.waitForTransactionReceipt({ hash: res.result, timeout: TX_TIMEOUT, pollingInterval: POLL });
  assert.equal(receipt.status, 'success');
  assert.ok(receipt.effectiveGasPrice < THRESHOLD, `effectiveGasPrice ${receipt.effectiveGasPrice}`);
});

await test('ethers provider.getSigner() deploys a contract', async () => {
  const provider = new JsonRpcProvider(HTTP_URL, undefined, { pollingInterval: POLL });
  const signer = await provider.getSigner(5);
  assert.equal((await signer.getAddress()).toLowerCase(), accounts[5].address.toLowerCase());
  const contract = await new ContractFactory(abi, bytecode, signer).deploy(1000n);
  await contract.waitForDeployment();
  assert.equal(await contract.balanceOf(accounts[5].address), 1000n);
  // EIP-712 through the same signer: the node signs, ethers recovers the account.
  const domain = { name: 'e2e', version: '1', chainId, verifyingContract: await contract.getAddress() };
  const types = { Mail: [{ name: 'to', type: 'address' }, { name: 'amount', type: 'uint256' }] };
  const value = { to: accounts[6].address, amount: 7n };
  const signature = await signer.signTypedData(domain, types, value);
  assert.equal(verifyTypedData(domain, types, value, signature).toLowerCase(), accounts[5].address.toLowerCase());
  provider.destroy();
});

await test('cast rpc evm_setNextBlockTimestamp then evm_mine seals a block at that time', async () => {
  const head = await pub.getBlock();
  const at = Number(head.timestamp) + 1000;
  assert.equal(cast('rpc', 'evm_setNextBlockTimestamp', String(at)), 'null');
  assert.equal(cast('rpc', 'evm_mine'), '"0x0"');
  const mined = await pub.getBlock();
  assert.ok(mined.number > head.number);
  // The block stamped `at` is the first one after the call (a periodic block may follow it).
  const stamped = await pub.getBlock({ blockNumber: head.number + 1n });
  assert.equal(Number(stamped.timestamp), at);
  const late = await rpc('evm_setNextBlockTimestamp', [at]);
  assert.equal(late.error?.code, -32602);
  assert.match(late.error.message, /lower than or equal to previous block's timestamp/);
});

await test('anvil_setBalance is refused with what to use instead', async () => {
  const res = await rpc('anvil_setBalance', [accounts[1].address, '0x1']);
  assert.equal(res.error?.code, -32601);
  assert.match(res.error.message, /outside a block/);
  assert.match(res.error.message, /eth_sendTransaction/);
});

await test('viem simulateCalls (eth_simulateV1) runs calls without gas on an Osaka chain', async () => {
  const account = accounts[2].address;
  const { results } = await pub.simulateCalls({
    account,
    calls: [
      { to: accounts[1].address, value: parseEther('1') },
      { data: encodeDeployData({ abi, bytecode, args: [5n] }) },
    ],
  });
  assert.equal(results.length, 2);
  for (const r of results) assert.equal(r.status, 'success', JSON.stringify(r.error));
  const config = (await rpc('eth_config')).result;
  assert.ok(config?.current?.activationTime !== undefined, JSON.stringify(config));
});

await test('viem sendRawTransactionSync answers the receipt (EIP-7966)', async () => {
  const account = privateKeyToAccount(accounts[7].privateKey);
  const wallet = createWalletClient({ account, chain, transport: http(HTTP_URL) });
  const request = await wallet.prepareTransactionRequest({ to: accounts[1].address, value: 3n });
  const serializedTransaction = await wallet.signTransaction(request);
  const receipt = await pub.sendRawTransactionSync({ serializedTransaction, timeout: 30_000 });
  assert.equal(receipt.status, 'success');
  assert.ok(receipt.blockNumber > 0n);
});

await test('eth_getStorageValues, eth_baseFee and eth_capabilities answer', async () => {
  const token = (await rpc('eth_getStorageValues', [{ [accounts[0].address]: ['0x0', '0x1'] }])).result;
  assert.deepEqual(Object.values(token)[0].length, 2);
  assert.equal((await rpc('eth_baseFee')).result, '0x0');
  const caps = (await rpc('eth_capabilities')).result;
  assert.equal(caps.state.disabled, false);
});

if (FOLLOWER_URL) {
  await test('the follower ends on the sequencer\'s head', async () => {
    const follower = rawRpc(FOLLOWER_URL);
    const target = await pub.getBlock();
    const deadline = Date.now() + TX_TIMEOUT;
    for (;;) {
      const got = (await follower('eth_getBlockByNumber', [`0x${target.number.toString(16)}`, false])).result;
      if (got) { assert.equal(got.hash, target.hash); break; }
      if (Date.now() > deadline) throw new Error(`follower never reached block ${target.number}`);
      await sleep(POLL);
    }
  });
} else {
  skip('the follower ends on the sequencer\'s head', 'E2E_FOLLOWER_URL is not set');
}

process.exit(finish() ? 0 : 1);
