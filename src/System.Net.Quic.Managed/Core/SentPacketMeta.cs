namespace System.Net.Quic.Managed.Core;

/// <summary>The connection's per-packet record handed to recovery's sent-packet tracker (its TMeta).</summary>
internal readonly record struct SentPacketMeta(SentFrames? Frames);
