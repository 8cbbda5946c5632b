"""The test helpers' fast paths against their slow definitions: tests/exact.py screens in float64
and decides only the unsettled elements in Fractions; here it must agree with a Fraction
computation of every element, on values at and around the bound's edge."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis_budget import examples

import exact


def slow_error(x, y, relative):
    worst = Fraction(0)
    for a, b in zip(x.reshape(-1).tolist(), y.reshape(-1).tolist(), strict=True):
        if math.isnan(a) or math.isnan(b):
            if not (math.isnan(a) and math.isnan(b)):
                return math.inf
            continue
        if math.isinf(a) or math.isinf(b):
            if a != b:
                return math.inf
            continue
        e = abs(Fraction(b) - Fraction(a))
        if relative:
            if a == 0:
                if b != 0:
                    return math.inf
                continue
            e /= abs(Fraction(a))
        worst = max(worst, e)
    return worst


FLOATS = st.floats(allow_nan=True, allow_infinity=True)


@settings(max_examples=examples(1000))
@given(st.lists(st.tuples(FLOATS, FLOATS), min_size=1, max_size=6), st.booleans(), st.booleans())
def test_exact_error_is_the_slow_exact_maximum(pairs, relative, neighbours):
    x = np.array([p[0] for p in pairs])
    y = np.array([p[1] for p in pairs])
    if neighbours:      # errors of one ulp: the screen's hardest case
        with np.errstate(over="ignore"):
            y = np.where(np.isfinite(x), np.nextafter(x, np.inf), y)
    assert exact.exact_error(x, y, relative) == slow_error(x, y, relative)


def slow_scaled_error(x, y, scale, offset, relative):
    worst = Fraction(0)
    for a, b in zip(x.tolist(), y.tolist(), strict=True):
        e = abs(Fraction(b) - Fraction(a)) * abs(Fraction(scale))
        if relative:
            value = Fraction(a) * Fraction(scale) + Fraction(offset)
            e = e / abs(value) if value else Fraction(10 ** 9 if e else 0)
        worst = max(worst, e)
    return worst


PACKED = st.integers(-2 ** 31, 2 ** 31 - 1)


@settings(max_examples=examples(1000))
@given(st.lists(st.tuples(PACKED, st.integers(-3, 3)), min_size=1, max_size=6),
       st.sampled_from([0.01, 1e-4, 0.1, 2.0 ** -20, 3.0, 1e-300]),
       st.one_of(st.sampled_from([0.0, 273.15, -0.01]), st.floats(-1e6, 1e6)), st.booleans(),
       st.booleans())
def test_exact_scaled_error_is_the_slow_exact_maximum(pairs, scale, offset, relative, cancel):
    """Packed integers one to three steps off, as CF readers decode them (x scale + offset):
    cancelling offsets among them (value near 0: the screen's hardest case)."""
    x = np.array([p[0] for p in pairs], dtype=np.int64)
    y = x + np.array([p[1] for p in pairs])
    if cancel:          # an offset that nearly cancels the first value: x0 scale + offset ~ 0
        offset = -float(x[0]) * scale + offset * 1e-12
    assert exact.exact_scaled_error(x, y, scale, offset, relative) == \
        slow_scaled_error(x, y, scale, offset, relative)


@settings(max_examples=examples(1000))
@given(st.lists(st.tuples(st.floats(allow_nan=False, allow_infinity=False, width=32),
       st.floats(allow_nan=False, allow_infinity=False, width=32)), min_size=1, max_size=6),
       st.sampled_from([1.0, 0.01, 1e-4]), st.booleans())
def test_exact_scaled_error_on_floats(pairs, scale, relative):
    x = np.array([p[0] for p in pairs], dtype=np.float32)
    y = np.array([p[1] for p in pairs], dtype=np.float32)
    assert exact.exact_scaled_error(x, y, scale, 0.0, relative) == \
        slow_scaled_error(x, y, scale, 0.0, relative)


@settings(max_examples=examples(1000))
@given(st.lists(st.tuples(st.floats(allow_nan=False, allow_infinity=False, width=32),
                          st.integers(-3, 3)), min_size=1, max_size=6),
       st.floats(min_value=1e-30, max_value=1e30))
def test_check_within_agrees_with_the_slow_exact_check(pairs, E):
    x = np.array([p[0] for p in pairs], dtype=np.float32)
    # x + k E / 2 rounded to float32: on, just inside or just outside the bound
    y = (x.astype(np.float64) + np.array([p[1] for p in pairs]) * E / 2).astype(np.float32)
    within = all(np.isfinite(b) and abs(Fraction(float(b)) - Fraction(float(a))) <= Fraction(E)
                 for a, b in zip(x, y))
    try:
        exact.check_within(x, y, E, None)
        checked = True
    except AssertionError:
        checked = False
    assert checked == within
