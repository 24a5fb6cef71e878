using System.Net.Quic.Managed.Wire;

namespace System.Net.Quic.Managed.Tests.Wire;

/// <summary>The reader's own contract: which handler method each frame reaches, and how errors end the payload.</summary>
public class FrameReaderTests
{
    [Theory]
    [MemberData(nameof(FrameTests.EveryFrame), MemberType = typeof(FrameTests))]
    public void EachFrameReachesTheMethodOfItsType(string hex)
    {
        var recorder = new Recorder();
        Assert.Equal(TransportErrorCode.NoError, FrameReader.Read(Convert.FromHexString(hex), ref recorder, out FrameType type, out int offset));
        Assert.Equal(0, offset);
        Assert.Equal(1, recorder.Frames);
        Assert.Equal(ExpectedMethod(type), recorder.Method);
    }

    [Fact]
    public void AHandlerErrorStopsTheReadAtThatFrame()
    {
        // PING, PING, MAX_DATA: the handler refuses the second PING.
        var recorder = new Recorder { RefuseAt = 2 };
        Assert.Equal(TransportErrorCode.ProtocolViolation, FrameReader.Read(Convert.FromHexString("01011033"), ref recorder, out FrameType type, out int offset));
        Assert.Equal(FrameType.Ping, type);
        Assert.Equal(1, offset);
        Assert.Equal(2, recorder.Frames);
    }

    [Fact]
    public void AnUnknownTypeEndsThePayloadWhatTheHandlerSays()
    {
        var recorder = new Recorder { IgnoreTypeErrors = true };
        Assert.Equal(TransportErrorCode.FrameEncodingError, FrameReader.Read(Convert.FromHexString("01402101"), ref recorder, out _, out int offset));
        Assert.Equal(1, offset);
        Assert.Equal(TransportErrorCode.FrameEncodingError, recorder.LastTypeError);
        Assert.Equal(nameof(IFrameHandler.OnPing), recorder.Method); // the PING before it, nothing after
    }

    [Fact]
    public void ANonMinimalTypeIsReadWhenTheHandlerAcceptsIt()
    {
        // PING with a two-byte type: a connection refuses it (PROTOCOL_VIOLATION), the dumper shows it with a warning.
        var strict = new Recorder();
        Assert.Equal(TransportErrorCode.ProtocolViolation, FrameReader.Read(Convert.FromHexString("4001"), ref strict, out _, out _));
        Assert.Null(strict.Method);

        var lenient = new Recorder { IgnoreTypeErrors = true };
        Assert.Equal(TransportErrorCode.NoError, FrameReader.Read(Convert.FromHexString("4001"), ref lenient, out _, out _));
        Assert.Equal(nameof(IFrameHandler.OnPing), lenient.Method);
    }

    [Fact]
    public void AMalformedBodyIsAFrameEncodingErrorAfterOnFrameType()
    {
        var recorder = new Recorder();
        Assert.Equal(TransportErrorCode.FrameEncodingError, FrameReader.Read(Convert.FromHexString("0110"), ref recorder, out FrameType type, out int offset));
        Assert.Equal(FrameType.MaxData, type);
        Assert.Equal(1, offset);
        Assert.Equal(2, recorder.TypesSeen);
        Assert.Equal(1, recorder.Frames);
    }

    private static string ExpectedMethod(FrameType type) => type switch
    {
        FrameType.Padding => nameof(IFrameHandler.OnPadding),
        FrameType.Ping => nameof(IFrameHandler.OnPing),
        FrameType.Ack or FrameType.AckEcn => nameof(IFrameHandler.OnAck),
        FrameType.ResetStream => nameof(IFrameHandler.OnResetStream),
        FrameType.StopSending => nameof(IFrameHandler.OnStopSending),
        FrameType.Crypto => nameof(IFrameHandler.OnCrypto),
        FrameType.NewToken => nameof(IFrameHandler.OnNewToken),
        >= FrameType.Stream and <= FrameType.StreamMax => nameof(IFrameHandler.OnStream),
        FrameType.MaxData => nameof(IFrameHandler.OnMaxData),
        FrameType.MaxStreamData => nameof(IFrameHandler.OnMaxStreamData),
        FrameType.MaxStreamsBidirectional or FrameType.MaxStreamsUnidirectional => nameof(IFrameHandler.OnMaxStreams),
        FrameType.DataBlocked => nameof(IFrameHandler.OnDataBlocked),
        FrameType.StreamDataBlocked => nameof(IFrameHandler.OnStreamDataBlocked),
        FrameType.StreamsBlockedBidirectional or FrameType.StreamsBlockedUnidirectional => nameof(IFrameHandler.OnStreamsBlocked),
        FrameType.NewConnectionId => nameof(IFrameHandler.OnNewConnectionId),
        FrameType.RetireConnectionId => nameof(IFrameHandler.OnRetireConnectionId),
        FrameType.PathChallenge => nameof(IFrameHandler.OnPathChallenge),
        FrameType.PathResponse => nameof(IFrameHandler.OnPathResponse),
        FrameType.ConnectionClose or FrameType.ConnectionCloseApplication => nameof(IFrameHandler.OnConnectionClose),
        FrameType.HandshakeDone => nameof(IFrameHandler.OnHandshakeDone),
        FrameType.Datagram or FrameType.DatagramWithLength => nameof(IFrameHandler.OnDatagram),
        _ => "none",
    };

    /// <summary>Records the last method called and counts frames; refuses the frame numbered <see cref="RefuseAt"/>.</summary>
    private struct Recorder : IFrameHandler
    {
        public int RefuseAt;
        public bool IgnoreTypeErrors;
        public int Frames;
        public int TypesSeen;
        public string? Method;
        public TransportErrorCode LastTypeError;

        public TransportErrorCode OnFrameType(FrameType type, TransportErrorCode typeError, int offset)
        {
            TypesSeen++;
            LastTypeError = typeError;
            return IgnoreTypeErrors ? TransportErrorCode.NoError : typeError;
        }

        public TransportErrorCode OnPadding(int length) => Record(nameof(OnPadding));
        public TransportErrorCode OnPing() => Record(nameof(OnPing));
        public TransportErrorCode OnAck(in AckFrame frame) => Record(nameof(OnAck));
        public TransportErrorCode OnResetStream(in ResetStreamFrame frame) => Record(nameof(OnResetStream));
        public TransportErrorCode OnStopSending(in StopSendingFrame frame) => Record(nameof(OnStopSending));
        public TransportErrorCode OnCrypto(in CryptoFrame frame) => Record(nameof(OnCrypto));
        public TransportErrorCode OnNewToken(in NewTokenFrame frame) => Record(nameof(OnNewToken));
        public TransportErrorCode OnStream(in StreamFrame frame) => Record(nameof(OnStream));
        public TransportErrorCode OnMaxData(in MaxDataFrame frame) => Record(nameof(OnMaxData));
        public TransportErrorCode OnMaxStreamData(in MaxStreamDataFrame frame) => Record(nameof(OnMaxStreamData));
        public TransportErrorCode OnMaxStreams(in MaxStreamsFrame frame) => Record(nameof(OnMaxStreams));
        public TransportErrorCode OnDataBlocked(in DataBlockedFrame frame) => Record(nameof(OnDataBlocked));
        public TransportErrorCode OnStreamDataBlocked(in StreamDataBlockedFrame frame) => Record(nameof(OnStreamDataBlocked));
        public TransportErrorCode OnStreamsBlocked(in StreamsBlockedFrame frame) => Record(nameof(OnStreamsBlocked));
        public TransportErrorCode OnNewConnectionId(in NewConnectionIdFrame frame) => Record(nameof(OnNewConnectionId));
        public TransportErrorCode OnRetireConnectionId(in RetireConnectionIdFrame frame) => Record(nameof(OnRetireConnectionId));
        public TransportErrorCode OnPathChallenge(in PathChallengeFrame frame) => Record(nameof(OnPathChallenge));
        public TransportErrorCode OnPathResponse(in PathResponseFrame frame) => Record(nameof(OnPathResponse));
        public TransportErrorCode OnConnectionClose(in ConnectionCloseFrame frame) => Record(nameof(OnConnectionClose));
        public TransportErrorCode OnHandshakeDone() => Record(nameof(OnHandshakeDone));
        public TransportErrorCode OnDatagram(in DatagramFrame frame) => Record(nameof(OnDatagram));

        private TransportErrorCode Record(string method)
        {
            Method = method;
            Frames++;
            return Frames == RefuseAt ? TransportErrorCode.ProtocolViolation : TransportErrorCode.NoError;
        }
    }
}
