namespace System.Net.Quic.Managed.Tests.Simulation;

/// <summary>
/// Two-state burst-loss model: per datagram the channel first moves Good→Bad with <see cref="GoodToBad"/> or
/// Bad→Good with <see cref="BadToGood"/>, then drops with <see cref="LossInGood"/> or <see cref="LossInBad"/>.
/// Mean burst length is 1 / BadToGood; the long-run Bad fraction is GoodToBad / (GoodToBad + BadToGood).
/// </summary>
internal sealed class GilbertElliottLoss
{
    public double GoodToBad { get; set; }

    public double BadToGood { get; set; } = 1;

    public double LossInGood { get; set; }

    public double LossInBad { get; set; } = 1;

    public GilbertElliottLoss Clone() => (GilbertElliottLoss)MemberwiseClone();
}
