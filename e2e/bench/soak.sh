#!/usr/bin/env bash
# Memory over a long mixed load: a dev sequencer (1 s blocks) and, after a delay, a follower
# that first syncs what the sequencer made meanwhile, under
#   - a transaction stream (e2e/ha/stream.mjs, one transfer every SOAK_TX_INTERVAL_MS ms from
#     dev accounts 0 (gasless), 2 and 3 (premium), to both nodes in turn),
#   - reads with wrk (2 connections each): eth_getBalance, the latest block with its
#     transactions, eth_feeHistory, and eth_getLogs over the whole chain,
#   - WebSocket subscriptions (newHeads and logs, 10 connections to each node),
# and prints each node's resident memory every SOAK_INTERVAL seconds, then the growth after
# warm-up (the first third of the run). Resident memory is VmRSS less the pages of the database
# file mapped in: the node reads its database through a memory map, and those pages are the OS
# page cache, shared and given back under memory pressure, not memory the node holds.
#   e2e/bench/soak.sh [path/to/l2node]      (default target/release/l2node: build it first)
# Env: SOAK_MINUTES=30 SOAK_INTERVAL=30 SOAK_FOLLOWER_DELAY=120 SOAK_TX_INTERVAL_MS=20
#      SOAK_PORT_BASE=19800 SOAK_DB_CACHE= (bytes, --db-cache-size of both nodes)
# Needs wrk, curl, node and e2e/node_modules (.ci/e2e-deps.sh).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
BIN="${1:-$ROOT/target/release/l2node}"
MINUTES="${SOAK_MINUTES:-30}"
INTERVAL="${SOAK_INTERVAL:-30}"
DELAY="${SOAK_FOLLOWER_DELAY:-120}"
BASE="${SOAK_PORT_BASE:-19800}"
SEQ_HTTP=$((BASE + 1)) SEQ_WS=$((BASE + 2)) SEQ_P2P=$((BASE + 3))
FOL_HTTP=$((BASE + 11)) FOL_WS=$((BASE + 12)) FOL_P2P=$((BASE + 13))
CACHE=()
[ -n "${SOAK_DB_CACHE:-}" ] && CACHE=(--db-cache-size "$SOAK_DB_CACHE")
DIR="$(mktemp -d)"
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$DIR"
}
trap cleanup EXIT

rss_mb() {
  [ -r "/proc/$1/smaps" ] || { echo -; return; }
  awk '/^[0-9a-f]+-[0-9a-f]+ / { db = ($NF ~ /\.redb$/) } /^Rss:/ && !db { kb += $2 }
    END { printf "%.0f", kb / 1024 }' "/proc/$1/smaps" 2>/dev/null || echo -
}
head_of() {
  local r
  r=$(curl -sf -m 2 -H 'content-type: application/json' \
    -d '{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber","params":[]}' "http://127.0.0.1:$1") ||
    { echo -; return; }
  r=${r#*\"result\":\"}
  echo $((${r%%\"*}))
}

"$BIN" run --dev --block-time 1 --data-path "$DIR/seq" "${CACHE[@]}" \
  --rpc-http-port "$SEQ_HTTP" --rpc-ws-port "$SEQ_WS" --p2p-host 127.0.0.1 --p2p-port "$SEQ_P2P" \
  >"$DIR/seq.log" 2>&1 &
SEQ=$!
PIDS+=("$SEQ")
for _ in $(seq 100); do grep -q "peer-to-peer on /" "$DIR/seq.log" && break; sleep 0.2; done
BOOT="$(grep -o 'peer-to-peer on /[^ ]*' "$DIR/seq.log" | head -1 | cut -d' ' -f3)"

# Reads: one body per wrk, two connections each, for the whole run.
cat >"$DIR/balance.json" <<'EOF'
{"jsonrpc":"2.0","id":1,"method":"eth_getBalance","params":["0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266","latest"]}
EOF
cat >"$DIR/block.json" <<'EOF'
{"jsonrpc":"2.0","id":1,"method":"eth_getBlockByNumber","params":["latest",true]}
EOF
cat >"$DIR/fees.json" <<'EOF'
{"jsonrpc":"2.0","id":1,"method":"eth_feeHistory","params":["0x40","latest",[25,50,75]]}
EOF
cat >"$DIR/logs.json" <<'EOF'
{"jsonrpc":"2.0","id":1,"method":"eth_getLogs","params":[{"fromBlock":"0x0","toBlock":"latest","topics":["0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef"]}]}
EOF
SECS=$((MINUTES * 60))
reads() { # PORT
  local body
  for body in balance block fees logs; do
    BENCH_BODY_FILE="$DIR/$body.json" wrk -t1 -c2 -d"${SECS}s" --timeout 10s \
      -s "$ROOT/e2e/bench/rpc.lua" "http://127.0.0.1:$1" >"$DIR/wrk-$body-$1.log" 2>&1 &
    PIDS+=($!)
  done
}
subscribe() { # WS_PORT
  (cd "$ROOT/e2e" && node -e '
    const WebSocket = require("ws");
    let got = 0;
    for (let i = 0; i < 10; i++) {
      const ws = new WebSocket(process.argv[1]);
      ws.on("open", () => {
        ws.send(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_subscribe", params: ["newHeads"] }));
        ws.send(JSON.stringify({ jsonrpc: "2.0", id: 2, method: "eth_subscribe", params: ["logs", {}] }));
      });
      ws.on("message", () => got++);
      ws.on("error", () => {});
    }
    process.on("SIGTERM", () => { console.log(`subscriptions: ${got} messages`); process.exit(0); });
  ' "ws://127.0.0.1:$1") >"$DIR/subs-$1.log" 2>&1 &
  PIDS+=($!)
}
reads "$SEQ_HTTP"
subscribe "$SEQ_WS"
HA_TX_INTERVAL_MS="${SOAK_TX_INTERVAL_MS:-20}" node "$ROOT/e2e/ha/stream.mjs" send "$DIR/acked" \
  "http://127.0.0.1:$SEQ_HTTP" >"$DIR/stream.log" 2>&1 &
STREAM=$!
PIDS+=("$STREAM")

echo "soak: $MINUTES min, sequencer http://127.0.0.1:$SEQ_HTTP, follower from ${DELAY} s on http://127.0.0.1:$FOL_HTTP"
printf '%8s  %14s  %14s  %8s  %8s  %8s\n' t sequencer_MB follower_MB seq_head fol_head acked
START=$SECONDS
FOL=
SAMPLES=()
while [ $((SECONDS - START)) -lt "$SECS" ]; do
  t=$((SECONDS - START))
  if [ -z "$FOL" ] && [ "$t" -ge "$DELAY" ]; then
    "$BIN" run --dev --follower --data-path "$DIR/fol" "${CACHE[@]}" \
      --rpc-http-port "$FOL_HTTP" --rpc-ws-port "$FOL_WS" --p2p-host 127.0.0.1 --p2p-port "$FOL_P2P" \
      --bootnodes "$BOOT" >"$DIR/fol.log" 2>&1 &
    FOL=$!
    PIDS+=("$FOL")
    sleep 2
    reads "$FOL_HTTP"
    subscribe "$FOL_WS"
  fi
  s=$(rss_mb "$SEQ")
  f=$([ -n "$FOL" ] && rss_mb "$FOL" || echo -)
  acked=0
  [ -f "$DIR/acked" ] && acked=$(wc -l <"$DIR/acked")
  printf '%7ss  %14s  %14s  %8s  %8s  %8s\n' "$t" "$s" "$f" "$(head_of "$SEQ_HTTP")" \
    "$([ -n "$FOL" ] && head_of "$FOL_HTTP" || echo -)" "$acked"
  SAMPLES+=("$t $s $f")
  sleep "$INTERVAL"
done
# The load stops (the nodes last): the subscribers print what they received.
for p in "${PIDS[@]}"; do
  [ "$p" = "$SEQ" ] || [ "$p" = "$FOL" ] || kill "$p" 2>/dev/null || true
done
sleep 1
cat "$DIR"/subs-*.log
printf '%s\n' "${SAMPLES[@]}" | awk -v warm=$((SECS / 3)) '
  $1 >= warm && !w { ws = $2; wf = $3; w = 1 }
  $1 >= warm { if ($2 > ms) ms = $2; if ($3 != "-" && $3 > mf) mf = $3; ls = $2; lf = $3 }
  END {
    printf "after warm-up (%d s): sequencer %d MB -> max %d MB, last %d MB (%+.0f%%)\n", warm, ws, ms, ls, (ms - ws) * 100 / ws
    if (wf != "-" && wf > 0) printf "                        follower %d MB -> max %d MB, last %d MB (%+.0f%%)\n", wf, mf, lf, (mf - wf) * 100 / wf
  }'
grep -h BENCH_RESULT "$DIR"/wrk-*.log | awk '{ for (i = 2; i <= NF; i++) { split($i, kv, "="); s[kv[1]] += kv[2] } }
  END { printf "reads: %d requests, %d JSON-RPC errors, %d socket errors\n", s["requests"], s["rpc_errors"], s["socket_errors"] }' || true
