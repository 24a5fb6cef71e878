namespace System.Net.Quic.Managed.Wire;

/// <summary>Frame types. RFC 9000 §19 and §12.4 Table 3, RFC 9221 §4 (DATAGRAM).</summary>
internal enum FrameType : ulong
{
    Padding = 0x00,
    Ping = 0x01,
    Ack = 0x02,
    AckEcn = 0x03,
    ResetStream = 0x04,
    StopSending = 0x05,
    Crypto = 0x06,
    NewToken = 0x07,

    /// <summary>STREAM frames occupy 0x08..0x0f; the low three bits are OFF (0x04), LEN (0x02) and FIN (0x01).</summary>
    Stream = 0x08,
    StreamMax = 0x0f,

    MaxData = 0x10,
    MaxStreamData = 0x11,
    MaxStreamsBidirectional = 0x12,
    MaxStreamsUnidirectional = 0x13,
    DataBlocked = 0x14,
    StreamDataBlocked = 0x15,
    StreamsBlockedBidirectional = 0x16,
    StreamsBlockedUnidirectional = 0x17,
    NewConnectionId = 0x18,
    RetireConnectionId = 0x19,
    PathChallenge = 0x1a,
    PathResponse = 0x1b,
    ConnectionClose = 0x1c,
    ConnectionCloseApplication = 0x1d,
    HandshakeDone = 0x1e,

    /// <summary>DATAGRAM without a Length field: the data runs to the end of the packet. RFC 9221 §4.</summary>
    Datagram = 0x30,

    /// <summary>DATAGRAM with a Length field. RFC 9221 §4.</summary>
    DatagramWithLength = 0x31,
}
