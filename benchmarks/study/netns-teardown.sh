#!/usr/bin/env bash
# Stops the emulator started by netns-setup.sh (SIGTERM: it writes its final counters) and deletes both namespaces.
# Safe to run more than once.
set -uo pipefail
STATE="${STUDY_STATE:-/tmp/linkemu-study}"
for pidfile in "$STATE"/probe-*.pid "$STATE/emulator.pid"; do
  [[ -f "$pidfile" ]] || continue
  pid="$(cat "$pidfile")"
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid" 2>/dev/null
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null
  fi
  rm -f "$pidfile"
done
ip netns del client 2>/dev/null || true
ip netns del server 2>/dev/null || true
# The TUN devices disappear with the emulator's fds; remove leftovers from a crashed run just in case.
ip link del emuA 2>/dev/null || true
ip link del emuB 2>/dev/null || true
exit 0
