"""scale_offset: kernels against the exact reference, every rule of the spec and docs/spec-rulings.md,
configuration, fill values, and round trips through zarr arrays (v3 codecs, v2 filters), alone
and chained with cast_value as in the spec's examples."""

from __future__ import annotations

import json

import ml_dtypes
import numcodecs
import numpy as np
import pytest
import zarr
from hypothesis import given
from hypothesis import strategies as st

import reference
from strategies import ALL_NAMES, LOW_NAMES, arrays, edge_values, elements, json_scalar_of
from zdt import ScaleOffset, ScaleOffsetCodec, kernels
from zdt.codecs.zarr import CastValueCodec
from zdt.errors import ConfigError, FillValueError
from zdt.formats import FORMATS
from zdt.errors import ScaleOffsetError
from zdt.codecs.scale_offset import ScaleOffsetPlan, cached_plan

BUILDS = kernels.available()


def json_of(value: np.generic) -> object:
    """offset/scale in the fill-value JSON encoding ("NaN" rather than a hex NaN)."""
    out = json_scalar_of(value)
    return "NaN" if isinstance(out, str) and np.isnan(value) else out


def check(arr, dtype, offset, scale, decode):
    expected = reference.scale_offset_array(arr, offset, scale, decode)
    plan = ScaleOffsetPlan(FORMATS[dtype], json_of(offset), json_of(scale))
    run = plan.decode if decode else plan.encode
    for build in BUILDS:
        with kernels.use(build):
            if isinstance(expected, tuple):
                with pytest.raises(ScaleOffsetError) as info:
                    run(arr)
                nd = np.unravel_index(expected[0], arr.shape) if arr.ndim else ()
                assert info.value.index == tuple(int(i) for i in nd), (build, info.value)
                assert info.value.operation == expected[1], (build, info.value)
            else:
                got = run(arr)
                same = reference.same_bits_or_nan(got, expected)
                assert same.all(), (build, arr[~same], got[~same], expected[~same])


def finite_elements(dtype):
    dtype = np.dtype(dtype)
    if dtype.kind in "iu":
        return elements(dtype)
    return elements(dtype).filter(lambda v: bool(np.isfinite(v)))


@pytest.mark.parametrize("dtype", ALL_NAMES)
@given(data=st.data())
def test_matches_reference(dtype, data):
    arr = data.draw(arrays(dtype), label="arr")
    small = st.integers(-3, 3).map(np.dtype(dtype).type) if np.dtype(dtype).kind == "i" else \
        st.integers(0, 3).map(np.dtype(dtype).type)
    offset = data.draw(st.one_of(small, finite_elements(dtype)), label="offset")
    scale = data.draw(st.one_of(small, finite_elements(dtype)).filter(lambda v: v != 0), label="scale")
    if np.dtype(dtype).kind == "f":
        # offsets/scales must read back exactly from their JSON form (float16/32 from float64)
        assert np.asarray(json_of(offset), dtype=dtype) == offset
    check(arr, dtype, offset, scale, data.draw(st.booleans(), label="decode"))


@pytest.mark.parametrize("dtype", LOW_NAMES)
@given(data=st.data())
def test_low_precision_types_match_reference(dtype, data):
    """Arithmetic in the small type (each operation rounded to it), checked by the same
    reference; offsets and scales are finite values of the type given in its JSON form."""
    arr = data.draw(arrays(dtype, max_side=5), label="arr")
    value = st.sampled_from([x for x in edge_values(dtype) if _finite_low(x)])
    offset = data.draw(value, label="offset")
    scale = data.draw(value.filter(lambda v: reference.value_of(v).exact != 0), label="scale")
    check(arr, dtype, offset, scale, data.draw(st.booleans(), label="decode"))


def _finite_low(x) -> bool:
    v = reference.value_of(x)
    return v.kind == "finite"


def test_low_precision_worked_examples():
    # bfloat16: (1 - 0.5) * 3 = 1.5, (2 - 0.5) * 3 = 4.5
    bf = ml_dtypes.bfloat16
    enc = ScaleOffsetPlan(FORMATS["bfloat16"], 0.5, 3).encode(np.array([1.0, 2.0], bf))
    assert enc.astype(np.float64).tolist() == [1.5, 4.5]
    # int4: every step checked against [-8, 7]
    with pytest.raises(ScaleOffsetError, match=r"\(5 - -2\) \* 2 = 14 is out of range for int4 \[-8, 7\]"):
        ScaleOffsetPlan(FORMATS["int4"], -2, 2).encode(np.array([1, 5], ml_dtypes.int4))
    # float8_e4m3fn has no infinity: overflow is "no value", not "not finite"
    with pytest.raises(ScaleOffsetError, match="has no value in float8_e4m3fn"):
        ScaleOffsetPlan(FORMATS["float8_e4m3fn"], 0, 4).encode(np.array([200.0], ml_dtypes.float8_e4m3fn))
    # float8_e8m0fnu: (1 - 0.5) * 4 = 2; 2 - 0.5 = 1.5 is a tie that goes to the even exponent
    # field (2, field 128), times 4 = 8; x - x has no value (no zero)
    plan = ScaleOffsetPlan(FORMATS["float8_e8m0fnu"], 0.5, 4)
    assert plan.encode(np.array([1.0, 2.0], ml_dtypes.float8_e8m0fnu)).astype(np.float64).tolist() == [2.0, 8.0]
    with pytest.raises(ScaleOffsetError, match="subtraction fails: 1.0 - 1.0 has no value in float8_e8m0fnu"):
        ScaleOffsetPlan(FORMATS["float8_e8m0fnu"], 1, 2).encode(np.array([1.0], ml_dtypes.float8_e8m0fnu))


@pytest.mark.parametrize("dtype", ["int32", "uint64", "int64", "float32"])
@given(data=st.data())
def test_decode_of_encoded_values(dtype, data):
    """Round trip: every element that encodes decodes back, exactly for integers and within the
    error of four float32 roundings for floats."""
    dt = np.dtype(dtype)
    arr = data.draw(arrays(dtype), label="arr").reshape(-1)
    offset = data.draw(st.integers(-50, 50) if dt.kind != "u" else st.integers(0, 50), label="offset")
    scale = data.draw(st.integers(1, 7), label="scale")

    def encodes(x: np.generic) -> bool:
        try:
            reference.scale_offset_element(x, dt.type(offset), dt.type(scale), False)
        except reference.Failure:
            return False
        return True

    # full-range integer draws overflow often: keep what the spec says encodes
    arr = arr[np.array([encodes(x) for x in arr], dtype=bool)]
    plan = cached_plan(dtype, offset, scale)
    dec = plan.decode(plan.encode(arr))
    if dt.kind in "iu":
        assert np.array_equal(dec, arr)
        return
    assert np.array_equal(np.isnan(dec), np.isnan(arr))
    inf = np.isinf(arr)
    assert np.array_equal(dec[inf], arr[inf])
    finite = np.isfinite(arr)
    x, d = arr[finite].astype(np.float64), dec[finite].astype(np.float64)
    info = np.finfo(dt)
    # (x - o)(1+d1) s (1+d2) / s (1+d3) + o, then (1+d4): |error| <= 2 eps (|x| + |o|), plus
    # the absolute rounding of subnormal intermediates
    bound = 2 * float(info.eps) * (np.abs(x) + abs(offset)) + 4 * float(info.smallest_subnormal) * scale
    assert (np.abs(d - x) <= bound).all(), (x[np.abs(d - x) > bound], d[np.abs(d - x) > bound])


# --- exhaustive integer checks ----------------------------------------------------------------------
# The 8/16-bit kernels compute in 32 bits and divide by multiplying with a float32 reciprocal, the
# 32-bit kernels in 64 bits with a float64 reciprocal; each element's result is then verified in
# integers. These tests walk every input of the narrow types (and the extremes of the 32-bit
# ones) for many scales, so a quotient the rounding gets wrong or an overflow in the check shows.

def integer_expected(xs: np.ndarray, offset: int, scale: int, decode: bool):
    """Exact results: (values, ok mask, failing operation per element). 8/16-bit inputs in
    NumPy int64, where every intermediate (below 2**34 in magnitude) is exact; wider ones in
    Python integers."""
    lo, hi = reference.int_range(xs.dtype)
    if xs.dtype.itemsize <= 2:
        x = xs.astype(np.int64)
        if decode:
            q = np.abs(x) // abs(scale)
            q = np.where((x >= 0) == (scale > 0), q, -q)
            first_ok = (np.abs(x) % abs(scale) == 0) & (lo <= q) & (q <= hi)
            v = q + offset
            names = ("division", "addition")
        else:
            t = x - offset
            first_ok = (lo <= t) & (t <= hi)
            v = t * scale
            names = ("subtraction", "multiplication")
        second_ok = (lo <= v) & (v <= hi)
        ok = first_ok & second_ok
        ops = np.where(~first_ok, names[0], np.where(~second_ok, names[1], None))
        return np.where(ok, v, 0).astype(xs.dtype), ok, list(ops)
    values, oks, ops = [], [], []
    for x in xs.tolist():
        if decode:
            q, r = divmod(abs(x), abs(scale))
            q = q if (x >= 0) == (scale > 0) else -q
            steps = [("division", r == 0 and lo <= q <= hi), ("addition", lo <= q + offset <= hi)]
            v = q + offset
        else:
            t = x - offset
            steps = [("subtraction", lo <= t <= hi), ("multiplication", lo <= t * scale <= hi)]
            v = t * scale
        failed = next((name for name, fine in steps if not fine), None)
        values.append(v if failed is None else 0)
        oks.append(failed is None)
        ops.append(failed)
    return np.array(values, dtype=xs.dtype), np.array(oks, dtype=bool), ops


def check_exhaustive(xs: np.ndarray, offset: int, scale: int, decode: bool, singles: int = 8):
    values, ok, ops = integer_expected(xs, offset, scale, decode)
    plan = cached_plan(xs.dtype.name, offset, scale)
    run = plan.decode if decode else plan.encode
    bad = np.flatnonzero(~ok)
    for build in BUILDS:
        with kernels.use(build):
            got = run(xs[ok])
            assert np.array_equal(got, values[ok]), (build, xs[ok][got != values[ok]][:5])
            if len(bad):
                with pytest.raises(ScaleOffsetError) as info:
                    run(xs)
                assert info.value.index == (int(bad[0]),), (build, info.value)
                assert info.value.operation == ops[bad[0]], (build, info.value)
            # a failing element alone, behind valid ones (the fast loop must flag it itself)
            for i in bad[:: max(1, len(bad) // singles)][:singles]:
                arr = np.concatenate([xs[ok][:100], xs[i:i + 1]])
                with pytest.raises(ScaleOffsetError) as info:
                    run(arr)
                assert info.value.index == (len(arr) - 1,) and info.value.operation == ops[i]


@pytest.mark.parametrize("dtype", ["int8", "uint8"])
@pytest.mark.parametrize("decode", [False, True], ids=["encode", "decode"])
def test_8_bit_every_input_every_scale(dtype, decode):
    lo, hi = reference.int_range(np.dtype(dtype))
    xs = np.arange(lo, hi + 1).astype(dtype)
    for scale in range(lo, hi + 1):
        if scale == 0:
            continue
        offset = (scale * 37) % (hi + 1) if lo == 0 else (scale * 37) % 256 - 128
        check_exhaustive(xs, offset, scale, decode, singles=2)


@pytest.mark.parametrize("dtype", ["int16", "uint16"])
@pytest.mark.parametrize("decode", [False, True], ids=["encode", "decode"])
def test_16_bit_every_input(dtype, decode):
    lo, hi = reference.int_range(np.dtype(dtype))
    xs = np.arange(lo, hi + 1).astype(dtype)
    scales = [1, 2, 3, 7, 100, 255, 256, 257, 4099, hi - 1, hi]
    if lo < 0:
        scales += [-1, -2, -3, -255, -256, lo + 1, lo]
    for scale in scales:
        for offset in (0, 1, hi, lo if lo < 0 else hi // 2):
            check_exhaustive(xs, offset, scale, decode)


@pytest.mark.parametrize("dtype", ["int32", "uint32"])
@pytest.mark.parametrize("decode", [False, True], ids=["encode", "decode"])
def test_32_bit_extremes(dtype, decode):
    lo, hi = reference.int_range(np.dtype(dtype))
    rng = np.random.default_rng(7)
    edges = [lo, lo + 1, lo + 2, -3, -2, -1, 0, 1, 2, 3, hi - 2, hi - 1, hi]
    scales = [1, 2, 3, 10, 65535, 65536, 2**31 - 1, hi, hi - 1, 12345679]
    if lo < 0:
        scales += [-1, -2, -3, -65536, lo, lo + 1]
    for scale in scales:
        # multiples of the scale across the whole range, the edges and random values
        ks = rng.integers(lo // abs(scale), hi // abs(scale), 2000, endpoint=True, dtype=np.int64)
        pool = np.concatenate([ks * scale, edges, rng.integers(lo, hi, 2000, endpoint=True)])
        xs = pool[(pool >= lo) & (pool <= hi)].astype(dtype)
        for offset in (0, 5, hi, lo if lo < 0 else hi // 3):
            check_exhaustive(xs, offset, scale, decode)


# --- rules --------------------------------------------------------------------------------------------

def test_integer_overflow_is_an_error_at_every_step():
    p = cached_plan("int8", offset=-100, scale=1)
    with pytest.raises(ScaleOffsetError, match=r"100 - -100 = 200 is out of range for int8") as info:
        p.encode(np.array([0, 100], np.int8))
    assert info.value.index == (1,) and info.value.operation == "subtraction"
    assert info.value.config_key == "offset"
    p = cached_plan("int16", offset=0, scale=300)
    with pytest.raises(ScaleOffsetError, match=r"\(200 - 0\) \* 300 = 60000") as info:
        p.encode(np.array([[1, 200]], np.int16))
    assert info.value.index == (0, 1) and info.value.operation == "multiplication"


def test_intermediate_overflow_counts_even_if_the_final_value_fits():
    # (x - offset) overflows int8 although (x - offset) * scale would be back in range... it
    # cannot be with integers; but for unsigned, x - offset < 0 is an intermediate failure even
    # where scale is 1 and the true result would be in range after wrapping
    with pytest.raises(ScaleOffsetError, match="subtraction"):
        cached_plan("uint8", offset=10).encode(np.array([5], np.uint8))


@pytest.mark.parametrize(("dtype", "x", "offset", "scale", "expected"), [
    ("int64", 2**62, -(2**62) + 1, 1, 2**63 - 1),
    ("uint64", 2**64 - 1, 1, 1, 2**64 - 2),
    ("uint64", 2**63, 0, 1, 2**63),
    ("uint64", 2**32, 0, 2**31, 2**63),
    ("int64", -(2**62), 0, 2, -(2**63)),
])
def test_64_bit_integers_are_exact(dtype, x, offset, scale, expected):
    enc = cached_plan(dtype, offset, scale).encode(np.array([x], dtype=dtype))
    assert int(enc[0]) == expected
    assert int(cached_plan(dtype, offset, scale).decode(enc)[0]) == x


@pytest.mark.parametrize(("dtype", "x", "offset", "scale", "op"), [
    ("int64", 2**62, -(2**62), 1, "subtraction"),
    ("uint64", 2**63, 0, 2, "multiplication"),
    ("int64", -(2**63), 1, 1, "subtraction"),
    ("uint64", 0, 1, 1, "subtraction"),
])
def test_64_bit_overflow_raises(dtype, x, offset, scale, op):
    with pytest.raises(ScaleOffsetError) as info:
        cached_plan(dtype, offset, scale).encode(np.array([x], dtype=dtype))
    assert info.value.operation == op


def test_remainders_in_messages_are_exact_for_64_bit_values():
    with pytest.raises(ScaleOffsetError, match="leaves the remainder 1;"):
        cached_plan("uint64", 0, 2).decode(np.array([2**64 - 1], np.uint64))
    with pytest.raises(ScaleOffsetError, match="leaves the remainder 1;"):
        cached_plan("int64", 0, 3).decode(np.array([2**63 - 1], np.int64))
    with pytest.raises(ScaleOffsetError, match="leaves the remainder -1;"):
        cached_plan("int64", 0, 3).decode(np.array([-(2**63) + 1], np.int64))


def test_decode_division_must_be_exact():
    p = cached_plan("int32", offset=0, scale=4)
    assert p.decode(np.array([8, -12], np.int32)).tolist() == [2, -3]
    with pytest.raises(ScaleOffsetError, match="7 / 4 leaves the remainder 3") as info:
        p.decode(np.array([8, 7], np.int32))
    assert info.value.index == (1,) and info.value.config_key == "scale"


def test_min_divided_by_minus_one():
    with pytest.raises(ScaleOffsetError, match="division"):
        cached_plan("int64", 0, -1).decode(np.array([-(2**63)], np.int64))
    with pytest.raises(ScaleOffsetError, match="division"):
        cached_plan("int32", 0, -1).decode(np.array([-(2**31)], np.int32))


def test_float_overflow_of_a_finite_value_is_an_error():
    with pytest.raises(ScaleOffsetError, match="is not finite in float32") as info:
        cached_plan("float32", 0, 1e30).encode(np.array([1.0, 1e10], np.float32))
    assert info.value.index == (1,) and info.value.operation == "multiplication"
    with pytest.raises(ScaleOffsetError, match="division"):
        cached_plan("float64", 0, 1e-300).decode(np.array([1e300]))
    with pytest.raises(ScaleOffsetError, match="is not finite in float16"):
        cached_plan("float16", -60000, 1).encode(np.array([10000], np.float16))


def test_nan_and_infinities_propagate():
    out = cached_plan("float64", 5, -2).encode(np.array([np.nan, np.inf, -np.inf]))
    assert np.isnan(out[0]) and out[1] == -np.inf and out[2] == np.inf
    out = cached_plan("float32", 5, -2).decode(np.array([np.nan, np.inf], np.float32))
    assert np.isnan(out[0]) and out[1] == -np.inf


def test_no_configuration_is_a_true_no_op():
    x = np.array([-0.0, np.nan, 1.5, -np.inf])
    payload = np.array([0x7FF8000000000123], np.uint64).view(np.float64)
    for plan in (cached_plan("float64"), ScaleOffsetCodec().plan("float64")):
        for run in (plan.encode, plan.decode):
            out = run(np.concatenate([x, payload]))
            assert out.view(np.uint64).tolist() == np.concatenate([x, payload]).view(np.uint64).tolist()


def test_zero_offset_keeps_negative_zero_both_ways():
    p = cached_plan("float32", 0, 2)
    enc = p.encode(np.array([-0.0], np.float32))
    dec = p.decode(enc)
    assert np.signbit(enc[0]) and np.signbit(dec[0])


def test_scale_zero_is_rejected():
    for dtype, scale in [("float64", 0), ("float64", -0.0), ("int8", 0), ("float32", "0x80000000")]:
        with pytest.raises(ConfigError, match="scale must not be zero") as info:
            cached_plan(dtype, 1, scale)
        assert info.value.config_key == "scale"


@pytest.mark.parametrize(("dtype", "key", "value", "match"), [
    ("int8", "offset", "5", "not a valid|must be a JSON integer"),
    ("int8", "offset", 300, "out of range for int8"),
    ("int8", "scale", 0.5, "not an integer"),
    ("uint16", "offset", -1, "out of range for uint16"),
    ("float32", "scale", "1.5", "not a valid float32 scalar"),
    ("float32", "offset", 1e39, "beyond the range of float32"),
    ("float64", "scale", True, "must be a JSON number or string"),
    ("float64", "offset", "0x7ff8", "not a hex bit pattern"),
])
def test_offset_and_scale_use_the_fill_value_encoding(dtype, key, value, match):
    with pytest.raises(ConfigError, match=match) as info:
        cached_plan(dtype, **{key: value})
    assert info.value.config_key == key


def test_hex_and_special_strings_are_read():
    p = cached_plan("float32", offset="0x3f800000", scale="Infinity")
    assert float(p.offset) == 1.0 and np.isinf(p.scale)
    with pytest.raises(ScaleOffsetError):
        p.encode(np.array([3.0], np.float32))   # a finite value would become infinite
    assert float(cached_plan("float32", offset=0.1).offset) == float(np.float32(0.1))


# --- the codec -------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("data", "back"), [
    ({"name": "scale_offset"}, {"name": "scale_offset"}),
    ({"name": "scale_offset", "configuration": {}}, {"name": "scale_offset"}),
    ({"name": "scale_offset", "configuration": {"offset": 0, "scale": 1.0}}, {"name": "scale_offset"}),
    ({"name": "scale_offset", "configuration": {"offset": 5, "scale": 0.1}},
     {"name": "scale_offset", "configuration": {"offset": 5, "scale": 0.1}}),
    ({"name": "scale_offset", "configuration": {"scale": "NaN"}},
     {"name": "scale_offset", "configuration": {"scale": "NaN"}}),
])
def test_dict_round_trip(data, back):
    assert ScaleOffsetCodec.from_dict(data).to_dict() == back


@pytest.mark.parametrize(("data", "key"), [
    ({"name": "scale_offset", "configuration": {"offset": 1, "shift": 2}}, "shift"),
    ({"name": "scale_offset", "configuration": {"offset": None}}, "offset"),
    ({"name": "scale_offset", "configuration": {"offset": [1]}}, "offset"),
    ({"name": "scale_offset", "extra": 1}, "extra"),
])
def test_bad_metadata(data, key):
    with pytest.raises(ConfigError) as info:
        ScaleOffsetCodec.from_dict(data)
    assert info.value.config_key == key


def _create(path, dtype, codecs, fill, shape=(10,), chunks=(4,), zarr_format=3):
    return zarr.create_array(store=path, shape=shape, chunks=chunks, dtype=dtype, fill_value=fill,
                             filters=codecs, compressors=None, zarr_format=zarr_format)


def test_bad_offset_for_the_array_type_fails_at_creation(tmp_path):
    with pytest.raises(ConfigError, match="out of range for uint8"):
        _create(tmp_path / "a", "uint8", [ScaleOffsetCodec(offset=1000)], 0)
    with pytest.raises(ConfigError, match="scale must not be zero"):
        _create(tmp_path / "b", "float64", [ScaleOffsetCodec(scale=0)], 0.0)


def test_fill_value_goes_through_the_transformation(tmp_path):
    a = _create(tmp_path / "a", "int16", [ScaleOffsetCodec(offset=100, scale=3)], 7)
    spec = a.metadata.codecs[0].resolve_metadata(_spec(a))
    assert int(spec.fill_value) == (7 - 100) * 3
    with pytest.raises(FillValueError, match=r"fill value 20000 \(int16\) cannot be encoded"):
        _create(tmp_path / "b", "int16", [ScaleOffsetCodec(scale=2)], 20000)


def _spec(a):
    from zarr.core.array_spec import ArrayConfig, ArraySpec
    from zarr.core.buffer import default_buffer_prototype

    return ArraySpec(shape=(4,), dtype=a.metadata.data_type, fill_value=a.metadata.fill_value,
                     config=ArrayConfig.from_dict({}), prototype=default_buffer_prototype())


def test_spec_example_uint16_range_shift(tmp_path):
    """uint16 values in [1000, 1255] shifted to [0, 255] and stored as uint8."""
    codecs = [ScaleOffsetCodec(offset=1000), CastValueCodec(data_type="uint8")]
    a = _create(tmp_path / "a", "uint16", codecs, 1000, shape=(8,), chunks=(8,))
    data = np.array([1000, 1001, 1100, 1255, 1254, 1000, 1200, 1003], np.uint16)
    a[:] = data
    assert np.array_equal(zarr.open_array(tmp_path / "a")[:], data)
    raw = np.frombuffer((tmp_path / "a" / "c" / "0").read_bytes(), np.uint8)
    assert raw.tolist() == (data - 1000).tolist()
    with pytest.raises(Exception, match="out of range for uint8"):
        a[:1] = [1256]


def test_spec_example_float64_to_uint8_with_nan(tmp_path):
    codecs = [{"name": "scale_offset", "configuration": {"offset": -10, "scale": 0.1}},
              {"name": "cast_value", "configuration": {
                  "data_type": "uint8", "rounding": "nearest-even",
                  "scalar_map": {"encode": [["NaN", 0]], "decode": [[0, "NaN"]]}}}]
    a = _create(tmp_path / "a", "float64", codecs, np.nan, shape=(6,), chunks=(3,))
    a[:5] = [0.0, 2540.0, np.nan, 1000.0, 5.0]
    got = zarr.open_array(tmp_path / "a")[:]
    assert np.array_equal(got, [0.0, 2540.0, np.nan, 1000.0, 10.0, np.nan], equal_nan=True)
    raw = [np.frombuffer((tmp_path / "a" / "c" / k).read_bytes(), np.uint8).tolist() for k in "01"]
    assert raw == [[1, 255, 0], [101, 2, 0]]        # 5.0 -> 1.5 -> 2 (ties to even); fill NaN -> 0
    meta = json.loads((tmp_path / "a" / "zarr.json").read_text())
    assert meta["fill_value"] == "NaN" and meta["codecs"][:2] == codecs[:1] + [{
        "name": "cast_value", "configuration": {"data_type": "uint8", "scalar_map": {
            "encode": [["NaN", 0]], "decode": [[0, "NaN"]]}}}]


@pytest.mark.parametrize("dtype", ["<f8", ">f4"])
def test_v2_filter_chain(tmp_path, dtype):
    filters = [ScaleOffset(dtype=dtype, offset=-10, scale=0.1),
               numcodecs.get_codec({"id": "cast_value", "dtype": dtype, "data_type": "uint8",
                                    "scalar_map": {"encode": [["NaN", 0]], "decode": [[0, "NaN"]]}})]
    a = _create(tmp_path / "a", dtype, filters, np.nan, shape=(6,), chunks=(3,), zarr_format=2)
    a[:5] = [0.0, 2540.0, np.nan, 1000.0, 20.0]
    got = zarr.open_array(tmp_path / "a", zarr_format=2)[:]
    assert np.array_equal(got, np.array([0.0, 2540.0, np.nan, 1000.0, 20.0, np.nan], dtype=dtype),
                          equal_nan=True)
    assert json.loads((tmp_path / "a" / ".zarray").read_text())["filters"][0] == {
        "id": "scale_offset", "dtype": np.dtype(dtype).str, "offset": -10, "scale": 0.1}


def test_unsupported_dtype_errors_name_scale_offset():
    with pytest.raises(ConfigError, match="^scale_offset: dtype 'bool'"):
        ScaleOffset(dtype="|b1")


def test_numcodecs_codec():
    codec = numcodecs.get_codec({"id": "scale_offset", "dtype": ">i4", "offset": 3, "scale": 2})
    assert isinstance(codec, ScaleOffset)
    enc = codec.encode(np.array([3, 10, -1], ">i4"))
    assert enc.dtype == np.dtype("<i4") and enc.tolist() == [0, 14, -8]
    assert codec.decode(enc.tobytes()).tolist() == [3, 10, -1]
    assert codec.decode(enc.tobytes()).dtype == np.dtype(">i4")
    assert eval(repr(codec), {"ScaleOffset": ScaleOffset}).get_config() == codec.get_config()
    with pytest.raises(ConfigError, match="unknown configuration key"):
        ScaleOffset.from_config({"id": "scale_offset", "dtype": "<i4", "astype": "<i2"})


def test_registration(tmp_path):
    from importlib.metadata import entry_points

    from zarr.registry import get_codec_class

    assert ("scale_offset", "zdt.codecs.zarr.scale_offset:ScaleOffsetCodec") in {
        (e.name, e.value) for e in entry_points(group="zarr.codecs")}
    assert get_codec_class("scale_offset") is ScaleOffsetCodec
    assert zarr.config.get("codecs.scale_offset") == "zdt.codecs.zarr.scale_offset.ScaleOffsetCodec"


# --- legacy numcodecs fixedscaleoffset -------------------------------------------------------------

from zdt.codecs.fixedscaleoffset import fixedscaleoffset_to_codecs, fixedscaleoffset_to_filters, fixedscaleoffset_to_json  # noqa: E402


def test_conversion_follows_the_spec_example():
    config = {"name": "numcodecs.fixedscaleoffset",
              "configuration": {"astype": "uint8", "dtype": "float32", "scale": 0.1, "offset": 10}}
    assert fixedscaleoffset_to_json(config) == [
        {"name": "scale_offset", "configuration": {"scale": 0.1, "offset": 10.0}},
        {"name": "cast_value", "configuration": {"data_type": "uint8", "out_of_range": "wrap"}},
    ]
    so, cv = fixedscaleoffset_to_codecs({"id": "fixedscaleoffset", "offset": 10, "scale": 0.1,
                                         "dtype": "<f4", "astype": "|u1"})
    assert isinstance(so, ScaleOffsetCodec) and isinstance(cv, CastValueCodec)


@pytest.mark.parametrize(("config", "match"), [
    ({"id": "fixedscaleoffset", "offset": "5", "scale": 10, "dtype": "<f8", "astype": "<i2"}, "must be a JSON number"),
    ({"id": "fixedscaleoffset", "offset": True, "scale": 10, "dtype": "<f8", "astype": "<i2"}, "must be a JSON number"),
    ({"id": "fixedscaleoffset", "offset": float("nan"), "scale": 1, "dtype": "<i4", "astype": "<i2"}, "not an integer"),
    ({"id": "fixedscaleoffset", "offset": 0, "scale": 1, "dtype": "<f8"}, "missing 'astype'"),
    ({"name": "numcodecs.fixedscaleoffset", "configuration": {}, "x": 1}, "unknown key"),
])
def test_conversion_input_is_checked(config, match):
    with pytest.raises(ConfigError, match=match):
        fixedscaleoffset_to_json(config)


def test_conversion_keeps_64_bit_offsets_exact():
    so, _ = fixedscaleoffset_to_json({"id": "fixedscaleoffset", "offset": 2**60 + 1, "scale": 1,
                                      "dtype": "<i8", "astype": "<i4"})
    assert so["configuration"]["offset"] == 2**60 + 1


def test_conversion_refuses_what_it_cannot_express():
    with pytest.raises(ConfigError, match="not an integer"):
        fixedscaleoffset_to_json({"id": "fixedscaleoffset", "offset": 0.5, "scale": 1,
                                  "dtype": "<i2", "astype": "|u1"})
    with pytest.raises(ConfigError, match="not a numcodecs fixedscaleoffset"):
        fixedscaleoffset_to_json({"id": "delta", "dtype": "<i2"})


LEGACY = [
    # dtype, astype, offset, scale, data
    ("<f8", "|u1", 1000, 10, np.linspace(1000, 1025.5, 40)),
    ("<f8", "<u2", -5.5, 100, np.linspace(-5.5, 600, 50)),
    ("<f4", "|u1", 10, 0.1, np.linspace(10, 35.5, 30)),
    ("<i2", "|u1", 1000, 1, np.arange(1000, 1255, 7)),
    ("<i4", "<u2", -100, 3, np.arange(-100, 20000, 333)),
]


@pytest.mark.parametrize(("dtype", "astype", "offset", "scale", "data"), LEGACY)
def test_converted_filters_decode_numcodecs_chunks_the_same(tmp_path, dtype, astype, offset, scale, data):
    """A zarr v2 array written with numcodecs' FixedScaleOffset; its chunks decoded by numcodecs
    and by the converted [ScaleOffset, CastValue] filters give the same values (float32 arrays:
    within one unit in the last place, see zdt.codecs.fixedscaleoffset)."""
    legacy = numcodecs.FixedScaleOffset(offset=offset, scale=scale, dtype=dtype, astype=astype)
    data = data.astype(dtype)
    a = zarr.create_array(store=tmp_path / "a", shape=data.shape, chunks=(16,), dtype=dtype,
                          filters=[legacy], compressors=None, zarr_format=2, fill_value=0)
    a[:] = data
    ours = fixedscaleoffset_to_filters(legacy.get_config())
    for key in sorted(p.name for p in (tmp_path / "a").iterdir() if not p.name.startswith(".")):
        chunk = (tmp_path / "a" / key).read_bytes()
        expected = np.asarray(legacy.decode(chunk)).view(dtype)
        got = chunk
        for f in reversed(ours):
            got = f.decode(got)
        got = np.asarray(got).view(dtype)
        if np.dtype(dtype) == np.float32:
            assert np.all(np.abs(got - expected) <= np.spacing(np.abs(expected))), key
        else:
            assert np.array_equal(got, expected), key
        # and re-encoding with the converted filters gives numcodecs' bytes back
        enc = expected
        for f in ours:
            enc = f.encode(enc)
        if np.dtype(dtype) != np.float32:
            assert bytes(np.asarray(enc)) == chunk, key


@pytest.mark.parametrize(("dtype", "astype", "offset", "scale", "data"), LEGACY[:2] + LEGACY[3:])
def test_v3_metadata_rewritten_reads_the_same(tmp_path, dtype, astype, offset, scale, data):
    """A zarr v3 array with numcodecs.fixedscaleoffset, its metadata rewritten to the converted
    codecs: zarr reads the same values from the same chunks. (The fill value must survive the
    chain, which numcodecs never required: here it is the offset, stored as 0.)"""
    import warnings

    from zarr.codecs.numcodecs import FixedScaleOffset

    data = data.astype(dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")      # zarr warns that numcodecs.* codecs are unstable
        a = zarr.create_array(store=tmp_path / "a", shape=data.shape, chunks=(16,),
                              dtype=np.dtype(dtype).newbyteorder("="), fill_value=offset,
                              filters=[FixedScaleOffset(offset=offset, scale=scale, dtype=dtype,
                                                        astype=astype)], compressors=None)
        a[:] = data
        before = zarr.open_array(tmp_path / "a")[:]
    meta_path = tmp_path / "a" / "zarr.json"
    meta = json.loads(meta_path.read_text())
    legacy = meta["codecs"][0]
    assert legacy["name"] == "numcodecs.fixedscaleoffset"
    meta["codecs"][0:1] = fixedscaleoffset_to_json(legacy)
    meta_path.write_text(json.dumps(meta))
    after = zarr.open_array(tmp_path / "a")[:]
    assert np.array_equal(after, before)


def test_codec_decode_never_modifies_a_callers_array():
    from zarr.core.buffer.cpu import NDBuffer

    codec = ScaleOffsetCodec(offset=1, scale=2)
    spec = _spec(zarr.create_array(store={}, shape=(2,), dtype="float64", fill_value=1.0))
    arr = np.array([2.0, 4.0])
    out = codec._decode_sync(NDBuffer.from_numpy_array(arr), spec).as_numpy_array()
    assert arr.tolist() == [2.0, 4.0] and out.tolist() == [2.0, 3.0]
    # nor one the caller reaches only through its buffer object
    buf = NDBuffer.from_numpy_array(np.array([2.0, 4.0, 6.0]))
    out = codec._decode_sync(buf, spec)
    assert out.as_numpy_array().tolist() == [2.0, 3.0, 4.0]
    assert buf.as_numpy_array().tolist() == [2.0, 4.0, 6.0]


@pytest.mark.parametrize("dtype", ["int16", "uint64", "float32", "float16"])
def test_in_place_kernel_matches_out_of_place(dtype):
    rng = np.random.default_rng(4)
    x = (rng.integers(0, 50, 5000) * 6).astype(dtype)
    p = cached_plan(dtype, 3, 2)
    expected = p.decode(x)
    y = x.copy()
    assert p.decode(y, out=y) is y
    assert np.array_equal(y, expected)
    bad = x.copy()
    bad[4000] = 7 if np.dtype(dtype).kind in "iu" else np.finfo(dtype).max
    if np.dtype(dtype).kind == "f":
        p = cached_plan(dtype, 3, 0.5)
    with pytest.raises(ScaleOffsetError) as info:
        p.decode(bad, out=bad)
    assert info.value.index == (4000,)


@pytest.mark.parametrize("name", ["float32", "bfloat16", "float8_e4m3fn", "float8_e8m0fnu"])
@pytest.mark.parametrize("offset, scale", [("NaN", 1), ("NaN", 2), (1, "NaN")])
def test_a_nan_offset_or_scale_fails_every_finite_element_in_every_float_type(name, offset, scale):
    """Found by the differential fuzzer (tests/fuzz, scale_offset_differential): with a NaN
    offset float8_e8m0fnu gave NaN for finite elements where every other float type fails
    (a finite value may not become non-finite); a NaN element still propagates."""
    dtype = FORMATS[name].dtype
    plan = ScaleOffsetPlan(FORMATS[name], offset, scale)
    values = np.array([4.0, 1.0, np.nan], dtype=dtype)
    for run, op in ((plan.encode, "subtraction" if offset == "NaN" else "multiplication"),
                    (plan.decode, "division" if scale == "NaN" else "addition")):
        expected = reference.scale_offset_array(values, reference.decode_json_scalar(offset, dtype)[1],
                                                reference.decode_json_scalar(scale, dtype)[1],
                                                run == plan.decode)
        assert expected == (0, op), expected
        for build in BUILDS:
            with kernels.use(build), pytest.raises(ScaleOffsetError) as info:
                run(values)
            assert info.value.index == (0,) and info.value.operation == op
        with kernels.use(BUILDS[0]):
            assert np.isnan(run(values[2:]).astype(np.float32)).all()
