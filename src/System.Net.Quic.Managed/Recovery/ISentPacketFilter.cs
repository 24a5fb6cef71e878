namespace System.Net.Quic.Managed.Recovery;

/// <summary>Selects outstanding packets (e.g. the 0-RTT packets of a rejected early-data attempt). Implement on a struct.</summary>
internal interface ISentPacketFilter<TMeta> where TMeta : struct
{
    bool Matches(in SentPacket<TMeta> packet);
}
