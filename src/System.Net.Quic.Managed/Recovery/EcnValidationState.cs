namespace System.Net.Quic.Managed.Recovery;

/// <summary>Where ECN validation of the current path stands. RFC 9000 §13.4.2, Appendix A.4.</summary>
internal enum EcnValidationState : byte
{
    /// <summary>The first datagrams are sent ECT(0) to see whether the path and the peer handle ECN.</summary>
    Testing,

    /// <summary>The testing datagrams are sent; no more marking until an acknowledgment validates (or fails) them.</summary>
    Unknown,

    /// <summary>Validated: every datagram is sent ECT(0) and an increase of the peer's CE count is a congestion signal.</summary>
    Capable,

    /// <summary>The path or the peer mishandles ECN (bleached, remarked, wrong or missing counts, all marked packets lost): no marking.</summary>
    Failed,

    /// <summary>ECN is off by configuration.</summary>
    Disabled,
}
