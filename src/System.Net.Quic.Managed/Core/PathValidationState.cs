namespace System.Net.Quic.Managed.Core;

/// <summary>Where a path validation stands (RFC 9000 §8.2).</summary>
internal enum PathValidationState
{
    Idle,
    Pending,
    Validated,
    Failed,
}
