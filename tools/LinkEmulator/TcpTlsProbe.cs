using System.Buffers.Binary;
using System.Diagnostics;
using System.Net;
using System.Net.Security;
using System.Net.Sockets;
using System.Security.Authentication;
using System.Security.Cryptography.X509Certificates;

namespace QuicManaged.Tools.LinkEmulator;

/// <summary>TCP + TLS 1.3 (SslStream) request/response probe: the client asks for N bytes with an 8-byte request.</summary>
internal static class TcpTlsProbe
{
    private const int ChunkSize = 64 * 1024;

    public static async Task ServeAsync(IPEndPoint listen, X509Certificate2 certificate, CancellationToken cancellationToken)
    {
        using var listener = new Socket(listen.AddressFamily, SocketType.Stream, ProtocolType.Tcp);
        listener.SetSocketOption(SocketOptionLevel.Socket, SocketOptionName.ReuseAddress, true);
        listener.Bind(listen);
        listener.Listen(64);
        Console.Error.WriteLine($"tcp-tls probe server listening on {listen}");
        while (!cancellationToken.IsCancellationRequested)
        {
            Socket socket = await listener.AcceptAsync(cancellationToken).ConfigureAwait(false);
            _ = Task.Run(() => HandleAsync(socket, certificate, cancellationToken), cancellationToken);
        }
    }

    private static async Task HandleAsync(Socket socket, X509Certificate2 certificate, CancellationToken cancellationToken)
    {
        socket.NoDelay = true;
        try
        {
            using var network = new NetworkStream(socket, ownsSocket: true);
            using var tls = new SslStream(network);
            await tls.AuthenticateAsServerAsync(new SslServerAuthenticationOptions
            {
                ServerCertificate = certificate,
                EnabledSslProtocols = SslProtocols.Tls13,
            }, cancellationToken).ConfigureAwait(false);
            byte[] request = new byte[8];
            await tls.ReadExactlyAsync(request, cancellationToken).ConfigureAwait(false);
            long size = BinaryPrimitives.ReadInt64BigEndian(request);
            byte[] chunk = new byte[ChunkSize];
            chunk.AsSpan().Fill(0x5a);
            for (long sent = 0; sent < size;)
            {
                int n = (int)Math.Min(chunk.Length, size - sent);
                await tls.WriteAsync(chunk.AsMemory(0, n), cancellationToken).ConfigureAwait(false);
                sent += n;
            }

            await tls.FlushAsync(cancellationToken).ConfigureAwait(false);
            // Wait for the client's close_notify/FIN, then answer with ours.
            while (await tls.ReadAsync(chunk, cancellationToken).ConfigureAwait(false) > 0)
            {
            }

            await tls.ShutdownAsync().ConfigureAwait(false);
            socket.Shutdown(SocketShutdown.Send);
        }
        catch (Exception e) when (e is IOException or SocketException or AuthenticationException or OperationCanceledException or ObjectDisposedException)
        {
            // A timed-out client abandons its connection; nothing to report on the server side.
        }
    }

    public static async Task<ProbeTiming> MeasureAsync(IPEndPoint server, long size, CancellationToken cancellationToken)
    {
        var timing = new ProbeTiming();
        long t0 = Stopwatch.GetTimestamp();
        using var socket = new Socket(server.AddressFamily, SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
        await socket.ConnectAsync(server, cancellationToken).ConfigureAwait(false);
        using var network = new NetworkStream(socket, ownsSocket: false);
        using var tls = new SslStream(network);
        await tls.AuthenticateAsClientAsync(new SslClientAuthenticationOptions
        {
            TargetHost = "probe",
            EnabledSslProtocols = SslProtocols.Tls13,
            RemoteCertificateValidationCallback = static (_, _, _, _) => true,
        }, cancellationToken).ConfigureAwait(false);
        timing.HandshakeMs = Stopwatch.GetElapsedTime(t0).TotalMilliseconds;

        byte[] request = new byte[8];
        BinaryPrimitives.WriteInt64BigEndian(request, size);
        long tRequest = Stopwatch.GetTimestamp();
        await tls.WriteAsync(request, cancellationToken).ConfigureAwait(false);
        await tls.FlushAsync(cancellationToken).ConfigureAwait(false);
        byte[] buffer = new byte[ChunkSize];
        long received = 0;
        while (received < size)
        {
            int n = await tls.ReadAsync(buffer, cancellationToken).ConfigureAwait(false);
            if (n == 0)
            {
                timing.Status = "short-read";
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

        long tClose = Stopwatch.GetTimestamp();
        await tls.ShutdownAsync().ConfigureAwait(false);
        socket.Shutdown(SocketShutdown.Send);
        // The close is complete when the server's close_notify and FIN have arrived.
        while (await tls.ReadAsync(buffer, cancellationToken).ConfigureAwait(false) > 0)
        {
        }

        socket.Close();
        timing.CloseMs = Stopwatch.GetElapsedTime(tClose).TotalMilliseconds;
        return timing;
    }
}
