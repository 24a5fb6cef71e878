using System.IO;
using System.Threading;

namespace System.Net.Quic.Managed.Diagnostics;

/// <summary>
/// Appends NSS key log lines to a file shared by all connections of the process (thread-safe). Key logging exposes every
/// secret of the connection: the public API enables it only when the application opts in (an option or an AppContext
/// switch), never from the SSLKEYLOGFILE environment variable alone.
/// </summary>
internal sealed class KeyLogFile
{
    private readonly string _path;
    private readonly Lock _gate = new();

    public KeyLogFile(string path) => _path = path ?? throw new ArgumentNullException(nameof(path));

    public string Path => _path;

    public void WriteLine(string line)
    {
        lock (_gate)
        {
            File.AppendAllText(_path, line + "\n");
        }
    }
}
