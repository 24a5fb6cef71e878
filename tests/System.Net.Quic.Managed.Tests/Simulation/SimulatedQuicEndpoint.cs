using System.Net.Quic.Managed.Core;

namespace System.Net.Quic.Managed.Tests.Simulation;

/// <summary>Puts a real sans-IO <see cref="Endpoint"/> on the simulated network (splitting GSO batches into datagrams).</summary>
internal sealed class SimulatedQuicEndpoint : IEcnSimulatedEndpoint
{
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

    public static NetworkAddress ToNetwork(SimAddress address) => NetworkAddress.FromEndPoint(address.ToIPEndPoint());

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
            _batchTarget = SimAddress.FromIPEndPoint(datagram.Remote.ToEndPoint());
        }
        written = Math.Min(_segment, _batchLength - _batchOffset);
        _batch.AsSpan(_batchOffset, written).CopyTo(buffer);
        _batchOffset += written;
        to = _batchTarget;
        return true;
    }

    public long NextTimeoutUs => _batchOffset < _batchLength ? 0 : Endpoint.NextTimeoutUs;

    public void OnTimeout(long nowUs) => Endpoint.OnTimeout(nowUs);
}
