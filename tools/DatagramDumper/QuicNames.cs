using System.Net.Quic.Managed.Wire;

namespace QuicManaged.Tools.DatagramDumper;

/// <summary>RFC spellings of QUIC codes for the packet log.</summary>
internal static class QuicNames
{
    /// <summary>RFC 9000 §20.1; 0x0100-0x01ff is CRYPTO_ERROR carrying a TLS alert (RFC 9001 §4.8).</summary>
    public static string TransportError(ulong code)
    {
        if (code >= (ulong)TransportErrorCode.CryptoError && code <= 0x1ff)
        {
            byte alert = (byte)(code - (ulong)TransportErrorCode.CryptoError);
            return $"CRYPTO_ERROR (TLS alert {alert} {TlsNames.Alert(alert)})";
        }

        return (TransportErrorCode)code switch
        {
            TransportErrorCode.NoError => "NO_ERROR",
            TransportErrorCode.InternalError => "INTERNAL_ERROR",
            TransportErrorCode.ConnectionRefused => "CONNECTION_REFUSED",
            TransportErrorCode.FlowControlError => "FLOW_CONTROL_ERROR",
            TransportErrorCode.StreamLimitError => "STREAM_LIMIT_ERROR",
            TransportErrorCode.StreamStateError => "STREAM_STATE_ERROR",
            TransportErrorCode.FinalSizeError => "FINAL_SIZE_ERROR",
            TransportErrorCode.FrameEncodingError => "FRAME_ENCODING_ERROR",
            TransportErrorCode.TransportParameterError => "TRANSPORT_PARAMETER_ERROR",
            TransportErrorCode.ConnectionIdLimitError => "CONNECTION_ID_LIMIT_ERROR",
            TransportErrorCode.ProtocolViolation => "PROTOCOL_VIOLATION",
            TransportErrorCode.InvalidToken => "INVALID_TOKEN",
            TransportErrorCode.ApplicationError => "APPLICATION_ERROR",
            TransportErrorCode.CryptoBufferExceeded => "CRYPTO_BUFFER_EXCEEDED",
            TransportErrorCode.KeyUpdateError => "KEY_UPDATE_ERROR",
            TransportErrorCode.AeadLimitReached => "AEAD_LIMIT_REACHED",
            TransportErrorCode.NoViablePath => "NO_VIABLE_PATH",
            _ => "unknown",
        };
    }

    /// <summary>Frame type names of RFC 9000 §19 / RFC 9221 §4 in upper case, as the RFC writes them.</summary>
    public static string Frame(FrameType type)
    {
        if (FrameTypes.IsStream(type)) return "STREAM";
        return type switch
        {
            FrameType.Padding => "PADDING",
            FrameType.Ping => "PING",
            FrameType.Ack => "ACK",
            FrameType.AckEcn => "ACK_ECN",
            FrameType.ResetStream => "RESET_STREAM",
            FrameType.StopSending => "STOP_SENDING",
            FrameType.Crypto => "CRYPTO",
            FrameType.NewToken => "NEW_TOKEN",
            FrameType.MaxData => "MAX_DATA",
            FrameType.MaxStreamData => "MAX_STREAM_DATA",
            FrameType.MaxStreamsBidirectional => "MAX_STREAMS_BIDI",
            FrameType.MaxStreamsUnidirectional => "MAX_STREAMS_UNI",
            FrameType.DataBlocked => "DATA_BLOCKED",
            FrameType.StreamDataBlocked => "STREAM_DATA_BLOCKED",
            FrameType.StreamsBlockedBidirectional => "STREAMS_BLOCKED_BIDI",
            FrameType.StreamsBlockedUnidirectional => "STREAMS_BLOCKED_UNI",
            FrameType.NewConnectionId => "NEW_CONNECTION_ID",
            FrameType.RetireConnectionId => "RETIRE_CONNECTION_ID",
            FrameType.PathChallenge => "PATH_CHALLENGE",
            FrameType.PathResponse => "PATH_RESPONSE",
            FrameType.ConnectionClose => "CONNECTION_CLOSE",
            FrameType.ConnectionCloseApplication => "CONNECTION_CLOSE_APP",
            FrameType.HandshakeDone => "HANDSHAKE_DONE",
            FrameType.Datagram or FrameType.DatagramWithLength => "DATAGRAM",
            _ => "UNKNOWN",
        };
    }

    /// <summary>The --frame filter name of a frame type's family: lower case, variants folded (ack covers ACK_ECN,
    /// stream covers 0x08-0x0f, connection_close covers both codes, ...).</summary>
    public static string FrameFilterName(FrameType type)
    {
        if (FrameTypes.IsStream(type)) return "stream";
        return type switch
        {
            FrameType.AckEcn => "ack",
            FrameType.MaxStreamsBidirectional or FrameType.MaxStreamsUnidirectional => "max_streams",
            FrameType.StreamsBlockedBidirectional or FrameType.StreamsBlockedUnidirectional => "streams_blocked",
            FrameType.ConnectionCloseApplication => "connection_close",
            _ => Frame(type).ToLowerInvariant(),
        };
    }

    /// <summary>Every accepted --frame value.</summary>
    public static IReadOnlyList<string> FrameFilterNames { get; } =
    [
        "padding", "ping", "ack", "reset_stream", "stop_sending", "crypto", "new_token", "stream", "max_data",
        "max_stream_data", "max_streams", "data_blocked", "stream_data_blocked", "streams_blocked", "new_connection_id",
        "retire_connection_id", "path_challenge", "path_response", "connection_close", "handshake_done", "datagram",
    ];

    /// <summary>RFC 9000 §18.2 and later registrations.</summary>
    public static string TransportParameter(ulong id) => id switch
    {
        (ulong)TransportParameterId.OriginalDestinationConnectionId => "original_destination_connection_id",
        (ulong)TransportParameterId.MaxIdleTimeout => "max_idle_timeout",
        (ulong)TransportParameterId.StatelessResetToken => "stateless_reset_token",
        (ulong)TransportParameterId.MaxUdpPayloadSize => "max_udp_payload_size",
        (ulong)TransportParameterId.InitialMaxData => "initial_max_data",
        (ulong)TransportParameterId.InitialMaxStreamDataBidiLocal => "initial_max_stream_data_bidi_local",
        (ulong)TransportParameterId.InitialMaxStreamDataBidiRemote => "initial_max_stream_data_bidi_remote",
        (ulong)TransportParameterId.InitialMaxStreamDataUni => "initial_max_stream_data_uni",
        (ulong)TransportParameterId.InitialMaxStreamsBidi => "initial_max_streams_bidi",
        (ulong)TransportParameterId.InitialMaxStreamsUni => "initial_max_streams_uni",
        (ulong)TransportParameterId.AckDelayExponent => "ack_delay_exponent",
        (ulong)TransportParameterId.MaxAckDelay => "max_ack_delay",
        (ulong)TransportParameterId.DisableActiveMigration => "disable_active_migration",
        (ulong)TransportParameterId.PreferredAddress => "preferred_address",
        (ulong)TransportParameterId.ActiveConnectionIdLimit => "active_connection_id_limit",
        (ulong)TransportParameterId.InitialSourceConnectionId => "initial_source_connection_id",
        (ulong)TransportParameterId.RetrySourceConnectionId => "retry_source_connection_id",
        0x11 => "version_information",
        (ulong)TransportParameterId.MaxDatagramFrameSize => "max_datagram_frame_size",
        (ulong)TransportParameterId.GreaseQuicBit => "grease_quic_bit",
        0xff04de1b => "min_ack_delay",
        _ => TransportParameters.IsReservedId(id) ? "reserved (GREASE)" : "unknown",
    };

    /// <summary>Whether a transport parameter's value is a single varint. RFC 9000 §18.2.</summary>
    public static bool IsIntegerTransportParameter(ulong id) => id is
        (ulong)TransportParameterId.MaxIdleTimeout or (ulong)TransportParameterId.MaxUdpPayloadSize or
        (>= (ulong)TransportParameterId.InitialMaxData and <= (ulong)TransportParameterId.MaxAckDelay) or
        (ulong)TransportParameterId.ActiveConnectionIdLimit or (ulong)TransportParameterId.MaxDatagramFrameSize or 0xff04de1b;
}
