#!/usr/bin/env bash
# The scale-out recipe, run on loopback: one sequencer, two followers, and nginx (Debian's
# package) balancing JSON-RPC reads over the followers' HTTP ports. It checks that
#  1. both followers pass their readiness probe (GET /readiness?minPeers=1&maxBlocksBehind=2),
#  2. reads through the balancer are spread over both followers (nginx's $upstream_addr),
#  3. a transaction sent through the balancer is included by the sequencer,
#  4. with one follower gone, its probe fails and reads still succeed through the other.
#   e2e/scaleout/run.sh [path/to/l2node]      (default: target/debug/l2node; build it first)
# Ports: SCALEOUT_PORT_BASE (default 18800) + 0..2 sequencer, +10..12 follower 1,
# +20..22 follower 2, +80 the balancer. The last line is "scale-out: PASS" or "scale-out: FAIL".
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
BIN="${1:-$ROOT/target/debug/l2node}"
CAST="$ROOT/e2e/node_modules/.bin/cast"
NGINX="$(command -v nginx || echo /usr/sbin/nginx)"
BASE="${SCALEOUT_PORT_BASE:-18800}"
SEQ_HTTP=$BASE; SEQ_P2P=$((BASE + 1))
F1_HTTP=$((BASE + 10)); F1_P2P=$((BASE + 11))
F2_HTTP=$((BASE + 20)); F2_P2P=$((BASE + 21))
LB=$((BASE + 80))
DIR="$(mktemp -d)"
PIDS=()
fail() { echo "  FAIL   $*"; echo "scale-out: FAIL"; exit 1; }
cleanup() {
  [ -f "$DIR/nginx.pid" ] && "$NGINX" -p "$DIR" -c "$DIR/nginx.conf" -e stderr -s stop 2>/dev/null || true
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  if [ "${ok:-0}" != 1 ]; then tail -n 20 "$DIR"/*.log 2>/dev/null || true; fi
  rm -rf "$DIR"
}
trap cleanup EXIT
[ -x "$NGINX" ] || fail "nginx is not installed (apt-get install nginx)"

rpc() { # URL METHOD [PARAMS]
  curl -sf -m 5 -H 'content-type: application/json' \
    -d "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"$2\",\"params\":${3:-[]}}" "$1"
}
wait_for() { # SECONDS DESCRIPTION COMMAND...
  local deadline=$((SECONDS + $1)) what="$2"; shift 2
  until "$@" >/dev/null 2>&1; do
    [ $SECONDS -lt $deadline ] || fail "timed out waiting for $what"
    sleep 0.2
  done
}
node() { # NAME HTTP_PORT P2P_PORT [FLAGS...]
  local name=$1 http=$2 p2p=$3; shift 3
  "$BIN" run --dev --block-time 1 --data-path "$DIR/$name" --rpc-http-port "$http" \
    --rpc-ws-enabled false --p2p-host 127.0.0.1 --p2p-port "$p2p" "$@" >"$DIR/$name.log" 2>&1 &
  PIDS+=($!)
}

echo "== sequencer on $SEQ_HTTP"
node sequencer "$SEQ_HTTP" "$SEQ_P2P"
wait_for 30 "the sequencer" grep -q "peer-to-peer on /" "$DIR/sequencer.log"
BOOT="$(grep -o 'peer-to-peer on /[^ ]*' "$DIR/sequencer.log" | head -1 | cut -d' ' -f3)"
echo "== followers on $F1_HTTP and $F2_HTTP (bootnode $BOOT)"
node follower1 "$F1_HTTP" "$F1_P2P" --follower --bootnodes "$BOOT"
node follower2 "$F2_HTTP" "$F2_P2P" --follower --bootnodes "$BOOT"
F2_PID=${PIDS[2]}
for port in "$F1_HTTP" "$F2_HTTP"; do
  wait_for 30 "follower $port readiness" \
    curl -sf -m 2 "http://127.0.0.1:$port/readiness?minPeers=1&maxBlocksBehind=2"
  echo "  ok     follower $port ready: $(curl -s "http://127.0.0.1:$port/readiness?minPeers=1&maxBlocksBehind=2")"
done

cat >"$DIR/nginx.conf" <<CONF
worker_processes 1;
pid $DIR/nginx.pid;
error_log $DIR/nginx-error.log;
events { worker_connections 256; }
http {
  log_format upstream '\$upstream_addr \$status';
  access_log $DIR/access.log upstream;
  client_body_temp_path $DIR/tmp-body;
  proxy_temp_path $DIR/tmp-proxy;
  fastcgi_temp_path $DIR/tmp-fastcgi;
  uwsgi_temp_path $DIR/tmp-uwsgi;
  scgi_temp_path $DIR/tmp-scgi;
  upstream followers {
    # Passive checks: a follower that refuses connections or answers 502/503 is skipped for
    # fail_timeout. Orchestrators add the active probe: GET /readiness (see docs/scale-out.md).
    server 127.0.0.1:$F1_HTTP max_fails=1 fail_timeout=10s;
    server 127.0.0.1:$F2_HTTP max_fails=1 fail_timeout=10s;
    keepalive 16;
  }
  server {
    listen 127.0.0.1:$LB;
    location / {
      proxy_pass http://followers;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host \$host;
      proxy_next_upstream error timeout http_502 http_503;
    }
  }
}
CONF
"$NGINX" -p "$DIR" -c "$DIR/nginx.conf" -e stderr -t 2>/dev/null || fail "nginx rejects the configuration"
"$NGINX" -p "$DIR" -c "$DIR/nginx.conf" -e stderr
LB_URL="http://127.0.0.1:$LB"
echo "== balancer on $LB_URL"

for _ in $(seq 1 20); do rpc "$LB_URL" eth_blockNumber >/dev/null || fail "read through the balancer"; done
SPREAD="$(awk '{print $1}' "$DIR/access.log" | sort | uniq -c)"
[ "$(echo "$SPREAD" | wc -l)" -eq 2 ] || fail "reads were not spread over both followers: $SPREAD"
echo "  ok     20 reads spread over both followers:"; echo "$SPREAD" | sed 's/^/           /'

KEY0="$(grep -o '(0) 0x[0-9a-fA-F]* key 0x[0-9a-f]*' "$DIR/sequencer.log" | awk '{print $4}')"
TX="$("$CAST" send --async --rpc-url "$LB_URL" --private-key "$KEY0" --gas-price 0 \
  --priority-gas-price 0 0x000000000000000000000000000000000000dEaD --value 1)" \
  || fail "sending through the balancer"
wait_for 30 "the receipt on the sequencer" \
  sh -c "curl -sf -H 'content-type: application/json' -d '{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"eth_getTransactionReceipt\",\"params\":[\"$TX\"]}' http://127.0.0.1:$SEQ_HTTP | grep -q '\"status\":\"0x1\"'"
echo "  ok     transaction $TX sent through the balancer, included by the sequencer"

kill "$F2_PID"; wait "$F2_PID" 2>/dev/null || true
curl -sf -m 2 "http://127.0.0.1:$F2_HTTP/readiness" >/dev/null && fail "a stopped follower passed its probe"
for _ in $(seq 1 10); do rpc "$LB_URL" eth_blockNumber >/dev/null || fail "read with one follower down"; done
echo "  ok     follower 2 stopped: its probe fails, 10 reads still answered by follower 1"
ok=1
echo "scale-out: PASS"
