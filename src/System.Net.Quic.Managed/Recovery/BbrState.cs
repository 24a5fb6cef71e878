namespace System.Net.Quic.Managed.Recovery;

/// <summary>The states of BBR's state machine (draft-ietf-ccwg-bbr §4.3); ProbeBW is split into its four phases.</summary>
internal enum BbrState : byte
{
    Startup,
    Drain,
    ProbeBwDown,
    ProbeBwCruise,
    ProbeBwRefill,
    ProbeBwUp,
    ProbeRtt,
}
