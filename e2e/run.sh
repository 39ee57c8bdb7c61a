#!/usr/bin/env bash
# Runs every end-to-end suite (cast, viem, web3.py, the dashboard in a browser) against one node.
#   e2e/run.sh HTTP_URL [WS_URL]        e.g. e2e/run.sh http://127.0.0.1:8545 ws://127.0.0.1:8546
# Exits non-zero on any failure; the last line is exactly "N passed, N failed".
# Env overrides (seconds unless noted):
#   E2E_READY_TIMEOUT=30   wait for the node to answer eth_chainId
#   E2E_TX_TIMEOUT=60      wait for each receipt
#   E2E_CMD_TIMEOUT=30     each read-only cast command
#   E2E_WS_TIMEOUT=30      each WebSocket wait (watchBlocks, watchContractEvent)
#   E2E_TEST_TIMEOUT=120   each viem test
#   E2E_SUITE_TIMEOUT=600  each whole suite
#   E2E_POLL_MS=250        receipt polling interval (ms)
#   E2E_SUITES="cast viem web3py wallets browser dev"  subset to run
#   E2E_FOLLOWER_URL       a follower of the node: the dev suite checks it ends on the same head
#   E2E_EXPECT_CHAIN_ID    if set, chain id must equal it
set -u
HERE="$(cd "$(dirname "$0")" && pwd)"
HTTP_URL="${1:?usage: run.sh HTTP_URL [WS_URL]}"
WS_URL="${2:-$(echo "$HTTP_URL" | sed -e 's#^http://#ws://#' -e 's#^https://#wss://#')}"
SUITES="${E2E_SUITES:-cast viem web3py wallets browser dev}"
READY_TIMEOUT="${E2E_READY_TIMEOUT:-30}"
SUITE_TIMEOUT="${E2E_SUITE_TIMEOUT:-600}"
export E2E_RESULTS="$(mktemp -d)"
trap 'rm -rf "$E2E_RESULTS"' EXIT

if [ ! -x "$HERE/node_modules/.bin/cast" ] || [ ! -x "$HERE/.venv/bin/python" ]; then
  echo "e2e dependencies missing: run .ci/e2e-deps.sh first" >&2
  echo "0 passed, 1 failed"; exit 1
fi

echo "== waiting up to ${READY_TIMEOUT}s for $HTTP_URL"
deadline=$((SECONDS + READY_TIMEOUT)); ready=0
while [ $SECONDS -lt $deadline ]; do
  if curl -sf -m 2 -H 'content-type: application/json' \
       -d '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}' "$HTTP_URL" | grep -q '"result"'; then
    ready=1; break
  fi
  sleep 0.5
done
if [ $ready -ne 1 ]; then echo "node at $HTTP_URL not ready"; echo "0 passed, 1 failed"; exit 1; fi

(cd "$HERE" && node scripts/compile.mjs) || { echo "contract compile failed"; echo "0 passed, 1 failed"; exit 1; }

for s in $SUITES; do
  case "$s" in
    cast)   cmd=(bash "$HERE/suites/cast.sh" "$HTTP_URL") ;;
    viem)   cmd=(node "$HERE/suites/viem.mjs" "$HTTP_URL" "$WS_URL") ;;
    web3py) cmd=("$HERE/.venv/bin/python" "$HERE/suites/web3_suite.py" "$HTTP_URL") ;;
    wallets) cmd=(node "$HERE/suites/wallets.mjs" "$HTTP_URL") ;;
    browser) cmd=(node "$HERE/browser/dashboard.mjs" "$HTTP_URL") ;;
    dev)    cmd=(node "$HERE/suites/dev.mjs" "$HTTP_URL") ;;
    *) echo "  FAIL   unknown suite '$s'"; echo "0 1" > "$E2E_RESULTS/$s.counts"; continue ;;
  esac
  timeout --kill-after=10 "$SUITE_TIMEOUT" "${cmd[@]}"
  rc=$?
  if [ ! -f "$E2E_RESULTS/$s.counts" ]; then
    echo "  FAIL   $s: suite died (exit $rc) before reporting"
    echo "0 1" > "$E2E_RESULTS/$s.counts"
  elif [ $rc -ne 0 ] && [ "$(cut -d' ' -f2 "$E2E_RESULTS/$s.counts")" = 0 ]; then
    echo "  FAIL   $s: suite exited $rc with no failed check"
    read -r p _ < "$E2E_RESULTS/$s.counts"; echo "$p 1" > "$E2E_RESULTS/$s.counts"
  fi
done

P=0; F=0
for f in "$E2E_RESULTS"/*.counts; do
  read -r p fl < "$f"; P=$((P + p)); F=$((F + fl))
  echo "== $(basename "$f" .counts) suite total: $p passed, $fl failed"
done
echo "${P} passed, ${F} failed"
[ "$F" -eq 0 ]
