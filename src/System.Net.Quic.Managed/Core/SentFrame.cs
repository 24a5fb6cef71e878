namespace System.Net.Quic.Managed.Core;

/// <summary>One retransmission-relevant frame of a sent packet, as a value (see <see cref="SentFrameKind"/>).</summary>
internal readonly record struct SentFrame(SentFrameKind Kind, long Id, long Offset, int Length, bool Flag);
