#!/usr/bin/env bash
# The public API tests (namespace System.Net.Quic.Managed.Tests.Api, both providers; the msquic rows skip, saying why,
# without libmsquic) run ROUNDS times in a row (default 10) while two busy loops keep both cores of a 2-core machine
# loaded: timing-sensitive code must not stall when the driver threads get little CPU. Builds first unless
# STRESS_NO_BUILD=1. Prints one line per round and a summary; exits non-zero if any round had a failure.
#   tests/stress-api.sh [ROUNDS]
set -uo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-10}
results=${STRESS_RESULTS:-artifacts/stress-api}
project=tests/System.Net.Quic.Managed.Tests
rm -rf "$results" && mkdir -p "$results"
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1
if [ "${STRESS_NO_BUILD:-0}" != 1 ]; then
  dotnet build "$project" -c Release -nologo -clp:ErrorsOnly >/dev/null || { echo "build failed"; exit 1; }
fi

busy=()
stop_busy() { for p in "${busy[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done; busy=(); }
trap stop_busy EXIT
sh -c 'while :; do :; done' & busy+=($!)
sh -c 'while :; do :; done' & busy+=($!)

failed_rounds=0; total_failed=0
for round in $(seq 1 "$rounds"); do
  start=$(date +%s)
  dotnet test "$project" -c Release --no-build --nologo --filter "FullyQualifiedName~System.Net.Quic.Managed.Tests.Api." \
    --logger "trx;LogFileName=round$round.trx" --results-directory "$results" --blame-hang-timeout 5m \
    > "$results/round$round.log" 2>&1
  rc=$?
  counters=$(grep -o "<Counters [^>]*" "$results/round$round.trx" 2>/dev/null)
  get() { echo "$counters" | grep -o " $1=\"[0-9]*\"" | grep -o "[0-9]*"; }
  passed=$(get passed); failed=$(get failed); total=$(get total); executed=$(get executed)
  passed=${passed:-0}; failed=${failed:-0}; skipped=$(( ${total:-0} - ${executed:-0} ))
  [ "$rc" -ne 0 ] && [ "$failed" -eq 0 ] && failed=1 # the run failed outside any test (hang, crash)
  echo "round $round: $passed passed, $failed failed, $skipped skipped ($(( $(date +%s) - start )) s)"
  if [ "$failed" -gt 0 ]; then
    failed_rounds=$((failed_rounds + 1)); total_failed=$((total_failed + failed))
    grep -E "^\s+Failed " "$results/round$round.log" | sed 's/^/  /'
  fi
done
stop_busy
echo "stress-api: $rounds rounds under two busy loops, $failed_rounds with failures ($total_failed failed tests)"
[ "$failed_rounds" -eq 0 ]
