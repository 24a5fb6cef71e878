using System.Collections.Generic;
using System.Net.Quic.Managed.Crypto;
using System.Net.Quic.Managed.Wire;

namespace System.Net.Quic.Managed.Ids;

/// <summary>
/// The connection IDs this endpoint issued to its peer (RFC 9000 §5.1.1): sequence numbers, the
/// NEW_CONNECTION_ID frames still to send, and the peer's RETIRE_CONNECTION_ID requests (§19.16).
/// The endpoint drains <see cref="TryDequeueRoutingChange"/> to keep its CID → connection map current.
/// </summary>
internal sealed class LocalConnectionIdSet
{
    /// <summary>We never keep more than this many IDs active, whatever the peer's limit (it is a cost for both sides).</summary>
    public const int MaxActive = 8;

    private readonly IRandomSource _random;
    private readonly StatelessResetTokenGenerator _tokens;
    private readonly int _idLength;
    private readonly ConnectionIdGenerator? _generator;
    private readonly List<IssuedConnectionId> _active = new();
    private readonly Queue<ulong> _toAdvertise = new();
    private readonly Queue<ConnectionIdRoutingChange> _routing = new();
    private ulong _nextSequence;
    private int _peerLimit = 2;

    /// <summary>
    /// Starts with the ID we chose as our Source Connection ID in the handshake (sequence 0, §5.1.1). Later IDs come from
    /// <paramref name="generator"/> (of the initial ID's length), or are random when it is null.
    /// </summary>
    public LocalConnectionIdSet(in ConnectionId initial, IRandomSource random, StatelessResetTokenGenerator tokens, ConnectionIdGenerator? generator = null)
    {
        _random = random;
        _generator = generator;
        _tokens = tokens;
        _idLength = initial.Length;
        _active.Add(new IssuedConnectionId(0, initial, tokens.Generate(initial)));
        _routing.Enqueue(new ConnectionIdRoutingChange(initial, true));
        _nextSequence = 1;
    }

    public int ActiveCount => _active.Count;

    /// <summary>The reset token of sequence 0; a server sends it in the stateless_reset_token transport parameter (§18.2).</summary>
    public StatelessResetToken InitialResetToken => _active.Count > 0 && _active[0].SequenceNumber == 0 ? _active[0].ResetToken : default;

    /// <summary>
    /// Applies the peer's active_connection_id_limit and issues IDs up to min(limit, <see cref="MaxActive"/>).
    /// A zero-length ID cannot be changed, so nothing is issued then (§5.1.1).
    /// </summary>
    public void SetPeerActiveLimit(ulong limit)
    {
        _peerLimit = (int)Math.Min(limit, MaxActive);
        IssueToLimit();
    }

    private void IssueToLimit()
    {
        if (_idLength == 0) return;
        while (_active.Count < _peerLimit)
        {
            ConnectionId id = _generator?.Create(_random) ?? ConnectionId.Create(_random, _idLength);
            if (Contains(id)) continue; // a collision with our own ID: draw again
            var issued = new IssuedConnectionId(_nextSequence++, id, _tokens.Generate(id));
            _active.Add(issued);
            _toAdvertise.Enqueue(issued.SequenceNumber);
            _routing.Enqueue(new ConnectionIdRoutingChange(id, true));
        }
    }

    /// <summary>
    /// Issues the ID a server puts in its preferred_address transport parameter (RFC 9000 §5.1.1: sequence 1), routed like
    /// the others but never advertised in NEW_CONNECTION_ID. Only before any other ID was issued.
    /// </summary>
    public IssuedConnectionId IssuePreferredAddressId()
    {
        if (_nextSequence != 1 || _idLength == 0) throw new InvalidOperationException("The preferred address ID is sequence 1, issued first.");
        ConnectionId id;
        do
        {
            id = _generator?.Create(_random) ?? ConnectionId.Create(_random, _idLength);
        }
        while (Contains(id));
        var issued = new IssuedConnectionId(_nextSequence++, id, _tokens.Generate(id));
        _active.Add(issued);
        _routing.Enqueue(new ConnectionIdRoutingChange(id, true));
        return issued;
    }

    public bool Contains(in ConnectionId id)
    {
        foreach (IssuedConnectionId issued in _active)
        {
            if (issued.Id == id) return true;
        }
        return false;
    }

    /// <summary>True when NEW_CONNECTION_ID frames are owed (some may turn out retired when dequeued).</summary>
    public bool HasPendingAdvertisement => _toAdvertise.Count > 0;

    /// <summary>Next NEW_CONNECTION_ID to send (retire_prior_to is always 0: we never force the peer off an ID).</summary>
    public bool TryDequeueAdvertisement(out IssuedConnectionId issued)
    {
        while (_toAdvertise.TryDequeue(out ulong sequence))
        {
            if (TryFind(sequence, out issued)) return true; // retired meanwhile: nothing to send
        }
        issued = default;
        return false;
    }

    /// <summary>A packet carrying NEW_CONNECTION_ID was lost: send it again if the ID is still active.</summary>
    public void OnAdvertisementLost(ulong sequence)
    {
        if (TryFind(sequence, out _)) _toAdvertise.Enqueue(sequence);
    }

    /// <summary>
    /// RETIRE_CONNECTION_ID from the peer (§19.16). Retiring a sequence number never issued, or the ID the
    /// frame's packet was addressed to, is a PROTOCOL_VIOLATION. A repeat is ignored.
    /// </summary>
    public TransportErrorCode OnRetire(ulong sequence, in ConnectionId packetDestination)
    {
        if (sequence >= _nextSequence) return TransportErrorCode.ProtocolViolation;
        for (int i = 0; i < _active.Count; i++)
        {
            if (_active[i].SequenceNumber != sequence) continue;
            if (_active[i].Id == packetDestination) return TransportErrorCode.ProtocolViolation;
            _routing.Enqueue(new ConnectionIdRoutingChange(_active[i].Id, false));
            _active.RemoveAt(i);
            IssueToLimit();
            break;
        }
        return TransportErrorCode.NoError;
    }

    public bool TryDequeueRoutingChange(out ConnectionIdRoutingChange change) => _routing.TryDequeue(out change);

    /// <summary>All IDs still routed to this connection, for removal when it ends.</summary>
    public IReadOnlyList<IssuedConnectionId> Active => _active;

    private bool TryFind(ulong sequence, out IssuedConnectionId issued)
    {
        foreach (IssuedConnectionId candidate in _active)
        {
            if (candidate.SequenceNumber == sequence)
            {
                issued = candidate;
                return true;
            }
        }
        issued = default;
        return false;
    }
}
