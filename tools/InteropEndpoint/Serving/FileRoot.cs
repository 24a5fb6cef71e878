namespace QuicManaged.Interop.Serving;

/// <summary>Maps request paths to files under one directory, refusing anything that resolves outside it.</summary>
internal sealed class FileRoot
{
    private readonly string _root;

    public FileRoot(string directory)
    {
        _root = Path.GetFullPath(directory);
        if (!_root.EndsWith(Path.DirectorySeparatorChar))
        {
            _root += Path.DirectorySeparatorChar;
        }
    }

    public string Directory => _root;

    /// <summary>Resolves an origin-form path ("/a/b.txt", optional query) to an existing file under the root.</summary>
    public bool TryResolve(string requestPath, out string fullPath)
    {
        fullPath = string.Empty;
        if (!TryMapToRelative(requestPath, out string relative))
        {
            return false;
        }

        string candidate = Path.GetFullPath(Path.Combine(_root, relative));
        if (!candidate.StartsWith(_root, StringComparison.Ordinal) || !File.Exists(candidate))
        {
            return false;
        }

        fullPath = candidate;
        return true;
    }

    /// <summary>
    /// The path below the root for a request path, or false for anything that is not a plain relative file name
    /// (no "..", no backslash, no NUL, no empty name).
    /// </summary>
    public static bool TryMapToRelative(string requestPath, out string relative)
    {
        relative = string.Empty;
        int cut = requestPath.IndexOfAny(['?', '#']);
        string path = cut >= 0 ? requestPath.Substring(0, cut) : requestPath;
        if (path.Length < 2 || path[0] != '/')
        {
            return false;
        }

        string decoded;
        try
        {
            decoded = Uri.UnescapeDataString(path.Substring(1));
        }
        catch (UriFormatException)
        {
            return false;
        }

        if (decoded.Length == 0 || decoded.Contains('\0') || decoded.Contains('\\') || decoded.StartsWith('/'))
        {
            return false;
        }

        foreach (string segment in decoded.Split('/'))
        {
            if (segment.Length == 0 || segment == "." || segment == "..")
            {
                return false;
            }
        }

        relative = decoded.Replace('/', Path.DirectorySeparatorChar);
        return true;
    }
}
