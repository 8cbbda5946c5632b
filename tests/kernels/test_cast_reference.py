"""Every kernel against the exact reference: each (source, target) pair, every rounding mode,
every out_of_range mode, with and without scalar_map, through both the fast loops and the exact
path. A failure must be the reference's first failing element, with the same reason."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import reference
from cast_checks import PATHS, check_against_reference
from strategies import ALL_NAMES, LOW_FLOAT_NAMES, ROUNDINGS, arrays, edge_values, scalar_maps
from zdt import kernels
from zdt.codecs.cast import CastPlan
from zdt.errors import CastError
from zdt.formats import FORMATS, NAN_NONE
from zdt.kernels._types import TypeCode

pytestmark = pytest.mark.exhaustive      # (CI: once, in the README leg; see .ci/run)

PAIRS = [(s, t) for s in ALL_NAMES for t in ALL_NAMES]


@pytest.mark.parametrize(("source", "target"), PAIRS)
@given(data=st.data())
def test_pair_matches_reference(source, target, data):
    arr = data.draw(arrays(source), label="arr")
    rounding = data.draw(st.sampled_from(ROUNDINGS), label="rounding")
    oors = [None, "clamp", "wrap"] if np.dtype(target).kind in "iu" else [None, "clamp"]
    oor = data.draw(st.sampled_from(oors), label="out_of_range")
    pairs = data.draw(st.one_of(st.just([]), scalar_maps(source, target)), label="scalar_map")
    check_against_reference(arr, source, target, rounding, oor, pairs)


@pytest.mark.parametrize("target", ["float16", "float32", "float64"])
@pytest.mark.parametrize("source", ["int32", "int64", "float64", "float32"])
@given(data=st.data())
def test_wrap_into_float_on_decode_is_an_error(source, target, data):
    """Decoding with out_of_range='wrap' into a float array: out of range is an error."""
    arr = data.draw(arrays(source), label="arr")
    rounding = data.draw(st.sampled_from(ROUNDINGS), label="rounding")
    check_against_reference(arr, source, target, rounding, "wrap", [], direction="decode")


@pytest.mark.parametrize(("source", "target"), PAIRS)
def test_every_edge_value_every_mode(source, target):
    """Deterministic sweep: every edge value of the source through every mode combination. The
    elements the reference converts are cast together (one plan per mode); each one it rejects
    is cast alone, so one failing edge does not hide the others."""
    arr = np.array(edge_values(source), dtype=source)
    oors = [None, "clamp", "wrap"] if np.dtype(target).kind in "iu" else [None, "clamp"]
    for rounding in ROUNDINGS:
        for oor in oors:
            plan = CastPlan(FORMATS[source], FORMATS[target], rounding=rounding, out_of_range=oor)
            good, expected, reasons = reference.cast_each(arr, np.dtype(target), rounding, oor)
            for build, fast in PATHS:
                with kernels.use(build):
                    got = plan.cast(arr[good], fast=fast)
                    same = reference.same_bits_or_nan(got, expected)
                    assert same.all(), (build, fast, rounding, oor, arr[good][~same], got[~same],
                                        expected[~same])
                    for i in np.flatnonzero(~good):
                        with pytest.raises(CastError) as info:
                            plan.cast(arr[i:i + 1], fast=fast)
                        assert info.value.reason == reasons[i], (build, fast, arr[i], info.value)


def float32_sweep() -> np.ndarray:
    """float32 bit patterns for a conversion to float16: every sign, exponent and top 7
    mantissa bits, each with low bits that make every rounding case at every float16
    precision (subnormal results drop 14 to 24+ bits): zero, one, the halfway point of each
    bit position and its neighbours, all ones."""
    low = {0, 1, 0x7FFF, 0xFFFF}
    for k in range(16):
        low |= {(1 << k) - 1, 1 << k, (1 << k) + 1}
    low = np.array(sorted(v & 0xFFFF for v in low), dtype=np.uint32)
    high = np.arange(1 << 16, dtype=np.uint32) << 16
    return (high[:, None] | low[None, :]).reshape(-1).view(np.float32)


def float64_sweep() -> np.ndarray:
    """The float32 sweep as float64, with both float64 neighbours of each value: a value one
    float64 ulp off a float16 midpoint must not round as the midpoint (float64 -> float32 ->
    float16 in nearest-even twice does; zdt rounds to odd in between)."""
    with np.errstate(over="ignore", invalid="ignore"):
        x = float32_sweep().astype(np.float64)     # (NaN payloads: NumPy warns, keeps NaN)
        return np.concatenate([x, np.nextafter(x, np.inf), np.nextafter(x, -np.inf)])


@pytest.mark.parametrize("source", ["float32", "float64"])
def test_nearest_even_into_float16_matches_numpy_and_the_exact_path(source):
    """The bit-pattern loop into float16 (nearest-even; float64 rounded to odd into float32
    first) against NumPy's own conversion (an independent implementation, correctly rounded
    from either type) and zdt's exact path, on every build: ties at every subnormal and normal
    position and their neighbours, the top of the range (65504, the 65520 tie that rounds to
    infinity), infinities; NaN becomes the canonical NaN with the input's sign."""
    x = float32_sweep() if source == "float32" else float64_sweep()
    finite = np.isfinite(x)
    with np.errstate(over="ignore", invalid="ignore"):
        fits = finite & (np.abs(x.astype(np.float16)) <= 65504)
    clamp = CastPlan(FORMATS[source], FORMATS["float16"], out_of_range="clamp")
    error = CastPlan(FORMATS[source], FORMATS["float16"])
    with np.errstate(over="ignore", invalid="ignore"):
        expected = x.astype(np.float16).view(np.uint16)
    nan = np.isnan(x)
    expected[nan] = np.where(np.signbit(x[nan]), 0xFE00, 0x7E00).astype(np.uint16)
    exact = clamp.cast(x, fast=False).view(np.uint16)
    assert np.array_equal(exact, expected)
    for build in kernels.available():
        with kernels.use(build):
            got = clamp.cast(x).view(np.uint16)
            bad = np.flatnonzero(got != expected)
            assert bad.size == 0, (build, x[bad[:5]], got[bad[:5]], expected[bad[:5]])
            assert np.array_equal(error.cast(x[fits]).view(np.uint16), expected[fits])
            with pytest.raises(CastError) as info:
                error.cast(np.array([0.5, 65520.0], dtype=source))
            assert info.value.index == (1,) and info.value.reason == "out_of_range"


OTHER_MODES = [r for r in ROUNDINGS if r != "nearest-even"]
# every small float the fast loops write (float8_e8m0fnu, with no mantissa, sign or zero,
# takes the exact path)
MODE_TARGETS = ["float16"] + [n for n in LOW_FLOAT_NAMES if FORMATS[n].type_code == TypeCode.T_MINI]


def sweep_near(target: str, source: str) -> np.ndarray:
    """The float32 (or float64) sweep, cut to the binades where rounding into `target` is not
    trivial (a few below its smallest subnormal to two above its largest binade, zeros,
    float32's subnormals and the infinities / NaN), without the values `target` cannot hold
    in any mode (an infinity or NaN it has no pattern for). float64 adds the values beyond
    float32's range, which overflow every format (bfloat16's largest lies in float32's top
    binade, where float32's largest rounds towards zero to it)."""
    fmt = FORMATS[target]
    emin, emax = 1 - fmt.bias, fmt.max_exp_field - fmt.bias
    x = float32_sweep()
    e = (x.view(np.uint32) >> 23) & 0xFF
    keep = ((e >= 127 + emin - fmt.man_bits - 3) & (e <= 127 + emax + 2)) | (e == 0) | (e == 255)
    x = x[keep]
    if source == "float64":
        with np.errstate(over="ignore", invalid="ignore"):
            x = x.astype(np.float64)
            x = np.concatenate([x, np.nextafter(x, np.inf), np.nextafter(x, -np.inf),
                                [2.0**128, -2.0**128, 1e300, -1e300]])
    if not fmt.has_inf:
        x = x[~np.isinf(x)]
    if fmt.nan_style == NAN_NONE:
        x = x[~np.isnan(x)]
    return x


@pytest.mark.parametrize("target", MODE_TARGETS)
@pytest.mark.parametrize("source", ["float32", "float64"])
def test_other_modes_into_small_floats_match_the_exact_path(source, target):
    """The bit-pattern loop of the directed modes and nearest-away (float64 rounded to odd
    into float32 first) on every build, against zdt's exact path: every rounding case near
    the format's range, both out_of_range modes (under error mode, the values whose result
    fits); and a sample of the same values against the pure-Python reference, so the exact
    path is not the only judge."""
    x = sweep_near(target, source)
    fmt = FORMATS[target]
    bits = fmt.bits_dtype
    rng = np.random.default_rng(7)
    sample = rng.choice(x.size, 150, replace=False)
    with np.errstate(invalid="ignore"):
        fits = ~(np.abs(x) > float(fmt.max_value)) | np.isinf(x)     # NaN and infinities: kept
    for rounding in OTHER_MODES:
        for oor in ("clamp", None):
            plan = CastPlan(FORMATS[source], fmt, rounding=rounding, out_of_range=oor)
            xs = x if oor else x[fits]
            exact = plan.cast(xs, fast=False)
            for build in kernels.available():
                with kernels.use(build):
                    got = plan.cast(xs)
                bad = np.flatnonzero(got.view(bits) != exact.view(bits))
                assert bad.size == 0, (build, rounding, oor, xs[bad[:5]], got.view(bits)[bad[:5]],
                                       exact.view(bits)[bad[:5]])
            if oor:
                expected = reference.cast_array(x[sample], np.dtype(target), rounding, oor, [])
                same = reference.same_bits_or_nan(exact[sample], expected)
                assert same.all(), (rounding, x[sample][~same], exact[sample][~same], expected[~same])
