"""zdt's zarr data types for the low-precision formats: resolution next to zarr's own types,
fill values in the zarr v3 encoding, arrays of every type through zarr v3 and format 2, the
sub-byte storage rule, and the numcodecs codecs naming these types."""

from __future__ import annotations

import json
import math

import ml_dtypes
import numpy as np
import pytest
import zarr
from zarr.core.dtype import data_type_registry, get_data_type_from_json, get_data_type_from_native_dtype

import lowprec_model as lp
from strategies import LOW_NAMES
import zdt
from zdt import CastValue, ScaleOffset
from zdt.dtypes import DATA_TYPES, BFloat16

try:
    from zarr.errors import DataTypeValidationError
except ImportError:
    from zarr.core.dtype.common import DataTypeValidationError

FLOATS = [n for n in LOW_NAMES if lp.MODELS[n].kind == "float"]
INTS = [n for n in LOW_NAMES if lp.MODELS[n].kind == "int"]


def native(name: str) -> np.dtype:
    return np.dtype(getattr(ml_dtypes, name))


# --- resolution ---------------------------------------------------------------------------------

@pytest.mark.parametrize("name", LOW_NAMES)
def test_each_native_dtype_and_json_form_resolves_to_exactly_its_type(name):
    cls = DATA_TYPES[name]
    # match_dtype raises if two registered types claim the dtype
    assert type(get_data_type_from_native_dtype(native(name))) is cls
    assert type(get_data_type_from_json(name, zarr_format=3)) is cls
    assert type(get_data_type_from_json({"name": name}, zarr_format=3)) is cls
    assert type(get_data_type_from_json({"name": name, "object_codec_id": None}, zarr_format=2)) is cls
    claims = [key for key, other in data_type_registry.contents.items()
              if other._check_json_v3(name) or other._check_json_v2({"name": name, "object_codec_id": None})]
    assert claims == [name]


def builtin_json_forms() -> list[tuple[object, int]]:
    """Every JSON form zarr's own data types write, for both formats."""
    import warnings

    out = []
    for dt in ["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
               "float16", "float32", "float64", "complex64", "complex128", "<U4", "S3", "V1",
               "V2", "M8[s]", "m8[ms]"]:
        z = get_data_type_from_native_dtype(np.dtype(dt))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")     # "no Zarr V3 specification" for some
            out += [(z.to_json(zarr_format=3), 3), (z.to_json(zarr_format=2), 2)]
    for name in ["<V1", "<V2", ">V2", "|V1", "<f1", "<f2", "|u1", "|i1"]:      # ml_dtypes' .str
        out.append(({"name": name, "object_codec_id": None}, 2))
    return out


@pytest.mark.parametrize(("data", "zarr_format"), builtin_json_forms())
def test_no_zdt_type_claims_another_types_json(data, zarr_format):
    for cls in DATA_TYPES.values():
        with pytest.raises(DataTypeValidationError):
            cls.from_json(data, zarr_format=zarr_format)


@pytest.mark.parametrize("data", ["bfloat16", ["bfloat16"], 7, None, {"name": "bfloat16"},
                                  {"name": "bfloat16", "object_codec_id": "vlen-utf8"}])
def test_malformed_v2_forms_are_rejected_cleanly(data):
    with pytest.raises(DataTypeValidationError):
        BFloat16.from_json(data, zarr_format=2)


def test_v3_forms_with_configuration_or_other_keys_are_rejected():
    for data in [{"name": "int4", "configuration": {"x": 1}}, {"name": "int4", "extra": 1}, "INT4"]:
        with pytest.raises(DataTypeValidationError):
            DATA_TYPES["int4"].from_json(data, zarr_format=3)


def test_ml_dtypes_void_names_stay_raw_bytes():
    # zarr-python 2 wrote bfloat16 as "<V2"; zdt never claims it (it means raw bytes)
    assert type(get_data_type_from_native_dtype(np.dtype("V2"))).__name__ == "RawBytes"


# --- fill values ----------------------------------------------------------------------------------

def fill_bits(name: str, value: object) -> int:
    z = DATA_TYPES[name]()
    scalar = z.from_json_scalar(value, zarr_format=3)
    return lp.logical_bits(scalar)


@pytest.mark.parametrize("name", FLOATS)
def test_float_fill_values_every_form(name):
    m = lp.MODELS[name]
    kinds = {v[0] for v in lp.table(name).values()}
    if "nan" in kinds:
        assert fill_bits(name, "NaN") == m.nan_json
    else:
        with pytest.raises(ValueError, match="has no NaN"):
            fill_bits(name, "NaN")
    if "inf" in kinds:
        assert fill_bits(name, "Infinity") == lp.inf_bits(name, False)
        assert fill_bits(name, "-Infinity") == lp.inf_bits(name, True)
    else:
        with pytest.raises(ValueError, match="has no infinities"):
            fill_bits(name, "Infinity")
    # every finite value: as a JSON number and as its hex bit pattern, both ways
    z = DATA_TYPES[name]()
    digits = 2 * m.itemsize
    for value, bits in lp.finite_values(name).items():
        assert fill_bits(name, float(value)) == bits
        assert fill_bits(name, f"0x{bits:0{digits}x}") == bits
        # written as a number, except float8_e8m0fnu: as its bit pattern (TensorStore misreads
        # numbers of that type, tests/codecs/test_interop_tensorstore.py)
        written = f"0x{bits:0{digits}x}" if name == "float8_e8m0fnu" else float(value)
        assert z.to_json_scalar(z.from_json_scalar(float(value), zarr_format=3), zarr_format=3) == written
    top = lp.max_finite(name)
    with pytest.raises(ValueError, match="beyond the range"):
        fill_bits(name, float(top * 4))
    with pytest.raises(ValueError, match="hex bit pattern"):
        fill_bits(name, "0x" + "0" * (digits + 1))
    with pytest.raises(ValueError, match="not a valid"):
        fill_bits(name, "1.0")


def test_fill_values_are_rounded_once_to_nearest_even():
    assert fill_bits("float8_e4m3fn", 1.0625) == 0x38          # tie: 1.0 (even) not 1.125
    assert fill_bits("float8_e4m3fn", 1.0625 + 2.0**-40) == 0x39
    assert fill_bits("bfloat16", 3.14159) == 0x4049            # 3.140625
    assert fill_bits("float8_e8m0fnu", 3.0) == 0x80            # the even exponent field: 2.0
    with pytest.raises(ValueError, match="all positive"):
        fill_bits("float8_e8m0fnu", 0.0)
    with pytest.raises(ValueError, match="all positive"):
        fill_bits("float8_e8m0fnu", -2.0)
    with pytest.raises(ValueError, match="sets bits above the 4 bits"):
        fill_bits("float4_e2m1fn", "0x1f")


def test_non_canonical_nan_fill_values_keep_their_bits():
    z = DATA_TYPES["float8_e4m3fn"]()
    assert z.to_json_scalar(z.from_json_scalar("0xff", zarr_format=3), zarr_format=3) == "0xff"
    assert z.to_json_scalar(z.from_json_scalar("NaN", zarr_format=3), zarr_format=3) == "NaN"
    z = DATA_TYPES["bfloat16"]()
    assert z.to_json_scalar(z.from_json_scalar("0x7fc1", zarr_format=3), zarr_format=3) == "0x7fc1"


@pytest.mark.parametrize("name", INTS)
def test_integer_fill_values(name):
    z = DATA_TYPES[name]()
    lo, hi = (-(1 << (lp.MODELS[name].bits - 1)), (1 << (lp.MODELS[name].bits - 1)) - 1) \
        if lp.MODELS[name].signed else (0, (1 << lp.MODELS[name].bits) - 1)
    for v in range(lo, hi + 1):
        assert int(z.from_json_scalar(v, zarr_format=3)) == v
        assert z.to_json_scalar(v, zarr_format=3) == v
    for bad in (lo - 1, hi + 1, 1.5, "1", "0x1", True):
        with pytest.raises((ValueError, TypeError)):
            z.from_json_scalar(bad, zarr_format=3)


def test_cast_scalar_and_default():
    assert float(DATA_TYPES["float8_e5m2"]().cast_scalar(3)) == 3.0
    assert float(DATA_TYPES["float8_e5m2"]().cast_scalar(np.float32(0.1))) == 0.09375
    assert int(DATA_TYPES["int4"]().cast_scalar(np.int64(-8))) == -8
    with pytest.raises(ValueError, match="out of range for int4"):
        DATA_TYPES["int4"]().cast_scalar(8)
    with pytest.raises(TypeError):
        DATA_TYPES["int4"]().cast_scalar(True)
    for name in LOW_NAMES:
        default = DATA_TYPES[name]().default_scalar()
        assert lp.logical_bits(default) == 0


# --- arrays through zarr ----------------------------------------------------------------------------

def sample(name: str, n: int = 24) -> np.ndarray:
    """Finite values of the type, spread over its range."""
    values = sorted(lp.finite_values(name))
    picks = [values[i * (len(values) - 1) // (n - 1)] for i in range(n)]
    bits = [lp.finite_values(name)[v] for v in picks]
    return np.array(bits, dtype=np.uint8 if lp.MODELS[name].itemsize == 1 else np.uint16).view(native(name))


def fill_for(name: str) -> object:
    values = sorted(lp.finite_values(name))
    return float(values[len(values) // 3]) if lp.MODELS[name].kind == "float" else int(values[1])


@pytest.mark.parametrize("zarr_format", [2, 3])
@pytest.mark.parametrize("name", LOW_NAMES)
def test_arrays_of_every_type_round_trip_with_fill_values(tmp_path, name, zarr_format):
    data = sample(name)
    fill = fill_for(name)
    a = zarr.create_array(store=tmp_path / "a", shape=(30,), chunks=(8,), dtype=name,
                          fill_value=fill, zarr_format=zarr_format, compressors=None)
    a[:24] = data
    b = zarr.open_array(tmp_path / "a", mode="r")
    assert b.dtype == native(name)
    got = b[:]
    assert lp.logical_bits(got[0]) == lp.logical_bits(data[0])
    assert [lp.logical_bits(x) for x in got[:24]] == [lp.logical_bits(x) for x in data]
    fill_bits_expected = lp.finite_values(name)[type(list(lp.finite_values(name))[0])(fill)]
    assert all(lp.logical_bits(x) == fill_bits_expected for x in got[24:])
    meta = json.loads((tmp_path / "a" / ("zarr.json" if zarr_format == 3 else ".zarray")).read_text())
    written = f"0x{fill_bits_expected:02x}" if name == "float8_e8m0fnu" else fill
    if zarr_format == 3:
        assert meta["data_type"] == name and meta["fill_value"] == written
    else:
        assert meta["dtype"] == name and meta["fill_value"] == written


def chunk_bytes(path, zarr_format: int) -> bytes:
    return (path / ("c/0" if zarr_format == 3 else "0")).read_bytes()


SUB_BYTE_WRITES = {       # what an array held in memory -> what zdt writes
    "int4": ([0x0F, 0x08, 0xF7, 0x01], [0xFF, 0xF8, 0x07, 0x01]),
    "int2": ([0x02, 0x03, 0x01, 0xFC], [0xFE, 0xFF, 0x01, 0x00]),
    "uint4": ([0xFF, 0x10, 0x07, 0xA1], [0x0F, 0x00, 0x07, 0x01]),
    "float4_e2m1fn": ([0x0F, 0xF1, 0x18, 0x07], [0x0F, 0x01, 0x08, 0x07]),
    "float6_e2m3fn": ([0xFF, 0x40, 0x21, 0x1F], [0x3F, 0x00, 0x21, 0x1F]),
}


def test_zdt_pipeline_writes_sub_byte_high_bits_consistently(tmp_path):
    """Signed integers sign-extended, everything else zero, whatever the array in memory held
    (ml_dtypes holds int4 -1 as 0x0f; garbage bits are ignored)."""
    for name, (raw, stored) in SUB_BYTE_WRITES.items():
        path = tmp_path / name
        with zdt.use_pipeline():
            a = zarr.create_array(store=path, shape=(4,), chunks=(4,), dtype=name, fill_value=0,
                                  zarr_format=3, compressors=None)
            a[:] = np.array(raw, dtype=np.uint8).view(native(name))
        assert list(chunk_bytes(path, 3)) == stored, name


def test_zarr_pipeline_writes_sub_byte_bytes_as_they_are_in_memory(tmp_path):
    """zdt does not touch zarr's bytes codec: under zarr's own pipeline the bytes are the
    array's memory (ml_dtypes': zero high bits, int4 -1 is 0x0f), and zdt's pipeline reads them
    to the same values."""
    for name in SUB_BYTE_WRITES:
        path = tmp_path / name
        # bit patterns as ml_dtypes holds them (the value in the low bits, high bits zero): all
        # bits set, the lowest, the top one, none (int4: -1, 1, -8, 0)
        bits = lp.MODELS[name].bits
        values = np.array([(1 << bits) - 1, 1, 1 << (bits - 1), 0], dtype=np.uint8).view(native(name))
        a = zarr.create_array(store=path, shape=(4,), chunks=(4,), dtype=name, fill_value=0,
                              zarr_format=3, compressors=None)
        assert type(a.metadata.codecs[0]) is zarr.codecs.BytesCodec
        a[:] = values
        assert chunk_bytes(path, 3) == values.tobytes(), name
        with zdt.use_pipeline():
            back = zarr.open_array(path, mode="r")[:]
        assert [float(x) for x in back] == [float(x) for x in values], name


def _garbage_chunk(tmp_path, name):
    m = lp.MODELS[name]
    zarr.create_array(store=tmp_path / "a", shape=(4,), chunks=(4,), dtype=name, fill_value=0,
                      compressors=None)
    low = [1, (1 << m.bits) - 1, 1 << (m.bits - 1), 0]
    garbage = [b | (0xFF & ~((1 << m.bits) - 1) & 0b1011_0101) for b in low]
    (tmp_path / "a" / "c").mkdir()
    (tmp_path / "a" / "c" / "0").write_bytes(bytes(garbage))
    expected = [lp.table(name)[b] for b in low]
    return [float(v[1]) if v[0] == "num" else (-0.0 if v[1] else 0.0) for v in expected]


@pytest.mark.parametrize("name", ["int4", "uint2", "float4_e2m1fn", "float6_e3m2fn"])
def test_zdt_pipeline_ignores_sub_byte_high_bits_on_read(tmp_path, name):
    """Another writer may leave anything in the high bits: the values come from the low bits."""
    expected = _garbage_chunk(tmp_path, name)
    with zdt.use_pipeline():
        got = zarr.open_array(tmp_path / "a", mode="r")[:]
    assert [float(x) for x in got] == expected
    assert [math.copysign(1, float(x)) for x in got] == [math.copysign(1, v) for v in expected]


@pytest.mark.parametrize("name", ["int4", "uint2"])
def test_zarr_pipeline_reads_sub_byte_integers_from_the_low_bits(tmp_path, name):
    """Under zarr's own pipeline the bytes go to ml_dtypes as they are; its sub-byte integers
    read the low bits only, so the rule holds there too."""
    expected = _garbage_chunk(tmp_path, name)
    assert [float(x) for x in zarr.open_array(tmp_path / "a", mode="r")[:]] == expected


@pytest.mark.parametrize("name", ["float4_e2m1fn", "float6_e3m2fn"])
def test_zarr_pipeline_hands_sub_byte_float_high_bits_to_ml_dtypes(tmp_path, name):
    """The documented limit of zarr's own pipeline (README): ml_dtypes reads a set high bit of
    a float4 / float6 byte as part of the value, so chunks from a writer that sets them need
    zdt's pipeline. If ml_dtypes starts ignoring them, this fails and the README can drop the
    note."""
    expected = _garbage_chunk(tmp_path, name)
    got = [float(x) for x in zarr.open_array(tmp_path / "a", mode="r")[:]]
    raw = list((tmp_path / "a" / "c" / "0").read_bytes())
    assert got == [float(v) for v in np.array(raw, np.uint8).view(native(name))]
    assert got != expected


def test_bfloat16_byte_order(tmp_path):
    data = np.array([1.0, -2.0, 3.140625], dtype=ml_dtypes.bfloat16)
    for endian, expected in [("little", "803f00c04940"), ("big", "3f80c0004049")]:
        path = tmp_path / endian
        a = zarr.create_array(store=path, shape=(3,), chunks=(3,), dtype="bfloat16", fill_value=0.0,
                              compressors=None, serializer={"name": "bytes", "configuration": {"endian": endian}})
        a[:] = data
        assert chunk_bytes(path, 3).hex() == expected
        assert zarr.open_array(path, mode="r")[:].tolist() == data.tolist()
    # zarr format 2 stores bfloat16 little-endian, as TensorStore
    a = zarr.create_array(store=tmp_path / "v2", shape=(3,), chunks=(3,), dtype="bfloat16",
                          fill_value=0.0, compressors=None, zarr_format=2)
    a[:] = data
    assert chunk_bytes(tmp_path / "v2", 2).hex() == "803f00c04940"


def test_nan_fill_value_for_types_that_have_one(tmp_path):
    for name in ("bfloat16", "float8_e4m3fn", "float8_e5m2fnuz", "float8_e8m0fnu"):
        a = zarr.create_array(store=tmp_path / name, shape=(2,), chunks=(2,), dtype=name,
                              fill_value="NaN", compressors=None)
        assert all(math.isnan(float(x)) for x in zarr.open_array(tmp_path / name)[:])
        assert json.loads((tmp_path / name / "zarr.json").read_text())["fill_value"] == "NaN"
    with pytest.raises((ValueError, TypeError)):
        zarr.create_array(store={}, shape=(2,), dtype="float4_e2m1fn", fill_value="NaN")


def test_cast_value_from_float32_to_each_small_type_through_zarr(tmp_path):
    data = np.linspace(-5, 5, 41, dtype=np.float32)
    for name in ("bfloat16", "float8_e4m3fn", "float8_e5m2", "float4_e2m1fn", "int4"):
        codec = {"name": "cast_value", "configuration": {"data_type": name, "out_of_range": "clamp"}}
        a = zarr.create_array(store=tmp_path / name, shape=(41,), chunks=(16,), dtype="float32",
                              fill_value=0.0, filters=[codec], compressors=None)
        a[:] = data
        got = zarr.open_array(tmp_path / name)[:]
        expected = zdt_cast(zdt_cast(data, name), "float32")
        assert np.array_equal(got, expected), name


def zdt_cast(arr, name):
    from zdt import cast_array

    return cast_array(arr, name, out_of_range="clamp")


@pytest.mark.parametrize("source", ["float32", "float64"])
@pytest.mark.parametrize("name", LOW_NAMES)
def test_nan_infinities_and_values_beyond_the_range_warn_of_nothing(tmp_path, name, source):
    """What the spec allows into each type (NaN, infinities, values beyond the range under
    clamp, each mapped where the type cannot hold it) through cast_value in a zarr array and
    back: zdt's kernels decide every element, so nothing warns (ml_dtypes' astype warns of NaN
    and values beyond the range of its integer types from 0.7.0 on)."""
    import warnings

    m = lp.MODELS[name]
    finite = lp.finite_values(name)
    top, low = max(finite), min(finite)
    has_nan = m.kind == "float" and (m.ieee or m.nan_all_ones or m.nan_neg_zero or m.e8m0)
    pairs = [] if has_nan else [["NaN", 0]]
    if not m.ieee:
        pairs += [["Infinity", float(top)], ["-Infinity", float(low)]]
    codec = {"name": "cast_value", "configuration": {"data_type": name, "out_of_range": "clamp",
                                                    **({"scalar_map": {"encode": pairs}} if pairs else {})}}
    beyond = min(4.0 * float(top) + 1, float(np.finfo(source).max))
    x = np.array([1.0, beyond, -beyond, np.nan, np.inf, -np.inf], dtype=source)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        a = zarr.create_array(store=tmp_path / "a", shape=x.shape, chunks=(4,), dtype=source,
                              fill_value=1.0, filters=[codec], compressors=None)
        a[:] = x
        got = zarr.open_array(tmp_path / "a", mode="r")[:]
    assert [str(w.message) for w in seen if issubclass(w.category, RuntimeWarning)] == []
    # (clamp: the type's infinity where it has one, else its largest or smallest value)
    high, low = (math.inf, -math.inf) if m.ieee else (float(top), float(low))
    expected = [1.0, high, low, math.nan if has_nan else 0.0, high, low]
    assert got.tolist()[:3] == expected[:3] and got.tolist()[4:] == expected[4:]
    assert math.isnan(got[3]) if has_nan else got[3] == 0.0


# --- the numcodecs codecs name these types -----------------------------------------------------------

@pytest.mark.parametrize("name", ["bfloat16", "float8_e4m3fn", "int4"])
def test_numcodecs_codecs_carry_the_type_by_name(name):
    codec = CastValue(dtype=name, data_type="float32")
    config = codec.get_config()
    assert config["dtype"] == name
    again = CastValue.from_config(config)
    data = sample(name, 8)
    enc = again.encode(data)
    assert enc.dtype == np.dtype("<f4")
    assert [lp.logical_bits(x) for x in again.decode(enc.tobytes())] == [lp.logical_bits(x) for x in data]
    so = ScaleOffset(dtype=name, offset=0, scale=1)
    assert so.get_config()["dtype"] == name and ScaleOffset.from_config(so.get_config()).dtype == native(name)


def test_zarr_format_2_filters_on_small_types(tmp_path):
    data = np.array([0.5, 1.5, -2.0, 448.0], dtype=ml_dtypes.float8_e4m3fn)
    a = zarr.create_array(store=tmp_path / "a", shape=(4,), chunks=(4,), dtype="float8_e4m3fn",
                          fill_value=0.0, zarr_format=2, compressors=None,
                          filters=[CastValue(dtype="float8_e4m3fn", data_type="bfloat16")])
    a[:] = data
    meta = json.loads((tmp_path / "a" / ".zarray").read_text())
    assert meta["filters"][0]["dtype"] == "float8_e4m3fn"
    assert zarr.open_array(tmp_path / "a")[:].tolist() == data.tolist()


# --- the ZDType contract zarr's own property tests check -------------------------------------------

INSTANCES = [cls() for cls in DATA_TYPES.values()] + [BFloat16(endianness="big")]


@pytest.mark.parametrize("zdtype", INSTANCES, ids=lambda z: f"{z._zarr_v3_name}-{getattr(z, 'endianness', '')}")
@pytest.mark.parametrize("zarr_format", [2, 3])
def test_every_instance_round_trips_through_its_json(zdtype, zarr_format):
    """As zarr's test_zdtype_json_roundtrip: JSON -> the data type -> the same JSON, and in
    format 2 (where the dtype string carries the byte order) the same instance."""
    as_json = json.loads(json.dumps(zdtype.to_json(zarr_format=zarr_format)))
    back = get_data_type_from_json(as_json, zarr_format=zarr_format)
    assert back.to_json(zarr_format=zarr_format) == as_json
    if zarr_format == 2:
        assert back == zdtype


@pytest.mark.parametrize("zdtype", INSTANCES, ids=lambda z: f"{z._zarr_v3_name}-{getattr(z, 'endianness', '')}")
def test_every_instance_round_trips_through_its_native_dtype(zdtype):
    native_dtype = zdtype.to_native_dtype()
    assert get_data_type_from_native_dtype(native_dtype) == zdtype
    assert zdtype.item_size == native_dtype.itemsize


def test_bfloat16_format_2_dtype_strings():
    """"bfloat16" is little-endian (TensorStore's only spelling), ">bfloat16" big-endian."""
    little, big = BFloat16(endianness="little"), BFloat16(endianness="big")
    assert little.to_json(zarr_format=2) == {"name": "bfloat16", "object_codec_id": None}
    assert big.to_json(zarr_format=2) == {"name": ">bfloat16", "object_codec_id": None}
    for name, expected in (("bfloat16", little), ("<bfloat16", little), (">bfloat16", big)):
        assert get_data_type_from_json({"name": name, "object_codec_id": None}, zarr_format=2) == expected


def test_big_endian_bfloat16_array_in_zarr_format_2(tmp_path):
    data = np.array([1.0, -2.0, 3.140625], dtype=ml_dtypes.bfloat16).astype(
        np.dtype(ml_dtypes.bfloat16).newbyteorder(">"))
    a = zarr.create_array(store=tmp_path / "v2", shape=(3,), chunks=(3,), dtype=data.dtype,
                          fill_value=0.5, compressors=None, zarr_format=2)
    a[:] = data
    assert json.loads((tmp_path / "v2" / ".zarray").read_text())["dtype"] == ">bfloat16"
    assert chunk_bytes(tmp_path / "v2", 2).hex() == "3f80c0004049"
    b = zarr.open_array(tmp_path / "v2", mode="r")
    assert b.dtype == data.dtype and b[:].tolist() == data.tolist() and float(b.fill_value) == 0.5


@pytest.mark.filterwarnings("ignore:The data type .* does not have a Zarr V3 specification")
def test_zdt_types_inside_a_structured_type_round_trip_in_format_2():
    from zarr.core.dtype import Float32, Structured

    struct = Structured(fields=(("a", BFloat16(endianness="big")), ("b", Float32())))
    as_json = struct.to_json(zarr_format=2)
    assert as_json["name"] == [["a", ">bfloat16"], ["b", "<f4"]]
    back = get_data_type_from_json(as_json, zarr_format=2)     # (zarr 3.4 names its class Struct)
    assert back.to_json(zarr_format=2) == as_json
    assert [(name, field) for name, field in back.fields] == [("a", BFloat16(endianness="big")),
                                                              ("b", Float32())]
