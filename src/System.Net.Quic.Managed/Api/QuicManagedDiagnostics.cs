using System.Net.Quic.Managed.Core;
using System.Net.Quic.Managed.Diagnostics;

namespace System.Net.Quic.Managed;

/// <summary>
/// Diagnostics switches of this implementation (an extension: System.Net.Quic has no equivalent). Both apply to
/// connections created after they are set.
/// </summary>
public static class QuicManagedDiagnostics
{
    /// <summary>AppContext switch that opts in to key logging into the file named by SSLKEYLOGFILE.</summary>
    public const string KeyLogSwitch = "System.Net.Quic.Managed.EnableKeyLog";

    private static KeyLogFile? s_keyLog;
    private static string? s_keyLogPath;

    /// <summary>
    /// Writes every connection's TLS secrets to this file in NSS key log format (what Wireshark, tshark and
    /// DatagramDumper --keylog read). Anyone with the file can decrypt the traffic: set it only for debugging. Setting it
    /// is the opt-in; the SSLKEYLOGFILE environment variable alone never enables logging (see <see cref="KeyLogSwitch"/>).
    /// </summary>
    public static string? KeyLogFilePath
    {
        get => s_keyLogPath;
        set
        {
            s_keyLogPath = value;
            s_keyLog = value is null ? null : new KeyLogFile(value);
        }
    }

    /// <summary>Directory for one qlog file (JSON-SEQ) per connection; defaults to the QLOGDIR environment variable.</summary>
    public static string? QlogDirectory { get; set; } = Environment.GetEnvironmentVariable("QLOGDIR") is { Length: > 0 } dir ? dir : null;

    /// <summary>The key log sink for a new connection, or null when nobody opted in.</summary>
    internal static Action<string>? KeyLogSink
    {
        get
        {
            KeyLogFile? file = s_keyLog;
            if (file is null && AppContext.TryGetSwitch(KeyLogSwitch, out bool enabled) && enabled
                && Environment.GetEnvironmentVariable("SSLKEYLOGFILE") is { Length: > 0 } path)
            {
                file = s_keyLog = new KeyLogFile(path);
                s_keyLogPath = path;
            }
            return file is null ? null : file.WriteLine;
        }
    }

    /// <summary>Attaches a qlog tracer to a new core connection when a qlog directory is configured.</summary>
    internal static void AttachTracer(Connection connection, long nowUs)
    {
        if (QlogDirectory is not { } directory) return;
        try
        {
            connection.Tracer = QlogTracer.Create(directory, connection.IsServer, connection.OriginalDestinationId.ToString(), nowUs);
        }
        catch (Exception e) when (e is System.IO.IOException or UnauthorizedAccessException)
        {
            // Tracing is best effort: a directory we cannot write must not break the connection.
        }
    }
}
