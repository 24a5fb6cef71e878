using System.Net.Quic.Managed.Recovery;
using System.Net.Quic.Managed.Wire;

namespace System.Net.Quic.Managed.Tests.Recovery;

/// <summary>ECN validation (RFC 9000 §13.4.2, A.4) on its own: every way a peer or a path can get the counts wrong.</summary>
public class EcnValidatorTests
{
    private const PacketNumberSpace App = PacketNumberSpace.ApplicationData;

    /// <summary>A validator that marked <paramref name="packets"/> 1-RTT packets in as many datagrams.</summary>
    private static EcnValidator Marked(int packets)
    {
        var v = new EcnValidator(enabled: true);
        for (int i = 0; i < packets; i++)
        {
            Assert.True(v.ShouldMark || v.State == EcnValidationState.Unknown);
            if (!v.ShouldMark) break;
            v.OnMarkedPacketSent(App);
            v.OnMarkedDatagramSent();
        }
        return v;
    }

    [Fact]
    public void TestingMarksTenDatagramsThenWaits()
    {
        EcnValidator v = Marked(20);
        Assert.Equal(EcnValidationState.Unknown, v.State);
        Assert.False(v.ShouldMark);
        Assert.Equal(EcnValidator.TestingDatagrams, v.MarkedPacketsSent);
    }

    [Fact]
    public void CountsCoveringTheAckedPacketsValidate()
    {
        EcnValidator v = Marked(10);
        Assert.False(v.OnAck(App, new EcnCounts(4, 0, 0), newlyAckedMarked: 4, largestAdvanced: true));
        Assert.Equal(EcnValidationState.Capable, v.State);
        Assert.True(v.ShouldMark);
    }

    [Fact]
    public void MissingCountsFail()
    {
        EcnValidator v = Marked(10);
        v.OnAck(App, null, newlyAckedMarked: 2, largestAdvanced: true);
        Assert.Equal(EcnValidationState.Failed, v.State);
        Assert.False(v.ShouldMark);
    }

    [Fact]
    public void APlainAckOfUnmarkedPacketsIsFine()
    {
        EcnValidator v = Marked(10);
        v.OnAck(App, null, newlyAckedMarked: 0, largestAdvanced: true);
        Assert.Equal(EcnValidationState.Unknown, v.State);
    }

    [Fact]
    public void CountsThatDoNotCoverTheAckedPacketsFail()
    {
        EcnValidator v = Marked(10);
        v.OnAck(App, new EcnCounts(2, 0, 0), newlyAckedMarked: 3, largestAdvanced: true);
        Assert.Equal(EcnValidationState.Failed, v.State);
        Assert.Contains("do not cover", v.FailureReason);
    }

    [Fact]
    public void DecreasingCountsFail()
    {
        EcnValidator v = Marked(10);
        v.OnAck(App, new EcnCounts(5, 0, 1), newlyAckedMarked: 6, largestAdvanced: true);
        Assert.Equal(EcnValidationState.Capable, v.State);
        v.OnAck(App, new EcnCounts(6, 0, 0), newlyAckedMarked: 0, largestAdvanced: true);
        Assert.Equal(EcnValidationState.Failed, v.State);
        Assert.Contains("decreased", v.FailureReason);
    }

    [Fact]
    public void MoreThanWasSentFails()
    {
        EcnValidator v = Marked(10);
        v.OnAck(App, new EcnCounts(11, 0, 0), newlyAckedMarked: 1, largestAdvanced: true);
        Assert.Equal(EcnValidationState.Failed, v.State);
    }

    [Fact]
    public void Ect1CountsMeanRemarking()
    {
        EcnValidator v = Marked(10);
        v.OnAck(App, new EcnCounts(0, 3, 0), newlyAckedMarked: 3, largestAdvanced: true);
        Assert.Equal(EcnValidationState.Failed, v.State);
        Assert.Contains("ECT(1)", v.FailureReason);
    }

    [Fact]
    public void AReorderedAckIsNotChecked()
    {
        EcnValidator v = Marked(10);
        v.OnAck(App, new EcnCounts(5, 0, 0), newlyAckedMarked: 5, largestAdvanced: true);
        // An older ACK arriving late (largest acknowledged not advanced) with smaller counts: ignored, not a failure.
        v.OnAck(App, new EcnCounts(3, 0, 0), newlyAckedMarked: 1, largestAdvanced: false);
        Assert.Equal(EcnValidationState.Capable, v.State);
    }

    [Fact]
    public void AllTestingPacketsLostFails()
    {
        EcnValidator v = Marked(10);
        for (int i = 0; i < 9; i++) v.OnMarkedPacketLost();
        Assert.Equal(EcnValidationState.Unknown, v.State);
        v.OnMarkedPacketLost();
        Assert.Equal(EcnValidationState.Failed, v.State);
        Assert.Contains("lost", v.FailureReason);
    }

    [Fact]
    public void CeIncreaseIsACongestionSignalOnlyWhenTheCountsAreValid()
    {
        EcnValidator v = Marked(10);
        Assert.True(v.OnAck(App, new EcnCounts(3, 0, 1), newlyAckedMarked: 4, largestAdvanced: true));
        Assert.False(v.OnAck(App, new EcnCounts(5, 0, 1), newlyAckedMarked: 2, largestAdvanced: true));
        Assert.True(v.OnAck(App, new EcnCounts(5, 0, 3), newlyAckedMarked: 2, largestAdvanced: true));
        Assert.Equal(2, v.CongestionSignals);
        // A CE count jumping past what was ever sent is a lie, not congestion.
        Assert.False(v.OnAck(App, new EcnCounts(5, 0, long.MaxValue / 2), newlyAckedMarked: 1, largestAdvanced: true));
        Assert.Equal(EcnValidationState.Failed, v.State);
        Assert.False(v.OnAck(App, new EcnCounts(6, 0, 9), newlyAckedMarked: 1, largestAdvanced: true));
        Assert.Equal(2, v.CongestionSignals);
    }

    [Fact]
    public void DisabledNeverMarks()
    {
        var v = new EcnValidator(enabled: false);
        Assert.False(v.ShouldMark);
        Assert.False(v.OnAck(App, new EcnCounts(1, 0, 1), 1, true));
        v.OnPathChanged();
        Assert.Equal(EcnValidationState.Disabled, v.State);
    }

    [Fact]
    public void ANewPathIsValidatedAgain()
    {
        EcnValidator v = Marked(10);
        v.OnAck(App, null, newlyAckedMarked: 1, largestAdvanced: true);
        Assert.Equal(EcnValidationState.Failed, v.State);
        v.OnPathChanged();
        Assert.Equal(EcnValidationState.Testing, v.State);
        Assert.True(v.ShouldMark);
    }

    /// <summary>Hostile counts (any values a peer can put in ACK_ECN frames, in any order): no exception, Failed is final, CE signals only on valid increases.</summary>
    [Fact]
    public void HostileCountSequences()
    {
        var random = new Random(1515);
        long[] interesting = [0, 1, 2, 9, 10, 11, (1L << 62) - 1, long.MaxValue, -1];
        for (int run = 0; run < 2000; run++)
        {
            var v = new EcnValidator(enabled: true);
            long sent = 0;
            bool failed = false;
            long signals = 0;
            for (int step = 0; step < 30; step++)
            {
                var space = (PacketNumberSpace)random.Next(3);
                if (v.ShouldMark && random.Next(2) == 0)
                {
                    v.OnMarkedPacketSent(space);
                    v.OnMarkedDatagramSent();
                    sent++;
                }
                if (random.Next(10) == 0) v.OnMarkedPacketLost();
                EcnCounts? counts = random.Next(5) == 0 ? null : new EcnCounts(Pick(), Pick(), Pick());
                bool ce = v.OnAck(space, counts, random.Next(3), random.Next(4) != 0);
                if (ce) signals++;
                Assert.False(failed && (ce || v.State != EcnValidationState.Failed), "a failed validation came back");
                failed = v.State == EcnValidationState.Failed;
                Assert.True(v.MarkedPacketsSent == sent);
            }
            Assert.Equal(signals, v.CongestionSignals);
        }

        long Pick() => random.Next(3) == 0 ? interesting[random.Next(interesting.Length)] : random.Next(0, 12);
    }
}
