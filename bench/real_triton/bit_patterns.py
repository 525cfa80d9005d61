"""NumPy has neither bfloat16 nor float8: their values as bit patterns
(uint16, uint8), as `kiln run` reads and writes them (`@x.npy:bf16`,
`@x.npy:fp8e4nv`). Shared by gpu_parity.py, numpy_check.py and
bench/{gpu,lang}_cases.py."""
import numpy as np


def bf16_bits(a):
    """float32 -> bfloat16 bit patterns, round to nearest even."""
    u = a.astype(np.float32).view(np.uint32).astype(np.uint64)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)


def bf16_values(bits):
    return (bits.astype(np.uint32) << 16).view(np.float32)


def fp8_values(codes, e5=False):
    """The float32 value of fp8 codes: e4m3fn (S.1111.111 is NaN, no inf)
    or, with e5, e5m2 (IEEE-like: exponent all ones is inf or NaN)."""
    c = np.asarray(codes).astype(np.int64)
    mbits, bias = (2, 15) if e5 else (3, 7)
    emax, mmax = (1 << (7 - mbits)) - 1, (1 << mbits) - 1
    exp, man = (c >> mbits) & emax, c & mmax
    mag = np.where(exp == 0, man * 2.0 ** (1 - bias - mbits), (1 + man / 2.0 ** mbits) * 2.0 ** (exp - bias))
    if e5:
        mag = np.where(exp == emax, np.where(man == 0, np.inf, np.nan), mag)
    else:
        mag = np.where((exp == emax) & (man == mmax), np.nan, mag)
    return np.where(c & 0x80, -mag, mag).astype(np.float32)


def e4m3_values():
    """The value of each e4m3fn code (the two NaN codes read as 0)."""
    return np.nan_to_num(fp8_values(np.arange(256)), nan=0.0)


def e4m3_bits(rng, shape):
    """Random e4m3 codes, every one but the two NaNs (0x7F, 0xFF)."""
    b = rng.integers(0, 256, shape).astype(np.uint8)
    return np.where((b & 0x7F) == 0x7F, np.uint8(0), b)
