namespace QuicManaged.Tools.DatagramDumper;

/// <summary>Which endpoint sent a packet.</summary>
internal enum Sender
{
    Client = 0,
    Server = 1,
}
