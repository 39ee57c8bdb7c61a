// The transaction stream of e2e/ha/run.sh, and its receipt check.
//   node ha/stream.mjs send HASHFILE URL[,URL...] [ACCOUNTS]   until SIGTERM / SIGINT
//   node ha/stream.mjs receipts HASHFILE URL[,URL...] [SECONDS]
// send: every HA_TX_INTERVAL_MS (default 500) signs one 1-wei transfer to 0x...dEaD from the
// next dev account of ACCOUNTS (indexes into lib/accounts.json, default "0,2,3"; the first sends
// gasless, maxFeePerGas 0 on its Karma quota, the others premium, 20 gwei tips) and sends it raw
// to the next URL, round-robin. Nonces are kept here: one advances only when a node acknowledged
// the transaction (answered its hash), so a transaction the node refused is signed again the
// next turn, with the same nonce and fields, hence the same bytes and hash (signing is
// deterministic; two different free transactions with one nonce would be an RLN violation). A
// network error (no answer, a timeout, an HTTP error status) is retried on the next URL; an
// "already known" answer, or "nonce too low" after a network error, means a node already has
// these bytes, and counts as acknowledged. Each acknowledgement is one line of HASHFILE:
// "hash account nonce url unix_ms". On SIGTERM it finishes the send under way and prints a
// summary line.
// receipts: polls eth_getTransactionReceipt (batched) for every hash of HASHFILE on the URLs
// until each has a receipt on one of them or SECONDS (default 20) pass; prints how many were
// acknowledged and mined, lists the missing (and any reverted) ones, and exits 1 unless all
// were mined with status 1.
import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import { keccak256 } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';

const [MODE, FILE, URLS, ARG] = process.argv.slice(2);
if (!['send', 'receipts'].includes(MODE) || !FILE || !URLS) {
  console.error('usage: stream.mjs send HASHFILE URL[,URL...] [ACCOUNTS] | receipts HASHFILE URL[,URL...] [SECONDS]');
  process.exit(2);
}
const urls = URLS.split(',').filter(Boolean);
const SINK = '0x000000000000000000000000000000000000dEaD';
const GWEI = 1_000_000_000n;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// One JSON-RPC exchange (a request or a batch). Throws on anything but an HTTP 200 with JSON:
// the caller treats that as a network error.
let reqId = 0;
async function post(url, body, timeoutMs = 3000) {
  const res = await fetch(url, {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body), signal: AbortSignal.timeout(timeoutMs),
  });
  if (!res.ok) throw new Error(`HTTP ${res.status}: ${(await res.text()).trim().slice(0, 200)}`);
  return res.json();
}
const call = (url, method, params) => post(url, { jsonrpc: '2.0', id: ++reqId, method, params });
// A read answered by any URL (tried in turn for up to 30 s).
async function read(method, params) {
  for (let i = 0; ; i++) {
    const url = urls[i % urls.length];
    try {
      const r = await call(url, method, params);
      if (r.error) throw new Error(`${method}: ${r.error.message}`);
      return r.result;
    } catch (e) {
      if (i >= 300) throw new Error(`${method} on ${urls.join(', ')}: ${e.message}`);
      await sleep(100);
    }
  }
}

async function send() {
  const keys = JSON.parse(readFileSync(new URL('../lib/accounts.json', import.meta.url)));
  const interval = Number(process.env.HA_TX_INTERVAL_MS || 500);
  const chainId = Number(await read('eth_chainId', []));
  const senders = [];
  for (const [k, i] of (ARG || '0,2,3').split(',').map(Number).entries()) {
    const account = privateKeyToAccount(keys[i].privateKey);
    const nonce = Number(await read('eth_getTransactionCount', [account.address, 'pending']));
    // uncertain: the hash of a transaction sent without an answer (a network error).
    senders.push({ index: i, account, gasless: k === 0, nonce, uncertain: null });
  }
  const stats = { acked: 0, refused: 0, netErrors: 0, firstRefusal: null };
  let running = true;
  const stop = () => { running = false; };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  console.log(`# stream: chain ${chainId}, ${senders.map((s) => `account ${s.index} ${s.gasless ? 'gasless' : 'premium'} from nonce ${s.nonce}`).join(', ')}; one transfer every ${interval} ms over ${urls.join(', ')}`);

  const ack = (s, hash, url) => {
    appendFileSync(FILE, `${hash} ${s.index} ${s.nonce} ${url} ${Date.now()}\n`);
    stats.acked++;
    s.nonce++;
    s.uncertain = null;
  };
  const refuse = (s, url, message) => {
    stats.refused++;
    stats.firstRefusal ??= `account ${s.index} nonce ${s.nonce} on ${url}: ${message}`;
    console.log(`# refused: account ${s.index} nonce ${s.nonce} on ${url}: ${message}`);
  };
  async function sendOne(s, first) {
    const fee = s.gasless ? 0n : 20n * GWEI;
    const raw = await s.account.signTransaction({
      to: SINK, value: 1n, gas: 21000n, nonce: s.nonce, chainId, type: 'eip1559',
      maxFeePerGas: s.gasless ? 0n : fee + 10n * GWEI, maxPriorityFeePerGas: fee,
    });
    const hash = keccak256(raw);
    for (let attempt = 0; attempt < 2 * urls.length + 2; attempt++) {
      const url = urls[(first + attempt) % urls.length];
      let r;
      try {
        r = await call(url, 'eth_sendRawTransaction', [raw]);
      } catch (e) {
        stats.netErrors++;
        s.uncertain = hash;
        console.log(`# network error: account ${s.index} nonce ${s.nonce} on ${url}: ${e.message}; retrying on the next`);
        if (attempt >= urls.length - 1) await sleep(250);
        continue;
      }
      if (!r.error) {
        if (r.result !== hash) console.log(`# ${url} answered ${r.result} for ${hash}`);
        return ack(s, hash, url);
      }
      const message = String(r.error.message);
      if (/already known/i.test(message) || (s.uncertain === hash && /nonce too low/i.test(message))) {
        return ack(s, hash, url);
      }
      refuse(s, url, message);
      if (/nonce too low/i.test(message)) {
        // Someone else used this nonce: start again from what the node counts.
        s.nonce = Number(await read('eth_getTransactionCount', [s.account.address, 'pending']));
      }
      return undefined;
    }
    return undefined; // no URL answered: the same bytes again next turn
  }

  for (let turn = 0; running; turn++) {
    const started = Date.now();
    await sendOne(senders[turn % senders.length], turn % urls.length);
    await sleep(Math.max(0, interval - (Date.now() - started)));
  }
  console.log(`stream: ${stats.acked} acknowledged, ${stats.refused} refused, ${stats.netErrors} network errors (retried)` +
    (stats.firstRefusal ? `; first refusal: ${stats.firstRefusal}` : ''));
}

async function receipts() {
  const seconds = Number(ARG || 20);
  const lines = existsSync(FILE) ? readFileSync(FILE, 'utf8').split('\n').filter(Boolean) : [];
  const info = new Map(lines.map((l) => { const [hash, account, nonce] = l.split(' '); return [hash, { account, nonce }]; }));
  const all = [...info.keys()];
  let pending = all;
  const reverted = [];
  const deadline = Date.now() + seconds * 1000;
  for (;;) {
    for (const url of urls) {
      const still = [];
      for (let i = 0; i < pending.length; i += 200) {
        const chunk = pending.slice(i, i + 200);
        let res;
        try {
          res = await post(url, chunk.map((h, id) => ({ jsonrpc: '2.0', id, method: 'eth_getTransactionReceipt', params: [h] })), 10_000);
        } catch {
          still.push(...chunk); // this URL did not answer: the others may
          continue;
        }
        if (!Array.isArray(res)) {
          still.push(...chunk); // an error answer to the whole batch: try again
          continue;
        }
        const byId = new Map(res.map((r) => [r.id, r]));
        chunk.forEach((h, id) => {
          const r = byId.get(id);
          if (r && r.result) {
            if (r.result.status !== '0x1') reverted.push(h);
          } else {
            still.push(h);
          }
        });
      }
      pending = still;
    }
    if (!pending.length || Date.now() > deadline) break;
    await sleep(500);
  }
  console.log(`receipts: ${all.length} acknowledged, ${all.length - pending.length} mined, ${pending.length} missing after ${seconds} s at most, ${reverted.length} reverted`);
  for (const h of pending.slice(0, 10)) console.log(`  missing ${h} (account ${info.get(h).account} nonce ${info.get(h).nonce})`);
  for (const h of reverted.slice(0, 10)) console.log(`  reverted ${h} (account ${info.get(h).account} nonce ${info.get(h).nonce})`);
  return all.length > 0 && !pending.length && !reverted.length;
}

if (MODE === 'send') {
  await send();
} else {
  process.exit((await receipts()) ? 0 : 1);
}
