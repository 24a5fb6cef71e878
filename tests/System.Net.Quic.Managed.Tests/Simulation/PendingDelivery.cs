namespace System.Net.Quic.Managed.Tests.Simulation;

/// <summary>A datagram scheduled to arrive; <see cref="Buffer"/> is rented from the shared ArrayPool.</summary>
internal readonly record struct PendingDelivery(
    byte[] Buffer, int Length, SimAddress From, SimAddress To, SimulatedLinkDirection? Direction, long Index, bool IsCopy, byte Ecn = 0);
