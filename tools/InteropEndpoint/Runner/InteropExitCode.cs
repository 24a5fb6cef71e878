namespace QuicManaged.Interop.Runner;

/// <summary>Process exit codes, per the quic-interop-runner contract (127 = test case not supported).</summary>
internal static class InteropExitCode
{
    public const int Success = 0;
    /// <summary>A request failed, a file was incomplete, the transport failed, or the run timed out.</summary>
    public const int Failure = 1;
    /// <summary>The environment is incomplete or invalid (missing ROLE, REQUESTS, WWW, DOWNLOADS, CERTS...).</summary>
    public const int BadConfiguration = 2;
    public const int Unsupported = 127;
}
