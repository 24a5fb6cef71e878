using System.Collections.Generic;
using System.Net.Quic.Managed.Ids;

namespace System.Net.Quic.Managed.Core;

/// <summary>
/// The client Destination Connection IDs a server answered with a Retry because of load (RFC 9000 §8.1.2), for a while.
/// A client that has not yet processed the Retry may repeat its first Initial (a PTO); if the load has dropped by the
/// time the copy arrives, that copy, token-less, would otherwise open a second server connection that the client can
/// never complete (it has moved on to the Retry's ID and keys), and that connection would hold a handshake place until
/// its timeout. Copies of a remembered ID get a Retry again instead. Bounded: <see cref="Capacity"/> IDs, each for
/// <see cref="LifetimeUs"/>; past the bound the oldest is forgotten (a forgotten ID costs only the orphan above). The
/// storage is allocated with the first Retry for load. Endpoint thread only.
/// </summary>
internal sealed class RecentRetries
{
    /// <summary>IDs remembered at most.</summary>
    public const int Capacity = 4096;

    /// <summary>How long an ID is remembered: the default handshake timeout, beyond which the client has given up.</summary>
    public const long LifetimeUs = 10_000_000;

    private readonly Dictionary<ConnectionId, long> _expiry = new();
    private readonly Queue<(ConnectionId Id, long ExpiresUs)> _order = new();

    public void Remember(in ConnectionId id, long nowUs)
    {
        Expire(nowUs);
        while (_expiry.Count >= Capacity && _order.TryDequeue(out (ConnectionId Id, long ExpiresUs) oldest))
        {
            if (_expiry.TryGetValue(oldest.Id, out long expires) && expires == oldest.ExpiresUs) _expiry.Remove(oldest.Id);
        }
        long expiresUs = nowUs + LifetimeUs;
        _expiry[id] = expiresUs;
        _order.Enqueue((id, expiresUs));
    }

    /// <summary>True when <paramref name="id"/> was answered with a Retry less than <see cref="LifetimeUs"/> ago.</summary>
    public bool Contains(in ConnectionId id, long nowUs)
        => _expiry.TryGetValue(id, out long expiresUs) && nowUs < expiresUs;

    private void Expire(long nowUs)
    {
        while (_order.TryPeek(out (ConnectionId Id, long ExpiresUs) oldest) && oldest.ExpiresUs <= nowUs)
        {
            _order.Dequeue();
            if (_expiry.TryGetValue(oldest.Id, out long expires) && expires == oldest.ExpiresUs) _expiry.Remove(oldest.Id);
        }
    }
}
