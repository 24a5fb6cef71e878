namespace System.Net.Quic.Managed.Wire;

/// <summary>HANDSHAKE_DONE: the type alone. RFC 9000 §19.20.</summary>
internal static class HandshakeDoneFrame
{
    public const int EncodedLength = 1;

    public static bool TryWrite(ref QuicWriter writer) => writer.TryWriteByte((byte)FrameType.HandshakeDone);
}
