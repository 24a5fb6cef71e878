using System.Net.Quic.Managed;
using QuicManaged.Http.Framing;

namespace QuicManaged.Http;

/// <summary>Write-only stream the request content is copied into: every write becomes one DATA frame (RFC 9114 §7.2.1).</summary>
internal sealed class Http3RequestBodyStream(QuicStream stream) : Stream
{
    private readonly byte[] _header = new byte[Http3FrameCodec.MaxFrameHeaderLength];

    public override bool CanRead => false;

    public override bool CanSeek => false;

    public override bool CanWrite => true;

    public override long Length => throw new NotSupportedException();

    public override long Position { get => throw new NotSupportedException(); set => throw new NotSupportedException(); }

    public override void Flush()
    {
    }

    public override Task FlushAsync(CancellationToken cancellationToken) => Task.CompletedTask;

    public override int Read(byte[] buffer, int offset, int count) => throw new NotSupportedException();

    public override long Seek(long offset, SeekOrigin origin) => throw new NotSupportedException();

    public override void SetLength(long value) => throw new NotSupportedException();

    public override void Write(byte[] buffer, int offset, int count) => WriteAsync(buffer.AsMemory(offset, count)).AsTask().GetAwaiter().GetResult();

    public override Task WriteAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken)
        => WriteAsync(buffer.AsMemory(offset, count), cancellationToken).AsTask();

    public override async ValueTask WriteAsync(ReadOnlyMemory<byte> buffer, CancellationToken cancellationToken = default)
    {
        if (buffer.IsEmpty)
        {
            return;
        }

        int headerLength = Http3FrameCodec.WriteFrameHeader(_header, Http3FrameType.Data, buffer.Length);
        await stream.WriteAsync(_header.AsMemory(0, headerLength), cancellationToken).ConfigureAwait(false);
        await stream.WriteAsync(buffer, cancellationToken).ConfigureAwait(false);
    }
}
