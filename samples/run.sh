#!/usr/bin/env bash
# Packs QuicManaged (dotnet pack), builds the echo samples against that package from a local feed, runs them on
# loopback, and prints one line: "PASS samples echo-from-package" or "FAIL samples echo-from-package: <reason>"; then
# the same for the DATAGRAM sample: "PASS samples datagram-chat" or "FAIL samples datagram-chat: <reason>", and for the
# HTTP/3 packages (Http3Server + Http3Client): "PASS/FAIL samples http3-from-package".
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
