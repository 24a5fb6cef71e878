namespace System.Net.Quic.Managed.Platform;

/// <summary>What the platform's System.Net.Quic (libmsquic) offers on this machine.</summary>
internal static class PlatformQuic
{
    public static bool IsSupported => OperatingSystem.IsLinux() || OperatingSystem.IsWindows() || OperatingSystem.IsMacOS()
        ? System.Net.Quic.QuicConnection.IsSupported && System.Net.Quic.QuicListener.IsSupported
        : false;

    public static string UnsupportedReason => IsSupported ? "" : "libmsquic not loadable on this machine (System.Net.Quic.QuicConnection.IsSupported is false).";
}
