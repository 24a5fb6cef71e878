namespace System.Net.Quic.Managed.Tests.Simulation;

/// <summary>
/// One line of the network trace. Two runs are identical when their traces are equal entry by entry.
/// <see cref="DirectionId"/> is -1 for datagrams without a link (injected, or no route).
/// <see cref="ContentHash"/> is FNV-1a over the bytes (as sent, or as delivered).
/// </summary>
internal readonly record struct SimTraceEntry(long TimeUs, SimTraceKind Kind, int DirectionId, int Length, DropCause Cause, uint ContentHash)
{
    public override string ToString() => $"{TimeUs,10}us {Kind,-9} dir {DirectionId} len {Length} {(Cause == DropCause.None ? string.Empty : Cause.ToString())} #{ContentHash:x8}";
}
