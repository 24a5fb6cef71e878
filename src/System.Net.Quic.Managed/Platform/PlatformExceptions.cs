#pragma warning disable CA1416 // Reached only when PlatformQuic.IsSupported.
using System.Threading.Tasks;
using PlatformQuicException = System.Net.Quic.QuicException;

namespace System.Net.Quic.Managed.Platform;

/// <summary>System.Net.Quic's exceptions as ours: the same QuicError values, codes and message, the original as inner.</summary>
internal static class PlatformExceptions
{
    public static Exception Translate(Exception e) => e is PlatformQuicException q
        ? new QuicException((QuicError)(int)q.QuicError, q.ApplicationErrorCode, q.TransportErrorCode, q.Message, q)
        : e;

    public static async Task Translate(Task task)
    {
        try
        {
            await task.ConfigureAwait(false);
        }
        catch (PlatformQuicException e)
        {
            throw Translate(e);
        }
    }
}
