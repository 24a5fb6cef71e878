namespace System.Net.Quic.Managed.Tests.Diagnostics;

/// <summary>Telemetry tests share process-wide statics and listeners: run them one at a time.</summary>
[CollectionDefinition(nameof(TelemetryCollection), DisableParallelization = true)]
public class TelemetryCollection
{
}
