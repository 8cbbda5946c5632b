"""One test per rule of the cast_value spec and of the rulings in docs/spec-rulings.md, with the expected
values worked out by hand from the text (not produced by zdt)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from zdt import cast_array
from zdt.codecs.cast import CastPlan
from zdt.errors import CastError, ConfigError
from zdt.formats import FORMATS

ROUNDINGS = ["nearest-even", "towards-zero", "towards-positive", "towards-negative", "nearest-away"]


def cast(values, source, target, **kw):
    return cast_array(np.array(values, dtype=source), target, **kw)


def bits(a):
    a = np.asarray(a)
    return a.view(f"u{a.dtype.itemsize}")


# --- order of the procedure ----------------------------------------------------------------------

def test_range_is_checked_after_rounding_float_target():
    # 65519 rounds to 65504 (float16 max) under nearest-even: in range, no error
    assert cast([65519.0], "float64", "float16")[0] == np.float16(65504)
    # 65520 is the tie between 65504 and 65536 (beyond max): nearest-even goes to 65536
    with pytest.raises(CastError, match="out of range for float16"):
        cast([65520.0], "float64", "float16")


def test_range_is_checked_after_rounding_integer_target():
    assert cast([127.4], "float64", "int8")[0] == 127
    with pytest.raises(CastError, match="out of range for int8"):
        cast([127.5], "float64", "int8")            # rounds to 128
    assert cast([127.5], "float64", "int8", rounding="towards-zero")[0] == 127
    assert cast([-128.5], "float64", "int8")[0] == -128   # tie to even


def test_scalar_map_comes_first():
    # 300 is out of range for uint8, but the map decides before range handling
    out = cast([300.0, 5.0], "float64", "uint8", scalar_map=[[300.0, 7]])
    assert out.tolist() == [7, 5]
    # the map beats exact representability too
    assert cast([5.0], "float64", "uint8", scalar_map=[[5.0, 9]])[0] == 9


def test_exact_values_are_not_rounded():
    for mode in ROUNDINGS:
        assert cast([2.0, -3.0], "float64", "int16", rounding=mode).tolist() == [2, -3]
        assert cast([0.25], "float64", "float16", rounding=mode)[0] == np.float16(0.25)


# --- rounding ---------------------------------------------------------------------------------------

@pytest.mark.parametrize(("mode", "expected"), [
    ("nearest-even", [2, 2, -2, -2, 0, 2, -2]),
    ("towards-zero", [1, 2, -1, -2, 0, 1, -1]),
    ("towards-positive", [2, 3, -1, -2, 1, 2, -1]),
    ("towards-negative", [1, 2, -2, -3, 0, 1, -2]),
    ("nearest-away", [2, 3, -2, -3, 0, 2, -2]),
])
def test_rounding_modes_float_to_int(mode, expected):
    values = [1.5, 2.5, -1.5, -2.5, 0.49999999999999994, 1.5000000000000002, -1.5000000000000002]
    assert cast(values, "float64", "int32", rounding=mode).tolist() == expected


def test_nearest_away_is_not_floor_of_abs_plus_half():
    # floor(|x| + 0.5) gives 1 here because 0.49999999999999994 + 0.5 rounds to 1.0
    assert cast([0.49999999999999994, -0.49999999999999994], "float64", "int8",
                rounding="nearest-away").tolist() == [0, 0]
    assert cast([0.49999997], "float32", "int8", rounding="nearest-away")[0] == 0


@pytest.mark.parametrize(("mode", "expected"), [
    ("nearest-even", 2**53),               # 2**53 + 1 is a tie between 2**53 and 2**53 + 2
    ("towards-zero", 2**53),
    ("towards-positive", 2**53 + 2),
    ("towards-negative", 2**53),
    ("nearest-away", 2**53 + 2),
])
def test_int64_to_float64_rounds(mode, expected):
    out = cast([2**53 + 1, -(2**53 + 1)], "int64", "float64", rounding=mode)
    assert int(out[0]) == expected
    neg = {"towards-positive": -(2**53), "towards-negative": -(2**53 + 2)}.get(mode, -expected)
    assert int(out[1]) == neg


def test_int_to_float_rounding_is_not_rejected():
    # int64 -> float64, int32 -> float32, anything -> float16: valid configurations
    assert cast([2**63 - 1], "int64", "float64", rounding="towards-zero")[0] == 2.0**63 - 1024
    assert cast([2**31 - 1], "int32", "float32", rounding="towards-negative")[0] == np.float32(2**31 - 128)
    assert cast([2049], "int16", "float16", rounding="towards-positive")[0] == np.float16(2050)
    assert cast([2**64 - 1], "uint64", "float32", rounding="towards-zero")[0] == np.float32(2.0**64 - 2.0**40)


def test_float_narrowing_rounds_in_every_mode():
    x = 1 + 2.0**-24        # exactly between float32 1.0 and 1 + 2**-23
    expect = {"nearest-even": 1.0, "towards-zero": 1.0, "towards-positive": 1 + 2.0**-23,
              "towards-negative": 1.0, "nearest-away": 1 + 2.0**-23}
    for mode, e in expect.items():
        assert float(cast([x], "float64", "float32", rounding=mode)[0]) == e, mode
        assert float(cast([-x], "float64", "float32", rounding=mode)[0]) == -{
            "towards-positive": 1.0, "towards-negative": 1 + 2.0**-23}.get(mode, e), mode


# --- float targets ------------------------------------------------------------------------------------

@pytest.mark.parametrize("mode", ROUNDINGS)
def test_float_overflow_is_an_error_or_infinity_under_clamp(mode):
    with pytest.raises(CastError, match="out_of_range='clamp'"):
        cast([1e300], "float64", "float32", rounding=mode)
    out = cast([1e300, -1e300], "float64", "float32", rounding=mode, out_of_range="clamp")
    assert out.tolist() == [math.inf, -math.inf]
    out = cast([1e6, -1e6], "float32", "float16", rounding=mode, out_of_range="clamp")
    assert out.tolist() == [math.inf, -math.inf]


def test_just_above_float32_max_depends_on_rounding():
    fmax = float(np.finfo(np.float32).max)
    x = fmax + 2.0**102          # a quarter ulp above max
    assert float(cast([x], "float64", "float32")[0]) == fmax
    assert float(cast([x], "float64", "float32", rounding="towards-zero")[0]) == fmax
    with pytest.raises(CastError):
        cast([x], "float64", "float32", rounding="towards-positive")
    assert cast([x], "float64", "float32", rounding="towards-positive",
                out_of_range="clamp")[0] == np.inf


def test_special_values_pass_through_to_float_targets():
    out = cast([np.nan, np.inf, -np.inf], "float64", "float16")
    assert np.isnan(out[0]) and out[1] == np.inf and out[2] == -np.inf
    out = cast([np.nan, np.inf, -np.inf], "float16", "float64")
    assert np.isnan(out[0]) and out[1] == np.inf and out[2] == -np.inf


def test_signed_zero_is_preserved():
    for source, target in [("float64", "float32"), ("float32", "float64"), ("float64", "float16"),
                           ("float16", "float32")]:
        out = cast([0.0, -0.0], source, target)
        assert bits(out).tolist() == bits(np.array([0.0, -0.0], dtype=target)).tolist()


@pytest.mark.parametrize("mode", ["nearest-even", "towards-zero", "towards-positive", "nearest-away"])
def test_negative_underflow_gives_negative_zero(mode):
    out = cast([-1e-300], "float64", "float32", rounding=mode)
    assert out[0] == 0 and np.signbit(out[0])


def test_underflow_directed_rounding_reaches_the_smallest_subnormal():
    tiny = np.float32(np.finfo(np.float32).smallest_subnormal)
    assert cast([1e-300], "float64", "float32", rounding="towards-positive")[0] == tiny
    assert cast([-1e-300], "float64", "float32", rounding="towards-negative")[0] == -tiny


# --- integer targets ------------------------------------------------------------------------------------

@pytest.mark.parametrize("oor", [None, "clamp", "wrap"])
@pytest.mark.parametrize("value", [np.nan, np.inf, -np.inf])
def test_nan_and_infinity_into_an_integer_are_errors(value, oor):
    with pytest.raises(CastError, match="scalar_map.encode") as info:
        cast([1.0, value], "float64", "uint8", out_of_range=oor)
    assert info.value.index == (1,)
    assert info.value.config_key == "scalar_map.encode"


def test_spec_example_128_into_int8():
    with pytest.raises(CastError, match="out of range for int8"):
        cast([128.0], "float64", "int8")
    assert cast([128.0], "float64", "int8", out_of_range="clamp")[0] == 127
    assert cast([128.0], "float64", "int8", out_of_range="wrap")[0] == -128


def test_spec_examples_int16_wrap():
    out = cast([32768, 32769, -32769], "int32", "int16", out_of_range="wrap")
    assert out.tolist() == [-32768, -32767, 32767]


def test_wrap_uses_the_full_two_complement_modulus():
    assert cast([2.0**64 + 5], "float64", "uint64", out_of_range="wrap")[0] == 0   # 2**64+5 rounds to 2**64
    assert cast([2.0**70 + 2.0**20], "float64", "int32", out_of_range="wrap")[0] == 2**20
    assert cast([-1.0], "float64", "uint32", out_of_range="wrap")[0] == 2**32 - 1
    assert cast([-(2.0**63)], "float64", "uint64", out_of_range="wrap")[0] == 2**63
    assert cast([3e9], "float32", "int32", out_of_range="wrap")[0] == int(np.float32(3e9)) - 2**32


def test_clamp_uses_the_integer_extremes():
    assert cast([1e30, -1e30], "float32", "int32", out_of_range="clamp").tolist() == [2**31 - 1, -(2**31)]
    assert cast([1e30, -1e30], "float64", "uint64", out_of_range="clamp").tolist() == [2**64 - 1, 0]
    assert cast([2**63], "uint64", "int64", out_of_range="clamp")[0] == 2**63 - 1
    assert cast([-1], "int64", "uint64", out_of_range="clamp")[0] == 0


def test_wrap_into_float_is_rejected_at_construction():
    with pytest.raises(ConfigError, match="wrap") as info:
        cast([1.0], "float64", "float32", out_of_range="wrap")
    assert info.value.config_key == "out_of_range"


def test_decoding_into_float_under_wrap_errors_on_out_of_range():
    plan = CastPlan(FORMATS["int32"], FORMATS["float16"], out_of_range="wrap", direction="decode")
    assert plan.cast(np.array([1000], np.int32))[0] == 1000
    with pytest.raises(CastError, match="'wrap' does not apply") as info:
        plan.cast(np.array([1000, 70000], np.int32))
    assert info.value.index == (1,) and info.value.config_key == "out_of_range"


# --- scalar_map --------------------------------------------------------------------------------------

def test_nan_key_matches_every_nan():
    payload = np.array([0x7FF8000000000001, 0xFFF8000000000000], dtype=np.uint64).view(np.float64)
    out = cast_array(np.concatenate([payload, [np.nan, 1.0]]), "uint8", scalar_map=[["NaN", 9]])
    assert out.tolist() == [9, 9, 9, 1]


def test_hex_nan_key_matches_only_its_bit_pattern():
    values = np.array([0x7FF8000000000001, 0x7FF8000000000000], dtype=np.uint64).view(np.float64)
    out = cast_array(values[:1], "uint8", scalar_map=[["0x7ff8000000000001", 4]])
    assert out[0] == 4
    with pytest.raises(CastError, match="NaN"):
        cast_array(values, "uint8", scalar_map=[["0x7ff8000000000001", 4]])
    both = cast_array(values, "uint8", scalar_map=[["0x7ff8000000000001", 4], ["NaN", 5]])
    assert both.tolist() == [4, 5]


def test_zero_keys_match_both_signs():
    out = cast([0.0, -0.0], "float64", "uint8", scalar_map=[[-0.0, 3]])
    assert out.tolist() == [3, 3]
    out = cast([0.0, -0.0], "float64", "float32", scalar_map=[[0.0, 1.0]])
    assert out.tolist() == [1.0, 1.0]


def test_first_duplicate_key_wins():
    out = cast([1.0, 2.0], "float64", "uint8", scalar_map=[[1.0, 10], [1.0, 20], [2.0, 30]])
    assert out.tolist() == [10, 30]
    out = cast([np.nan], "float64", "uint8", scalar_map=[["NaN", 1], ["NaN", 2]])
    assert out.tolist() == [1]


def test_mappings_do_not_chain():
    out = cast([1, 2], "int32", "int32", scalar_map=[[1, 2], [2, 3]])
    assert out.tolist() == [2, 3]


def test_64_bit_keys_are_exact():
    # 2**53 + 1 and 2**53 are one float64; as int64 keys they must stay apart
    out = cast([2**53, 2**53 + 1, 2**63 - 1], "int64", "int8",
               scalar_map=[[2**53 + 1, 1], [2**63 - 1, 2], [2**53, 3]])
    assert out.tolist() == [3, 1, 2]
    out = cast([2**64 - 1, 2**64 - 2], "uint64", "uint8", scalar_map=[[2**64 - 1, 7], [2**64 - 2, 8]])
    assert out.tolist() == [7, 8]


def test_map_values_use_the_target_encoding():
    out = cast([1.0, 2.0], "float64", "float32", scalar_map=[[1.0, "0x7fc00001"], [2.0, "-Infinity"]])
    assert bits(out)[0] == 0x7FC00001 and out[1] == -np.inf


def test_plus_infinity_is_accepted_when_reading():
    out = cast([np.inf, -np.inf, np.nan], "float64", "uint8",
               scalar_map=[["+Infinity", 1], ["-Infinity", 2], ["NaN", 0]])
    assert out.tolist() == [1, 2, 0]


@pytest.mark.parametrize(("pairs", "match"), [
    ([[1.0, 300]], "out of range for uint8"),
    ([[1.0, -1]], "out of range for uint8"),
    ([[1.0, 1.5]], "not an integer"),
    ([[1.0, "5"]], "must be a JSON integer"),
    ([["1.0", 5]], "not a valid float64 scalar"),
    ([[1.0, True]], "must be a JSON integer"),
    ([["0x7ff8", 1]], "not a hex bit pattern of float64"),
    ([[1.0]], "pair"),
])
def test_unrepresentable_map_entries_are_config_errors(pairs, match):
    with pytest.raises(ConfigError, match=match) as info:
        cast([1.0], "float64", "uint8", scalar_map=pairs)
    assert info.value.config_key.startswith("scalar_map")


@pytest.mark.parametrize(("source", "target", "pairs", "match"), [
    ("float32", "uint8", [[16777217.0, 7]], "not exactly representable in float32"),
    ("float32", "uint8", [[16777217, 7]], "not exactly representable in float32"),
    ("float16", "uint8", [[1.0001, 7]], "not exactly representable in float16"),
    ("float32", "uint8", [[0.1, 7]], "not exactly representable in float32"),
    ("float64", "float16", [["NaN", 65519.0]], "not exactly representable in float16"),
])
def test_float_map_entries_must_be_exact(source, target, pairs, match):
    """A key that is not a value of its type would silently match a different value."""
    with pytest.raises(ConfigError, match=match):
        cast([1.0], source, target, scalar_map=pairs, out_of_range="clamp")


def test_map_key_out_of_source_range():
    with pytest.raises(ConfigError, match="out of range for int8"):
        cast([1], "int8", "int16", scalar_map=[[200, 1]])
    with pytest.raises(ConfigError, match="beyond the range of float16"):
        cast([1.0], "float16", "int16", scalar_map=[[1e10, 1]])
    with pytest.raises(ConfigError, match="not exactly representable in float32"):
        cast([1.0], "float32", "int64", scalar_map=[[2**24 + 1, 1]])


# --- errors name everything -------------------------------------------------------------------------

def test_error_names_codec_index_value_types_and_key():
    arr = np.zeros((3, 4), dtype=np.float64)
    arr[2, 1] = 300.0
    with pytest.raises(CastError) as info:
        cast_array(arr, "uint8")
    err = info.value
    text = str(err)
    for part in ("cast_value", "(2, 1)", "300.0", "float64", "uint8", "[0, 255]", "out_of_range"):
        assert part in text, part
    assert (err.index, err.value, err.source, err.target, err.config_key) == (
        (2, 1), 300.0, "float64", "uint8", "out_of_range")


def test_error_reports_the_first_failing_element_in_storage_order_with_its_true_index():
    arr = np.asfortranarray(np.zeros((3, 3)))
    arr[0, 2] = np.nan         # flat C index 2, F (memory) index 6
    arr[1, 0] = np.inf         # flat C index 3, F (memory) index 1
    # an F-ordered array is walked in memory order: the first failure there is (1, 0)
    with pytest.raises(CastError) as info:
        cast_array(arr, "int8")
    assert info.value.index == (1, 0) and info.value.value == np.inf and info.value.reason == "inf"
    # the same values in a C-ordered array: (0, 2) comes first
    with pytest.raises(CastError) as info:
        cast_array(np.ascontiguousarray(arr), "int8")
    assert info.value.index == (0, 2) and info.value.reason == "nan"


@pytest.mark.parametrize(("values", "dtype", "shown"), [
    ([65504.0], "float16", "65504.0"),
    ([2050.0], "float16", "2050.0"),
    ([3.4e38], "float32", "3.3999999521443642e+38"),
    ([1e10], "float32", "10000000000.0"),
    ([-300.1], "float32", "-300.1000061035156"),
])
def test_errors_show_the_exact_value(values, dtype, shown):
    with pytest.raises(CastError) as info:
        cast(values, dtype, "int8")
    assert f"= {shown} ({dtype})" in str(info.value)


def test_integer_errors_do_not_mention_rounding():
    with pytest.raises(CastError) as info:
        cast([300], "int16", "uint8")
    assert "rounding" not in str(info.value)


def test_nan_payload_is_shown_in_errors():
    v = np.array([0x7FF8000000000005], dtype=np.uint64).view(np.float64)
    with pytest.raises(CastError, match=r"nan \(0x7ff8000000000005\)"):
        cast_array(v, "int8")
