#!/usr/bin/env bash
# Protocol study: TCP+TLS 1.3 (SslStream) vs managed QUIC through the same userspace packet emulator.
# For each one-way delay {0,10,20,50} ms and loss {0,1,5} % (both directions, seeded), measures handshake, time to first
# byte, transfer and close time for 1 KiB, 1 MiB and 32 MiB responses, N repetitions each (fresh connection each time).
# Link: 100 Mbit/s bottleneck per direction with a 512 KiB drop-tail queue (see docs/STUDY.md).
# Usage: run-study.sh [output-dir]   (default benchmarks/study/results). Requires root. Cleans up on any exit.
# Environment: DELAYS, LOSSES (percent), REPS, REPS_LARGE_LOSSY, TIMEOUT_S, RATE_MBIT, QUEUE_KB override the defaults.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
OUT="$(mkdir -p "${1:-$HERE/results}" && cd "${1:-$HERE/results}" && pwd)"
export STUDY_STATE="${STUDY_STATE:-/tmp/linkemu-study}"
DELAYS="${DELAYS:-0 10 20 50}"
LOSSES="${LOSSES:-0 1 5}"
REPS="${REPS:-3}"
REPS_LARGE_LOSSY="${REPS_LARGE_LOSSY:-1}"
TIMEOUT_S="${TIMEOUT_S:-30}"
RATE_MBIT="${RATE_MBIT:-100}"
QUEUE_KB="${QUEUE_KB:-512}"
SMALL=1024; MEDIUM=1048576; LARGE=33554432

dotnet build -c Release "$ROOT/tools/LinkEmulator" -v q -nologo >/dev/null
EMU_DLL="$ROOT/tools/LinkEmulator/bin/Release/net10.0/LinkEmulator.dll"
export EMU_DLL

cleanup() { "$HERE/netns-teardown.sh" >/dev/null 2>&1 || true; }
trap cleanup EXIT INT TERM
cleanup

rm -f "$OUT/results.csv" "$OUT/verification.csv" "$OUT"/emulator-*.json
echo "delay_ms,loss_pct,ping_sent,ping_received,ping_rtt_min_ms,ping_rtt_avg_ms,ping_rtt_max_ms" >"$OUT/verification.csv"
{
  echo "started=$(date -u +%FT%TZ)"
  echo "host_kernel=$(uname -r)"
  echo "dotnet=$(dotnet --version)"
  echo "rate_mbit=$RATE_MBIT queue_kb=$QUEUE_KB reps=$REPS reps_32mib_lossy=$REPS_LARGE_LOSSY timeout_s=$TIMEOUT_S"
} >"$OUT/run-info.txt"

start_server() { # proto port
  ip netns exec server dotnet "$EMU_DLL" probe server --proto "$1" --listen "10.200.2.1:$2" >>"$STUDY_STATE/probe-$1.log" 2>&1 &
  echo $! >"$STUDY_STATE/probe-$1.pid"
}

wait_listening() { # proto port -> 0 when listening, 3 when the server said "not run"
  for _ in $(seq 1 60); do
    if ! kill -0 "$(cat "$STUDY_STATE/probe-$1.pid")" 2>/dev/null; then return 3; fi
    if [[ "$1" == tcp ]] && ip netns exec server ss -ltn | grep -q ":$2 "; then return 0; fi
    if [[ "$1" == quic ]] && ip netns exec server ss -lun | grep -q ":$2 "; then return 0; fi
    sleep 0.1
  done
  return 3
}

QUIC_STATUS="not checked"
for delay in $DELAYS; do
  for loss in $LOSSES; do
    lossp=$(python3 -c "print($loss/100)")
    echo "=== delay ${delay} ms, loss ${loss} % ($(date -u +%T))"
    "$HERE/netns-setup.sh" --delay-ms "$delay" --loss "$lossp" --rate-mbit "$RATE_MBIT" --queue-kb "$QUEUE_KB" \
      --seed "$((delay * 100 + loss + 1))" --stats-interval-s 5 >/dev/null
    # Verify the impairment with ICMP before the probes: RTT should be 2 x delay (+ serialization), loss as configured.
    ping_out="$(ip netns exec client ping -n -q -c 20 -i 0.05 -W 2 10.200.2.1 || true)"
    sent=$(sed -n 's/^\([0-9]*\) packets transmitted, \([0-9]*\) received.*/\1/p' <<<"$ping_out")
    recv=$(sed -n 's/^\([0-9]*\) packets transmitted, \([0-9]*\) received.*/\2/p' <<<"$ping_out")
    rtt=$(sed -n 's|^rtt min/avg/max/mdev = \([0-9.]*\)/\([0-9.]*\)/\([0-9.]*\)/.*|\1,\2,\3|p' <<<"$ping_out")
    echo "$delay,$loss,${sent:-0},${recv:-0},${rtt:-,,}" >>"$OUT/verification.csv"

    if [[ "$loss" == 0 ]]; then large_reps=$REPS; else large_reps=$REPS_LARGE_LOSSY; fi
    sizes="$SMALL:$REPS,$MEDIUM:$REPS,$LARGE:$large_reps"

    start_server tcp 4433
    if wait_listening tcp 4433; then
      timeout 400 ip netns exec client dotnet "$EMU_DLL" probe client --proto tcp --connect 10.200.2.1:4433 --sizes "$sizes" \
        --timeout-s "$TIMEOUT_S" --delay-label "$delay" --loss-label "$loss" --out "$OUT/results.csv" || true
    else
      echo "tcp probe server did not start: $(tail -3 "$STUDY_STATE/probe-tcp.log")" >&2
    fi

    if [[ "$QUIC_STATUS" != not-run* ]]; then
      start_server quic 4434
      if wait_listening quic 4434; then
        QUIC_STATUS=run
        rc=0
        timeout 400 ip netns exec client dotnet "$EMU_DLL" probe client --proto quic --connect 10.200.2.1:4434 --sizes "$sizes" \
          --timeout-s "$TIMEOUT_S" --delay-label "$delay" --loss-label "$loss" --out "$OUT/results.csv" || rc=$?
        [[ $rc == 3 ]] && QUIC_STATUS="not-run: $(grep -h 'not run' "$STUDY_STATE/probe-quic.log" | tail -1)"
      else
        QUIC_STATUS="not-run: $(grep -h 'not run' "$STUDY_STATE/probe-quic.log" | tail -1)"
      fi
    fi

    "$HERE/netns-teardown.sh"
    cp "$STUDY_STATE/emulator-stats.json" "$OUT/emulator-d${delay}-l${loss}.json"
    rm -f "$STUDY_STATE"/probe-*.log
  done
done
echo "quic_managed=$QUIC_STATUS" >>"$OUT/run-info.txt"
echo "msquic=not run: libmsquic not available on this machine" >>"$OUT/run-info.txt"
echo "finished=$(date -u +%FT%TZ)" >>"$OUT/run-info.txt"
python3 "$HERE/make-report.py" "$OUT" "$ROOT/docs"
