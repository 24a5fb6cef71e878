using System.Net.Quic.Managed.Crypto;
using System.Security.Cryptography;

namespace System.Net.Quic.Managed.Ids;

/// <summary>
/// Derives stateless reset tokens from connection IDs with a static key, so an endpoint that lost a
/// connection's state can still produce the token for it (RFC 9000 §10.3.2: HMAC(static_key, connection_id)).
/// The key is per endpoint; tokens must not be derivable for IDs the endpoint never issued.
/// </summary>
internal sealed class StatelessResetTokenGenerator
{
    private readonly byte[] _key = new byte[32];

    public StatelessResetTokenGenerator(IRandomSource random) => random.Fill(_key);

    public StatelessResetTokenGenerator(ReadOnlySpan<byte> key)
    {
        if (key.Length < 16) throw new ArgumentException("The static key needs at least 128 bits.", nameof(key));
        _key = key.ToArray();
    }

    public StatelessResetToken Generate(in ConnectionId connectionId)
    {
        Span<byte> mac = stackalloc byte[HMACSHA256.HashSizeInBytes];
        HMACSHA256.HashData(_key, connectionId.Span, mac);
        return new StatelessResetToken(mac.Slice(0, StatelessResetToken.Length));
    }
}
