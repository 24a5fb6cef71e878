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

    /// <summary>RFC 9114 §7.2.8: greasing types 0x1f * N + 0x21.</summary>
    public static bool IsGrease(long type) => type >= 0x21 && (type - 0x21) % 0x1f == 0;
}
