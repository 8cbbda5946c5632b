"""zdt.engine.bounds.error_of, the check every converted chunk passes, against a slow
reference in exact rational arithmetic: `error_of(x, y, bound) <= bound.value` must be exactly
whether every element keeps the bound, including the elements whose float64 difference lands
on the bound itself (where rounding hides which side the truth is on)."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
from hypothesis import example, given, settings
from hypothesis import strategies as st
from hypothesis_budget import examples

from zdt.engine.bounds import Bound, error_of


def keeps(x: np.ndarray, y: np.ndarray, bound: Bound, sentinels=()) -> bool:
    """The reference: element by element, in Fractions."""
    limit = Fraction(bound.value)
    for a, b in zip(x.tolist(), y.tolist(), strict=True):
        if a in sentinels:
            if np.float64(a).tobytes() != np.float64(b).tobytes():
                return False
            continue
        if math.isnan(a) or math.isnan(b):
            if not (math.isnan(a) and math.isnan(b)):
                return False
            continue
        if math.isinf(a) or math.isinf(b):
            if a != b:
                return False
            continue
        e = abs(Fraction(b) - Fraction(a))
        if bound.relative:
            if a == 0:
                if b != 0:
                    return False
                continue
            e /= abs(Fraction(a))
        if e > limit:
            return False
    return True


floats = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True, width=64),
    st.floats(-1e3, 1e3),
    st.sampled_from([0.0, -0.0, 5e-324, -5e-324, 1.7976931348623157e308, -1.7976931348623157e308,
                     2.0 ** 1000, 0.1, 0.3]),
)
limits = st.one_of(st.floats(1e-300, 1e300), st.sampled_from([0.01, 0.5, 1.0, 1e-3, 2.0 ** -20]))


def near(x: float, limit: float, how: int, relative: bool) -> float:
    """A y at, just inside or just outside the bound from x (how: -2..2 steps of nextafter
    around fl(x + limit) or fl(x - limit)), where float64 rounding makes the answer subtle."""
    d = limit * abs(x) if relative else limit
    with np.errstate(over="ignore", invalid="ignore"):
        y = np.float64(x) + np.float64(d if how >= 0 else -d)
        for _ in range(abs(how)):
            y = np.nextafter(y, np.inf if (how > 0) == (y >= x) else -np.inf)
    return float(y)


@given(st.lists(st.tuples(floats, st.integers(-2, 2), st.booleans()), min_size=1, max_size=40),
       limits, st.booleans())
@settings(max_examples=examples(1500), deadline=None)
@example(pairs=[(0.3, 0, True)], limit=0.1, relative=False)
@example(pairs=[(1e16, 0, True)], limit=1.0, relative=False)
@example(pairs=[(1.7976931348623157e308, 0, True)], limit=1e300, relative=False)
def test_error_of_decides_exactly(pairs, limit, relative):
    bound = Bound("rel" if relative else "abs", limit)
    x = np.array([p[0] for p in pairs])
    y = np.array([near(a, limit, how, relative) if (at and math.isfinite(a)) else a
                  for a, how, at in pairs])
    assert (error_of(x, y, bound) <= limit) == keeps(x, y, bound)


@given(st.lists(floats, min_size=1, max_size=30), st.lists(floats, min_size=1, max_size=30),
       limits, st.booleans())
@settings(max_examples=examples(500), deadline=None)
def test_error_of_on_unrelated_values(xs, ys, limit, relative):
    n = min(len(xs), len(ys))
    x, y = np.array(xs[:n]), np.array(ys[:n])
    bound = Bound("rel" if relative else "abs", limit)
    assert (error_of(x, y, bound) <= limit) == keeps(x, y, bound)


@given(st.lists(st.floats(-100, 100), min_size=1, max_size=30), st.floats(-1e4, 1e4),
       st.integers(0, 29))
@settings(max_examples=examples(300), deadline=None)
def test_sentinels_come_back_bit_for_bit(xs, sentinel, where):
    x = np.array(xs + [sentinel])
    bound = Bound("abs", 0.5)
    y = x.copy()
    assert error_of(x, y, bound, [sentinel]) <= 0.5
    y[-1] = np.nextafter(sentinel, np.inf)      # within the bound, but not the sentinel
    assert error_of(x, y, bound, [sentinel]) > 0.5


def test_float32_and_float16_data_are_checked_in_their_own_values():
    x = np.array([0.1, 3.3, 65504.0], dtype=np.float16)
    y = x.copy()
    y[1] = np.float16(3.3) + np.float16(0.001953125)     # one float16 step away (0.00195...)
    assert error_of(x, y, Bound("abs", 0.001953125)) == 0.001953125
    assert error_of(x, y, Bound("abs", 0.00195)) > 0.00195


def test_a_difference_beyond_the_largest_float():
    x, y = np.array([1e308, 1.0]), np.array([-1e308, 1.0])
    assert error_of(x, y, Bound("abs", 1e300)) > 1e300
    assert error_of(x, y, Bound("rel", 2.5)) <= 2.5            # |(-1e308) - 1e308| = 2 |x|
    assert error_of(x, y, Bound("rel", 1.5)) > 1.5


def test_integers_beyond_two_to_the_53_are_exact():
    x = np.array([2 ** 62 + 1, -(2 ** 62)], dtype=np.int64)
    y = np.array([2 ** 62, -(2 ** 62)], dtype=np.int64)
    assert error_of(x, y, Bound("abs", 0.5)) > 0.5
    assert error_of(x, y, Bound("abs", 1.0)) <= 1.0


def test_a_zero_sentinel_is_matched_with_its_sign():
    """-0.0 is data, not a fill value of 0.0 (a sentinel comes back bit for bit, and -0.0 read
    back as 0.0 is within any bound); a 0.0 sentinel read back as -0.0 is not the sentinel."""
    from zdt.engine.bounds import Bound, error_of, sentinel_mask

    x = np.array([-0.0, 0.0, 1.5])
    assert sentinel_mask(x, [0.0]).tolist() == [False, True, False]
    assert sentinel_mask(x, [-0.0]).tolist() == [True, False, False]
    bound = Bound("abs", 0.5)
    assert error_of(x, np.array([0.0, 0.0, 1.5]), bound, sentinels=[0.0]) == 0.0
    assert error_of(x, np.array([-0.0, -0.0, 1.5]), bound, sentinels=[0.0]) == math.inf
    assert sentinel_mask(np.array([0, -1, 2], dtype="i4"), [0]).tolist() == [True, False, False]


def test_negative_zeros_in_data_with_a_zero_fill_value_convert(tmp_path):
    import zarr

    import zdt

    src = tmp_path / "src.zarr"
    x = np.round(np.random.default_rng(0).normal(15, 3, 200_000), 1)
    x[x == 0] = 0.5
    x[100_500] = -0.0           # one, in a unit the sample of 2 does not measure
    a = zarr.create_array(src, shape=x.shape, chunks=(1000,), dtype="f8", fill_value=0.0)
    a[...] = x
    zdt.convert(str(src), str(tmp_path / "out.zarr"), abs_error=0.5, sample=2)
    y = zarr.open_array(tmp_path / "out.zarr", mode="r")[...]
    assert np.max(np.abs(x - y)) <= 0.5
