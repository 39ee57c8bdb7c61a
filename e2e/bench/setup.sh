#!/usr/bin/env bash
# Prepares a node for the benchmark: deploys Token and spreads BENCH_TRANSFERS (100) token
# transfers over BENCH_BLOCKS (10,000) blocks, then writes bench/state/<host_port>.json.
#   e2e/bench/setup.sh URL          (state file in BENCH_STATE_DIR, default bench/state)
# On anvil the gaps are filled with anvil_mine (≈101 txs + 100 mine calls in total).
# On a node without a mine RPC (l2node: start it with --block-time 0) the gaps are filled with
# 0-value self-transfers: ≈10,000 txs / blocks in total. See bench/setup.mjs for the env knobs.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
E2E="$(cd "$HERE/.." && pwd)"
URL="${1:?usage: setup.sh URL}"
STATE="${BENCH_STATE_DIR:-$HERE/state}/$(echo "$URL" | sed -E 's#^[a-z]+://##; s#[/:]+#_#g; s#_$##').json"
[ -f "$E2E/build/Token.json" ] || (cd "$E2E" && node scripts/compile.mjs)
node "$HERE/setup.mjs" "$URL" "$STATE"
echo "$STATE"
