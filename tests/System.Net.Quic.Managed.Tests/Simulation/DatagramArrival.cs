namespace System.Net.Quic.Managed.Tests.Simulation;

/// <summary>One datagram received by a toy endpoint; <see cref="Sequence"/> is its first 8 bytes big-endian (-1 if shorter).</summary>
internal readonly record struct DatagramArrival(long TimeUs, long Sequence, byte[] Data, SimAddress From);
