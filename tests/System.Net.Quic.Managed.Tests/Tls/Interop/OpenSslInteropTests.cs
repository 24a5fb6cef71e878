using System.Diagnostics;
using System.Net.Quic.Managed.Tls;
using System.Net.Security;
using System.Net.Sockets;
using System.Security.Cryptography.X509Certificates;
using System.Text;
using KeyKind = System.Net.Quic.Managed.Tests.Tls.TlsTestCertificates.KeyKind;

namespace System.Net.Quic.Managed.Tests.Tls.Interop;

/// <summary>
/// Third-party interop: our client against `openssl s_server -tls1_3`, our server against `openssl s_client -tls1_3`,
/// through the test-only record layer, on 127.0.0.1 with bounded timeouts. TLS over TCP carries no
/// quic_transport_parameters, so RequirePeerTransportParameters is off here (and only here).
/// </summary>
public sealed class OpenSslInteropTests : IDisposable
{
    private const string OpenSsl = "/usr/bin/openssl";
    private static readonly TimeSpan ProcessTimeout = TimeSpan.FromSeconds(20);
    private readonly string _dir = Directory.CreateTempSubdirectory("quicmanaged-tls-").FullName;
    private readonly List<Process> _processes = new();

    private static bool OpenSslMissing => !File.Exists(OpenSsl);

    private (string CertPath, string KeyPath, string RootPath) WriteCredentials(KeyKind kind)
    {
        X509Certificate2 leaf = TlsTestCertificates.CreateLeaf(kind);
        string cert = Path.Combine(_dir, "cert.pem"), key = Path.Combine(_dir, "key.pem"), root = Path.Combine(_dir, "root.pem");
        File.WriteAllText(cert, leaf.ExportCertificatePem());
        string keyPem = kind == KeyKind.Rsa2048 ? leaf.GetRSAPrivateKey()!.ExportPkcs8PrivateKeyPem() : leaf.GetECDsaPrivateKey()!.ExportPkcs8PrivateKeyPem();
        File.WriteAllText(key, keyPem);
        File.WriteAllText(root, TlsTestCertificates.Root.ExportCertificatePem());
        return (cert, key, root);
    }

    private static int FreePort()
    {
        var l = new TcpListener(IPAddress.Loopback, 0);
        l.Start();
        int port = ((IPEndPoint)l.LocalEndpoint).Port;
        l.Stop();
        return port;
    }

    /// <summary>Reads a log the process-output handlers append to from other threads (they hold the same lock).</summary>
    private static string Snapshot(StringBuilder log)
    {
        lock (log) return log.ToString();
    }

    private Process StartOpenSsl(string arguments, StringBuilder output)
    {
        var psi = new ProcessStartInfo(OpenSsl, arguments)
        {
            RedirectStandardInput = true,
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
        };
        var p = new Process { StartInfo = psi };
        p.OutputDataReceived += (_, e) => { lock (output) output.AppendLine(e.Data); };
        p.ErrorDataReceived += (_, e) => { lock (output) output.AppendLine(e.Data); };
        p.Start();
        p.BeginOutputReadLine();
        p.BeginErrorReadLine();
        _processes.Add(p);
        return p;
    }

    private static Socket ConnectWithRetry(int port)
    {
        var deadline = DateTime.UtcNow.AddSeconds(10);
        while (true)
        {
            var s = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp) { ReceiveTimeout = 10000, SendTimeout = 10000 };
            try
            {
                s.Connect(IPAddress.Loopback, port);
                return s;
            }
            catch (SocketException) when (DateTime.UtcNow < deadline)
            {
                s.Dispose();
                Thread.Sleep(100);
            }
        }
    }

    private static TlsHandshakeOptions TcpOptions(TlsHandshakeOptions o)
    {
        o.RequirePeerTransportParameters = false;
        o.LocalTransportParameters = null;
        o.ApplicationProtocols = [new SslApplicationProtocol("interop")];
        return o;
    }

    [SkippableTheory]
    [InlineData(TlsCipherSuite.TLS_AES_128_GCM_SHA256, "X25519", KeyKind.EcdsaP256)]
    [InlineData(TlsCipherSuite.TLS_AES_256_GCM_SHA384, "P-256", KeyKind.Rsa2048)]
    [InlineData(TlsCipherSuite.TLS_CHACHA20_POLY1305_SHA256, "P-384", KeyKind.EcdsaP384)]
    internal void OurClient_AgainstOpenSslServer(TlsCipherSuite suite, string group, KeyKind kind)
    {
        Skip.If(OpenSslMissing, "openssl binary not found at /usr/bin/openssl (apt-get install -y openssl)");
        var (cert, key, _) = WriteCredentials(kind);
        int port = FreePort();
        var log = new StringBuilder();
        // -www answers "GET /" with a status page; -groups forces a HelloRetryRequest when it is not X25519,
        // because our client only sends an X25519 key share up front.
        StartOpenSsl($"s_server -accept 127.0.0.1:{port} -tls1_3 -cert {cert} -key {key} -ciphersuites {suite} -groups {group} -alpn interop -www -naccept 1 -keylogfile {_dir}/keys.log", log);

        using Socket socket = ConnectWithRetry(port);
        TlsHandshakeOptions co = TcpOptions(TlsEnginePair.ClientOptions());
        using var engine = new TlsHandshake(false, co);
        var records = new TlsRecordLayer(socket, engine) { Debug = new StringBuilder() };
        bool hsOk = records.RunHandshake();
        // On failure, show our secrets next to OpenSSL's key log: a mismatch pinpoints the key schedule step.
        Assert.True(hsOk, $"{engine.ErrorReason} alert={engine.Alert} peer={records.PeerAlert}\n{records.Debug}\n{(File.Exists(_dir + "/keys.log") ? File.ReadAllText(_dir + "/keys.log") : "")}\n{Snapshot(log)}");
        Assert.Equal(suite, engine.NegotiatedCipherSuite);
        Assert.Equal(group != "X25519", engine.HelloRetryRequestPerformed);
        Assert.Equal("interop", engine.NegotiatedApplicationProtocol.ToString());
        Assert.NotNull(engine.PeerCertificate);

        records.WriteApplicationData(Encoding.ASCII.GetBytes("GET / HTTP/1.0\r\n\r\n"));
        var response = new StringBuilder();
        byte[]? chunk;
        while ((chunk = records.ReadApplicationData()) != null) response.Append(Encoding.ASCII.GetString(chunk));
        Assert.Contains("200 ok", response.ToString(), StringComparison.OrdinalIgnoreCase);
        Assert.Contains("TLSv1.3", response.ToString());
        // s_server sends session tickets after the handshake; they must have been accepted.
        Assert.True(engine.TryDequeueSessionTicket(out _));
    }

    [SkippableTheory]
    [InlineData(TlsCipherSuite.TLS_AES_128_GCM_SHA256, "X25519", KeyKind.EcdsaP256)]
    [InlineData(TlsCipherSuite.TLS_AES_256_GCM_SHA384, "P-384", KeyKind.Rsa2048)]
    [InlineData(TlsCipherSuite.TLS_CHACHA20_POLY1305_SHA256, "P-256", KeyKind.EcdsaP384)]
    internal void OurServer_AgainstOpenSslClient(TlsCipherSuite suite, string group, KeyKind kind)
    {
        Skip.If(OpenSslMissing, "openssl binary not found at /usr/bin/openssl (apt-get install -y openssl)");
        var (_, _, root) = WriteCredentials(kind);
        X509Certificate2 leaf = TlsTestCertificates.CreateLeaf(kind);
        var listener = new TcpListener(IPAddress.Loopback, 0);
        listener.Start();
        int port = ((IPEndPoint)listener.LocalEndpoint).Port;
        var log = new StringBuilder();
        Process client = StartOpenSsl($"s_client -connect 127.0.0.1:{port} -tls1_3 -servername localhost -CAfile {root} -verify_return_error -ciphersuites {suite} -groups {group} -alpn interop -ign_eof", log);
        try
        {
            using Task<Socket> accept = listener.AcceptSocketAsync();
            if (!accept.Wait(TimeSpan.FromSeconds(10))) Assert.Fail("openssl s_client did not connect\n" + Snapshot(log));
            using Socket socket = accept.Result;
            socket.ReceiveTimeout = 10000;
            TlsHandshakeOptions so = TcpOptions(TlsEnginePair.ServerOptions(leaf));
            so.Groups = [NamedGroup.X25519, NamedGroup.Secp256r1, NamedGroup.Secp384r1];
            using var engine = new TlsHandshake(true, so);
            var records = new TlsRecordLayer(socket, engine);
            Assert.True(records.RunHandshake(), $"{engine.ErrorReason} alert={engine.Alert} peer={records.PeerAlert}\n{Snapshot(log)}");
            Assert.Equal(suite, engine.NegotiatedCipherSuite);
            Assert.Equal("localhost", engine.ServerName);
            Assert.Equal("interop", engine.NegotiatedApplicationProtocol.ToString());
            records.WriteApplicationData(Encoding.ASCII.GetBytes("hello from QuicManaged\n"));
            // close_notify so s_client exits (RFC 8446 §6.1).
            socket.Send(Array.Empty<byte>());
            Thread.Sleep(200);
            socket.Shutdown(SocketShutdown.Both);
        }
        finally
        {
            listener.Stop();
        }
        if (!client.WaitForExit((int)ProcessTimeout.TotalMilliseconds)) Assert.Fail("openssl s_client did not exit\n" + Snapshot(log));
        client.WaitForExit();
        string output;
        lock (log) output = log.ToString();
        Assert.Contains("hello from QuicManaged", output);
        Assert.Contains("Verify return code: 0 (ok)", output);
        Assert.Contains(suite.ToString(), output);
        Assert.Contains("ALPN protocol: interop", output);
    }

    [SkippableFact]
    public void OurClient_MutualTlsAndResumption_AgainstOpenSslServer()
    {
        Skip.If(OpenSslMissing, "openssl binary not found at /usr/bin/openssl (apt-get install -y openssl)");
        var (cert, key, root) = WriteCredentials(KeyKind.EcdsaP256);
        int port = FreePort();
        var log = new StringBuilder();
        // -Verify 1: request and require a client certificate issued by our root.
        StartOpenSsl($"s_server -accept 127.0.0.1:{port} -tls1_3 -cert {cert} -key {key} -Verify 1 -CAfile {root} -alpn interop -www -naccept 2", log);
        X509Certificate2 clientCert = TlsTestCertificates.CreateLeaf(KeyKind.EcdsaP384, "client");

        TlsSessionTicket ticket;
        using (Socket socket = ConnectWithRetry(port))
        {
            TlsHandshakeOptions co = TcpOptions(TlsEnginePair.ClientOptions(seed: 21));
            co.Certificate = clientCert;
            using var engine = new TlsHandshake(false, co);
            var records = new TlsRecordLayer(socket, engine);
            Assert.True(records.RunHandshake(), $"{engine.ErrorReason} alert={engine.Alert} peer={records.PeerAlert}\n{Snapshot(log)}");
            Assert.False(engine.IsResumed);
            records.WriteApplicationData(Encoding.ASCII.GetBytes("GET / HTTP/1.0\r\n\r\n"));
            var response = new StringBuilder();
            byte[]? chunk;
            while ((chunk = records.ReadApplicationData()) != null) response.Append(Encoding.ASCII.GetString(chunk));
            Assert.Contains("200 ok", response.ToString(), StringComparison.OrdinalIgnoreCase);
            Assert.Contains("Client certificate", response.ToString());
            Assert.True(engine.TryDequeueSessionTicket(out ticket));
        }

        // Second connection: PSK resumption (psk_dhe_ke) with OpenSSL validating our binder.
        using (Socket socket = ConnectWithRetry(port))
        {
            TlsHandshakeOptions co = TcpOptions(TlsEnginePair.ClientOptions(seed: 22));
            co.SessionTicket = ticket;
            using var engine = new TlsHandshake(false, co);
            var records = new TlsRecordLayer(socket, engine);
            Assert.True(records.RunHandshake(), $"{engine.ErrorReason} alert={engine.Alert} peer={records.PeerAlert}\n{Snapshot(log)}");
            Assert.True(engine.IsResumed);
            records.WriteApplicationData(Encoding.ASCII.GetBytes("GET / HTTP/1.0\r\n\r\n"));
            var response = new StringBuilder();
            byte[]? chunk;
            while ((chunk = records.ReadApplicationData()) != null) response.Append(Encoding.ASCII.GetString(chunk));
            Assert.Contains("Reused, TLSv1.3", response.ToString());
        }
    }

    [SkippableFact]
    public void OurServer_ResumptionAndClientCertificate_AgainstOpenSslClient()
    {
        Skip.If(OpenSslMissing, "openssl binary not found at /usr/bin/openssl (apt-get install -y openssl)");
        var (clientCertPath, clientKeyPath, root) = WriteCredentials(KeyKind.EcdsaP256);
        X509Certificate2 leaf = TlsTestCertificates.CreateLeaf(KeyKind.EcdsaP256);
        string session = Path.Combine(_dir, "session.pem");
        byte[] ticketKey = new byte[32];
        new Random(3).NextBytes(ticketKey);

        for (int round = 0; round < 2; round++)
        {
            var listener = new TcpListener(IPAddress.Loopback, 0);
            listener.Start();
            int port = ((IPEndPoint)listener.LocalEndpoint).Port;
            var log = new StringBuilder();
            string sess = round == 0 ? $"-sess_out {session} -cert {clientCertPath} -key {clientKeyPath}" : $"-sess_in {session}";
            Process client = StartOpenSsl($"s_client -connect 127.0.0.1:{port} -tls1_3 -servername localhost -CAfile {root} -verify_return_error -alpn interop -ign_eof {sess}", log);
            TlsHandshake engine;
            try
            {
                using Task<Socket> accept = listener.AcceptSocketAsync();
                if (!accept.Wait(TimeSpan.FromSeconds(10))) Assert.Fail("openssl s_client did not connect\n" + Snapshot(log));
                using Socket socket = accept.Result;
                socket.ReceiveTimeout = 10000;
                TlsHandshakeOptions so = TcpOptions(TlsEnginePair.ServerOptions(leaf, seed: 30 + round));
                so.SessionTicketKey = ticketKey;
                so.RequestClientCertificate = round == 0;
                so.RequireClientCertificate = round == 0;
                engine = new TlsHandshake(true, so);
                var records = new TlsRecordLayer(socket, engine);
                Assert.True(records.RunHandshake(), $"{engine.ErrorReason} alert={engine.Alert} peer={records.PeerAlert}\n{Snapshot(log)}");
                records.WriteApplicationData(Encoding.ASCII.GetBytes($"round {round}\n"));
                Thread.Sleep(200);
                socket.Shutdown(SocketShutdown.Both);
            }
            finally
            {
                listener.Stop();
            }
            if (!client.WaitForExit((int)ProcessTimeout.TotalMilliseconds)) Assert.Fail("openssl s_client did not exit\n" + Snapshot(log));
            client.WaitForExit();
            string output;
            lock (log) output = log.ToString();
            Assert.Contains($"round {round}", output);
            if (round == 0)
            {
                Assert.False(engine.IsResumed);
                Assert.NotNull(engine.PeerCertificate);
                Assert.Contains("New, TLSv1.3", output);
            }
            else
            {
                Assert.True(engine.IsResumed, output);
                Assert.Contains("Reused, TLSv1.3", output);
            }
            engine.Dispose();
        }
    }

    public void Dispose()
    {
        foreach (Process p in _processes)
        {
            try
            {
                if (!p.HasExited)
                {
                    p.Kill();
                    p.WaitForExit(5000);
                }
            }
            catch (InvalidOperationException)
            {
            }
            p.Dispose();
        }
        try
        {
            Directory.Delete(_dir, true);
        }
        catch (IOException)
        {
        }
    }
}
