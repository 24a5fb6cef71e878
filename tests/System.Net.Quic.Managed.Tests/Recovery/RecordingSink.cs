using System.Net.Quic.Managed.Recovery;

namespace System.Net.Quic.Managed.Tests.Recovery;

/// <summary>Test sink: records acknowledged and lost packet numbers (TMeta is the packet number * 10 to check it travels).</summary>
internal struct RecordingSink : ISentPacketSink<int>
{
    public List<long> Acked;
    public List<long> Lost;
    public List<int> Metas;

    public static RecordingSink Create() => new() { Acked = new(), Lost = new(), Metas = new() };

    public void OnPacketAcked(PacketNumberSpace space, in SentPacket<int> packet)
    {
        Acked.Add(packet.PacketNumber);
        Metas.Add(packet.Meta);
    }

    public void OnPacketLost(PacketNumberSpace space, in SentPacket<int> packet) => Lost.Add(packet.PacketNumber);
}
