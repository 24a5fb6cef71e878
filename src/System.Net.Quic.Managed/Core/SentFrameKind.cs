namespace System.Net.Quic.Managed.Core;

/// <summary>
/// What a sent packet carried that matters when it is acknowledged or lost (RFC 9000 §13.3: retransmission
/// is per frame, with current values, never per packet).
/// </summary>
internal enum SentFrameKind : byte
{
    /// <summary>STREAM data [Offset, Offset+Length) of stream Id, with FIN when Flag is set.</summary>
    Stream,

    /// <summary>CRYPTO data [Offset, Offset+Length) of the packet's own space.</summary>
    Crypto,

    /// <summary>ACK frame whose largest acknowledged is Offset: when acknowledged, older ranges need not be sent again.</summary>
    Ack,

    ResetStream,
    StopSending,
    MaxData,
    MaxStreamData,

    /// <summary>MAX_STREAMS; Flag set for bidirectional.</summary>
    MaxStreams,

    DataBlocked,
    StreamDataBlocked,

    /// <summary>STREAMS_BLOCKED; Flag set for bidirectional.</summary>
    StreamsBlocked,

    /// <summary>NEW_CONNECTION_ID with sequence number Offset.</summary>
    NewConnectionId,

    /// <summary>RETIRE_CONNECTION_ID with sequence number Offset.</summary>
    RetireConnectionId,

    HandshakeDone,
    NewToken,

    /// <summary>PATH_CHALLENGE: if lost while the path is still being validated, a new challenge replaces it (RFC 9000 §8.2.1).</summary>
    PathChallenge,

    /// <summary>PATH_RESPONSE: never retransmitted (RFC 9000 §8.2.2); a new PATH_CHALLENGE gets a new response.</summary>
    PathResponse,

    /// <summary>PING (also the probe of an otherwise empty packet): nothing to repeat.</summary>
    Ping,

    /// <summary>Frames a test wrote verbatim: nothing to repeat.</summary>
    RawForTesting,

    /// <summary>DATAGRAM number Id of Length bytes (RFC 9221): never repeated, its acknowledgement or loss is reported.</summary>
    Datagram,
}
