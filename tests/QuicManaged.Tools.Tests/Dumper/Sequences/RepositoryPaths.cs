using System.Runtime.CompilerServices;

namespace System.Net.Quic.Managed.Tests.Dumper.Sequences;

internal static class RepositoryPaths
{
    /// <summary>The repository root (this file is tests/QuicManaged.Tools.Tests/Dumper/Sequences/RepositoryPaths.cs).</summary>
    public static string Root { get; } = Find();

    private static string Find([CallerFilePath] string path = "") =>
        Path.GetFullPath(Path.Combine(Path.GetDirectoryName(path)!, "..", "..", "..", ".."));
}
