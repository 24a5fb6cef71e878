using QuicManaged.Http.Framing;
using QuicManaged.Interop.Http3;
using QuicManaged.Interop.Transport;

namespace System.Net.Quic.Managed.Tests.Http3;

public class Http3SessionTests
{
    private static readonly TimeSpan s_timeout = TimeSpan.FromSeconds(10);

    private static byte[] Bytes(params byte[][] parts) => parts.SelectMany(p => p).ToArray();

    /// <summary>Runs a client session and lets a raw peer write <paramref name="streams"/> as unidirectional streams.</summary>
    private static async Task<(Http3Session Session, long? CloseCode)> RunClientAgainst(params byte[][] streams)
    {
        using CancellationTokenSource cts = new(s_timeout);
        (InMemoryConnection client, InMemoryConnection peer) = InMemoryConnection.CreatePair();
        Http3Session session = new(client, isServer: false, new Http3Settings());
        Task loop = session.RunAcceptLoopAsync(null, cts.Token);
        foreach (byte[] content in streams)
        {
            IMultiplexedStream stream = await peer.OpenStreamAsync(false, cts.Token);
            await stream.Stream.WriteAsync(content, cts.Token);
        }

        // Closing resets the streams, but bytes already sent are still delivered first, so the loop sees
        // everything and then ends.
        await peer.CloseAsync(0, cts.Token);
        await loop.WaitAsync(cts.Token);
        return (session, peer.PeerCloseErrorCode);
    }

    private static readonly byte[] s_settings = new Http3Settings { MaxFieldSectionSize = 100 }.EncodeFrame();

    [Fact]
    public async Task ControlStream_SettingsParsed_UnknownStreamTypesIgnored()
    {
        (Http3Session session, _) = await RunClientAgainst(
            Bytes([0x21], [1, 2, 3]),                                     // grease stream type 0x21: ignored
            Bytes([0x00], s_settings, Http3FrameCodec.EncodeFrame(0x21, [9]), Http3FrameCodec.EncodeSingleIntegerFrame(Http3FrameType.Goaway, 8)),
            Bytes([0x02], [0x20]),                                        // encoder stream: Set Dynamic Table Capacity 0
            Bytes([0x03]));
        Assert.Null(session.Failure);
        Assert.Equal(100, (await session.PeerSettings).MaxFieldSectionSize);
        Assert.Equal(8, session.PeerGoawayId);
    }

    [Fact]
    public async Task ControlStream_FirstFrameNotSettings_IsMissingSettings()
    {
        (Http3Session session, long? code) = await RunClientAgainst(Bytes([0x00], Http3FrameCodec.EncodeSingleIntegerFrame(Http3FrameType.Goaway, 0)));
        Assert.Equal(Http3ErrorCode.MissingSettings, session.Failure?.ErrorCode);
        Assert.Equal((long)Http3ErrorCode.MissingSettings, code);
    }

    [Theory]
    [InlineData(new byte[] { 0x04, 0x00 }, (long)Http3ErrorCode.FrameUnexpected)]          // second SETTINGS
    [InlineData(new byte[] { 0x00, 0x00 }, (long)Http3ErrorCode.FrameUnexpected)]          // DATA on control
    [InlineData(new byte[] { 0x05, 0x00 }, (long)Http3ErrorCode.FrameUnexpected)]          // PUSH_PROMISE on control
    [InlineData(new byte[] { 0x06, 0x00 }, (long)Http3ErrorCode.FrameUnexpected)]          // HTTP/2 PING
    [InlineData(new byte[] { 0x0d, 0x01, 0x00 }, (long)Http3ErrorCode.FrameUnexpected)]    // MAX_PUSH_ID to a client
    [InlineData(new byte[] { 0x07, 0x01, 0x01 }, (long)Http3ErrorCode.IdError)]            // GOAWAY with a non-request stream id
    [InlineData(new byte[] { 0x07, 0x02, 0x00, 0x00 }, (long)Http3ErrorCode.FrameError)]   // GOAWAY with trailing bytes
    [InlineData(new byte[] { 0x07, 0x01, 0x04, 0x07, 0x01, 0x08 }, (long)Http3ErrorCode.IdError)] // GOAWAY id increased
    public async Task ControlStream_Violations(byte[] afterSettings, long expected)
    {
        (Http3Session session, long? code) = await RunClientAgainst(Bytes([0x00], s_settings, afterSettings));
        Assert.Equal((Http3ErrorCode)expected, session.Failure?.ErrorCode);
        Assert.Equal(expected, code);
    }

    [Fact]
    public async Task ControlStream_Closed_IsClosedCriticalStream()
    {
        using CancellationTokenSource cts = new(s_timeout);
        (InMemoryConnection client, InMemoryConnection peer) = InMemoryConnection.CreatePair();
        Http3Session session = new(client, isServer: false, new Http3Settings());
        Task loop = session.RunAcceptLoopAsync(null, cts.Token);
        IMultiplexedStream control = await peer.OpenStreamAsync(false, cts.Token);
        await control.Stream.WriteAsync(Bytes([0x00], s_settings), cts.Token);
        control.CompleteWrites();
        await loop.WaitAsync(cts.Token);
        Assert.Equal(Http3ErrorCode.ClosedCriticalStream, session.Failure?.ErrorCode);
    }

    [Fact]
    public async Task SecondControlStream_IsStreamCreationError()
    {
        (Http3Session session, _) = await RunClientAgainst(Bytes([0x00], s_settings), Bytes([0x00], s_settings));
        Assert.Equal(Http3ErrorCode.StreamCreationError, session.Failure?.ErrorCode);
    }

    [Fact]
    public async Task PushStreamToClient_IsIdError()
    {
        (Http3Session session, _) = await RunClientAgainst(Bytes([0x01], [0x00]));
        Assert.Equal(Http3ErrorCode.IdError, session.Failure?.ErrorCode);
    }

    [Fact]
    public async Task EncoderStreamInsert_IsEncoderStreamError()
    {
        // Set Dynamic Table Capacity 100 (0x3f 0x45) exceeds our advertised 0.
        (Http3Session session, _) = await RunClientAgainst(Bytes([0x02], [0x3f, 0x45]));
        Assert.Equal(Http3ErrorCode.QpackEncoderStreamError, session.Failure?.ErrorCode);
    }

    [Fact]
    public async Task ServerInitiatedBidirectionalStream_IsStreamCreationError()
    {
        using CancellationTokenSource cts = new(s_timeout);
        (InMemoryConnection client, InMemoryConnection peer) = InMemoryConnection.CreatePair();
        Http3Session session = new(client, isServer: false, new Http3Settings());
        Task loop = session.RunAcceptLoopAsync(null, cts.Token);
        await peer.OpenStreamAsync(true, cts.Token);
        await loop.WaitAsync(cts.Token);
        Assert.Equal(Http3ErrorCode.StreamCreationError, session.Failure?.ErrorCode);
        Assert.Equal((long)Http3ErrorCode.StreamCreationError, peer.PeerCloseErrorCode);
    }

    [Fact]
    public void DecoderStreamInstructions()
    {
        Assert.Equal(2, Http3Session.ConsumeQpackInstructions([0x41, 0x42], encoderStream: false, out Http3ErrorCode error));
        Assert.Equal(Http3ErrorCode.NoError, error);
        Http3Session.ConsumeQpackInstructions([0x80], encoderStream: false, out error); // Section Acknowledgment
        Assert.Equal(Http3ErrorCode.QpackDecoderStreamError, error);
        Http3Session.ConsumeQpackInstructions([0x01], encoderStream: false, out error); // Insert Count Increment
        Assert.Equal(Http3ErrorCode.QpackDecoderStreamError, error);
    }
}
