namespace System.Net.Quic.Managed.Streams;

/// <summary>Local stream and flow-control settings (the values we advertise in our transport parameters, RFC 9000 §18.2, plus memory bounds).</summary>
internal sealed class StreamTableOptions
{
    /// <summary>initial_max_data: our initial connection receive window.</summary>
    public long InitialMaxData { get; init; } = 1L << 20;

    /// <summary>Largest connection receive window auto-tuning may reach.</summary>
    public long MaxConnectionReceiveWindow { get; init; } = 24L << 20;

    /// <summary>initial_max_stream_data_bidi_local: our receive window on bidirectional streams we open.</summary>
    public long InitialMaxStreamDataBidiLocal { get; init; } = 256 * 1024;

    /// <summary>initial_max_stream_data_bidi_remote: our receive window on bidirectional streams the peer opens.</summary>
    public long InitialMaxStreamDataBidiRemote { get; init; } = 256 * 1024;

    /// <summary>initial_max_stream_data_uni: our receive window on unidirectional streams the peer opens.</summary>
    public long InitialMaxStreamDataUni { get; init; } = 256 * 1024;

    /// <summary>Largest stream receive window auto-tuning may reach.</summary>
    public long MaxStreamReceiveWindow { get; init; } = 16L << 20;

    /// <summary>initial_max_streams_bidi: concurrent bidirectional streams the peer may open.</summary>
    public long MaxStreamsBidi { get; init; } = 100;

    /// <summary>initial_max_streams_uni: concurrent unidirectional streams the peer may open.</summary>
    public long MaxStreamsUni { get; init; } = 100;

    /// <summary>Most unacknowledged bytes buffered per sending stream (the connection's send budget may allow fewer).</summary>
    public long MaxSendBufferPerStream { get; init; } = 1L << 20;

    /// <summary>
    /// The send budget a connection starts with and never goes below (<see cref="ConnectionBufferBudget"/>; at least its
    /// 256 KiB minimum). Tests that need every stream's data buffered at once raise it.
    /// </summary>
    public long MinimumSendBudget { get; set; } = ConnectionBufferBudget.MinimumSendBytes;

    /// <summary>The listener's stream buffer memory budget the connection's chunks count against (null: none).</summary>
    public EndpointBufferBudget? EndpointBudget { get; set; }

    /// <summary>Size of pooled data chunks.</summary>
    public int ChunkSize { get; init; } = StreamChunkBuffer.DefaultChunkSize;

    /// <summary>Most disjoint out-of-order fragments held per receiving stream.</summary>
    public int MaxFragmentsPerStream { get; init; } = 4096;
}
