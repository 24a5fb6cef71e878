using System.Net.Quic.Managed.Core;
using System.Net.Quic.Managed.Ids;

namespace System.Net.Quic.Managed.Bridge;

/// <summary>The core settings of one worker endpoint of a listener port, from the listener's scale-out options.</summary>
internal static class ListenerEndpointOptions
{
    /// <summary>The length of our connection IDs when nothing else decides it.</summary>
    public const int DefaultConnectionIdLength = 8;

    /// <summary>The payload offset of the worker octet in a short header (the last octet of our IDs) with <paramref name="workers"/> workers.</summary>
    public static int WorkerTagOffset(QuicListenerOptions options, int workers)
    {
        int length = options.LoadBalancing is { } lb ? 1 + lb.ServerId.Length + lb.NonceLength + (workers > 1 ? 1 : 0) : DefaultConnectionIdLength;
        return length; // 1 (first byte) + length - 1
    }

    /// <summary>
    /// Options for worker <paramref name="worker"/> of <paramref name="workers"/>: QUIC-LB IDs when configured, a worker tag
    /// in the last octet of every ID when there are several workers (one more octet after a QUIC-LB ID), fleet keys.
    /// </summary>
    public static EndpointOptions Create(QuicListenerOptions options, string localName, int worker = 0, int workers = 1, IDatagramHandoff? handoff = null)
    {
        ConnectionIdGenerator? generator = options.LoadBalancing?.CreateGenerator(workers > 1 ? 1 : 0);
        uint[]? versions = QuicProtocolVersions.ToWire(options.ProtocolVersions);
        if (workers > 1)
        {
            generator = new WorkerTaggedConnectionIdGenerator(generator ?? new RandomConnectionIdGenerator(DefaultConnectionIdLength), worker, workers);
        }
        return new EndpointOptions
        {
            IsServer = true,
            LocalName = localName,
            RequireRetry = options.RequireRetry,
            SupportedVersions = versions ?? [Wire.QuicVersion.V1, Wire.QuicVersion.V2],
            PreferredVersions = versions,
            ConnectionIdLength = generator?.Length ?? DefaultConnectionIdLength,
            ConnectionIdGenerator = generator,
            Handoff = workers > 1 ? handoff : null,
            StatelessResetKey = options.StatelessResetKey.IsEmpty ? null : options.StatelessResetKey.ToArray(),
            AddressValidationTokenKey = options.AddressValidationTokenKey.IsEmpty ? null : options.AddressValidationTokenKey.ToArray(),
            ConnectionCreated = QuicManagedDiagnostics.AttachTracer,
        };
    }
}
