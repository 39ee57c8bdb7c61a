// Tiny sequential test harness shared by the node suites: `test(name, fn)` runs one
// async check with a time limit, `skip(name, why)` records a skip, `finish()` prints
// "<suite>: N passed, N failed, N skipped" and writes $E2E_RESULTS/<suite>.counts.
import { writeFileSync } from 'node:fs';

export function makeHarness(suite) {
  let passed = 0, failed = 0, skipped = 0;
  const limitMs = Number(process.env.E2E_TEST_TIMEOUT || 120) * 1000;
  async function test(name, fn) {
    let timer;
    try {
      await Promise.race([
        fn(),
        new Promise((_, rej) => { timer = setTimeout(() => rej(new Error(`timed out after ${limitMs} ms`)), limitMs); }),
      ]);
      passed++;
      console.log(`  ok     ${suite}: ${name}`);
    } catch (e) {
      failed++;
      const msg = String(e && (e.shortMessage || e.message) || e).replace(/\s+/g, ' ').slice(0, 1500);
      console.log(`  FAIL   ${suite}: ${name} -- ${msg}`);
    } finally {
      clearTimeout(timer);
    }
  }
  function skip(name, why) {
    skipped++;
    console.log(`  skip   ${suite}: ${name} -- ${why}`);
  }
  function finish() {
    console.log(`${suite} suite: ${passed} passed, ${failed} failed, ${skipped} skipped`);
    if (process.env.E2E_RESULTS) writeFileSync(`${process.env.E2E_RESULTS}/${suite}.counts`, `${passed} ${failed}\n`);
    return failed === 0;
  }
  return { test, skip, finish };
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// Raw JSON-RPC over HTTP: the whole response object (result or error), so a suite can check
// either, independently of the client library under test.
export function rawRpc(url) {
  let id = 1;
  return async (method, params = []) => {
    const res = await fetch(url, {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: id++, method, params }),
    });
    return res.json();
  };
}
