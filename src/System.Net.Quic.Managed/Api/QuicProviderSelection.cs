using System.IO;
using System.Net.Quic.Managed.Platform;

namespace System.Net.Quic.Managed;

/// <summary>
/// Which provider a listener or connection runs on. Precedence: the per-instance <see cref="QuicProvider"/>
/// argument, then the AppContext switch <see cref="AppContextSwitch"/>, then the environment variable
/// <see cref="EnvironmentVariable"/>; values are <c>managed</c> (the default) or <c>msquic</c>, case-insensitive.
/// An unrecognized value is ignored (the next source decides) rather than guessed at, with one warning per source: a
/// line on standard error and the EventSource's Warning event ProviderValueIgnored. The process default is read once,
/// at the first use of the API, and never again.
/// </summary>
internal static class QuicProviderSelection
{
    public const string EnvironmentVariable = "DOTNET_SYSTEM_NET_QUIC_PROVIDER";
    public const string AppContextSwitch = "System.Net.Quic.Managed.Provider";

    // Static readonly: the CLR runs the initializer once, on first access, so both sources are read exactly once.
    private static readonly QuicProvider s_default = ResolveProcessDefault();

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

    private static QuicProvider ResolveProcessDefault()
    {
        string? appContextValue = AppContext.GetData(AppContextSwitch)?.ToString();
        string? environmentValue = Environment.GetEnvironmentVariable(EnvironmentVariable);
        QuicProvider chosen = Resolve(null, appContextValue, environmentValue);
        Warn(AppContextSwitch, appContextValue, chosen);
        Warn(EnvironmentVariable, environmentValue, chosen);
        return chosen;
    }

    private static void Warn(string source, string? value, QuicProvider used)
    {
        if (IgnoredValueWarning(source, value, used) is not string warning) return;
        Diagnostics.QuicEventSource.Log.ProviderValueIgnored(source, value!, used.ToString());
        try
        {
            Console.Error.WriteLine(warning);
        }
        catch (IOException)
        {
            // No usable standard error: the EventSource event still says it.
        }
    }

    /// <summary>
    /// The warning for a provider setting that is set but names no provider (a typo: <c>msqiuc</c>), or null when the
    /// value is absent, blank or recognized. <paramref name="used"/> is the provider the process runs on instead.
    /// </summary>
    public static string? IgnoredValueWarning(string source, string? value, QuicProvider used)
        => string.IsNullOrWhiteSpace(value) || TryParse(value, out _)
            ? null
            : $"warning: QuicManaged: {source}='{value}' is not a QUIC provider (expected 'managed' or 'msquic'); it is ignored and the {used} provider is used.";

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
