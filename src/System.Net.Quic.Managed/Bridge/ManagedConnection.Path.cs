using System.Net.Quic.Managed.Core;
using System.Net.Quic.Managed.Recovery;

namespace System.Net.Quic.Managed.Bridge;

internal sealed partial class ManagedConnection
{
    /// <summary>Driver thread: the ECN and path MTU counters of the statistics snapshot.</summary>
    private static void AddPathStatistics(QuicConnectionStatistics statistics, Connection core)
    {
        Wire.EcnCounts received = core.ReceivedEcnCounts;
        Wire.EcnCounts reported = core.Ecn.ReportedByPeer;
        statistics.EcnEct0PacketsReceived = received.Ect0;
        statistics.EcnCePacketsReceived = received.Ce;
        statistics.EcnEct0PacketsReportedByPeer = reported.Ect0;
        statistics.EcnCePacketsReportedByPeer = reported.Ce;
        statistics.EcnValidated = core.Ecn.State == EcnValidationState.Capable;
        statistics.PathMaxDatagramSize = core.CurrentMaxDatagramSize;
    }
}
