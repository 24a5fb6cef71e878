using System.Net.Quic.Managed.Wire;

namespace System.Net.Quic.Managed.Recovery;

/// <summary>
/// ECN validation of a path (RFC 9000 §13.4.2, Appendix A.4): decides whether outgoing datagrams are marked ECT(0), checks
/// the counts the peer reports in ACK_ECN frames against what was sent and acknowledged, and reports an increase of the
/// CE count (a congestion signal, RFC 9002 §7.1, B.7). Single-threaded, sans-IO, no allocation after construction.
/// </summary>
internal sealed class EcnValidator
{
    /// <summary>Datagrams marked during the testing period (RFC 9000 A.4 suggests 10).</summary>
    public const int TestingDatagrams = 10;

    private readonly long[] _sentEct0 = new long[3];
    private readonly EcnCounts[] _reported = new EcnCounts[3];
    private int _testingDatagramsSent;
    private long _testingPacketsSent;
    private long _testingPacketsLost;

    public EcnValidator(bool enabled) => State = enabled ? EcnValidationState.Testing : EcnValidationState.Disabled;

    public EcnValidationState State { get; private set; }

    /// <summary>Why validation failed (null while it has not).</summary>
    public string? FailureReason { get; private set; }

    /// <summary>True when the next datagram is to be sent ECT(0).</summary>
    public bool ShouldMark => State is EcnValidationState.Testing or EcnValidationState.Capable;

    /// <summary>Packets sent in ECT(0) datagrams, over all packet number spaces.</summary>
    public long MarkedPacketsSent => _sentEct0[0] + _sentEct0[1] + _sentEct0[2];

    /// <summary>The latest counts the peer reported for the Application Data space.</summary>
    public EcnCounts ReportedByPeer => _reported[(int)PacketNumberSpace.ApplicationData];

    /// <summary>Increases of the peer's CE counts treated as congestion signals.</summary>
    public long CongestionSignals { get; private set; }

    /// <summary>A packet of <paramref name="space"/> went out in an ECT(0) datagram.</summary>
    public void OnMarkedPacketSent(PacketNumberSpace space)
    {
        _sentEct0[(int)space]++;
        if (State == EcnValidationState.Testing) _testingPacketsSent++;
    }

    /// <summary>An ECT(0) datagram went out (ends the testing period after <see cref="TestingDatagrams"/>).</summary>
    public void OnMarkedDatagramSent()
    {
        if (State == EcnValidationState.Testing && ++_testingDatagramsSent >= TestingDatagrams) State = EcnValidationState.Unknown;
    }

    /// <summary>A packet sent ECT(0) was declared lost: if every testing packet was lost, the path may drop ECT packets.</summary>
    public void OnMarkedPacketLost()
    {
        if (State is not (EcnValidationState.Testing or EcnValidationState.Unknown)) return;
        _testingPacketsLost++;
        if (State == EcnValidationState.Unknown && _testingPacketsLost >= _testingPacketsSent) Fail("every ECT(0) packet of the testing period was lost");
    }

    /// <summary>
    /// An ACK frame of <paramref name="space"/> newly acknowledged packets, <paramref name="newlyAckedMarked"/> of them sent
    /// ECT(0); <paramref name="counts"/> are its ECN counts (null for a plain ACK); <paramref name="largestAdvanced"/> when it
    /// raised the largest acknowledged (counts of an older, reordered ACK are not checked, §13.4.2.1). Returns true when the
    /// CE count grew on a path that has not failed: the caller reacts as to a loss.
    /// </summary>
    public bool OnAck(PacketNumberSpace space, EcnCounts? counts, long newlyAckedMarked, bool largestAdvanced)
    {
        if (State is EcnValidationState.Failed or EcnValidationState.Disabled) return false;
        if (counts is not EcnCounts c)
        {
            // §13.4.2.1: an ACK newly acknowledging ECT packets must carry the counts (a bleaching path or a peer without ECN).
            if (newlyAckedMarked > 0) Fail("an ACK without ECN counts acknowledged ECT(0) packets");
            return false;
        }
        if (!largestAdvanced) return false;
        ref EcnCounts previous = ref _reported[(int)space];
        if (c.Ect0 < previous.Ect0 || c.Ect1 < previous.Ect1 || c.Ce < previous.Ce)
        {
            Fail("the peer's ECN counts decreased");
            return false;
        }
        // We never send ECT(1): a count of it means remarking. More ECT(0)+CE than we ever marked means wrong counts.
        if (c.Ect1 > 0)
        {
            Fail("the peer reported ECT(1) packets, which were sent ECT(0) (remarked)");
            return false;
        }
        long sent = _sentEct0[(int)space];
        if (c.Ect0 < 0 || c.Ce < 0 || c.Ect0 > sent || c.Ce > sent || c.Ect0 + c.Ce > sent)
        {
            Fail("the peer reported more ECT(0) and CE packets than were sent marked");
            return false;
        }
        long ceIncrease = c.Ce - previous.Ce;
        if (c.Ect0 - previous.Ect0 + ceIncrease < newlyAckedMarked)
        {
            Fail("the ECN counts do not cover the newly acknowledged ECT(0) packets (bleached or remarked)");
            return false;
        }
        previous = c;
        if (newlyAckedMarked > 0 && State is EcnValidationState.Testing or EcnValidationState.Unknown) State = EcnValidationState.Capable;
        if (ceIncrease <= 0) return false;
        CongestionSignals++;
        return true;
    }

    /// <summary>A new path: validate it again (§13.4.2); the counts the peer reports stay cumulative per space.</summary>
    public void OnPathChanged()
    {
        if (State == EcnValidationState.Disabled) return;
        State = EcnValidationState.Testing;
        FailureReason = null;
        _testingDatagramsSent = 0;
        _testingPacketsSent = 0;
        _testingPacketsLost = 0;
    }

    private void Fail(string reason)
    {
        State = EcnValidationState.Failed;
        FailureReason = reason;
    }
}
