namespace QuicManaged.Tools.DatagramDumper;

/// <summary>Encryption levels. RFC 9001 §4.1.4.</summary>
internal enum KeyLevel
{
    Initial = 0,
    ZeroRtt = 1,
    Handshake = 2,
    OneRtt = 3,
}
