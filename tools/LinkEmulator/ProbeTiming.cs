using System.Globalization;

namespace QuicManaged.Tools.LinkEmulator;

/// <summary>One measured exchange. All times in milliseconds from the client's view.</summary>
internal sealed class ProbeTiming
{
    /// <summary>Connect + TLS handshake complete (for QUIC: ConnectAsync returned).</summary>
    public double HandshakeMs;

    /// <summary>From the start of the connection attempt to the first response byte.</summary>
    public double TimeToFirstByteMs;

    /// <summary>From the request being written to the last response byte.</summary>
    public double TransferMs;

    /// <summary>From starting an orderly close to its completion (TCP: close_notify + FIN, until the peer's FIN).</summary>
    public double CloseMs;

    public long BytesReceived;

    public string Status = "ok";

    public static string CsvHeader => "protocol,delay_ms,loss_pct,size,rep,handshake_ms,ttfb_ms,transfer_ms,close_ms,bytes,status";

    public string ToCsv(string protocol, string delayMs, string lossPct, long size, int rep)
        => string.Join(',',
            protocol, delayMs, lossPct, size.ToString(CultureInfo.InvariantCulture), rep.ToString(CultureInfo.InvariantCulture),
            HandshakeMs.ToString("F3", CultureInfo.InvariantCulture), TimeToFirstByteMs.ToString("F3", CultureInfo.InvariantCulture),
            TransferMs.ToString("F3", CultureInfo.InvariantCulture), CloseMs.ToString("F3", CultureInfo.InvariantCulture),
            BytesReceived.ToString(CultureInfo.InvariantCulture), Status);
}
