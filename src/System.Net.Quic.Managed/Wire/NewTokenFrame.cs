namespace System.Net.Quic.Managed.Wire;

/// <summary>NEW_TOKEN. RFC 9000 §19.7. <see cref="Token"/> points into the packet payload.</summary>
internal readonly ref struct NewTokenFrame
{
    public NewTokenFrame(ReadOnlySpan<byte> token) => Token = token;

    public ReadOnlySpan<byte> Token { get; }

    /// <summary>Reads the body. An empty token is a FRAME_ENCODING_ERROR (RFC 9000 §19.7).</summary>
    public static TransportErrorCode TryRead(ref QuicReader reader, out NewTokenFrame frame)
    {
        frame = default;
        if (!reader.TryReadLengthPrefixed(out ReadOnlySpan<byte> token) || token.IsEmpty)
        {
            return TransportErrorCode.FrameEncodingError;
        }

        frame = new NewTokenFrame(token);
        return TransportErrorCode.NoError;
    }

    public int EncodedLength => 1 + VariableLengthInteger.GetEncodedLength((ulong)Token.Length) + Token.Length;

    public bool TryWrite(ref QuicWriter writer)
    {
        QuicWriter w = writer;
        if (Token.IsEmpty || !w.TryWriteByte((byte)FrameType.NewToken) || !w.TryWriteLengthPrefixed(Token))
        {
            return false;
        }

        writer = w;
        return true;
    }
}
