namespace System.Net.Quic.Managed.Wire;

/// <summary>A CRYPTO frame. RFC 9000 §19.6. <see cref="Data"/> points into the packet payload.</summary>
internal readonly ref struct CryptoFrame
{
    public CryptoFrame(ulong offset, ReadOnlySpan<byte> data)
    {
        Offset = offset;
        Data = data;
    }

    public ulong Offset { get; }

    public ReadOnlySpan<byte> Data { get; }

    /// <summary>Reads a CRYPTO frame body. Offset + length above 2^62-1 is a FRAME_ENCODING_ERROR (RFC 9000 §19.6).</summary>
    public static TransportErrorCode TryRead(ref QuicReader reader, out CryptoFrame frame)
    {
        frame = default;
        if (!reader.TryReadVarInt(out ulong offset) || !reader.TryReadLengthPrefixed(out ReadOnlySpan<byte> data) ||
            (ulong)data.Length > VariableLengthInteger.MaxValue - offset)
        {
            return TransportErrorCode.FrameEncodingError;
        }

        frame = new CryptoFrame(offset, data);
        return TransportErrorCode.NoError;
    }

    public int EncodedLength => GetHeaderLength(Offset, Data.Length) + Data.Length;

    public bool TryWrite(ref QuicWriter writer)
    {
        QuicWriter w = writer;
        if (!TryWriteHeader(ref w, Offset, Data.Length) || !w.TryWriteBytes(Data))
        {
            return false;
        }

        writer = w;
        return true;
    }

    public static int GetHeaderLength(ulong offset, int dataLength) =>
        1 + VariableLengthInteger.GetEncodedLength(offset) + VariableLengthInteger.GetEncodedLength((ulong)dataLength);

    /// <summary>Writes the frame up to its data, for a sender that copies the data from its own buffer.</summary>
    public static bool TryWriteHeader(ref QuicWriter writer, ulong offset, int dataLength)
    {
        if (dataLength < 0 || offset > VariableLengthInteger.MaxValue - (ulong)dataLength || GetHeaderLength(offset, dataLength) > writer.Remaining)
        {
            return false;
        }

        writer.TryWriteByte((byte)FrameType.Crypto);
        writer.TryWriteVarInt(offset);
        writer.TryWriteVarInt((ulong)dataLength);
        return true;
    }

    /// <summary>The most data bytes a CRYPTO frame can carry in <paramref name="available"/> bytes, or -1.</summary>
    public static int GetMaxDataLength(int available, ulong offset) =>
        StreamFrame.FitData(available - 1 - VariableLengthInteger.GetEncodedLength(offset), hasLength: true);
}
