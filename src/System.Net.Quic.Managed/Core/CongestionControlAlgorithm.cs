namespace System.Net.Quic.Managed.Core;

/// <summary>Which congestion controller a connection uses (RFC 9002 §7 NewReno, RFC 9438 CUBIC, draft-ietf-ccwg-bbr BBRv3).</summary>
internal enum CongestionControlAlgorithm : byte
{
    Cubic,
    NewReno,
    Bbr,
}
