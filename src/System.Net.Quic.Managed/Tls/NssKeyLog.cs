namespace System.Net.Quic.Managed.Tls;

/// <summary>
/// The NSS key log format (the SSLKEYLOGFILE convention Wireshark, tshark and our DatagramDumper read): one line per
/// secret, "LABEL client_random_hex secret_hex". QUIC uses the TLS 1.3 labels (RFC 9001 keys are derived from them).
/// </summary>
internal static class NssKeyLog
{
    public static string Label(EncryptionLevel level, bool clientSecret) => (level, clientSecret) switch
    {
        (EncryptionLevel.EarlyData, _) => "CLIENT_EARLY_TRAFFIC_SECRET",
        (EncryptionLevel.Handshake, true) => "CLIENT_HANDSHAKE_TRAFFIC_SECRET",
        (EncryptionLevel.Handshake, false) => "SERVER_HANDSHAKE_TRAFFIC_SECRET",
        (_, true) => "CLIENT_TRAFFIC_SECRET_0",
        (_, false) => "SERVER_TRAFFIC_SECRET_0",
    };

    public static string FormatLine(TlsTrafficSecret secret, ReadOnlySpan<byte> clientRandom)
        => $"{Label(secret.Level, secret.IsClientSecret)} {Convert.ToHexStringLower(clientRandom)} {Convert.ToHexStringLower(secret.Secret)}";
}
