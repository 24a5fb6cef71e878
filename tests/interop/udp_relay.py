#!/usr/bin/env python3
"""UDP relay between one QUIC client and one server on loopback, for the interop harness.

Drops datagrams at random (seeded) in either direction, and can rebind its upstream socket every N seconds, so the
server sees the client's address change the way a NAT rebinding looks (the quic-interop-runner's rebind cases).
After a rebind the client's datagrams leave from the new port only, but the old ports still deliver what the server
sends to them (the old mapping lingers, as in a NAT): otherwise a download stalls for nothing to do with QUIC, the
server's packets going to a port nobody reads while the client, with nothing to acknowledge, stays silent.

usage: udp_relay.py LISTEN_PORT UPSTREAM_PORT [--loss P] [--rebind-every S] [--seed N] [--host 127.0.0.1]
Runs until killed; prints a one-line summary on SIGTERM.
"""
import argparse
import random
import select
import signal
import socket
import sys
import time


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("listen_port", type=int)
    parser.add_argument("upstream_port", type=int)
    parser.add_argument("--loss", type=float, default=0.0)
    parser.add_argument("--rebind-every", type=float, default=0.0)
    parser.add_argument("--seed", type=int, default=1)
    # Rebinding starts once this many datagrams went to the client: after the handshake, as in the runner (RFC 9000 §9:
    # an address change during the handshake is not expected to survive).
    parser.add_argument("--rebind-after-down", type=int, default=50)
    parser.add_argument("--host", default="127.0.0.1")
    args = parser.parse_args()

    rng = random.Random(args.seed)
    upstream_addr = (args.host, args.upstream_port)
    front = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    front.bind((args.host, args.listen_port))
    back = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    back.bind((args.host, 0))
    client = None
    old_backs = []
    stats = {"up": 0, "down": 0, "dropped": 0, "rebinds": 0}
    next_rebind = None

    def finish(*_):
        print(f"relay: forwarded up={stats['up']} down={stats['down']} dropped={stats['dropped']} rebinds={stats['rebinds']}", flush=True)
        sys.exit(0)

    signal.signal(signal.SIGTERM, finish)
    signal.signal(signal.SIGINT, finish)

    while True:
        timeout = None
        if next_rebind is not None:
            timeout = max(0.0, next_rebind - time.monotonic())
        readable, _, _ = select.select([front, back] + old_backs, [], [], timeout)
        if next_rebind is not None and time.monotonic() >= next_rebind:
            # NAT rebinding: a new source port towards the server (the old ports keep delivering, see above).
            old_backs.append(back)
            if len(old_backs) > 8:
                old_backs.pop(0).close()
            back = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            back.bind((args.host, 0))
            stats["rebinds"] += 1
            next_rebind = time.monotonic() + args.rebind_every
            continue
        for sock in readable:
            data, source = sock.recvfrom(65535)
            if rng.random() < args.loss:
                stats["dropped"] += 1
                continue
            if sock is front:
                client = source
                back.sendto(data, upstream_addr)
                stats["up"] += 1
            elif client is not None:
                front.sendto(data, client)
                stats["down"] += 1
                if args.rebind_every > 0 and next_rebind is None and stats["down"] >= args.rebind_after_down:
                    next_rebind = time.monotonic() + args.rebind_every


if __name__ == "__main__":
    main()
