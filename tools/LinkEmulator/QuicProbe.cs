using System.Buffers.Binary;
using System.Diagnostics;
using System.Globalization;
using System.Net;
using System.Net.Quic.Managed;
using System.Net.Security;
using System.Security.Cryptography.X509Certificates;

namespace QuicManaged.Tools.LinkEmulator;

/// <summary>The same request/response exchange as <see cref="TcpTlsProbe"/> over the managed QUIC public API (one bidirectional stream).</summary>
internal static class QuicProbe
{
    private const int ChunkSize = 64 * 1024;
    private static readonly SslApplicationProtocol s_alpn = new("quicmanaged-probe");
    private static readonly Lock s_statsLock = new();

    /// <summary>Columns of the server's <c>--stats-out</c> lines.</summary>
    public const string StatsCsvHeader = "cc,size,bytes_sent,packets_sent,packets_lost,stream_bytes_retransmitted";

    public static async Task ServeAsync(IPEndPoint listen, X509Certificate2 certificate, QuicCongestionControlAlgorithm algorithm, string? statsOut,
        CancellationToken cancellationToken)
    {
        var serverOptions = new QuicServerConnectionOptions
        {
            CongestionControlAlgorithm = algorithm,
            DefaultStreamErrorCode = 0,
            DefaultCloseErrorCode = 0,
            MaxInboundBidirectionalStreams = 4,
            ServerAuthenticationOptions = new SslServerAuthenticationOptions
            {
                ApplicationProtocols = [s_alpn],
                ServerCertificate = certificate,
            },
        };
        await using QuicListener listener = await QuicListener.ListenAsync(new QuicListenerOptions
        {
            ListenEndPoint = listen,
            ApplicationProtocols = [s_alpn],
            ConnectionOptionsCallback = (_, _, _) => ValueTask.FromResult(serverOptions),
        }, cancellationToken).ConfigureAwait(false);
        Console.Error.WriteLine($"quic probe server listening on {listen}");
        while (!cancellationToken.IsCancellationRequested)
        {
            QuicConnection connection = await listener.AcceptConnectionAsync(cancellationToken).ConfigureAwait(false);
            _ = Task.Run(() => HandleAsync(connection, algorithm, statsOut, cancellationToken), cancellationToken);
        }
    }

    private static async Task HandleAsync(QuicConnection connection, QuicCongestionControlAlgorithm algorithm, string? statsOut, CancellationToken cancellationToken)
    {
        long size = -1;
        try
        {
            await using (connection.ConfigureAwait(false))
            {
                QuicStream stream = await connection.AcceptInboundStreamAsync(cancellationToken).ConfigureAwait(false);
                await using (stream.ConfigureAwait(false))
                {
                    byte[] request = new byte[8];
                    await stream.ReadExactlyAsync(request, cancellationToken).ConfigureAwait(false);
                    size = BinaryPrimitives.ReadInt64BigEndian(request);
                    byte[] chunk = new byte[ChunkSize];
                    chunk.AsSpan().Fill(0x5a);
                    for (long sent = 0; sent < size;)
                    {
                        int n = (int)Math.Min(chunk.Length, size - sent);
                        sent += n;
                        await stream.WriteAsync(chunk.AsMemory(0, n), completeWrites: sent == size, cancellationToken).ConfigureAwait(false);
                    }

                    if (size == 0)
                    {
                        stream.CompleteWrites();
                    }

                    await stream.WritesClosed.ConfigureAwait(false);
                }

                // The client closes the connection; waiting for another stream returns when it does.
                try
                {
                    await connection.AcceptInboundStreamAsync(cancellationToken).ConfigureAwait(false);
                }
                catch (QuicException)
                {
                }

                if (statsOut is not null && size >= 0)
                {
                    QuicConnectionStatistics s = connection.GetStatistics();
                    string line = string.Join(',', algorithm.ToString().ToLowerInvariant(), size.ToString(CultureInfo.InvariantCulture),
                        s.BytesSent.ToString(CultureInfo.InvariantCulture), s.PacketsSent.ToString(CultureInfo.InvariantCulture),
                        s.PacketsLost.ToString(CultureInfo.InvariantCulture), s.StreamBytesRetransmitted.ToString(CultureInfo.InvariantCulture));
                    lock (s_statsLock)
                    {
                        bool exists = File.Exists(statsOut);
                        File.AppendAllText(statsOut, (exists ? string.Empty : StatsCsvHeader + "\n") + line + "\n");
                    }
                }
            }
        }
        catch (Exception e) when (e is QuicException or IOException or OperationCanceledException or ObjectDisposedException)
        {
        }
    }

    public static async Task<ProbeTiming> MeasureAsync(IPEndPoint server, long size, QuicCongestionControlAlgorithm algorithm, CancellationToken cancellationToken)
    {
        var timing = new ProbeTiming();
        long t0 = Stopwatch.GetTimestamp();
        QuicConnection connection = await QuicConnection.ConnectAsync(new QuicClientConnectionOptions
        {
            CongestionControlAlgorithm = algorithm,
            RemoteEndPoint = server,
            DefaultStreamErrorCode = 0,
            DefaultCloseErrorCode = 0,
            ClientAuthenticationOptions = new SslClientAuthenticationOptions
            {
                ApplicationProtocols = [s_alpn],
                TargetHost = "probe",
                RemoteCertificateValidationCallback = static (_, _, _, _) => true,
            },
        }, cancellationToken).ConfigureAwait(false);
        await using (connection.ConfigureAwait(false))
        {
            timing.HandshakeMs = Stopwatch.GetElapsedTime(t0).TotalMilliseconds;
            byte[] request = new byte[8];
            BinaryPrimitives.WriteInt64BigEndian(request, size);
            long tRequest = Stopwatch.GetTimestamp();
            QuicStream stream = await connection.OpenOutboundStreamAsync(QuicStreamType.Bidirectional, cancellationToken).ConfigureAwait(false);
            await using (stream.ConfigureAwait(false))
            {
                await stream.WriteAsync(request, completeWrites: true, cancellationToken).ConfigureAwait(false);
                byte[] buffer = new byte[ChunkSize];
                long received = 0;
                while (true)
                {
                    int n = await stream.ReadAsync(buffer, cancellationToken).ConfigureAwait(false);
                    if (n == 0)
                    {
                        break;
                    }

                    if (received == 0)
                    {
                        timing.TimeToFirstByteMs = Stopwatch.GetElapsedTime(t0).TotalMilliseconds;
                    }

                    received += n;
                }

                timing.TransferMs = Stopwatch.GetElapsedTime(tRequest).TotalMilliseconds;
                timing.BytesReceived = received;
                if (received != size)
                {
                    timing.Status = "short-read";
                }
            }

            long tClose = Stopwatch.GetTimestamp();
            await connection.CloseAsync(0, cancellationToken).ConfigureAwait(false);
            timing.CloseMs = Stopwatch.GetElapsedTime(tClose).TotalMilliseconds;
        }

        return timing;
    }
}
