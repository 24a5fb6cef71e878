namespace System.Net.Quic.Managed.Wire;

/// <summary>PING: the type alone. RFC 9000 §19.2.</summary>
internal static class PingFrame
{
    public const int EncodedLength = 1;

    public static bool TryWrite(ref QuicWriter writer) => writer.TryWriteByte((byte)FrameType.Ping);
}
