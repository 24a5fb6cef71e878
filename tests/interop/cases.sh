# Sourced by run.sh: the body of one interop case (runs inside its own network namespace when run.sh could make one).
# Inputs from run.sh's environment: INTEROP_ART, INTEROP_WWW, INTEROP_CERTS, INTEROP_EP_DLL, INTEROP_NETNS,
# GTLSSERVER, GTLSCLIENT, QGO_SERVER, QGO_CLIENT, QGO_INTEROP_CLIENT, QGO_INTEROP_SERVER, QUICHE_BINDING, QUICHE_NODE.
# Writes exactly one line to $cdir/result; run.sh prints it.

ngtcp2_chacha_only="NORMAL:-VERS-ALL:+VERS-TLS1.3:-CIPHER-ALL:+CHACHA20-POLY1305"
client_timeout=45

setup_namespace() {
  [ "${INTEROP_NETNS:-0}" = 1 ] || return 0
  ip link set lo up
  # UDP GSO off on this namespace's loopback: the kernel then splits GSO batches before the capture point, so every
  # captured frame is one datagram (otherwise tshark sees a batch as one oversized datagram it cannot decrypt).
  if command -v ethtool >/dev/null 2>&1; then ethtool -K lo tx-udp-segmentation off >/dev/null 2>&1 || true; fi
}

result() { # first result wins
  [ -s "$cdir/result" ] || echo "$1" > "$cdir/result"
}
pass() { result "PASS $peer $dir $name"; }
fail() { result "FAIL $peer $dir $name: $1"; }
skip() { result "SKIP $peer $dir $name: $1"; }

pids=()
start_bg() { # log-name command... ; remembers the pid in $bg_pid
  local logname=$1; shift
  "$@" > "$cdir/$logname.log" 2>&1 &
  bg_pid=$!
  pids+=("$bg_pid")
}
stop_pid() { # pid: SIGTERM, then SIGKILL after 3 s
  local pid=$1 i
  kill -TERM "$pid" 2>/dev/null || return 0
  for i in $(seq 1 30); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -KILL "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
}
cleanup() {
  local p
  for p in "${pids[@]}"; do stop_pid "$p"; done
  if [ -n "${cap_pid:-}" ]; then stop_capture; fi
}

wait_udp_port() { # port pid -> 0 when something listens on the UDP port, 1 if pid died or 10 s passed
  local port=$1 pid=$2 i
  for i in $(seq 1 100); do
    if ss -Hlun 2>/dev/null | grep -q "[:.]$port\b"; then return 0; fi
    kill -0 "$pid" 2>/dev/null || return 1
    sleep 0.1
  done
  return 1
}

cap_pid=""
start_capture() { # full|short
  local snap=0
  [ "$1" = short ] && snap=300
  local filter="udp"
  [ "${INTEROP_NETNS:-0}" = 1 ] || filter="udp port $port or udp port $((port + 1)) or udp port $((port + 2))"
  if ! command -v dumpcap >/dev/null 2>&1; then return 1; fi
  dumpcap -q -i lo -f "$filter" -s "$snap" -w "$cdir/trace.pcapng" > "$cdir/dumpcap.log" 2>&1 &
  cap_pid=$!
  local i
  for i in $(seq 1 50); do
    if grep -q "Capturing on" "$cdir/dumpcap.log" 2>/dev/null || [ -s "$cdir/trace.pcapng" ]; then sleep 0.2; return 0; fi
    kill -0 "$cap_pid" 2>/dev/null || { cap_pid=""; return 1; }
    sleep 0.1
  done
  return 0
}
stop_capture() {
  [ -n "$cap_pid" ] || return 0
  sleep 0.3
  kill -INT "$cap_pid" 2>/dev/null
  wait "$cap_pid" 2>/dev/null
  cap_pid=""
}
tshark_count() { # display filter [keylog] -> number of matching frames
  local keys=${2:-}
  if [ -n "$keys" ] && [ -s "$keys" ]; then
    tshark -r "$cdir/trace.pcapng" -o "tls.keylog_file:$keys" -Y "$1" 2>/dev/null | wc -l
  else
    tshark -r "$cdir/trace.pcapng" -Y "$1" 2>/dev/null | wc -l
  fi
}

# --- the two sides ------------------------------------------------------------------------------------------------------
our_server() { # testcase alpn|"" -> starts our endpoint as server on $port
  start_bg our-server env ROLE=server TESTCASE="$1" ${2:+ALPN=$2} HOST=127.0.0.1 PORT="$port" WWW="$INTEROP_WWW" \
    CERTS="$INTEROP_CERTS" SSLKEYLOGFILE="$cdir/our.keys" dotnet "$INTEROP_EP_DLL"
  server_pid=$bg_pid
}
our_client() { # testcase alpn|"" target-port files... -> exit code of our endpoint as client
  local tc=$1 alpn=$2 tport=$3; shift 3
  local reqs="" f
  for f in "$@"; do reqs="$reqs https://127.0.0.1:$tport/$f"; done
  env ROLE=client TESTCASE="$tc" ${alpn:+ALPN=$alpn} REQUESTS="${reqs# }" DOWNLOADS="$dl" \
    INTEROP_TIMEOUT_SECONDS=$((client_timeout - 5)) SSLKEYLOGFILE="$cdir/our.keys" \
    timeout -k 3 "$client_timeout" dotnet "$INTEROP_EP_DLL" >> "$cdir/our-client.log" 2>&1
}
gtls_server() { # extra options...
  start_bg peer-server env SSLKEYLOGFILE="$cdir/peer.keys" "$GTLSSERVER" -q -d "$INTEROP_WWW" "$@" \
    127.0.0.1 "$port" "$INTEROP_CERTS/priv.key" "$INTEROP_CERTS/cert.pem"
  server_pid=$bg_pid
}
gtls_client() { # target-port "options" files... -> exit code
  local tport=$1 opts=$2; shift 2
  local urls=() f
  for f in "$@"; do urls+=("https://127.0.0.1:$tport/$f"); done
  # shellcheck disable=SC2086
  env SSLKEYLOGFILE="$cdir/peer.keys" timeout -k 3 "$client_timeout" "$GTLSCLIENT" -q --exit-on-all-streams-close \
    --timeout=15s --download "$dl" $opts 127.0.0.1 "$tport" "${urls[@]}" >> "$cdir/peer-client.log" 2>&1
}
qgo_server() { # testcase
  start_bg peer-server env TESTCASE="$1" BIND="127.0.0.1:$port" WWW="$INTEROP_WWW" CERTS="$INTEROP_CERTS" \
    SSLKEYLOGFILE="$cdir/peer.keys" "$QGO_INTEROP_SERVER"
  server_pid=$bg_pid
}
qgo_client() { # testcase target-port files... -> exit code
  local tc=$1 tport=$2; shift 2
  local reqs="" f
  for f in "$@"; do reqs="$reqs https://127.0.0.1:$tport/$f"; done
  env TESTCASE="$tc" REQUESTS="${reqs# }" DOWNLOADS="$dl" SSLKEYLOGFILE="$cdir/peer.keys" \
    timeout -k 3 "$client_timeout" "$QGO_INTEROP_CLIENT" >> "$cdir/peer-client.log" 2>&1
}
quiche_hq="$(dirname "${BASH_SOURCE[0]}")/quiche/quiche-hq.mjs"
quiche_server() { # testcase
  start_bg peer-server env ROLE=server TESTCASE="$1" BIND="127.0.0.1:$port" WWW="$INTEROP_WWW" CERTS="$INTEROP_CERTS" \
    SSLKEYLOGFILE="$cdir/peer.keys" QUICHE_BINDING="$QUICHE_BINDING" "$QUICHE_NODE" "$quiche_hq"
  server_pid=$bg_pid
}
quiche_client() { # testcase target-port files... -> exit code
  local tc=$1 tport=$2; shift 2
  local reqs="" f
  for f in "$@"; do reqs="$reqs https://127.0.0.1:$tport/$f"; done
  env ROLE=client TESTCASE="$tc" REQUESTS="${reqs# }" DOWNLOADS="$dl" SSLKEYLOGFILE="$cdir/peer.keys" \
    QUICHE_BINDING="$QUICHE_BINDING" QUICHE_TIMEOUT_SECONDS=$((client_timeout - 5)) \
    timeout -k 3 "$client_timeout" "$QUICHE_NODE" "$quiche_hq" >> "$cdir/peer-client.log" 2>&1
}
# The cases quiche-hq.mjs takes part in, as the TESTCASE it runs (the transfer-like ones are plain transfers for it: our
# client drives the key update, the relay the loss), or a reason it cannot.
quiche_testcase() { # runner case direction -> "tc" or "!reason"
  case "$1" in
    handshake|transfer|multiplexing|retry) echo "$1" ;;
    transferloss) echo transfer ;;
    keyupdate) if [ "$2" = our-client ]; then echo transfer; else echo "!quiche 0.18 never initiates a key update (it answers ours: our-client)"; fi ;;
    http3) echo "!the binding exports quiche's transport only, not its h3 module" ;;
    chacha20) echo "!the binding does not expose BoringSSL's cipher suite choice" ;;
    resumption|zerortt) echo "!quiche-hq.mjs does not keep sessions (Connection.session/setSession) yet" ;;
    handshakeloss) echo "!quiche-hq.mjs serves one transfer per process run, not the runner's multiconnect" ;;
    v2) echo "!quiche 0.18 has no QUIC v2" ;;
    connectionmigration|activemigration|rebind) echo "!quiche-hq.mjs does not follow path changes (no migrate/probePath handling)" ;;
    *) echo "!not a quiche case" ;;
  esac
}
start_relay() { # options... ; the client then targets $((port + 1))
  start_bg relay python3 "$(dirname "${BASH_SOURCE[0]}")/udp_relay.py" $((port + 1)) "$port" "$@"
  relay_pid=$bg_pid
  wait_udp_port $((port + 1)) "$relay_pid"
}

check_files() { # files... -> "" when every download matches its source by sha256, else the first problem
  local f want got
  for f in "$@"; do
    if [ ! -f "$dl/$f" ]; then echo "$f not downloaded"; return; fi
    want=$(sha256sum < "$INTEROP_WWW/$f" | cut -d' ' -f1)
    got=$(sha256sum < "$dl/$f" | cut -d' ' -f1)
    if [ "$want" != "$got" ]; then
      echo "$f: sha256 mismatch ($(stat -c %s "$dl/$f") of $(stat -c %s "$INTEROP_WWW/$f") bytes)"
      return
    fi
  done
}

log_reason() { # logfile -> a short reason from the last telling line of a log
  local line
  line=$(grep -v '^\s*$' "$1" 2>/dev/null | grep -iE "fail|error|unsupported|not supported|not available|timed out|exception|refus|abort|closed" | tail -n 1)
  [ -n "$line" ] || line=$(grep -v '^\s*$' "$1" 2>/dev/null | tail -n 1)
  echo "${line:0:220}" | tr -d '\r'
}
unsupported_reason() { # our endpoint's 127 message
  grep -m1 "not supported" "$1" 2>/dev/null | sed 's/^.*not supported as [a-z]*: *//' | cut -c1-200
}

# --- case table -------------------------------------------------------------------------------------------------------
files_for() {
  case "$1" in
    handshake) echo hs-1k ;;
    transfer) echo f-5k f-1m f-10m ;;
    multiplexing) seq -w 1 150 | sed 's/^/m-/' | tr '\n' ' ' ;;
    retry|chacha20) echo f-5k ;;
    keyupdate|connectionmigration|activemigration|rebind) echo f-10m ;;
    resumption) echo f-5k f-1m ;;
    zerortt) echo f-5k hs-1k ;;
    transferloss|tshark-decrypt) echo f-1m ;;
    http3) echo f-5k f-1m ;;
    handshakeloss) echo hl-1 hl-2 hl-3 ;;
  esac
}
capture_mode() { # full captures everywhere: the failures worth reading need decrypted frames (peer key logs)
  echo full
}
qgo_testcase() { # runner case -> the TESTCASE quic-go's interop programs know (the runner's own mapping)
  case "$1" in
    multiplexing|transferloss|rebind) echo transfer ;;
    handshakeloss) echo multiconnect ;;
    *) echo "$1" ;;
  esac
}

# Post-transfer checks on the capture, per case. $1 = keylog file (may be empty). Prints "" or a reason.
capture_checks() {
  local keys=$1 n
  [ -s "$cdir/trace.pcapng" ] || { [ "$(capture_mode "$name")" = full ] && echo "no capture (dumpcap unavailable)"; return; }
  case "$name" in
    retry)
      n=$(tshark_count "quic.long.packet_type == 3 && quic.version == 1")
      [ "$n" -ge 1 ] || echo "no Retry packet in the capture" ;;
    chacha20)
      n=$(tshark_count "tls.handshake.type == 2 && tls.handshake.ciphersuite != 0x1303")
      local total; total=$(tshark_count "tls.handshake.type == 2")
      if [ "$total" -lt 1 ]; then echo "no ServerHello in the capture"; elif [ "$n" -ne 0 ]; then echo "ServerHello chose a suite other than TLS_CHACHA20_POLY1305_SHA256"; fi ;;
    resumption)
      n=$(tshark_count "tls.handshake.type == 2 && tls.handshake.extension.type == 41")
      [ "$n" -ge 1 ] || echo "second connection did not resume (no ServerHello with pre_shared_key)" ;;
    zerortt)
      n=$(tshark_count "quic.long.packet_type == 1")
      if [ "$n" -lt 1 ]; then echo "no 0-RTT packet in the capture"; return; fi
      n=$(tshark_count "tls.handshake.type == 2 && tls.handshake.extension.type == 41")
      if [ "$n" -lt 1 ]; then echo "0-RTT sent but the session was not resumed"; return; fi
      if [ -n "$keys" ] && [ -s "$keys" ]; then
        n=$(tshark_count "tls.handshake.type == 8 && tls.handshake.extension.type == 42" "$keys")
        [ "$n" -ge 1 ] || echo "server did not accept early data (no early_data in EncryptedExtensions)"
      fi ;;
    connectionmigration)
      # RFC 9000 §9.6: the client moved to the server's preferred address (port + 2): datagrams both ways on that port.
      local pref=$((port + 2)) up down
      up=$(tshark -r "$cdir/trace.pcapng" -Y "udp.dstport == $pref && udp.length > 8" -T fields -e frame.number 2>/dev/null | wc -l)
      down=$(tshark -r "$cdir/trace.pcapng" -Y "udp.srcport == $pref && udp.length > 8" -T fields -e frame.number 2>/dev/null | wc -l)
      if [ "$up" -lt 10 ] || [ "$down" -lt 10 ]; then echo "no migration to the preferred address (port $pref: $up datagrams to it, $down from it)"; fi ;;
    activemigration|rebind)
      # Plain UDP fields: tshark dissects a datagram from a new port as QUIC only once it links it to the connection.
      # Empty datagrams (our driver's wake-ups) are not traffic. The client must have reached the server from more than
      # one port, and the server must have followed it (RFC 9000 §9.3: it sends to the new address once validated).
      local from to
      from=$(tshark -r "$cdir/trace.pcapng" -Y "udp.dstport == $port && udp.length > 8" -T fields -e udp.srcport 2>/dev/null | sort -u | wc -l)
      to=$(tshark -r "$cdir/trace.pcapng" -Y "udp.srcport == $port && udp.length > 8" -T fields -e udp.dstport 2>/dev/null | sort -u | wc -l)
      if [ "$from" -lt 2 ]; then echo "the client's address never changed (one source port seen by the server)"
      elif [ "$to" -lt 2 ]; then echo "the server never sent to the client's new address ($from client ports, server answered on $to)"; fi ;;
    keyupdate)
      if [ -z "$keys" ] || [ ! -s "$keys" ]; then echo "no key log to verify the key update"; return; fi
      local up down
      up=$(tshark_count "quic.key_phase == 1 && udp.dstport == $port" "$keys")
      down=$(tshark_count "quic.key_phase == 1 && udp.srcport == $port" "$keys")
      if [ "$up" -lt 1 ] || [ "$down" -lt 1 ]; then echo "key phase 1 not seen in both directions (client->server $up, server->client $down)"; fi ;;
  esac
}

# tshark-decrypt: every QUIC datagram of our client's connection to gtlsserver decrypts and dissects cleanly.
tshark_decrypt_checks() {
  local keys=$1 total malformed undecrypted
  total=$(tshark_count "quic" "$keys")
  malformed=$(tshark_count "_ws.malformed || _ws.expert.severity >= 8388608" "$keys")
  undecrypted=$(tshark_count "quic && !quic.frame && !(quic.long.packet_type == 3) && !quic.version_negotiation" "$keys")
  echo "tshark: $total QUIC frames, $malformed malformed/error, $undecrypted without decrypted frames" >> "$cdir/harness.log"
  if [ "$total" -lt 1 ]; then echo "no QUIC packets captured"; return; fi
  if [ "$malformed" -ne 0 ]; then
    echo "$malformed frames Malformed or with expert errors, first: $(tshark -r "$cdir/trace.pcapng" -o "tls.keylog_file:$keys" -Y "_ws.malformed || _ws.expert.severity >= 8388608" 2>/dev/null | head -n 1 | cut -c1-120)"
    return
  fi
  [ "$undecrypted" -eq 0 ] || echo "$undecrypted of $total QUIC frames not decrypted with the key log"
}

# Every case's capture through our DatagramDumper with the key logs of both ends: every packet decrypted and every frame
# parsed (namespaced runs only: elsewhere UDP GSO may leave several datagrams in one captured frame). Prints "" or a reason.
dumper_checks() {
  [ "${INTEROP_NETNS:-0}" = 1 ] && [ -s "$cdir/trace.pcapng" ] && [ -f "${INTEROP_DUMPER_DLL:-}" ] || return 0
  cat "$cdir/peer.keys" "$cdir/our.keys" > "$cdir/both.keys" 2>/dev/null
  if ! dotnet "$INTEROP_DUMPER_DLL" --pcap "$cdir/trace.pcapng" --keylog "$cdir/both.keys" > "$cdir/dumper.txt" 2> "$cdir/dumper.err"; then
    echo "DatagramDumper failed on the capture: $(head -c 200 "$cdir/dumper.err")"; return
  fi
  local bad
  bad=$(grep -E "no keys|decryption failed|error:|internal error|length unknown|undecoded|INVALID" "$cdir/dumper.txt" | head -n 1 | sed 's/^ *//')
  [ -z "$bad" ] || echo "DatagramDumper could not decode all of the capture ($(grep -cE "no keys|decryption failed|error:|internal error|length unknown|undecoded|INVALID" "$cdir/dumper.txt") lines, artifacts dumper.txt), first: ${bad:0:160}"
}

# --- one case -----------------------------------------------------------------------------------------------------------
run_one_case() {
  peer=$1 dir=$2 name=$3 port=$4
  cdir="$INTEROP_ART/$peer/$dir/$name"
  dl="$cdir/dl"
  mkdir -p "$dl"
  : > "$cdir/result"
  trap cleanup EXIT
  setup_namespace
  for f in hl-1 hl-2 hl-3 hl-4 hl-5; do [ -f "$INTEROP_WWW/$f" ] || head -c 1024 /dev/urandom > "$INTEROP_WWW/$f"; done

  if [ "$name" = v2 ] && [ "$peer" != quiche ]; then
    skip "QUIC v2 (RFC 9369) unsupported by every Debian peer: ngtcp2 0.12 knows only the v2 draft, quic-go 0.29 no v2"
    return
  fi
  local files; files=$(files_for "$name")
  # shellcheck disable=SC2206
  local farr=($files)
  local rc=0 problem keys tport=$port
  # handshakeloss runs five connections one after another: each gets a share of the case's bound.
  [ "$name" = handshakeloss ] && client_timeout=25
  start_capture "$(capture_mode "$name")" || true

  case "$peer/$dir" in
    ngtcp2/our-client)
      [ -x "$GTLSSERVER" ] || { skip "gtlsserver not installed"; return; }
      local sopts=()
      case "$name" in
        retry) sopts=(-V) ;;
        chacha20) sopts=(--ciphers="$ngtcp2_chacha_only") ;;
        transferloss) sopts=(-t 0.02 -r 0.02) ;;
        handshakeloss) sopts=(-t 0.3 -r 0.3) ;;
        connectionmigration) sopts=(--preferred-ipv4-addr=127.0.0.1:$((port + 2))) ;;
        keyupdate|zerortt) ;;
      esac
      gtls_server "${sopts[@]}"
      wait_udp_port "$port" "$server_pid" || { fail "gtlsserver did not start: $(log_reason "$cdir/peer-server.log")"; return; }
      if [ "$name" = rebind ]; then start_relay --rebind-every 0.15 || { fail "relay did not start"; return; }; tport=$((port + 1)); fi
      local tc=$name; [ "$name" = tshark-decrypt ] && tc=http3
      if [ "$name" = handshakeloss ]; then
        for f in "${farr[@]}"; do our_client "$tc" h3 "$tport" "$f"; rc=$?; [ $rc -eq 0 ] || break; done
      else
        our_client "$tc" h3 "$tport" "${farr[@]}"; rc=$?
      fi
      keys="$cdir/peer.keys"
      ;;
    ngtcp2/our-server)
      [ -x "$GTLSCLIENT" ] || { skip "gtlsclient not installed"; return; }
      # connectionmigration: our server offers a preferred address (port + 2) and gtlsclient moves there; activemigration:
      # gtlsclient's active migration (--change-local-addr), which a server handles passively like a rebinding.
      local stc=$name; [ "$name" = activemigration ] && stc=rebind
      our_server "$stc" h3
      wait_udp_port "$port" "$server_pid" || {
        if [ -n "$(unsupported_reason "$cdir/our-server.log")" ]; then skip "our server: $(unsupported_reason "$cdir/our-server.log")"
        else fail "our server did not start: $(log_reason "$cdir/our-server.log")"; fi
        return; }
      local copts=""
      case "$name" in
        chacha20) copts="--ciphers=$ngtcp2_chacha_only" ;;
        keyupdate) copts="--key-update=50ms" ;;
        transferloss) copts="-t 0.02 -r 0.02" ;;
        handshakeloss) copts="-t 0.3 -r 0.3" ;;
        activemigration) copts="--change-local-addr=100ms" ;;
        # rebind: gtlsclient 0.12's --nat-rebinding did not change its port in a peer-against-peer check (and truncated
        # the download); the relay rebinds instead, as for quic-go.
        resumption|zerortt) copts="--session-file=$cdir/session.pem --tp-file=$cdir/tp.txt" ;;
      esac
      if [ "$name" = rebind ]; then start_relay --rebind-every 0.15 || { fail "relay did not start"; return; }; tport=$((port + 1)); fi
      if [ "$name" = handshakeloss ]; then
        for f in "${farr[@]}"; do gtls_client "$port" "$copts" "$f"; rc=$?; [ $rc -eq 0 ] || break; done
      elif [ "$name" = resumption ] || [ "$name" = zerortt ]; then
        gtls_client "$port" "$copts" "${farr[0]}"; rc=$?
        if [ $rc -eq 0 ]; then sleep 0.2; gtls_client "$port" "$copts" "${farr[@]:1}"; rc=$?; fi
      else
        gtls_client "$tport" "$copts" "${farr[@]}"; rc=$?
      fi
      keys="$cdir/peer.keys"
      ;;
    quic-go/our-client)
      [ -x "${QGO_INTEROP_SERVER:-}" ] || { skip "quic-go interop server not built (artifacts/interop/qgo-build.log)"; return; }
      if [ "$name" = connectionmigration ]; then skip "quic-go 0.29's interop server offers no preferred_address"; return; fi
      if [ "$name" = activemigration ]; then skip "quic-go 0.29's server does not follow a client's new address (see rebind)"; return; fi
      if [ "$name" = tshark-decrypt ]; then skip "ngtcp2 only"; return; fi
      if [ "$name" = rebind ]; then skip "quic-go 0.29's server does not follow a NAT rebinding (with its own client through the same relay it keeps sending to the original port)"; return; fi
      qgo_server "$(qgo_testcase "$name")"
      wait_udp_port "$port" "$server_pid" || { fail "quic-go server did not start: $(log_reason "$cdir/peer-server.log")"; return; }
      case "$name" in
        transferloss) start_relay --loss 0.02 --seed 7 || { fail "relay did not start"; return; }; tport=$((port + 1)) ;;
        handshakeloss) start_relay --loss 0.3 --seed 7 || { fail "relay did not start"; return; }; tport=$((port + 1)) ;;
        rebind) start_relay --rebind-every 0.15 || { fail "relay did not start"; return; }; tport=$((port + 1)) ;;
      esac
      local alpn=""; [ "$name" = http3 ] && alpn=h3
      if [ "$name" = handshakeloss ]; then
        for f in "${farr[@]}"; do our_client "$name" "$alpn" "$tport" "$f"; rc=$?; [ $rc -eq 0 ] || break; done
      else
        our_client "$name" "$alpn" "$tport" "${farr[@]}"; rc=$?
      fi
      keys="$cdir/peer.keys"
      ;;
    quiche/our-client|quiche/our-server)
      [ -n "${QUICHE_BINDING:-}" ] && [ -f "$QUICHE_BINDING" ] && [ -x "${QUICHE_NODE:-}" ] || { skip "quiche not installed (artifacts/interop/quiche.err)"; return; }
      local qtc; qtc=$(quiche_testcase "$name" "$dir")
      if [ "${qtc:0:1}" = "!" ]; then skip "${qtc:1}"; return; fi
      if [ "$dir" = our-client ]; then
        quiche_server "$qtc"
        wait_udp_port "$port" "$server_pid" || { fail "quiche server did not start: $(log_reason "$cdir/peer-server.log")"; return; }
        if [ "$name" = transferloss ]; then start_relay --loss 0.02 --seed 7 || { fail "relay did not start"; return; }; tport=$((port + 1)); fi
        our_client "$name" "" "$tport" "${farr[@]}"; rc=$?
      else
        our_server "$name" ""
        wait_udp_port "$port" "$server_pid" || {
          if [ -n "$(unsupported_reason "$cdir/our-server.log")" ]; then skip "our server: $(unsupported_reason "$cdir/our-server.log")"
          else fail "our server did not start: $(log_reason "$cdir/our-server.log")"; fi
          return; }
        if [ "$name" = transferloss ]; then start_relay --loss 0.02 --seed 7 || { fail "relay did not start"; return; }; tport=$((port + 1)); fi
        quiche_client "$qtc" "$tport" "${farr[@]}"; rc=$?
      fi
      keys="$cdir/peer.keys"
      ;;
    quic-go/our-server)
      [ -x "${QGO_INTEROP_CLIENT:-}" ] || { skip "quic-go interop client not built (artifacts/interop/qgo-build.log)"; return; }
      if [ "$name" = connectionmigration ] || [ "$name" = activemigration ]; then skip "quic-go 0.29's client does not migrate"; return; fi
      local alpn=""; [ "$name" = http3 ] && alpn=h3
      our_server "$name" "$alpn"
      wait_udp_port "$port" "$server_pid" || {
        if [ -n "$(unsupported_reason "$cdir/our-server.log")" ]; then skip "our server: $(unsupported_reason "$cdir/our-server.log")"
        else fail "our server did not start: $(log_reason "$cdir/our-server.log")"; fi
        return; }
      case "$name" in
        transferloss) start_relay --loss 0.02 --seed 7 || { fail "relay did not start"; return; }; tport=$((port + 1)) ;;
        handshakeloss) start_relay --loss 0.3 --seed 7 || { fail "relay did not start"; return; }; tport=$((port + 1)) ;;
        rebind) start_relay --rebind-every 0.15 || { fail "relay did not start"; return; }; tport=$((port + 1)) ;;
      esac
      qgo_client "$(qgo_testcase "$name")" "$tport" "${farr[@]}"; rc=$?
      keys="$cdir/peer.keys"
      ;;
    *) fail "unknown peer/direction"; return ;;
  esac

  stop_capture
  if [ -n "${relay_pid:-}" ]; then stop_pid "$relay_pid"; fi
  if [ "$dir" = our-client ]; then
    if [ $rc -eq 127 ]; then skip "our client: $(unsupported_reason "$cdir/our-client.log")"; return; fi
    if [ $rc -ne 0 ]; then
      if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then fail "our client timed out after ${client_timeout} s: $(log_reason "$cdir/our-client.log")"
      else fail "our client exit $rc: $(log_reason "$cdir/our-client.log")"; fi
      return
    fi
  else
    if ! kill -0 "$server_pid" 2>/dev/null; then
      fail "our server exited during the case: $(log_reason "$cdir/our-server.log")"; return
    fi
    if [ $rc -eq 127 ]; then skip "peer client does not support $name"; return; fi
    if [ $rc -ne 0 ]; then
      if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then fail "peer client timed out after ${client_timeout} s: $(log_reason "$cdir/peer-client.log") / server: $(log_reason "$cdir/our-server.log")"
      else fail "peer client exit $rc: $(log_reason "$cdir/peer-client.log") / server: $(log_reason "$cdir/our-server.log")"; fi
      return
    fi
  fi
  if [ "$name" = handshakeloss ] && [ "$dir" = our-client ]; then :; fi
  problem=$(check_files "${farr[@]}")
  [ -z "$problem" ] || { fail "$problem"; return; }
  if [ "$name" = tshark-decrypt ]; then
    command -v tshark >/dev/null 2>&1 || { skip "tshark not installed"; return; }
    [ -s "$keys" ] || { skip "no key log: neither gtlsserver (GnuTLS SSLKEYLOGFILE) nor our endpoint wrote one"; return; }
    problem=$(tshark_decrypt_checks "$keys")
    if [ -z "$problem" ] && [ -s "$cdir/our.keys" ]; then problem=$(tshark_decrypt_checks "$cdir/our.keys"); [ -z "$problem" ] || problem="with our key log: $problem"; fi
    [ -z "$problem" ] || { fail "$problem"; return; }
    pass; return
  fi
  problem=$(dumper_checks)
  [ -z "$problem" ] || { fail "$problem"; return; }
  if command -v tshark >/dev/null 2>&1; then
    problem=$(capture_checks "$keys")
    [ -z "$problem" ] || { fail "$problem"; return; }
  elif [ "$(capture_mode "$name")" = full ]; then
    fail "tshark not installed: cannot verify $name"; return
  fi
  pass
}

# --- harness self-check: peer against peer, printed as NOTE lines (never results) ------------------------------------------
self_check_body() {
  cdir=$1 port=4433
  dl="$cdir/dl"; mkdir -p "$dl"
  : > "$cdir/notes"
  trap cleanup EXIT
  setup_namespace
  [ "${INTEROP_NETNS:-0}" = 1 ] || port=$((20000 + RANDOM % 20000))
  local problem rc
  note() { echo "NOTE self-check $1" >> "$cdir/notes"; }
  # One peer-against-peer download of f-5k and f-1m: label, the command that starts the server on $port, the command
  # that runs the client (it gets the port and the files).
  pair_check() {
    local label=$1 server=$2 client=$3
    $server
    if wait_udp_port "$port" "$server_pid"; then
      $client "$port" f-5k f-1m; rc=$?
      problem=$(check_files f-5k f-1m)
      if [ $rc -eq 0 ] && [ -z "$problem" ]; then note "$label: ok"; else note "$label: broken (exit $rc; $problem)"; fi
    else note "$label: server did not start"; fi
    stop_pid "$server_pid"; rm -rf "${dl:?}"/*
  }
  qgo_example_server() { start_bg peer-server "$QGO_SERVER" -bind "127.0.0.1:$port" -www "$INTEROP_WWW"; server_pid=$bg_pid; }
  gtls_plain_client() { gtls_client "$1" "" "${@:2}"; }
  # 1. gtlsclient (ngtcp2) -> quic-go's example HTTP/3 server (bundled localhost certificate, files from -www).
  if [ -x "${QGO_SERVER:-}" ] && [ -x "${GTLSCLIENT:-}" ]; then
    pair_check "ngtcp2-client -> quic-go-example-server h3 transfer" qgo_example_server gtls_plain_client
  else note "ngtcp2-client -> quic-go-example-server: peers missing"; fi
  # 2. quic-go interop client -> gtlsserver, h3.
  if [ -x "${QGO_INTEROP_CLIENT:-}" ] && [ -x "${GTLSSERVER:-}" ]; then
    pair_check "quic-go-interop-client -> ngtcp2-server h3 transfer" gtls_server "qgo_client http3"
  fi
  # 3. quic-go interop client -> quic-go interop server, hq-interop, with Retry (validates the adapted programs).
  if [ -x "${QGO_INTEROP_CLIENT:-}" ] && [ -x "${QGO_INTEROP_SERVER:-}" ]; then
    pair_check "quic-go-interop-client -> quic-go-interop-server hq-interop retry" "qgo_server retry" "qgo_client retry"
  fi
  # 4. quiche client -> quiche server (quiche-hq.mjs both sides), hq-interop, with Retry.
  if [ -n "${QUICHE_BINDING:-}" ] && [ -x "${QUICHE_NODE:-}" ]; then
    pair_check "quiche-client -> quiche-server hq-interop retry" "quiche_server retry" "quiche_client retry"
  fi
}
