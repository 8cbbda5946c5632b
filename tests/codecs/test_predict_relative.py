"""zdt.predict with a pointwise-relative bound (docs/codecs/predict.md, "Pointwise-relative bounds
(format 2)"): every element within R |x| of its original in exact arithmetic, zeros to zeros of
the same sign, NaN bit for bit, the fill value kept and never decoded to; zdt's chunks decoded
bit-identically by the independent reference (tests/predict_reference.py); corrupt chunks a
CorruptChunkError naming the stream; the codec in zarr arrays and as a numcodecs codec."""

from __future__ import annotations

import decimal
import math
import struct

import numpy as np
import pytest
import zarr
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis_budget import examples
from zarr.storage import MemoryStore

import predict_reference
from exact import UINT, check_relative
from zdt.codecs import predict_relative
from zdt.codecs.predict import PredictConfig
from zdt.codecs.zarr.predict import PredictCodec
from zdt.errors import ConfigError, CorruptChunkError


def relative_field(seed: int, shape: tuple[int, ...], dtype: str, scale: float, spread: float,
                   zeros: float, negative: float, specials: float, fill) -> np.ndarray:
    """A positive field spanning `spread` powers of two around `scale` (smooth, with noise),
    with zeros, negative patches, and NaN / infinities / signed zeros / the fill value."""
    rng = np.random.default_rng(seed)
    grids = np.meshgrid(*[np.arange(n) for n in shape], indexing="ij") if shape else []
    logs = np.zeros(shape)
    for k, g in enumerate(grids):
        logs = logs + spread * np.sin(g / (2 + 3 * k))
    logs = logs + rng.normal(0, 0.05, shape)
    x = scale * np.exp2(logs)
    if x.size:
        x = np.where(rng.random(shape) < zeros, 0.0, x)
        x = np.where(rng.random(shape) < negative, -x, x)
        pick = rng.random(shape) < specials
        choices = np.array([np.nan, np.inf, -np.inf, -0.0, 5e-324, 1e-310,
                            fill if fill is not None else 1.0])
        x = np.where(pick, rng.choice(choices, size=shape), x)
    with np.errstate(over="ignore", under="ignore"):
        return x.astype(dtype)


shapes = st.lists(st.integers(1, 9), min_size=0, max_size=4).map(tuple)


@settings(max_examples=examples(100), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), shape=shapes, dtype=st.sampled_from(["float32", "float64"]),
       scale=st.sampled_from([1e-30, 1e-3, 1.0, 300.0, 1e30]), spread=st.sampled_from([0.0, 0.5, 8.0]),
       zeros=st.sampled_from([0.0, 0.3]), negative=st.sampled_from([0.0, 0.2, 1.0]),
       specials=st.sampled_from([0.0, 0.1]), fill=st.sampled_from([None, 0.0, np.nan, -9999.0, 1.0]),
       R=st.sampled_from([1e-7, 1e-4, 1e-2, 0.3, 2.0]),
       predictor=st.sampled_from(["lorenzo", "interpolation", "interpolation_slices", "auto"]),
       entropy=st.sampled_from(["zstd", "pcodec", "ans", "auto"]))
def test_every_element_within_r_of_its_magnitude_and_the_reference_decodes_the_same_bits(
        seed, shape, dtype, scale, spread, zeros, negative, specials, fill, R, predictor, entropy):
    x = relative_field(seed, shape, dtype, scale, spread, zeros, negative, specials, fill)
    config = PredictConfig.create(rel_error=R, predictor=predictor, entropy=entropy)
    data = config.encode(x, fill)
    assert data[:4] == b"ZPR2"
    y = config.decode(data, x.dtype, x.shape, fill)
    assert y.shape == x.shape and y.dtype == x.dtype
    check_relative(x, y, R, fill)
    ref = predict_reference.decode(data, x.dtype, x.shape, None, None)
    bits = UINT[x.dtype.itemsize]
    assert np.array_equal(ref.view(bits), y.view(bits))


@settings(max_examples=examples(300), deadline=None)
@given(st.floats(-1100, 1100, allow_nan=False))
def test_the_spec_polynomial_is_within_two_units_of_2_to_the_v(v):
    """The spec's exp2 (its coefficients computed again from ln 2 by the reference) against 2**v
    to 40 digits: within 2**-51 relative while the result is a normal number."""
    got = predict_relative.exp2(np.array([v]))[0]
    assert got == predict_reference.spec_exp2(v)
    with decimal.localcontext() as ctx:
        ctx.prec = 40
        true = decimal.Decimal(2) ** decimal.Decimal(v)
    if true > decimal.Decimal(np.finfo(np.float64).max):
        assert got == math.inf
    elif true >= decimal.Decimal(2.0 ** -1022):
        assert abs(decimal.Decimal(got) / true - 1) <= decimal.Decimal(2.0 ** -51)


@settings(max_examples=examples(100), deadline=None)
@given(st.lists(st.floats(-1100, 1100, allow_nan=False), min_size=1, max_size=40))
def test_exp2_of_an_array_is_each_value_alone(vs):
    """The kernel's whole-array pass (2**k from its bits) and its second pass for results
    outside the normal range (ldexp) give each element what it gives alone, the reference's
    bits."""
    got = predict_relative.exp2(np.array(vs))
    assert [float(g) for g in got] == [predict_reference.spec_exp2(v) for v in vs]


@settings(max_examples=examples(200), deadline=None)
@given(st.lists(st.floats(min_value=5e-324, max_value=1.7976931348623157e308), min_size=1,
                max_size=40))
def test_log2_within_a_few_units_for_normal_and_subnormal_values(vs):
    """The encoder's log2 (the mantissa and exponent from the bits for normal values, frexp
    for subnormal ones) against log2 to 40 digits, each element as it is alone."""
    got = predict_relative.log2(np.array(vs))
    for v, g in zip(vs, got.tolist()):
        assert g == predict_relative.log2(np.array([v]))[0]
        with decimal.localcontext() as ctx:
            ctx.prec = 40
            true = decimal.Decimal(v).ln() / decimal.Decimal(2).ln()
        assert abs(decimal.Decimal(g) - true) <= 8 * decimal.Decimal(float(np.spacing(abs(float(true))))) \
            + decimal.Decimal(2.0 ** -60), (v, g, true)


special_floats = st.sampled_from([0.0, -0.0, math.inf, -math.inf, math.nan, -math.nan, 5e-324,
                                  -1e-310, 2.0 ** -1022, 1e-45, 3.5e38, -7.0, 1e300])
element_lists = st.lists(st.one_of(st.floats(allow_nan=True, allow_infinity=True), special_floats),
                         min_size=0, max_size=40)


def as_type(values: list[float], dtype: str) -> np.ndarray:
    with np.errstate(over="ignore", under="ignore"):
        return np.array(values, dtype=np.float64).astype(dtype)


def rounded(y: float, dtype: str) -> float:
    with np.errstate(over="ignore", under="ignore"):
        return float(np.array([y]).astype(dtype)[0])


@settings(max_examples=examples(200), deadline=None)
@given(values=element_lists, dtype=st.sampled_from(["float32", "float64"]),
       fill=st.sampled_from([None, -7.0, 1e300]), background=st.sampled_from([0, 300, 1100]),
       at=st.integers(0, 1100), seed=st.integers(0, 2**16))
def test_the_logarithms_pass_is_each_element_s_logarithm(values, dtype, fill, background, at,
                                                         seed):
    """zdt.kernels._logs.logarithms (the encoder's first pass, vectorised, block by block)
    against its definition one element at a time: np.nan's bits for NaN (either sign) and for
    the fill value's bits, -inf for a zero, +inf for an infinity, else log2 |x| as `log2` gives
    it for that value alone; the sign bit of every element; the largest |log| and the counts.
    The values drawn stand alone or among `background` positive normal ones (so that blocks
    of the pass with and without odd or negative elements meet)."""
    from zdt.kernels import _logs

    rng = np.random.default_rng(seed)
    plain = (rng.random(background) * 2.0 ** rng.integers(-60, 60, background)).tolist()
    at = min(at, len(plain))
    x = as_type(plain[:at] + values + plain[at:], dtype)
    fills = np.empty(0, dtype) if fill is None else as_type([fill], dtype)
    logs, negative = np.empty(x.size), np.empty(x.size, np.uint8)
    largest, n_nan, n_zero, n_odd = _logs.logarithms(x, logs, negative, fills)
    bits = UINT[x.dtype.itemsize]
    want, most, nans, zeros = [], 0.0, 0, 0
    # (odd: zero, infinite, NaN, the fill value, or a float64 subnormal; float32's subnormals
    # are normal float64 numbers, whose bits give their logarithms as any other's)
    odd = sum(1 for xi in x if not math.isfinite(float(xi)) or float(xi) == 0
              or (fill is not None and xi.view(bits) == fills[0].view(bits))
              or (dtype == "float64" and abs(float(xi)) < 2.0 ** -1022))
    for xi in x:
        a = abs(float(xi))
        if math.isnan(a) or (fill is not None and xi.view(bits) == fills[0].view(bits)):
            want.append(np.float64(np.nan).view(np.uint64))
            nans += 1
        elif a == 0:
            want.append(np.float64(-math.inf).view(np.uint64))
            zeros += 1
        elif math.isinf(a):
            want.append(np.float64(math.inf).view(np.uint64))
        else:
            lg = predict_relative.log2(np.array([a]))[0]
            want.append(np.float64(lg).view(np.uint64))
            most = max(most, abs(float(lg)))
    assert logs.view(np.uint64).tolist() == [int(w) for w in want]
    assert negative.tolist() == [int(np.signbit(xi)) for xi in x]
    assert (largest, n_nan, n_zero, n_odd) == (most, nans, zeros, odd)


@settings(max_examples=examples(200), deadline=None)
@given(values=element_lists, noise=st.lists(st.sampled_from([0.0, 1e-6, -3e-4, 2e-3, 0.7, 1e3, -2e3]),
                                            min_size=40, max_size=40),
       dtype=st.sampled_from(["float32", "float64"]), fill=st.sampled_from([None, -7.0]),
       R=st.sampled_from([1e-6, 1e-3, 0.3]), exact_every=st.sampled_from([0, 3]),
       copies=st.sampled_from([1, 17]), plain=st.booleans())
def test_the_check_marks_exactly_the_elements_that_miss(values, noise, dtype, fill, R, exact_every,
                                                        copies, plain):
    """predict_relative.exact_check (zdt.kernels._logs.check, vectorised, then rational
    arithmetic for what its screen leaves) against the rule one element at a time in
    Fractions: an element not yet exact, with a finite non-zero value and a finite logarithm,
    becomes exact where y (the reference's 2**v for its decoded logarithm v, rounded to the
    type, with x's sign) is not finite, is zero, equals the fill value, or is not within R |x|;
    no other element changes. The decoded logarithms stray from the true ones by up to 2000,
    so results outside the normal range (ldexp) are checked too. `copies` of the values in a
    row run past the kernel's blocks of 256. `plain`: the kernel told that no element is odd
    (its loop that reads neither the logarithms nor the exact marks), where that is so."""
    from fractions import Fraction

    x = as_type(values * copies, dtype)
    noise = noise * copies
    logs, negative = np.empty(x.size), np.empty(x.size, np.uint8)
    fills = np.empty(0, dtype) if fill is None else as_type([fill], dtype)
    n_odd = _logs_logarithms(x, logs, negative, fills)[3]
    plain = plain and not n_odd and not exact_every
    decoded = np.where(np.isfinite(logs), logs + np.array(noise[:x.size]), 0.0)
    exact = np.isnan(logs)
    if exact_every:
        exact[::exact_every] = True
    before = exact.copy()
    predict_relative.exact_check(x, logs, decoded, exact, R, fills, plain)
    for i, xi in enumerate(x.tolist()):
        if before[i] or not math.isfinite(logs[i]) or xi == 0:
            assert exact[i] == before[i], i
            continue
        y = rounded(math.copysign(predict_reference.spec_exp2(float(decoded[i])), xi), dtype)
        miss = (not math.isfinite(y) or y == 0 or (fill is not None and y == float(fills[0]))
                or abs(Fraction(y) - Fraction(xi)) > Fraction(R) * abs(Fraction(xi)))
        assert bool(exact[i]) == miss, (i, xi, y, float(decoded[i]))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_the_check_marks_an_element_that_would_read_back_as_the_fill_value(dtype):
    """-8.0001 and 8.0001 whose logarithms decode to 3 exactly (2**3 = 8, within R of both):
    with the fill value -8 the first would read back as it, so it is exact; the second is not,
    nor is either without a fill value."""
    x = np.array([-8.0001, 8.0001], dtype=dtype)
    logs, decoded = np.full(2, 3.0001), np.full(2, 3.0)
    for fills, want in ((np.array([-8.0], dtype), [True, False]), (np.empty(0, dtype), [False, False])):
        exact = np.zeros(2, dtype=bool)
        predict_relative.exact_check(x, logs, decoded, exact, 1e-3, fills)
        assert exact.tolist() == want


def _logs_logarithms(x, logs, negative, fills):
    from zdt.kernels import _logs

    return _logs.logarithms(x, logs, negative, fills)


@settings(max_examples=examples(200), deadline=None)
@given(logs=st.lists(st.one_of(st.floats(-1200, 1200), st.sampled_from([math.inf, -math.inf, math.nan])),
                     min_size=0, max_size=40),
       signs=st.lists(st.booleans(), min_size=40, max_size=40),
       exact_every=st.sampled_from([0, 2, 5]), dtype=st.sampled_from(["float32", "float64"]),
       copies=st.sampled_from([1, 17]))
def test_the_values_pass_is_each_element_s_value(logs, signs, exact_every, dtype, copies):
    """predict_relative.values (zdt.kernels._logs.values, vectorised) against the decoder's
    rule one element at a time: an exact element takes the next stored value; else the
    reference's 2**v rounded to the type for a finite v, infinity for +inf, zero for -inf,
    negated where the sign bit is set (NaN logarithms come only with exact elements).
    `copies` of the logarithms in a row run past the kernel's blocks of 256."""
    logs, signs = logs * copies, signs * copies
    n = len(logs)
    v = np.array(logs, dtype=np.float64)
    negative = np.array(signs[:n], dtype=bool)
    exact = np.isnan(v)
    if exact_every:
        exact[::exact_every] = True
    stored = as_type([1.5 + i for i in range(int(exact.sum()))], dtype)
    out = predict_relative.values(v, negative, exact, stored, np.dtype(dtype))
    want, j = [], 0
    for i in range(n):
        if exact[i]:
            want.append(float(stored[j]))
            j += 1
            continue
        y = (rounded(predict_reference.spec_exp2(float(v[i])), dtype) if math.isfinite(v[i])
             else (math.inf if v[i] > 0 else 0.0))
        want.append(-y if negative[i] else y)
    bits = UINT[np.dtype(dtype).itemsize]
    assert out.view(bits).tolist() == as_type(want, dtype).view(bits).tolist()
    # a chunk without signs and exact values (both None): each element's value unsigned, the
    # NaN logarithms counted (the decoder's check against the header's count of exact values)
    from zdt.kernels import _logs

    alone = np.empty(n, dtype=dtype)
    assert _logs.powers(v, None, None, alone) == int(np.isnan(v).sum())
    finite = ~np.isnan(v)
    unsigned = [(rounded(predict_reference.spec_exp2(float(lg)), dtype) if math.isfinite(lg)
                 else (math.inf if lg > 0 else 0.0)) for lg in v[finite].tolist()]
    assert alone[finite].view(bits).tolist() == as_type(unsigned, dtype).view(bits).tolist()
    if n:       # (one stored value short of the exact elements: an error, not a read past)
        with pytest.raises(ValueError, match="stored values"):
            predict_relative.values(v, negative, np.ones(n, dtype=bool),
                                    as_type([1.0] * (n - 1), dtype), np.dtype(dtype))


def test_the_spec_table_is_the_reference_coefficients():
    assert list(predict_relative.EXP2) == predict_reference.exp2_coefficients()


def smooth_positive(shape=(60, 80)) -> np.ndarray:
    i, j = np.mgrid[0:shape[0], 0:shape[1]]
    return 1e-3 * np.exp2(4 * np.sin(i / 9) * np.cos(j / 13))


def test_elements_the_logarithms_miss_are_stored_exactly(monkeypatch):
    """A logarithms' bound too wide for R (here 1.05 and 3 times log2(1 + R)) misses on some
    elements: the encoder's check marks them exact (their logarithms left as they were), and
    every element keeps R."""
    x = smooth_positive()
    R = 1e-3
    config = PredictConfig.create(rel_error=R)
    assert struct.unpack_from("<Q", config.encode(x), 16)[0] == 0
    for factor in (1.05, 3):
        monkeypatch.setattr(predict_relative, "log_bound", lambda r, dt, big: factor * math.log2(1 + r))
        data = config.encode(x)
        n_exact = struct.unpack_from("<Q", data, 16)[0]
        assert 0 < n_exact < x.size
        y = config.decode(data, x.dtype, x.shape)
        check_relative(x, y, R, None)
        assert np.array_equal(y, predict_reference.decode(data, x.dtype, x.shape, None, None))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_the_codec_s_own_fill_is_not_the_logarithms_fill(dtype):
    """A codec with `fill` of its own (-999) on values whose logarithm is -999 exactly
    (+-2**-999, float64) or -100 (2**-100, float32, the fill -100 there): the logarithms' chunk
    keeps its own fill value (-inf / NaN), so those elements are coded as any other (an
    encoder that took the codec's fill for the logarithms' wrote them as fill-value symbols,
    which a decoder reads as zero, and checked them against its own reading)."""
    e = -999 if dtype == "float64" else -100
    x = np.linspace(1, 2, 500).astype(dtype)
    x[[5, 80]] = 2.0 ** e
    x[9] = -(2.0 ** e)
    x[[7, 300]] = 0.0
    x[11] = e                           # (the codec's fill value itself, in the data)
    config = PredictConfig.create(rel_error=1e-3, fill=float(e))
    data = config.encode(x, np.nan)
    y = config.decode(data, x.dtype, x.shape, np.nan)
    check_relative(x, y, 1e-3, float(e))
    assert y[5] == y[80] == 2.0 ** e and y[9] == -(2.0 ** e)
    assert np.array_equal(y, predict_reference.decode(data, x.dtype, x.shape, None, None))


def test_a_bound_too_fine_for_the_logarithms_stores_the_values_exactly_instead():
    """float32 at R = 1e-7: the logarithms' codes overflow and every value would go through a
    float64 raw logarithm; the values exact are smaller, and that is what is written."""
    rng = np.random.default_rng(1)
    x = (1 + rng.random((40, 50))).astype("f4")
    data = PredictConfig.create(rel_error=1e-7).encode(x)
    assert struct.unpack_from("<Q", data, 16)[0] == x.size
    assert len(data) < x.nbytes


def test_a_smooth_field_takes_fewer_bytes_than_bitround_with_zstd():
    from numcodecs import BitRound
    from numcodecs.zstd import Zstd

    x = smooth_positive((200, 200))
    R = 1e-3
    data = PredictConfig.create(rel_error=R).encode(x)
    keepbits = math.ceil(-math.log2(R)) - 1
    recipe = Zstd(level=3).encode(BitRound(keepbits).encode(x))
    assert len(data) < 0.5 * len(recipe), (len(data), len(recipe))


def test_zeros_cost_next_to_nothing_and_signs_only_where_there_are_negatives():
    x = smooth_positive((100, 100))
    x[:, 50:] = 0.0
    data = PredictConfig.create(rel_error=1e-2).encode(x)
    half = PredictConfig.create(rel_error=1e-2).encode(x[:, :50].copy())
    assert len(data) - len(half) < 5000 / 8 / 2      # under half a bit a zero
    head, length = predict_relative.HEAD, struct.unpack_from("<Q", data, 24)[0]
    assert struct.unpack_from("<Q", data, head.size + length)[0] == 0      # no sign stream
    x[0, 0] = -x[0, 0]
    data = PredictConfig.create(rel_error=1e-2).encode(x)
    assert struct.unpack_from("<Q", data, head.size + length)[0] > 0


def test_corrupt_relative_chunks_name_the_stream(monkeypatch):
    # (a logarithms' bound too wide: some elements miss, and the chunk has an exact map)
    monkeypatch.setattr(predict_relative, "log_bound", lambda r, dt, big: 3 * math.log2(1 + r))
    x = smooth_positive((20, 30))
    x[0, :5] = -x[0, :5]
    x[3, 3] = np.nan
    config = PredictConfig.create(rel_error=1e-3, entropy="zstd")
    data = config.encode(x)
    length = struct.unpack_from("<Q", data, 24)[0]
    signs_at = 32 + length
    sign_length = struct.unpack_from("<Q", data, signs_at)[0]
    assert sign_length > 0
    map_at = signs_at + 8 + sign_length
    map_length = struct.unpack_from("<Q", data, map_at)[0]
    assert map_length > 0
    exact_at = map_at + 8 + map_length
    n_exact = struct.unpack_from("<Q", data, 16)[0]
    cases = {
        "short": (data[:20], "header"),
        "kind": (data[:4] + b"\x02" + data[5:], "header"),
        "element size": (data[:5] + b"\x04" + data[6:], "header"),
        "logarithms' fill": (data[:6] + b"\x02\x00" + data[8:], "header"),
        "b NaN": (data[:8] + struct.pack("<d", math.nan) + data[16:], "header"),
        "b zero": (data[:8] + struct.pack("<d", 0.0) + data[16:], "header"),
        "n_exact too large": (data[:16] + struct.pack("<Q", 10**6) + data[24:], "header"),
        "n_exact off by one": (data[:16] + struct.pack("<Q", n_exact + 1) + data[24:], "exact map"),
        "logarithms' length": (data[:24] + struct.pack("<Q", 10**9) + data[32:], "logarithms"),
        "logarithms' chunk": (data[:32] + b"XPR1" + data[36:], "header"),
        "sign length": (data[:signs_at] + struct.pack("<Q", 10**9) + data[signs_at + 8:], "signs"),
        "sign frame": (data[:signs_at + 8] + b"\0\0\0\0" + data[signs_at + 12:], "signs"),
        "map length": (data[:map_at] + struct.pack("<Q", 10**9) + data[map_at + 8:], "exact map"),
        "map frame": (data[:map_at + 8] + b"\0\0\0\0" + data[map_at + 12:], "exact map"),
        "no map": (data[:map_at] + struct.pack("<Q", 0) + data[exact_at:], "exact map"),
        "n_exact less": (data[:16] + struct.pack("<Q", n_exact - 1) + data[24:], "exact map"),
        "exact frame": (data[:exact_at] + b"\0\0\0\0" + data[exact_at + 4:], "exact values"),
        "exact values cut": (data[:exact_at + 3], "exact values"),
        "trailing bytes": (data + b"\0", "exact values"),
    }
    for name, (bad, part) in cases.items():
        with pytest.raises(CorruptChunkError, match="zdt.predict") as info:
            config.decode(bad, x.dtype, x.shape)
        assert info.value.part == part, (name, info.value)
    for cut in range(len(data)):
        with pytest.raises(CorruptChunkError):
            config.decode(data[:cut], x.dtype, x.shape)
    with pytest.raises(CorruptChunkError) as info:
        config.decode(cases["logarithms' fill"][0], x.dtype, x.shape)
    assert str(info.value) == "zdt.predict: the logarithms' fill field is 2, not 0 (-inf) or 1 (NaN)"
    # a chunk without signs and exact map whose one NaN logarithm the header does not count
    # (the decoder's loop for chunks without signs or exact values still counts NaN logarithms)
    monkeypatch.undo()      # (the true bound: no element misses, no exact map)
    y = smooth_positive((20, 30))
    y[3, 3] = np.nan
    plain = PredictConfig.create(rel_error=1e-3).encode(y)
    length = struct.unpack_from("<Q", plain, 24)[0]
    assert struct.unpack_from("<QQ", plain, 32 + length) == (0, 0)     # (no signs, no map)
    uncounted = plain[:16] + struct.pack("<Q", 0) + plain[24:32 + length + 16]
    with pytest.raises(CorruptChunkError, match="mark 1 elements exact, the header counts 0") as info:
        config.decode(uncounted, y.dtype, y.shape)
    assert info.value.part == "exact map"


def test_a_masked_field_s_missing_values_are_the_logarithms_fill():
    """More missing values (NaN, stored exactly) than zeros: the logarithms' chunk takes NaN
    as its fill value (masked, no symbols), the zeros' -inf raw; fewer: -inf."""
    i, j = np.mgrid[0:60, 0:80]
    x = 280 + 10 * np.sin(i / 9) * np.cos(j / 11)
    x[(i - 30) ** 2 + (j - 40) ** 2 < 400] = np.nan
    x[0, :5] = 0.0
    config = PredictConfig.create(rel_error=1e-3)
    data = config.encode(x, np.nan)
    assert data[6:8] == b"\x01\x00" and data[32:37] == b"ZPR2\x02"
    y = config.decode(data, x.dtype, x.shape, np.nan)
    check_relative(x, y, 1e-3, None)
    assert np.array_equal(predict_reference.decode(data, x.dtype, x.shape, None, None).view("u8"),
                          y.view("u8"))
    rain = np.where(np.isnan(x), 0.0, x)
    rain[:3, :3] = np.nan
    data = config.encode(rain, np.nan)
    assert data[6:8] == b"\x00\x00"
    check_relative(rain, config.decode(data, rain.dtype, rain.shape, np.nan), 1e-3, None)



def test_the_logarithms_chunk_never_looks_back_at_the_reference_mask():
    """A land mask repeated along time and given as the configuration's reference: the values'
    masks may look back at it, the logarithms' chunk (whose masked elements are the NaN and
    zeros) never does (the spec): its reference field is 0, and the chunk decodes."""
    from zdt.codecs.predict import ReferenceMask

    t, i, j = np.mgrid[0:3, 0:60, 0:80]
    x = 280 + 10 * np.sin(i / 9) * np.cos(j / 11) + t
    land = (i - 30) ** 2 + (j - 40) ** 2 < 400
    x[land] = np.nan
    config = PredictConfig.create(rel_error=1e-3, mask=ReferenceMask.of(land[0]))
    data = config.encode(x, np.nan)
    assert data[32:37] == b"ZPR2\x02" and data[38:40] == b"\x00\x00"
    y = config.decode(data, x.dtype, x.shape, np.nan)
    check_relative(x, y, 1e-3, None)
    assert np.array_equal(predict_reference.decode(data, x.dtype, x.shape, None, None).view("u8"),
                          y.view("u8"))

def test_a_newer_format_is_refused_naming_its_version():
    data = PredictConfig.create(rel_error=1e-3).encode(smooth_positive((4, 5)))
    with pytest.raises(CorruptChunkError, match="format 4, newer than this decoder reads"):
        PredictConfig.create(abs_error=1).decode(b"ZPR4" + data[4:], np.dtype("f8"), (4, 5))
    # a format-2 chunk decodes whatever bound the codec was given (the chunk carries its own);
    # a format-1 chunk needs the absolute bound
    assert PredictConfig.create(abs_error=1).decode(data, np.dtype("f8"), (4, 5)).shape == (4, 5)
    one = PredictConfig.create(abs_error=1).encode(smooth_positive((4, 5)))
    with pytest.raises(CorruptChunkError, match="rel_error"):
        PredictConfig.create(rel_error=1e-3).decode(one, np.dtype("f8"), (4, 5))


def test_config_errors_name_the_key():
    for kwargs, key in [({"rel_error": 0}, "rel_error"), ({"rel_error": -1e-3}, "rel_error"),
                        ({"rel_error": math.inf}, "rel_error"), ({"rel_error": "1e-3"}, "rel_error"),
                        ({"rel_error": 1e-3, "abs_error": 1.0}, "rel_error"), ({}, "abs_error")]:
        with pytest.raises(ConfigError) as info:
            PredictConfig.create(**kwargs)
        assert info.value.config_key == key, kwargs
    with pytest.raises(ConfigError, match="rel_error on integer arrays") as info:
        PredictConfig.create(rel_error=1e-3).encode(np.arange(5, dtype="i2"))
    assert info.value.config_key == "rel_error"
    config = PredictConfig.from_json({"rel_error": 0.01, "predictor": "lorenzo"})
    assert config.to_json() == {"rel_error": 0.01, "predictor": "lorenzo", "level": 3, "entropy": "auto"}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_in_a_zarr_array_with_zeros_negatives_a_fill_value_and_missing_chunks(dtype):
    x = smooth_positive((50, 70)).astype(dtype)
    x[10:20, 10:30] = 0.0
    x[30:, :5] = -x[30:, :5]
    x[1, 1] = -9999.0
    store = MemoryStore()
    a = zarr.create_array(store, shape=(80, 70), chunks=(32, 32), dtype=dtype, fill_value=-9999.0,
                          serializer=PredictCodec(rel_error=1e-3), compressors=None)
    a[:50] = x
    meta = a.metadata.to_dict()["codecs"][0]
    assert meta == {"name": "zdt.predict", "configuration": {
        "rel_error": 1e-3, "predictor": "auto", "level": 3, "entropy": "auto"}}
    b = zarr.open_array(store, mode="r")
    y = b[...]
    check_relative(x, y[:50], 1e-3, -9999.0)
    assert (y[64:] == -9999.0).all()        # chunks never written: the fill value


def test_numcodecs_face_takes_rel_error():
    import numcodecs

    from zdt.codecs.numcodecs.predict import Predict

    codec = numcodecs.get_codec({"id": "zdt.predict", "rel_error": 1e-2})
    assert isinstance(codec, Predict)
    assert codec.get_config() == {"id": "zdt.predict", "rel_error": 1e-2, "predictor": "auto",
                                  "level": 3, "entropy": "auto"}
    x = smooth_positive((13, 17)).astype("f4")
    x[2, 2] = 0.0
    data = codec.encode(x)
    y = codec.decode(data)
    check_relative(x, y, 1e-2, None)
    ref = predict_reference.decode(data[1 + 16:], x.dtype, x.shape, None, None)
    assert np.array_equal(ref.view("u4"), y.view("u4"))
