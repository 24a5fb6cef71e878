using System.Net.Quic.Managed.Core;

namespace System.Net.Quic.Managed.Tests.Simulation;

/// <summary>Puts a real sans-IO <see cref="Endpoint"/> on the simulated network (splitting GSO batches into datagrams).</summary>
internal sealed class SimulatedQuicEndpoint : IEcnSimulatedEndpoint, IMultiPathSimulatedEndpoint
{
    private readonly Dictionary<byte, SimAddress> _paths = new();
    private byte _batchPath;

    private readonly byte[] _receive = new byte[65536];
    private readonly byte[] _batch = new byte[65536];
    private int _batchOffset;
    private int _batchLength;
    private int _segment;
    private SimAddress _batchTarget;
    private byte _batchEcn;

    public SimulatedQuicEndpoint(Endpoint endpoint) => Endpoint = endpoint;

    /// <summary>The endpoint behind this address; a test may swap it (a server restart that lost all connection state).</summary>
    public Endpoint Endpoint { get; set; }

    public static NetworkAddress ToNetwork(SimAddress address)
    {
        // The same address as ToIPEndPoint's (10.h.h.h), without allocating one per datagram.
        ReadOnlySpan<byte> bytes = [10, (byte)(address.Host >> 16), (byte)(address.Host >> 8), (byte)address.Host];
        return new NetworkAddress(bytes, (ushort)address.Port);
    }

    /// <summary>
    /// Whether the IP layer of this host carries the ECN bits (both ways). Off by default: the datagrams go out Not-ECT and
    /// arrive without a codepoint, as through a socket that cannot read them, so runs without it never see ACK_ECN frames
    /// (and keep their fingerprints).
    /// </summary>
    public bool EcnCapable { get; set; }

    public byte LastSentEcn => EcnCapable ? _batchEcn : (byte)0;

    public void Receive(ReadOnlySpan<byte> datagram, SimAddress from, byte ecn, long nowUs)
    {
        if (!EcnCapable)
        {
            Receive(datagram, from, nowUs);
            return;
        }
        datagram.CopyTo(_receive);
        Endpoint.Receive(_receive.AsSpan(0, datagram.Length), ToNetwork(from), ecn, nowUs);
    }

    public void Receive(ReadOnlySpan<byte> datagram, SimAddress from, long nowUs)
    {
        datagram.CopyTo(_receive);
        Endpoint.Receive(_receive.AsSpan(0, datagram.Length), ToNetwork(from), nowUs);
    }

    public bool TrySend(Span<byte> buffer, long nowUs, out int written, out SimAddress to)
    {
        if (_batchOffset >= _batchLength)
        {
            if (!Endpoint.TrySend(_batch, nowUs, out OutgoingDatagram datagram))
            {
                written = 0;
                to = default;
                return false;
            }
            _batchOffset = 0;
            _batchLength = datagram.Length;
            _segment = datagram.SegmentSize;
            _batchEcn = datagram.Ecn;
            _batchPath = datagram.LocalPath;
            _batchTarget = SimAddress.FromIPEndPoint(datagram.Remote.ToEndPoint());
        }
        written = Math.Min(_segment, _batchLength - _batchOffset);
        _batch.AsSpan(_batchOffset, written).CopyTo(buffer);
        _batchOffset += written;
        to = _batchTarget;
        return true;
    }

    /// <summary>The address the last datagram goes out from: null for path 0 (the one this endpoint is attached at).</summary>
    public SimAddress? LastSentFrom => _batchPath == 0 ? null
        : _paths.TryGetValue(_batchPath, out SimAddress from) ? from : throw new InvalidOperationException($"No address for local path {_batchPath}.");

    /// <summary>Gives this endpoint local path <paramref name="path"/> at <paramref name="address"/> (a second socket).</summary>
    public void AddPath(SimulatedNetwork network, byte path, SimAddress address)
    {
        network.AddEndpoint(address, new SimulatedPathPort(this, path));
        _paths[path] = address;
    }

    /// <summary>A datagram arrived at the address of local path <paramref name="path"/>.</summary>
    public void ReceiveOnPath(ReadOnlySpan<byte> datagram, SimAddress from, byte ecn, byte path, long nowUs)
    {
        datagram.CopyTo(_receive);
        Endpoint.Receive(_receive.AsSpan(0, datagram.Length), ToNetwork(from), EcnCapable ? ecn : (byte)0, path, nowUs);
    }

    public long NextTimeoutUs => _batchOffset < _batchLength ? 0 : Endpoint.NextTimeoutUs;

    public void OnTimeout(long nowUs) => Endpoint.OnTimeout(nowUs);
}
