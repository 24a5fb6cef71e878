namespace System.Net.Quic.Managed.Crypto;

/// <summary>
/// 1-RTT keys of one direction across key updates (RFC 9001 §6). Holds the current generation, the next one
/// (derived ahead of time, RFC 9001 §6.3, so a receiver can trial-decrypt a packet whose Key Phase bit differs
/// without a timing side channel) and, after an update, the previous one for delayed packets (RFC 9001 §6.5).
/// Key phase bit of generation n is n % 2.
/// </summary>
internal sealed class KeyPhaseKeys : IDisposable
{
    private bool _disposed;

    /// <summary>Takes ownership of <paramref name="firstGeneration"/> (made from the TLS application traffic secret).</summary>
    public KeyPhaseKeys(PacketProtectionKeys firstGeneration)
    {
        ArgumentNullException.ThrowIfNull(firstGeneration);
        Current = firstGeneration;
        Next = firstGeneration.CreateNextGeneration();
    }

    public PacketProtectionKeys Current { get; private set; }

    public PacketProtectionKeys Next { get; private set; }

    /// <summary>The keys in use before the last <see cref="Update"/>, until <see cref="DiscardPrevious"/>.</summary>
    public PacketProtectionKeys? Previous { get; private set; }

    /// <summary>The Key Phase bit value (0 or 1) of <see cref="Current"/>.</summary>
    public int KeyPhase => Current.Generation & 1;

    /// <summary>
    /// Moves to the next key phase: Next becomes Current, Current becomes Previous (an older Previous is disposed)
    /// and a new Next is derived.
    /// </summary>
    public void Update()
    {
        ObjectDisposedException.ThrowIf(_disposed, this);
        PacketProtectionKeys newNext = Next.CreateNextGeneration();
        Previous?.Dispose();
        Previous = Current;
        Current = Next;
        Next = newNext;
    }

    /// <summary>RFC 9001 §6.5: discard old receive keys (e.g. three PTO after the update was confirmed).</summary>
    public void DiscardPrevious()
    {
        Previous?.Dispose();
        Previous = null;
    }

    public void Dispose()
    {
        if (_disposed) return;
        _disposed = true;
        Previous?.Dispose();
        Current.Dispose();
        Next.Dispose();
    }
}
