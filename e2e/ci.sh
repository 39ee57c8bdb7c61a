#!/usr/bin/env bash
# Installs the e2e clients, builds l2node, starts a dev node in a temp dir on ports 18645/18646
# (E2E_HTTP_PORT / E2E_WS_PORT) and a follower of it (18745, E2E_FOLLOWER_PORT), runs every e2e
# suite against them and stops them, then runs the
# scale-out recipe (e2e/scaleout/run.sh: a sequencer, two followers and nginx) and the sequencer
# group (e2e/ha/run.sh: three etcd servers, three members, two followers, 20 leader kills).
# The last lines are run.sh's "N passed, N failed", "scale-out: PASS" and "ha: PASS".
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
# The clients the suites drive (cast, viem, web3.py); idempotent, fast when already installed.
E2E_SKIP_WRK=1 bash "$ROOT/.ci/e2e-deps.sh" >/dev/null
cargo build -q -p l2node-cli --manifest-path "$ROOT/Cargo.toml"
DATA="$(mktemp -d)"
HTTP_PORT="${E2E_HTTP_PORT:-18645}"
WS_PORT="${E2E_WS_PORT:-18646}"
"$ROOT/target/debug/l2node" run --dev --block-time 1 --data-path "$DATA" \
  --rpc-http-port "$HTTP_PORT" --rpc-ws-port "$WS_PORT" --p2p-host 127.0.0.1 --p2p-port 0 \
  --rpc-http-api ETH,NET,WEB3,L2,DEBUG,DEV --rpc-ws-api ETH,NET,WEB3,L2,DEBUG,DEV \
  >"$DATA/node.log" 2>&1 &
NODE=$!
FOLLOWER=
cleanup() {
  kill $NODE $FOLLOWER 2>/dev/null || true
  wait $NODE $FOLLOWER 2>/dev/null || true
  if [ "${status:-1}" -ne 0 ]; then tail -n 50 "$DATA/node.log" "$DATA/follower.log" || true; fi
  rm -rf "$DATA"
}
trap cleanup EXIT
# A follower of the dev node: the dev suite checks that it stays on the sequencer's chain
# through evm_mine and evm_setNextBlockTimestamp.
for _ in $(seq 100); do grep -q "peer-to-peer on /" "$DATA/node.log" && break; sleep 0.2; done
BOOT="$(grep -o 'peer-to-peer on /[^ ]*' "$DATA/node.log" | head -1 | cut -d' ' -f3)"
FOLLOWER_PORT="${E2E_FOLLOWER_PORT:-18745}"
"$ROOT/target/debug/l2node" run --dev --follower --data-path "$DATA/follower" \
  --rpc-http-port "$FOLLOWER_PORT" --rpc-ws-enabled false --p2p-host 127.0.0.1 --p2p-port 0 \
  --bootnodes "$BOOT" >"$DATA/follower.log" 2>&1 &
FOLLOWER=$!
set +e
E2E_FOLLOWER_URL="http://127.0.0.1:$FOLLOWER_PORT" \
  bash "$ROOT/e2e/run.sh" "http://127.0.0.1:$HTTP_PORT" "ws://127.0.0.1:$WS_PORT"
status=$?
bash "$ROOT/e2e/scaleout/run.sh" "$ROOT/target/debug/l2node" || status=1
bash "$ROOT/e2e/ha/run.sh" "$ROOT/target/debug/l2node" || status=1
exit $status
