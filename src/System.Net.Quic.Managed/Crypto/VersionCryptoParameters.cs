using System.Net.Quic.Managed.Wire;

namespace System.Net.Quic.Managed.Crypto;

/// <summary>
/// Version-specific constants of QUIC packet protection: the Initial salt (RFC 9001 §5.2; RFC 9369 §3.3.1),
/// the HKDF labels (RFC 9001 §5.1, §5.4, §6.1; RFC 9369 §3.3.2) and the Retry integrity key and nonce
/// (RFC 9001 §5.8; RFC 9369 §3.3.3).
/// </summary>
internal static class VersionCryptoParameters
{
    public const int InitialSaltLength = 20;
    public const int RetryKeyLength = 16;
    public const int RetryNonceLength = 12;

    // RFC 9001 §5.2.
    private static ReadOnlySpan<byte> V1InitialSalt =>
    [
        0x38, 0x76, 0x2c, 0xf7, 0xf5, 0x59, 0x34, 0xb3, 0x4d, 0x17,
        0x9a, 0xe6, 0xa4, 0xc8, 0x0c, 0xad, 0xcc, 0xbb, 0x7f, 0x0a,
    ];

    // RFC 9369 §3.3.1.
    private static ReadOnlySpan<byte> V2InitialSalt =>
    [
        0x0d, 0xed, 0xe3, 0xde, 0xf7, 0x00, 0xa6, 0xdb, 0x81, 0x93,
        0x81, 0xbe, 0x6e, 0x26, 0x9d, 0xcb, 0xf9, 0xbd, 0x2e, 0xd9,
    ];

    // RFC 9001 §5.8.
    private static ReadOnlySpan<byte> V1RetryKey =>
    [
        0xbe, 0x0c, 0x69, 0x0b, 0x9f, 0x66, 0x57, 0x5a, 0x1d, 0x76, 0x6b, 0x54, 0xe3, 0x68, 0xc8, 0x4e,
    ];

    private static ReadOnlySpan<byte> V1RetryNonce =>
    [
        0x46, 0x15, 0x99, 0xd3, 0x5d, 0x63, 0x2b, 0xf2, 0x23, 0x98, 0x25, 0xbb,
    ];

    // RFC 9369 §3.3.3.
    private static ReadOnlySpan<byte> V2RetryKey =>
    [
        0x8f, 0xb4, 0xb0, 0x1b, 0x56, 0xac, 0x48, 0xe2, 0x60, 0xfb, 0xcb, 0xce, 0xad, 0x7c, 0xcc, 0x92,
    ];

    private static ReadOnlySpan<byte> V2RetryNonce =>
    [
        0xd8, 0x69, 0x69, 0xbc, 0x2d, 0x7c, 0x6d, 0x99, 0x90, 0xef, 0xb0, 0x4a,
    ];

    public static ReadOnlySpan<byte> GetInitialSalt(uint version) => version switch
    {
        QuicVersion.V1 => V1InitialSalt,
        QuicVersion.V2 => V2InitialSalt,
        _ => throw Unsupported(version),
    };

    /// <summary>Label for the AEAD key, without the "tls13 " prefix that HkdfLabel adds.</summary>
    public static ReadOnlySpan<byte> GetKeyLabel(uint version) => version switch
    {
        QuicVersion.V1 => "quic key"u8,
        QuicVersion.V2 => "quicv2 key"u8,
        _ => throw Unsupported(version),
    };

    public static ReadOnlySpan<byte> GetIvLabel(uint version) => version switch
    {
        QuicVersion.V1 => "quic iv"u8,
        QuicVersion.V2 => "quicv2 iv"u8,
        _ => throw Unsupported(version),
    };

    public static ReadOnlySpan<byte> GetHeaderProtectionLabel(uint version) => version switch
    {
        QuicVersion.V1 => "quic hp"u8,
        QuicVersion.V2 => "quicv2 hp"u8,
        _ => throw Unsupported(version),
    };

    public static ReadOnlySpan<byte> GetKeyUpdateLabel(uint version) => version switch
    {
        QuicVersion.V1 => "quic ku"u8,
        QuicVersion.V2 => "quicv2 ku"u8,
        _ => throw Unsupported(version),
    };

    public static ReadOnlySpan<byte> GetRetryKey(uint version) => version switch
    {
        QuicVersion.V1 => V1RetryKey,
        QuicVersion.V2 => V2RetryKey,
        _ => throw Unsupported(version),
    };

    public static ReadOnlySpan<byte> GetRetryNonce(uint version) => version switch
    {
        QuicVersion.V1 => V1RetryNonce,
        QuicVersion.V2 => V2RetryNonce,
        _ => throw Unsupported(version),
    };

    private static ArgumentOutOfRangeException Unsupported(uint version)
        => new(nameof(version), version, "QUIC version is not supported; check QuicVersion.IsSupported first.");
}
