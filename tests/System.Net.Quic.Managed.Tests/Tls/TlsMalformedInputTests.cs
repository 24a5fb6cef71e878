using System.Net.Quic.Managed.Tls;
using System.Net.Quic.Managed.Wire;
using System.Security.Cryptography.X509Certificates;
using KeyKind = System.Net.Quic.Managed.Tests.Tls.TlsTestCertificates.KeyKind;

namespace System.Net.Quic.Managed.Tests.Tls;

/// <summary>
/// Truncated and mutated real handshake flights: every outcome must be success or a failure with a CRYPTO_ERROR
/// (or CRYPTO_BUFFER_EXCEEDED), never an exception. Seeded and bounded.
/// </summary>
public class TlsMalformedInputTests
{
    private static readonly Lazy<X509Certificate2> s_cert = new(() => TlsTestCertificates.CreateLeaf(KeyKind.EcdsaP256));

    private static (byte[] ClientHello, byte[] ServerInitial, byte[] ServerHandshake, byte[] ClientHandshake) RecordFlights(bool mutual)
    {
        TlsHandshakeOptions co = TlsEnginePair.ClientOptions(seed: 1);
        TlsHandshakeOptions so = TlsEnginePair.ServerOptions(s_cert.Value, seed: 2);
        if (mutual)
        {
            co.Certificate = s_cert.Value;
            so.RequestClientCertificate = true;
        }
        so.SessionTicketKey = new byte[32];
        using var p = new TlsEnginePair(co, so);
        Assert.True(p.Run());
        return (p.Flights.First(f => f.FromClient && f.Level == EncryptionLevel.Initial).Data,
                p.Flights.First(f => !f.FromClient && f.Level == EncryptionLevel.Initial).Data,
                p.Flights.First(f => !f.FromClient && f.Level == EncryptionLevel.Handshake).Data,
                p.Flights.First(f => f.FromClient && f.Level == EncryptionLevel.Handshake).Data);
    }

    private static byte[] Mutate(Random rng, byte[] input)
    {
        byte[] data = (byte[])input.Clone();
        switch (rng.Next(5))
        {
            case 0: // truncate
                return data.AsSpan(0, rng.Next(data.Length)).ToArray();
            case 1: // flip a few bits
                for (int i = 0, n = 1 + rng.Next(4); i < n; i++) data[rng.Next(data.Length)] ^= (byte)(1 << rng.Next(8));
                return data;
            case 2: // random byte values, biased toward the first 64 bytes where the lengths live
                for (int i = 0, n = 1 + rng.Next(3); i < n; i++) data[rng.Next(Math.Min(64, data.Length))] = (byte)rng.Next(256);
                return data;
            case 3: // insert junk
            {
                int at = rng.Next(data.Length);
                byte[] junk = new byte[1 + rng.Next(8)];
                rng.NextBytes(junk);
                return [.. data.AsSpan(0, at), .. junk, .. data.AsSpan(at)];
            }
            default: // set a length-looking byte to an extreme
                data[rng.Next(data.Length)] = rng.Next(2) == 0 ? (byte)0xff : (byte)0x00;
                return data;
        }
    }

    private static void AssertCleanOutcome(TlsHandshake h, bool ok)
    {
        Assert.Equal(!ok, h.HasFailed);
        if (!ok)
        {
            Assert.True(h.ErrorCode == TransportErrorCode.CryptoBufferExceeded || (h.ErrorCode >= TransportErrorCode.CryptoError && h.ErrorCode <= TransportErrorCode.CryptoError + 0xff), h.ErrorCode.ToString());
            Assert.NotNull(h.ErrorReason);
        }
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public void MutatedFlights_NeverThrow(bool mutual)
    {
        var (clientHello, serverInitial, serverHandshake, clientHandshake) = RecordFlights(mutual);
        var rng = new Random(12345);
        int failures = 0;
        for (int iteration = 0; iteration < 800; iteration++)
        {
            // Server side: a mutated ClientHello, then (if still alive) a mutated client Handshake flight.
            TlsHandshakeOptions so = TlsEnginePair.ServerOptions(s_cert.Value, seed: 2);
            so.RequestClientCertificate = mutual;
            so.SessionTicketKey = new byte[32];
            using (var server = new TlsHandshake(true, so))
            {
                bool ok = server.ProcessCryptoData(EncryptionLevel.Initial, Mutate(rng, clientHello));
                AssertCleanOutcome(server, ok);
                if (ok && server.State != TlsHandshakeState.ServerWaitClientHello && server.State != TlsHandshakeState.ServerWaitSecondClientHello)
                {
                    ok = server.ProcessCryptoData(EncryptionLevel.Handshake, Mutate(rng, clientHandshake));
                    AssertCleanOutcome(server, ok);
                }
                if (!ok) failures++;
            }

            // Client side: the real server flights with one of them mutated.
            TlsHandshakeOptions co = TlsEnginePair.ClientOptions(seed: 1);
            if (mutual) co.Certificate = s_cert.Value;
            using var client = new TlsHandshake(false, co);
            Assert.True(client.Start());
            bool mutateInitial = rng.Next(3) == 0;
            bool cok = client.ProcessCryptoData(EncryptionLevel.Initial, mutateInitial ? Mutate(rng, serverInitial) : serverInitial);
            AssertCleanOutcome(client, cok);
            if (cok && client.State == TlsHandshakeState.ClientWaitEncryptedExtensions)
            {
                cok = client.ProcessCryptoData(EncryptionLevel.Handshake, mutateInitial ? serverHandshake : Mutate(rng, serverHandshake));
                AssertCleanOutcome(client, cok);
            }
            if (!cok) failures++;
        }
        // The mutations must actually exercise the error paths.
        Assert.True(failures > 800, $"only {failures} failures");
    }

    [Fact]
    public void MutatedResumptionClientHelloAndRetryFlights_NeverThrow()
    {
        byte[] ticketKey = new byte[32];
        TlsHandshakeOptions ServerWithTickets()
        {
            TlsHandshakeOptions o = TlsEnginePair.ServerOptions(s_cert.Value, seed: 2);
            o.SessionTicketKey = ticketKey;
            o.EnableEarlyData = true;
            return o;
        }
        TlsSessionTicket ticket;
        using (var first = new TlsEnginePair(TlsEnginePair.ClientOptions(), ServerWithTickets()))
        {
            Assert.True(first.Run());
            Assert.True(first.Client.TryDequeueSessionTicket(out ticket));
        }
        TlsHandshakeOptions resumeOptions = TlsEnginePair.ClientOptions(seed: 3);
        resumeOptions.SessionTicket = ticket;
        resumeOptions.OfferEarlyData = true;
        byte[] resumedHello;
        using (var resumed = new TlsEnginePair(resumeOptions, ServerWithTickets()))
        {
            Assert.True(resumed.Run(1_000_000));
            Assert.True(resumed.Server.EarlyDataAccepted);
            resumedHello = resumed.Flights[0].Data;
        }

        TlsHandshakeOptions retryClient() => TlsEnginePair.ClientOptions(seed: 4);
        TlsHandshakeOptions retryServer = TlsEnginePair.ServerOptions(s_cert.Value, seed: 5);
        retryServer.Groups = [NamedGroup.Secp256r1];
        byte[] helloRetry, serverHello;
        using (var retry = new TlsEnginePair(retryClient(), retryServer))
        {
            Assert.True(retry.Run());
            var serverInitial = retry.Flights.Where(f => !f.FromClient && f.Level == EncryptionLevel.Initial).ToList();
            helloRetry = serverInitial[0].Data;
            serverHello = serverInitial[1].Data;
        }

        var rng = new Random(777);
        int failures = 0;
        for (int iteration = 0; iteration < 500; iteration++)
        {
            using (var server = new TlsHandshake(true, ServerWithTickets()))
            {
                bool ok = server.ProcessCryptoData(EncryptionLevel.Initial, Mutate(rng, resumedHello), 1_000_000);
                AssertCleanOutcome(server, ok);
                if (!ok) failures++;
            }
            using var client = new TlsHandshake(false, retryClient());
            Assert.True(client.Start());
            bool mutateRetry = rng.Next(2) == 0;
            bool cok = client.ProcessCryptoData(EncryptionLevel.Initial, mutateRetry ? Mutate(rng, helloRetry) : helloRetry);
            AssertCleanOutcome(client, cok);
            if (cok && client.State == TlsHandshakeState.ClientWaitServerHello)
            {
                cok = client.ProcessCryptoData(EncryptionLevel.Initial, mutateRetry ? serverHello : Mutate(rng, serverHello));
                AssertCleanOutcome(client, cok);
            }
            if (!cok) failures++;
        }
        Assert.True(failures > 500, $"only {failures} failures");
    }

    [Fact]
    public void EveryTruncationOfClientHello_IsIncompleteOrDecodeError()
    {
        var (clientHello, _, _, _) = RecordFlights(false);
        for (int cut = 4; cut < clientHello.Length; cut++)
        {
            // Shorten the declared length so the message is complete but truncated.
            byte[] m = clientHello.AsSpan(0, cut).ToArray();
            int len = cut - 4;
            m[1] = (byte)(len >> 16);
            m[2] = (byte)(len >> 8);
            m[3] = (byte)len;
            using var server = new TlsHandshake(true, TlsEnginePair.ServerOptions(s_cert.Value));
            Assert.False(server.ProcessCryptoData(EncryptionLevel.Initial, m));
            Assert.NotNull(server.Alert);
        }
    }

    [Fact]
    public void UnmutatedRecordedFlights_ReplayToCompletionOnTheClient()
    {
        // Sanity check for the mutation test: the recorded flights are valid input for a client with the same seed.
        var (_, serverInitial, serverHandshake, _) = RecordFlights(false);
        using var client = new TlsHandshake(false, TlsEnginePair.ClientOptions(seed: 1));
        Assert.True(client.Start());
        Assert.True(client.ProcessCryptoData(EncryptionLevel.Initial, serverInitial));
        Assert.True(client.ProcessCryptoData(EncryptionLevel.Handshake, serverHandshake), client.ErrorReason);
        Assert.True(client.IsHandshakeComplete);
    }
}
