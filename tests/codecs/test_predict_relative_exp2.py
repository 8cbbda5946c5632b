"""Kind 3's power of two (docs/codecs/predict.md, "Kind 3's power of two"): the spec's table and
coefficients are the nearest binary64 values, its accuracy bound holds over every `j` and `r`
(exact arithmetic), the C decoder computes the reference's bits (tests/predict_reference.py)
for logarithms across the whole range, and the encoder's bound `b` loses next to nothing to
it."""

from __future__ import annotations

import decimal
import math
import re
import struct
from fractions import Fraction
from pathlib import Path

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis_budget import examples

import predict_reference
from exact import check_power_of_two
from zdt.codecs.predict import PredictConfig

SPEC = Path(__file__).parents[2] / "docs" / "codecs" / "predict.md"
U = Fraction(1, 2 ** 53)                # binary64's unit roundoff
TINY = Fraction(1, 2 ** 1075)           # the absolute error of a rounding into the subnormals


def spec_section() -> str:
    text = SPEC.read_text()
    start = text.index("### Kind 3's power of two")
    return text[start:text.index("\n## ", start)]


def test_the_spec_s_table_and_coefficients_are_the_nearest_binary64_values():
    """The hex values of the spec's two tables, read from the page, against 2^(j/64) and
    (ln 2)^i / i! to 60 digits (the reference's exp2_table)."""
    section = spec_section()
    hexes = [float.fromhex(h) for h in re.findall(r"`(0x1\.[0-9a-f]{13}p[+-]\d+)`", section)]
    d, table = hexes[:6], hexes[6:]
    reference_table, reference_d = predict_reference.exp2_table()
    # (the coefficients' table lists i = 0, 3, 1, 4, 2, 5: two columns, row by row)
    assert [d[0], d[2], d[4], d[1], d[3], d[5]] == reference_d
    assert table == reference_table and len(table) == 64


def horner_error_bound(d: list[float], rho: Fraction) -> tuple[Fraction, Fraction]:
    """For |r| <= rho: a bound on |p - P(r)|, p Horner's rule over d in binary64 (each product
    and sum rounded: relative error U, or TINY absolute below the normal range) and P the same
    polynomial in exact arithmetic; and a bound on |p|. Each step's error is the last one's
    times |r|, plus the product's rounding, plus the sum's."""
    coef = [abs(Fraction(c)) for c in d]
    n = len(d) - 1

    def exact_max(i: int) -> Fraction:
        return sum(coef[l] * rho ** (l - i) for l in range(i, n + 1))

    err, p_max = Fraction(0), coef[n]
    for i in range(n - 1, -1, -1):
        q_err = rho * err + U * p_max * rho + TINY
        q_max = p_max * rho + q_err
        err = q_err + U * (coef[i] + q_max) + TINY
        p_max = exact_max(i) + err
    return err, p_max


def test_kind_3_s_power_of_two_is_within_2_to_the_minus_51_relative():
    """The spec's bound, proven: with e_T the largest relative error of a table value (each
    against 2^(j/64) to 80 digits), e_P a bound on |p / 2^r - 1| over |r| <= 1/128 (Horner's
    roundings, the coefficients' own rounding, and the series' tail beyond degree 5 by its
    first term over 1 - x), and the product T_j p rounded once: (1 + e_T)(1 + e_P)(1 + U) - 1
    < 2^-51 (and the same below); scaleB adds nothing while the result is normal."""
    with decimal.localcontext() as ctx:
        ctx.prec = 80
        ln2 = decimal.Decimal(2).ln()
        slack = Fraction(1, 10 ** 70)           # (the 80-digit values' own error, and more)
        table, d = predict_reference.exp2_table()
        e_t = max(abs(Fraction(t) - Fraction(decimal.Decimal(2) ** (decimal.Decimal(j) / 64)))
                  / Fraction(decimal.Decimal(2) ** (decimal.Decimal(j) / 64))
                  for j, t in enumerate(table)) + slack
        terms, term = [], decimal.Decimal(1)
        for i in range(6):
            terms.append(Fraction(term))
            term = term * ln2 / (i + 1)
        two_r_least = Fraction(decimal.Decimal(2) ** (decimal.Decimal(-1) / 128)) - slack
        x = Fraction(ln2) / 128 + slack
    rho = Fraction(1, 128)
    horner, _ = horner_error_bound(d, rho)
    rounded_coefficients = sum(abs(Fraction(c) - t) * rho ** i for i, (c, t) in enumerate(zip(d, terms)))
    tail = x ** 6 / 720 / (1 - x)
    e_p = (horner + rounded_coefficients + slack + tail) / two_r_least
    above = (1 + e_t) * (1 + e_p) * (1 + U) - 1
    below = 1 - (1 - e_t) * (1 - e_p) * (1 - U)
    assert max(above, below) < Fraction(1, 2 ** 51)
    # (a polynomial of degree 4 would not do: its tail alone is above 2^-45)
    assert x ** 5 / 120 > Fraction(1, 2 ** 45)


def decode_powers(v: np.ndarray, dtype: str = "float64") -> np.ndarray:
    """A kind-3 chunk packed by hand whose logarithms are exactly v (a logarithms' chunk of
    raw values: a bound far below their spacing), no signs, no exact map, no exact values;
    decoded by the C library."""
    logs_chunk = PredictConfig.create(abs_error=5e-324).encode(v)
    assert np.array_equal(PredictConfig.create(abs_error=5e-324).decode(
        logs_chunk, v.dtype, v.shape).view("u8"), v.view("u8"))
    data = struct.pack("<4sBBHdQQ", b"ZPR2", 3, np.dtype(dtype).itemsize, 0, 5e-324, 0,
                       len(logs_chunk)) + logs_chunk + struct.pack("<QQ", 0, 0)
    return PredictConfig.create(rel_error=1e-3).decode(data, np.dtype(dtype), v.shape)


def test_the_decoder_computes_the_reference_s_bits_across_the_range():
    """Logarithms across [-1200, 1200] (the ends of every k / 64, ties of 64 v among them, the
    subnormal results, the overflow to infinity) and random ones: the C decoder's 2^v is the
    reference's bit for bit, float64 and float32 (the float64 value rounded once more)."""
    rng = np.random.default_rng(58)
    k = np.arange(-1200 * 64, 1200 * 64 + 1, 37, dtype=np.float64)
    v = np.concatenate([
        k / 64, (k + 0.5) / 64, np.nextafter((k + 0.5) / 64, np.inf),
        np.nextafter(k / 64, -np.inf), rng.uniform(-1200, 1200, 3000),
        rng.uniform(-1080, -1020, 3000), rng.uniform(1020, 1030, 500), rng.normal(0, 1e-3, 500),
        [0.0, -0.0, 1e300, -1e300, 1023.9999, -1074.0, -1075.0, -1074.5]])
    for dtype in ("float64", "float32"):
        got = decode_powers(v, dtype)
        want = []
        for w in v.tolist():
            with np.errstate(over="ignore", under="ignore"):
                want.append(np.array(predict_reference.table_exp2(w)).astype(dtype))
        bits = "u8" if dtype == "float64" else "u4"
        assert np.array_equal(got.view(bits), np.array(want, dtype=dtype).view(bits)), dtype


@settings(max_examples=examples(300), deadline=None)
@given(st.floats(-1100, 1100, allow_nan=False))
def test_within_2_to_the_minus_51_of_2_to_the_v(v):
    """The C decoder's 2^v against 2**v to 40 digits: within 2^-51 relative while the result
    is a normal number, infinity above the largest float64."""
    got = float(decode_powers(np.array([v]))[0])
    assert got == predict_reference.table_exp2(v)
    check_power_of_two(got, v)


def test_the_encoder_s_bound_is_log2_1_plus_r_to_within_1e_8():
    """b, the logarithms' bound of a chunk zdt writes: below log2(1 + R) (so that 2^b - 1 and
    1 - 2^-b stay within R once 2^v's 2^-51 and the roundings are added), and within 1e-8 of
    it relative for float64 at R >= 1e-6 (the 2^-40 margin and the roundings' allowance, of
    which 2^v takes at most 2^-51 / R: a step 1e-8 finer costs 1.5e-8 bits an element)."""
    x = np.exp2(np.linspace(-3, 3, 4000)).reshape(40, 100)
    for R in (1e-6, 1e-4, 1e-3, 1e-2, 0.3):
        data = PredictConfig.create(rel_error=R).encode(x)
        assert data[:5] == b"ZPR2\x03"
        (b,) = struct.unpack_from("<d", data, 8)
        full = math.log1p(R) / math.log(2)
        assert b < full and b > full * (1 - 1e-8), (R, b / full)
