using System.Net.Quic.Managed.Recovery;

namespace System.Net.Quic.Managed.Core;

/// <summary>Routes recovery's acknowledged/lost packets back to the connection (a struct: no boxing, no closure).</summary>
internal readonly struct ConnectionSentPacketSink : ISentPacketSink<SentPacketMeta>
{
    private readonly Connection _connection;

    public ConnectionSentPacketSink(Connection connection) => _connection = connection;

    public void OnPacketAcked(PacketNumberSpace space, in SentPacket<SentPacketMeta> packet)
    {
        if (packet.EcnMarked || packet.PathProbe || packet.Size > PathMtuDiscovery.BaseSize) _connection.OnFlaggedPacketAcked(in packet);
        _connection.OnPacketAcked(space, packet.Meta.Frames);
    }

    public void OnPacketLost(PacketNumberSpace space, in SentPacket<SentPacketMeta> packet)
    {
        if (packet.EcnMarked || packet.PathProbe || packet.Size > PathMtuDiscovery.BaseSize) _connection.OnFlaggedPacketLost(in packet);
        _connection.OnPacketLost(space, packet.Meta.Frames, packet.PacketNumber);
    }
}
