#!/usr/bin/env bash
# Builds the emulated link:  netns client (emuA 10.200.1.1/24)  <-- LinkEmulator (root netns) -->  netns server (emuB 10.200.2.1/24)
# The emulator creates both TUN devices in the root namespace and keeps their fds; the devices are then moved into the
# namespaces. Packets are not rewritten: each side routes the other /24 into its TUN, the emulator copies raw IP packets
# across after applying delay/loss/rate.
# Usage: netns-setup.sh [LinkEmulator options, e.g. --delay-ms 10 --loss 0.01 --seed 1]
# State (pid file, emulator log, stats JSON) goes to $STUDY_STATE (default /tmp/linkemu-study).
# Undo with netns-teardown.sh. Requires root.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
STATE="${STUDY_STATE:-/tmp/linkemu-study}"
EMU_DLL="${EMU_DLL:-$ROOT/tools/LinkEmulator/bin/Release/net10.0/LinkEmulator.dll}"
mkdir -p "$STATE"

if [[ ! -f "$EMU_DLL" ]]; then
  dotnet build -c Release "$ROOT/tools/LinkEmulator" -v q -nologo >/dev/null
fi

fail() { echo "netns-setup: $*" >&2; "$HERE/netns-teardown.sh" || true; exit 1; }

ip netns add client
ip netns add server
ip -n client link set lo up
ip -n server link set lo up
# IPv4 only: without this the TUNs send IPv6 router/multicast-listener messages that the counters would include.
for ns in client server; do
  ip netns exec "$ns" sysctl -q -w net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
done

dotnet "$EMU_DLL" --tun-a emuA --tun-b emuB --stats-json "$STATE/emulator-stats.json" "$@" >"$STATE/emulator.log" 2>&1 &
echo $! >"$STATE/emulator.pid"

for _ in $(seq 1 100); do
  if ip link show emuA >/dev/null 2>&1 && ip link show emuB >/dev/null 2>&1; then break; fi
  kill -0 "$(cat "$STATE/emulator.pid")" 2>/dev/null || fail "emulator exited: $(cat "$STATE/emulator.log")"
  sleep 0.05
done
ip link show emuB >/dev/null 2>&1 || fail "TUN devices did not appear"

ip link set emuA netns client
ip link set emuB netns server
ip -n client addr add 10.200.1.1/24 dev emuA
ip -n server addr add 10.200.2.1/24 dev emuB
ip -n client link set emuA up
ip -n server link set emuB up
ip -n client route add 10.200.2.0/24 dev emuA
ip -n server route add 10.200.1.0/24 dev emuB
echo "netns-setup: client 10.200.1.1 (emuA) <-> server 10.200.2.1 (emuB), emulator pid $(cat "$STATE/emulator.pid"), args: $*"
