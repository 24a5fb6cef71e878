namespace QuicManaged.Http.Framing;

/// <summary>Unidirectional stream types, RFC 9114 §6.2 and RFC 9204 §4.2.</summary>
internal static class Http3StreamType
{
    public const long Control = 0x00;
    public const long Push = 0x01;
    public const long QpackEncoder = 0x02;
    public const long QpackDecoder = 0x03;
}
