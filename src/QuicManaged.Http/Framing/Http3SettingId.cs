namespace QuicManaged.Http.Framing;

/// <summary>SETTINGS identifiers, RFC 9114 §7.2.4.1 and RFC 9204 §5.</summary>
internal static class Http3SettingId
{
    public const long QpackMaxTableCapacity = 0x01;
    public const long MaxFieldSectionSize = 0x06;
    public const long QpackBlockedStreams = 0x07;

    /// <summary>RFC 9114 §7.2.4.1: HTTP/2 setting identifiers that are an H3_SETTINGS_ERROR when received.</summary>
    public static bool IsReservedHttp2Setting(long id) => id is 0x00 or 0x02 or 0x03 or 0x04 or 0x05;
}
