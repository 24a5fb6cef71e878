namespace System.Net.Quic.Managed.Wire;

/// <summary>
/// The three ECN counts of an ACK_ECN frame (type 0x03, RFC 9000 §19.3.2): ECT(0), ECT(1) and ECN-CE. Each is a
/// variable-length integer below 2^62, so it fits a <see cref="long"/>; the ACK codec, the received-packet tracker that
/// counts what arrived and the ECN validator that checks what the peer reported share this one type.
/// </summary>
internal record struct EcnCounts(long Ect0, long Ect1, long Ce);
