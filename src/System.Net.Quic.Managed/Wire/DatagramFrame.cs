namespace System.Net.Quic.Managed.Wire;

/// <summary>DATAGRAM: 0x30 runs to the end of the packet, 0x31 has a Length field. RFC 9221 §4.</summary>
internal readonly ref struct DatagramFrame
{
    public DatagramFrame(ReadOnlySpan<byte> data, bool hasLength = true)
    {
        Data = data;
        HasLength = hasLength;
    }

    public ReadOnlySpan<byte> Data { get; }

    public bool HasLength { get; }

    public static TransportErrorCode TryRead(ref QuicReader reader, FrameType type, out DatagramFrame frame)
    {
        frame = default;
        bool hasLength = type == FrameType.DatagramWithLength;
        ReadOnlySpan<byte> data;
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

        frame = new DatagramFrame(data, hasLength);
        return TransportErrorCode.NoError;
    }

    public int EncodedLength => GetEncodedLength(Data.Length, HasLength);

    /// <summary>Size on the wire of a DATAGRAM frame with <paramref name="dataLength"/> bytes: what is compared with the
    /// peer's max_datagram_frame_size (RFC 9221 §3).</summary>
    public static int GetEncodedLength(int dataLength, bool hasLength) =>
        1 + (hasLength ? VariableLengthInteger.GetEncodedLength((ulong)dataLength) : 0) + dataLength;

    public bool TryWrite(ref QuicWriter writer)
    {
        QuicWriter w = writer;
        if (!w.TryWriteByte((byte)(HasLength ? FrameType.DatagramWithLength : FrameType.Datagram)) ||
            (HasLength ? !w.TryWriteLengthPrefixed(Data) : !w.TryWriteBytes(Data)))
        {
            return false;
        }

        writer = w;
        return true;
    }
}
