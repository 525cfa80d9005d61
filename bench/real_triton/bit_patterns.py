"""NumPy has neither bfloat16 nor float8: their values as bit patterns
(uint16, uint8), as `kiln run` reads and writes them (`@x.npy:bf16`,
`@x.npy:fp8e4nv`). Shared by gpu_parity.py and numpy_check.py."""
import numpy as np


def bf16_bits(a):
    """float32 -> bfloat16 bit patterns, round to nearest even."""
    u = a.astype(np.float32).view(np.uint32).astype(np.uint64)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)


def bf16_values(bits):
    return (bits.astype(np.uint32) << 16).view(np.float32)


def e4m3_values():
    """The value of each e4m3fn code (the two NaN codes read as 0)."""
    codes = np.arange(256)
    sign = np.where(codes & 0x80, -1.0, 1.0)
    exp, man = (codes >> 3) & 0xF, codes & 7
    mag = np.where(exp == 0, man / 8.0 * 2.0 ** -6, (1 + man / 8.0) * 2.0 ** (exp - 7.0))
    return np.where((codes & 0x7F) == 0x7F, 0.0, sign * mag).astype(np.float32)


def e4m3_bits(rng, shape):
    """Random e4m3 codes, every one but the two NaNs (0x7F, 0xFF)."""
    b = rng.integers(0, 256, shape).astype(np.uint8)
    return np.where((b & 0x7F) == 0x7F, np.uint8(0), b)
