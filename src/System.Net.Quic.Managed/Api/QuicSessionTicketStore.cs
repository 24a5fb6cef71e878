using System.Collections.Generic;
using System.Net.Quic.Managed.Tls;
using System.Net.Security;
using System.Security.Cryptography.X509Certificates;
using System.Text;

namespace System.Net.Quic.Managed;

/// <summary>
/// Extension beyond System.Net.Quic: keeps the TLS session tickets servers send (RFC 8446 §4.6.1) so that later client
/// connections to the same server resume their session (no certificate exchange) and, when
/// <see cref="QuicClientConnectionOptions.EnableEarlyData"/> is set, send 0-RTT data (RFC 9001 §4.6). Set
/// <see cref="QuicClientConnectionOptions.SessionTicketStore"/> to use it; share one store between connections. Thread-safe.
/// </summary>
/// <remarks>
/// Tickets are kept in memory only and used once each (RFC 8446 Appendix C.4), per target host name, remote endpoint and
/// ALPN list. A resumed connection reports the certificate the first connection validated as its
/// <see cref="QuicConnection.RemoteCertificate"/>. The msquic provider ignores the store.
/// </remarks>
public sealed class QuicSessionTicketStore
{
    private readonly object _lock = new();
    private readonly Dictionary<string, List<Entry>> _entries = new(StringComparer.Ordinal);
    private readonly int _ticketsPerServer;
    private int _count;

    /// <summary>Creates an empty store.</summary>
    /// <param name="ticketsPerServer">Tickets kept per server (newest win); servers often send two or more per connection.</param>
    public QuicSessionTicketStore(int ticketsPerServer = 4)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(ticketsPerServer, 1);
        ArgumentOutOfRangeException.ThrowIfGreaterThan(ticketsPerServer, 64);
        _ticketsPerServer = ticketsPerServer;
    }

    /// <summary>Tickets currently held, over all servers.</summary>
    public int Count
    {
        get
        {
            lock (_lock) return _count;
        }
    }

    /// <summary>Forgets every ticket (e.g. after a server's configuration changed).</summary>
    public void Clear()
    {
        lock (_lock)
        {
            _entries.Clear();
            _count = 0;
        }
    }

    /// <summary>What a client remembers of one ticket: the ticket and the certificate validated when it was issued.</summary>
    internal readonly record struct Entry(TlsSessionTicket Ticket, X509Certificate2? Certificate);

    /// <summary>Servers remembered at once: a client talking to ever more servers must not grow the store without bound.</summary>
    private const int MaxServers = 1024;

    private void EvictOneServer()
    {
        foreach (KeyValuePair<string, List<Entry>> victim in _entries)
        {
            _count -= victim.Value.Count;
            _entries.Remove(victim.Key);
            return;
        }
    }

    internal static string KeyFor(string targetHost, IPEndPoint remote, List<SslApplicationProtocol> protocols)
    {
        var key = new StringBuilder(targetHost.Length + 64);
        key.Append(targetHost).Append('|').Append(remote.ToString());
        foreach (SslApplicationProtocol protocol in protocols) key.Append('|').Append(Convert.ToHexString(protocol.Protocol.Span));
        return key.ToString();
    }

    internal void Add(string key, TlsSessionTicket ticket, X509Certificate2? certificate)
    {
        lock (_lock)
        {
            if (!_entries.TryGetValue(key, out List<Entry>? list))
            {
                if (_entries.Count >= MaxServers) EvictOneServer();
                list = new List<Entry>();
                _entries[key] = list;
            }
            if (list.Count == _ticketsPerServer)
            {
                list.RemoveAt(0);
                _count--;
            }
            list.Add(new Entry(ticket, certificate));
            _count++;
        }
    }

    /// <summary>Takes the newest unexpired ticket for a server (each is used once); expired ones are dropped on the way.</summary>
    internal bool TryTake(string key, long nowUs, out Entry entry)
    {
        lock (_lock)
        {
            entry = default;
            if (!_entries.TryGetValue(key, out List<Entry>? list)) return false;
            bool found = false;
            for (int i = list.Count - 1; i >= 0 && !found; i--)
            {
                Entry candidate = list[i];
                list.RemoveAt(i);
                _count--;
                if (candidate.Ticket.IsExpired(nowUs)) continue;
                entry = candidate;
                found = true;
            }
            if (list.Count == 0) _entries.Remove(key);
            return found;
        }
    }
}
