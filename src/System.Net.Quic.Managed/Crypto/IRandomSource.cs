namespace System.Net.Quic.Managed.Crypto;

/// <summary>
/// The seam through which the core and the TLS engine get randomness (connection IDs, client random,
/// key shares, signature nonces, packet-number skips), so a simulation can replay a run exactly.
/// </summary>
internal interface IRandomSource
{
    /// <summary>Fills <paramref name="destination"/> with random bytes.</summary>
    void Fill(Span<byte> destination);
}
