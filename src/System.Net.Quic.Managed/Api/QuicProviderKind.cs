namespace System.Net.Quic.Managed;

/// <summary>Which transport the public types run on.</summary>
internal enum QuicProviderKind
{
    /// <summary>This library's managed QUIC and TLS 1.3.</summary>
    Managed,

    /// <summary>The platform's System.Net.Quic (libmsquic), behind the same public types.</summary>
    MsQuic,
}
