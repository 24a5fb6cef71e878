using System.Reflection;
using Xunit.Abstractions;

namespace System.Net.Quic.Managed.Tests.Api;

/// <summary>
/// Porting an app must be a `using` swap: every public type and member of System.Net.Quic exists here with
/// the same shape (types from System.Net.Quic mapped to System.Net.Quic.Managed). Our extensions are listed
/// explicitly below so an accidental addition shows up too.
/// </summary>
public class PublicSurfaceTests
{
    private const string Theirs = "System.Net.Quic";
    private const string Ours = "System.Net.Quic.Managed";

    /// <summary>Public members we add beyond System.Net.Quic, each with its reason.</summary>
    private static readonly Dictionary<string, string> s_extensions = new()
    {
        ["method System.Net.Quic.Managed.QuicConnection.System.Net.Quic.Managed.QuicConnectionStatistics GetStatistics()"] = "connection counters (extension): datagrams, bytes, packets, losses, RTT, cwnd",
        ["type static class System.Net.Quic.Managed.QuicManagedDiagnostics : System.Object"] = "diagnostics switches of this implementation: key log file (opt-in) and qlog directory",
        ["field System.Net.Quic.Managed.QuicManagedDiagnostics.System.String KeyLogSwitch"] = "name of the AppContext switch that opts in to SSLKEYLOGFILE",
        ["property System.Net.Quic.Managed.QuicManagedDiagnostics.static System.String KeyLogFilePath {get;set;}"] = "opt-in key logging (NSS format)",
        ["property System.Net.Quic.Managed.QuicManagedDiagnostics.static System.String QlogDirectory {get;set;}"] = "qlog output directory (defaults to QLOGDIR)",
        ["method System.Net.Quic.Managed.QuicManagedDiagnostics.System.Boolean Equals(System.Object)"] = "reflection lists System.Object's members on the static class",
        ["method System.Net.Quic.Managed.QuicManagedDiagnostics.System.Int32 GetHashCode()"] = "reflection lists System.Object's members on the static class",
        ["method System.Net.Quic.Managed.QuicManagedDiagnostics.System.String ToString()"] = "reflection lists System.Object's members on the static class",
        ["method System.Net.Quic.Managed.QuicManagedDiagnostics.System.Type GetType()"] = "reflection lists System.Object's members on the static class",
        ["type sealed class System.Net.Quic.Managed.QuicConnectionStatistics : System.Object"] = "the statistics snapshot returned by QuicConnection.GetStatistics",
        ["method System.Net.Quic.Managed.QuicConnectionStatistics.System.Boolean Equals(System.Object)"] = "inherited from object",
        ["method System.Net.Quic.Managed.QuicConnectionStatistics.System.Int32 GetHashCode()"] = "inherited from object",
        ["method System.Net.Quic.Managed.QuicConnectionStatistics.System.String ToString()"] = "inherited from object",
        ["method System.Net.Quic.Managed.QuicConnectionStatistics.System.Type GetType()"] = "inherited from object",
        ["property System.Net.Quic.Managed.QuicConnectionStatistics.System.Int64 BytesReceived {get;}"] = "statistics counter",
        ["property System.Net.Quic.Managed.QuicConnectionStatistics.System.Int64 BytesSent {get;}"] = "statistics counter",
        ["property System.Net.Quic.Managed.QuicConnectionStatistics.System.Int64 CongestionWindow {get;}"] = "statistics counter",
        ["property System.Net.Quic.Managed.QuicConnectionStatistics.System.Int64 DatagramsReceived {get;}"] = "statistics counter",
        ["property System.Net.Quic.Managed.QuicConnectionStatistics.System.Int64 DatagramsSent {get;}"] = "statistics counter",
        ["property System.Net.Quic.Managed.QuicConnectionStatistics.System.Int64 PacketsLost {get;}"] = "statistics counter",
        ["property System.Net.Quic.Managed.QuicConnectionStatistics.System.Int64 PacketsReceived {get;}"] = "statistics counter",
        ["property System.Net.Quic.Managed.QuicConnectionStatistics.System.Int64 PacketsSent {get;}"] = "statistics counter",
        ["property System.Net.Quic.Managed.QuicConnectionStatistics.System.Int64 StreamBytesRetransmitted {get;}"] = "statistics counter",
        ["property System.Net.Quic.Managed.QuicConnectionStatistics.System.TimeSpan SmoothedRtt {get;}"] = "RFC 9002 §5.3 smoothed RTT",
        ["type enum System.Net.Quic.Managed.QuicProvider : System.Enum"] = "per-instance provider choice: one process runs both transports, as the benchmarks need",
        ["enum System.Net.Quic.Managed.QuicProvider.Managed = 0"] = "this library's transport",
        ["enum System.Net.Quic.Managed.QuicProvider.MsQuic = 1"] = "the platform's System.Net.Quic (libmsquic)",
        ["method System.Net.Quic.Managed.QuicConnection.static System.Threading.Tasks.ValueTask<System.Net.Quic.Managed.QuicConnection> ConnectAsync(System.Net.Quic.Managed.QuicClientConnectionOptions, System.Net.Quic.Managed.QuicProvider, System.Threading.CancellationToken=)"] = "per-instance provider: wins over the AppContext switch and DOTNET_SYSTEM_NET_QUIC_PROVIDER",
        ["method System.Net.Quic.Managed.QuicListener.static System.Threading.Tasks.ValueTask<System.Net.Quic.Managed.QuicListener> ListenAsync(System.Net.Quic.Managed.QuicListenerOptions, System.Net.Quic.Managed.QuicProvider, System.Threading.CancellationToken=)"] = "per-instance provider: wins over the AppContext switch and DOTNET_SYSTEM_NET_QUIC_PROVIDER",
        ["method System.Net.Quic.Managed.QuicConnection.static System.Boolean IsProviderSupported(System.Net.Quic.Managed.QuicProvider)"] = "IsSupported for an explicit provider (msquic needs libmsquic)",
        ["method System.Net.Quic.Managed.QuicListener.static System.Boolean IsProviderSupported(System.Net.Quic.Managed.QuicProvider)"] = "IsSupported for an explicit provider (msquic needs libmsquic)",
        ["type sealed class System.Net.Quic.Managed.QuicSessionTicketStore : System.Object"] = "session resumption (extension): the client's ticket store",
        ["ctor System.Net.Quic.Managed.QuicSessionTicketStore(System.Int32)"] = "ticket store with a per-server bound",
        ["method System.Net.Quic.Managed.QuicSessionTicketStore.System.Boolean Equals(System.Object)"] = "inherited from object",
        ["method System.Net.Quic.Managed.QuicSessionTicketStore.System.Int32 GetHashCode()"] = "inherited from object",
        ["method System.Net.Quic.Managed.QuicSessionTicketStore.System.String ToString()"] = "inherited from object",
        ["method System.Net.Quic.Managed.QuicSessionTicketStore.System.Type GetType()"] = "inherited from object",
        ["method System.Net.Quic.Managed.QuicSessionTicketStore.System.Void Clear()"] = "forget all tickets",
        ["property System.Net.Quic.Managed.QuicSessionTicketStore.System.Int32 Count {get;}"] = "tickets held",
        ["property System.Net.Quic.Managed.QuicClientConnectionOptions.System.Net.Quic.Managed.QuicSessionTicketStore SessionTicketStore {get;set;}"] = "opt-in session resumption",
        ["property System.Net.Quic.Managed.QuicClientConnectionOptions.System.Boolean EnableEarlyData {get;set;}"] = "opt-in 0-RTT on the client (replayable data)",
        ["property System.Net.Quic.Managed.QuicServerConnectionOptions.System.Boolean EnableEarlyData {get;set;}"] = "opt-in 0-RTT acceptance on the server",
        ["property System.Net.Quic.Managed.QuicConnection.System.Boolean IsResumed {get;}"] = "whether the handshake resumed a session",
        ["property System.Net.Quic.Managed.QuicConnection.System.Boolean IsEarlyDataAccepted {get;}"] = "whether 0-RTT data was accepted",
        ["method System.Net.Quic.Managed.QuicConnection.System.Threading.Tasks.ValueTask WaitForHandshakeAsync(System.Threading.CancellationToken=)"] = "ConnectAsync returns early with 0-RTT; this waits for the handshake",
        ["property System.Net.Quic.Managed.QuicConnectionStatistics.System.Int32 KeyUpdates {get;}"] = "RFC 9001 §6 key updates started or answered (shows UpdateKeysAsync and peer updates worked)",
        ["property System.Net.Quic.Managed.QuicConnectionStatistics.System.Boolean Retried {get;}"] = "RFC 9000 §8.1.2: the handshake went through a Retry (shows RequireRetry worked)",
        ["method System.Net.Quic.Managed.QuicConnection.System.Threading.Tasks.ValueTask<System.Boolean> UpdateKeysAsync(System.Threading.CancellationToken=)"] = "initiate an RFC 9001 §6 key update (interop keyupdate case; System.Net.Quic has no such call)",
        ["property System.Net.Quic.Managed.QuicListenerOptions.System.Boolean RequireRetry {get;set;}"] = "force RFC 9000 §8.1.2 address validation with Retry (interop retry case; System.Net.Quic has no such setting)",
        // Scale out: several sockets per listener, QUIC-LB connection IDs, fleet keys (docs/SCALING.md).
        ["property System.Net.Quic.Managed.QuicListenerOptions.System.Int32 ListenerSockets {get;set;}"] = "SO_REUSEPORT sockets (one driver thread each) behind one listener",
        ["property System.Net.Quic.Managed.QuicListenerOptions.System.Int64 MaxStreamBufferBytes {get;set;}"] = "listener-wide stream buffer memory limit: new clients refused past it (RFC 9000 §21.6)",
        ["property System.Net.Quic.Managed.QuicListenerOptions.System.Int32 ReusePortGroupSize {get;set;}"] = "SO_REUSEPORT group spanning processes: the sockets of all of them",
        ["property System.Net.Quic.Managed.QuicListenerOptions.System.Int32 ReusePortGroupIndex {get;set;}"] = "SO_REUSEPORT group spanning processes: this listener's first socket",
        ["property System.Net.Quic.Managed.QuicListenerOptions.System.Net.Quic.Managed.QuicLoadBalancingOptions LoadBalancing {get;set;}"] = "QUIC-LB routable connection IDs (draft-ietf-quic-load-balancers)",
        ["property System.Net.Quic.Managed.QuicListenerOptions.System.ReadOnlyMemory<System.Byte> StatelessResetKey {get;set;}"] = "fleet key: any server resets any server's connections (RFC 9000 §10.3.2)",
        ["property System.Net.Quic.Managed.QuicListenerOptions.System.ReadOnlyMemory<System.Byte> AddressValidationTokenKey {get;set;}"] = "fleet key: Retry and NEW_TOKEN tokens valid on every server (RFC 9000 §8.1.3)",
        ["type sealed class System.Net.Quic.Managed.QuicLoadBalancingOptions : System.Object"] = "the QUIC-LB configuration of a listener",
        ["ctor System.Net.Quic.Managed.QuicLoadBalancingOptions()"] = "the QUIC-LB configuration of a listener",
        ["property System.Net.Quic.Managed.QuicLoadBalancingOptions.System.Int32 ConfigRotation {get;set;}"] = "QUIC-LB config rotation codepoint",
        ["property System.Net.Quic.Managed.QuicLoadBalancingOptions.System.ReadOnlyMemory<System.Byte> ServerId {get;set;}"] = "QUIC-LB server ID",
        ["property System.Net.Quic.Managed.QuicLoadBalancingOptions.System.Int32 NonceLength {get;set;}"] = "QUIC-LB nonce length",
        ["property System.Net.Quic.Managed.QuicLoadBalancingOptions.System.ReadOnlyMemory<System.Byte> Key {get;set;}"] = "QUIC-LB AES-128 key (empty: plaintext)",
        ["property System.Net.Quic.Managed.QuicLoadBalancingOptions.System.Boolean EncodeLength {get;set;}"] = "QUIC-LB length self-description",
        ["method System.Net.Quic.Managed.QuicLoadBalancingOptions.System.Boolean Equals(System.Object)"] = "System.Object member of the new class",
        ["method System.Net.Quic.Managed.QuicLoadBalancingOptions.System.Int32 GetHashCode()"] = "System.Object member of the new class",
        ["method System.Net.Quic.Managed.QuicLoadBalancingOptions.System.String ToString()"] = "System.Object member of the new class",
        ["method System.Net.Quic.Managed.QuicLoadBalancingOptions.System.Type GetType()"] = "System.Object member of the new class",
        ["enum System.Net.Quic.Managed.QuicDatagramSendResult.Acknowledged = 0"] = "RFC 9221 datagram fate: acknowledged",
        ["enum System.Net.Quic.Managed.QuicDatagramSendResult.Dropped = 2"] = "RFC 9221 datagram fate: dropped unsent (send queue full)",
        ["enum System.Net.Quic.Managed.QuicDatagramSendResult.Lost = 1"] = "RFC 9221 datagram fate: lost, never retransmitted",
        ["method System.Net.Quic.Managed.QuicConnection.System.Threading.Tasks.ValueTask<System.Net.Quic.Managed.QuicDatagramSendResult> SendDatagramAsync(System.ReadOnlyMemory<System.Byte>, System.Threading.CancellationToken=)"] = "DATAGRAM send (shape of dotnet/runtime#53533; msquic provider: NotSupportedException)",
        ["method System.Net.Quic.Managed.QuicConnection.System.Threading.Tasks.ValueTask<System.ReadOnlyMemory<System.Byte>> ReceiveDatagramAsync(System.Threading.CancellationToken=)"] = "DATAGRAM receive with a bounded queue",
        ["property System.Net.Quic.Managed.QuicClientConnectionOptions.System.Int32 DatagramReceiveQueueCapacity {get;set;}"] = "inherited DATAGRAM option",
        ["property System.Net.Quic.Managed.QuicClientConnectionOptions.System.Int32 MaxDatagramFrameSize {get;set;}"] = "inherited DATAGRAM option",
        ["property System.Net.Quic.Managed.QuicServerConnectionOptions.System.Int32 DatagramReceiveQueueCapacity {get;set;}"] = "inherited DATAGRAM option",
        ["property System.Net.Quic.Managed.QuicServerConnectionOptions.System.Int32 MaxDatagramFrameSize {get;set;}"] = "inherited DATAGRAM option",
        ["property System.Net.Quic.Managed.QuicConnection.System.Int32 MaxDatagramSize {get;}"] = "largest datagram payload sendable now, 0 when DATAGRAM is not negotiated",
        ["property System.Net.Quic.Managed.QuicConnectionOptions.System.Int32 DatagramReceiveQueueCapacity {get;set;}"] = "bound of the received-datagram queue (oldest dropped)",
        ["property System.Net.Quic.Managed.QuicConnectionOptions.System.Int32 MaxDatagramFrameSize {get;set;}"] = "opt-in DATAGRAM: the max_datagram_frame_size we advertise (RFC 9221 §3)",
        ["property System.Net.Quic.Managed.QuicConnectionStatistics.System.Int64 DatagramFramesAcknowledged {get;}"] = "statistics counter",
        ["property System.Net.Quic.Managed.QuicConnectionStatistics.System.Int64 DatagramFramesLost {get;}"] = "statistics counter",
        ["property System.Net.Quic.Managed.QuicConnectionStatistics.System.Int64 DatagramFramesReceived {get;}"] = "statistics counter",
        ["property System.Net.Quic.Managed.QuicConnectionStatistics.System.Int64 DatagramFramesSent {get;}"] = "statistics counter",
        ["property System.Net.Quic.Managed.QuicConnectionStatistics.System.Int64 DatagramsReceiveDropped {get;}"] = "statistics counter",
        ["property System.Net.Quic.Managed.QuicConnectionStatistics.System.Int64 DatagramsSendDropped {get;}"] = "statistics counter",
        ["type enum System.Net.Quic.Managed.QuicDatagramSendResult : System.Enum"] = "the result of SendDatagramAsync",
        ["type enum System.Net.Quic.Managed.QuicProtocolVersion : System.Enum"] = "QUIC versions for v2 / compatible version negotiation",
        ["enum System.Net.Quic.Managed.QuicProtocolVersion.Version1 = 1"] = "RFC 9000",
        ["enum System.Net.Quic.Managed.QuicProtocolVersion.Version2 = 1798521807"] = "RFC 9369",
        ["property System.Net.Quic.Managed.QuicClientConnectionOptions.System.Collections.Generic.IList<System.Net.Quic.Managed.QuicProtocolVersion> ProtocolVersions {get;set;}"] = "versions offered (first = first Initial), listed in version_information (RFC 9368)",
        ["property System.Net.Quic.Managed.QuicListenerOptions.System.Collections.Generic.IList<System.Net.Quic.Managed.QuicProtocolVersion> ProtocolVersions {get;set;}"] = "versions served in preference order: compatible upgrade (RFC 9368)",
        ["property System.Net.Quic.Managed.QuicConnection.System.Net.Quic.Managed.QuicProtocolVersion NegotiatedProtocolVersion {get;}"] = "the QUIC version in use",
        ["property System.Net.Quic.Managed.QuicConnectionOptions.System.Boolean EnableEcn {get;set;}"] = "ECN on/off (RFC 9000 §13.4)",
        ["property System.Net.Quic.Managed.QuicConnectionOptions.System.Int32 MaxPathDatagramSize {get;set;}"] = "largest UDP payload path MTU discovery probes for (RFC 8899)",
        ["property System.Net.Quic.Managed.QuicClientConnectionOptions.System.Boolean EnableEcn {get;set;}"] = "ECN on/off (RFC 9000 §13.4)",
        ["property System.Net.Quic.Managed.QuicClientConnectionOptions.System.Int32 MaxPathDatagramSize {get;set;}"] = "largest UDP payload path MTU discovery probes for (RFC 8899)",
        ["property System.Net.Quic.Managed.QuicServerConnectionOptions.System.Boolean EnableEcn {get;set;}"] = "ECN on/off (RFC 9000 §13.4)",
        ["property System.Net.Quic.Managed.QuicServerConnectionOptions.System.Int32 MaxPathDatagramSize {get;set;}"] = "largest UDP payload path MTU discovery probes for (RFC 8899)",
        ["property System.Net.Quic.Managed.QuicConnectionStatistics.System.Int64 EcnEct0PacketsReceived {get;}"] = "ECN / path MTU statistics",
        ["property System.Net.Quic.Managed.QuicConnectionStatistics.System.Int64 EcnCePacketsReceived {get;}"] = "ECN / path MTU statistics",
        ["property System.Net.Quic.Managed.QuicConnectionStatistics.System.Int64 EcnEct0PacketsReportedByPeer {get;}"] = "ECN / path MTU statistics",
        ["property System.Net.Quic.Managed.QuicConnectionStatistics.System.Int64 EcnCePacketsReportedByPeer {get;}"] = "ECN / path MTU statistics",
        ["property System.Net.Quic.Managed.QuicConnectionStatistics.System.Boolean EcnValidated {get;}"] = "ECN / path MTU statistics",
        ["property System.Net.Quic.Managed.QuicConnectionStatistics.System.Int32 PathMaxDatagramSize {get;}"] = "ECN / path MTU statistics",
        ["type enum System.Net.Quic.Managed.QuicCongestionControlAlgorithm : System.Enum"] = "congestion control choice",
        ["enum System.Net.Quic.Managed.QuicCongestionControlAlgorithm.Cubic = 0"] = "RFC 9438 CUBIC (default)",
        ["enum System.Net.Quic.Managed.QuicCongestionControlAlgorithm.NewReno = 1"] = "RFC 9002 NewReno",
        ["enum System.Net.Quic.Managed.QuicCongestionControlAlgorithm.Bbr = 2"] = "BBRv3 (draft-ietf-ccwg-bbr)",
        ["property System.Net.Quic.Managed.QuicConnectionOptions.System.Net.Quic.Managed.QuicCongestionControlAlgorithm CongestionControlAlgorithm {get;set;}"] = "per-connection congestion controller",
        ["property System.Net.Quic.Managed.QuicClientConnectionOptions.System.Net.Quic.Managed.QuicCongestionControlAlgorithm CongestionControlAlgorithm {get;set;}"] = "per-connection congestion controller",
        ["property System.Net.Quic.Managed.QuicServerConnectionOptions.System.Net.Quic.Managed.QuicCongestionControlAlgorithm CongestionControlAlgorithm {get;set;}"] = "per-connection congestion controller",
        ["method System.Net.Quic.Managed.QuicConnection.System.Threading.Tasks.ValueTask MigrateAsync(System.Net.IPEndPoint=, System.Threading.CancellationToken=)"] = "active client migration to a new local socket (RFC 9000 §9.2)",
        ["property System.Net.Quic.Managed.QuicClientConnectionOptions.System.Boolean DisablePreferredAddressMigration {get;set;}"] = "ignore the server's preferred address (RFC 9000 §9.6)",
        ["property System.Net.Quic.Managed.QuicListenerOptions.System.Net.IPEndPoint PreferredAddress {get;set;}"] = "server's preferred address: second socket, advertised (RFC 9000 §9.6)",
        ["property System.Net.Quic.Managed.QuicStream.System.Net.Quic.Managed.QuicStreamPriority Priority {get;set;}"] = "per-stream send priority, RFC 9218 model (msquic provider: stored, not applied)",
        ["type struct System.Net.Quic.Managed.QuicStreamPriority : System.ValueType"] = "stream priority value: urgency 0..7 and incremental flag",
        ["implements System.Net.Quic.Managed.QuicStreamPriority System.IEquatable<System.Net.Quic.Managed.QuicStreamPriority>"] = "value equality of priorities",
        ["ctor System.Net.Quic.Managed.QuicStreamPriority(System.Int32, System.Boolean)"] = "urgency (ArgumentOutOfRangeException outside 0..7) and incremental flag",
        ["field System.Net.Quic.Managed.QuicStreamPriority.System.Int32 DefaultUrgency"] = "RFC 9218 default urgency 3",
        ["field System.Net.Quic.Managed.QuicStreamPriority.System.Int32 MinUrgency"] = "most urgent level 0",
        ["field System.Net.Quic.Managed.QuicStreamPriority.System.Int32 MaxUrgency"] = "least urgent level 7",
        ["property System.Net.Quic.Managed.QuicStreamPriority.static System.Net.Quic.Managed.QuicStreamPriority Default {get;}"] = "urgency 3, incremental (= default(QuicStreamPriority))",
        ["property System.Net.Quic.Managed.QuicStreamPriority.System.Int32 Urgency {get;}"] = "urgency 0..7",
        ["property System.Net.Quic.Managed.QuicStreamPriority.System.Boolean Incremental {get;}"] = "round-robin within the urgency (true) or one stream at a time (false)",
        ["method System.Net.Quic.Managed.QuicStreamPriority.System.Boolean Equals(System.Net.Quic.Managed.QuicStreamPriority)"] = "IEquatable",
        ["method System.Net.Quic.Managed.QuicStreamPriority.System.Boolean Equals(System.Object)"] = "value equality",
        ["method System.Net.Quic.Managed.QuicStreamPriority.System.Int32 GetHashCode()"] = "value equality",
        ["method System.Net.Quic.Managed.QuicStreamPriority.System.String ToString()"] = "RFC 9218 Priority field syntax",
        ["method System.Net.Quic.Managed.QuicStreamPriority.System.Type GetType()"] = "inherited from object",
    };

    private readonly ITestOutputHelper _output;

    public PublicSurfaceTests(ITestOutputHelper output) => _output = output;

    private static string Map(Type t)
    {
        if (t.IsByRef) return Map(t.GetElementType()!) + "&";
        if (t.IsArray) return Map(t.GetElementType()!) + "[]";
        if (t.IsGenericParameter) return t.Name;
        string ns = t.Namespace == Theirs ? Ours : t.Namespace ?? "";
        string name = t.IsGenericType ? t.Name[..t.Name.IndexOf('`')] : t.Name;
        if (t.IsNested) name = Map(t.DeclaringType!) + "+" + name; else name = ns + "." + name;
        if (t.IsGenericType) name += "<" + string.Join(",", t.GetGenericArguments().Select(Map)) + ">";
        return name;
    }

    private static string Kind(Type t) =>
        t.IsEnum ? "enum" : t.IsValueType ? "struct" : t.IsInterface ? "interface"
        : (t.IsAbstract && t.IsSealed) ? "static class" : t.IsAbstract ? "abstract class" : t.IsSealed ? "sealed class" : "class";

    private static IEnumerable<string> Describe(Type t)
    {
        yield return $"type {Kind(t)} {Map(t)} : {(t.BaseType is null ? "" : Map(t.BaseType))}";
        if (t.IsEnum)
        {
            foreach (string n in Enum.GetNames(t)) yield return $"enum {Map(t)}.{n} = {Convert.ToInt64(Enum.Parse(t, n))}";
            yield break;
        }
        foreach (Type i in t.GetInterfaces()) yield return $"implements {Map(t)} {Map(i)}";
        const BindingFlags flags = BindingFlags.Public | BindingFlags.Instance | BindingFlags.Static;
        foreach (MemberInfo m in t.GetMembers(flags))
        {
            switch (m)
            {
                case MethodInfo mi when !mi.IsSpecialName:
                    yield return $"method {Map(t)}.{(mi.IsStatic ? "static " : "")}{Map(mi.ReturnType)} {mi.Name}({string.Join(", ", mi.GetParameters().Select(p => Map(p.ParameterType) + (p.HasDefaultValue ? "=" + p.DefaultValue : "")))})";
                    break;
                case PropertyInfo p:
                    bool init = p.SetMethod?.ReturnParameter.GetRequiredCustomModifiers().Any(x => x.Name == "IsExternalInit") == true;
                    string accessors = (p.GetMethod?.IsPublic == true ? "get;" : "") + (p.SetMethod?.IsPublic == true ? (init ? "init;" : "set;") : "");
                    yield return $"property {Map(t)}.{(p.GetMethod?.IsStatic == true ? "static " : "")}{Map(p.PropertyType)} {p.Name} {{{accessors}}}";
                    break;
                case ConstructorInfo c:
                    yield return $"ctor {Map(t)}({string.Join(", ", c.GetParameters().Select(p => Map(p.ParameterType)))})";
                    break;
                case FieldInfo f:
                    yield return $"field {Map(t)}.{Map(f.FieldType)} {f.Name}";
                    break;
                case EventInfo e:
                    yield return $"event {Map(t)}.{e.Name}";
                    break;
            }
        }
    }

    private static HashSet<string> Surface(Assembly assembly, string ns) =>
        assembly.GetExportedTypes().Where(t => t.Namespace == ns).SelectMany(Describe).ToHashSet();

    [Fact]
    public void OurSurfaceMatchesSystemNetQuic()
    {
        HashSet<string> theirs = Surface(typeof(System.Net.Quic.QuicError).Assembly, Theirs);
        HashSet<string> ours = Surface(typeof(QuicError).Assembly, Ours);
        Assert.True(theirs.Count > 100, $"reflection found only {theirs.Count} members of System.Net.Quic");

        List<string> missing = theirs.Except(ours).OrderBy(s => s).ToList();
        List<string> extra = ours.Except(theirs).Where(s => !s_extensions.ContainsKey(s)).OrderBy(s => s).ToList();
        foreach (string m in missing) _output.WriteLine("missing: " + m);
        foreach (string e in extra) _output.WriteLine("extra (not listed as an extension): " + e);
        Assert.True(missing.Count == 0 && extra.Count == 0,
            $"{missing.Count} members missing, {extra.Count} unlisted extras:\n" + string.Join("\n", missing.Select(m => "- " + m).Concat(extra.Select(e => "+ " + e))));
    }

    [Fact]
    public void ListedExtensionsExist()
    {
        HashSet<string> ours = Surface(typeof(QuicError).Assembly, Ours);
        foreach (string extension in s_extensions.Keys) Assert.Contains(extension, ours);
    }
}
