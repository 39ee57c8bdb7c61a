#!/usr/bin/env bash
# Installs the e2e test + bench dependencies on a fresh machine. Idempotent.
#  - e2e/node_modules: npm ci from e2e/package-lock.json (viem, solc-js, and the foundry
#    cast/anvil binaries shipped in @foundry-rs/{cast,anvil}-linux-amd64 1.7.1)
#  - e2e/.venv: python venv with the pinned e2e/requirements.txt (web3, eth-account)
#  - chromium (Debian package) for the dashboard's browser suite (e2e/browser)
#  - nginx (Debian package) for the scale-out recipe (e2e/scaleout)
#  - etcd (Debian's etcd-server) for the sequencer group's tests (crates/group, e2e/ha)
#  - wrk (Debian package) for e2e/bench
#  - jq and curl (Debian packages) for the scripts of e2e/ha, e2e/scaleout and e2e/bench
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
E2E="$ROOT/e2e"

# npm: reinstall only when the lockfile changed since the last successful install.
LOCK_SUM="$(sha256sum "$E2E/package-lock.json" | cut -d' ' -f1)"
if [ ! -f "$E2E/node_modules/.e2e-lock-sum" ] || [ "$(cat "$E2E/node_modules/.e2e-lock-sum")" != "$LOCK_SUM" ]; then
  (cd "$E2E" && npm ci --no-audit --no-fund)
  echo "$LOCK_SUM" > "$E2E/node_modules/.e2e-lock-sum"
fi
"$E2E/node_modules/.bin/cast" --version | head -1
"$E2E/node_modules/.bin/anvil" --version | head -1

# python venv with pinned packages
REQ_SUM="$(sha256sum "$E2E/requirements.txt" | cut -d' ' -f1)"
if [ ! -x "$E2E/.venv/bin/python" ]; then
  python3 -m venv "$E2E/.venv"
fi
if [ ! -f "$E2E/.venv/.e2e-req-sum" ] || [ "$(cat "$E2E/.venv/.e2e-req-sum")" != "$REQ_SUM" ]; then
  "$E2E/.venv/bin/pip" install --quiet --disable-pip-version-check -r "$E2E/requirements.txt"
  echo "$REQ_SUM" > "$E2E/.venv/.e2e-req-sum"
fi
"$E2E/.venv/bin/python" -c 'import web3, eth_account; print("web3", web3.__version__)'

# jq and curl: the HA, scale-out and bench scripts read JSON-RPC answers with them
for tool in jq curl; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "$tool"
  fi
done

# chromium for the browser suite (playwright-core drives it; skip with E2E_SKIP_CHROMIUM=1)
if [ "${E2E_SKIP_CHROMIUM:-0}" != 1 ] && ! command -v chromium >/dev/null 2>&1; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends chromium
fi
command -v chromium >/dev/null 2>&1 && chromium --version 2>/dev/null | head -1 || true

# nginx for the scale-out recipe (skip with E2E_SKIP_NGINX=1)
if [ "${E2E_SKIP_NGINX:-0}" != 1 ] && ! command -v nginx >/dev/null 2>&1 && [ ! -x /usr/sbin/nginx ]; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends nginx
fi

# etcd for the sequencer group's tests (skip with E2E_SKIP_ETCD=1: they then say they skipped)
if [ "${E2E_SKIP_ETCD:-0}" != 1 ] && ! command -v etcd >/dev/null 2>&1; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends etcd-server
  # Debian starts a system etcd on 2379; the tests start their own on other ports.
  ($SUDO systemctl disable --now etcd 2>/dev/null || $SUDO service etcd stop 2>/dev/null) || true
fi
command -v etcd >/dev/null 2>&1 && etcd --version 2>/dev/null | head -1 || true

# wrk for the load benchmark (only needed by e2e/bench; skip with E2E_SKIP_WRK=1)
if [ "${E2E_SKIP_WRK:-0}" != 1 ] && ! command -v wrk >/dev/null 2>&1; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq wrk
fi
command -v wrk >/dev/null 2>&1 && wrk --version 2>&1 | head -1 || true
