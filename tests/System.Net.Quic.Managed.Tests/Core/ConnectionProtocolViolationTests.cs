using System.Net.Quic.Managed.Core;
using System.Net.Quic.Managed.Wire;

namespace System.Net.Quic.Managed.Tests.Core;

/// <summary>
/// Each protocol violation, delivered inside a correctly protected 1-RTT packet of the real peer, makes the
/// receiver close with the error code RFC 9000 assigns to it, and the offender sees that code from its peer.
/// </summary>
public class ConnectionProtocolViolationTests
{
    public static TheoryData<string> Cases => new()
    {
        "stream-on-local-uni", "beyond-flow-control", "beyond-max-streams", "final-size-change", "unknown-frame",
        "handshake-done-from-client", "ack-of-unsent", "too-many-connection-ids", "truncated-frame", "crypto-buffer",
        "new-token-from-client", "stream-on-unopened-local-uni",
    };

    [Theory]
    [MemberData(nameof(Cases))]
    public void ViolationClosesWithItsErrorCode(string name)
    {
        using var pair = new QuicPair(seed: 300 + name.Length);
        Assert.True(pair.Handshake());
        pair.RunUntil(() => pair.ClientConnection!.IsHandshakeConfirmed, 1_000_000);
        Connection client = pair.ClientConnection!, server = pair.ServerConnection!;
        Connection offender = client, receiver = server;
        TransportErrorCode expected;
        var f = new RawFrameBuilder();
        byte[] x = { 0x78 };
        switch (name)
        {
            case "stream-on-local-uni":
                // RFC 9000 §19.8: STREAM for a locally initiated unidirectional (send-only) stream is STREAM_STATE_ERROR.
                Assert.True(server.TryOpenStream(unidirectional: true, out long uni));
                Assert.Equal(3, uni);
                f.VarInt(0x0a).VarInt((ulong)uni).VarInt(1).Bytes(x);
                expected = TransportErrorCode.StreamStateError;
                break;
            case "stream-on-unopened-local-uni":
                // §19.8 / §3.2: a send-only stream the server has not even opened yet (7: its second unidirectional
                // stream) is just as much STREAM_STATE_ERROR.
                f.VarInt(0x0a).VarInt(7).VarInt(1).Bytes(x);
                expected = TransportErrorCode.StreamStateError;
                break;
            case "beyond-flow-control":
                // §4.1: data beyond the stream's advertised limit (initial_max_stream_data_bidi_remote = 256 KiB).
                f.VarInt(0x0e).VarInt(0).VarInt(256 * 1024).VarInt(1).Bytes(x);
                expected = TransportErrorCode.FlowControlError;
                break;
            case "beyond-max-streams":
                // §4.6: the 101st client bidirectional stream (ID 400) with MAX_STREAMS 100.
                f.VarInt(0x0a).VarInt(400).VarInt(1).Bytes(x);
                expected = TransportErrorCode.StreamLimitError;
                break;
            case "final-size-change":
                // §4.5: a FIN at 5 bytes, then a FIN at 6 bytes on the same stream.
                f.VarInt(0x0b).VarInt(0).VarInt(5).Bytes("hello"u8);
                f.VarInt(0x0f).VarInt(0).VarInt(0).VarInt(6).Bytes("hello!"u8);
                expected = TransportErrorCode.FinalSizeError;
                break;
            case "unknown-frame":
                // §12.4: an unknown frame type is FRAME_ENCODING_ERROR (0x1f is not assigned).
                f.VarInt(0x1f);
                expected = TransportErrorCode.FrameEncodingError;
                break;
            case "handshake-done-from-client":
                // §19.20: a server receiving HANDSHAKE_DONE treats it as PROTOCOL_VIOLATION.
                f.VarInt(0x1e);
                expected = TransportErrorCode.ProtocolViolation;
                break;
            case "ack-of-unsent":
                // §13.1: acknowledging a packet number never sent MAY be PROTOCOL_VIOLATION.
                f.VarInt(0x02).VarInt(1_000_000).VarInt(0).VarInt(0).VarInt(0);
                expected = TransportErrorCode.ProtocolViolation;
                break;
            case "too-many-connection-ids":
                // §5.1.1: more active IDs than our active_connection_id_limit (4) is CONNECTION_ID_LIMIT_ERROR.
                for (ulong seq = 10; seq < 16; seq++)
                {
                    f.VarInt(0x18).VarInt(seq).VarInt(0).VarInt(8).Bytes(BitConverter.GetBytes(0x1122334455667700UL + seq));
                    f.Bytes(new byte[16] { (byte)seq, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15 });
                }
                offender = server;
                receiver = client;
                expected = TransportErrorCode.ConnectionIdLimitError;
                break;
            case "truncated-frame":
                // §12.4: a STREAM frame whose Length runs past the end of the packet is FRAME_ENCODING_ERROR.
                f.VarInt(0x0a).VarInt(0).VarInt(4000).Bytes("short"u8);
                expected = TransportErrorCode.FrameEncodingError;
                break;
            case "crypto-buffer":
                // §7.5: CRYPTO data far beyond what the receiver buffers is CRYPTO_BUFFER_EXCEEDED.
                f.VarInt(0x06).VarInt(1 << 20).VarInt(1).Bytes(x);
                expected = TransportErrorCode.CryptoBufferExceeded;
                break;
            case "new-token-from-client":
                // §19.7: a server receiving NEW_TOKEN closes with PROTOCOL_VIOLATION.
                f.VarInt(0x07).VarInt(4).Bytes("tokn"u8);
                expected = TransportErrorCode.ProtocolViolation;
                break;
            default:
                throw new ArgumentException(name);
        }

        offender.SendRawFramesForTesting(f.ToArray());
        pair.RunUntil(() => receiver.Phase != ConnectionPhase.Open && offender.Phase != ConnectionPhase.Open, 2_000_000);
        Assert.NotNull(receiver.Error);
        Assert.Equal(ConnectionErrorSource.Transport, receiver.Error!.Source);
        Assert.Equal((ulong)expected, receiver.Error.Code);
        Assert.False(receiver.Error.ByPeer);
        Assert.NotNull(offender.Error);
        Assert.Equal(ConnectionErrorSource.Transport, offender.Error!.Source);
        Assert.Equal((ulong)expected, offender.Error.Code);
        Assert.True(offender.Error.ByPeer);
        Assert.Equal(ConnectionPhase.Draining, offender.Phase);

        // Both connections end and leave nothing routed behind.
        pair.RunUntil(() => pair.ClientEndpoint.Connections.Count == 0 && pair.ServerEndpoint.Connections.Count == 0, 5_000_000);
        Assert.Empty(pair.ClientEndpoint.Connections);
        Assert.Empty(pair.ServerEndpoint.Connections);
        Assert.Equal(0, pair.ServerEndpoint.RouteCount);
        Assert.Equal(0, pair.ClientEndpoint.RouteCount);
    }
}
