using System.Net;

namespace QuicManaged.Http;

/// <summary>
/// A response's content: its headers are filled while the response's field section is read, its body
/// (<see cref="Http3ResponseStream"/>) is attached once the response is handed over. Reading it returns the body stream
/// itself; buffering copies from it (<see cref="Http3ResponseStream.CopyToAsync(Stream, int, CancellationToken)"/>).
/// </summary>
internal sealed class Http3ResponseContent : HttpContent
{
    private Http3ResponseStream? _body;
    private bool _taken;

    public void SetBody(Http3ResponseStream body) => _body = body;

    private Http3ResponseStream TakeBody()
    {
        Http3ResponseStream body = _body ?? throw new InvalidOperationException("The response body is not attached yet.");
        if (_taken)
        {
            throw new InvalidOperationException("The response content was already read; it can be read once (or buffered with LoadIntoBufferAsync).");
        }

        _taken = true;
        return body;
    }

    protected override Task SerializeToStreamAsync(Stream stream, TransportContext? context) => SerializeToStreamAsync(stream, context, CancellationToken.None);

    protected override Task SerializeToStreamAsync(Stream stream, TransportContext? context, CancellationToken cancellationToken)
        => TakeBody().CopyToAsync(stream, 81920, cancellationToken);

    protected override void SerializeToStream(Stream stream, TransportContext? context, CancellationToken cancellationToken)
        => TakeBody().CopyTo(stream);

    protected override Task<Stream> CreateContentReadStreamAsync() => Task.FromResult<Stream>(TakeBody());

    protected override Task<Stream> CreateContentReadStreamAsync(CancellationToken cancellationToken) => Task.FromResult<Stream>(TakeBody());

    protected override Stream CreateContentReadStream(CancellationToken cancellationToken) => TakeBody();

    protected override bool TryComputeLength(out long length)
    {
        length = 0;
        return false;
    }

    protected override void Dispose(bool disposing)
    {
        if (disposing)
        {
            _body?.Dispose();
        }

        base.Dispose(disposing);
    }
}
