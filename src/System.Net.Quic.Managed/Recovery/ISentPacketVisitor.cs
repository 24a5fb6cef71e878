namespace System.Net.Quic.Managed.Recovery;

/// <summary>Visits outstanding packets oldest first (e.g. to pick data for a PTO probe). Implement on a struct.</summary>
internal interface ISentPacketVisitor<TMeta> where TMeta : struct
{
    /// <summary>Returns false to stop the walk.</summary>
    bool Visit(in SentPacket<TMeta> packet);
}
