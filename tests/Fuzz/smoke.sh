#!/usr/bin/env bash
# Fuzz smoke test: QuicManaged's untrusted inputs (decoders, the TLS engine, server and client endpoints) under AFL++,
# with the library instrumented by SharpFuzz.
#
#   tests/Fuzz/smoke.sh [TARGET...]           every target (or the ones named) under afl-fuzz for FUZZ_SECONDS each
#                                             (default 20), one at a time; exits non-zero if any crash or hang is found
#   tests/Fuzz/smoke.sh --replay [TARGET...]  no AFL: every file of tests/Fuzz/corpus/TARGET and
#                                             tests/Fuzz/regressions/TARGET through its target (fast, deterministic)
#
# Prints one line per target: "PASS fuzz TARGET: N execs, M paths" or "FAIL fuzz TARGET: ...", then
# "fuzz: N passed, N failed". Installs afl++ (apt) and the SharpFuzz.CommandLine dotnet tool when missing (root).
# Env: FUZZ_SECONDS (per target), FUZZ_NO_BUILD=1 (replay: use the existing Release build), FUZZ_WORK (scratch, default artifacts/fuzz), FUZZ_TIMEOUT_MS (AFL -t, default 5000).
# Findings stay in $FUZZ_WORK/out/TARGET/default/{crashes,hangs}; replay one with
#   dotnet tests/Fuzz/QuicManaged.Fuzz/bin/Release/net10.0/QuicManaged.Fuzz.dll TARGET --replay FILE
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
fuzz="$root/tests/Fuzz"
project="$fuzz/QuicManaged.Fuzz/QuicManaged.Fuzz.csproj"
seconds=${FUZZ_SECONDS:-20}
work=${FUZZ_WORK:-$root/artifacts/fuzz}
timeout_ms=${FUZZ_TIMEOUT_MS:-5000}
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 DOTNET_SKIP_FIRST_TIME_EXPERIENCE=1

replay=0
if [ "${1:-}" = "--replay" ]; then replay=1; shift; fi
targets=("$@")

if [ "$replay" = 1 ]; then
  # Uninstrumented build in the project's own bin/ (the one a Release build of QuicManaged.sln makes; FUZZ_NO_BUILD=1
  # uses it as it is).
  dll="$fuzz/QuicManaged.Fuzz/bin/Release/net10.0/QuicManaged.Fuzz.dll"
  if [ "${FUZZ_NO_BUILD:-0}" != 1 ] || [ ! -f "$dll" ]; then
    dotnet build "$project" -c Release -nologo -v q -clp:ErrorsOnly >/dev/null || { echo "FAIL fuzz-replay: build failed"; echo "fuzz-replay: 0 passed, 1 failed"; exit 1; }
  fi
  if [ ${#targets[@]} -eq 0 ]; then
    exec dotnet "$dll" --replay-all "$fuzz/corpus" "$fuzz/regressions"
  fi
  rc=0
  for t in "${targets[@]}"; do
    paths=("$fuzz/corpus/$t"); [ -d "$fuzz/regressions/$t" ] && paths+=("$fuzz/regressions/$t")
    dotnet "$dll" "$t" --replay "${paths[@]}" || rc=1
  done
  exit $rc
fi

# ---- tools ----
if ! command -v afl-fuzz >/dev/null 2>&1; then
  echo "smoke.sh: installing afl++" >&2
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq afl++) >/dev/null 2>&1
fi
export PATH="$PATH:$HOME/.dotnet/tools"
if ! command -v sharpfuzz >/dev/null 2>&1; then
  echo "smoke.sh: installing SharpFuzz.CommandLine" >&2
  dotnet tool install --global SharpFuzz.CommandLine --version 2.3.0 >/dev/null
fi
if ! command -v afl-fuzz >/dev/null 2>&1 || ! command -v sharpfuzz >/dev/null 2>&1; then
  echo "FAIL fuzz: afl-fuzz or sharpfuzz missing and could not be installed"; echo "fuzz: 0 passed, 1 failed"; exit 1
fi

# ---- build and instrument (a separate output folder: the project's own bin/ stays uninstrumented) ----
bin="$work/bin"
rm -rf "$bin" && mkdir -p "$bin"
if ! dotnet build "$project" -c Release -nologo -v q -clp:ErrorsOnly -o "$bin" >/dev/null; then
  echo "FAIL fuzz: build failed"; echo "fuzz: 0 passed, 1 failed"; exit 1
fi
# The transport, the HTTP/3 + QPACK library and DatagramDumper (whose readers the capture target drives).
for assembly in System.Net.Quic.Managed QuicManaged.Http DatagramDumper; do
  if ! sharpfuzz "$bin/$assembly.dll" >"$work/sharpfuzz.log" 2>&1; then
    echo "FAIL fuzz: sharpfuzz could not instrument $assembly.dll: $(tail -n 3 "$work/sharpfuzz.log")"
    echo "fuzz: 0 passed, 1 failed"; exit 1
  fi
done
if [ ${#targets[@]} -eq 0 ]; then mapfile -t targets < <(dotnet "$bin/QuicManaged.Fuzz.dll" --list); fi

stat() { grep -E "^$2 *:" "$1/fuzzer_stats" 2>/dev/null | head -n 1 | sed 's/.*: *//'; }

passed=0; failed=0
rm -f "$work/summary.txt.tmp"
plain="$fuzz/QuicManaged.Fuzz/bin/Release/net10.0/QuicManaged.Fuzz.dll"
for t in "${targets[@]}"; do
  out="$work/out/$t"
  rm -rf "$out" && mkdir -p "$out"
  # -V: stop after $seconds of fuzzing. The dotnet host is not AFL-instrumented (SharpFuzz reports the coverage).
  AFL_SKIP_BIN_CHECK=1 AFL_SKIP_CPUFREQ=1 AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1 AFL_NO_UI=1 AFL_NO_AFFINITY=1 \
    AFL_FORKSRV_INIT_TMOUT=60000 \
    timeout -k 10 $((seconds + 120)) \
    afl-fuzz -V "$seconds" -t "$timeout_ms" -m none -i "$fuzz/corpus/$t" -o "$out" -- dotnet "$bin/QuicManaged.Fuzz.dll" "$t" \
    >"$out/afl.log" 2>&1
  rc=$?
  d="$out/default"
  execs=$(stat "$d" execs_done); paths=$(stat "$d" corpus_count); [ -n "$paths" ] || paths=$(stat "$d" paths_total)
  edges=$(stat "$d" edges_found)
  crashes=$(find "$d/crashes" -type f -name 'id:*' 2>/dev/null | wc -l)
  hangs=$(find "$d/hangs" -type f -name 'id:*' 2>/dev/null | wc -l)
  printf '%s %s %s %s %s %s\n' "$t" "${execs:-0}" "${paths:-0}" "${edges:-0}" "$crashes" "$hangs" >>"$work/summary.txt.tmp"
  if [ "${execs:-0}" = 0 ] || grep -qE 'PROGRAM ABORT|SYSTEM ERROR' "$out/afl.log"; then
    echo "FAIL fuzz $t: afl-fuzz did not run (exit $rc): $(grep -aE 'PROGRAM ABORT|SYSTEM ERROR|Location|Exception' "$out/afl.log" | sed 's/\x1b\[[0-9;]*m//g' | head -n 4 | tr '\n' ' ')"
    failed=$((failed + 1))
  elif [ "$crashes" -gt 0 ] || [ "$hangs" -gt 0 ]; then
    echo "FAIL fuzz $t: $crashes crashes, $hangs hangs in $execs execs (inputs in $d/crashes and $d/hangs)"
    # Show the exception: replay through the uninstrumented build (the instrumented one needs AFL's shared memory).
    dotnet build "$project" -c Release -nologo -v q -clp:ErrorsOnly >/dev/null
    for f in $(find "$d/crashes" -type f -name 'id:*' 2>/dev/null | head -n 3); do
      dotnet "$plain" "$t" --replay "$f" 2>&1 | head -n 8 | sed 's/^/    /'
    done
    failed=$((failed + 1))
  else
    echo "PASS fuzz $t: $execs execs, $paths paths, ${edges:-0} edges"
    passed=$((passed + 1))
  fi
done
mv "$work/summary.txt.tmp" "$work/summary.txt" 2>/dev/null
echo "fuzz: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
