namespace QuicManaged.Http.Framing;

/// <summary>HTTP/3 frame types, RFC 9114 §7.2 and §11.2.1.</summary>
internal static class Http3FrameType
{
    public const long Data = 0x00;
    public const long Headers = 0x01;
    public const long CancelPush = 0x03;
    public const long Settings = 0x04;
    public const long PushPromise = 0x05;
    public const long Goaway = 0x07;
    public const long MaxPushId = 0x0d;

    /// <summary>RFC 9114 §7.2.8: HTTP/2 frame types with no HTTP/3 meaning; receiving one is H3_FRAME_UNEXPECTED.</summary>
    public static bool IsReservedHttp2Type(long type) => type is 0x02 or 0x06 or 0x08 or 0x09;

    /// <summary>
    /// RFC 9114 §7.2: throws the connection error for a frame that never belongs on a request stream once the headers
    /// are expected or read (PUSH_PROMISE without MAX_PUSH_ID, §7.2.5; control-stream frames; reserved HTTP/2 types,
    /// §7.2.8). Returns for the types a request stream may carry that the caller does not handle (unknown types, which
    /// §9 says to skip).
    /// </summary>
    public static void RejectOnRequestStream(long type)
    {
        switch (type)
        {
            case PushPromise:
                // No MAX_PUSH_ID was ever sent, so every push id exceeds the maximum.
                throw new Http3ProtocolException(Http3ErrorCode.IdError, "PUSH_PROMISE without MAX_PUSH_ID");
            case Settings:
            case Goaway:
            case MaxPushId:
            case CancelPush:
                throw new Http3ProtocolException(Http3ErrorCode.FrameUnexpected, $"control frame 0x{type:x} on a request stream");
            default:
                if (IsReservedHttp2Type(type))
                {
                    throw new Http3ProtocolException(Http3ErrorCode.FrameUnexpected, $"reserved HTTP/2 frame type 0x{type:x}");
                }
                break;
        }
    }

    /// <summary>RFC 9114 §7.2.8: greasing types 0x1f * N + 0x21.</summary>
    public static bool IsGrease(long type) => type >= 0x21 && (type - 0x21) % 0x1f == 0;
}
