using System.Buffers.Binary;
using System.Net.Quic.Managed.Recovery;

namespace System.Net.Quic.Managed.Core;

internal sealed partial class Connection
{
    /// <summary>The controller <see cref="ConnectionOptions.CongestionControl"/> names. Only BBR draws from the random
    /// source (to seed its ProbeBW timing), so NewReno and CUBIC connections consume exactly the randomness they always did.</summary>
    private static ICongestionController CreateCongestionController(ConnectionOptions options, int maxDatagramSize)
    {
        switch (options.CongestionControl)
        {
            case CongestionControlAlgorithm.NewReno:
                return new NewRenoCongestionController(maxDatagramSize);
            case CongestionControlAlgorithm.Bbr:
                Span<byte> seed = stackalloc byte[8];
                options.Random.Fill(seed);
                return new BbrCongestionController(maxDatagramSize, BinaryPrimitives.ReadUInt64LittleEndian(seed));
            default:
                return new CubicCongestionController(maxDatagramSize);
        }
    }

    /// <summary>
    /// <see cref="TrySend"/> found nothing to send: when neither the congestion window nor the pacer held it back, the
    /// application (or flow control) is the limit, which a rate-sampling controller must know so that the delivery
    /// rates measured meanwhile do not lower its bandwidth estimate. Nothing happens for NewReno and CUBIC.
    /// </summary>
    private void NoteNothingToSend(long nowUs)
    {
        if (_recovery.CongestionController is not IRateSamplingCongestionController) return;
        ICongestionController cc = _recovery.CongestionController;
        if (cc.BytesInFlight + _path.MaxDatagramSize > cc.CongestionWindow) return;
        if (_path.Pacer.GetNextSendTimeUs(_path.MaxDatagramSize, nowUs, cc.CongestionWindow, _recovery.Rtt.SmoothedRttUs, cc.InSlowStart) > nowUs) return;
        _recovery.OnApplicationLimited(nowUs);
    }
}
