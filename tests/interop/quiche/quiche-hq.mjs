// hq-interop client and server on Cloudflare's quiche (0.18), driven through the N-API binding that npm's
// @matrixai/quic-linux-x64 ships prebuilt: quiche's own Config/Connection, this script only moves datagrams, timers
// and stream bytes (no @matrixai/quic JS layer). Environment, as the quic-interop-runner endpoints:
//   QUICHE_BINDING  path of the binding's node.napi.node (tests/interop/quiche/install.sh prints it)
//   ROLE            client | server
//   TESTCASE        handshake | transfer | multiplexing | retry (others: exit 127, "unsupported")
//   SSLKEYLOGFILE   NSS key log quiche writes (every connection, appended)
//   server: BIND=host:port, WWW (files served), CERTS (cert.pem, priv.key); retry: a Retry to every new client
//   client: REQUESTS="https://host:port/file ...", DOWNLOADS (where files are written)
// Exit codes: 0 every request answered (client) / stopped by a signal (server), 1 failure, 127 unsupported case.
import dgram from 'node:dgram';
import fs from 'node:fs';
import path from 'node:path';
import crypto from 'node:crypto';
import { createRequire } from 'node:module';

const env = process.env;
const supported = ['handshake', 'transfer', 'multiplexing', 'retry'];
const testcase = env.TESTCASE ?? 'transfer';
if (!supported.includes(testcase)) {
  console.error(`testcase ${testcase} not supported`);
  process.exit(127);
}
const q = createRequire(import.meta.url)(env.QUICHE_BINDING);
const cidLength = 16;
const out = Buffer.alloc(65535);
const log = (...a) => console.error(new Date().toISOString(), ...a);

function makeConfig(isServer) {
  const c = new q.Config();
  if (isServer) {
    c.loadCertChainFromPemFile(path.join(env.CERTS, 'cert.pem'));
    c.loadPrivKeyFromPemFile(path.join(env.CERTS, 'priv.key'));
  }
  c.verifyPeer(false);
  c.setApplicationProtos(['hq-interop']);
  c.setMaxIdleTimeout(30000);
  c.setInitialMaxData(32 << 20);
  c.setInitialMaxStreamDataBidiLocal(16 << 20);
  c.setInitialMaxStreamDataBidiRemote(1 << 20);
  c.setInitialMaxStreamDataUni(1 << 20);
  c.setInitialMaxStreamsBidi(200);
  c.setInitialMaxStreamsUni(100);
  if (env.SSLKEYLOGFILE) c.logKeys();
  return c;
}

/** One connection: quiche's Connection, its peer, its timer, and hq-interop stream state. */
class Conn {
  constructor(sock, conn, peer) {
    this.sock = sock;
    this.conn = conn;
    this.peer = peer;
    this.timer = null;
    this.pending = new Map(); // stream id -> { data, off } left to write (server responses)
    if (env.SSLKEYLOGFILE) conn.setKeylog(env.SSLKEYLOGFILE);
  }

  flush() {
    for (;;) {
      let r;
      try {
        r = this.conn.send(out);
      } catch (e) {
        log('send:', e.message);
        break;
      }
      if (r == null) break;
      const [n, info] = r;
      this.sock.send(Buffer.from(out.subarray(0, n)), info.to.port, info.to.host);
    }
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const t = this.conn.timeout();
    if (t != null && !this.conn.isClosed()) {
      this.timer = setTimeout(() => {
        this.timer = null;
        this.conn.onTimeout();
        this.afterEvent();
      }, Math.max(0, Math.ceil(t)));
    }
  }

  afterEvent() {
    this.onEvent?.(); // reads requests (server), opens streams and reads responses (client)
    this.writePending();
    this.flush();
    if (this.conn.isClosed()) this.onClosed?.();
  }

  /** Writes what flow control allows of every pending response; fin goes with the last byte. */
  writePending() {
    for (const [id, p] of this.pending) {
      while (true) {
        let n;
        try {
          n = this.conn.streamSend(id, p.data.subarray(p.off), true);
        } catch (e) {
          log(`stream ${id}:`, e.message);
          this.pending.delete(id);
          break;
        }
        if (n == null) break;
        p.off += n;
        if (p.off >= p.data.length) {
          this.pending.delete(id);
          break;
        }
        if (n === 0) break;
      }
    }
  }

  /** Reads every readable stream: calls onData(id, bytes, fin). */
  readStreams(onData) {
    for (const id of this.conn.readable()) {
      for (;;) {
        let r;
        try {
          r = this.conn.streamRecv(id, out);
        } catch (e) {
          break;
        }
        if (r == null) break;
        const [n, fin] = r;
        onData(id, Buffer.from(out.subarray(0, n)), fin);
        if (fin) break;
      }
    }
  }
}

function hostPort(s) {
  const i = s.lastIndexOf(':');
  return { host: s.slice(0, i).replace(/^\[|\]$/g, ''), port: Number(s.slice(i + 1)) };
}

function runServer() {
  const local = hostPort(env.BIND ?? '127.0.0.1:4433');
  const config = makeConfig(true);
  const retry = testcase === 'retry';
  const conns = new Map(); // DCID hex -> Conn
  const sock = dgram.createSocket({ type: local.host.includes(':') ? 'udp6' : 'udp4', recvBufferSize: 8 << 20, sendBufferSize: 8 << 20 });
  const tokenPrefix = Buffer.from('quiche-hq retry token ');
  sock.on('message', (msg, rinfo) => {
    let hdr;
    try {
      hdr = q.Header.fromSlice(msg, cidLength);
    } catch {
      return;
    }
    const dcid = Buffer.from(hdr.dcid);
    let c = conns.get(dcid.toString('hex'));
    if (!c) {
      if (hdr.ty === q.Type.Short || hdr.ty === q.Type.VersionNegotiation) return;
      // Before the type: the type bits of another version's long header mean something else (v2's Initial is 0b01).
      if (!q.versionIsSupported(hdr.version)) {
        if (msg.length < 1200) return; // RFC 9000 §6.1: only for datagrams a client Initial could be
        const n = q.negotiateVersion(hdr.scid, hdr.dcid, out);
        sock.send(Buffer.from(out.subarray(0, n)), rinfo.port, rinfo.address);
        return;
      }
      if (hdr.ty !== q.Type.Initial) return;
      let odcid = null;
      let scid = crypto.randomBytes(cidLength);
      if (retry) {
        const token = hdr.token ? Buffer.from(hdr.token) : Buffer.alloc(0);
        const bound = Buffer.concat([tokenPrefix, Buffer.from(`${rinfo.address} `)]);
        if (token.length === 0) {
          const newToken = Buffer.concat([bound, dcid]);
          const n = q.retry(hdr.scid, hdr.dcid, scid, newToken, hdr.version, out);
          sock.send(Buffer.from(out.subarray(0, n)), rinfo.port, rinfo.address);
          return;
        }
        if (!token.subarray(0, bound.length).equals(bound)) return;
        odcid = token.subarray(bound.length);
        scid = dcid; // the Retry's Source Connection ID, which the client now sends to
      }
      const peer = { host: rinfo.address, port: rinfo.port };
      const conn = q.Connection.accept(scid, odcid, local, peer, config);
      c = new Conn(sock, conn, peer);
      const keys = [scid.toString('hex'), dcid.toString('hex')];
      for (const k of keys) conns.set(k, c);
      const requests = new Map(); // stream id -> request bytes so far
      const answered = new Set(); // streams whose request line was read (a FIN may still follow on its own)
      c.onEvent = () => c.readStreams((id, data, fin) => {
        if (answered.has(id)) return;
        const sofar = Buffer.concat([requests.get(id) ?? Buffer.alloc(0), data]);
        requests.set(id, sofar);
        const text = sofar.toString('latin1');
        if (!fin && !text.includes('\n')) return;
        requests.delete(id);
        answered.add(id);
        const m = /^GET\s+(\S+)/.exec(text);
        const file = m ? path.join(env.WWW, path.normalize(decodeURIComponent(m[1])).replace(/^(\.\.[/\\])+/, '')) : null;
        let body = Buffer.alloc(0);
        try {
          if (file) body = fs.readFileSync(file);
        } catch {
          log(`stream ${id}: ${file} not found`);
        }
        c.pending.set(id, { data: body, off: 0 });
      });
      c.onClosed = () => {
        if (c.timer) clearTimeout(c.timer);
        for (const k of keys) conns.delete(k);
        log(`connection ${scid.toString('hex')} closed`, JSON.stringify(c.conn.peerError() ?? c.conn.localError() ?? {}));
      };
    }
    try {
      c.conn.recv(msg, { from: { host: rinfo.address, port: rinfo.port }, to: local });
    } catch (e) {
      log('recv:', e.message);
    }
    c.afterEvent();
  });
  sock.bind(local.port, local.host, () => log(`quiche hq-interop server (${testcase}) on ${local.host}:${local.port}`));
  const stop = () => { sock.close(); process.exit(0); };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

function runClient() {
  const urls = (env.REQUESTS ?? '').split(/\s+/).filter(Boolean).map((u) => new URL(u));
  if (urls.length === 0) {
    log('REQUESTS is empty');
    process.exit(1);
  }
  const remote = { host: urls[0].hostname.replace(/^\[|\]$/g, ''), port: Number(urls[0].port || 443) };
  const sock = dgram.createSocket({ type: remote.host.includes(':') ? 'udp6' : 'udp4', recvBufferSize: 8 << 20, sendBufferSize: 8 << 20 });
  const deadline = setTimeout(() => { log('timed out'); process.exit(1); }, Number(env.QUICHE_TIMEOUT_SECONDS ?? 40) * 1000);
  sock.bind(0, remote.host.includes(':') ? '::1' : '127.0.0.1', () => {
    const a = sock.address();
    const local = { host: a.address, port: a.port };
    const conn = q.Connection.connect('localhost', crypto.randomBytes(cidLength), local, remote, makeConfig(false));
    const c = new Conn(sock, conn, remote);
    const queue = [...urls];
    const open = new Map(); // stream id -> { name, chunks }
    let nextId = 0;
    let done = 0;
    let closing = false;
    c.onEvent = () => {
      if (!conn.isEstablished() || closing) return;
      while (queue.length > 0 && conn.peerStreamsLeftBidi() > 0) {
        const u = queue.shift();
        const id = nextId;
        nextId += 4;
        conn.streamSend(id, Buffer.from(`GET ${u.pathname}\r\n`), true);
        open.set(id, { name: path.basename(u.pathname), chunks: [] });
      }
      c.readStreams((id, data, fin) => {
        const s = open.get(id);
        if (!s) return;
        s.chunks.push(data);
        if (!fin) return;
        fs.writeFileSync(path.join(env.DOWNLOADS, s.name), Buffer.concat(s.chunks));
        open.delete(id);
        done++;
      });
      if (done === urls.length) {
        closing = true;
        conn.close(true, 0, Buffer.alloc(0));
      }
    };
    c.onClosed = () => {
      clearTimeout(deadline);
      if (c.timer) clearTimeout(c.timer);
      const ok = done === urls.length;
      log(`closed after ${done}/${urls.length} files`, JSON.stringify(conn.peerError() ?? conn.localError() ?? {}));
      sock.close();
      process.exit(ok ? 0 : 1);
    };
    sock.on('message', (msg, rinfo) => {
      try {
        conn.recv(msg, { from: { host: rinfo.address, port: rinfo.port }, to: local });
      } catch (e) {
        log('recv:', e.message);
      }
      c.afterEvent();
    });
    c.flush();
  });
}

if (env.ROLE === 'server') runServer();
else if (env.ROLE === 'client') runClient();
else {
  console.error('ROLE must be client or server');
  process.exit(1);
}
