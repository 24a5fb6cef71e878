#!/usr/bin/env bash
# Congestion-control comparison: managed QUIC with NewReno, CUBIC and BBR (the server's
# QuicConnectionOptions.CongestionControlAlgorithm: the server sends the responses), and TCP+TLS 1.3 with the kernel's
# CUBIC and BBR (set per server network namespace) for reference, through the same userspace link emulator as
# run-study.sh: 25 ms one-way delay (50 ms RTT), 100 Mbit/s bottleneck per direction, 512 KiB drop-tail queue,
# 0/1/5 % random loss in both directions (seeded). Each repetition is a fresh connection downloading SIZE bytes.
# Usage: run-cc-study.sh [output-dir]   (default benchmarks/study/results-cc). Requires root. Cleans up on any exit.
# Environment: SKIP_BUILD=1 uses the LinkEmulator already built; LOSSES (percent), REPS, SIZE (bytes), DELAY_MS (one-way), TIMEOUT_S, QUIC_CCS, TCP_CCS override the defaults.
# Output: results.csv (client timings, protocol column quic-managed-<cc> / tcp-tls-<cc>), quic-stats-l<loss>-<cc>.csv (server-side
# QuicConnectionStatistics per connection), run-info.txt; then make-cc-report.py writes docs/study-cc.md.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
OUT="$(mkdir -p "${1:-$HERE/results-cc}" && cd "${1:-$HERE/results-cc}" && pwd)"
export STUDY_STATE="${STUDY_STATE:-/tmp/linkemu-cc-study}"
LOSSES="${LOSSES:-0 1 5}"
REPS="${REPS:-3}"
SIZE="${SIZE:-8388608}"
DELAY_MS="${DELAY_MS:-25}"
TIMEOUT_S="${TIMEOUT_S:-150}"
RATE_MBIT="${RATE_MBIT:-100}"
QUEUE_KB="${QUEUE_KB:-512}"
QUIC_CCS="${QUIC_CCS:-newreno cubic bbr}"
TCP_CCS="${TCP_CCS:-cubic bbr}"

[[ "${SKIP_BUILD:-0}" == 1 ]] || dotnet build -c Release "$ROOT/tools/LinkEmulator" -v q -nologo >/dev/null
EMU_DLL="$ROOT/tools/LinkEmulator/bin/Release/net10.0/LinkEmulator.dll"
export EMU_DLL

cleanup() {
  [[ -f "$STUDY_STATE/probe.pid" ]] && kill "$(cat "$STUDY_STATE/probe.pid")" 2>/dev/null || true
  "$HERE/netns-teardown.sh" >/dev/null 2>&1 || true
}
trap cleanup EXIT INT TERM
cleanup
mkdir -p "$STUDY_STATE"

rm -f "$OUT/results.csv" "$OUT"/quic-stats-*.csv "$OUT"/emulator-*.json
{
  echo "started=$(date -u +%FT%TZ)"
  echo "host_kernel=$(uname -r)"
  echo "dotnet=$(dotnet --version)"
  echo "rate_mbit=$RATE_MBIT queue_kb=$QUEUE_KB delay_ms=$DELAY_MS size=$SIZE reps=$REPS timeout_s=$TIMEOUT_S"
  echo "nproc=$(nproc) loadavg_start=$(cut -d' ' -f1-3 /proc/loadavg | tr ' ' '/')"
} >"$OUT/run-info.txt"

start_server() { # proto port [extra args...]
  local proto=$1 port=$2; shift 2
  ip netns exec server dotnet "$EMU_DLL" probe server --proto "$proto" --listen "10.200.2.1:$port" "$@" >>"$STUDY_STATE/probe.log" 2>&1 &
  echo $! >"$STUDY_STATE/probe.pid"
  for _ in $(seq 1 100); do
    if [[ "$proto" == tcp ]] && ip netns exec server ss -ltn | grep -q ":$port "; then return 0; fi
    if [[ "$proto" == quic ]] && ip netns exec server ss -lun | grep -q ":$port "; then return 0; fi
    sleep 0.1
  done
  echo "probe server did not start: $(tail -3 "$STUDY_STATE/probe.log")" >&2
  return 1
}

stop_server() {
  kill "$(cat "$STUDY_STATE/probe.pid")" 2>/dev/null || true
  wait "$(cat "$STUDY_STATE/probe.pid")" 2>/dev/null || true
  rm -f "$STUDY_STATE/probe.pid"
}

for loss in $LOSSES; do
  lossp=$(python3 -c "print($loss/100)")
  echo "=== loss ${loss} % ($(date -u +%T))"
  "$HERE/netns-setup.sh" --delay-ms "$DELAY_MS" --loss "$lossp" --rate-mbit "$RATE_MBIT" --queue-kb "$QUEUE_KB" \
    --seed "$((DELAY_MS * 100 + loss + 1))" --stats-interval-s 5 >/dev/null
  for cc in $QUIC_CCS; do
    echo "  quic $cc ($(date -u +%T))"
    start_server quic 4434 --cc "$cc" --stats-out "$OUT/quic-stats-l${loss}-${cc}.csv"
    timeout $((REPS * (TIMEOUT_S + 10) + 60)) ip netns exec client dotnet "$EMU_DLL" probe client --proto quic --cc "$cc" \
      --connect 10.200.2.1:4434 --sizes "$SIZE:$REPS" --timeout-s "$TIMEOUT_S" --delay-label "$DELAY_MS" --loss-label "$loss" \
      --out "$OUT/results.csv" >/dev/null || true
    sleep 1 # the server appends its statistics line after the client's close
    stop_server
  done
  for cc in $TCP_CCS; do
    echo "  tcp $cc ($(date -u +%T))"
    # The sender is the server: its namespace's default congestion control applies to the accepted connections. Outside
    # the initial namespace the kernel only lets an allowed one (net.ipv4.tcp_allowed_congestion_control) be the default.
    if ! ip netns exec server sysctl -q -w net.ipv4.tcp_congestion_control="$cc" 2>/dev/null; then
      echo "tcp_cc_loss${loss}_${cc}=not run: not in net.ipv4.tcp_allowed_congestion_control ($(sysctl -n net.ipv4.tcp_allowed_congestion_control))" >>"$OUT/run-info.txt"
      continue
    fi
    echo "tcp_cc_loss${loss}_${cc}=$(ip netns exec server sysctl -n net.ipv4.tcp_congestion_control)" >>"$OUT/run-info.txt"
    start_server tcp 4433
    timeout $((REPS * (TIMEOUT_S + 10) + 60)) ip netns exec client dotnet "$EMU_DLL" probe client --proto tcp \
      --connect 10.200.2.1:4433 --sizes "$SIZE:$REPS" --timeout-s "$TIMEOUT_S" --delay-label "$DELAY_MS" --loss-label "$loss" \
      --out "$OUT/results.csv.tcp" >/dev/null || true
    stop_server
    # Name the TCP rows after the kernel congestion control that sent them.
    if [[ -f "$OUT/results.csv.tcp" ]]; then
      [[ -f "$OUT/results.csv" ]] || head -1 "$OUT/results.csv.tcp" >"$OUT/results.csv"
      tail -n +2 "$OUT/results.csv.tcp" | sed "s/^tcp-tls,/tcp-tls-$cc,/" >>"$OUT/results.csv"
      rm -f "$OUT/results.csv.tcp"
    fi
  done
  "$HERE/netns-teardown.sh"
  cp "$STUDY_STATE/emulator-stats.json" "$OUT/emulator-l${loss}.json" 2>/dev/null || true
done
echo "loadavg_end=$(cut -d' ' -f1-3 /proc/loadavg | tr ' ' '/')" >>"$OUT/run-info.txt"
echo "finished=$(date -u +%FT%TZ)" >>"$OUT/run-info.txt"
python3 "$HERE/make-cc-report.py" "$OUT" "$ROOT/docs"
