using System.Buffers.Binary;
using System.Net.Quic.Managed.Crypto;
using System.Security.Cryptography;

namespace System.Net.Quic.Managed.Ids;

/// <summary>
/// Seals and opens the server's address validation tokens (RFC 9000 §8.1.3): Retry tokens, which also
/// carry the Original and Retry Source Connection IDs the server must echo in its transport parameters
/// (§7.3), and NEW_TOKEN tokens. AES-256-GCM under a per-endpoint key; the client's address is the
/// associated data, so a token moved to another address fails authentication instead of needing a lookup.
/// Layout: nonce(12) | AEAD(kind(1) issuedUs(8) odcidLen(1) odcid rscidLen(1) rscid) | tag(16).
/// </summary>
internal sealed class AddressValidationTokenCodec : IDisposable
{
    private const int NonceSize = 12;
    private const int TagSize = 16;
    private const int MaxPlaintext = 1 + 8 + 1 + ConnectionId.MaxLength + 1 + ConnectionId.MaxLength;

    /// <summary>The longest token this codec writes.</summary>
    public const int MaxTokenLength = NonceSize + MaxPlaintext + TagSize;

    private readonly AesGcm _aead;
    private readonly IRandomSource _random;

    public AddressValidationTokenCodec(IRandomSource random, long retryLifetimeUs = 10_000_000, long newTokenLifetimeUs = 24L * 3600 * 1_000_000)
    {
        _random = random;
        Span<byte> key = stackalloc byte[32];
        random.Fill(key);
        _aead = new AesGcm(key, TagSize);
        CryptographicOperations.ZeroMemory(key);
        RetryLifetimeUs = retryLifetimeUs;
        NewTokenLifetimeUs = newTokenLifetimeUs;
    }

    /// <summary>
    /// A codec whose AES-256-GCM key is derived (HKDF-SHA256) from <paramref name="sharedKey"/>, at least 16 bytes: every
    /// codec built from the same shared key (the servers of a fleet) opens the tokens of the others.
    /// </summary>
    public AddressValidationTokenCodec(IRandomSource random, ReadOnlySpan<byte> sharedKey, long retryLifetimeUs = 10_000_000,
        long newTokenLifetimeUs = 24L * 3600 * 1_000_000)
    {
        if (sharedKey.Length < 16) throw new ArgumentException("The token key needs at least 128 bits.", nameof(sharedKey));
        _random = random;
        Span<byte> key = stackalloc byte[32];
        HKDF.DeriveKey(HashAlgorithmName.SHA256, sharedKey, key, ReadOnlySpan<byte>.Empty, "QuicManaged address validation token"u8);
        _aead = new AesGcm(key, TagSize);
        CryptographicOperations.ZeroMemory(key);
        RetryLifetimeUs = retryLifetimeUs;
        NewTokenLifetimeUs = newTokenLifetimeUs;
    }

    public long RetryLifetimeUs { get; }

    public long NewTokenLifetimeUs { get; }

    /// <summary>Writes a Retry token for <paramref name="client"/>; returns its length.</summary>
    public int WriteRetryToken(Span<byte> destination, IPEndPoint client, in ConnectionId originalDestination, in ConnectionId retrySource, long nowUs)
        => Write(destination, AddressTokenKind.Retry, client, originalDestination, retrySource, nowUs);

    /// <summary>Writes a NEW_TOKEN token for <paramref name="client"/>'s IP address; returns its length.</summary>
    public int WriteNewToken(Span<byte> destination, IPEndPoint client, long nowUs)
        => Write(destination, AddressTokenKind.NewToken, client, default, default, nowUs);

    private int Write(Span<byte> destination, AddressTokenKind kind, IPEndPoint client, in ConnectionId odcid, in ConnectionId rscid, long nowUs)
    {
        int plaintextLength = 1 + 8 + 1 + odcid.Length + 1 + rscid.Length;
        int total = NonceSize + plaintextLength + TagSize;
        if (destination.Length < total) throw new ArgumentException("Destination too small for the token.", nameof(destination));

        Span<byte> plaintext = stackalloc byte[MaxPlaintext];
        plaintext[0] = (byte)kind;
        BinaryPrimitives.WriteInt64BigEndian(plaintext.Slice(1), nowUs);
        int pos = 9;
        plaintext[pos++] = (byte)odcid.Length;
        odcid.Span.CopyTo(plaintext.Slice(pos));
        pos += odcid.Length;
        plaintext[pos++] = (byte)rscid.Length;
        rscid.Span.CopyTo(plaintext.Slice(pos));

        Span<byte> nonce = destination.Slice(0, NonceSize);
        _random.Fill(nonce);
        Span<byte> aad = stackalloc byte[19];
        int aadLength = WriteAssociatedData(aad, kind, client);
        _aead.Encrypt(nonce, plaintext.Slice(0, plaintextLength), destination.Slice(NonceSize, plaintextLength),
            destination.Slice(NonceSize + plaintextLength, TagSize), aad.Slice(0, aadLength));
        return total;
    }

    /// <summary>
    /// Opens a token from a client's Initial. On <see cref="AddressTokenValidation.Valid"/> the kind and,
    /// for Retry tokens, the connection IDs are set. Tampered, foreign, or wrong-address tokens are Invalid.
    /// </summary>
    public AddressTokenValidation Validate(ReadOnlySpan<byte> token, IPEndPoint client, long nowUs,
        out AddressTokenKind kind, out ConnectionId originalDestination, out ConnectionId retrySource)
    {
        kind = default;
        originalDestination = default;
        retrySource = default;
        int plaintextLength = token.Length - NonceSize - TagSize;
        if (plaintextLength < 11 || plaintextLength > MaxPlaintext) return AddressTokenValidation.Invalid;

        Span<byte> plaintext = stackalloc byte[MaxPlaintext];
        Span<byte> aad = stackalloc byte[19];
        // The kind is inside the ciphertext but also bound into the AAD; try both kinds (two AEAD opens at most).
        foreach (AddressTokenKind candidate in (ReadOnlySpan<AddressTokenKind>)[AddressTokenKind.Retry, AddressTokenKind.NewToken])
        {
            int aadLength = WriteAssociatedData(aad, candidate, client);
            try
            {
                _aead.Decrypt(token.Slice(0, NonceSize), token.Slice(NonceSize, plaintextLength),
                    token.Slice(NonceSize + plaintextLength, TagSize), plaintext.Slice(0, plaintextLength), aad.Slice(0, aadLength));
            }
            catch (AuthenticationTagMismatchException)
            {
                continue;
            }
            if ((AddressTokenKind)plaintext[0] != candidate) return AddressTokenValidation.Invalid;
            kind = candidate;
            long issued = BinaryPrimitives.ReadInt64BigEndian(plaintext.Slice(1));
            int pos = 9;
            int odcidLength = plaintext[pos++];
            if (odcidLength > ConnectionId.MaxLength || pos + odcidLength + 1 > plaintextLength) return AddressTokenValidation.Invalid;
            originalDestination = new ConnectionId(plaintext.Slice(pos, odcidLength));
            pos += odcidLength;
            int rscidLength = plaintext[pos++];
            if (rscidLength > ConnectionId.MaxLength || pos + rscidLength != plaintextLength) return AddressTokenValidation.Invalid;
            retrySource = new ConnectionId(plaintext.Slice(pos, rscidLength));

            long lifetime = candidate == AddressTokenKind.Retry ? RetryLifetimeUs : NewTokenLifetimeUs;
            if (issued > nowUs || nowUs - issued > lifetime) return AddressTokenValidation.Expired;
            return AddressTokenValidation.Valid;
        }
        return AddressTokenValidation.Invalid;
    }

    // Retry tokens bind address and port; NEW_TOKEN tokens only the address (§8.1.3).
    private static int WriteAssociatedData(Span<byte> aad, AddressTokenKind kind, IPEndPoint client)
    {
        aad[0] = (byte)kind;
        IPAddress address = client.Address.IsIPv4MappedToIPv6 ? client.Address.MapToIPv4() : client.Address;
        if (!address.TryWriteBytes(aad.Slice(1), out int written)) throw new ArgumentException("Unsupported address.", nameof(client));
        int length = 1 + written;
        if (kind == AddressTokenKind.Retry)
        {
            BinaryPrimitives.WriteUInt16BigEndian(aad.Slice(length), (ushort)client.Port);
            length += 2;
        }
        return length;
    }

    public void Dispose() => _aead.Dispose();
}
