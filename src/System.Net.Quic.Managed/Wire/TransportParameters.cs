namespace System.Net.Quic.Managed.Wire;

/// <summary>QUIC transport parameters as carried in the quic_transport_parameters TLS extension. RFC 9000 §18, plus
/// max_datagram_frame_size (RFC 9221 §3) and grease_quic_bit (RFC 9287 §3). Property defaults are the RFC defaults
/// that apply when a parameter is absent; encoding omits parameters that equal their default.</summary>
internal sealed class TransportParameters
{
    public const ulong DefaultMaxUdpPayloadSize = 65527;
    public const ulong MinMaxUdpPayloadSize = 1200;
    public const ulong DefaultAckDelayExponent = 3;
    public const ulong MaxAckDelayExponent = 20;
    public const ulong DefaultMaxAckDelayMs = 25;

    /// <summary>max_ack_delay values of 2^14 or more are invalid. RFC 9000 §18.2.</summary>
    public const ulong MaxAckDelayLimitMs = 1UL << 14;

    public const ulong DefaultActiveConnectionIdLimit = 2;
    public const ulong MaxStreamCount = 1UL << 60;

    /// <summary>Server only: the Destination Connection ID of the client's first Initial.</summary>
    public byte[]? OriginalDestinationConnectionId { get; set; }

    /// <summary>Milliseconds; 0 means no idle timeout.</summary>
    public ulong MaxIdleTimeoutMs { get; set; }

    /// <summary>Server only: 16 bytes.</summary>
    public byte[]? StatelessResetToken { get; set; }

    public ulong MaxUdpPayloadSize { get; set; } = DefaultMaxUdpPayloadSize;

    public ulong InitialMaxData { get; set; }

    public ulong InitialMaxStreamDataBidiLocal { get; set; }

    public ulong InitialMaxStreamDataBidiRemote { get; set; }

    public ulong InitialMaxStreamDataUni { get; set; }

    public ulong InitialMaxStreamsBidi { get; set; }

    public ulong InitialMaxStreamsUni { get; set; }

    public ulong AckDelayExponent { get; set; } = DefaultAckDelayExponent;

    public ulong MaxAckDelayMs { get; set; } = DefaultMaxAckDelayMs;

    public bool DisableActiveMigration { get; set; }

    /// <summary>Server only.</summary>
    public PreferredAddress? PreferredAddress { get; set; }

    public ulong ActiveConnectionIdLimit { get; set; } = DefaultActiveConnectionIdLimit;

    /// <summary>The Source Connection ID of the sender's first Initial (may be empty). RFC 9000 §7.3.</summary>
    public byte[]? InitialSourceConnectionId { get; set; }

    /// <summary>Server only, after a Retry.</summary>
    public byte[]? RetrySourceConnectionId { get; set; }

    /// <summary>Null when absent: the peer does not accept DATAGRAM frames. RFC 9221 §3.</summary>
    public ulong? MaxDatagramFrameSize { get; set; }

    /// <summary>The sender accepts packets with a cleared Fixed Bit. RFC 9287 §3.</summary>
    public bool GreaseQuicBit { get; set; }

    /// <summary>
    /// version_information (RFC 9368 §3): the version the sender chose (that of the packets carrying this parameter
    /// for a server, of its first Initial for a client) and the versions it supports. Null when absent.
    /// </summary>
    public uint ChosenVersion { get; set; }

    /// <summary>The Available Versions of version_information; null when the parameter is absent.</summary>
    public uint[]? AvailableVersions { get; set; }

    /// <summary>Size of <see cref="TryEncode"/>'s output, or -1 when a value cannot be encoded.</summary>
    public int GetEncodedLength()
    {
        Span<byte> scratch = stackalloc byte[0];
        var counter = new QuicWriter(scratch);
        return EncodeOrMeasure(ref counter, measureOnly: true);
    }

    /// <summary>Encodes all parameters that differ from their defaults.</summary>
    public bool TryEncode(Span<byte> destination, out int bytesWritten)
    {
        var writer = new QuicWriter(destination);
        int length = EncodeOrMeasure(ref writer, measureOnly: false);
        bytesWritten = length < 0 ? 0 : length;
        return length >= 0;
    }

    /// <summary>Encodes into a new array (once per connection). Null when a value cannot be encoded.</summary>
    public byte[]? Encode()
    {
        int length = GetEncodedLength();
        if (length < 0)
        {
            return null;
        }

        byte[] buffer = new byte[length];
        return TryEncode(buffer, out _) ? buffer : null;
    }

    /// <summary>Decodes and validates a peer's parameters. RFC 9000 §7.4 and §18.2: duplicates, out-of-range values,
    /// a value whose length disagrees with its content, and server-only parameters from a client are all
    /// TRANSPORT_PARAMETER_ERROR. Unknown and reserved (31 * N + 27) identifiers are skipped (§18.1).</summary>
    /// <param name="encoded">The extension body.</param>
    /// <param name="sentByServer">True when the peer is the server.</param>
    /// <param name="parameters">The decoded parameters, or null on error.</param>
    /// <param name="reason">A constant description of the problem, or null.</param>
    public static TransportErrorCode TryDecode(ReadOnlySpan<byte> encoded, bool sentByServer, out TransportParameters? parameters, out string? reason)
    {
        parameters = null;
        var result = new TransportParameters();
        var reader = new QuicReader(encoded);
        uint seen = 0;
        while (!reader.IsEmpty)
        {
            if (!reader.TryReadVarInt(out ulong rawId) || !reader.TryReadLengthPrefixed(out ReadOnlySpan<byte> value))
            {
                reason = "truncated transport parameter";
                return TransportErrorCode.TransportParameterError;
            }

            int bit = GetKnownBit((TransportParameterId)rawId);
            if (bit < 0)
            {
                continue;
            }

            if ((seen & (1u << bit)) != 0)
            {
                reason = "duplicate transport parameter";
                return TransportErrorCode.TransportParameterError;
            }

            seen |= 1u << bit;
            reason = result.DecodeOne((TransportParameterId)rawId, value, sentByServer);
            if (reason != null)
            {
                return TransportErrorCode.TransportParameterError;
            }
        }

        reason = null;
        parameters = result;
        return TransportErrorCode.NoError;
    }

    /// <summary>True for the reserved identifiers 31 * N + 27 used to exercise unknown-parameter handling. RFC 9000 §18.1.</summary>
    public static bool IsReservedId(ulong id) => id >= 27 && (id - 27) % 31 == 0;

    private static int GetKnownBit(TransportParameterId id) => id switch
    {
        <= TransportParameterId.RetrySourceConnectionId => (int)id,
        TransportParameterId.MaxDatagramFrameSize => 17,
        TransportParameterId.GreaseQuicBit => 18,
        TransportParameterId.VersionInformation => 19,
        _ => -1,
    };

    private static bool IsServerOnly(TransportParameterId id) => id is TransportParameterId.OriginalDestinationConnectionId
        or TransportParameterId.PreferredAddress or TransportParameterId.RetrySourceConnectionId or TransportParameterId.StatelessResetToken;

    private string? DecodeOne(TransportParameterId id, ReadOnlySpan<byte> value, bool sentByServer)
    {
        if (!sentByServer && IsServerOnly(id))
        {
            return "server-only transport parameter sent by a client";
        }

        switch (id)
        {
            case TransportParameterId.OriginalDestinationConnectionId:
                OriginalDestinationConnectionId = CopyConnectionId(value);
                return OriginalDestinationConnectionId == null ? "connection ID too long" : null;
            case TransportParameterId.InitialSourceConnectionId:
                InitialSourceConnectionId = CopyConnectionId(value);
                return InitialSourceConnectionId == null ? "connection ID too long" : null;
            case TransportParameterId.RetrySourceConnectionId:
                RetrySourceConnectionId = CopyConnectionId(value);
                return RetrySourceConnectionId == null ? "connection ID too long" : null;
            case TransportParameterId.StatelessResetToken:
                if (value.Length != StatelessReset.TokenLength)
                {
                    return "stateless_reset_token must be 16 bytes";
                }

                StatelessResetToken = value.ToArray();
                return null;
            case TransportParameterId.DisableActiveMigration:
                DisableActiveMigration = true;
                return value.IsEmpty ? null : "disable_active_migration must be empty";
            case TransportParameterId.GreaseQuicBit:
                GreaseQuicBit = true;
                return value.IsEmpty ? null : "grease_quic_bit must be empty";
            case TransportParameterId.VersionInformation:
                return DecodeVersionInformation(value);
            case TransportParameterId.PreferredAddress:
                if (!PreferredAddress.TryDecode(value, out PreferredAddress? address))
                {
                    return "malformed preferred_address";
                }

                PreferredAddress = address;
                return null;
        }

        // The rest are single varints that must fill the value exactly.
        if (!VariableLengthInteger.TryRead(value, out ulong number, out int used) || used != value.Length)
        {
            return "integer transport parameter length mismatch";
        }

        switch (id)
        {
            case TransportParameterId.MaxIdleTimeout:
                MaxIdleTimeoutMs = number;
                return null;
            case TransportParameterId.MaxUdpPayloadSize:
                MaxUdpPayloadSize = number;
                return number < MinMaxUdpPayloadSize ? "max_udp_payload_size below 1200" : null;
            case TransportParameterId.InitialMaxData:
                InitialMaxData = number;
                return null;
            case TransportParameterId.InitialMaxStreamDataBidiLocal:
                InitialMaxStreamDataBidiLocal = number;
                return null;
            case TransportParameterId.InitialMaxStreamDataBidiRemote:
                InitialMaxStreamDataBidiRemote = number;
                return null;
            case TransportParameterId.InitialMaxStreamDataUni:
                InitialMaxStreamDataUni = number;
                return null;
            case TransportParameterId.InitialMaxStreamsBidi:
                InitialMaxStreamsBidi = number;
                return number > MaxStreamCount ? "initial_max_streams_bidi above 2^60" : null;
            case TransportParameterId.InitialMaxStreamsUni:
                InitialMaxStreamsUni = number;
                return number > MaxStreamCount ? "initial_max_streams_uni above 2^60" : null;
            case TransportParameterId.AckDelayExponent:
                AckDelayExponent = number;
                return number > MaxAckDelayExponent ? "ack_delay_exponent above 20" : null;
            case TransportParameterId.MaxAckDelay:
                MaxAckDelayMs = number;
                return number >= MaxAckDelayLimitMs ? "max_ack_delay of 2^14 or more" : null;
            case TransportParameterId.ActiveConnectionIdLimit:
                ActiveConnectionIdLimit = number;
                return number < 2 ? "active_connection_id_limit below 2" : null;
            case TransportParameterId.MaxDatagramFrameSize:
                MaxDatagramFrameSize = number;
                return null;
            default:
                return null;
        }
    }

    /// <summary>A copy of a connection ID value, or null when it exceeds 20 bytes (the copy is what bounds the allocation).</summary>
    private static byte[]? CopyConnectionId(ReadOnlySpan<byte> value) =>
        value.Length <= ConnectionIdLimits.MaxLength ? value.ToArray() : null;

    /// <summary>Writes (or, with <paramref name="measureOnly"/>, only counts) the encoding; returns its length or -1.</summary>
    private int EncodeOrMeasure(ref QuicWriter writer, bool measureOnly)
    {
        int length = 0;
        bool ok = true;

        void Bytes(ref QuicWriter w, TransportParameterId id, scoped ReadOnlySpan<byte> value)
        {
            int size = VariableLengthInteger.GetEncodedLength((ulong)id) + VariableLengthInteger.GetEncodedLength((ulong)value.Length) + value.Length;
            length += size;
            ok &= measureOnly || (w.TryWriteVarInt((ulong)id) && w.TryWriteLengthPrefixed(value));
        }

        void Number(ref QuicWriter w, TransportParameterId id, ulong value, ulong defaultValue)
        {
            if (value != defaultValue)
            {
                Always(ref w, id, value);
            }
        }

        void Always(ref QuicWriter w, TransportParameterId id, ulong value)
        {
            int valueLength = VariableLengthInteger.GetEncodedLength(value);
            ok &= valueLength != 0;
            length += VariableLengthInteger.GetEncodedLength((ulong)id) + 1 + valueLength;
            ok &= measureOnly || (w.TryWriteVarInt((ulong)id) && w.TryWriteVarInt((ulong)valueLength) && w.TryWriteVarInt(value));
        }

        if (OriginalDestinationConnectionId != null)
        {
            Bytes(ref writer, TransportParameterId.OriginalDestinationConnectionId, OriginalDestinationConnectionId);
        }

        Number(ref writer, TransportParameterId.MaxIdleTimeout, MaxIdleTimeoutMs, 0);
        if (StatelessResetToken != null)
        {
            ok &= StatelessResetToken.Length == StatelessReset.TokenLength;
            Bytes(ref writer, TransportParameterId.StatelessResetToken, StatelessResetToken);
        }

        Number(ref writer, TransportParameterId.MaxUdpPayloadSize, MaxUdpPayloadSize, DefaultMaxUdpPayloadSize);
        Number(ref writer, TransportParameterId.InitialMaxData, InitialMaxData, 0);
        Number(ref writer, TransportParameterId.InitialMaxStreamDataBidiLocal, InitialMaxStreamDataBidiLocal, 0);
        Number(ref writer, TransportParameterId.InitialMaxStreamDataBidiRemote, InitialMaxStreamDataBidiRemote, 0);
        Number(ref writer, TransportParameterId.InitialMaxStreamDataUni, InitialMaxStreamDataUni, 0);
        Number(ref writer, TransportParameterId.InitialMaxStreamsBidi, InitialMaxStreamsBidi, 0);
        Number(ref writer, TransportParameterId.InitialMaxStreamsUni, InitialMaxStreamsUni, 0);
        Number(ref writer, TransportParameterId.AckDelayExponent, AckDelayExponent, DefaultAckDelayExponent);
        Number(ref writer, TransportParameterId.MaxAckDelay, MaxAckDelayMs, DefaultMaxAckDelayMs);
        if (DisableActiveMigration)
        {
            Bytes(ref writer, TransportParameterId.DisableActiveMigration, default);
        }

        if (PreferredAddress != null)
        {
            int valueLength = PreferredAddress.EncodedLength;
            length += VariableLengthInteger.GetEncodedLength((ulong)TransportParameterId.PreferredAddress) +
                VariableLengthInteger.GetEncodedLength((ulong)valueLength) + valueLength;
            ok &= PreferredAddress.IsValid && (measureOnly ||
                (writer.TryWriteVarInt((ulong)TransportParameterId.PreferredAddress) && writer.TryWriteVarInt((ulong)valueLength) &&
                 PreferredAddress.TryEncode(ref writer)));
        }

        Number(ref writer, TransportParameterId.ActiveConnectionIdLimit, ActiveConnectionIdLimit, DefaultActiveConnectionIdLimit);
        if (InitialSourceConnectionId != null)
        {
            Bytes(ref writer, TransportParameterId.InitialSourceConnectionId, InitialSourceConnectionId);
        }

        if (RetrySourceConnectionId != null)
        {
            Bytes(ref writer, TransportParameterId.RetrySourceConnectionId, RetrySourceConnectionId);
        }

        if (MaxDatagramFrameSize is ulong maxDatagram)
        {
            // Sent whenever set, even as 0: absence is what says "no DATAGRAM support" (RFC 9221 §3).
            Always(ref writer, TransportParameterId.MaxDatagramFrameSize, maxDatagram);
        }

        if (GreaseQuicBit)
        {
            Bytes(ref writer, TransportParameterId.GreaseQuicBit, default);
        }

        if (AvailableVersions is { } available)
        {
            Span<byte> versions = stackalloc byte[4 * (1 + Math.Min(available.Length, 64))];
            System.Buffers.Binary.BinaryPrimitives.WriteUInt32BigEndian(versions, ChosenVersion);
            for (int i = 0; i < available.Length && i < 64; i++)
            {
                System.Buffers.Binary.BinaryPrimitives.WriteUInt32BigEndian(versions.Slice(4 + 4 * i), available[i]);
            }

            ok &= ChosenVersion != 0 && available.Length <= 64;
            Bytes(ref writer, TransportParameterId.VersionInformation, versions);
        }

        return ok ? length : -1;
    }

    /// <summary>RFC 9368 §3: a non-zero Chosen Version, then zero or more non-zero Available Versions, 4 bytes each.</summary>
    private string? DecodeVersionInformation(ReadOnlySpan<byte> value)
    {
        if (value.Length < 4 || value.Length % 4 != 0)
        {
            return "version_information length is not a positive multiple of 4";
        }

        ChosenVersion = System.Buffers.Binary.BinaryPrimitives.ReadUInt32BigEndian(value);
        if (ChosenVersion == 0)
        {
            return "version_information Chosen Version is 0";
        }

        var available = new uint[(value.Length / 4) - 1];
        for (int i = 0; i < available.Length; i++)
        {
            available[i] = System.Buffers.Binary.BinaryPrimitives.ReadUInt32BigEndian(value.Slice(4 + (4 * i)));
            if (available[i] == 0)
            {
                return "version_information Available Versions contains 0";
            }
        }

        AvailableVersions = available;
        return null;
    }
}
