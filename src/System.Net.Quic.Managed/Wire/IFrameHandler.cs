namespace System.Net.Quic.Managed.Wire;

/// <summary>
/// What <see cref="FrameReader.Read"/> hands each frame of a packet payload to (RFC 9000 §19, RFC 9221 §4). Every
/// method returns <see cref="TransportErrorCode.NoError"/> to go on with the next frame or an error code that ends the
/// payload; <see cref="FrameReader.Read"/> returns that code. Implementations are structs, so the reader is compiled
/// once per handler and calls these methods directly. A new frame type adds its codec in Wire, one case in
/// <see cref="FrameReader"/>, one method here and that method in each handler.
/// </summary>
internal interface IFrameHandler
{
    /// <summary>
    /// Called first for every frame, with its type and where it starts in the payload. <paramref name="typeError"/> is
    /// <see cref="TransportErrorCode.FrameEncodingError"/> for a truncated or unknown type (the payload ends after this
    /// call whatever it returns: the frame's length cannot be known) and <see cref="TransportErrorCode.ProtocolViolation"/>
    /// for a type that is not minimally encoded (RFC 9000 §12.4). A consumer that refuses frames the packet type does not
    /// allow (§12.4 Table 3, <see cref="FrameTypes.IsAllowedIn"/>) does it here, before the frame's body is decoded.
    /// </summary>
    TransportErrorCode OnFrameType(FrameType type, TransportErrorCode typeError, int offset);

    /// <summary>A run of PADDING frames; <paramref name="length"/> counts every byte of the run.</summary>
    TransportErrorCode OnPadding(int length);

    TransportErrorCode OnPing();

    /// <summary>ACK or ACK_ECN (the latter when <see cref="AckFrame.EcnCounts"/> has a value).</summary>
    TransportErrorCode OnAck(in AckFrame frame);

    TransportErrorCode OnResetStream(in ResetStreamFrame frame);

    TransportErrorCode OnStopSending(in StopSendingFrame frame);

    TransportErrorCode OnCrypto(in CryptoFrame frame);

    TransportErrorCode OnNewToken(in NewTokenFrame frame);

    /// <summary>STREAM, types 0x08-0x0f.</summary>
    TransportErrorCode OnStream(in StreamFrame frame);

    TransportErrorCode OnMaxData(in MaxDataFrame frame);

    TransportErrorCode OnMaxStreamData(in MaxStreamDataFrame frame);

    TransportErrorCode OnMaxStreams(in MaxStreamsFrame frame);

    TransportErrorCode OnDataBlocked(in DataBlockedFrame frame);

    TransportErrorCode OnStreamDataBlocked(in StreamDataBlockedFrame frame);

    TransportErrorCode OnStreamsBlocked(in StreamsBlockedFrame frame);

    TransportErrorCode OnNewConnectionId(in NewConnectionIdFrame frame);

    TransportErrorCode OnRetireConnectionId(in RetireConnectionIdFrame frame);

    TransportErrorCode OnPathChallenge(in PathChallengeFrame frame);

    TransportErrorCode OnPathResponse(in PathResponseFrame frame);

    /// <summary>CONNECTION_CLOSE of either type (0x1c transport, 0x1d application).</summary>
    TransportErrorCode OnConnectionClose(in ConnectionCloseFrame frame);

    TransportErrorCode OnHandshakeDone();

    /// <summary>DATAGRAM of either type (0x30 without length, 0x31 with).</summary>
    TransportErrorCode OnDatagram(in DatagramFrame frame);
}
