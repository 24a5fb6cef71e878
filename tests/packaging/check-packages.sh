#!/usr/bin/env bash
# The packages as a company would take them, from a clean clone of the committed HEAD (uncommitted changes are not in
# it): packs QuicManaged, QuicManaged.AspNetCore, QuicManaged.Http and the two .NET tools (QuicManaged.QuicPerf,
# QuicManaged.DatagramDumper) with CI=true, inspects every .nupkg (MIT license expression, its own README, symbols with
# the sources embedded and paths mapped to /_/, the repository commit), installs and runs both tools with
# `dotnet tool install`, then packs the three libraries again from a second clone in another folder and checks that
# every DLL and PDB is byte-identical. Prints one "PASS packaging ..." or "FAIL packaging ...: reason" line per check
# (test.sh counts them). Work and logs: artifacts/packaging/. About 4 minutes on 2 cores.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
work="$root/artifacts/packaging"
log="$work/pack.log"
rm -rf "$work" && mkdir -p "$work" && : > "$log"
export CI=true DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 DOTNET_SKIP_FIRST_TIME_EXPERIENCE=1
libraries=(src/System.Net.Quic.Managed:QuicManaged src/QuicManaged.AspNetCore:QuicManaged.AspNetCore src/QuicManaged.Http:QuicManaged.Http)
tools=(tools/QuicPerf:QuicManaged.QuicPerf:quicperf tools/DatagramDumper:QuicManaged.DatagramDumper:datagram-dumper)
version=0.1.0-preview.1

commit=$(git -C "$root" rev-parse HEAD 2>/dev/null) || { echo "SKIP packaging: $root is not a git checkout"; exit 0; }
inspect() { dotnet run "$root/tests/packaging/inspect-pdb.cs" -- "$1" 2>&1; }

# A clean clone of HEAD into $work/$1, packed (projects given as dir:id[:command]) into $work/feed-$1.
pack_clone() {
  local name=$1; shift
  git clone -q --no-hardlinks "$root" "$work/$name" >> "$log" 2>&1 && git -C "$work/$name" checkout -q --detach "$commit" >> "$log" 2>&1 || return 1
  local spec
  for spec in "$@"; do
    echo "== pack ${spec%%:*} ($name)" >> "$log"
    dotnet pack "$work/$name/${spec%%:*}" -c Release -o "$work/feed-$name" -nologo >> "$log" 2>&1 || { echo "${spec%%:*}"; return 1; }
  done
}

if failed=$(pack_clone a "${libraries[@]}" "${tools[@]}"); then
  echo "PASS packaging pack: 3 packages and 2 tools from a clean clone of ${commit:0:7}"
else
  echo "FAIL packaging pack: dotnet pack ${failed:-(clone)} failed in a clean clone (artifacts/packaging/pack.log)"
  exit 0
fi

# Metadata every package carries: MIT, its README (with the install line), the commit it was built from.
check_nuspec() { # $1 nupkg, $2 id, $3 readme must mention; prints a reason when something is missing
  local nuspec readme
  nuspec=$(unzip -p "$1" "$2.nuspec" 2>/dev/null) || { echo "no $2.nuspec"; return; }
  grep -q '<license type="expression">MIT</license>' <<< "$nuspec" || { echo "no MIT license expression"; return; }
  grep -q '<readme>README.md</readme>' <<< "$nuspec" || { echo "no <readme>"; return; }
  grep -q "<repository [^>]*commit=\"$commit\"" <<< "$nuspec" || { echo "the nuspec does not record commit $commit"; return; }
  grep -q '<authors>QuicManaged contributors</authors>' <<< "$nuspec" || { echo "authors are not QuicManaged contributors"; return; }
  readme=$(unzip -p "$1" README.md 2>/dev/null) || { echo "README.md is not in the package"; return; }
  grep -qF -- "$3" <<< "$readme" || echo "its README lacks: $3"
}

for spec in "${libraries[@]}"; do
  id=${spec#*:}; pkg="$work/feed-a/$id.$version.nupkg"; sym="$work/feed-a/$id.$version.snupkg"
  reason=$(check_nuspec "$pkg" "$id" "dotnet add package $id --prerelease")
  if [ -z "$reason" ]; then
    dir="$work/x/$id"; mkdir -p "$dir" && unzip -q -o "$sym" -d "$dir" 2>/dev/null
    pdb=$(find "$dir/lib" -name '*.pdb' 2>/dev/null | head -n 1)
    if [ -z "$pdb" ]; then reason="no PDB in $id.$version.snupkg"
    else
      info=$(inspect "$pdb")
      docs=$(echo "$info" | sed -n 's/.*documents=\([0-9]*\).*/\1/p'); emb=$(echo "$info" | sed -n 's/.*embedded-sources=\([0-9]*\).*/\1/p')
      if [ -z "$docs" ] || [ "$docs" = 0 ] || [ "$docs" != "$emb" ]; then reason="PDB sources not all embedded: $info"
      elif ! grep -q 'first=/_/' <<< "$info"; then reason="PDB paths not mapped to /_/ (ContinuousIntegrationBuild): $info"
      fi
    fi
  fi
  if [ -z "$reason" ]; then echo "PASS packaging $id: MIT, README, commit ${commit:0:7}, snupkg with $docs embedded sources"
  else echo "FAIL packaging $id: $reason"; fi
done

# The tools: metadata, an embedded PDB, then `dotnet tool install` from the feed and a run.
for spec in "${tools[@]}"; do
  rest=${spec#*:}; id=${rest%%:*}; command=${rest#*:}; pkg="$work/feed-a/$id.$version.nupkg"
  reason=$(check_nuspec "$pkg" "$id" "dotnet tool install")
  if [ -z "$reason" ]; then
    grep -q "Name=\"$command\"" <<< "$(unzip -p "$pkg" 'tools/net10.0/any/DotnetToolSettings.xml' 2>/dev/null)" || reason="no tool command $command in the package"
  fi
  if [ -z "$reason" ]; then
    dir="$work/x/$id"; mkdir -p "$dir" && unzip -q -o "$pkg" -d "$dir" 2>/dev/null
    dll=$(find "$dir/tools" -name "$(basename "${spec%%:*}").dll" | head -n 1)
    info=$(inspect "$dll"); grep -q 'first=/_/' <<< "$info" || reason="no embedded PDB with mapped paths in $(basename "$dll"): $info"
  fi
  if [ -z "$reason" ]; then
    dotnet tool install --tool-path "$work/tools" --add-source "$work/feed-a" "$id" --prerelease >> "$log" 2>&1 || reason="dotnet tool install $id failed (artifacts/packaging/pack.log)"
  fi
  if [ -z "$reason" ]; then
    case $command in
      quicperf) out=$(timeout 60 "$work/tools/$command" -t 2 2>&1); expect='^second 1: .* gbit/s' ;;
      *) out=$(timeout 60 "$work/tools/$command" --sample rfc9001-client-initial 2>&1); expect='CRYPTO' ;;
    esac
    grep -q "$expect" <<< "$out" || reason="the installed $command did not run: $(echo "$out" | tail -n 2 | tr '\n' ' ')"
  fi
  if [ -z "$reason" ]; then echo "PASS packaging $id: MIT, README, commit ${commit:0:7}, embedded PDB; dotnet tool install and '$command' run"
  else echo "FAIL packaging $id: $reason"; fi
done

# Reproducible: a second clone in another folder, the three libraries packed again: every DLL and PDB the same bytes.
if failed=$(pack_clone b "${libraries[@]}"); then
  different=(); compared=0
  for spec in "${libraries[@]}"; do
    id=${spec#*:}
    for side in a b; do
      mkdir -p "$work/r/$side/$id"
      unzip -q -o "$work/feed-$side/$id.$version.nupkg" 'lib/*' -d "$work/r/$side/$id" 2>/dev/null
      unzip -q -o "$work/feed-$side/$id.$version.snupkg" 'lib/*' -d "$work/r/$side/$id" 2>/dev/null
    done
    while IFS= read -r f; do
      compared=$((compared + 1))
      cmp -s "$work/r/a/$id/$f" "$work/r/b/$id/$f" || different+=("$f")
    done < <(cd "$work/r/a/$id" && find lib -name '*.dll' -o -name '*.pdb')
  done
  if [ "$compared" -lt 6 ]; then echo "FAIL packaging reproducible: only $compared files to compare"
  elif [ ${#different[@]} -eq 0 ]; then echo "PASS packaging reproducible: $compared DLLs and PDBs identical from two clones of ${commit:0:7}"
  else echo "FAIL packaging reproducible: differ between two clones: ${different[*]}"; fi
else
  echo "FAIL packaging reproducible: dotnet pack ${failed:-(clone)} failed in the second clone (artifacts/packaging/pack.log)"
fi
