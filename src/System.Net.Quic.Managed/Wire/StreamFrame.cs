namespace System.Net.Quic.Managed.Wire;

/// <summary>A STREAM frame (0x08..0x0f). RFC 9000 §19.8. <see cref="Data"/> points into the packet payload.</summary>
internal readonly ref struct StreamFrame
{
    public const byte OffsetBit = 0x04;
    public const byte LengthBit = 0x02;
    public const byte FinBit = 0x01;

    /// <summary>A frame to send. The OFF bit is set when <paramref name="offset"/> is non-zero; without
    /// <paramref name="hasLength"/> the data must run to the end of the packet.</summary>
    public StreamFrame(ulong streamId, ulong offset, ReadOnlySpan<byte> data, bool fin, bool hasLength = true)
    {
        StreamId = streamId;
        Offset = offset;
        Data = data;
        Fin = fin;
        HasLength = hasLength;
    }

    public ulong StreamId { get; }

    public ulong Offset { get; }

    public ReadOnlySpan<byte> Data { get; }

    public bool Fin { get; }

    /// <summary>Whether the frame carries a Length field (LEN bit).</summary>
    public bool HasLength { get; }

    /// <summary>Reads a STREAM frame body. Offset + length above 2^62-1 is a FRAME_ENCODING_ERROR (RFC 9000 §19.8).</summary>
    public static TransportErrorCode TryRead(ref QuicReader reader, FrameType type, out StreamFrame frame)
    {
        frame = default;
        byte bits = (byte)type;
        ulong offset = 0;
        if (!reader.TryReadVarInt(out ulong streamId) ||
            ((bits & OffsetBit) != 0 && !reader.TryReadVarInt(out offset)))
        {
            return TransportErrorCode.FrameEncodingError;
        }

        ReadOnlySpan<byte> data;
        bool hasLength = (bits & LengthBit) != 0;
        if (hasLength)
        {
            if (!reader.TryReadLengthPrefixed(out data))
            {
                return TransportErrorCode.FrameEncodingError;
            }
        }
        else
        {
            data = reader.ReadToEnd();
        }

        if ((ulong)data.Length > VariableLengthInteger.MaxValue - offset)
        {
            return TransportErrorCode.FrameEncodingError;
        }

        frame = new StreamFrame(streamId, offset, data, (bits & FinBit) != 0, hasLength);
        return TransportErrorCode.NoError;
    }

    public int EncodedLength => GetHeaderLength(StreamId, Offset, Data.Length, HasLength) + Data.Length;

    public bool TryWrite(ref QuicWriter writer)
    {
        QuicWriter w = writer;
        if (!TryWriteHeader(ref w, StreamId, Offset, Data.Length, Fin, HasLength) || !w.TryWriteBytes(Data))
        {
            return false;
        }

        writer = w;
        return true;
    }

    /// <summary>Bytes taken by the type, Stream ID, Offset and Length fields.</summary>
    public static int GetHeaderLength(ulong streamId, ulong offset, int dataLength, bool hasLength) =>
        1 + VariableLengthInteger.GetEncodedLength(streamId) +
        (offset != 0 ? VariableLengthInteger.GetEncodedLength(offset) : 0) +
        (hasLength ? VariableLengthInteger.GetEncodedLength((ulong)dataLength) : 0);

    /// <summary>Writes the frame up to its data, for a sender that copies the data straight from its send buffer.</summary>
    public static bool TryWriteHeader(ref QuicWriter writer, ulong streamId, ulong offset, int dataLength, bool fin, bool hasLength)
    {
        if (dataLength < 0 || streamId > VariableLengthInteger.MaxValue || offset > VariableLengthInteger.MaxValue - (ulong)dataLength ||
            GetHeaderLength(streamId, offset, dataLength, hasLength) > writer.Remaining)
        {
            return false;
        }

        int type = (int)FrameType.Stream | (offset != 0 ? OffsetBit : 0) | (hasLength ? LengthBit : 0) | (fin ? FinBit : 0);
        writer.TryWriteByte((byte)type);
        writer.TryWriteVarInt(streamId);
        if (offset != 0)
        {
            writer.TryWriteVarInt(offset);
        }

        if (hasLength)
        {
            writer.TryWriteVarInt((ulong)dataLength);
        }

        return true;
    }

    /// <summary>The most data bytes a STREAM frame can carry in <paramref name="available"/> bytes, or -1 when not even
    /// the header fits.</summary>
    public static int GetMaxDataLength(int available, ulong streamId, ulong offset, bool hasLength)
    {
        int fixedPart = 1 + VariableLengthInteger.GetEncodedLength(streamId) + (offset != 0 ? VariableLengthInteger.GetEncodedLength(offset) : 0);
        return FitData(available - fixedPart, hasLength);
    }

    /// <summary>Largest n with n + (hasLength ? varint length of n : 0) &lt;= <paramref name="space"/>, or -1.</summary>
    internal static int FitData(int space, bool hasLength)
    {
        if (!hasLength)
        {
            return space >= 0 ? space : -1;
        }

        int best = -1;
        for (int fieldLength = 1; fieldLength <= 4; fieldLength *= 2)
        {
            long n = Math.Min(space - fieldLength, (long)VariableLengthInteger.GetMaxValueForLength(fieldLength));
            if (n > best)
            {
                best = (int)n;
            }
        }

        return best;
    }
}
