#!/usr/bin/env bash
# Karma-aware gas estimate vs the plain one, as the issue asks: l2node's l2_estimateGas next to
# l2node's own eth_estimateGas (target: req/s ratio >= 0.9) and anvil's eth_estimateGas
# (target >= 1.0), for a 1-wei ETH transfer and an ERC-20 Token.transfer.
#   e2e/bench/estimate.sh L2NODE_URL ANVIL_URL     e.g. http://127.0.0.1:8545 http://127.0.0.1:18545
# Runs bench/run.sh BENCH_REPEAT times with the estimate scenarios only (run.sh's preflight skips
# the l2_ ones on anvil, which has no l2_estimateGas), then prints the comparison of each run and,
# for several runs, the per-cell medians (ratios: median of the per-run ratios).
# Rows: transfer from dev account 0 (top Karma tier: gasless path), the same from account 9 (no
# Karma: premium path, fee formula over the compressed tx; its eth_ baseline is the account-0
# transfer, the EVM work is the same), and Token.transfer from the token holder (dev account 4,
# the setup's deployer; the path it took is shown).
# Only the token is needed, so a node without a state file here is set up in seconds (deploy + 1
# transfer, any --block-time) into bench/state/estimate/, apart from run.sh's 10,000-block fixture.
# Env: BENCH_REPEAT=1, and run.sh's BENCH_DURATION=10 BENCH_CONNECTIONS=32 BENCH_THREADS=2.
set -uo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
L2="${1:?usage: estimate.sh L2NODE_URL ANVIL_URL}"; ANVIL="${2:?usage: estimate.sh L2NODE_URL ANVIL_URL}"
REPEAT="${BENCH_REPEAT:-1}"
SCEN="eth_estimateGas_transfer l2_estimateGas_transfer l2_estimateGas_premium_transfer eth_estimateGas_erc20 l2_estimateGas_erc20"
BASE="$HERE/results/estimate-$(date +%Y%m%d-%H%M%S)"; mkdir -p "$BASE"
rc=0
for i in $(seq 1 "$REPEAT"); do
  echo "== estimate run $i/$REPEAT (${BENCH_DURATION:-10}s per scenario; log: $BASE/run$i.log)"
  BENCH_OUT="$BASE/run$i" BENCH_SCENARIOS="$SCEN" BENCH_STATE_DIR="$HERE/state/estimate" \
    BENCH_BLOCKS=2 BENCH_TRANSFERS=1 "$HERE/run.sh" "$L2" "$ANVIL" > "$BASE/run$i.log" 2>&1 || rc=1
  grep -E '^(skip|setup|preflight|==)' "$BASE/run$i.log" | grep -v '^== wrk' | sed 's/^/   /'
done

node - "$BASE" "$REPEAT" "$L2" "$ANVIL" <<'JS' | tee "$BASE/estimate.md"
const fs = require('fs');
const [base, repeat, L2, ANVIL] = process.argv.slice(2);
const runs = Array.from({ length: Number(repeat) }, (_, i) => `${base}/run${i + 1}`);
const get = (f) => {
  try {
    const line = fs.readFileSync(f, 'utf8').split('\n').find((l) => l.startsWith('BENCH_RESULT'));
    const o = Object.fromEntries(line.slice(13).trim().split(' ').map((kv) => kv.split('=')).map(([k, v]) => [k, Number(v)]));
    return { rps: o.requests / (o.duration_us / 1e6), p50: o.p50_us / 1000, p99: o.p99_us / 1000,
      bad: o.rpc_errors + o.non2xx + o.socket_errors + o.timeouts };
  } catch { return null; }
};
const feePath = (run, s) => {
  try {
    const fee = BigInt(JSON.parse(fs.readFileSync(`${run}/bodies-A/preflight.json`, 'utf8'))[s].response.result.priorityFeePerGas);
    return fee === 0n ? 'gasless' : `premium ${(Number(fee) / 1e9).toFixed(2)} gwei tip`;
  } catch { return '?'; }
};
const rows = [
  ['ETH transfer, gasless (acct 0)', 'l2_estimateGas_transfer', 'eth_estimateGas_transfer'],
  ['ETH transfer, premium (acct 9)', 'l2_estimateGas_premium_transfer', 'eth_estimateGas_transfer'],
  ['ERC-20 transfer (acct 4)', 'l2_estimateGas_erc20', 'eth_estimateGas_erc20'],
];
const measure = (run) => rows.map(([, l2s, eths]) => {
  const l2 = get(`${run}/${l2s}-A.txt`), own = get(`${run}/${eths}-A.txt`), anvil = get(`${run}/${eths}-B.txt`);
  return { l2, own, anvil, rOwn: l2 && own ? l2.rps / own.rps : null, rAnvil: l2 && anvil ? l2.rps / anvil.rps : null,
    bad: [l2, own, anvil].some((x) => !x || x.bad) };
});
const median = (xs) => {
  const v = xs.filter((x) => x != null && !Number.isNaN(x)).sort((a, b) => a - b);
  if (!v.length) return null;
  const m = Math.floor(v.length / 2);
  return v.length % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
};
const f = (o) => (o ? `${o.rps.toFixed(0)} | ${o.p50.toFixed(2)} | ${o.p99.toFixed(2)}` : 'n/a | | ');
const ratio = (x, target) => (x == null ? '-' : `${x.toFixed(2)} ${x >= target ? '(ok)' : '(BELOW)'}`);
const table = (title, cells, paths) => {
  console.log(`\n${title}\n`);
  console.log('| call | l2_estimateGas req/s | p50 ms | p99 ms | l2node eth_estimateGas req/s | p50 ms | p99 ms | l2_/eth_ (>= 0.9) | anvil eth_estimateGas req/s | p50 ms | p99 ms | l2_/anvil (>= 1.0) |');
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  rows.forEach(([name], i) => {
    const c = cells[i];
    const label = i === 2 ? `${name}, ${paths}` : name;
    console.log(`| ${label} | ${f(c.l2)} | ${f(c.own)} | ${ratio(c.rOwn, 0.9)} | ${f(c.anvil)} | ${ratio(c.rAnvil, 1.0)} |`);
  });
};
console.log(`l2node = ${L2}   anvil = ${ANVIL}`);
const all = runs.map(measure);
let bad = 0;
all.forEach((cells, k) => {
  bad += cells.filter((c) => c.bad).length;
  table(`run ${k + 1}`, cells, feePath(runs[k], 'l2_estimateGas_erc20'));
});
if (runs.length > 1) {
  const med = (i, side) => {
    const xs = all.map((cells) => cells[i][side]).filter(Boolean);
    return xs.length ? { rps: median(xs.map((x) => x.rps)), p50: median(xs.map((x) => x.p50)), p99: median(xs.map((x) => x.p99)) } : null;
  };
  const cells = rows.map((_, i) => ({ l2: med(i, 'l2'), own: med(i, 'own'), anvil: med(i, 'anvil'),
    rOwn: median(all.map((c) => c[i].rOwn)), rAnvil: median(all.map((c) => c[i].rAnvil)) }));
  table(`median of ${runs.length} runs (ratios: median of the per-run ratios)`, cells, feePath(runs[0], 'l2_estimateGas_erc20'));
}
if (bad) console.log(`\n${bad} cell(s) missing or with errors: see the run logs`);
process.exitCode = bad ? 1 : 0;
JS
prc=${PIPESTATUS[0]}
echo "results: $BASE"
[ "$rc" = 0 ] && [ "$prc" = 0 ]
