using System.Net.Quic.Managed.Crypto;
using System.Security.Cryptography;

namespace System.Net.Quic.Managed.Ids;

/// <summary>
/// QUIC-LB connection IDs (draft-ietf-quic-load-balancers-21, "Generating Routable QUIC Connection IDs"): a first
/// octet whose three most significant bits are the config rotation codepoint (0 to 6; 0b111 means unroutable) and whose
/// five other bits are either the length of the rest of the ID (length self-description) or random, then the plaintext
/// block server ID || nonce, which is left as it is (no key), encrypted as one AES-128-ECB block (server ID and nonce
/// 16 octets together: single pass) or with the draft's four-pass Feistel network over AES-128-ECB (any other length).
/// A load balancer configured with the same rotation codepoint, server ID length, nonce length and key extracts the
/// server ID from any ID this issues. <see cref="TrailingLength"/> octets of server use may follow the QUIC-LB part
/// (§"Server Actions": a load balancer ignores them); the worker tag of a multi-socket listener goes there.
/// </summary>
internal sealed class QuicLbConnectionIdGenerator : ConnectionIdGenerator, IDisposable
{
    /// <summary>The reserved config rotation codepoint of unroutable IDs.</summary>
    public const int UnroutableConfigRotation = 7;

    private readonly byte[] _serverId;
    private readonly Aes? _aes;
    private readonly int _length;

    /// <summary>
    /// A generator for one configuration. <paramref name="key"/> empty: plaintext IDs; otherwise the 16-octet AES-128 key.
    /// Throws <see cref="ArgumentException"/> for values the draft forbids (server ID at least 1 octet, nonce at least 4,
    /// together at most 19; rotation 0 to 6).
    /// </summary>
    public QuicLbConnectionIdGenerator(int configRotation, ReadOnlySpan<byte> serverId, int nonceLength, ReadOnlySpan<byte> key,
        bool encodeLength, int trailingLength = 0)
    {
        Validate(configRotation, serverId.Length, nonceLength, key.Length, trailingLength);
        ConfigRotation = configRotation;
        _serverId = serverId.ToArray();
        NonceLength = nonceLength;
        EncodeLength = encodeLength;
        TrailingLength = trailingLength;
        _length = 1 + serverId.Length + nonceLength + trailingLength;
        if (!key.IsEmpty)
        {
            _aes = Aes.Create();
            _aes.Key = key.ToArray();
        }
    }

    /// <summary>Throws <see cref="ArgumentException"/> (naming <paramref name="argumentName"/>) unless the values make a valid configuration.</summary>
    public static void Validate(int configRotation, int serverIdLength, int nonceLength, int keyLength, int trailingLength, string argumentName = "configuration")
    {
        if ((uint)configRotation >= UnroutableConfigRotation)
        {
            throw new ArgumentOutOfRangeException(argumentName, configRotation, "The config rotation codepoint is 0 to 6 (7 marks unroutable IDs).");
        }
        if (serverIdLength < 1) throw new ArgumentException("The server ID has at least one octet.", argumentName);
        if (nonceLength < 4) throw new ArgumentException("The nonce has at least four octets.", argumentName);
        if (serverIdLength + nonceLength > 19) throw new ArgumentException("The server ID and nonce lengths sum to 19 octets or less.", argumentName);
        if (keyLength != 0 && keyLength != 16) throw new ArgumentException("The key is empty (plaintext IDs) or 16 octets (AES-128).", argumentName);
        if (trailingLength < 0 || 1 + serverIdLength + nonceLength + trailingLength > ConnectionId.MaxLength)
        {
            throw new ArgumentException("A connection ID is at most 20 octets: the server ID and nonce leave no room for the worker tag.", argumentName);
        }
    }

    public int ConfigRotation { get; }

    public int ServerIdLength => _serverId.Length;

    public int NonceLength { get; }

    public bool EncodeLength { get; }

    public bool IsEncrypted => _aes is not null;

    /// <summary>Octets of server use after the QUIC-LB part (random unless the caller overwrites them).</summary>
    public int TrailingLength { get; }

    public override int Length => _length;

    public override ConnectionId Create(IRandomSource random)
    {
        Span<byte> cid = stackalloc byte[ConnectionId.MaxLength];
        cid = cid.Slice(0, _length);
        // One draw for the nonce, the random first-octet bits and the trailing octets.
        random.Fill(cid);
        Span<byte> nonce = stackalloc byte[18];
        nonce = nonce.Slice(0, NonceLength);
        cid.Slice(1 + _serverId.Length, NonceLength).CopyTo(nonce);
        Encode(nonce, (byte)(cid[0] & 0x1F), cid);
        return new ConnectionId(cid);
    }

    /// <summary>
    /// Writes the QUIC-LB part of an ID for <paramref name="nonce"/> into <paramref name="destination"/> (its first
    /// 1 + server ID + nonce octets; trailing octets are left alone). <paramref name="randomBits"/> fills the low five bits
    /// of the first octet when the length is not self-described. Deterministic: the draft's test vectors go through here.
    /// </summary>
    public void Encode(ReadOnlySpan<byte> nonce, byte randomBits, Span<byte> destination)
    {
        if (nonce.Length != NonceLength) throw new ArgumentException("Wrong nonce length.", nameof(nonce));
        if (destination.Length < _length) throw new ArgumentException("Destination too small.", nameof(destination));
        destination[0] = (byte)((ConfigRotation << 5) | (EncodeLength ? _length - 1 : randomBits & 0x1F));
        int plaintextLength = _serverId.Length + NonceLength;
        Span<byte> block = destination.Slice(1, plaintextLength);
        _serverId.CopyTo(block);
        nonce.CopyTo(block.Slice(_serverId.Length));
        if (_aes is null) return;
        if (plaintextLength == 16)
        {
            Span<byte> output = stackalloc byte[16];
            _aes.EncryptEcb(block, output, PaddingMode.None);
            output.CopyTo(block);
            return;
        }
        FourPassEncrypt(_aes, block);
    }

    /// <summary>The draft's four-pass Feistel network, in place over server ID || nonce (5 to 19 octets, not 16).</summary>
    internal static void FourPassEncrypt(Aes aes, Span<byte> block)
    {
        int length = block.Length;
        int half = (length + 1) / 2;
        bool odd = (length & 1) != 0;
        Span<byte> left = stackalloc byte[half];
        Span<byte> right = stackalloc byte[half];
        block.Slice(0, half).CopyTo(left);
        block.Slice(length - half).CopyTo(right);
        if (odd)
        {
            left[half - 1] &= 0xF0;
            right[0] &= 0x0F;
        }
        Round(aes, length, 1, left, right, odd, clearFirst: true);
        Round(aes, length, 2, right, left, odd, clearFirst: false);
        Round(aes, length, 3, left, right, odd, clearFirst: true);
        Round(aes, length, 4, right, left, odd, clearFirst: false);
        // Odd length: the low nibble of left's last octet and the high nibble of right's first are zero; they share an octet.
        left.CopyTo(block);
        if (odd)
        {
            block[half - 1] = (byte)(left[half - 1] | right[0]);
            right.Slice(1).CopyTo(block.Slice(half));
        }
        else
        {
            right.CopyTo(block.Slice(half));
        }
    }

    /// <summary>target ^= truncate(AES-ECB(expand(length, pass, source)), half), then the nibble the odd split leaves out is cleared.</summary>
    internal static void Round(Aes aes, int length, int pass, ReadOnlySpan<byte> source, Span<byte> target, bool odd, bool clearFirst)
    {
        Span<byte> input = stackalloc byte[16];
        Span<byte> output = stackalloc byte[16];
        Expand(length, pass, source, input);
        aes.EncryptEcb(input, output, PaddingMode.None);
        for (int i = 0; i < target.Length; i++) target[i] ^= output[i];
        if (!odd) return;
        if (clearFirst) target[0] &= 0x0F;
        else target[^1] &= 0xF0;
    }

    /// <summary>expand(length, pass, input): the input octets, zero padding, then length and pass as the last two octets.</summary>
    internal static void Expand(int length, int pass, ReadOnlySpan<byte> input, Span<byte> destination)
    {
        destination.Clear();
        input.CopyTo(destination);
        destination[14] = (byte)length;
        destination[15] = (byte)pass;
    }

    public void Dispose() => _aes?.Dispose();
}
