namespace System.Net.Quic.Managed;

/// <summary>The one place that says the managed transport is not wired to the public API yet (see issue 5).</summary>
internal static class TransportNotReady
{
    public static PlatformNotSupportedException Exception()
        => new("The managed QUIC transport is not connected to the public API yet; QuicConnection.IsSupported is false.");
}
