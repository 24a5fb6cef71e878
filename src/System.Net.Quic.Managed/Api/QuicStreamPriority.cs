namespace System.Net.Quic.Managed;

/// <summary>
/// Extension beyond System.Net.Quic: the send priority of a <see cref="QuicStream"/>, in the model of RFC 9218
/// (Extensible Prioritization Scheme for HTTP): an urgency from 0 (most urgent) to 7 (least urgent) and an incremental
/// flag. The sender always serves the most urgent streams that have data; among streams of one urgency, non-incremental
/// ones are sent one at a time in stream-id order (each finishes before the next starts), then incremental ones share
/// the remaining capacity round-robin. The priority is local: it orders what this endpoint sends and is never signalled
/// to the peer (RFC 9218 signals priorities at the HTTP layer).
/// </summary>
/// <remarks>
/// <see cref="Default"/> (urgency 3, incremental) is what every stream starts with, and equals
/// <c>default(QuicStreamPriority)</c>. Unlike RFC 9218's HTTP default (incremental = false), streams are incremental by
/// default, so streams nobody prioritised share the connection fairly. Control frames and retransmissions of lost data
/// are sent before any priority level, so priorities never starve them.
/// </remarks>
public readonly struct QuicStreamPriority : IEquatable<QuicStreamPriority>
{
    /// <summary>The urgency of a stream nobody prioritised (RFC 9218 §4.1).</summary>
    public const int DefaultUrgency = 3;

    /// <summary>The most urgent level.</summary>
    public const int MinUrgency = 0;

    /// <summary>The least urgent level.</summary>
    public const int MaxUrgency = 7;

    // Stored relative to the default so that default(QuicStreamPriority) is the default priority.
    private readonly sbyte _urgencyOffset;
    private readonly bool _nonIncremental;

    /// <summary>Creates a priority.</summary>
    /// <param name="urgency">0 (most urgent) to 7 (least urgent).</param>
    /// <param name="incremental">Whether the stream shares capacity round-robin with other incremental streams of its urgency (true) or is sent whole before the next one (false).</param>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="urgency"/> is not between 0 and 7.</exception>
    public QuicStreamPriority(int urgency, bool incremental = true)
    {
        if (urgency is < MinUrgency or > MaxUrgency)
        {
            throw new ArgumentOutOfRangeException(nameof(urgency), urgency, "The urgency must be between 0 (most urgent) and 7 (least urgent), as in RFC 9218.");
        }

        _urgencyOffset = (sbyte)(urgency - DefaultUrgency);
        _nonIncremental = !incremental;
    }

    /// <summary>Urgency 3, incremental: what every stream starts with.</summary>
    public static QuicStreamPriority Default => default;

    /// <summary>0 (most urgent) to 7 (least urgent).</summary>
    public int Urgency => DefaultUrgency + _urgencyOffset;

    /// <summary>True: shares capacity round-robin with other incremental streams of the same urgency; false: sent whole, in stream-id order.</summary>
    public bool Incremental => !_nonIncremental;

    /// <inheritdoc />
    public bool Equals(QuicStreamPriority other) => _urgencyOffset == other._urgencyOffset && _nonIncremental == other._nonIncremental;

    /// <inheritdoc />
    public override bool Equals(object? obj) => obj is QuicStreamPriority other && Equals(other);

    /// <inheritdoc />
    public override int GetHashCode() => (Urgency << 1) | (Incremental ? 1 : 0);

    /// <summary>Whether two priorities are equal.</summary>
    public static bool operator ==(QuicStreamPriority left, QuicStreamPriority right) => left.Equals(right);

    /// <summary>Whether two priorities differ.</summary>
    public static bool operator !=(QuicStreamPriority left, QuicStreamPriority right) => !left.Equals(right);

    /// <summary>RFC 9218 Priority field syntax, e.g. <c>u=3, i</c>.</summary>
    public override string ToString() => Incremental ? $"u={Urgency}, i" : $"u={Urgency}";
}
