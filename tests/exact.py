"""Errors in exact arithmetic (Fractions), independent of the code under test: the largest error
of a decoded array (`exact_error`, the engine's and the command's tests) and the check that
every element is within a bound (`check_within`, `check_relative`: zdt.predict's tests); the
largest error of CF-packed values in the units a reader decodes to (`exact_scaled_error`).

Both screen every element in float64 first and decide in exact arithmetic every element the
screen cannot settle: a float64 subtraction or division of float64 values is the exact result
times (1 + d) with |d| <= 2**-53 (one rounding; below the normal range a subtraction is exact,
and where a quotient is subnormal or a result overflows the screen is not trusted), so an
element whose screened error is below the bound by more than 2**-50 of it is within the bound
exactly, and the largest exact error belongs to an element whose screened error is within a
relative 2**-38 of the largest screened one. Everything else goes through Fractions."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

UINT = {4: np.uint32, 8: np.uint64}

# the screen's margin: far above the float64 rounding of one or two operations (2**-52)
_MARGIN = 2.0 ** -50
_TINY = 2.0 ** -1000        # below this a quotient may have lost relative precision


def exact_error(x: np.ndarray, y: np.ndarray, relative: bool) -> Fraction | float:
    """Largest error element by element in exact arithmetic; inf if a NaN, an infinity or (for
    a relative bound) a zero did not come back as it was."""
    a = np.asarray(x, dtype=np.float64).reshape(-1)
    b = np.asarray(y, dtype=np.float64).reshape(-1)
    assert a.shape == b.shape, (x.shape, y.shape)
    nan_a, nan_b = np.isnan(a), np.isnan(b)
    if (nan_a != nan_b).any():
        return math.inf
    inf_a, inf_b = np.isinf(a), np.isinf(b)
    if ((inf_a | inf_b) & (a != b)).any():
        return math.inf
    finite = ~(nan_a | inf_a)
    a, b = a[finite], b[finite]
    if relative:
        zero = a == 0
        if (b[zero] != 0).any():
            return math.inf
        a, b = a[~zero], b[~zero]
    return exact_scaled_error(a, b, relative=relative)


def _exact_scaled(a: float, b: float, scale: Fraction, offset: Fraction, relative: bool) -> Fraction:
    e = abs(Fraction(b) - Fraction(a)) * abs(scale)
    if not relative:
        return e
    value = Fraction(a) * scale + offset
    return e / abs(value) if value else Fraction(10 ** 9 if e else 0)


def exact_scaled_error(x: np.ndarray, y: np.ndarray, scale: float | Fraction = 1,
                       offset: float | Fraction = 0, relative: bool = False) -> Fraction:
    """Largest error of finite stored values y against x in the units a CF reader decodes to,
    |y - x| |scale| (relative: over |x scale + offset|), in exact arithmetic; where x scale +
    offset is 0 exactly, an error there counts as 10**9. The float64 screen (a few roundings,
    each within 2**-53, and the sum's cancellation, at most 2**8 here, else decided exactly)
    picks the elements within a relative 2**-38 of the largest screened error; those, and every
    element the screen cannot trust, are decided in Fractions."""
    a = np.asarray(x).reshape(-1)
    b = np.asarray(y).reshape(-1)
    assert a.shape == b.shape, (x.shape, y.shape)
    if a.size == 0:
        return Fraction(0)
    fs, fo = Fraction(scale), Fraction(offset)
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    assert np.array_equal(a64, a) and np.array_equal(b64, b), "not exact in float64"
    assert np.isfinite(a64).all() and np.isfinite(b64).all(), "finite values only"
    s, o = float(fs), float(fo)
    with np.errstate(over="ignore", under="ignore", divide="ignore", invalid="ignore"):
        d = np.abs(b64 - a64) * abs(s)
        same = b64 == a64           # (a 0 screened from a difference that underflowed is not)
        trusted = np.isfinite(d) & (same | (d >= _TINY))
        if relative:
            value = a64 * s + o
            cond = (np.abs(a64 * s) + abs(o)) / np.abs(value)
            d = d / np.abs(value)
            trusted &= (value != 0) & (cond <= 2.0 ** 8) & np.isfinite(d) & (same | (d >= _TINY))
    # (the scale and offset as floats are exact only where the Fractions are binary64 values)
    if Fraction(s) != fs or Fraction(o) != fo:
        trusted[:] = False
    if trusted.any():
        top = d[trusted].max()
        candidates = np.flatnonzero(~trusted | (d >= top * (1 - 2.0 ** -38)))
    else:
        candidates = np.arange(a.size)
    return max(_exact_scaled(float(a[i]), float(b[i]), fs, fo, relative) for i in candidates.tolist())


def check_within(x: np.ndarray, y: np.ndarray, E: float, fill) -> None:
    """Every element of y within E of x, exactly; non-finite values and the fill value (bit for
    bit) unchanged."""
    bits = UINT[x.dtype.itemsize]
    xs, ys = x.reshape(-1), y.reshape(-1)
    xb, yb = xs.view(bits), ys.view(bits)
    kept = ~np.isfinite(xs)
    if fill is not None:
        kept |= xb == np.asarray(fill, dtype=x.dtype).view(bits)
    wrong = np.flatnonzero(kept & (xb != yb))
    assert wrong.size == 0, [(int(i), xs[i], ys[i]) for i in wrong[:5]]
    check = np.flatnonzero(~kept)
    a = xs[check].astype(np.float64)
    b = ys[check].astype(np.float64)
    bad = ~np.isfinite(b)
    assert not bad.any(), [(int(i), xs[i], ys[i], E) for i in check[bad][:5]]
    with np.errstate(over="ignore"):
        d = np.abs(b - a)
    # settled by the screen: within E exactly (see the module's docstring); the rest exactly
    unsettled = ~(d <= E * (1 - _MARGIN))
    limit = Fraction(E)
    for i in check[unsettled].tolist():
        a_i, b_i = float(xs[i]), float(ys[i])
        assert abs(Fraction(b_i) - Fraction(a_i)) <= limit, (i, a_i, b_i, E)


def check_relative(x: np.ndarray, y: np.ndarray, R: float, fill) -> None:
    """The spec's promise, element by element: |y - x| <= R |x| exactly (the float64 screen
    decides only with a margin of 2**-50, the rest in Fractions); zeros, infinities and NaN
    bits as they were; the fill value bit for bit and no other element decoded to it."""
    bits = UINT[x.dtype.itemsize]
    xs, ys = x.reshape(-1), y.reshape(-1)
    xb, yb = xs.view(bits), ys.view(bits)
    kept = ~np.isfinite(xs) | (xs == 0)
    if fill is not None:
        fv = np.asarray(fill, dtype=x.dtype)
        is_fill = xb == fv.view(bits)
        kept |= is_fill
        if np.isfinite(fv):
            assert not ((ys == fv) & (xs != fv)).any()
    wrong = np.flatnonzero(kept & (xb != yb))
    assert wrong.size == 0, [(int(i), xs[i], ys[i]) for i in wrong[:5]]
    check = np.flatnonzero(~kept)
    a, b = xs[check].astype(np.float64), ys[check].astype(np.float64)
    assert np.isfinite(b).all() and (np.signbit(a) == np.signbit(b)).all()
    with np.errstate(over="ignore", under="ignore"):
        settled = np.abs(b - a) <= R * np.abs(a) * (1 - 2.0 ** -50)
        settled &= R * np.abs(a) >= 2.0 ** -1000
    for i in check[~settled].tolist():
        u, v = Fraction(float(xs[i])), Fraction(float(ys[i]))
        assert abs(v - u) <= Fraction(R) * abs(u), (i, xs[i], ys[i], R)


def check_power_of_two(got: float, v: float) -> None:
    """got is 2^v to within 2^-51 relative (2^v to 40 digits) while 2^v is a normal number, and
    infinity above the largest float64."""
    import decimal

    with decimal.localcontext() as ctx:
        ctx.prec = 40
        true = decimal.Decimal(2) ** decimal.Decimal(v)
    if true > decimal.Decimal(np.finfo(np.float64).max):
        assert got == math.inf
    elif true >= decimal.Decimal(2.0 ** -1022):
        assert abs(decimal.Decimal(got) / true - 1) <= decimal.Decimal(2.0 ** -51)
