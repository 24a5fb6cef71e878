#!/usr/bin/env bash
# Packs QuicManaged (dotnet pack), builds the echo samples against that package from a local feed, runs them on
# loopback, and prints one line: "PASS samples echo-from-package" or "FAIL samples echo-from-package: <reason>"; then
# the same for the DATAGRAM sample: "PASS samples datagram-chat" or "FAIL samples datagram-chat: <reason>", and for the
# HTTP/3 packages (Http3Server + Http3Client): "PASS/FAIL samples http3-from-package"; and the README's example in a fresh
# `dotnet new console` project: "PASS/FAIL samples readme-example".
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
feed="$root/artifacts/packages"
cache="$root/artifacts/samples-nuget"   # private package cache: a rebuilt package with the same version is not stale
log="$root/artifacts/samples.log"
mkdir -p "$feed" && : > "$log"
version="0.1.0-local.$(date +%s)"
fail() { echo "FAIL samples echo-from-package: $1"; exit 0; }

dotnet pack "$root/src/System.Net.Quic.Managed" -c Release -o "$feed" -p:Version="$version" -nologo >> "$log" 2>&1 || fail "dotnet pack failed (artifacts/samples.log)"
[ -f "$feed/QuicManaged.$version.nupkg" ] || fail "no QuicManaged.$version.nupkg in artifacts/packages"
for s in EchoServer EchoClient; do
  dotnet build "$here/$s" -c Release -p:QuicManagedVersion="$version" --packages "$cache" -nologo >> "$log" 2>&1 || fail "$s does not build against the package (artifacts/samples.log)"
done
server_out="$root/artifacts/samples-server.out"
dotnet "$here/EchoServer/bin/Release/net10.0/EchoServer.dll" 0 > "$server_out" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null' EXIT
for _ in $(seq 1 100); do grep -q "listening on" "$server_out" && break; sleep 0.1; done
port=$(sed -n 's/^listening on .*:\([0-9]*\)$/\1/p' "$server_out")
[ -n "$port" ] || fail "the echo server did not start: $(head -c 200 "$server_out")"
out=$(timeout 30 dotnet "$here/EchoClient/bin/Release/net10.0/EchoClient.dll" "$port" "echo through the package" 2>&1) || fail "client failed: $(echo "$out" | tail -n 2 | tr '\n' ' ')"
echo "$out" >> "$log"
echo "$out" | grep -q "^echo: echo through the package$" || fail "unexpected client output: $out"
echo "PASS samples echo-from-package"

# The README's example as a new user takes it: a fresh directory outside the repository (no Directory.Build.props, no
# central package versions), `dotnet new console`, `dotnet add package QuicManaged --prerelease` from a feed holding only
# the package just packed, the example cut from README.md between its markers (so the two cannot drift), `dotnet run`.
readme_example() {
  local dir feed1 out
  dir=$(mktemp -d /tmp/quicmanaged-readme.XXXXXX) || { echo "no temporary directory"; return 1; }
  feed1="$dir/feed"; mkdir -p "$feed1" "$dir/app" && cp "$feed/QuicManaged.$version.nupkg" "$feed1/"
  printf '%s\n' '<?xml version="1.0" encoding="utf-8"?>' '<configuration>' \
    "  <packageSources><clear /><add key=\"local\" value=\"$feed1\" /></packageSources>" \
    "  <config><add key=\"globalPackagesFolder\" value=\"$cache\" /></config>" '</configuration>' > "$dir/nuget.config"
  cd "$dir/app" || return 1
  dotnet new console -n ReadmeExample -o . >> "$log" 2>&1 || { echo "dotnet new console failed (artifacts/samples.log)"; return 1; }
  dotnet add package QuicManaged --prerelease >> "$log" 2>&1 || { echo "dotnet add package QuicManaged --prerelease failed (artifacts/samples.log)"; return 1; }
  grep -q "Include=\"QuicManaged\" Version=\"$version\"" ReadmeExample.csproj || { echo "the project does not reference QuicManaged $version: $(grep PackageReference ReadmeExample.csproj)"; return 1; }
  awk '/<!-- readme-example:echo -->/ { on = 1; next } /<!-- \/readme-example:echo -->/ { on = 0 } on && !/^```/' "$root/README.md" > Program.cs
  [ "$(wc -l < Program.cs)" -ge 10 ] || { echo "no example between the markers in README.md"; return 1; }
  out=$(timeout 180 dotnet run -c Release 2>&1) || { echo "dotnet run failed: $(echo "$out" | tail -n 3 | tr '\n' ' ')"; return 1; }
  echo "$out" >> "$log"
  [ "$(echo "$out" | tail -n 1)" = "hello over QUIC" ] || { echo "unexpected output: $(echo "$out" | tail -n 3 | tr '\n' ' ')"; return 1; }
  cd "$root" && rm -rf "$dir"
}
if reason=$(readme_example); then echo "PASS samples readme-example"; else echo "FAIL samples readme-example: $reason"; fi

# DatagramChat: a stream and DATAGRAM (RFC 9221) side by side, server and client in one process.
chat_fail() { echo "FAIL samples datagram-chat: $1"; exit 0; }
dotnet build "$here/DatagramChat" -c Release -p:QuicManagedVersion="$version" --packages "$cache" -nologo >> "$log" 2>&1 || chat_fail "DatagramChat does not build against the package (artifacts/samples.log)"
out=$(timeout 30 dotnet "$here/DatagramChat/bin/Release/net10.0/DatagramChat.dll" "hello" "second line" 2>&1) || chat_fail "DatagramChat failed: $(echo "$out" | tail -n 2 | tr '\n' ' ')"
echo "$out" >> "$log"
echo "$out" | grep -q '^server: presence datagram "client is typing"$' && echo "$out" | grep -q "^client: ack: second line$" && echo "$out" | grep -q "^chat done$" \
  || chat_fail "unexpected DatagramChat output: $(echo "$out" | tr '\n' ' ')"
echo "PASS samples datagram-chat"

# HTTP/3: QuicManaged.AspNetCore and QuicManaged.Http from the same feed; the minimal API server and HttpClient sample.
fail3() { echo "FAIL samples http3-from-package: $1"; exit 0; }
for p in QuicManaged.AspNetCore QuicManaged.Http; do
  dotnet pack "$root/src/$p" -c Release -o "$feed" -p:Version="$version" -nologo >> "$log" 2>&1 || fail3 "dotnet pack $p failed (artifacts/samples.log)"
done
for s in Http3Server Http3Client; do
  dotnet build "$here/$s" -c Release -p:QuicManagedVersion="$version" --packages "$cache" -nologo >> "$log" 2>&1 || fail3 "$s does not build against the packages (artifacts/samples.log)"
done
h3_out="$root/artifacts/samples-http3-server.out"
h3_port=$(python3 -c 'import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])' 2>/dev/null || echo 18443)
dotnet "$here/Http3Server/bin/Release/net10.0/Http3Server.dll" "$h3_port" > "$h3_out" 2>&1 &
h3_server=$!
trap 'kill $server $h3_server 2>/dev/null' EXIT
for _ in $(seq 1 100); do grep -q "listening on" "$h3_out" && break; sleep 0.1; done
grep -q "listening on" "$h3_out" || fail3 "the HTTP/3 server did not start: $(head -c 300 "$h3_out")"
out=$(timeout 30 dotnet "$here/Http3Client/bin/Release/net10.0/Http3Client.dll" "https://127.0.0.1:$h3_port/hello" 2>&1) || fail3 "client failed: $(echo "$out" | tail -n 2 | tr '\n' ' ')"
echo "$out" >> "$log"
echo "$out" | grep -q "^hello over HTTP/3$" || fail3 "unexpected client output: $out"
echo "PASS samples http3-from-package"
