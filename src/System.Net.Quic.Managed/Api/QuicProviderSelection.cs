namespace System.Net.Quic.Managed;

/// <summary>
/// Which provider a listener or connection runs on. Precedence (issue #5): the per-instance <see cref="QuicProvider"/>
/// argument, then the AppContext switch <see cref="AppContextSwitch"/>, then the environment variable
/// <see cref="EnvironmentVariable"/>; values are <c>managed</c> (the default) or <c>msquic</c>, case-insensitive.
/// An unrecognized value is ignored (the next source decides) rather than guessed at. The process default is read
/// once, at the first use of the API, and never again.
/// </summary>
internal static class QuicProviderSelection
{
    public const string EnvironmentVariable = "DOTNET_SYSTEM_NET_QUIC_PROVIDER";
    public const string AppContextSwitch = "System.Net.Quic.Managed.Provider";

    // Static readonly: the CLR runs the initializer once, on first access, so both sources are read exactly once.
    private static readonly QuicProvider s_default = Resolve(
        perInstance: null,
        appContextValue: AppContext.GetData(AppContextSwitch)?.ToString(),
        environmentValue: Environment.GetEnvironmentVariable(EnvironmentVariable));

    /// <summary>The process-wide provider when no per-instance choice is given.</summary>
    public static QuicProvider Default => s_default;

    /// <summary>The precedence order as a pure function: per-instance, then AppContext, then environment, then managed.</summary>
    public static QuicProvider Resolve(QuicProvider? perInstance, string? appContextValue, string? environmentValue)
    {
        if (perInstance is QuicProvider chosen) return chosen;
        if (TryParse(appContextValue, out QuicProvider fromAppContext)) return fromAppContext;
        if (TryParse(environmentValue, out QuicProvider fromEnvironment)) return fromEnvironment;
        return QuicProvider.Managed;
    }

    /// <summary>Parses <c>managed</c> or <c>msquic</c> (trimmed, case-insensitive); false for null, empty or anything else.</summary>
    public static bool TryParse(string? value, out QuicProvider provider)
    {
        ReadOnlySpan<char> text = value.AsSpan().Trim();
        if (text.Equals("managed", StringComparison.OrdinalIgnoreCase))
        {
            provider = QuicProvider.Managed;
            return true;
        }
        if (text.Equals("msquic", StringComparison.OrdinalIgnoreCase))
        {
            provider = QuicProvider.MsQuic;
            return true;
        }
        provider = QuicProvider.Managed;
        return false;
    }

    /// <summary>True when <paramref name="provider"/> can run here. The managed transport only needs UDP sockets.</summary>
    public static bool IsSupported(QuicProvider provider) => provider switch
    {
        QuicProvider.Managed => true,
        QuicProvider.MsQuic => PlatformQuic.IsSupported,
        _ => false,
    };

    /// <summary>Rejects a value outside the enum, then a provider that cannot run here, with the reason.</summary>
    public static void ThrowIfNotUsable(QuicProvider provider, string paramName)
    {
        if (provider is not (QuicProvider.Managed or QuicProvider.MsQuic)) throw new ArgumentOutOfRangeException(paramName, provider, "Unknown QUIC provider.");
        if (!IsSupported(provider)) throw NotSupported(provider);
    }

    /// <summary>The exception for calls on a provider that cannot run here, with the reason and how it was selected.</summary>
    public static PlatformNotSupportedException NotSupported(QuicProvider provider)
        => new(provider == QuicProvider.MsQuic
            ? $"The msquic provider was selected (QuicProvider.MsQuic, AppContext switch '{AppContextSwitch}' or {EnvironmentVariable}=msquic) but System.Net.Quic is not supported here: {PlatformQuic.UnsupportedReason}"
            : "The managed QUIC transport is not supported on this platform.");
}
