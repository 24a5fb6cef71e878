namespace QuicManaged.Http.Qpack;

internal enum PrefixedIntegerStatus
{
    Done,
    /// <summary>The input ended inside the integer.</summary>
    Incomplete,
    /// <summary>The integer does not fit the 62-bit limit this implementation accepts.</summary>
    Overflow,
}
