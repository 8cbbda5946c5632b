"""Hypothesis strategies: arrays of every numeric dtype mixing generic values with the edges
where casts go wrong (ties, signed zeros, subnormals, NaN payloads, infinities, 2**53 +- 1,
2**63, 2**64, every integer type's min and max +- 1, float16/32 limits)."""

from __future__ import annotations

from fractions import Fraction
from functools import cache

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import lowprec_model as lp

INT_NAMES = ["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64"]
FLOAT_NAMES = ["float16", "float32", "float64"]
ALL_NAMES = INT_NAMES + FLOAT_NAMES
# the zarr-extensions low-precision types (and float8_e4m3fn), ml_dtypes in memory
LOW_NAMES = list(lp.MODELS)
LOW_FLOAT_NAMES = [n for n in LOW_NAMES if lp.MODELS[n].kind == "float"]
EVERY_NAME = ALL_NAMES + LOW_NAMES
ROUNDINGS = ["nearest-even", "towards-zero", "towards-positive", "towards-negative", "nearest-away"]


def is_low(dtype: object) -> bool:
    return np.dtype(dtype).name in lp.MODELS


def is_float(dtype: object) -> bool:
    dtype = np.dtype(dtype)
    return lp.MODELS[dtype.name].kind == "float" if is_low(dtype) else dtype.kind == "f"


def low_precision_edges() -> list[float]:
    """Where casts into the small float formats go wrong: every finite value of each 8-bit or
    smaller format, every midpoint between neighbours (the ties), the largest value plus half
    and one step, and the same near 1.0 and the subnormal boundary for bfloat16."""
    out: set[float] = set()
    for name in LOW_FLOAT_NAMES:
        values = sorted(lp.finite_values(name))
        if lp.MODELS[name].bits > 8:
            values = values[:40] + values[-40:] + [v for v in values if Fraction(1, 2) <= abs(v) <= 4]
        values = sorted(set(values))
        for a, b in zip(values, values[1:]):
            out.update({float(a), float((a + b) / 2)})
        top = values[-1]
        step = top - values[-2]
        out.update({float(top), float(top + step / 2), float(top + step), float(-top - step / 2)})
    return sorted(out)


def _interesting_numbers() -> list[int | float]:
    ints: set[int] = {0, 1, -1, 2, -2, 3}
    for name in INT_NAMES:
        info = np.iinfo(name)
        for b in (int(info.min), int(info.max)):
            ints.update({b - 1, b, b + 1})
    for e in (11, 24, 31, 32, 53, 63, 64):
        ints.update({2**e - 1, 2**e, 2**e + 1, -(2**e) - 1, -(2**e), -(2**e) + 1})
    floats: set[float] = {0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 0.49999999999999994, -0.49999999999999994,
                          127.5, -128.5, 255.5, 254.5, 32767.5, -32768.5, 65519.0, 65520.0, 65504.0,
                          65535.5, 2147483647.5, 0.1, -0.1, 1e-300, -1e-300, 1e300, -1e300}
    for name in FLOAT_NAMES:
        info = np.finfo(name)
        tiny_sub = float(info.smallest_subnormal)
        floats.update({float(info.max), -float(info.max), float(info.tiny), tiny_sub, -tiny_sub,
                       float(info.tiny) - tiny_sub, float(info.eps)})
    # float32 max plus less than / exactly / more than half an ulp
    fmax = float(np.finfo(np.float32).max)
    ulp = 2.0 ** 104
    floats.update({fmax + ulp / 4, fmax + ulp / 2, fmax + ulp * 3 / 4, 2.0 ** 128})
    return sorted(ints) + sorted(floats)


INTERESTING = _interesting_numbers()
LOW_EDGES = low_precision_edges()


def special_floats(dtype: np.dtype) -> list[np.generic]:
    dtype = np.dtype(dtype)
    u = f"u{dtype.itemsize}"
    nbits = dtype.itemsize * 8
    man = np.finfo(dtype).nmant
    quiet = (((1 << (nbits - 1 - man)) - 1) << man) | (1 << (man - 1))
    nans = [quiet, quiet | 1, (quiet ^ (1 << (man - 1))) | 1, quiet | (1 << (nbits - 1))]
    out = [dtype.type(x) for x in ("nan", "inf", "-inf", "0.0", "-0.0")]
    out += [np.array(b, dtype=u).view(dtype)[()] for b in nans]
    return out


def low_patterns(name: str) -> list[int]:
    """Every bit pattern of an 8-bit or smaller format; for bfloat16 the binades at the
    bottom (zero, subnormals), around 1 and at the top (max, inf, NaN), at both ends and the
    middle of each."""
    m = lp.MODELS[name]
    if m.bits <= 8:
        return list(range(1 << m.bits))
    picks = set()
    for sign in (0, 0x8000):
        for e in [*range(0, 4), *range(124, 131), *range(252, 256)]:
            for f in (0, 1, 0x40, 0x41, 0x7E, 0x7F):
                picks.add(sign | (e << 7) | f)
    return sorted(picks)


def edge_values(dtype: np.dtype, *, low_edges: bool = False) -> list[np.generic]:
    """Every interesting number that `dtype` holds exactly, plus its special values (for a
    low-precision type: every bit pattern, or bfloat16's edges). `low_edges`: also the values,
    ties and overflow points of the small float formats (LOW_EDGES)."""
    return list(_edge_values(np.dtype(dtype), low_edges))


@cache
def _edge_values(dtype: np.dtype, low_edges: bool) -> tuple[np.generic, ...]:
    """(cached: the strategies ask for a type's edges at every draw)"""
    return tuple(_find_edge_values(dtype, low_edges))


def _find_edge_values(dtype: np.dtype, low_edges: bool) -> list[np.generic]:
    if is_low(dtype):
        return [lp.from_bits(dtype.name, b) for b in low_patterns(dtype.name)]
    values = []
    candidates = INTERESTING + (LOW_EDGES if low_edges and dtype.kind == "f" else [])
    for x in candidates:
        if dtype.kind in "iu":
            if isinstance(x, int):
                info = np.iinfo(dtype)
                if int(info.min) <= x <= int(info.max):
                    values.append(dtype.type(x))
            continue
        with np.errstate(over="ignore"):
            v = np.array(x, dtype=np.float64 if isinstance(x, float) else object).astype(np.float64).astype(dtype)[()]
        if np.isfinite(v) and (float(v) == x if isinstance(x, float) else int(float(v)) == x):
            values.append(v)
    if dtype.kind == "f":
        values += special_floats(dtype)
    return values


def elements(dtype: np.dtype) -> st.SearchStrategy:
    return _elements(np.dtype(dtype))


@cache
def _elements(dtype: np.dtype) -> st.SearchStrategy:
    """(cached: strategies are immutable, and scalar_maps asks for one at every draw)"""
    edges = st.sampled_from(_edge_values(dtype, False))
    if is_low(dtype):
        m = lp.MODELS[dtype.name]
        top = 0xFFFF if m.itemsize == 2 else 0xFF       # sub-byte: high bits may be anything
        return st.one_of(edges, st.integers(0, top).map(lambda b: lp.from_bits(dtype.name, b)))
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        generic = st.integers(int(info.min), int(info.max)).map(dtype.type)
        # small magnitudes: the part of a wide type that fits narrow targets
        small = st.integers(-300, 70000).filter(lambda v: int(info.min) <= v <= int(info.max)).map(dtype.type)
        return st.one_of(edges, generic, small)
    width = dtype.itemsize * 8
    generic = st.floats(width=width, allow_nan=True, allow_infinity=True).map(dtype.type)
    bound = min(70000.0, float(np.finfo(dtype).max))
    moderate = st.floats(-bound, bound, width=width).map(dtype.type)
    halves = st.integers(-int(bound), int(bound) - 1).map(lambda k: dtype.type(k + 0.5))
    bits = st.integers(0, 2**width - 1).map(lambda b: np.array(b, dtype=f"u{dtype.itemsize}").view(dtype)[()])
    low = st.sampled_from(_low_edges_of(dtype.name))
    return st.one_of(edges, generic, moderate, halves, bits, low)


_LOW_EDGE_CACHE: dict[str, list[np.generic]] = {}


def _low_edges_of(name: str) -> list[np.generic]:
    """LOW_EDGES that the float type `name` holds exactly."""
    if name not in _LOW_EDGE_CACHE:
        dt = np.dtype(name)
        with np.errstate(over="ignore"):
            vals = np.array(LOW_EDGES, dtype=np.float64).astype(dt)
        _LOW_EDGE_CACHE[name] = [v for v, x in zip(vals, LOW_EDGES) if np.isfinite(v) and float(v) == x]
    return _LOW_EDGE_CACHE[name]


def arrays(dtype: np.dtype, max_side: int = 6) -> st.SearchStrategy:
    shapes = hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=max_side)
    if is_low(dtype):
        dtype = np.dtype(dtype)

        @st.composite
        def build(draw: st.DrawFn) -> np.ndarray:
            shape = draw(shapes)
            items = draw(st.lists(elements(dtype), min_size=int(np.prod(shape)),
                                  max_size=int(np.prod(shape))))
            bits = np.array([np.asarray(x).view(f"u{dtype.itemsize}") for x in items],
                            dtype=f"u{dtype.itemsize}")
            return bits.view(dtype).reshape(shape)

        return build()
    return hnp.arrays(np.dtype(dtype), shapes, elements=elements(dtype))


def json_scalar_of(value: np.generic) -> object:
    """An independent JSON encoding of a scalar (fill-value encoding)."""
    dtype = np.asarray(value).dtype
    if is_low(dtype):
        m = lp.MODELS[dtype.name]
        v = lp.table(dtype.name)[lp.logical_bits(value)]
        if v[0] == "num":
            return int(v[1]) if m.kind == "int" else float(v[1])
        if v[0] == "zero":
            return -0.0 if v[1] else 0.0
        if v[0] == "inf":
            return "-Infinity" if v[1] else "Infinity"
        return "0x" + format(lp.logical_bits(value), f"0{2 * m.itemsize}x")
    if dtype.kind in "iu":
        return int(value)
    f = float(value)
    if np.isnan(f):
        bits = int(np.asarray(value).view(f"u{dtype.itemsize}"))
        return "0x" + format(bits, f"0{2 * dtype.itemsize}x")
    if np.isinf(f):
        return "Infinity" if f > 0 else "-Infinity"
    return f


def has_nan(dtype: np.dtype) -> bool:
    dtype = np.dtype(dtype)
    if is_low(dtype):
        return any(v[0] == "nan" for v in lp.table(dtype.name).values())
    return dtype.kind == "f"


@st.composite
def scalar_maps(draw: st.DrawFn, source: np.dtype, target: np.dtype, max_size: int = 3) -> list[list[object]]:
    """A scalar_map direction: keys from the source's edges (so they get hit), values of the
    target; sometimes the generic "NaN" key."""
    source, target = np.dtype(source), np.dtype(target)
    n = draw(st.integers(0, max_size))
    pairs = []
    for _ in range(n):
        if is_float(source) and has_nan(source) and draw(st.booleans()) and draw(st.booleans()):
            key: object = "NaN"
        else:
            key = json_scalar_of(draw(st.sampled_from(_edge_values(source, False))))
        val = json_scalar_of(draw(elements(target)))
        pairs.append([key, val])
    return pairs
