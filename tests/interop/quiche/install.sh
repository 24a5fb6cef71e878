#!/bin/bash
# Installs Cloudflare's quiche (0.18, prebuilt in npm's @matrixai/quic-linux-x64) into a cache folder outside the repo
# and prints QUICHE_BINDING=<path of its node.napi.node> and NODE=<node>. Idempotent; installs Node.js with apt-get when
# it is missing (root). usage: install.sh [CACHE_DIR]   (default: $HOME/.cache/quic-peers/quiche-npm)
set -eu
dir=${1:-$HOME/.cache/quic-peers/quiche-npm}
version=2.0.9
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  [ "$(id -u)" = 0 ] || { echo "install.sh: node/npm missing and not root" >&2; exit 1; }
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm) >/dev/null 2>&1
fi
binding="$dir/node_modules/@matrixai/quic-linux-x64/node.napi.node"
if [ ! -f "$binding" ] || ! grep -q "\"version\": \"$version\"" "$dir/node_modules/@matrixai/quic-linux-x64/package.json" 2>/dev/null; then
  mkdir -p "$dir"
  npm install --prefix "$dir" --no-save --no-audit --no-fund --loglevel=error "@matrixai/quic-linux-x64@$version" >&2
fi
[ -f "$binding" ] || { echo "install.sh: $binding missing after npm install" >&2; exit 1; }
echo "QUICHE_BINDING=$binding"
echo "NODE=$(command -v node)"
