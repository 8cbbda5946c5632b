"""cast_value to and from the low-precision types, against the exact reference (whose formats
come from the zarr-extensions READMEs, tests/lowprec_model.py): every value of each 8-bit or
smaller format to every type, every tie and both neighbours of every boundary into each small
float format, random casts with scalar_map, and the rulings worked by hand."""

from __future__ import annotations

from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import lowprec_model as lp
import reference
from cast_checks import check_against_reference
from strategies import EVERY_NAME, LOW_FLOAT_NAMES, LOW_NAMES, ROUNDINGS, arrays, is_float, scalar_maps
from zdt import cast_array
from zdt.codecs.cast import CastPlan
from zdt.errors import CastError, ConfigError
from zdt.formats import FORMATS

pytestmark = pytest.mark.exhaustive      # (CI: once, in the README leg; see .ci/run)


def oors_for(target: str) -> list[str | None]:
    return [None, "clamp", "wrap"] if not is_float(target) else [None, "clamp"]


def patterns(name: str) -> np.ndarray:
    """Every bit pattern of an 8-bit or smaller format (sub-byte: with and without garbage in
    the unused high bits, which readers ignore); bfloat16: every pattern with a 0 or 1 low bit
    pair in each binade edge (see strategies.low_patterns)."""
    from strategies import low_patterns

    m = lp.MODELS[name]
    bits = low_patterns(name)
    if m.bits < 8:
        bits = bits + [b | (0xA5 & ~((1 << m.bits) - 1)) for b in bits]
    return np.array(bits, dtype=np.uint8 if m.itemsize == 1 else np.uint16).view(m.dtype)


# --- every value of each small format, to every type ----------------------------------------------

@pytest.mark.parametrize("source", LOW_NAMES)
def test_every_value_to_every_type(source):
    """All values of the source through every target, each rounding mode and out_of_range
    (values the reference rejects are checked one at a time: one failure must not hide the
    next)."""
    arr = patterns(source)
    for target in EVERY_NAME:
        for i, rounding in enumerate(ROUNDINGS):
            for oor in oors_for(target):
                if i and (not is_float(target) or FORMATS[target].bits >= FORMATS[source].bits) \
                        and oor != "clamp" and is_float(source) == is_float(target):
                    continue    # an exact cast: one rounding mode tells as much as five
                check_every_element(arr, source, target, rounding, oor)


def check_every_element(arr, source, target, rounding, oor):
    plan = CastPlan(FORMATS[source], FORMATS[target], rounding=rounding, out_of_range=oor)
    good, expected, reasons = reference.cast_each(arr, np.dtype(target), rounding, oor)
    from cast_checks import PATHS
    from zdt import kernels

    for build, fast in PATHS:
        with kernels.use(build):
            got = plan.cast(arr[good], fast=fast)
            same = reference.same_bits_or_nan(got, expected)
            assert same.all(), (build, fast, source, target, rounding, oor,
                                arr[good][~same].view(f"u{arr.dtype.itemsize}"),
                                got[~same], expected[~same])
            for i in np.flatnonzero(~good)[:64]:
                with pytest.raises(CastError) as info:
                    plan.cast(arr[i:i + 1], fast=fast)
                assert info.value.reason == reasons[i], (build, fast, arr[i], info.value)


# --- every tie and boundary into each small float format -----------------------------------------

def ties_and_boundaries(target: str, source_dtype: np.dtype) -> np.ndarray:
    """For the target's finite values (bfloat16: its smallest, largest and those near 1):
    each value, each midpoint between neighbours, both source-type neighbours of each
    midpoint, and the same around the overflow points (max + half a step, max + a step),
    for both signs, as values of the source type."""
    values = sorted(lp.finite_values(target))
    if lp.MODELS[target].bits > 8:
        values = sorted(set(values[:24] + values[-24:] + [v for v in values if Fraction(1, 2) <= abs(v) <= 2]))
    points = list(values)
    points += [(a + b) / 2 for a, b in zip(values, values[1:])]
    top, step = values[-1], values[-1] - values[-2]
    points += [top + step / 2, top + step, top + 2 * step]
    out = set()
    for p in points:
        for sign in (1, -1):
            x = float(sign * p)
            with np.errstate(over="ignore"):
                v = source_dtype.type(x)
            if not np.isfinite(v) or float(v) != x:
                continue
            with np.errstate(over="ignore"):
                out.update({v, np.nextafter(v, source_dtype.type(np.inf)),
                            np.nextafter(v, source_dtype.type(-np.inf))})
    return np.array(sorted(out, key=float), dtype=source_dtype)


@pytest.mark.parametrize("source", ["float32", "float64"])
@pytest.mark.parametrize("target", LOW_FLOAT_NAMES)
def test_every_tie_and_boundary_into_small_floats(source, target):
    arr = ties_and_boundaries(target, np.dtype(source))
    for rounding in ROUNDINGS:
        for oor in (None, "clamp"):
            check_every_element(arr, source, target, rounding, oor)


# --- random casts with scalar_map ------------------------------------------------------------------

@pytest.mark.parametrize("low", LOW_NAMES)
@given(data=st.data())
def test_random_casts_with_a_small_format_on_either_side(low, data):
    other = data.draw(st.sampled_from(EVERY_NAME), label="other")
    source, target = (low, other) if data.draw(st.booleans(), label="low is the source") else (other, low)
    arr = data.draw(arrays(source, max_side=5), label="arr")
    rounding = data.draw(st.sampled_from(ROUNDINGS), label="rounding")
    oor = data.draw(st.sampled_from(oors_for(target)), label="out_of_range")
    pairs = data.draw(st.one_of(st.just([]), scalar_maps(source, target)), label="scalar_map")
    check_against_reference(arr, source, target, rounding, oor, pairs)


# --- the rulings, worked by hand ------------------------------------------------------------------

def bits(arr: np.ndarray) -> list[int]:
    return np.asarray(arr).view(f"u{np.asarray(arr).dtype.itemsize}").reshape(-1).tolist()


def test_e8m0_ties_go_to_the_even_exponent_field():
    # 1.5 lies halfway between 1 (field 127, odd) and 2 (field 128); 3 between 2 (128) and
    # 4 (129); 6 between 4 (129) and 8 (130); 0.75 between 0.5 (126) and 1 (127)
    got = cast_array(np.array([1.5, 3.0, 6.0, 0.75, 1.25, 1.75]), "float8_e8m0fnu")
    assert bits(got) == [128, 128, 130, 126, 127, 128]
    # the other modes are ordinary
    assert bits(cast_array(np.array([1.5, 3.0]), "float8_e8m0fnu", rounding="nearest-away")) == [128, 129]
    assert bits(cast_array(np.array([1.5, 3.0]), "float8_e8m0fnu", rounding="towards-zero")) == [127, 128]


@pytest.mark.parametrize("value", [0.0, -0.0, -1.0, -1e-30])
def test_e8m0_has_no_zero_and_no_sign(value):
    with pytest.raises(CastError, match="out of range for float8_e8m0fnu") as info:
        cast_array(np.array([value]), "float8_e8m0fnu")
    assert info.value.reason == "out_of_range"
    # clamp gives the smallest value, 2**-127 (bit pattern 0)
    assert bits(cast_array(np.array([value]), "float8_e8m0fnu", out_of_range="clamp")) == [0]


def test_e8m0_nan_and_range():
    assert bits(cast_array(np.array([np.nan, 2.0**127, 2.0**-127]), "float8_e8m0fnu")) == [0xFF, 0xFE, 0x00]
    with pytest.raises(CastError, match="out of range"):
        cast_array(np.array([2.0**128]), "float8_e8m0fnu")
    with pytest.raises(CastError, match="infinity has no value"):
        cast_array(np.array([np.inf]), "float8_e8m0fnu", out_of_range="clamp")


@pytest.mark.parametrize(("target", "maximum"), [
    ("float8_e4m3fn", 448.0), ("float8_e4m3fnuz", 240.0), ("float8_e4m3b11fnuz", 30.0),
    ("float8_e5m2fnuz", 57344.0), ("float6_e2m3fn", 7.5), ("float6_e3m2fn", 28.0),
    ("float4_e2m1fn", 6.0),
])
def test_formats_without_infinities_clamp_to_their_largest_value(target, maximum):
    big = np.array([1e30, -1e30, maximum * 1.5])
    got = cast_array(big, target, out_of_range="clamp")
    assert got.astype(np.float64).tolist() == [maximum, -maximum, maximum]
    with pytest.raises(CastError, match=f"out of range for {target}"):
        cast_array(big, target)
    with pytest.raises(CastError, match="an infinity has no value") as info:
        cast_array(np.array([np.inf]), target, out_of_range="clamp")
    assert info.value.config_key == "scalar_map.encode"


@pytest.mark.parametrize(("target", "inf_bits"), [
    ("bfloat16", 0x7F80), ("float8_e5m2", 0x7C), ("float8_e4m3", 0x78), ("float8_e3m4", 0x70),
])
def test_formats_with_infinities_clamp_to_infinity(target, inf_bits):
    got = cast_array(np.array([1e300, -1e300, np.inf]), target, out_of_range="clamp")
    assert bits(got) == [inf_bits, inf_bits | (0x8000 if target == "bfloat16" else 0x80), inf_bits]


def test_float8_e4m3_is_the_ieee_like_format_and_e4m3fn_the_finite_one():
    # zarr-extensions' float8_e4m3 has infinities and max 240; float8_e4m3fn has max 448
    assert cast_array(np.array([240.0]), "float8_e4m3").astype(np.float64).tolist() == [240.0]
    with pytest.raises(CastError, match=r"out of range for float8_e4m3 \[-240.0, 240.0\]"):
        cast_array(np.array([448.0]), "float8_e4m3")
    assert bits(cast_array(np.array([448.0]), "float8_e4m3fn")) == [0x7E]
    # 464 is the tie between 448 (significand 1.110) and 480 (1.111, NaN's pattern): even wins
    assert bits(cast_array(np.array([464.0]), "float8_e4m3fn")) == [0x7E]
    with pytest.raises(CastError, match="out of range"):
        cast_array(np.array([465.0]), "float8_e4m3fn")


@pytest.mark.parametrize("target", ["float4_e2m1fn", "float6_e2m3fn", "float6_e3m2fn"])
def test_nan_into_a_format_without_nan_is_an_error_unless_mapped(target):
    with pytest.raises(CastError, match=f"NaN has no value in {target}") as info:
        cast_array(np.array([1.0, np.nan]), target, out_of_range="clamp")
    assert info.value.index == (1,) and info.value.config_key == "scalar_map.encode"
    got = cast_array(np.array([1.0, np.nan]), target, scalar_map=[["NaN", 0.0]])
    assert got.astype(np.float64).tolist() == [1.0, 0.0]


@pytest.mark.parametrize("target", ["float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e4m3b11fnuz"])
def test_fnuz_formats_have_one_zero_and_nan_is_its_negative_pattern(target):
    got = cast_array(np.array([-0.0, -1e-30, 0.0, np.nan, -np.nan]), target)
    assert bits(got) == [0x00, 0x00, 0x00, 0x80, 0x80]


def test_negative_underflow_keeps_the_sign_where_there_is_a_negative_zero():
    assert bits(cast_array(np.array([-1e-30]), "float8_e5m2")) == [0x80]
    assert bits(cast_array(np.array([-1e-30]), "float4_e2m1fn")) == [0x08]


@pytest.mark.parametrize(("target", "canonical"), [
    ("bfloat16", 0x7FC0), ("float8_e3m4", 0x78), ("float8_e4m3", 0x7C), ("float8_e5m2", 0x7E),
    ("float8_e4m3fn", 0x7F), ("float8_e4m3fnuz", 0x80), ("float8_e8m0fnu", 0xFF),
])
def test_nan_becomes_the_formats_nan(target, canonical):
    assert bits(cast_array(np.array([np.nan], np.float32), target)) == [canonical]


def test_sub_byte_integers_use_their_logical_width():
    x = np.array([-9, -8, 7, 8, 100, -100], dtype=np.int16)
    # wrap modulo 2**4, two's complement; stored sign-extended in the byte
    assert bits(cast_array(x, "int4", out_of_range="wrap")) == [0x07, 0xF8, 0x07, 0xF8, 0x04, 0xFC]
    assert cast_array(x, "int4", out_of_range="clamp").astype(np.int8).tolist() == [-8, -8, 7, 7, 7, -8]
    assert cast_array(x, "uint4", out_of_range="wrap").astype(np.int8).tolist() == [7, 8, 7, 8, 4, 12]
    assert cast_array(x, "uint2", out_of_range="clamp").astype(np.int8).tolist() == [0, 0, 3, 3, 3, 0]
    assert cast_array(np.array([-2.5, 1.5, -3.0]), "int2", out_of_range="wrap").astype(np.int8).tolist() == [-2, -2, 1]
    with pytest.raises(CastError, match=r"element \(0,\) = -9 \(int16\) as int4: out of range for int4 \[-8, 7\]"):
        cast_array(x, "int4")


def test_sub_byte_sources_ignore_the_high_bits():
    raw = np.array([0x0F, 0xFF, 0xF1, 0x71], dtype=np.uint8)
    assert cast_array(raw.view(ml_dtypes.int4), "int8").tolist() == [-1, -1, 1, 1]
    assert cast_array(raw.view(ml_dtypes.uint4), "int8").tolist() == [15, 15, 1, 1]
    # float4 0x1 is 0.5 and 0xF is -6.0, whatever the high nibble holds
    assert cast_array(raw.view(ml_dtypes.float4_e2m1fn), "float32").tolist() == [-6.0, -6.0, 0.5, 0.5]


def test_float64_is_rounded_once_into_float8():
    # 1.0625 + 2**-40 lies just above the midpoint between 1.0 and 1.125 in float8_e4m3fn;
    # rounding through float32 first would lose the 2**-40 and round the tie to the even 1.0.
    # Just below the midpoint it goes down, on it to the even 1.0 (the same for float32 data)
    x = np.array([1.0625 + 2.0**-40, 1.0625 - 2.0**-40, 1.0625, -1.0625 - 2.0**-40])
    assert cast_array(x, "float8_e4m3fn").astype(np.float64).tolist() == [1.125, 1.0, 1.0, -1.125]
    assert cast_array(x.astype(np.float32), "float8_e4m3fn").astype(np.float64).tolist() == [1.0, 1.0, 1.0, -1.0]


def test_int64_beyond_2_53_is_rounded_once_into_bfloat16():
    # 2**62 + 2**54 + 1: float64 rounds it down to 2**62 + 2**54 (a bfloat16 tie, which goes
    # to the even 2**62); rounded once it is just above the tie and goes up
    x = np.array([2**62 + 2**54 + 1], dtype=np.int64)
    got = cast_array(x, "bfloat16")
    assert int(got.astype(np.float64)[0]) == 2**62 + 2**55


@pytest.mark.parametrize(("pairs", "match"), [
    ([["Infinity", 0]], "float8_e4m3fn, which has no infinities"),
    ([["NaN", 0]], "float4_e2m1fn, which has no NaN"),
    ([[0.1, 0]], "not exactly representable in float8_e4m3fn"),
    ([[1.0, 8]], "out of range for int4"),
])
def test_scalar_map_entries_are_values_of_their_types(pairs, match):
    source = "float4_e2m1fn" if "float4" in match else "float8_e4m3fn"
    target = "int4" if "int4" in match else "int8"
    with pytest.raises(ConfigError, match=match):
        CastPlan(FORMATS[source], FORMATS[target], scalar_map=pairs)


def test_scalar_map_keys_of_sub_byte_types_match_whatever_the_high_bits():
    raw = np.array([0x0F, 0xFF, 0x07], dtype=np.uint8).view(ml_dtypes.int4)    # -1, -1, 7
    got = cast_array(raw, "int8", scalar_map=[[-1, 100]])
    assert got.tolist() == [100, 100, 7]
