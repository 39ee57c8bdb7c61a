#!/usr/bin/env bash
# Installs the e2e clients, builds l2node, starts a dev node in a temp dir on ports 18645/18646
# (E2E_HTTP_PORT / E2E_WS_PORT), runs every e2e suite against it and stops it, then runs the
# scale-out recipe (e2e/scaleout/run.sh: a sequencer, two followers and nginx).
# The last lines are run.sh's "N passed, N failed" and "scale-out: PASS".
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
  --rpc-http-api ETH,NET,WEB3,L2,DEBUG --rpc-ws-api ETH,NET,WEB3,L2,DEBUG \
  >"$DATA/node.log" 2>&1 &
NODE=$!
cleanup() {
  kill "$NODE" 2>/dev/null || true
  wait "$NODE" 2>/dev/null || true
  if [ "${status:-1}" -ne 0 ]; then tail -n 50 "$DATA/node.log" || true; fi
  rm -rf "$DATA"
}
trap cleanup EXIT
set +e
bash "$ROOT/e2e/run.sh" "http://127.0.0.1:$HTTP_PORT" "ws://127.0.0.1:$WS_PORT"
status=$?
bash "$ROOT/e2e/scaleout/run.sh" "$ROOT/target/debug/l2node" || status=1
exit $status
