namespace System.Net.Quic.Managed.Tests.Simulation;

internal enum SimTraceKind
{
    Sent,
    Dropped,
    Delivered,
}
