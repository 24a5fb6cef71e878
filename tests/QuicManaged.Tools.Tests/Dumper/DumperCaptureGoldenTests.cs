using System.Runtime.CompilerServices;

namespace System.Net.Quic.Managed.Tests.Dumper;

/// <summary>
/// Golden file on a real capture: our client (InteropEndpoint, h3) against ngtcp2's gtlsserver on loopback, recorded by
/// tests/interop/run.sh (case handshake), decrypted with the key log the peer wrote. Every packet must decode, and the
/// text must stay exactly as checked in (regenerate the .golden.txt deliberately when the output format changes).
/// </summary>
public sealed class DumperCaptureGoldenTests
{
    private static string CaptureDirectory([CallerFilePath] string path = "") => Path.Combine(Path.GetDirectoryName(path)!, "Captures");

    [Fact]
    public void OurClientAgainstNgtcp2HandshakeCaptureMatchesTheGoldenText()
    {
        string dir = CaptureDirectory();
        string pcap = Path.Combine(dir, "ours-vs-ngtcp2-handshake.pcapng");
        string keys = Path.Combine(dir, "ours-vs-ngtcp2-handshake.keys");
        string expected = File.ReadAllText(Path.Combine(dir, "ours-vs-ngtcp2-handshake.golden.txt"));

        string actual = DumperGoldenTests.Run("--pcap", pcap, "--keylog", keys);

        Assert.DoesNotContain("no keys", actual);
        Assert.DoesNotContain("decryption failed", actual);
        Assert.Contains("TLS ClientHello", actual);
        Assert.Contains("TLS ServerHello", actual);
        Assert.Contains("HANDSHAKE_DONE", actual);
        Assert.Equal(DumperGoldenTests.Normalize(expected), DumperGoldenTests.Normalize(actual));
    }

    /// <summary>
    /// quic-go's client against our RequireRetry server under load (tests/interop, quic-go/our-server/retry): the server
    /// answered the first Initial and, late, two retransmitted copies of it, so three valid Retries reached the client.
    /// The client follows only the first (RFC 9000 §17.2.5.2): its Initial keys and the server's stay those of that
    /// Retry's SCID. Decoded with quic-go's key log.
    /// </summary>
    [Fact]
    public void ThreeRetriesForOneClientFollowOnlyTheFirst()
    {
        string dir = CaptureDirectory();
        string actual = DumperGoldenTests.Run("--pcap", Path.Combine(dir, "quic-go-vs-ours-three-retries.pcapng"),
            "--keylog", Path.Combine(dir, "quic-go-vs-ours-three-retries.keys"));

        Assert.DoesNotContain("no keys", actual);
        Assert.DoesNotContain("decryption failed", actual);
        Assert.Equal(3, actual.Split('\n').Count(l => l.Contains("] offset=0 Retry version=v1", StringComparison.Ordinal)));
        Assert.Equal(2, actual.Split('\n').Count(l => l.Contains("ignored by the client, which follows only the first Retry", StringComparison.Ordinal)));
        Assert.Contains("HANDSHAKE_DONE", actual);
        Assert.Contains("CONNECTION_CLOSE", actual);
    }
}
