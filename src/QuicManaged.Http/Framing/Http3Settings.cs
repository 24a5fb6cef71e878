namespace QuicManaged.Http.Framing;

/// <summary>The SETTINGS this endpoint sends and the ones it understands from the peer (RFC 9114 §7.2.4, RFC 9204 §5).</summary>
internal sealed class Http3Settings
{
    /// <summary>RFC 9114 §7.2.4.1: absent means unlimited; represented as long.MaxValue.</summary>
    public long MaxFieldSectionSize { get; set; } = long.MaxValue;

    public long QpackMaxTableCapacity { get; set; }

    public long QpackBlockedStreams { get; set; }

    /// <summary>The SETTINGS frame (header included) advertising a 0-capacity QPACK decoder and the field-section limit.</summary>
    public byte[] EncodeFrame()
    {
        Span<byte> payload = stackalloc byte[64];
        int offset = 0;
        offset += VariableLengthInteger.Write(payload.Slice(offset), Http3SettingId.QpackMaxTableCapacity);
        offset += VariableLengthInteger.Write(payload.Slice(offset), QpackMaxTableCapacity);
        offset += VariableLengthInteger.Write(payload.Slice(offset), Http3SettingId.QpackBlockedStreams);
        offset += VariableLengthInteger.Write(payload.Slice(offset), QpackBlockedStreams);
        if (MaxFieldSectionSize != long.MaxValue)
        {
            offset += VariableLengthInteger.Write(payload.Slice(offset), Http3SettingId.MaxFieldSectionSize);
            offset += VariableLengthInteger.Write(payload.Slice(offset), MaxFieldSectionSize);
        }

        return Http3FrameCodec.EncodeFrame(Http3FrameType.Settings, payload.Slice(0, offset));
    }

    /// <summary>
    /// Parses a SETTINGS payload. Truncation is H3_FRAME_ERROR; a repeated identifier or an HTTP/2 setting is
    /// H3_SETTINGS_ERROR (RFC 9114 §7.2.4). Unknown identifiers are ignored (§7.2.4.1, §9).
    /// </summary>
    public static Http3ErrorCode TryParse(ReadOnlySpan<byte> payload, out Http3Settings settings)
    {
        settings = new Http3Settings();
        HashSet<long>? seenUnknown = null;
        int seenKnown = 0;
        while (!payload.IsEmpty)
        {
            if (!VariableLengthInteger.TryRead(payload, out long id, out int a)
                || !VariableLengthInteger.TryRead(payload.Slice(a), out long value, out int b))
            {
                return Http3ErrorCode.FrameError;
            }

            payload = payload.Slice(a + b);
            if (Http3SettingId.IsReservedHttp2Setting(id))
            {
                return Http3ErrorCode.SettingsError;
            }

            int knownBit = id switch
            {
                Http3SettingId.QpackMaxTableCapacity => 1,
                Http3SettingId.MaxFieldSectionSize => 2,
                Http3SettingId.QpackBlockedStreams => 4,
                _ => 0,
            };
            if (knownBit != 0)
            {
                if ((seenKnown & knownBit) != 0)
                {
                    return Http3ErrorCode.SettingsError;
                }

                seenKnown |= knownBit;
            }
            else
            {
                // Bounded by the payload size, which the frame reader caps before calling here.
                seenUnknown ??= new HashSet<long>();
                if (!seenUnknown.Add(id))
                {
                    return Http3ErrorCode.SettingsError;
                }
            }

            switch (id)
            {
                case Http3SettingId.QpackMaxTableCapacity:
                    settings.QpackMaxTableCapacity = value;
                    break;
                case Http3SettingId.MaxFieldSectionSize:
                    settings.MaxFieldSectionSize = value;
                    break;
                case Http3SettingId.QpackBlockedStreams:
                    settings.QpackBlockedStreams = value;
                    break;
            }
        }

        return Http3ErrorCode.NoError;
    }
}
