namespace System.Net.Quic.Managed.Tests.Wire;

/// <summary>Seeded mutations of valid encodings for decoder robustness tests: bit flips, truncation, extension,
/// overwrites with boundary bytes (varint prefixes, lengths around 20), and plain random input.</summary>
internal sealed class InputMutator
{
    private static readonly byte[] Interesting = [0x00, 0x01, 0x14, 0x15, 0x3f, 0x40, 0x7f, 0x80, 0xbf, 0xc0, 0xff];

    private readonly Random _random;

    public InputMutator(int seed) => _random = new Random(seed);

    public Random Random => _random;

    public byte[] Mutate(byte[] seed)
    {
        switch (_random.Next(7))
        {
            case 0:
                return FlipBits(seed, _random.Next(1, 5));
            case 1:
                return seed.AsSpan(0, _random.Next(seed.Length + 1)).ToArray();
            case 2:
            {
                byte[] longer = new byte[seed.Length + _random.Next(1, 33)];
                seed.CopyTo(longer, 0);
                _random.NextBytes(longer.AsSpan(seed.Length));
                return longer;
            }

            case 3:
            {
                byte[] noise = new byte[_random.Next(0, 96)];
                _random.NextBytes(noise);
                return noise;
            }

            case 4:
            {
                byte[] copy = (byte[])seed.Clone();
                for (int i = _random.Next(1, 4); i > 0 && copy.Length > 0; i--)
                {
                    copy[_random.Next(copy.Length)] = Interesting[_random.Next(Interesting.Length)];
                }

                return copy;
            }

            case 5:
            {
                byte[] flipped = FlipBits(seed, 1);
                return flipped.AsSpan(0, _random.Next(flipped.Length + 1)).ToArray();
            }

            default:
                return (byte[])seed.Clone();
        }
    }

    private byte[] FlipBits(byte[] seed, int count)
    {
        byte[] copy = (byte[])seed.Clone();
        for (int i = 0; i < count && copy.Length > 0; i++)
        {
            copy[_random.Next(copy.Length)] ^= (byte)(1 << _random.Next(8));
        }

        return copy;
    }
}
