"""A slow, exact, per-element oracle for cast_value, written from the spec text and the rulings
in docs/spec-rulings.md, sharing no code with zdt.

Values are Python ints and Fractions; rounding is done on exact rationals; float formats are
described by NumPy's finfo (precision and exponent range), and float results are built as
exact rationals then converted by NumPy only once they are known to be representable.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache
from fractions import Fraction

import numpy as np

import lowprec_model as lp

ROUNDINGS = ("nearest-even", "towards-zero", "towards-positive", "towards-negative", "nearest-away")


class Failure(Exception):
    """The spec says this element must fail; `reason` is one of nan / inf / out_of_range."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


# --- exact values ------------------------------------------------------------------------------

@dataclass(frozen=True)
class Value:
    """An element's value: kind 'nan', 'inf' or 'finite'; `neg` is the sign bit."""

    kind: str
    neg: bool
    exact: Fraction = Fraction(0)
    bits: int | None = None      # the source bit pattern (for hex NaN keys)


@cache
def _kind(dt: np.dtype) -> tuple[bool, bool]:
    """(low precision, integer) of a dtype (dtype.name is slow: cached)."""
    low = dt.name in lp.MODELS
    return low, (lp.MODELS[dt.name].kind == "int" if low else dt.kind in "iu")


def is_low_precision(dt: np.dtype) -> bool:
    return _kind(np.dtype(dt))[0]


def is_int(dt: np.dtype) -> bool:
    return _kind(np.dtype(dt))[1]


def value_of(x: np.generic) -> Value:
    x = np.asarray(x)
    return _value_of(x.dtype, x.tobytes())


@cache
def _value_of(dt: np.dtype, raw: bytes) -> Value:
    """(cached by type and bit pattern: the exhaustive checks meet each source value once per
    target and mode)"""
    x = np.frombuffer(raw, dtype=dt)[0]
    if is_low_precision(dt):
        bits = lp.logical_bits(x)
        v = lp.table(dt.name)[bits]
        if v[0] == "nan":
            return Value("nan", bool(bits >> (lp.MODELS[dt.name].bits - 1)), bits=bits)
        if v[0] == "inf":
            return Value("inf", v[1], bits=bits)
        if v[0] == "zero":
            return Value("finite", v[1], Fraction(0), bits)
        return Value("finite", v[1] < 0, v[1], bits)
    bits = int(np.asarray(x).view(f"u{dt.itemsize}"))
    if dt.kind in "iu":
        v = int(x)
        return Value("finite", v < 0, Fraction(v), bits)
    f = float(x)   # exact for float16/32/64
    neg = math.copysign(1.0, f) < 0
    if math.isnan(f):
        return Value("nan", neg, bits=bits)
    if math.isinf(f):
        return Value("inf", neg, bits=bits)
    return Value("finite", neg, Fraction(f), bits)


@cache
def round_to_integer(q: Fraction, mode: str) -> int:
    fl = q.numerator // q.denominator          # floor
    frac = q - fl
    if frac == 0:
        return fl
    if mode == "towards-negative":
        return fl
    if mode == "towards-positive":
        return fl + 1
    if mode == "towards-zero":
        return fl + 1 if q < 0 else fl
    half = Fraction(1, 2)
    if frac < half:
        return fl
    if frac > half:
        return fl + 1
    # an exact tie
    if mode == "nearest-even":
        return fl if fl % 2 == 0 else fl + 1
    assert mode == "nearest-away"
    return fl + 1 if q > 0 else fl


# --- formats -----------------------------------------------------------------------------------

def int_range(dt: np.dtype) -> tuple[int, int]:
    dt = np.dtype(dt)
    if is_low_precision(dt):
        m = lp.MODELS[dt.name]
        return (-(1 << (m.bits - 1)), (1 << (m.bits - 1)) - 1) if m.signed else (0, (1 << m.bits) - 1)
    info = np.iinfo(dt)
    return int(info.min), int(info.max)


def int_bits(dt: np.dtype) -> int:
    dt = np.dtype(dt)
    return lp.MODELS[dt.name].bits if is_low_precision(dt) else dt.itemsize * 8


@dataclass(frozen=True)
class FloatSpec:
    p: int          # significand bits including the implicit one
    emin: int       # exponent of the smallest normal number
    max: Fraction   # largest finite value
    has_nan: bool = True
    has_inf: bool = True
    has_neg_zero: bool = True
    e8m0: bool = False     # no sign, no zero, ties go to the even exponent field
    bias: int = 0


@cache
def float_spec(dt: np.dtype) -> FloatSpec:
    dt = np.dtype(dt)
    if is_low_precision(dt):
        m = lp.MODELS[dt.name]
        p, emin = lp.precision_and_emin(dt.name)
        kinds = {v[0] for v in lp.table(dt.name).values()}
        return FloatSpec(p, emin, lp.max_finite(dt.name), has_nan="nan" in kinds,
                         has_inf="inf" in kinds, has_neg_zero=lp.neg_zero_bits(dt.name) is not None,
                         e8m0=m.e8m0, bias=m.bias)
    info = np.finfo(dt)
    return FloatSpec(info.nmant + 1, info.minexp, Fraction(float(info.max)))


def floor_log2(a: Fraction) -> int:
    e = a.numerator.bit_length() - a.denominator.bit_length()
    while Fraction(2) ** e > a:
        e -= 1
    while Fraction(2) ** (e + 1) <= a:
        e += 1
    return e


@cache
def round_to_float(v: Fraction, spec: FloatSpec, mode: str) -> Fraction:
    """Round to the format's precision with an unbounded exponent (subnormal spacing below
    the normal range). The caller checks the finite range afterwards. A format without
    mantissa bits (float8_e8m0fnu) sends a nearest-even tie to the even exponent field."""
    if v == 0:
        return v
    e = max(floor_log2(abs(v)), spec.emin)
    quantum = Fraction(2) ** (e - spec.p + 1)
    q = v / quantum
    a = abs(q)
    if spec.e8m0 and mode == "nearest-even" and a - (a.numerator // a.denominator) == Fraction(1, 2):
        low = a.numerator // a.denominator          # 0 or 1 (times 2**e)
        # candidates low * 2**e and (low + 1) * 2**e; for low = 1 those are 2**e and 2**(e+1),
        # exponent fields e + bias and e + bias + 1; below the range (low = 0) 2**e is the
        # only candidate, 0 not being a value
        r = quantum if low == 0 or (e + spec.bias) % 2 == 0 else 2 * quantum
        return r if v > 0 else -r
    return round_to_integer(q, mode) * quantum


# --- the procedure of the spec -----------------------------------------------------------------

@dataclass(frozen=True)
class Key:
    kind: str                 # 'value', 'any_nan', 'nan_bits'
    value: Value | None = None
    bits: int | None = None


def key_matches(key: Key, x: Value) -> bool:
    if key.kind == "any_nan":
        return x.kind == "nan"
    if key.kind == "nan_bits":
        return x.kind == "nan" and x.bits == key.bits
    k = key.value
    if k.kind != x.kind:
        return False
    if k.kind == "inf":
        return k.neg == x.neg
    return k.exact == x.exact      # numeric: +0 == -0


def cast_element(x: np.generic, target: np.dtype, rounding: str, out_of_range: str | None,
                 scalar_map: list[tuple[Key, object]] = (), direction: str = "encode") -> object:
    """The target value (a Python int, a Fraction, ('zero', neg), ('inf', neg) or 'nan'),
    or raise Failure. Map outputs are returned as given (already target scalars)."""
    v = value_of(x)
    for key, out in scalar_map:                       # 1. scalar_map, first match wins
        if key_matches(key, v):
            return ("mapped", out)
    target = np.dtype(target)
    target_is_int = is_int(target)
    spec = None if target_is_int else float_spec(target)
    if v.kind == "nan":
        if spec is not None and spec.has_nan:
            return "nan"
        raise Failure("nan")
    if v.kind == "inf":
        if spec is not None and spec.has_inf:
            return ("inf", v.neg)
        raise Failure("inf")
    if target_is_int:
        r = round_to_integer(v.exact, rounding)       # 2./3. exact or rounded, then range
        lo, hi = int_range(target)
        if lo <= r <= hi:
            return r
        if out_of_range == "clamp":
            return lo if r < lo else hi
        if out_of_range == "wrap":
            bits = int_bits(target)
            w = r % (1 << bits)
            if lo < 0 and w >= 1 << (bits - 1):
                w -= 1 << bits
            return w
        raise Failure("out_of_range")
    r = round_to_float(v.exact, spec, rounding)
    if spec.e8m0 and r <= 0:
        # no zero and no sign: zero and negative values are below the range
        if out_of_range == "clamp":
            return Fraction(2) ** spec.emin
        raise Failure("out_of_range")
    if abs(r) > spec.max:
        if out_of_range == "clamp":
            if spec.has_inf:
                return ("inf", r < 0)
            return -spec.max if r < 0 else spec.max
        raise Failure("out_of_range")   # no out_of_range, or 'wrap' into a float (decode)
    if r == 0:
        return ("zero", v.neg and spec.has_neg_zero)
    return r


def to_numpy(result: object, target: np.dtype) -> np.generic:
    target = np.dtype(target)
    if isinstance(result, tuple) and result[0] == "mapped":
        return result[1]
    if is_low_precision(target):
        return _low_precision_scalar(result, target)
    if result == "nan":
        return target.type("nan")
    if isinstance(result, tuple) and result[0] == "inf":
        return target.type("-inf" if result[1] else "inf")
    if isinstance(result, tuple) and result[0] == "zero":
        return target.type("-0.0" if result[1] else "0.0")
    if target.kind in "iu":
        return target.type(result)
    # a representable rational: float64 holds every float16/32 value exactly
    f = result.numerator / result.denominator
    assert Fraction(f) == result, "reference produced a non-representable float"
    out = np.array(f, dtype=np.float64).astype(target)
    assert Fraction(float(out)) == result
    return out[()]


def _low_precision_scalar(result: object, target: np.dtype) -> np.generic:
    """The element as zdt's storage rule writes it (sub-byte signed integers sign-extended,
    other high bits zero), built from the README model's bit patterns."""
    m = lp.MODELS[target.name]
    if m.kind == "int":
        bits = int(result) & ((1 << m.bits) - 1)
        if m.signed and bits >> (m.bits - 1):
            bits |= 0xFF & ~((1 << m.bits) - 1)
        return lp.from_bits(target.name, bits)
    if result == "nan":
        return lp.from_bits(target.name, m.nan_json)
    if isinstance(result, tuple) and result[0] == "inf":
        return lp.from_bits(target.name, lp.inf_bits(target.name, result[1]))
    if isinstance(result, tuple) and result[0] == "zero":
        bits = lp.neg_zero_bits(target.name) if result[1] else lp.finite_values(target.name)[Fraction(0)]
        return lp.from_bits(target.name, bits)
    return lp.from_bits(target.name, lp.finite_values(target.name)[result])


def cast_array(arr: np.ndarray, target: np.dtype, rounding: str, out_of_range: str | None,
               scalar_map: list[tuple[Key, np.generic]] = ()) -> np.ndarray | tuple[int, str]:
    """Whole-array reference in C order: the result, or (flat index, reason) of the first
    failing element."""
    return _element_wise(arr, target, lambda x: to_numpy(
        cast_element(x, target, rounding, out_of_range, scalar_map), target))


def cast_each(arr: np.ndarray, target: np.dtype, rounding: str, out_of_range: str | None
              ) -> tuple[np.ndarray, np.ndarray, dict[int, str]]:
    """Every element on its own, in C order (one failing element does not hide the next):
    (mask of the elements that cast, their results in order as an array of the target type,
    {flat index: reason} of those that fail)."""
    target = np.dtype(target)
    flat = np.ascontiguousarray(arr).reshape(-1)
    low = is_low_precision(target)
    good = np.ones(flat.shape, dtype=bool)
    out = np.empty(flat.shape, dtype=f"u{target.itemsize}" if low else target)
    failures = {}
    n = 0
    for i, x in enumerate(flat):
        try:
            value = to_numpy(cast_element(x, target, rounding, out_of_range), target)
        except Failure as e:
            good[i] = False
            failures[i] = e.reason
            continue
        out[n] = np.asarray(value).view(out.dtype) if low else value
        n += 1
    out = out[:n]
    return good, (out.view(target) if low else out), failures


def _element_wise(arr: np.ndarray, target: np.dtype, fn) -> np.ndarray | tuple[int, str]:
    """fn per element in C order. Low-precision results are stored bit for bit (assigning an
    ml_dtypes scalar could normalise the high bits of a sub-byte type)."""
    target = np.dtype(target)
    flat = np.ascontiguousarray(arr).reshape(-1)
    low = is_low_precision(target)
    out = np.empty(flat.shape, dtype=f"u{target.itemsize}" if low else target)
    for i, x in enumerate(flat):
        try:
            value = fn(x)
        except Failure as e:
            return i, e.reason
        out[i] = np.asarray(value).view(out.dtype) if low else value
    return (out.view(target) if low else out).reshape(np.shape(arr))


# --- scalar_map JSON, decoded independently -------------------------------------------------------

def decode_json_scalar(value: object, dtype: np.dtype) -> tuple[Key, np.generic]:
    """(key form, value form) of a fill-value-encoded JSON scalar for `dtype`."""
    dtype = np.dtype(dtype)
    if is_low_precision(dtype):
        return _decode_low_precision(value, dtype)
    if dtype.kind in "iu":
        assert isinstance(value, int) and not isinstance(value, bool)
        v = dtype.type(value)
        return Key("value", value_of(v)), v
    if value == "NaN":
        return Key("any_nan"), dtype.type("nan")
    if value in ("Infinity", "+Infinity", "-Infinity"):
        v = dtype.type("-inf" if value.startswith("-") else "inf")
        return Key("value", value_of(v)), v
    if isinstance(value, str) and value.startswith("0x"):
        bits = int(value, 16)
        v = np.array(bits, dtype=f"u{dtype.itemsize}").view(dtype)[()]
        if np.isnan(v):
            return Key("nan_bits", bits=bits), v
        return Key("value", value_of(v)), v
    v = np.array(value, dtype=np.float64).astype(dtype)[()]
    return Key("value", value_of(v)), v


def _decode_low_precision(value: object, dtype: np.dtype) -> tuple[Key, np.generic]:
    m = lp.MODELS[dtype.name]
    if m.kind == "int":
        v = to_numpy(int(value), dtype)
        return Key("value", value_of(v)), v
    if value == "NaN":
        return Key("any_nan"), lp.from_bits(dtype.name, m.nan_json)
    if value in ("Infinity", "+Infinity", "-Infinity"):
        v = lp.from_bits(dtype.name, lp.inf_bits(dtype.name, value.startswith("-")))
        return Key("value", value_of(v)), v
    if isinstance(value, str) and value.startswith("0x"):
        bits = int(value, 16)
        v = lp.from_bits(dtype.name, bits)
        if lp.table(dtype.name)[bits][0] == "nan":
            return Key("nan_bits", bits=bits), v
        return Key("value", value_of(v)), v
    exact = Fraction(value)     # map entries are exact values of their type
    v = lp.from_bits(dtype.name, lp.neg_zero_bits(dtype.name)) if (
        exact == 0 and math.copysign(1.0, value) < 0 and lp.neg_zero_bits(dtype.name) is not None
    ) else lp.from_bits(dtype.name, lp.finite_values(dtype.name)[exact])
    return Key("value", value_of(v)), v


def compile_map(pairs: list[list[object]], source: np.dtype, target: np.dtype) -> list[tuple[Key, np.generic]]:
    return [(decode_json_scalar(k, source)[0], decode_json_scalar(v, target)[1]) for k, v in pairs]


def same_bits_or_nan(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Element-wise: identical bit patterns, or both NaN (payloads need not be kept)."""
    a = np.asarray(a)
    b = np.asarray(b)
    if a.dtype != b.dtype or a.shape != b.shape:
        return np.zeros(np.broadcast(a, b).shape, dtype=bool)
    if is_low_precision(a.dtype):
        bits = (1 << lp.MODELS[a.dtype.name].bits) - 1
        ua = a.view(f"u{a.dtype.itemsize}") & bits
        ub = b.view(f"u{b.dtype.itemsize}") & bits
        same = a.view(f"u{a.dtype.itemsize}") == b.view(f"u{b.dtype.itemsize}")
        if lp.MODELS[a.dtype.name].kind == "float":
            nan = np.vectorize(lambda x: lp.table(a.dtype.name)[int(x)][0] == "nan", otypes=[bool])
            if ua.size:
                same |= nan(ua) & nan(ub)
        return same
    same = a.view(f"u{a.dtype.itemsize}") == b.view(f"u{b.dtype.itemsize}")
    if a.dtype.kind == "f":
        same |= np.isnan(a) & np.isnan(b)
    return same


# --- scale_offset -------------------------------------------------------------------------------
# Written from the scale_offset spec and docs/spec-rulings.md: integer arithmetic exact and checked at every
# step; floats rounded to nearest-even in the array's type after each operation, with IEEE
# signed-zero rules; a finite input giving a non-finite value is an error. zdt's documented
# choice that a zero offset and a unit scale are identities is followed (so -0.0 survives).

def _ieee_zero_sum_sign(a_neg: bool, b_neg: bool) -> bool:
    """Sign of an exact zero sum a + b under round-to-nearest: negative only if both are."""
    return a_neg and b_neg


def _float_result(v: Fraction, neg_if_zero: bool, spec: FloatSpec) -> tuple:
    """An operation's exact result rounded to the format; ("inf", ...) stands for a result
    the format cannot hold (beyond its range; zero or negative in float8_e8m0fnu): an error."""
    r = round_to_float(v, spec, "nearest-even")
    if abs(r) > spec.max or (spec.e8m0 and r <= 0):
        return ("inf", r < 0)
    if r == 0:
        return ("zero", neg_if_zero if v == 0 else v < 0)
    return ("num", r)


def _as_value(t: tuple) -> Value:
    if t[0] == "inf":
        return Value("inf", t[1])
    if t[0] == "zero":
        return Value("finite", t[1], Fraction(0))
    return Value("finite", t[1] < 0, t[1])


def scale_offset_element(x: np.generic, offset: np.generic, scale: np.generic,
                         decode: bool) -> np.generic:
    """One element; raise Failure(operation) where the spec says it must fail."""
    dt = np.asarray(x).dtype
    if is_int(dt):
        lo, hi = int_range(dt)
        xi, o, s = int(value_of(x).exact), int(value_of(offset).exact), int(value_of(scale).exact)
        if decode:
            if s != 1:
                if xi % s != 0:
                    raise Failure("division")
                q = xi // s
                if not lo <= q <= hi:
                    raise Failure("division")
            else:
                q = xi
            r = q + o
            if not lo <= r <= hi:
                raise Failure("addition")
            return to_numpy(r, dt)
        t = xi - o
        if not lo <= t <= hi:
            raise Failure("subtraction")
        p = t * s
        if not lo <= p <= hi:
            raise Failure("multiplication")
        return to_numpy(p, dt)
    spec = float_spec(dt)
    v, ov, sv = value_of(x), value_of(offset), value_of(scale)

    def op(a: Value, b: Value, kind: str) -> Value:
        if a.kind != "finite" or b.kind != "finite":
            return _special_op(a, b, kind)
        if kind == "sub":
            res = a.exact - b.exact
            return _as_value(_float_result(res, _ieee_zero_sum_sign(a.neg, not b.neg), spec))
        if kind == "add":
            res = a.exact + b.exact
            return _as_value(_float_result(res, _ieee_zero_sum_sign(a.neg, b.neg), spec))
        if kind == "mul":
            return _as_value(_float_result(a.exact * b.exact, a.neg != b.neg, spec))
        return _as_value(_float_result(a.exact / b.exact, a.neg != b.neg, spec))

    # IEEE step by step (NaN and infinite elements, offsets and scales included); a finite
    # element that becomes non-finite fails at that step
    cur = v
    steps = [("div", sv, "division"), ("add", ov, "addition")] if decode else \
            [("sub", ov, "subtraction"), ("mul", sv, "multiplication")]
    for kind, operand, name in steps:
        if kind in ("sub", "add") and operand.kind == "finite" and operand.exact == 0:
            continue            # zero offset: identity
        if kind in ("mul", "div") and operand.kind == "finite" and operand.exact == 1 and not operand.neg:
            continue            # unit scale: identity
        res = op(cur, operand, kind)
        if cur.kind == "finite" and res.kind != "finite":
            raise Failure(name)
        cur = res
    if cur.kind == "nan":
        return to_numpy("nan", dt)
    if cur.kind == "inf":
        return to_numpy(("inf", cur.neg), dt)
    if cur.exact == 0:
        return to_numpy(("zero", cur.neg and spec.has_neg_zero), dt)
    return to_numpy(cur.exact, dt)


def _special_op(a: Value, b: Value, kind: str) -> Value:
    """IEEE 754 on operands of which one is infinite or NaN (the only rounding-free cases)."""
    nan = Value("nan", False)
    if a.kind == "nan" or b.kind == "nan":
        return nan
    if kind in ("sub", "add"):
        b_neg = (not b.neg) if kind == "sub" else b.neg
        if a.kind == "inf" and b.kind == "inf":
            return Value("inf", a.neg) if a.neg == b_neg else nan
        return Value("inf", a.neg) if a.kind == "inf" else Value("inf", b_neg)
    neg = a.neg != b.neg
    if kind == "mul":
        if (a.kind == "finite" and a.exact == 0) or (b.kind == "finite" and b.exact == 0):
            return nan                                  # 0 * inf
        return Value("inf", neg)
    if a.kind == "inf":                                 # div
        return nan if b.kind == "inf" else Value("inf", neg)
    return Value("finite", neg, Fraction(0))            # finite / inf = +-0


def scale_offset_array(arr: np.ndarray, offset: np.generic, scale: np.generic,
                       decode: bool) -> np.ndarray | tuple[int, str]:
    return _element_wise(arr, np.asarray(arr).dtype,
                         lambda x: scale_offset_element(x, offset, scale, decode))
