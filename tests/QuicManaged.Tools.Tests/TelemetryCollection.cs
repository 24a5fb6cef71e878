namespace System.Net.Quic.Managed.Tests.Diagnostics;

/// <summary>The dumper tests that listen to the library's EventSource share process-wide listeners: run them one at a
/// time (the library's tests have the same collection for their own telemetry tests).</summary>
[CollectionDefinition(nameof(TelemetryCollection), DisableParallelization = true)]
public class TelemetryCollection
{
}
