using System;

namespace QuicManaged.AspNetCore;

/// <summary>
/// Options of the QuicManaged Kestrel transport (the counterpart of Kestrel's <c>QuicTransportOptions</c>). Certificates
/// and ALPN are not here: they come from Kestrel's <c>ListenOptions</c> (<c>UseHttps</c>) like with Kestrel's own QUIC transport.
/// </summary>
public sealed class QuicManagedTransportOptions
{
    /// <summary>How many bidirectional (request) streams a client may have open at once. Default 100, as Kestrel's.</summary>
    public int MaxBidirectionalStreamCount { get; set; } = 100;

    /// <summary>How many unidirectional streams a client may have open at once. Default 10, as Kestrel's.</summary>
    public int MaxUnidirectionalStreamCount { get; set; } = 10;

    /// <summary>How many handshakes may wait for <c>AcceptAsync</c>. Default 512, as Kestrel's.</summary>
    public int Backlog { get; set; } = 512;

    /// <summary>Bytes read from a stream and not yet consumed by Kestrel before reading pauses (null: unbounded). Default 1 MiB.</summary>
    public long? MaxReadBufferSize { get; set; } = 1024 * 1024;

    /// <summary>Bytes written by Kestrel and not yet handed to QUIC before writes pause (null: unbounded). Default 64 KiB.</summary>
    public long? MaxWriteBufferSize { get; set; } = 64 * 1024;

    /// <summary>Error code of a stream aborted without an explicit code. Default H3_REQUEST_CANCELLED (0x10c), as Kestrel sets it.</summary>
    public long DefaultStreamErrorCode { get; set; } = 0x10c;

    /// <summary>Error code of a connection closed without an explicit code. Default H3_NO_ERROR (0x100), as Kestrel sets it.</summary>
    public long DefaultCloseErrorCode { get; set; } = 0x100;

    /// <summary>Idle timeout of a connection. Default infinite: Kestrel manages connection lifetimes itself (it sends GOAWAY).</summary>
    public TimeSpan IdleTimeout { get; set; } = System.Threading.Timeout.InfiniteTimeSpan;
}
