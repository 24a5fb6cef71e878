namespace System.Net.Quic.Managed.Wire;

/// <summary>Transport parameter identifiers. RFC 9000 §18.2, RFC 9221 §3, RFC 9287 §3.</summary>
internal enum TransportParameterId : ulong
{
    OriginalDestinationConnectionId = 0x00,
    MaxIdleTimeout = 0x01,
    StatelessResetToken = 0x02,
    MaxUdpPayloadSize = 0x03,
    InitialMaxData = 0x04,
    InitialMaxStreamDataBidiLocal = 0x05,
    InitialMaxStreamDataBidiRemote = 0x06,
    InitialMaxStreamDataUni = 0x07,
    InitialMaxStreamsBidi = 0x08,
    InitialMaxStreamsUni = 0x09,
    AckDelayExponent = 0x0a,
    MaxAckDelay = 0x0b,
    DisableActiveMigration = 0x0c,
    PreferredAddress = 0x0d,
    ActiveConnectionIdLimit = 0x0e,
    InitialSourceConnectionId = 0x0f,
    RetrySourceConnectionId = 0x10,

    /// <summary>version_information: Chosen Version then Available Versions, 32 bits each. RFC 9368 §3.</summary>
    VersionInformation = 0x11,
    MaxDatagramFrameSize = 0x20,
    GreaseQuicBit = 0x2ab2,
}
