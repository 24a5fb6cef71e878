#!/usr/bin/env bash
# Long fuzzing campaign: every target (or the ones named) under AFL++ for FUZZ_SECONDS each (default 3600), one at a
# time, then the execs / paths / crashes / hangs per target are written into docs/RELIABILITY.md (section "Fuzzing",
# between the fuzz-campaign markers). Exits non-zero if any crash or hang was found (inputs stay in
# $FUZZ_WORK/out/TARGET/default/crashes; copy each into tests/Fuzz/regressions/TARGET/ with its fix).
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
export FUZZ_SECONDS=${FUZZ_SECONDS:-3600}
export FUZZ_WORK=${FUZZ_WORK:-$root/artifacts/fuzz-campaign}
mkdir -p "$FUZZ_WORK"
rm -f "$FUZZ_WORK/summary.txt"
started=$(date -u +%Y-%m-%dT%H:%MZ)
"$root/tests/Fuzz/smoke.sh" "$@" | tee "$FUZZ_WORK/campaign.log"
rc=${PIPESTATUS[0]}

doc="$root/docs/RELIABILITY.md"
section="$FUZZ_WORK/section.md"
{
  echo "<!-- fuzz-campaign:begin -->"
  echo "Last campaign: started $started, commit $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)," \
    "\`FUZZ_SECONDS=$FUZZ_SECONDS tests/Fuzz/campaign.sh${*:+ $*}\` ($(nproc) cores, AFL++ $(afl-fuzz -h 2>&1 | grep -oE '\+\+[0-9.a-z]+' | head -n 1 | tr -d '+'))."
  echo
  echo "| target | execs | paths | coverage edges | crashes | hangs |"
  echo "| --- | ---: | ---: | ---: | ---: | ---: |"
  if [ -f "$FUZZ_WORK/summary.txt" ]; then
    while read -r t e p g c h; do echo "| $t | $e | $p | $g | $c | $h |"; done <"$FUZZ_WORK/summary.txt"
  else
    echo "| (no target ran: see $FUZZ_WORK/campaign.log) | | | | | |"
  fi
  echo "<!-- fuzz-campaign:end -->"
} >"$section"
if grep -q '<!-- fuzz-campaign:begin -->' "$doc" 2>/dev/null; then
  awk -v section="$section" '
    /<!-- fuzz-campaign:begin -->/ { while ((getline line < section) > 0) print line; skip = 1; next }
    /<!-- fuzz-campaign:end -->/ { skip = 0; next }
    !skip { print }' "$doc" >"$doc.tmp" && mv "$doc.tmp" "$doc"
else
  { echo; echo "## Fuzzing campaign"; echo; cat "$section"; } >>"$doc"
fi
echo "campaign.sh: results written to docs/RELIABILITY.md"
exit "$rc"
