using QuicManaged.Tools.QuicPerf.Transport;

namespace System.Net.Quic.Managed.Benchmarks;

/// <summary>Client side of the perf protocol (see <see cref="PerfRequestHeader"/>) as used by the benchmarks.</summary>
internal static class PerfClientOperations
{
    /// <summary>Uploads <paramref name="payload"/> bytes and waits for the server's 1-byte acknowledgement.</summary>
    public static async Task UploadAsync(Stream stream, long payload, bool last, byte[] scratch)
    {
        new PerfRequestHeader(payload, 1, last).Write(scratch);
        await PerfStreamOperations.WriteAsync(stream, scratch.AsMemory(0, PerfRequestHeader.Size), false, default).ConfigureAwait(false);
        await PerfStreamOperations.WriteRepeatedAsync(stream, payload, PerfRequestHandler.Payload, last, default).ConfigureAwait(false);
        await ReadExactlyAsync(stream, 1, scratch).ConfigureAwait(false);
        if (last) await ExpectEndAsync(stream, scratch).ConfigureAwait(false);
    }

    /// <summary>Sends a request of <paramref name="requestBytes"/> and reads the <paramref name="responseBytes"/> answer.</summary>
    public static async Task RequestAsync(Stream stream, int requestBytes, int responseBytes, bool last, byte[] scratch)
    {
        new PerfRequestHeader(requestBytes, responseBytes, last).Write(scratch);
        PerfRequestHandler.Payload.Span[..requestBytes].CopyTo(scratch.AsSpan(PerfRequestHeader.Size));
        await PerfStreamOperations.WriteAsync(stream, scratch.AsMemory(0, PerfRequestHeader.Size + requestBytes), last, default).ConfigureAwait(false);
        await ReadExactlyAsync(stream, responseBytes, scratch).ConfigureAwait(false);
        if (last) await ExpectEndAsync(stream, scratch).ConfigureAwait(false);
    }

    private static async Task ReadExactlyAsync(Stream stream, int count, byte[] scratch)
    {
        while (count > 0)
        {
            int n = await stream.ReadAsync(scratch.AsMemory(0, Math.Min(count, scratch.Length)), default).ConfigureAwait(false);
            if (n == 0) throw new EndOfStreamException($"stream ended {count} bytes early");
            count -= n;
        }
    }

    private static async Task ExpectEndAsync(Stream stream, byte[] scratch)
    {
        if (await stream.ReadAsync(scratch.AsMemory(0, 1), default).ConfigureAwait(false) != 0)
        {
            throw new InvalidDataException("the server sent more than asked for");
        }
    }
}
