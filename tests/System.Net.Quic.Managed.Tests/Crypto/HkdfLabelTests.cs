using System.Net.Quic.Managed.Crypto;
using System.Security.Cryptography;

namespace System.Net.Quic.Managed.Tests.Crypto;

public class HkdfLabelTests
{
    // RFC 9001 Appendix A.1: initial_secret and client_initial_secret for DCID 0x8394c8f03e515708.
    [Fact]
    public void Rfc9001_A1_ClientInitialSecret()
    {
        byte[] salt = Convert.FromHexString("38762cf7f55934b34d179ae6a4c80cadccbb7f0a");
        byte[] dcid = Convert.FromHexString("8394c8f03e515708");
        Span<byte> initial = stackalloc byte[32];
        HkdfLabel.Extract(HashAlgorithmName.SHA256, dcid, salt, initial);
        Assert.Equal("7db5df06e7a69e432496adedb00851923595221596ae2ae9fb8115c1e9ed0a44", Convert.ToHexStringLower(initial));

        Span<byte> client = stackalloc byte[32];
        HkdfLabel.Expand(HashAlgorithmName.SHA256, initial, "client in"u8, default, client);
        Assert.Equal("c00cf151ca5be075ed0ebfb5c80323c42d6b7db67881289af4008f1f6c357aea", Convert.ToHexStringLower(client));
    }
}
