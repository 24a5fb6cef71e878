using System.Buffers;
using System.Buffers.Binary;
using System.Net.Quic.Managed;
using System.Net.Security;

namespace QuicManaged.Tools.QuicLoad;

/// <summary>
/// The request/response every stream carries. The client writes an 8-byte header (request length, response length,
/// both big-endian uint32) and the request, and ends its side; the server reads it all, checks the bytes, answers with
/// the response and ends its side; the client reads to the end and checks the bytes. Payload byte i is (byte)i, so both
/// ends can check what arrived without keeping a copy.
/// </summary>
public static class LoadProtocol
{
    public const int HeaderSize = 8;

    /// <summary>The ALPN both ends offer.</summary>
    public static readonly SslApplicationProtocol Alpn = new("quicload");

    /// <summary>Bytes 0..255 repeated, long enough that any chunk of up to 64 KiB at any offset is one slice of it.</summary>
    private static readonly byte[] s_pattern = CreatePattern();

    private const int ChunkSize = 64 * 1024;

    private static byte[] CreatePattern()
    {
        var pattern = new byte[ChunkSize + 256];
        for (int i = 0; i < pattern.Length; i++) pattern[i] = (byte)i;
        return pattern;
    }

    /// <summary>A client of the in-process server: its ALPN, any certificate accepted, no streams from the server.</summary>
    public static QuicClientConnectionOptions ClientOptions(System.Net.IPEndPoint server) => new()
    {
        RemoteEndPoint = server,
        ClientAuthenticationOptions = new SslClientAuthenticationOptions
        {
            ApplicationProtocols = [Alpn],
            TargetHost = "localhost",
            RemoteCertificateValidationCallback = (_, _, _, _) => true,
        },
        MaxInboundBidirectionalStreams = 0,
        MaxInboundUnidirectionalStreams = 0,
        DefaultStreamErrorCode = 1,
        DefaultCloseErrorCode = 0,
    };

    /// <summary>Client side of one stream: request, then the response; returns the response bytes received.</summary>
    public static async Task<long> RequestAsync(QuicStream stream, int requestSize, int responseSize, CancellationToken cancellationToken)
    {
        var header = new byte[HeaderSize];
        BinaryPrimitives.WriteUInt32BigEndian(header, (uint)requestSize);
        BinaryPrimitives.WriteUInt32BigEndian(header.AsSpan(4), (uint)responseSize);
        await stream.WriteAsync(header, completeWrites: requestSize == 0, cancellationToken).ConfigureAwait(false);
        await WritePatternAsync(stream, requestSize, cancellationToken).ConfigureAwait(false);
        long received = await ReadPatternAsync(stream, cancellationToken).ConfigureAwait(false);
        if (received != responseSize) throw new InvalidDataException($"response of {received} bytes, {responseSize} expected");
        return received;
    }

    /// <summary>Server side of one stream.</summary>
    public static async Task ServeAsync(QuicStream stream, CancellationToken cancellationToken)
    {
        var header = new byte[HeaderSize];
        await stream.ReadExactlyAsync(header, cancellationToken).ConfigureAwait(false);
        int requestSize = (int)BinaryPrimitives.ReadUInt32BigEndian(header);
        int responseSize = (int)BinaryPrimitives.ReadUInt32BigEndian(header.AsSpan(4));
        // A buffer the size of the announced request (16 KiB at most): a server with thousands of streams open does not
        // rent 16 KiB on each to read a few bytes.
        long received = await ReadPatternAsync(stream, cancellationToken, Math.Clamp(requestSize + 1, 256, 16 * 1024)).ConfigureAwait(false);
        if (received != requestSize) throw new InvalidDataException($"request of {received} bytes, {requestSize} announced");
        if (responseSize == 0)
        {
            stream.CompleteWrites();
            return;
        }

        await WritePatternAsync(stream, responseSize, cancellationToken).ConfigureAwait(false);
    }

    /// <summary>Writes <paramref name="length"/> pattern bytes and ends the writing side (nothing when 0).</summary>
    private static async Task WritePatternAsync(QuicStream stream, int length, CancellationToken cancellationToken)
    {
        for (int offset = 0; offset < length;)
        {
            int chunk = Math.Min(ChunkSize, length - offset);
            await stream.WriteAsync(s_pattern.AsMemory(offset & 0xFF, chunk), completeWrites: offset + chunk == length, cancellationToken).ConfigureAwait(false);
            offset += chunk;
        }
    }

    /// <summary>Reads to the end of the stream, checking every byte against the pattern; returns the count.</summary>
    private static async Task<long> ReadPatternAsync(QuicStream stream, CancellationToken cancellationToken, int bufferSize = 16 * 1024)
    {
        byte[] buffer = ArrayPool<byte>.Shared.Rent(bufferSize);
        try
        {
            long total = 0;
            while (true)
            {
                int n = await stream.ReadAsync(buffer, cancellationToken).ConfigureAwait(false);
                if (n == 0) return total;
                if (!buffer.AsSpan(0, n).SequenceEqual(s_pattern.AsSpan((int)(total & 0xFF), n)))
                {
                    throw new InvalidDataException($"corrupted payload in bytes {total}..{total + n}");
                }

                total += n;
            }
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(buffer);
        }
    }
}
