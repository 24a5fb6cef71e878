namespace System.Net.Quic.Managed.Wire;

/// <summary>The ECN Counts of an ACK frame of type 0x03. RFC 9000 §19.3.2.</summary>
internal readonly record struct EcnCounts(ulong Ect0, ulong Ect1, ulong EcnCe);
