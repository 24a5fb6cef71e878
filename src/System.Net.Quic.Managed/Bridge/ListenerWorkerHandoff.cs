using System.Buffers;
using System.Net.Quic.Managed.Core;
using System.Net.Quic.Managed.Io;
using System.Threading;

namespace System.Net.Quic.Managed.Bridge;

/// <summary>
/// The workers of one listener port (one socket, driver thread and endpoint each) hand each other the datagrams the
/// kernel delivered to the wrong socket: a copy is posted to the owner's driver, which feeds it to its endpoint as if it
/// had received it (replies leave from the owner's socket, which has the same address and port).
/// </summary>
/// <remarks>
/// In a SO_REUSEPORT group that spans processes (<see cref="QuicListenerOptions.ReusePortGroupSize"/>) the workers are the
/// group's sockets <see cref="FirstWorker"/> and up; a datagram for a worker of another process cannot be handed over and
/// is treated as unknown (a stateless reset, as any server of a fleet answers for a server that is gone).
/// </remarks>
internal sealed class ListenerWorkerHandoff(int firstWorker = 0) : IDatagramHandoff
{
    private ManagedDriverHost[] _hosts = [];
    private long _handedOff;

    /// <summary>Set once every worker exists, before the drivers start.</summary>
    public void SetHosts(ManagedDriverHost[] hosts) => _hosts = hosts;

    /// <summary>Datagrams moved between workers (for tests and diagnostics).</summary>
    public long HandedOff => Interlocked.Read(ref _handedOff);

    /// <summary>The group index of this listener's first worker (0 unless the group spans processes).</summary>
    public int FirstWorker => firstWorker;

    public bool TryHandOff(int worker, ReadOnlySpan<byte> datagram, in NetworkAddress remote, byte ecn)
    {
        ManagedDriverHost[] hosts = _hosts;
        worker -= firstWorker;
        if ((uint)worker >= (uint)hosts.Length || hosts[worker].IsDisposed) return false;
        byte[] copy = ArrayPool<byte>.Shared.Rent(datagram.Length);
        datagram.CopyTo(copy);
        Interlocked.Increment(ref _handedOff);
        hosts[worker].Post(new Delivery(hosts[worker].Endpoint, copy, datagram.Length, remote, ecn));
        return true;
    }

    private sealed class Delivery(Endpoint endpoint, byte[] buffer, int length, NetworkAddress remote, byte ecn) : IDriverWorkItem
    {
        public void Execute(long nowUs)
        {
            try
            {
                endpoint.Receive(buffer.AsSpan(0, length), remote, ecn, nowUs);
            }
            finally
            {
                ArrayPool<byte>.Shared.Return(buffer);
            }
        }

        public void Abandon() => ArrayPool<byte>.Shared.Return(buffer);
    }
}
