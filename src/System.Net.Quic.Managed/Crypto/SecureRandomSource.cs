using System.Security.Cryptography;

namespace System.Net.Quic.Managed.Crypto;

/// <summary>The production randomness: the OS CSPRNG.</summary>
internal sealed class SecureRandomSource : IRandomSource
{
    public static readonly SecureRandomSource Instance = new();

    public void Fill(Span<byte> destination) => RandomNumberGenerator.Fill(destination);
}
