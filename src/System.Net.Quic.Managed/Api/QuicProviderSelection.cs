namespace System.Net.Quic.Managed;

/// <summary>
/// The provider switch: <c>QUIC_MANAGED_PROVIDER=msquic</c> (environment) or the AppContext switch
/// <c>System.Net.Quic.Managed.Provider</c> = "msquic" makes the public types delegate to System.Net.Quic.
/// Read once per process; the environment variable wins over the AppContext value.
/// </summary>
internal static class QuicProviderSelection
{
    public const string EnvironmentVariable = "QUIC_MANAGED_PROVIDER";
    public const string AppContextSwitch = "System.Net.Quic.Managed.Provider";

    private static readonly QuicProviderKind s_default = Read();

    public static QuicProviderKind Default => s_default;

    private static QuicProviderKind Read()
    {
        string? value = Environment.GetEnvironmentVariable(EnvironmentVariable);
        if (string.IsNullOrEmpty(value)) value = AppContext.GetData(AppContextSwitch) as string;
        return Parse(value);
    }

    public static QuicProviderKind Parse(string? value)
        => string.Equals(value?.Trim(), "msquic", StringComparison.OrdinalIgnoreCase) ? QuicProviderKind.MsQuic : QuicProviderKind.Managed;

    /// <summary>True when <paramref name="provider"/> can run here. The managed transport only needs UDP sockets.</summary>
    public static bool IsSupported(QuicProviderKind provider)
        => provider == QuicProviderKind.Managed || PlatformQuic.IsSupported;

    /// <summary>The exception for calls on a provider that cannot run here, with the reason.</summary>
    public static PlatformNotSupportedException NotSupported(QuicProviderKind provider)
        => new(provider == QuicProviderKind.MsQuic
            ? $"The msquic provider was selected ({EnvironmentVariable}=msquic or AppContext '{AppContextSwitch}') but System.Net.Quic is not supported here: {PlatformQuic.UnsupportedReason}"
            : "The managed QUIC transport is not supported on this platform.");
}
