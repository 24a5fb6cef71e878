namespace System.Net.Quic.Managed.Streams;

/// <summary>
/// Stream identifier arithmetic. RFC 9000 §2.1: the two least significant bits carry the initiator (0x01 set = server)
/// and the direction (0x02 set = unidirectional); the remaining bits are the per-type index.
/// </summary>
internal static class StreamId
{
    /// <summary>Largest encodable stream id: ids are varints, so at most 2^62-1. RFC 9000 §2.1.</summary>
    public const long MaxValue = (1L << 62) - 1;

    /// <summary>Largest stream count any MAX_STREAMS / STREAMS_BLOCKED may carry (2^60). RFC 9000 §4.6, §19.11.</summary>
    public const long MaxStreamCount = 1L << 60;

    private const long ServerInitiatedBit = 0x01;
    private const long UnidirectionalBit = 0x02;

    public static bool IsValid(long id) => id >= 0 && id <= MaxValue;

    public static bool IsServerInitiated(long id) => (id & ServerInitiatedBit) != 0;

    public static bool IsClientInitiated(long id) => (id & ServerInitiatedBit) == 0;

    public static bool IsUnidirectional(long id) => (id & UnidirectionalBit) != 0;

    public static bool IsBidirectional(long id) => (id & UnidirectionalBit) == 0;

    /// <summary>The index of the stream among streams of its type (id >> 2).</summary>
    public static long Index(long id) => id >> 2;

    /// <summary>The stream type, 0..3 (the two low bits). RFC 9000 Table 1.</summary>
    public static int Type(long id) => (int)(id & 0x03);

    /// <summary>Whether the endpoint identified by <paramref name="isServer"/> opened this stream.</summary>
    public static bool IsLocal(long id, bool isServer) => IsServerInitiated(id) == isServer;

    /// <summary>Whether the endpoint may send on this stream: bidirectional, or unidirectional and opened locally.</summary>
    public static bool CanSend(long id, bool isServer) => IsBidirectional(id) || IsLocal(id, isServer);

    /// <summary>Whether the endpoint may receive on this stream: bidirectional, or unidirectional and opened by the peer.</summary>
    public static bool CanReceive(long id, bool isServer) => IsBidirectional(id) || !IsLocal(id, isServer);

    /// <summary>Builds the id of the <paramref name="index"/>-th stream of a type.</summary>
    public static long Make(long index, bool serverInitiated, bool unidirectional)
    {
        if ((ulong)index >= (ulong)MaxStreamCount)
        {
            throw new ArgumentOutOfRangeException(nameof(index));
        }

        return (index << 2) | (serverInitiated ? ServerInitiatedBit : 0) | (unidirectional ? UnidirectionalBit : 0);
    }

    /// <summary>The number of streams of this id's type that must be allowed for the id to be usable (index + 1).</summary>
    public static long CountNeeded(long id) => Index(id) + 1;
}
