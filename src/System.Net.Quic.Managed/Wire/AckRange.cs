namespace System.Net.Quic.Managed.Wire;

/// <summary>An inclusive range of acknowledged packet numbers.</summary>
internal readonly record struct AckRange(ulong Smallest, ulong Largest);
