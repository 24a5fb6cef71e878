namespace QuicManaged.Tools.DatagramDumper;

/// <summary>Embedded sample datagrams: the protected packets of RFC 9001 Appendix A.2 (client Initial, padded to 1200
/// bytes) and A.3 (server Initial), from <see cref="Rfc9001Vectors"/>.</summary>
internal static class SampleDatagrams
{
    /// <summary>The client's original Destination Connection ID in RFC 9001 Appendix A; the server Initial needs it.</summary>
    public const string Rfc9001OriginalDcid = Rfc9001Vectors.ClientDcid;

    /// <summary>RFC 9001 Appendix A.2: the client's first Initial, padded to 1,200 bytes.</summary>
    public const string Rfc9001ClientInitial = Rfc9001Vectors.V1ClientProtected;

    /// <summary>RFC 9001 Appendix A.3: the server's Initial.</summary>
    public const string Rfc9001ServerInitial = Rfc9001Vectors.V1ServerProtected;

    public static IReadOnlyList<string> Names { get; } = ["rfc9001-client-initial", "rfc9001-server-initial"];

    /// <summary>The sample's datagram hex and the original DCID its Initial keys derive from, or false for an unknown name.</summary>
    public static bool TryGet(string name, out string hex, out string originalDcid)
    {
        originalDcid = Rfc9001OriginalDcid;
        switch (name)
        {
            case "rfc9001-client-initial": hex = Rfc9001ClientInitial; return true;
            case "rfc9001-server-initial": hex = Rfc9001ServerInitial; return true;
            default: hex = ""; return false;
        }
    }
}
