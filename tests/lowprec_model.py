"""The low-precision formats as their zarr-extensions READMEs describe them, for the reference:
every bit pattern decoded by hand from the README's rules, sharing no code with zdt.

Each row: exponent bits, mantissa bits, bias, and the README's special values. A format's value
table maps every (logical) bit pattern to ('num', Fraction), ('inf', neg) or ('nan',).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from functools import cache

import ml_dtypes
import numpy as np


@dataclass(frozen=True)
class Model:
    name: str
    kind: str                 # 'int' or 'float'
    bits: int
    signed: bool = True
    exp_bits: int = 0
    man_bits: int = 0
    bias: int = 0
    # README rules
    ieee: bool = False        # "IEEE 754-compliant, with NaN and +/-inf": exponent all ones is special
    nan_all_ones: bool = False   # fn: NaN is S.1111.111 only (no infinity)
    nan_neg_zero: bool = False   # fnuz: NaN is 0b1000'0000, no negative zero
    e8m0: bool = False        # unsigned, no mantissa, no zero, no subnormals, NaN 0xff
    nan_json: int | None = None  # the bit pattern "NaN" means (README)

    @property
    def itemsize(self) -> int:
        return 2 if self.bits == 16 else 1

    @property
    def dtype(self) -> np.dtype:
        return np.dtype(getattr(ml_dtypes, self.name))


MODELS = {m.name: m for m in [
    Model("int2", "int", 2), Model("int4", "int", 4),
    Model("uint2", "int", 2, signed=False), Model("uint4", "int", 4, signed=False),
    Model("bfloat16", "float", 16, exp_bits=8, man_bits=7, bias=127, ieee=True, nan_json=0x7FC0),
    Model("float8_e3m4", "float", 8, exp_bits=3, man_bits=4, bias=3, ieee=True, nan_json=0x78),
    Model("float8_e4m3", "float", 8, exp_bits=4, man_bits=3, bias=7, ieee=True, nan_json=0x7C),
    Model("float8_e5m2", "float", 8, exp_bits=5, man_bits=2, bias=15, ieee=True, nan_json=0x7E),
    Model("float8_e4m3fn", "float", 8, exp_bits=4, man_bits=3, bias=7, nan_all_ones=True, nan_json=0x7F),
    Model("float8_e4m3fnuz", "float", 8, exp_bits=4, man_bits=3, bias=8, nan_neg_zero=True, nan_json=0x80),
    Model("float8_e4m3b11fnuz", "float", 8, exp_bits=4, man_bits=3, bias=11, nan_neg_zero=True, nan_json=0x80),
    Model("float8_e5m2fnuz", "float", 8, exp_bits=5, man_bits=2, bias=16, nan_neg_zero=True, nan_json=0x80),
    Model("float8_e8m0fnu", "float", 8, signed=False, exp_bits=8, man_bits=0, bias=127, e8m0=True, nan_json=0xFF),
    Model("float6_e2m3fn", "float", 6, exp_bits=2, man_bits=3, bias=1),
    Model("float6_e3m2fn", "float", 6, exp_bits=3, man_bits=2, bias=3),
    Model("float4_e2m1fn", "float", 4, exp_bits=2, man_bits=1, bias=1),
]}


def decode_bits(m: Model, bits: int) -> tuple:
    """The README's meaning of a logical bit pattern."""
    bits &= (1 << m.bits) - 1
    if m.kind == "int":
        if m.signed and bits >> (m.bits - 1):
            return ("num", Fraction(bits - (1 << m.bits)))
        return ("num", Fraction(bits))
    if m.e8m0:
        if bits == 0xFF:
            return ("nan",)
        return ("num", Fraction(2) ** (bits - m.bias))
    neg = bool(bits >> (m.bits - 1))
    e = (bits >> m.man_bits) & ((1 << m.exp_bits) - 1)
    f = bits & ((1 << m.man_bits) - 1)
    e_all = (1 << m.exp_bits) - 1
    if m.ieee and e == e_all:
        return ("nan",) if f else ("inf", neg)
    if m.nan_all_ones and e == e_all and f == (1 << m.man_bits) - 1:
        return ("nan",)
    if m.nan_neg_zero and bits == 1 << (m.bits - 1):
        return ("nan",)
    if e == 0:
        mag = Fraction(f, 1 << m.man_bits) * Fraction(2) ** (1 - m.bias)
    else:
        mag = (1 + Fraction(f, 1 << m.man_bits)) * Fraction(2) ** (e - m.bias)
    if mag == 0:
        return ("zero", neg)
    return ("num", -mag if neg else mag)


@cache
def table(name: str) -> dict[int, tuple]:
    m = MODELS[name]
    return {b: decode_bits(m, b) for b in range(1 << m.bits)}


@cache
def finite_values(name: str) -> dict[Fraction, int]:
    """Every finite value -> its bit pattern (zeros: +0's pattern)."""
    out: dict[Fraction, int] = {}
    for b, v in sorted(table(name).items(), reverse=True):
        if v[0] == "num":
            out[v[1]] = b
        elif v[0] == "zero" and not v[1]:
            out[Fraction(0)] = b
    return out


def neg_zero_bits(name: str) -> int | None:
    for b, v in table(name).items():
        if v == ("zero", True):
            return b
    return None


def inf_bits(name: str, neg: bool) -> int | None:
    for b, v in table(name).items():
        if v == ("inf", neg):
            return b
    return None


def max_finite(name: str) -> Fraction:
    return max(finite_values(name))


def min_finite(name: str) -> Fraction:
    return min(finite_values(name))


def precision_and_emin(name: str) -> tuple[int, int]:
    """(p, emin): significand bits with the implicit one, exponent of the smallest normal."""
    m = MODELS[name]
    if m.e8m0:
        return 1, -m.bias
    return m.man_bits + 1, 1 - m.bias


def from_bits(name: str, bits: int) -> np.generic:
    m = MODELS[name]
    return np.array(bits, dtype=np.uint8 if m.itemsize == 1 else np.uint16).view(m.dtype)[()]


def logical_bits(x: np.generic) -> int:
    """The logical bit pattern of an element (high bits of sub-byte types dropped)."""
    dt = np.asarray(x).dtype
    m = MODELS[dt.name]
    raw = int(np.asarray(x).view(np.uint8 if m.itemsize == 1 else np.uint16))
    return raw & ((1 << m.bits) - 1)
