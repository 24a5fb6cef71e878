using System.Reflection;

namespace System.Net.Quic.Managed.Tests.Architecture;

/// <summary>
/// The library's layers (folders and namespaces) and the only references allowed between them: arrows point down
/// (docs/ARCHITECTURE.md). A type that refers to a layer above its own fails this test with the reference that did it.
/// </summary>
public class LayeringTests
{
    private const string Root = "System.Net.Quic.Managed";

    /// <summary>
    /// Each layer and the layers it may use (besides itself). Api is the root namespace: the public types and the
    /// provider contract (<c>QuicConnectionImpl</c>, <c>QuicListenerImpl</c>, <c>QuicStreamImpl</c>). Its two
    /// providers implement that contract, so they may use Api: Bridge (the managed provider: the public API's calls
    /// handed to the sans-IO core and its events back) and Platform (the msquic provider: adapters over the platform's
    /// System.Net.Quic), which uses nothing of this library but the contract.
    /// </summary>
    private static readonly Dictionary<string, string[]> s_allowed = new()
    {
        ["Api"] = new[] { "Bridge", "Platform", "Io", "Core", "Streams", "Recovery", "Ids", "Tls", "Crypto", "Wire", "Diagnostics" },
        ["Bridge"] = new[] { "Api", "Io", "Core", "Streams", "Recovery", "Ids", "Tls", "Crypto", "Wire", "Diagnostics" },
        ["Platform"] = new[] { "Api" },
        ["Io"] = new[] { "Core", "Wire", "Diagnostics" },
        ["Core"] = new[] { "Streams", "Recovery", "Ids", "Tls", "Crypto", "Wire", "Diagnostics" },
        ["Streams"] = new[] { "Wire" },
        ["Recovery"] = new[] { "Wire" },
        ["Ids"] = new[] { "Crypto", "Wire" },
        ["Tls"] = new[] { "Crypto", "Wire" },
        ["Crypto"] = new[] { "Wire" },
        ["Wire"] = Array.Empty<string>(),
        ["Diagnostics"] = new[] { "Wire" },
    };

    /// <summary>The layer of a library type, or null for types outside the library (BCL, generated code).</summary>
    internal static string? LayerOf(Type type)
    {
        while (type.IsNested) type = type.DeclaringType!;
        if (type.Assembly != typeof(QuicConnection).Assembly) return null;
        string ns = type.Namespace ?? "";
        if (ns == Root) return "Api";
        if (!ns.StartsWith(Root + ".", StringComparison.Ordinal)) return null;
        string rest = ns.Substring(Root.Length + 1);
        int dot = rest.IndexOf('.');
        return dot < 0 ? rest : rest.Substring(0, dot);
    }

    /// <summary>Every reference from <paramref name="types"/> into a layer its own layer may not use.</summary>
    internal static List<string> FindUpwardReferences(IEnumerable<Type> types, Func<Type, string?> layerOf)
    {
        var violations = new List<string>();
        foreach (Type type in types)
        {
            string? from = layerOf(type);
            if (from is null) continue;
            foreach ((string where, MemberInfo target) in IlReferenceScanner.References(type))
            {
                foreach (Type referenced in TypesIn(target))
                {
                    string? to = layerOf(referenced);
                    if (to is null || to == from) continue;
                    if (!s_allowed.TryGetValue(from, out string[]? allowed) || Array.IndexOf(allowed, to) < 0)
                    {
                        violations.Add($"{from} -> {to}: {where} uses {referenced.FullName}");
                    }
                }
            }
        }
        return violations;
    }

    private static IEnumerable<Type> TypesIn(MemberInfo target)
    {
        Type? type = target as Type ?? target.DeclaringType;
        if (type is null) yield break;
        foreach (Type t in Expand(type)) yield return t;
    }

    private static IEnumerable<Type> Expand(Type type)
    {
        while (type.HasElementType) type = type.GetElementType()!;
        yield return type;
        if (type.IsGenericType && !type.IsGenericTypeDefinition)
        {
            foreach (Type argument in type.GetGenericArguments())
            {
                foreach (Type t in Expand(argument)) yield return t;
            }
        }
    }

    [Fact]
    public void EveryLayerOfTheLibraryHasARow()
    {
        var layers = typeof(QuicConnection).Assembly.GetTypes().Select(LayerOf).Where(l => l is not null).Distinct().ToList();
        Assert.All(layers, l => Assert.True(s_allowed.ContainsKey(l!), $"layer {l} has no row in the table"));
        Assert.Equal(s_allowed.Count, layers.Count);
    }

    [Fact]
    public void NoLayerReferencesALayerAboveIt()
    {
        List<string> violations = FindUpwardReferences(typeof(QuicConnection).Assembly.GetTypes(), LayerOf);
        Assert.True(violations.Count == 0, "Layering broken:\n" + string.Join("\n", violations.Distinct().Take(50)));
    }

    // The test must be able to fail: a Wire type (pretended, by the layer function) that reaches up into Core and Api.
    private sealed class PretendWireType
    {
        public object Use() => (System.Net.Quic.Managed.Core.ConnectionPhase.Open, typeof(QuicConnection));
    }

    [Fact]
    public void AnAddedUpwardReferenceIsReported()
    {
        string? PretendLayer(Type t) => t == typeof(PretendWireType) ? "Wire" : LayerOf(t);
        List<string> violations = FindUpwardReferences(new[] { typeof(PretendWireType) }, PretendLayer);
        Assert.Contains(violations, v => v.StartsWith("Wire -> Core:", StringComparison.Ordinal));
        Assert.Contains(violations, v => v.StartsWith("Wire -> Api:", StringComparison.Ordinal));
    }
}
