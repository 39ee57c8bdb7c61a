#!/usr/bin/env bash
# Light requests under a heavy flood, side by side: for each node, eth_call (balanceOf) and
# eth_blockNumber on 8 connections alone (idle), then again while 32 connections send
# debug_traceTransaction with callTracer; prints requests, p50 and p99 of each.
#   e2e/bench/mixed.sh URL [URL ...]     e.g. l2node (with DEBUG) and anvil
# Each node is set up once as bench/run.sh does (bench/setup.sh); use 127.0.0.1 URLs.
# Env: MIXED_DURATION=8 (seconds per measurement)  BENCH_STATE_DIR=bench/state
set -uo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
E2E="$(cd "$HERE/.." && pwd)"
[ $# -ge 1 ] || { echo "usage: mixed.sh URL [URL ...]" >&2; exit 2; }
DUR="${MIXED_DURATION:-8}"
command -v wrk >/dev/null || { echo "wrk not found: run .ci/e2e-deps.sh" >&2; exit 1; }
[ -f "$E2E/build/Token.json" ] || (cd "$E2E" && node scripts/compile.mjs) || exit 1
export BENCH_STATE_DIR="${BENCH_STATE_DIR:-$HERE/state}"
OUT="$(mktemp -d)"; trap 'rm -rf "$OUT"' EXIT
res() { sed -n 's/.*BENCH_RESULT //p' "$1" | tr ' ' '\n' | grep -E '^(requests|p50_us|p99_us)=' | tr '\n' ' '; }
for url in "$@"; do
  case "$url" in http://127.*|http://localhost*) ;; *) echo "refusing non-loopback target $url" >&2; exit 1;; esac
  st="$BENCH_STATE_DIR/$(echo "$url" | sed -E 's#^[a-z]+://##; s#[/:]+#_#g; s#_$##').json"
  grep -qs '"recentTransferTx"' "$st" || "$HERE/setup.sh" "$url" >/dev/null || { echo "setup failed for $url" >&2; exit 1; }
  bodies="$OUT/$(basename "$st" .json)"
  node "$HERE/bodies.mjs" "$url" "$st" "$bodies" >/dev/null
  heavy="$bodies/debug_traceTransaction_callTracer_erc20.json"
  for light in eth_call_balanceOf eth_blockNumber; do
    BENCH_BODY_FILE="$bodies/$light.json" wrk -t1 -c8 -d"${DUR}s" -s "$HERE/rpc.lua" "$url" >"$OUT/idle" 2>&1
    BENCH_BODY_FILE="$heavy" wrk -t1 -c32 -d"$((DUR + 6))s" --timeout 10s -s "$HERE/rpc.lua" "$url" >"$OUT/flood" 2>&1 &
    flood=$!
    sleep 3
    BENCH_BODY_FILE="$bodies/$light.json" wrk -t1 -c8 -d"${DUR}s" -s "$HERE/rpc.lua" "$url" >"$OUT/load" 2>&1
    wait $flood
    echo "$url $light: idle $(res "$OUT/idle")| under the trace flood $(res "$OUT/load")| flood $(res "$OUT/flood")"
  done
done
