namespace System.Net.Quic.Managed.Recovery;

/// <summary>ECN counts as carried in an ACK_ECN frame (type 0x03). RFC 9000 §19.3.2.</summary>
internal record struct EcnCounts(long Ect0, long Ect1, long Ce);
