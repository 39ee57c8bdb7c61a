#!/usr/bin/env bash
# Side-by-side JSON-RPC load benchmark of two nodes with wrk.
#   e2e/bench/run.sh URL_A URL_B        e.g. l2node vs anvil, or anvil vs anvil
# Each scenario runs BENCH_DURATION seconds at BENCH_CONNECTIONS concurrent connections
# against A, then B; prints requests/s, p50, p99 for both and the A/B ratios.
# A node without bench/state/<host_port>.json (or whose token is gone) is set up first
# with bench/setup.sh. Loads go to the given URLs only: use 127.0.0.1.
# A scenario whose method a node does not have (l2_estimateGas on anvil) is skipped on that
# node and shown as "unsupported", not counted as an error.
# The scenario "mixed" runs bench/mixed.sh on both nodes after the table: light methods' latency
# idle and under a debug_traceTransaction flood (the node under test needs DEBUG enabled).
# With BENCH_PID_A / BENCH_PID_B (the nodes' process ids) the table adds each node's own CPU
# time per request: on a 2-core machine wrk and the kernel's loopback TCP take much of each
# request, and that column shows what the node itself spends.
# Env: BENCH_DURATION=10 BENCH_CONNECTIONS=32 BENCH_THREADS=2 BENCH_SCENARIOS="..." BENCH_SETUP=auto|skip
#      BENCH_STATE_DIR=bench/state (setup state files)  BENCH_OUT=bench/results/<timestamp>
#      BENCH_PID_A= BENCH_PID_B= (optional)
set -uo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
E2E="$(cd "$HERE/.." && pwd)"
A="${1:?usage: run.sh URL_A URL_B}"; B="${2:?usage: run.sh URL_A URL_B}"
DUR="${BENCH_DURATION:-10}"; CONN="${BENCH_CONNECTIONS:-32}"; THREADS="${BENCH_THREADS:-2}"
ALL="eth_blockNumber eth_getBalance batch10_eth_getBalance eth_call_balanceOf eth_estimateGas_transfer l2_estimateGas_transfer l2_estimateGas_premium_transfer"
ALL="$ALL eth_estimateGas_erc20 l2_estimateGas_erc20 batch100_eth_getBalance eth_getLogs_10k_blocks"
ALL="$ALL debug_traceTransaction_callTracer_erc20 mixed"
SCEN="${BENCH_SCENARIOS:-$ALL}"
MIXED=0; [[ " $SCEN " == *" mixed "* ]] && MIXED=1
SCEN=$(echo " $SCEN " | sed 's/ mixed / /g')
command -v wrk >/dev/null || { echo "wrk not found: run .ci/e2e-deps.sh" >&2; exit 1; }
for u in "$A" "$B"; do
  case "$u" in http://127.*|http://localhost*|http://\[::1\]*) ;; *) echo "refusing non-loopback target $u" >&2; exit 1;; esac
done
[ -f "$E2E/build/Token.json" ] || (cd "$E2E" && node scripts/compile.mjs) || exit 1

export BENCH_STATE_DIR="${BENCH_STATE_DIR:-$HERE/state}"
state_of() { echo "$BENCH_STATE_DIR/$(echo "$1" | sed -E 's#^[a-z]+://##; s#[/:]+#_#g; s#_$##').json"; }
has_code() {
  local tok; tok=$(node -e 'console.log(JSON.parse(require("fs").readFileSync(process.argv[1])).token)' "$2" 2>/dev/null) || return 1
  curl -sf -m 5 -H 'content-type: application/json' \
    -d "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"eth_getCode\",\"params\":[\"$tok\",\"latest\"]}" "$1" | grep -q '"result":"0x6'
}
OUT="${BENCH_OUT:-$HERE/results/$(date +%Y%m%d-%H%M%S)}"; mkdir -p "$OUT"
declare -A OKS
for label in A B; do
  url=$A; [ $label = B ] && url=$B
  st=$(state_of "$url")
  if [ "${BENCH_SETUP:-auto}" != skip ] && { [ ! -f "$st" ] || ! grep -q '"recentTransferTx"' "$st" || ! has_code "$url" "$st"; }; then
    echo "== setting up $url (one time; see bench/setup.sh)"
    "$HERE/setup.sh" "$url" >/dev/null || { echo "setup failed for $url" >&2; exit 1; }
  fi
  OKS[$label]=$(node "$HERE/bodies.mjs" "$url" "$st" "$OUT/bodies-$label")
done

res() { sed -n 's/.*BENCH_RESULT //p' "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"; }
# CPU time (user + system) of a process in clock ticks, empty without a pid.
ticks() { [ -n "$1" ] && awk '{print $14 + $15}' "/proc/$1/stat" 2>/dev/null; }
printf '== wrk: %ss per scenario, %s connections, %s threads; A=%s B=%s\n' "$DUR" "$CONN" "$THREADS" "$A" "$B"
for s in $SCEN; do
  for label in A B; do
    url=$A; [ $label = B ] && url=$B
    if [[ " ${OKS[$label]} " != *" $s "* ]]; then
      why=$(node -e 'try { console.log(JSON.parse(require("fs").readFileSync(process.argv[1]))[process.argv[2]].status) } catch { console.log("failed") }' \
        "$OUT/bodies-$label/preflight.json" "$s")
      echo "skip $s on $label (preflight: $why)"; continue
    fi
    pid=${BENCH_PID_A:-}; [ $label = B ] && pid=${BENCH_PID_B:-}
    t0=$(ticks "$pid")
    BENCH_BODY_FILE="$OUT/bodies-$label/$s.json" timeout $((DUR + 30)) \
      wrk -t"$THREADS" -c"$CONN" -d"${DUR}s" --timeout 10s -s "$HERE/rpc.lua" "$url" > "$OUT/$s-$label.txt" 2>&1
    t1=$(ticks "$pid")
    [ -n "$t0" ] && [ -n "$t1" ] && echo "CPU_TICKS $((t1 - t0)) $(getconf CLK_TCK)" >> "$OUT/$s-$label.txt"
    sleep 1
  done
done

node - "$OUT" "$SCEN" "$A" "$B" <<'JS' | tee "$OUT/table.md"
const fs = require('fs');
const [out, scen, A, B] = process.argv.slice(2);
const pre = (label) => { try { return JSON.parse(fs.readFileSync(`${out}/bodies-${label}/preflight.json`, 'utf8')); } catch { return {}; } };
const preA = pre('A'), preB = pre('B');
const get = (f) => {
  try {
    const line = fs.readFileSync(f, 'utf8').split('\n').find((l) => l.startsWith('BENCH_RESULT'));
    const o = Object.fromEntries(line.slice(13).trim().split(' ').map((kv) => kv.split('=')).map(([k, v]) => [k, Number(v)]));
    o.rps = o.requests / (o.duration_us / 1e6);
    const cpu = fs.readFileSync(f, 'utf8').split('\n').find((l) => l.startsWith('CPU_TICKS'));
    if (cpu) { const [, t, hz] = cpu.split(' ').map(Number); o.cpu_us = (t / hz) * 1e6 / o.requests; }
    o.bad = o.rpc_errors + o.non2xx + o.socket_errors + o.timeouts;
    return o;
  } catch { return null; }
};
const ms = (us) => (us / 1000).toFixed(2);
const r = (x, y) => (x && y ? (x / y).toFixed(2) : '-');
console.log(`A = ${A}   B = ${B}\n`);
console.log('| scenario | A req/s | A p50 ms | A p99 ms | B req/s | B p50 ms | B p99 ms | req/s A/B | p50 A/B | errors A/B | A cpu us/req | B cpu us/req | cpu B/A |');
console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
let bad = 0;
for (const s of scen.split(/\s+/).filter(Boolean)) {
  const a = get(`${out}/${s}-A.txt`), b = get(`${out}/${s}-B.txt`);
  const uA = preA[s]?.status === 'unsupported', uB = preB[s]?.status === 'unsupported';
  if (uA && uB) { console.log(`| ${s} | unsupported | | | unsupported | | | - | - | -/- | - | - | - |`); continue; }
  const c = (o, k, u) => (o ? (k === 'rps' ? o.rps.toFixed(0) : ms(o[k])) : u ? (k === 'rps' ? 'unsupported' : '') : 'n/a');
  if ((!a && !uA) || (!b && !uB) || a?.bad || b?.bad) bad++;
  console.log(`| ${s} | ${c(a, 'rps', uA)} | ${c(a, 'p50_us', uA)} | ${c(a, 'p99_us', uA)} | ${c(b, 'rps', uB)} | ${c(b, 'p50_us', uB)} | ${c(b, 'p99_us', uB)} | ` +
    `${r(a?.rps, b?.rps)} | ${r(a?.p50_us, b?.p50_us)} | ${a ? a.bad : '-'}/${b ? b.bad : '-'} | ` +
    `${a?.cpu_us?.toFixed(1) ?? '-'} | ${b?.cpu_us?.toFixed(1) ?? '-'} | ${r(b?.cpu_us, a?.cpu_us)} |`);
}
console.log('\n(batch100: one request = one HTTP batch of 100 eth_getBalance calls; unsupported: the node has no such method)');
process.exitCode = bad ? 1 : 0;
JS
rc=${PIPESTATUS[0]}
echo "results: $OUT"
if [ "$MIXED" = 1 ]; then
  echo "== mixed: light methods idle and under a debug_traceTransaction (callTracer) flood"
  "$HERE/mixed.sh" "$A" "$B" | tee "$OUT/mixed.txt" || rc=1
fi
exit "$rc"
