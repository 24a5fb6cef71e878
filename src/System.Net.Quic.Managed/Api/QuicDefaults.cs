namespace System.Net.Quic.Managed;

/// <summary>Default values of the options classes, the same as System.Net.Quic's.</summary>
internal static class QuicDefaults
{
    public const int DefaultListenBacklog = 512;
    public const int DefaultClientMaxInboundBidirectionalStreams = 0;
    public const int DefaultClientMaxInboundUnidirectionalStreams = 0;
    public const int DefaultServerMaxInboundBidirectionalStreams = 100;
    public const int DefaultServerMaxInboundUnidirectionalStreams = 10;

    /// <summary>Largest application error code a varint can carry (RFC 9000 §16).</summary>
    public const long MaxErrorCodeValue = (1L << 62) - 1;

    public const int DefaultConnectionMaxData = 16 * 1024 * 1024;
    public const int DefaultStreamMaxData = 64 * 1024;

    public static readonly TimeSpan HandshakeTimeout = TimeSpan.FromSeconds(10);

    /// <summary>The idle timeout used when the options say <see cref="TimeSpan.Zero"/> ("implementation default"), as msquic does.</summary>
    public static readonly TimeSpan IdleTimeout = TimeSpan.FromSeconds(30);
}
