namespace System.Net.Quic.Managed.Wire;

/// <summary>Frame type reading and the per-type rules of RFC 9000 §12.4 and §13.2.</summary>
internal static class FrameTypes
{
    /// <summary>Reads a Frame Type. RFC 9000 §12.4: a frame type is a varint that MUST use the shortest encoding; a
    /// longer one is answered with PROTOCOL_VIOLATION, which the RFC permits. Unknown types are FRAME_ENCODING_ERROR.</summary>
    public static TransportErrorCode TryRead(ref QuicReader reader, out FrameType type)
    {
        if (!reader.TryReadVarInt(out ulong value, out int encodedLength))
        {
            type = default;
            return TransportErrorCode.FrameEncodingError;
        }

        type = (FrameType)value;
        if (!IsKnown(type))
        {
            return TransportErrorCode.FrameEncodingError;
        }

        return encodedLength == VariableLengthInteger.GetEncodedLength(value)
            ? TransportErrorCode.NoError
            : TransportErrorCode.ProtocolViolation;
    }

    public static bool IsKnown(FrameType type) =>
        type <= FrameType.HandshakeDone || type == FrameType.Datagram || type == FrameType.DatagramWithLength;

    public static bool IsStream(FrameType type) => type >= FrameType.Stream && type <= FrameType.StreamMax;

    /// <summary>Everything but ACK, PADDING and CONNECTION_CLOSE elicits an acknowledgment. RFC 9002 §2, RFC 9000 §13.2.1.</summary>
    public static bool IsAckEliciting(FrameType type) =>
        type is not (FrameType.Padding or FrameType.Ack or FrameType.AckEcn or FrameType.ConnectionClose or FrameType.ConnectionCloseApplication);

    /// <summary>Probing frames: PATH_CHALLENGE, PATH_RESPONSE, NEW_CONNECTION_ID and PADDING. RFC 9000 §9.1.</summary>
    public static bool IsProbing(FrameType type) =>
        type is FrameType.PathChallenge or FrameType.PathResponse or FrameType.NewConnectionId or FrameType.Padding;

    /// <summary>Whether a frame type may appear in a packet type. RFC 9000 §12.4 Table 3; DATAGRAM is allowed in 0-RTT
    /// and 1-RTT (RFC 9221 §4). A frame in the wrong packet type is a PROTOCOL_VIOLATION.</summary>
    public static bool IsAllowedIn(FrameType type, PacketType packetType)
    {
        switch (type)
        {
            // Table 3 "IH01".
            case FrameType.Padding:
            case FrameType.Ping:
            case FrameType.ConnectionClose:
                return packetType is PacketType.Initial or PacketType.Handshake or PacketType.ZeroRtt or PacketType.OneRtt;

            // "IH_1": acknowledgments and CRYPTO never go in 0-RTT.
            case FrameType.Ack:
            case FrameType.AckEcn:
            case FrameType.Crypto:
                return packetType is PacketType.Initial or PacketType.Handshake or PacketType.OneRtt;

            // "___1": only the server sends these, after the handshake, so never in 0-RTT.
            case FrameType.NewToken:
            case FrameType.PathResponse:
            case FrameType.HandshakeDone:
                return packetType == PacketType.OneRtt;

            default:
                // "__01": application data and control frames.
                return IsKnown(type) && packetType is PacketType.ZeroRtt or PacketType.OneRtt;
        }
    }

    /// <summary>The Table 3 check as a transport error: NoError or PROTOCOL_VIOLATION.</summary>
    public static TransportErrorCode CheckAllowedIn(FrameType type, PacketType packetType) =>
        IsAllowedIn(type, packetType) ? TransportErrorCode.NoError : TransportErrorCode.ProtocolViolation;
}
