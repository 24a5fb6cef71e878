namespace QuicManaged.Interop.Transport;

/// <summary>One QUIC stream as the application protocols see it: a <see cref="System.IO.Stream"/> plus half-close and abort.</summary>
internal interface IMultiplexedStream : IAsyncDisposable
{
    Stream Stream { get; }

    bool IsBidirectional { get; }

    /// <summary>The QUIC stream id (QPACK's decoder stream names request streams by it, RFC 9204 §4.4).</summary>
    long Id { get; }

    /// <summary>Sends FIN on the write side.</summary>
    void CompleteWrites();

    /// <summary>Resets the write side and/or stops the read side with an application error code.</summary>
    void Abort(long errorCode);
}
