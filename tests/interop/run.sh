#!/usr/bin/env bash
# Interop cases (quic-interop-runner names) between our InteropEndpoint and independent QUIC stacks on loopback:
#   ngtcp2 0.12 (GnuTLS): gtlsserver / gtlsclient, HTTP/3 only (our endpoint runs with ALPN=h3 against them)
#   quic-go 0.29: its own interop-runner client/server (tests/interop/qgo, hq-interop + h3), built from Debian's sources
#   quiche 0.18 (Cloudflare; prebuilt in npm's @matrixai/quic-linux-x64): tests/interop/quiche/quiche-hq.mjs, hq-interop
# in both directions: "our-client" (our client, their server) and "our-server" (their client, our server).
#
# usage: tests/interop/run.sh [--ci | --all] [--cases a,b,...] [--peers ngtcp2,quic-go,quiche] [--no-build]
#   --ci   (default) handshake, transfer, http3, retry, chacha20, keyupdate against ngtcp2 and transfer, multiplexing,
#          retry against quiche, both directions
#   --all  every case against every peer, plus tshark-decrypt; writes docs/INTEROP.md
# Prints exactly one line per case: "PASS <peer> <direction> <case>", "FAIL ...: <reason>", "SKIP ...: <reason>"
# (test.sh counts those); harness self-checks (peer against peer) print "NOTE ..." lines and are not results.
# Each case runs in its own network namespace when possible (unshare -n: private loopback, fixed ports, UDP GSO off so
# captures hold one QUIC datagram per frame), bounded by a timeout. Logs and captures: artifacts/interop/<peer>/<dir>/<case>/.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)

# ---------------------------------------------------------------------------------------------------------------------
# Inner mode: one case, already inside its network namespace (or not, when namespaces are unavailable).
# ---------------------------------------------------------------------------------------------------------------------
if [ "${1:-}" = "__case" ]; then
  # shellcheck source=tests/interop/cases.sh
  source "$here/cases.sh"
  run_one_case "$2" "$3" "$4" "$5"
  exit 0
fi

mode=ci
only_cases=""
only_peers=""
build=1
while [ $# -gt 0 ]; do
  case "$1" in
    --ci) mode=ci ;;
    --all) mode=all ;;
    --cases) only_cases=$2; shift ;;
    --peers) only_peers=$2; shift ;;
    --no-build) build=0 ;;
    -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
    *) echo "run.sh: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done

art="$root/artifacts/interop"
rm -rf "$art" && mkdir -p "$art"
results="$art/results.txt"
: > "$results"
export INTEROP_ART="$art"

all_cases="handshake transfer multiplexing retry chacha20 keyupdate resumption zerortt transferloss http3 handshakeloss v2 connectionmigration activemigration rebind"
ci_cases="handshake transfer http3 retry chacha20 keyupdate"
quiche_ci_cases="transfer multiplexing retry"
if [ "$mode" = all ]; then cases=$all_cases; peers="ngtcp2 quic-go quiche"; else cases=$ci_cases; peers="ngtcp2 quiche"; fi
[ -n "$only_cases" ] && cases=${only_cases//,/ }
[ -n "$only_peers" ] && peers=${only_peers//,/ }
cases_for() { # peer -> the cases run against it (--ci runs a shorter list against quiche)
  if [ "$mode" = ci ] && [ -z "$only_cases" ] && [ "$1" = quiche ]; then echo "$quiche_ci_cases"; else echo "$cases"; fi
}
directions="our-client our-server"

emit() { # one result line, to stdout and the results file
  echo "$1"
  echo "$1" >> "$results"
}
fail_all() { # every selected case fails (or is skipped) for one reason
  local word=$1 reason=$2 p d c
  for p in $peers; do for d in $directions; do for c in $(cases_for "$p"); do emit "$word $p $d $c: $reason"; done; done; done
  if [[ " $peers " == *" ngtcp2 "* ]] && [ "$mode" = all ]; then emit "$word ngtcp2 our-client tshark-decrypt: $reason"; fi
}

# --- peers ------------------------------------------------------------------------------------------------------------
peers_script=""
for candidate in "${QUIC_PEERS_SCRIPT:-}" "$root/../shared/interop/peers.sh" "$root/../../shared/interop/peers.sh" /work/shared/interop/peers.sh; do
  if [ -n "$candidate" ] && [ -f "$candidate" ]; then peers_script=$candidate; break; fi
done
peer_cache="${QUIC_PEERS_DIR:-$HOME/.cache/quic-peers}"
if [ -z "$peers_script" ]; then
  fail_all SKIP "peers.sh not found (set QUIC_PEERS_SCRIPT)"; exit 0
fi
if ! bash "$peers_script" "$peer_cache" > "$art/peers.txt" 2> "$art/peers.err"; then
  fail_all SKIP "peers.sh failed to install the peers (see artifacts/interop/peers.err)"; exit 0
fi
GTLSSERVER=$(sed -n 's/^GTLSSERVER=//p' "$art/peers.txt")
GTLSCLIENT=$(sed -n 's/^GTLSCLIENT=//p' "$art/peers.txt")
QGO_SERVER=$(sed -n 's/^QGO_SERVER=//p' "$art/peers.txt")
QGO_CLIENT=$(sed -n 's/^QGO_CLIENT=//p' "$art/peers.txt")
export GTLSSERVER GTLSCLIENT QGO_SERVER QGO_CLIENT
# quiche from npm (a cache folder outside the repo); the quiche cases skip, saying so, when it cannot be installed.
QUICHE_BINDING="" QUICHE_NODE=""
if [[ " $peers " == *" quiche "* ]]; then
  if bash "$here/quiche/install.sh" "$peer_cache/quiche-npm" > "$art/quiche.txt" 2> "$art/quiche.err"; then
    QUICHE_BINDING=$(sed -n 's/^QUICHE_BINDING=//p' "$art/quiche.txt")
    QUICHE_NODE=$(sed -n 's/^NODE=//p' "$art/quiche.txt")
  fi
fi
export QUICHE_BINDING QUICHE_NODE

# Tools the harness itself needs (root only; best effort). tshark for the checks that read the capture, ethtool to turn
# UDP GSO off on the namespace's loopback so every captured frame is one datagram.
need=()
command -v tshark >/dev/null 2>&1 || need+=(tshark)
command -v ethtool >/dev/null 2>&1 || need+=(ethtool)
if [ ${#need[@]} -gt 0 ] && [ "$(id -u)" = 0 ]; then
  echo "wireshark-common wireshark-common/install-setuid boolean false" | debconf-set-selections 2>/dev/null || true
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}") > "$art/apt.log" 2>&1 || true
fi

# quic-go's own interop-runner client and server (adapted: paths and address from the environment), built offline in
# GOPATH mode next to a copy of Debian's quic-go sources (they import quic-go/internal/..., allowed only inside its tree).
go=/usr/lib/go-1.19/bin/go
QGO_INTEROP_CLIENT="$peer_cache/qgo-interop-client"
QGO_INTEROP_SERVER="$peer_cache/qgo-interop-server"
qgo_src=/usr/share/gocode/src/github.com/lucas-clemente/quic-go
if [[ " $peers " == *" quic-go "* ]] || [ "$mode" = all ]; then
  stamp="$peer_cache/qgo-interop.stamp"
  if [ ! -x "$QGO_INTEROP_CLIENT" ] || [ ! -x "$QGO_INTEROP_SERVER" ] || [ "$here/qgo/client/main.go" -nt "$stamp" ] || [ "$here/qgo/server/main.go" -nt "$stamp" ]; then
    gp="$peer_cache/qm-gopath"
    rm -rf "$gp" && mkdir -p "$gp/src/github.com/lucas-clemente"
    if cp -r "$qgo_src" "$gp/src/github.com/lucas-clemente/" 2>> "$art/qgo-build.log" \
      && mkdir -p "$gp/src/github.com/lucas-clemente/quic-go/qm" && cp -r "$here/qgo/client" "$here/qgo/server" "$gp/src/github.com/lucas-clemente/quic-go/qm/" \
      && GO111MODULE=off GOPATH="$gp:/usr/share/gocode" GOCACHE="$peer_cache/gocache" GOFLAGS= "$go" build -o "$QGO_INTEROP_CLIENT" github.com/lucas-clemente/quic-go/qm/client >> "$art/qgo-build.log" 2>&1 \
      && GO111MODULE=off GOPATH="$gp:/usr/share/gocode" GOCACHE="$peer_cache/gocache" GOFLAGS= "$go" build -o "$QGO_INTEROP_SERVER" github.com/lucas-clemente/quic-go/qm/server >> "$art/qgo-build.log" 2>&1; then
      touch "$stamp"
    else
      rm -f "$QGO_INTEROP_CLIENT" "$QGO_INTEROP_SERVER"
    fi
  fi
fi
export QGO_INTEROP_CLIENT QGO_INTEROP_SERVER

# --- certificates and files ---------------------------------------------------------------------------------------------
certs="$art/certs"
mkdir -p "$certs"
if ! openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$certs/priv.key" -out "$certs/cert.pem" \
    -days 7 -subj /CN=localhost -addext "subjectAltName=DNS:localhost,IP:127.0.0.1" > "$art/openssl.log" 2>&1; then
  fail_all FAIL "openssl could not make the test certificate (artifacts/interop/openssl.log)"; exit 0
fi
www="$art/www"
mkdir -p "$www"
make_file() { head -c "$2" /dev/urandom > "$www/$1"; }
make_file hs-1k 1024; make_file f-5k 5000; make_file f-1m 1048576; make_file f-10m 10485760
for i in $(seq -w 1 150); do make_file "m-$i" $((1000 + 10#$i)); done
export INTEROP_CERTS="$certs" INTEROP_WWW="$www"

# --- our endpoint ---------------------------------------------------------------------------------------------------------
ep_dir="$root/tools/InteropEndpoint"
ep_dll="$ep_dir/bin/Release/net10.0/InteropEndpoint.dll"
if [ "$build" = 1 ]; then
  if ! (cd "$ep_dir" && DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 dotnet build -c Release -nologo -clp:ErrorsOnly) > "$art/build.log" 2>&1; then
    fail_all FAIL "InteropEndpoint does not build (artifacts/interop/build.log)"; exit 0
  fi
fi
if [ ! -f "$ep_dll" ]; then fail_all FAIL "InteropEndpoint not built ($ep_dll)"; exit 0; fi
export INTEROP_EP_DLL="$ep_dll"
# DatagramDumper decodes every case's capture (cases.sh dumper_checks); without it that check is left out.
dumper_dir="$root/tools/DatagramDumper"
if [ "$build" = 1 ]; then
  (cd "$dumper_dir" && DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 dotnet build -c Release -nologo -clp:ErrorsOnly) >> "$art/build.log" 2>&1 || true
fi
export INTEROP_DUMPER_DLL="$dumper_dir/bin/Release/net10.0/DatagramDumper.dll"

# --- namespaces -------------------------------------------------------------------------------------------------------
use_netns=0
if [ "$(id -u)" = 0 ] && command -v unshare >/dev/null 2>&1 && unshare -n true 2>/dev/null; then use_netns=1; fi
export INTEROP_NETNS=$use_netns

case_timeout=${INTEROP_CASE_TIMEOUT:-90}
run_case() { # peer direction case -> one result line
  local peer=$1 dir=$2 name=$3 cdir="$art/$1/$2/$3" port
  mkdir -p "$cdir"
  if [ "$use_netns" = 1 ]; then port=4433; else port=$((20000 + RANDOM % 20000)); fi
  if [ "$use_netns" = 1 ]; then
    timeout -k 5 "$case_timeout" unshare -n -- bash "$here/run.sh" __case "$peer" "$dir" "$name" "$port" > "$cdir/harness.log" 2>&1
  else
    timeout -k 5 "$case_timeout" bash "$here/run.sh" __case "$peer" "$dir" "$name" "$port" > "$cdir/harness.log" 2>&1
  fi
  local rc=$?
  if [ -s "$cdir/result" ]; then
    emit "$(head -n 1 "$cdir/result")"
  elif [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
    emit "FAIL $peer $dir $name: case exceeded ${case_timeout} s (harness timeout)"
  else
    emit "FAIL $peer $dir $name: harness error (exit $rc, see $cdir/harness.log)"
  fi
}

# --- harness self-check: peers against each other (not our results) ---------------------------------------------------
self_check() {
  local cdir="$art/self-check" rc
  mkdir -p "$cdir"
  if [ "$use_netns" = 1 ]; then
    timeout -k 5 60 unshare -n -- bash -c 'source "$1/cases.sh"; self_check_body "$2"' _ "$here" "$cdir" > "$cdir/harness.log" 2>&1
  else
    timeout -k 5 60 bash -c 'source "$1/cases.sh"; self_check_body "$2"' _ "$here" "$cdir" > "$cdir/harness.log" 2>&1
  fi
  rc=$?
  if [ -s "$cdir/notes" ]; then cat "$cdir/notes"; else echo "NOTE self-check: no result (exit $rc, see $cdir/harness.log)"; fi
}
self_check

for peer in $peers; do
  for dir in $directions; do
    for name in $(cases_for "$peer"); do
      run_case "$peer" "$dir" "$name"
    done
  done
done
if [ "$mode" = all ] && [[ " $peers " == *" ngtcp2 "* ]] && [ -z "$only_cases" ]; then
  run_case ngtcp2 our-client tshark-decrypt
fi

if [ "$mode" = all ] && [ -z "$only_cases" ] && [ -z "$only_peers" ]; then
  bash "$here/write_report.sh" "$results" "$root/docs/INTEROP.md" "$art"
  echo "NOTE report written to docs/INTEROP.md"
fi
exit 0
