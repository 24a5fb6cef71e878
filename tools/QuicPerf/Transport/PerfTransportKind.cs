namespace QuicManaged.Tools.QuicPerf.Transport;

/// <summary>Which stack carries the transfer.</summary>
public enum PerfTransportKind
{
    /// <summary>This repository's managed QUIC (System.Net.Quic.Managed).</summary>
    Managed,

    /// <summary>System.Net.Quic over libmsquic.</summary>
    MsQuic,

    /// <summary>SslStream (TLS 1.3) over a TCP loopback socket: the baseline.</summary>
    TcpTls,
}
