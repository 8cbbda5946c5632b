"""Hypothesis strategies: arrays of every numeric dtype mixing generic values with the edges
where casts go wrong (ties, signed zeros, subnormals, NaN payloads, infinities, 2**53 +- 1,
2**63, 2**64, every integer type's min and max +- 1, float16/32 limits)."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

INT_NAMES = ["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64"]
FLOAT_NAMES = ["float16", "float32", "float64"]
ALL_NAMES = INT_NAMES + FLOAT_NAMES
ROUNDINGS = ["nearest-even", "towards-zero", "towards-positive", "towards-negative", "nearest-away"]


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


def edge_values(dtype: np.dtype) -> list[np.generic]:
    """Every interesting number that `dtype` holds exactly, plus its special values."""
    dtype = np.dtype(dtype)
    values = []
    for x in INTERESTING:
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
    dtype = np.dtype(dtype)
    edges = st.sampled_from(edge_values(dtype))
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
    return st.one_of(edges, generic, moderate, halves, bits)


def arrays(dtype: np.dtype, max_side: int = 6) -> st.SearchStrategy:
    return hnp.arrays(
        np.dtype(dtype),
        hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=max_side),
        elements=elements(dtype),
    )


def json_scalar_of(value: np.generic) -> object:
    """An independent JSON encoding of a scalar (fill-value encoding)."""
    dtype = np.asarray(value).dtype
    if dtype.kind in "iu":
        return int(value)
    f = float(value)
    if np.isnan(f):
        bits = int(np.asarray(value).view(f"u{dtype.itemsize}"))
        return "0x" + format(bits, f"0{2 * dtype.itemsize}x")
    if np.isinf(f):
        return "Infinity" if f > 0 else "-Infinity"
    return f


@st.composite
def scalar_maps(draw: st.DrawFn, source: np.dtype, target: np.dtype, max_size: int = 3) -> list[list[object]]:
    """A scalar_map direction: keys from the source's edges (so they get hit), values of the
    target; sometimes the generic "NaN" key."""
    source, target = np.dtype(source), np.dtype(target)
    n = draw(st.integers(0, max_size))
    pairs = []
    for _ in range(n):
        if source.kind == "f" and draw(st.booleans()) and draw(st.booleans()):
            key: object = "NaN"
        else:
            key = json_scalar_of(draw(st.sampled_from(edge_values(source))))
        val = json_scalar_of(draw(elements(target)))
        pairs.append([key, val])
    return pairs
