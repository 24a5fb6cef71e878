using System.Diagnostics;
using System.Reflection;

namespace System.Net.Quic.Managed.Tests.Architecture;

/// <summary>
/// docs/ARCHITECTURE.md (the sans-IO contract): "no type in the core namespaces may use Socket, Task, Thread, Timer, Stopwatch, DateTime,
/// TimeProvider, locks or environment variables". Time is a parameter; I/O lives in Io/ and Api/.
/// </summary>
public class SansIoBoundaryTests
{
    private static readonly string[] s_coreNamespaces =
    {
        "System.Net.Quic.Managed.Wire", "System.Net.Quic.Managed.Crypto", "System.Net.Quic.Managed.Tls",
        "System.Net.Quic.Managed.Recovery", "System.Net.Quic.Managed.Streams", "System.Net.Quic.Managed.Core",
        "System.Net.Quic.Managed.Ids",
    };

    // Whole namespaces or types that the core must not touch.
    private static readonly string[] s_bannedTypePrefixes =
    {
        "System.Net.Sockets.", "System.Threading.Tasks.", "System.Threading.Thread", "System.Threading.Timer",
        "System.Threading.Monitor", "System.Threading.Lock", "System.Threading.SemaphoreSlim", "System.Threading.ThreadPool",
        "System.Timers.", "System.Diagnostics.Stopwatch", "System.TimeProvider", "System.Linq.",
        "System.Runtime.CompilerServices.AsyncTaskMethodBuilder", "System.Runtime.CompilerServices.AsyncValueTaskMethodBuilder",
    };

    // Members that read the clock or the environment (the types themselves may appear, e.g. X509 validity as DateTime).
    private static readonly string[] s_bannedMembers =
    {
        "System.DateTime::get_Now", "System.DateTime::get_UtcNow", "System.DateTime::get_Today",
        "System.DateTimeOffset::get_Now", "System.DateTimeOffset::get_UtcNow",
        "System.Environment::GetEnvironmentVariable", "System.Environment::GetEnvironmentVariables",
        "System.Environment::get_TickCount", "System.Environment::get_TickCount64",
    };

    internal static List<string> FindViolations(IEnumerable<Type> types)
    {
        var violations = new List<string>();
        foreach (Type type in types)
        {
            foreach ((string where, MemberInfo target) in IlReferenceScanner.References(type))
            {
                string? reason = Classify(target);
                if (reason is not null) violations.Add($"{where} -> {reason}");
            }
        }
        return violations;
    }

    private static string? Classify(MemberInfo target)
    {
        Type? type = target as Type ?? target.DeclaringType;
        while (type is { HasElementType: true }) type = type.GetElementType();
        if (type is null) return null;
        string typeName = (type.IsGenericType ? type.GetGenericTypeDefinition() : type).FullName ?? type.Name;
        foreach (string prefix in s_bannedTypePrefixes)
        {
            if (typeName.StartsWith(prefix, StringComparison.Ordinal)) return typeName;
        }
        if (target is not Type)
        {
            string member = $"{typeName}::{target.Name}";
            foreach (string banned in s_bannedMembers)
            {
                if (member == banned) return member;
            }
        }
        return null;
    }

    private static bool IsCore(Type t)
    {
        string ns = t.Namespace ?? "";
        foreach (string core in s_coreNamespaces)
        {
            if (ns == core || ns.StartsWith(core + ".", StringComparison.Ordinal)) return true;
        }
        return false;
    }

    [Fact]
    public void CoreNamespacesUseNoSocketsTasksThreadsTimersClockOrEnvironment()
    {
        Type[] core = typeof(System.Net.Quic.Managed.Wire.QuicVersion).Assembly.GetTypes().Where(IsCore).ToArray();
        Assert.NotEmpty(core);
        List<string> violations = FindViolations(core);
        Assert.True(violations.Count == 0, "Sans-IO boundary broken:\n" + string.Join("\n", violations.Distinct()));
    }

    // The scanner itself must be able to fail: a type that reads the clock, starts a task and reads the environment.
    private sealed class ClockReader
    {
        public long Read()
        {
            long t = Stopwatch.GetTimestamp() + DateTime.UtcNow.Ticks;
            Task.Run(() => { }).Wait();
            return t + (Environment.GetEnvironmentVariable("X")?.Length ?? 0);
        }
    }

    [Fact]
    public void ScannerDetectsClockTaskAndEnvironmentUse()
    {
        List<string> violations = FindViolations(new[] { typeof(ClockReader) });
        Assert.Contains(violations, v => v.Contains("System.Diagnostics.Stopwatch"));
        Assert.Contains(violations, v => v.Contains("System.DateTime::get_UtcNow"));
        Assert.Contains(violations, v => v.Contains("System.Threading.Tasks.Task"));
        Assert.Contains(violations, v => v.Contains("System.Environment::GetEnvironmentVariable"));
    }
}
