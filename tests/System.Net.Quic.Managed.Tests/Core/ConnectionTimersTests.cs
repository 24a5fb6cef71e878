using System.Net.Quic.Managed.Core;
using System.Net.Quic.Managed.Crypto;

namespace System.Net.Quic.Managed.Tests.Core;

public class AntiAmplificationLimitTests
{
    [Fact]
    public void AllowsThreeTimesWhatWasReceivedUntilValidated()
    {
        var limit = new AntiAmplificationLimit();
        Assert.False(limit.CanSend(1));
        Assert.True(limit.IsBlocked);
        limit.OnDatagramReceived(1200);
        Assert.Equal(3600, limit.Remaining);
        limit.OnDatagramSent(1200);
        limit.OnDatagramSent(1200);
        Assert.True(limit.CanSend(1200));
        Assert.False(limit.CanSend(1201));
        limit.OnDatagramSent(1200);
        Assert.True(limit.IsBlocked);
        limit.OnAddressValidated();
        Assert.True(limit.CanSend(65_000));
        Assert.False(limit.IsBlocked);
    }
}

public class IdleTimeoutTests
{
    [Theory]
    [InlineData(30_000_000, 10_000_000, 10_000_000)]
    [InlineData(10_000_000, 30_000_000, 10_000_000)]
    [InlineData(0, 5_000_000, 5_000_000)]
    [InlineData(5_000_000, 0, 5_000_000)]
    [InlineData(0, 0, 0)]
    public void EffectiveTimeoutIsTheSmallerNonZeroValue(long local, long peer, long expected)
    {
        var idle = new IdleTimeout(local, 0);
        idle.OnPeerTimeout(peer);
        Assert.Equal(expected, idle.EffectiveTimeoutUs);
        if (expected == 0) Assert.Equal(long.MaxValue, idle.DeadlineUs(1000));
    }

    [Fact]
    public void DeadlineIsAtLeastThreePtos()
    {
        var idle = new IdleTimeout(1_000_000, 0);
        Assert.Equal(1_000_000, idle.DeadlineUs(ptoUs: 100_000));
        Assert.Equal(1_500_000, idle.DeadlineUs(ptoUs: 500_000));
    }

    [Fact]
    public void RestartsOnReceiveAndOnFirstAckElicitingSendAfterIt()
    {
        var idle = new IdleTimeout(10_000_000, 0);
        idle.OnAckElicitingPacketSent(1_000_000);
        Assert.Equal(11_000_000, idle.DeadlineUs(1));
        idle.OnAckElicitingPacketSent(2_000_000); // not the first since a receipt: no restart
        Assert.Equal(11_000_000, idle.DeadlineUs(1));
        idle.OnPacketReceived(3_000_000);
        Assert.Equal(13_000_000, idle.DeadlineUs(1));
        idle.OnAckElicitingPacketSent(4_000_000);
        Assert.Equal(14_000_000, idle.DeadlineUs(1));
    }
}

public class PathValidatorTests
{
    [Fact]
    public void ResponseToAnyOutstandingChallengeValidates()
    {
        var validator = new PathValidator(new SeededRandomSource(5));
        validator.Start(nowUs: 0, ptoUs: 100_000);
        Span<byte> first = stackalloc byte[8];
        Span<byte> second = stackalloc byte[8];
        validator.CreateChallenge(first);
        validator.CreateChallenge(second);
        Assert.False(first.SequenceEqual(second));
        Assert.False(validator.OnResponse(new byte[8]));
        Assert.True(validator.OnResponse(first));
        Assert.Equal(PathValidationState.Validated, validator.State);
        Assert.Equal(long.MaxValue, validator.DeadlineUs);
    }

    [Fact]
    public void AbandonedAfterThreePtos()
    {
        // RFC 9000 §8.2.4: three times the larger of the current PTO and a new path's (kInitialRtt) PTO.
        var validator = new PathValidator(new SeededRandomSource(5));
        validator.Start(nowUs: 1000, ptoUs: 1_500_000);
        Span<byte> data = stackalloc byte[8];
        validator.CreateChallenge(data);
        Assert.Equal(4_501_000, validator.DeadlineUs);
        Assert.False(validator.OnTimeout(4_500_999));
        Assert.True(validator.OnTimeout(4_501_000));
        Assert.Equal(PathValidationState.Failed, validator.State);
        Assert.False(validator.OnResponse(data)); // too late
    }

    [Fact]
    public void AShortPtoStillWaitsForANewPathsPto()
    {
        var validator = new PathValidator(new SeededRandomSource(5));
        validator.Start(nowUs: 1000, ptoUs: 100_000); // a 20 ms path: 3 x PTO alone would give up after 300 ms
        Assert.Equal(1000 + 3 * PathValidator.NewPathPtoUs, validator.DeadlineUs);
        Assert.False(validator.OnTimeout(301_000));
        Assert.Equal(PathValidationState.Pending, validator.State);
    }

    [Fact]
    public void OldestChallengeIsForgottenBeyondTheLimit()
    {
        var validator = new PathValidator(new SeededRandomSource(5));
        validator.Start(0, 100_000);
        byte[] oldest = new byte[8];
        validator.CreateChallenge(oldest);
        for (int i = 0; i < PathValidator.MaxOutstanding; i++) validator.CreateChallenge(new byte[8]);
        Assert.False(validator.OnResponse(oldest));
        Assert.Throws<InvalidOperationException>(() => new PathValidator(new SeededRandomSource(1)).CreateChallenge(new byte[8]));
    }
}

public class CloseStateTests
{
    [Fact]
    public void ClosingLastsThreePtosAndBacksOffResends()
    {
        var close = new CloseState();
        close.EnterClosing(nowUs: 0, ptoUs: 100_000);
        Assert.Equal(ConnectionPhase.Closing, close.Phase);
        Assert.Equal(300_000, close.DeadlineUs);
        int resends = 0;
        for (int i = 0; i < 100; i++) if (close.ShouldResendClose()) resends++;
        Assert.InRange(resends, 5, 8); // 1, 2, 4, ..., 64 packets apart: logarithmic in packets received
        Assert.False(close.OnTimeout(299_999));
        Assert.True(close.OnTimeout(300_000));
        Assert.Equal(ConnectionPhase.Closed, close.Phase);
    }

    [Fact]
    public void DrainingSendsNothingAndKeepsAnEarlierClosingDeadline()
    {
        var close = new CloseState();
        close.EnterDraining(0, 100_000);
        Assert.False(close.ShouldResendClose());
        Assert.Equal(300_000, close.DeadlineUs);

        var both = new CloseState();
        both.EnterClosing(0, 100_000);
        both.EnterDraining(200_000, 100_000);
        Assert.Equal(ConnectionPhase.Draining, both.Phase);
        Assert.Equal(300_000, both.DeadlineUs);
    }

    [Fact]
    public void OpenConnectionHasNoDeadline()
    {
        var close = new CloseState();
        Assert.Equal(long.MaxValue, close.DeadlineUs);
        Assert.False(close.OnTimeout(long.MaxValue - 1));
        close.CloseSilently();
        Assert.Equal(ConnectionPhase.Closed, close.Phase);
    }
}
