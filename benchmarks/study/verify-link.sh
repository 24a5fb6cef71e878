#!/usr/bin/env bash
# Checks the emulated link with ICMP alone: ping COUNT echoes through the emulator, then compares ping's view
# (replies, RTT) with the emulator's own counters (packets in, dropped, mean added delay) for the same traffic.
# Usage: verify-link.sh COUNT [LinkEmulator options...]   e.g. verify-link.sh 200 --delay-ms 20 --loss 0.05 --seed 1
# Requires root.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
export STUDY_STATE="${STUDY_STATE:-/tmp/linkemu-study}"
COUNT="$1"; shift
trap '"$HERE/netns-teardown.sh" >/dev/null 2>&1 || true' EXIT INT TERM
"$HERE/netns-teardown.sh" >/dev/null 2>&1 || true
# netns-setup.sh switches IPv6 off in both namespaces, so the emulator sees only the pings.
"$HERE/netns-setup.sh" "$@" >/dev/null
ip netns exec client ping -n -q -c "$COUNT" -i 0.01 -W 2 10.200.2.1 | tail -2
sleep 0.5
kill -USR1 "$(cat "$STUDY_STATE/emulator.pid")"; sleep 0.3
python3 - "$STUDY_STATE/emulator-stats.json" "$COUNT" <<'PY'
import json, sys
j = json.load(open(sys.argv[1])); count = int(sys.argv[2])
imp = j["impairment"]
for name in ("emuA->emuB", "emuB->emuA"):
    c = j[name]
    print(f"{name}: in {c['packetsIn']} forwarded {c['packetsForwarded']} droppedLoss {c['droppedLoss']} "
          f"({100.0 * c['droppedLoss'] / max(c['packetsIn'], 1):.2f} %, configured {100 * imp['lossProbability']:g} %) "
          f"droppedQueue {c['droppedQueueFull']} delayed {c['delayed']} meanAddedDelay {c['meanAddedDelayUs']} us "
          f"(configured {imp['delayUs']} us) releaseLateness mean {c['meanReleaseLatenessUs']} max {c['maxReleaseLatenessUs']} us")
a, b = j["emuA->emuB"], j["emuB->emuA"]
print(f"expected replies = requests forwarded - replies dropped = {a['packetsForwarded']} - {b['droppedTotal']} = {a['packetsForwarded'] - b['droppedTotal']}")
PY
