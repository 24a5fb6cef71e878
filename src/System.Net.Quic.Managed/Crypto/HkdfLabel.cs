using System.Buffers.Binary;
using System.Security.Cryptography;

namespace System.Net.Quic.Managed.Crypto;

/// <summary>HKDF-Expand-Label (RFC 8446 §7.1) as used by TLS 1.3 and QUIC (RFC 9001 §5.1).</summary>
internal static class HkdfLabel
{
    private static ReadOnlySpan<byte> Tls13Prefix => "tls13 "u8;

    /// <summary>Maximum label length (without the "tls13 " prefix) this helper accepts.</summary>
    public const int MaxLabelLength = 249;

    /// <summary>Maximum context length accepted (a transcript hash is at most 64 bytes).</summary>
    public const int MaxContextLength = 255;

    /// <summary>
    /// Writes HKDF-Expand-Label(secret, label, context, output.Length) into <paramref name="output"/>.
    /// <paramref name="label"/> excludes the "tls13 " prefix, which is added here. Does not allocate.
    /// </summary>
    public static void Expand(HashAlgorithmName hash, ReadOnlySpan<byte> secret, ReadOnlySpan<byte> label, ReadOnlySpan<byte> context, Span<byte> output)
    {
        if (label.Length > MaxLabelLength) throw new ArgumentOutOfRangeException(nameof(label));
        if (context.Length > MaxContextLength) throw new ArgumentOutOfRangeException(nameof(context));
        if (output.Length > ushort.MaxValue) throw new ArgumentOutOfRangeException(nameof(output));

        // struct { uint16 length; opaque label<7..255> = "tls13 " + Label; opaque context<0..255>; } HkdfLabel;
        Span<byte> info = stackalloc byte[2 + 1 + 6 + MaxLabelLength + 1 + MaxContextLength];
        BinaryPrimitives.WriteUInt16BigEndian(info, (ushort)output.Length);
        int pos = 2;
        info[pos++] = (byte)(Tls13Prefix.Length + label.Length);
        Tls13Prefix.CopyTo(info.Slice(pos));
        pos += Tls13Prefix.Length;
        label.CopyTo(info.Slice(pos));
        pos += label.Length;
        info[pos++] = (byte)context.Length;
        context.CopyTo(info.Slice(pos));
        pos += context.Length;
        HKDF.Expand(hash, secret, output, info.Slice(0, pos));
    }

    /// <summary>HKDF-Extract(salt, ikm) into <paramref name="prk"/> (length = hash length).</summary>
    public static int Extract(HashAlgorithmName hash, ReadOnlySpan<byte> ikm, ReadOnlySpan<byte> salt, Span<byte> prk)
        => HKDF.Extract(hash, ikm, salt, prk);
}
