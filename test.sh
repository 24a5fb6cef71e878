#!/usr/bin/env bash
# The whole test suite: unit, RFC-vector, simulation and loopback tests (xUnit; the API tests a second time on the
# portable I/O path), the packages and samples as users take them, then interop cases against independent stacks
# where tests/interop/run.sh exists. Installs what it needs (root).
# Ends with one line: "N passed, N failed, N skipped", counted from the real results.
set -uo pipefail
cd "$(dirname "$0")"
root=$(pwd)
results="$root/artifacts/test-results"
rm -rf "$results" && mkdir -p "$results"

need_apt=()
# chromium, caddy: the HTTP/3 tests (tests/QuicManaged.Http.Tests) run against them and skip, saying so, without them.
for p in openssl chromium caddy; do dpkg -s "$p" >/dev/null 2>&1 || need_apt+=("$p"); done
if [ ${#need_apt[@]} -gt 0 ] && [ "$(id -u)" = 0 ]; then
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}") >/dev/null 2>&1 \
    || echo "test.sh: could not install ${need_apt[*]}; tests that need them will say so" >&2
fi

export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 DOTNET_SKIP_FIRST_TIME_EXPERIENCE=1
dotnet restore QuicManaged.sln >/dev/null || { echo "restore failed"; echo "0 passed, 1 failed"; exit 1; }
if ! dotnet build QuicManaged.sln -c Release --no-restore -nologo -clp:ErrorsOnly; then
  echo "build failed"; echo "0 passed, 1 failed"; exit 1
fi

dotnet test tests/System.Net.Quic.Managed.Tests -c Release --no-build --nologo \
  --logger "trx;LogFileName=unit.trx" --results-directory "$results" \
  --blame-hang-timeout 5m -- RunConfiguration.TestSessionTimeout=1500000
unit_rc=$?
# The API tests once more on the portable I/O path (what Windows and macOS run: Socket.ReceiveFrom, no recvmmsg/GRO, GSO,
# eventfd or ECN socket options), switched on by QUIC_MANAGED_PORTABLE_IO; counted like the rest (about a minute).
QUIC_MANAGED_PORTABLE_IO=1 dotnet test tests/System.Net.Quic.Managed.Tests -c Release --no-build --nologo \
  --filter "FullyQualifiedName~System.Net.Quic.Managed.Tests.Api." \
  --logger "trx;LogFileName=api-portable-io.trx" --results-directory "$results" \
  --blame-hang-timeout 5m -- RunConfiguration.TestSessionTimeout=900000
portable_rc=$?
[ "$unit_rc" -eq 0 ] && unit_rc=$portable_rc
# The interop peers script (idempotent; the interop cases below use it too) installs ngtcp2 and quic-go: DatagramDumper's
# capture tests decode traffic with ngtcp2's gtlsclient, and the HTTP/3 tests run against the ngtcp2 and quic-go servers.
# quiche the capture tests install themselves (tests/interop/quiche/install.sh); without a peer a test skips, saying why.
for candidate in "${QUIC_PEERS_SCRIPT:-}" "$root/../shared/interop/peers.sh" /work/shared/interop/peers.sh; do
  [ -n "$candidate" ] && [ -f "$candidate" ] || continue
  while IFS='=' read -r name path; do
    case "$name" in GTLSSERVER|QGO_SERVER) [ -n "$path" ] && export "$name=$path" ;; esac
  done < <(bash "$candidate" "${QUIC_PEERS_DIR:-$HOME/.cache/quic-peers}" 2>/dev/null)
  break
done
# The tools' tests (DatagramDumper, LinkEmulator, QuicPerf and QuicLoad command lines).
dotnet test tests/QuicManaged.Tools.Tests -c Release --no-build --nologo \
  --logger "trx;LogFileName=tools.trx" --results-directory "$results" \
  --blame-hang-timeout 5m -- RunConfiguration.TestSessionTimeout=900000
tools_rc=$?
[ "$unit_rc" -eq 0 ] && unit_rc=$tools_rc
# HTTP/3 packages (QuicManaged.AspNetCore, QuicManaged.Http) against Kestrel, Chromium, Caddy, ngtcp2, quic-go.
dotnet test tests/QuicManaged.Http.Tests -c Release --no-build --nologo \
  --logger "trx;LogFileName=http.trx" --results-directory "$results" \
  --blame-hang-timeout 5m -- RunConfiguration.TestSessionTimeout=900000
http_rc=$?
[ "$unit_rc" -eq 0 ] && unit_rc=$http_rc

passed=0; failed=0; skipped=0
count() { # sums one attribute of <Counters .../> over all trx files
  local attr=$1 sum=0 v
  for f in "$results"/*.trx; do
    [ -f "$f" ] || continue
    v=$(grep -o "<Counters [^>]*" "$f" | grep -o " $attr=\"[0-9]*\"" | grep -o "[0-9]*")
    sum=$((sum + ${v:-0}))
  done
  echo $sum
}
passed=$(count passed); failed=$(count failed); total=$(count total); executed=$(count executed)
skipped=$((total - executed))
if [ "$unit_rc" -ne 0 ] && [ "$failed" -eq 0 ]; then failed=1; echo "test.sh: the test run failed outside any test (exit $unit_rc)"; fi

# Fuzz targets (tests/Fuzz): every seed and every past crash replayed through its target without AFL (deterministic,
# about a second); one PASS/FAIL line per target. The AFL++ smoke (tests/Fuzz/smoke.sh) and the long campaign
# (tests/Fuzz/campaign.sh) run on demand: docs/RELIABILITY.md.
FUZZ_NO_BUILD=1 tests/Fuzz/smoke.sh --replay > "$results/fuzz-replay.log" 2>&1
grep -E '^(PASS|FAIL) ' "$results/fuzz-replay.log" | tee "$results/fuzz-replay.txt"
if ! grep -q '^PASS ' "$results/fuzz-replay.txt"; then echo "FAIL fuzz-replay: ran no target ($(tail -n 2 "$results/fuzz-replay.log" | tr '\n' ' '))" | tee -a "$results/fuzz-replay.txt"; fi
passed=$((passed + $(grep -c '^PASS ' "$results/fuzz-replay.txt"))); failed=$((failed + $(grep -c '^FAIL ' "$results/fuzz-replay.txt")))

# AFL++ smoke: every fuzz target under afl-fuzz for a bounded time (10 s each here; FUZZ_SECONDS to change), failing on
# any crash or hang. QUIC_SKIP_FUZZ_SMOKE=1 leaves it out (the replay above still runs).
if [ "${QUIC_SKIP_FUZZ_SMOKE:-0}" != 1 ]; then
  FUZZ_SECONDS="${FUZZ_SECONDS:-10}" tests/Fuzz/smoke.sh > "$results/fuzz-smoke.log" 2>&1
  grep -E '^(PASS|FAIL) ' "$results/fuzz-smoke.log" | tee "$results/fuzz-smoke.txt"
  if ! grep -q '^PASS ' "$results/fuzz-smoke.txt"; then echo "FAIL fuzz-smoke: ran no target ($(tail -n 2 "$results/fuzz-smoke.log" | tr '\n' ' '))" | tee -a "$results/fuzz-smoke.txt"; fi
  passed=$((passed + $(grep -c '^PASS ' "$results/fuzz-smoke.txt"))); failed=$((failed + $(grep -c '^FAIL ' "$results/fuzz-smoke.txt")))
fi

# The README's main job (QuicPerf) still runs: a short loopback transfer, and -s/-c as two processes.
perf_dll=tools/QuicPerf/bin/Release/net10.0/QuicPerf.dll
{
  if out=$(timeout 60 dotnet "$perf_dll" -t 2 2>&1) && echo "$out" | grep -q '^second 1: .* gbit/s (.* bytes received)' \
      && echo "$out" | grep -q 'time to first byte'; then echo "PASS quicperf loopback"
  else echo "FAIL quicperf loopback: $(echo "$out" | tail -n 2 | tr '\n' ' ')"; fi
  timeout 30 dotnet "$perf_dll" -s -p 18089 > "$results/quicperf-server.log" 2>&1 &
  perf_server=$!
  for _ in $(seq 1 100); do grep -q "serving on" "$results/quicperf-server.log" 2>/dev/null && break; sleep 0.1; done
  if out=$(timeout 30 dotnet "$perf_dll" -c 127.0.0.1 -p 18089 -t 2 2>&1) && echo "$out" | grep -q '^second 1: .* gbit/s'; then echo "PASS quicperf server-client"
  else echo "FAIL quicperf server-client: $(echo "$out" | tail -n 2 | tr '\n' ' ')"; fi
  kill "$perf_server" 2>/dev/null; wait "$perf_server" 2>/dev/null
} | tee "$results/quicperf.txt"
passed=$((passed + $(grep -c '^PASS ' "$results/quicperf.txt"))); failed=$((failed + $(grep -c '^FAIL ' "$results/quicperf.txt")))

# The NuGet package and the samples that consume it from a local feed: one "PASS/FAIL samples ..." line.
if [ -x samples/run.sh ]; then
  samples/run.sh | tee "$results/samples.txt"
  passed=$((passed + $(grep -c '^PASS ' "$results/samples.txt"))); failed=$((failed + $(grep -c '^FAIL ' "$results/samples.txt")))
fi

# The packages as a company takes them (tests/packaging/check-packages.sh): packed from a clean clone of HEAD, license,
# README, symbols and commit inspected, both .NET tools installed and run, two clones built to identical DLLs. One
# "PASS/FAIL packaging ..." line per check. QUIC_SKIP_PACKAGING=1 leaves it out (a few minutes).
if [ "${QUIC_SKIP_PACKAGING:-0}" != 1 ]; then
  tests/packaging/check-packages.sh | tee "$results/packaging.txt"
  passed=$((passed + $(grep -c '^PASS ' "$results/packaging.txt"))); failed=$((failed + $(grep -c '^FAIL ' "$results/packaging.txt")))
  skipped=$((skipped + $(grep -c '^SKIP ' "$results/packaging.txt")))
  grep -qE '^(PASS|FAIL|SKIP) ' "$results/packaging.txt" || { echo "FAIL packaging: the check printed no result"; failed=$((failed + 1)); }
fi

# Interop cases against independent stacks write "PASS name" / "FAIL name" / "SKIP name: reason" lines.
if [ -x tests/interop/run.sh ] && [ "${QUIC_SKIP_INTEROP:-0}" != 1 ]; then
  tests/interop/run.sh --ci | tee "$results/interop.txt"
  ip=$(grep -c '^PASS ' "$results/interop.txt"); if_=$(grep -c '^FAIL ' "$results/interop.txt"); is=$(grep -c '^SKIP ' "$results/interop.txt")
  passed=$((passed + ip)); failed=$((failed + if_)); skipped=$((skipped + is))
fi

# The names of failed tests, so that a failing run says which (the summary line stays last).
for f in "$results"/*.trx; do
  [ -f "$f" ] || continue
  grep -o '<UnitTestResult [^>]*outcome="Failed"' "$f" | grep -o 'testName="[^"]*"' \
    | sed "s/^testName=\"\(.*\)\"$/FAILED $(basename "$f" .trx): \1/" | sed 's/&quot;/"/g'
done
grep -h '^FAIL ' "$results"/*.txt 2>/dev/null | sed 's/^/FAILED /'
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
