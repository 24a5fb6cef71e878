using System.Buffers.Binary;
using System.Net.Security;
using System.Security.Cryptography;

namespace System.Net.Quic.Managed.Crypto;

/// <summary>
/// Packet protection for one direction and one key phase (RFC 9001 §5): an AEAD keyed once with the packet
/// protection key, the static IV, and the direction's header protection key. All packet operations work in place on
/// a span holding exactly one QUIC packet and do not allocate (except the exception .NET raises internally when a
/// forged packet fails authentication). Not thread-safe: owned by one connection.
/// </summary>
internal sealed class PacketProtectionKeys : IDisposable
{
    /// <summary>RFC 9001 §5.3: all supported AEADs have a 16-byte tag.</summary>
    public const int TagLength = QuicCipherSuite.TagLength;

    /// <summary>RFC 9001 §5.4.2: the header protection sample is taken as if the packet number were 4 bytes.</summary>
    public const int MaxPacketNumberLength = 4;

    /// <summary>Smallest packet span TryRemoveHeaderProtection accepts beyond the packet number offset.</summary>
    public const int MinBytesAfterPacketNumberOffset = MaxPacketNumberLength + HeaderProtectionKey.SampleLength;

    private readonly AesNiGcm? _aesNiGcm;
    private readonly AesGcm? _aesGcm;
    private readonly ChaCha20Poly1305? _chaCha20Poly1305;
    private readonly byte[] _iv;
    private readonly byte[] _secret;
    private readonly HeaderProtectionKey _headerProtection;
    private bool _disposed;

    private PacketProtectionKeys(TlsCipherSuite suite, uint version, ReadOnlySpan<byte> secret, ReadOnlySpan<byte> key, ReadOnlySpan<byte> iv, HeaderProtectionKey headerProtection, int generation)
    {
        CipherSuite = suite;
        Version = version;
        Generation = generation;
        _secret = secret.ToArray();
        _iv = iv.ToArray();
        _headerProtection = headerProtection;
        if (suite == TlsCipherSuite.TLS_CHACHA20_POLY1305_SHA256)
        {
            _chaCha20Poly1305 = new ChaCha20Poly1305(key);
        }
        else if (UseAesNiGcm)
        {
            _aesNiGcm = new AesNiGcm(key);
        }
        else
        {
            _aesGcm = new AesGcm(key, TagLength);
        }
    }

    /// <summary>
    /// AES-GCM packets go through <see cref="AesNiGcm"/> (no native call per packet) when the CPU has AES-NI and
    /// PCLMULQDQ, unless the AppContext switch <c>System.Net.Quic.Managed.DisableAesNiGcm</c> is set (then, and on
    /// other CPUs, through <see cref="AesGcm"/>).
    /// </summary>
    internal static bool UseAesNiGcm { get; } = AesNiGcm.IsSupported &&
        !(AppContext.TryGetSwitch("System.Net.Quic.Managed.DisableAesNiGcm", out bool disabled) && disabled);

    /// <summary>True when this instance seals with <see cref="AesNiGcm"/> (tests).</summary>
    internal bool UsesAesNiGcm => _aesNiGcm is not null;

    /// <summary>The negotiated TLS cipher suite.</summary>
    public TlsCipherSuite CipherSuite { get; }

    /// <summary>The QUIC version whose labels derived these keys.</summary>
    public uint Version { get; }

    /// <summary>Key update generation: 0 for keys made from a TLS secret, +1 per RFC 9001 §6 update.</summary>
    public int Generation { get; }

    /// <summary>Packets protected with this key (compare with <see cref="ConfidentialityLimit"/>).</summary>
    public long ProtectedPacketCount { get; private set; }

    /// <summary>Packets that failed authentication with this key (RFC 9001 §6.6 counts these across all keys).</summary>
    public long FailedDecryptionCount { get; private set; }

    /// <summary>RFC 9001 §6.6 confidentiality limit for this suite.</summary>
    public long ConfidentialityLimit => QuicCipherSuite.GetConfidentialityLimit(CipherSuite);

    /// <summary>RFC 9001 §6.6 integrity limit for this suite.</summary>
    public long IntegrityLimit => QuicCipherSuite.GetIntegrityLimit(CipherSuite);

    /// <summary>
    /// Derives key, iv and hp from a traffic secret (RFC 9001 §5.1; RFC 9369 §3.3.2) and keys the AEAD once.
    /// </summary>
    public static PacketProtectionKeys Create(ReadOnlySpan<byte> secret, TlsCipherSuite suite, uint version)
    {
        if (!QuicCipherSuite.IsSupported(suite)) throw new ArgumentOutOfRangeException(nameof(suite));
        if (secret.Length != QuicCipherSuite.GetSecretLength(suite)) throw new ArgumentException("Secret length does not match the cipher suite.", nameof(secret));
        int keyLength = QuicCipherSuite.GetKeyLength(suite);
        Span<byte> key = stackalloc byte[keyLength];
        Span<byte> iv = stackalloc byte[QuicCipherSuite.IvLength];
        Span<byte> hp = stackalloc byte[keyLength];
        try
        {
            QuicKeyDerivation.DerivePacketKeys(secret, suite, version, key, iv, hp);
            HeaderProtectionKey headerProtection = HeaderProtectionKey.Create(suite, hp);
            return new PacketProtectionKeys(suite, version, secret, key, iv, headerProtection, generation: 0);
        }
        finally
        {
            CryptographicOperations.ZeroMemory(key);
            CryptographicOperations.ZeroMemory(hp);
        }
    }

    /// <summary>
    /// RFC 9001 §6.1: keys of the next key phase, from secret_&lt;n+1&gt; = HKDF-Expand-Label(secret_&lt;n&gt;,
    /// "quic ku" / "quicv2 ku", "", Hash.length). The header protection key is shared, not updated.
    /// The caller owns (and must dispose) the returned instance; this instance stays usable.
    /// </summary>
    public PacketProtectionKeys CreateNextGeneration()
    {
        ObjectDisposedException.ThrowIf(_disposed, this);
        int keyLength = QuicCipherSuite.GetKeyLength(CipherSuite);
        Span<byte> nextSecret = stackalloc byte[_secret.Length];
        Span<byte> key = stackalloc byte[keyLength];
        Span<byte> iv = stackalloc byte[QuicCipherSuite.IvLength];
        Span<byte> unusedHp = stackalloc byte[keyLength];
        try
        {
            QuicKeyDerivation.DeriveNextSecret(_secret, CipherSuite, Version, nextSecret);
            QuicKeyDerivation.DerivePacketKeys(nextSecret, CipherSuite, Version, key, iv, unusedHp);
            return new PacketProtectionKeys(CipherSuite, Version, nextSecret, key, iv, _headerProtection.AddReference(), Generation + 1);
        }
        finally
        {
            CryptographicOperations.ZeroMemory(nextSecret);
            CryptographicOperations.ZeroMemory(key);
            CryptographicOperations.ZeroMemory(unusedHp);
        }
    }

    /// <summary>
    /// Protects one packet in place (RFC 9001 §5.3, §5.4). <paramref name="packet"/> holds the header (whose first
    /// byte already carries the packet number length bits and, for long headers, whose Length field already counts
    /// the packet number, payload and tag), then <paramref name="payloadLength"/> plaintext bytes after the packet
    /// number, then room for the 16-byte tag. Writes the low <paramref name="pnLength"/> bytes of
    /// <paramref name="packetNumber"/> at <paramref name="pnOffset"/>, seals the payload with the header as AAD,
    /// appends the tag and applies header protection. Returns the protected packet length.
    /// Throws ArgumentException for arguments a correct sender never passes (these are not attacker input).
    /// </summary>
    public int Protect(Span<byte> packet, int pnOffset, int pnLength, ulong packetNumber, int payloadLength)
    {
        ObjectDisposedException.ThrowIf(_disposed, this);
        if (pnLength < 1 || pnLength > MaxPacketNumberLength) throw new ArgumentOutOfRangeException(nameof(pnLength));
        if (pnOffset < 1) throw new ArgumentOutOfRangeException(nameof(pnOffset));
        if (payloadLength < 0) throw new ArgumentOutOfRangeException(nameof(payloadLength));
        // RFC 9001 §5.4.2: the sender must make pnLength + payload >= 4 so the 16-byte sample exists.
        if (pnLength + payloadLength < MaxPacketNumberLength) throw new ArgumentException("Payload too short for the header protection sample; add PADDING.", nameof(payloadLength));
        int headerLength = pnOffset + pnLength;
        long totalLength = (long)headerLength + payloadLength + TagLength;
        if (totalLength > packet.Length) throw new ArgumentException("Packet span has no room for the payload and tag.", nameof(packet));
        if ((packet[0] & 0x03) + 1 != pnLength) throw new ArgumentException("First byte's packet number length bits do not match pnLength.", nameof(packet));

        // RFC 9000 §17.1: the truncated packet number is the low pnLength bytes, big-endian.
        for (int i = 0; i < pnLength; i++)
        {
            packet[pnOffset + i] = (byte)(packetNumber >> (8 * (pnLength - 1 - i)));
        }

        Span<byte> nonce = stackalloc byte[QuicCipherSuite.IvLength];
        FormNonce(packetNumber, nonce);
        ReadOnlySpan<byte> header = packet.Slice(0, headerLength);
        Span<byte> payload = packet.Slice(headerLength, payloadLength);
        Span<byte> tag = packet.Slice(headerLength + payloadLength, TagLength);
        if (_aesNiGcm is not null)
        {
            _aesNiGcm.Encrypt(nonce, payload, payload, tag, header);
        }
        else if (_aesGcm is not null)
        {
            _aesGcm.Encrypt(nonce, payload, payload, tag, header);
        }
        else
        {
            _chaCha20Poly1305!.Encrypt(nonce, payload, payload, tag, header);
        }
        ProtectedPacketCount++;

        ApplyHeaderProtection(packet, pnOffset, pnLength);
        return (int)totalLength;
    }

    /// <summary>
    /// Removes header protection in place (RFC 9001 §5.4.1, §5.4.2): unmasks the first byte's protected bits and the
    /// packet number. <paramref name="packet"/> must span exactly this packet (for a long header, up to the end its
    /// Length field gives). Returns false, leaving the packet untouched, if there is no room for a 4-byte packet number
    /// plus the 16-byte sample. The key phase bit (short header, 0x04) is readable from packet[0] afterwards.
    /// </summary>
    public bool TryRemoveHeaderProtection(Span<byte> packet, int pnOffset, out int pnLength, out uint truncatedPn)
    {
        ObjectDisposedException.ThrowIf(_disposed, this);
        pnLength = 0;
        truncatedPn = 0;
        if (pnOffset < 1 || packet.Length - pnOffset < MinBytesAfterPacketNumberOffset) return false;

        Span<byte> mask = stackalloc byte[HeaderProtectionKey.MaskLength];
        _headerProtection.ComputeMask(packet.Slice(pnOffset + MaxPacketNumberLength, HeaderProtectionKey.SampleLength), mask);
        // RFC 9001 §5.4.1: 4 bits are protected in long headers, 5 in short headers; the form bit itself is not.
        packet[0] ^= (byte)(mask[0] & ((packet[0] & 0x80) != 0 ? 0x0f : 0x1f));
        int length = (packet[0] & 0x03) + 1;
        uint pn = 0;
        for (int i = 0; i < length; i++)
        {
            byte b = (byte)(packet[pnOffset + i] ^ mask[1 + i]);
            packet[pnOffset + i] = b;
            pn = (pn << 8) | b;
        }
        pnLength = length;
        truncatedPn = pn;
        return true;
    }

    /// <summary>
    /// Opens the payload in place (RFC 9001 §5.3) after <see cref="TryRemoveHeaderProtection"/> and packet number
    /// decoding. <paramref name="headerLength"/> = pnOffset + pnLength; <paramref name="protectedPayloadLength"/>
    /// counts ciphertext plus tag. On success the plaintext is at packet[headerLength..headerLength+plaintextLength].
    /// Returns false (and counts a failure toward the integrity limit) if authentication fails; the payload bytes are
    /// then unspecified. Returns false without counting for lengths that cannot describe a packet.
    /// </summary>
    public bool TryDecrypt(Span<byte> packet, int headerLength, ulong fullPacketNumber, int protectedPayloadLength, out int plaintextLength)
    {
        ObjectDisposedException.ThrowIf(_disposed, this);
        plaintextLength = 0;
        if (headerLength < 1 || protectedPayloadLength < TagLength || (long)headerLength + protectedPayloadLength > packet.Length) return false;

        int ciphertextLength = protectedPayloadLength - TagLength;
        Span<byte> nonce = stackalloc byte[QuicCipherSuite.IvLength];
        FormNonce(fullPacketNumber, nonce);
        ReadOnlySpan<byte> header = packet.Slice(0, headerLength);
        Span<byte> payload = packet.Slice(headerLength, ciphertextLength);
        ReadOnlySpan<byte> tag = packet.Slice(headerLength + ciphertextLength, TagLength);
        if (_aesNiGcm is not null)
        {
            if (!_aesNiGcm.TryDecrypt(nonce, payload, tag, payload, header))
            {
                FailedDecryptionCount++;
                return false;
            }
            plaintextLength = ciphertextLength;
            return true;
        }
        try
        {
            if (_aesGcm is not null)
            {
                _aesGcm.Decrypt(nonce, payload, tag, payload, header);
            }
            else
            {
                _chaCha20Poly1305!.Decrypt(nonce, payload, tag, payload, header);
            }
        }
        catch (CryptographicException)
        {
            // .NET reports a tag mismatch only by throwing (AuthenticationTagMismatchException); it is a value here.
            FailedDecryptionCount++;
            return false;
        }
        plaintextLength = ciphertextLength;
        return true;
    }

    /// <summary>RFC 9001 §5.3: nonce = iv XOR packet number, left-padded to the IV length in network byte order.</summary>
    private void FormNonce(ulong packetNumber, Span<byte> nonce)
    {
        _iv.CopyTo(nonce);
        Span<byte> tail = nonce.Slice(QuicCipherSuite.IvLength - sizeof(ulong));
        BinaryPrimitives.WriteUInt64BigEndian(tail, BinaryPrimitives.ReadUInt64BigEndian(tail) ^ packetNumber);
    }

    private void ApplyHeaderProtection(Span<byte> packet, int pnOffset, int pnLength)
    {
        Span<byte> mask = stackalloc byte[HeaderProtectionKey.MaskLength];
        _headerProtection.ComputeMask(packet.Slice(pnOffset + MaxPacketNumberLength, HeaderProtectionKey.SampleLength), mask);
        packet[0] ^= (byte)(mask[0] & ((packet[0] & 0x80) != 0 ? 0x0f : 0x1f));
        for (int i = 0; i < pnLength; i++)
        {
            packet[pnOffset + i] ^= mask[1 + i];
        }
    }

    public void Dispose()
    {
        if (_disposed) return;
        _disposed = true;
        _aesNiGcm?.Clear();
        _aesGcm?.Dispose();
        _chaCha20Poly1305?.Dispose();
        _headerProtection.Release();
        CryptographicOperations.ZeroMemory(_secret);
        CryptographicOperations.ZeroMemory(_iv);
    }
}
