namespace QuicManaged.Tools.QuicPerf.Transport;

/// <summary>Which stack carries the transfer.</summary>
public enum PerfTransportKind
{
    /// <summary>This repository's managed QUIC (System.Net.Quic.Managed).</summary>
    Managed,

    /// <summary>System.Net.Quic over libmsquic, called directly (bypassing this library's provider switch).</summary>
    MsQuic,

    /// <summary>SslStream (TLS 1.3) over a TCP loopback socket: the baseline.</summary>
    TcpTls,

    /// <summary>
    /// This repository's public API on its msquic provider (<c>QuicProvider.MsQuic</c>, the same switch
    /// DOTNET_SYSTEM_NET_QUIC_PROVIDER=msquic selects): what an application of this library gets with msquic.
    /// </summary>
    LibraryMsQuic,
}
