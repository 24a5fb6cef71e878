using System.Runtime.CompilerServices;

namespace System.Net.Quic.Managed;

/// <summary>Initial receive (flow-control) window sizes for the connection and each stream type (RFC 9000 §4, §18.2).</summary>
public sealed class QuicReceiveWindowSizes
{
    /// <summary>The initial flow-control window for the connection (initial_max_data). Default 16 MiB.</summary>
    public int Connection { get; set; } = QuicDefaults.DefaultConnectionMaxData;

    /// <summary>The initial window for locally initiated bidirectional streams (initial_max_stream_data_bidi_local). Default 64 KiB.</summary>
    public int LocallyInitiatedBidirectionalStream { get; set; } = QuicDefaults.DefaultStreamMaxData;

    /// <summary>The initial window for remotely initiated bidirectional streams (initial_max_stream_data_bidi_remote). Default 64 KiB.</summary>
    public int RemotelyInitiatedBidirectionalStream { get; set; } = QuicDefaults.DefaultStreamMaxData;

    /// <summary>The initial window for (remotely initiated) unidirectional streams (initial_max_stream_data_uni). Default 64 KiB.</summary>
    public int UnidirectionalStream { get; set; } = QuicDefaults.DefaultStreamMaxData;

    internal void Validate(string argumentName)
    {
        ValidatePowerOf2(argumentName, Connection);
        ValidatePowerOf2(argumentName, LocallyInitiatedBidirectionalStream);
        ValidatePowerOf2(argumentName, RemotelyInitiatedBidirectionalStream);
        ValidatePowerOf2(argumentName, UnidirectionalStream);

        // System.Net.Quic requires powers of two (msquic's constraint); we keep the same rule so apps behave alike on both providers.
        static void ValidatePowerOf2(string argumentName, int value, [CallerArgumentExpression(nameof(value))] string? propertyName = null)
        {
            if (value <= 0 || ((value - 1) & value) != 0)
            {
                throw new ArgumentOutOfRangeException(argumentName, value,
                    $"'{nameof(QuicConnectionOptions.InitialReceiveWindowSizes)}.{propertyName}' must be a power of 2 greater than 0.");
            }
        }
    }
}
