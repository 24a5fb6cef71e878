using System.IO;
using System.Text.Json;

namespace System.Net.Quic.Managed.Diagnostics;

/// <summary>
/// Writes one connection's events as qlog (JSON-SEQ, RFC 7464: each record is 0x1E, a JSON text, LF) in the shape of the
/// qlog 0.3 main schema with the QUIC event definitions (draft-ietf-quic-qlog-quic-events), which qvis and the quic-go /
/// quiche tools read. Times are milliseconds relative to the connection's start.
/// </summary>
internal sealed class QlogTracer : IConnectionTracer
{
    private const byte RecordSeparator = 0x1E;

    private readonly Stream _stream;
    private readonly Utf8JsonWriter _json;
    private readonly long _startUs;
    private bool _disposed;

    public QlogTracer(Stream stream, bool isServer, string originalDestinationConnectionId, long startUs, string title = "QuicManaged")
    {
        _stream = stream;
        _startUs = startUs;
        _json = new Utf8JsonWriter(stream);
        BeginRecord();
        _json.WriteStartObject();
        _json.WriteString("qlog_version", "0.3");
        _json.WriteString("qlog_format", "JSON-SEQ");
        _json.WriteString("title", title);
        _json.WriteStartObject("trace");
        _json.WriteStartObject("vantage_point");
        _json.WriteString("name", "QuicManaged");
        _json.WriteString("type", isServer ? "server" : "client");
        _json.WriteEndObject();
        _json.WriteStartObject("common_fields");
        _json.WriteString("ODCID", originalDestinationConnectionId);
        _json.WriteString("time_format", "relative");
        _json.WriteNumber("reference_time", 0);
        _json.WriteString("protocol_type", "QUIC");
        _json.WriteEndObject();
        _json.WriteEndObject();
        _json.WriteEndObject();
        EndRecord();
    }

    /// <summary>Opens <c>{directory}/{odcid}_{client|server}.sqlog</c> (the file name convention of QLOGDIR).</summary>
    public static QlogTracer Create(string directory, bool isServer, string originalDestinationConnectionId, long startUs)
    {
        Directory.CreateDirectory(directory);
        string path = Path.Combine(directory, $"{originalDestinationConnectionId}_{(isServer ? "server" : "client")}.sqlog");
        return new QlogTracer(new FileStream(path, FileMode.Create, FileAccess.Write, FileShare.Read), isServer, originalDestinationConnectionId, startUs);
    }

    public void PacketSent(long nowUs, string packetType, long packetNumber, int length, ReadOnlySpan<ulong> frameTypes)
        => WritePacket(nowUs, "transport:packet_sent", packetType, packetNumber, length, frameTypes);

    public void PacketReceived(long nowUs, string packetType, long packetNumber, int length, ReadOnlySpan<ulong> frameTypes)
        => WritePacket(nowUs, "transport:packet_received", packetType, packetNumber, length, frameTypes);

    private void WritePacket(long nowUs, string name, string packetType, long packetNumber, int length, ReadOnlySpan<ulong> frameTypes)
    {
        BeginEvent(nowUs, name);
        WriteHeader(packetType, packetNumber);
        _json.WriteStartObject("raw");
        _json.WriteNumber("length", length);
        _json.WriteEndObject();
        _json.WriteStartArray("frames");
        foreach (ulong type in frameTypes)
        {
            _json.WriteStartObject();
            _json.WriteString("frame_type", FrameTypeName(type));
            _json.WriteEndObject();
        }
        _json.WriteEndArray();
        EndEvent();
    }

    public void PacketLost(long nowUs, string packetType, long packetNumber)
    {
        BeginEvent(nowUs, "recovery:packet_lost");
        WriteHeader(packetType, packetNumber);
        EndEvent();
    }

    public void MetricsUpdated(long nowUs, long smoothedRttUs, long latestRttUs, long congestionWindow, long bytesInFlight)
    {
        BeginEvent(nowUs, "recovery:metrics_updated");
        _json.WriteNumber("smoothed_rtt", smoothedRttUs / 1000.0);
        _json.WriteNumber("latest_rtt", latestRttUs / 1000.0);
        _json.WriteNumber("congestion_window", congestionWindow);
        _json.WriteNumber("bytes_in_flight", bytesInFlight);
        EndEvent();
    }

    public void KeyUpdated(long nowUs, int generation)
    {
        BeginEvent(nowUs, "security:key_updated");
        _json.WriteString("key_type", "client_1rtt_secret");
        _json.WriteNumber("generation", generation);
        _json.WriteString("trigger", "remote_update");
        EndEvent();
    }

    public void ConnectionClosed(long nowUs, bool byPeer, bool application, ulong errorCode, string? reason)
    {
        BeginEvent(nowUs, "connectivity:connection_closed");
        _json.WriteString("owner", byPeer ? "remote" : "local");
        if (application) _json.WriteNumber("application_code", errorCode);
        else _json.WriteNumber("connection_code", errorCode);
        if (reason is not null) _json.WriteString("reason", reason);
        EndEvent();
    }

    private void WriteHeader(string packetType, long packetNumber)
    {
        _json.WriteStartObject("header");
        _json.WriteString("packet_type", packetType);
        _json.WriteNumber("packet_number", packetNumber);
        _json.WriteEndObject();
    }

    private void BeginEvent(long nowUs, string name)
    {
        BeginRecord();
        _json.WriteStartObject();
        _json.WriteNumber("time", (nowUs - _startUs) / 1000.0);
        _json.WriteString("name", name);
        _json.WriteStartObject("data");
    }

    private void EndEvent()
    {
        _json.WriteEndObject();
        _json.WriteEndObject();
        EndRecord();
    }

    private void BeginRecord()
    {
        _json.Flush();
        _stream.WriteByte(RecordSeparator);
    }

    private void EndRecord()
    {
        _json.Flush();
        _json.Reset();
        _stream.WriteByte((byte)'\n');
    }

    /// <summary>qlog frame_type names for RFC 9000 §19 and RFC 9221 types.</summary>
    internal static string FrameTypeName(ulong type) => type switch
    {
        0x00 => "padding",
        0x01 => "ping",
        0x02 or 0x03 => "ack",
        0x04 => "reset_stream",
        0x05 => "stop_sending",
        0x06 => "crypto",
        0x07 => "new_token",
        >= 0x08 and <= 0x0f => "stream",
        0x10 => "max_data",
        0x11 => "max_stream_data",
        0x12 or 0x13 => "max_streams",
        0x14 => "data_blocked",
        0x15 => "stream_data_blocked",
        0x16 or 0x17 => "streams_blocked",
        0x18 => "new_connection_id",
        0x19 => "retire_connection_id",
        0x1a => "path_challenge",
        0x1b => "path_response",
        0x1c or 0x1d => "connection_close",
        0x1e => "handshake_done",
        0x30 or 0x31 => "datagram",
        _ => "unknown",
    };

    public void Dispose()
    {
        if (_disposed) return;
        _disposed = true;
        _json.Dispose();
        _stream.Dispose();
    }
}
