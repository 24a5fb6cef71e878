using System.Threading;

namespace System.Net.Quic.Managed.Streams;

/// <summary>
/// The stream buffer memory of all the connections of one listener (send and receive chunks together), against one
/// limit. Each connection's <see cref="ConnectionBufferBudget"/> adds what its stream buffers rent and give back; the
/// listener refuses new connections while <see cref="IsExceeded"/>, and connections then buffer for sending no more
/// than their minimum budget. Connections run on several driver threads, so the count is kept with interlocked adds.
/// </summary>
internal sealed class EndpointBufferBudget
{
    /// <summary>The limit when the application sets none: 256 MiB.</summary>
    public const long DefaultLimitBytes = 256L << 20;

    private long _chargedBytes;

    public EndpointBufferBudget(long limitBytes)
    {
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(limitBytes);
        LimitBytes = limitBytes;
    }

    public long LimitBytes { get; }

    /// <summary>Stream buffer bytes the listener's connections hold now.</summary>
    public long ChargedBytes => Volatile.Read(ref _chargedBytes);

    /// <summary>The limit is reached: new connections are refused, send buffering falls back to its minimum.</summary>
    public bool IsExceeded => Volatile.Read(ref _chargedBytes) >= LimitBytes;

    public void Add(long bytes) => Interlocked.Add(ref _chargedBytes, bytes);
}
