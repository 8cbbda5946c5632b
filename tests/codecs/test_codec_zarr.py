"""The zarr v3 codec: configuration, validation, fill values and round trips through real
arrays in a local directory store."""

from __future__ import annotations

import json
from importlib.metadata import entry_points

import numpy as np
import pytest
import zarr

import zdt
from zdt import zarr_compat
from zdt.codecs.zarr import BitroundCodec, CastValueCodec, ScaleOffsetCodec
from zdt.errors import ConfigError, FillValueError

NAN_MAP = {"encode": [["NaN", 0]], "decode": [[0, "NaN"]]}


# --- serialization ---------------------------------------------------------------------------

@pytest.mark.parametrize("config", [
    {"data_type": "uint8"},
    {"data_type": "int16", "rounding": "towards-zero", "out_of_range": "wrap"},
    {"data_type": "float16", "rounding": "nearest-away", "out_of_range": "clamp"},
    {"data_type": "uint8", "scalar_map": {"encode": [["NaN", 0], ["Infinity", 255]], "decode": [[0, "NaN"]]}},
])
def test_dict_round_trip(config):
    data = {"name": "cast_value", "configuration": config}
    codec = CastValueCodec.from_dict(data)
    assert codec.to_dict() == data
    assert CastValueCodec.from_dict(json.loads(json.dumps(codec.to_dict()))) == codec


def test_to_dict_writes_only_non_default_fields():
    codec = CastValueCodec(data_type="int8", rounding="nearest-even", out_of_range=None, scalar_map=None)
    assert codec.to_dict() == {"name": "cast_value", "configuration": {"data_type": "int8"}}


def test_data_type_forms():
    for form in ("uint16", {"name": "uint16"}, np.dtype("uint16"), zarr.dtype.UInt16()):
        assert CastValueCodec(data_type=form).to_dict()["configuration"]["data_type"] == "uint16"


def test_plus_infinity_is_written_as_infinity():
    codec = CastValueCodec.from_dict({"name": "cast_value", "configuration": {
        "data_type": "uint8", "scalar_map": {"encode": [["+Infinity", 1]]}}})
    assert codec.to_dict()["configuration"]["scalar_map"] == {"encode": [["Infinity", 1]]}


@pytest.mark.parametrize(("config", "key", "match"), [
    ({"data_type": "uint8", "bogus": 1}, "bogus", "unknown configuration key"),
    ({"rounding": "towards-zero"}, "data_type", "needs 'data_type'"),
    ({"data_type": "uint8", "rounding": "up"}, "rounding", "rounding 'up' is not one of"),
    ({"data_type": "uint8", "out_of_range": "saturate"}, "out_of_range", "out_of_range 'saturate'"),
    ({"data_type": "float32", "out_of_range": "wrap"}, "out_of_range", "needs an integer data_type"),
    ({"data_type": "uint8", "scalar_map": {"encode": [], "both": []}}, "scalar_map", "unknown key"),
    ({"data_type": "uint8", "scalar_map": {"encode": [["NaN"]]}}, "scalar_map.encode", "pair"),
    ({"data_type": "uint8", "scalar_map": {"encode": [["NaN", 256]]}}, "scalar_map.encode", "out of range for uint8"),
    ({"data_type": "uint8", "scalar_map": {"decode": [[1.5, 0.0]]}}, "scalar_map.decode", "not an integer"),
    ({"data_type": "uint8", "scalar_map": [["NaN", 0]]}, "scalar_map", "must be an object"),
    ({"data_type": {"name": "uint8", "configuration": {"x": 1}}}, "data_type", "without configuration"),
])
def test_bad_configurations(config, key, match):
    with pytest.raises(ConfigError, match=match) as info:
        CastValueCodec.from_dict({"name": "cast_value", "configuration": config})
    assert info.value.config_key == key


@pytest.mark.parametrize(("data", "key", "match"), [
    ({"name": "cast_value", "configuration": {"data_type": "uint8"}, "extra": 1}, "extra", "unknown codec metadata key"),
    ({"name": "cast_value"}, "configuration", "needs a 'configuration'"),
    ({"name": "cast_value", "configuration": {"data_type": None}}, "data_type", "null"),
    ({"name": "cast_value", "configuration": {"data_type": "uint8", "out_of_range": None}}, "out_of_range", "null"),
    ({"name": "cast_value", "configuration": {"data_type": {"name": {"name": "uint8"}}}}, "data_type", "without configuration"),
    ({"name": "cast_value", "configuration": {"data_type": "uint8", "scalar_map": {"encode": {"NaN": 0}}}},
     "scalar_map.encode", "must be an array"),
    ({"name": "cast_value", "configuration": {"data_type": "uint8", "rounding": ["x"]}}, "rounding", "not one of"),
    ({"name": "cast_value", "configuration": {"data_type": 8}}, "data_type", "must be a zarr v3 data type name"),
])
def test_metadata_is_read_strictly(data, key, match):
    with pytest.raises(ConfigError, match=match) as info:
        CastValueCodec.from_dict(data)
    assert info.value.config_key == key


def test_python_api_none_data_type_is_an_error():
    with pytest.raises(ConfigError, match="data_type"):
        CastValueCodec(data_type=None)


def test_codecs_are_hashable_values():
    a = CastValueCodec(data_type="uint8", scalar_map={"encode": [["NaN", 0]]})
    b = CastValueCodec.from_dict(a.to_dict())
    assert a == b and hash(a) == hash(b)
    assert CastValueCodec(data_type=zarr.dtype.Int16(endianness="big")) == CastValueCodec(data_type="int16")
    assert a.scalar_map["encode"] == [["NaN", 0]]


def test_python_nan_and_inf_keys_mean_the_spec_strings():
    codec = CastValueCodec(data_type="uint8", scalar_map={"encode": [[float("nan"), 0], [float("-inf"), 1]]})
    assert codec.to_dict()["configuration"]["scalar_map"] == {"encode": [["NaN", 0], ["-Infinity", 1]]}
    json.dumps(codec.to_dict(), allow_nan=False)


def test_empty_scalar_map_is_the_default():
    assert "scalar_map" not in CastValueCodec(data_type="uint8", scalar_map={"encode": []}).to_dict()["configuration"]


@pytest.mark.parametrize(("data_type", "match"), [
    ("bool", "not an integer or floating-point data type"),
    ("complex64", "not an integer or floating-point data type"),
])
def test_unsupported_targets_say_why(data_type, match):
    with pytest.raises(ValueError, match=match):
        CastValueCodec(data_type=data_type)


# --- arrays -----------------------------------------------------------------------------------------

def create(tmp_path, dtype, codec, fill_value, shape=(10,), chunks=(4,), order="C", name="a"):
    return zarr.create_array(store=tmp_path / name, shape=shape, chunks=chunks, dtype=dtype,
                             fill_value=fill_value, filters=[codec], compressors=None,
                             config={"order": order})


def stored_chunk(tmp_path, name, key, dtype):
    return np.frombuffer((tmp_path / name / "c" / key).read_bytes(), dtype=dtype)


def test_round_trip_float64_to_uint8_with_nan(tmp_path):
    codec = CastValueCodec(data_type="uint8", out_of_range="clamp", scalar_map=NAN_MAP)
    a = create(tmp_path, "float64", codec, np.nan)
    data = np.array([0.4, 1.5, np.nan, 300.0, -5.0, 2.5, 254.5, 7.0, 1e10, -1e10])
    a[:] = data
    got = zarr.open_array(tmp_path / "a")[:]
    # 0.4 rounds to 0, -5 and -1e10 clamp to 0: all decode to NaN through the decode map
    expected = np.array([np.nan, 2, np.nan, 255, np.nan, 2, 254, 7, 255, np.nan])
    assert np.array_equal(got, expected, equal_nan=True)
    # the bytes on disk are uint8, chunk by chunk
    assert stored_chunk(tmp_path, "a", "0", "u1").tolist() == [0, 2, 0, 255]
    # the partial last chunk is stored whole, padded with the encoded fill value (NaN -> 0)
    assert stored_chunk(tmp_path, "a", "2", "u1").tolist() == [255, 0, 0, 0]
    meta = json.loads((tmp_path / "a" / "zarr.json").read_text())
    assert meta["codecs"][0] == {"name": "cast_value", "configuration": {
        "data_type": "uint8", "out_of_range": "clamp", "scalar_map": NAN_MAP}}


def test_fill_value_fills_unwritten_chunks_and_partial_writes(tmp_path):
    codec = CastValueCodec(data_type="int8", scalar_map={"encode": [["NaN", -128]], "decode": [[-128, "NaN"]]})
    a = create(tmp_path, "float32", codec, np.nan, shape=(12,), chunks=(4,))
    a[5:7] = [1.0, 2.0]
    got = a[:]
    assert np.isnan(got[:5]).all() and got[5:7].tolist() == [1.0, 2.0] and np.isnan(got[7:]).all()
    assert not (tmp_path / "a" / "c" / "0").exists()
    assert stored_chunk(tmp_path, "a", "1", "i1").tolist() == [-128, 1, 2, -128]


@pytest.mark.parametrize("order", ["C", "F"])
def test_nd_round_trip(tmp_path, order):
    rng = np.random.default_rng(0)
    data = rng.integers(-40000, 40000, (9, 7)).astype(np.int32)
    codec = CastValueCodec(data_type="int16", out_of_range="clamp")
    a = create(tmp_path, "int32", codec, 0, shape=(9, 7), chunks=(4, 3), order=order)
    a[:] = data
    assert np.array_equal(zarr.open_array(tmp_path / "a")[:], np.clip(data, -32768, 32767))
    assert np.array_equal(a[2:7, 1:6], np.clip(data, -32768, 32767)[2:7, 1:6])


def test_float_narrowing_round_trip(tmp_path):
    codec = CastValueCodec(data_type="float16", out_of_range="clamp")
    a = create(tmp_path, "float64", codec, -0.0)
    data = np.array([0.1, 65519.0, 1e6, -1e6, np.nan, -0.0, 2**-25, -2**-30, 3.0, 1 / 3])
    a[:] = data
    got = a[:]
    with np.errstate(over="ignore"):
        expected = data.astype(np.float16).astype(np.float64)   # nearest-even, overflow to inf
    assert np.array_equal(got, expected, equal_nan=True)
    assert np.signbit(got[5]) and np.signbit(got[7])


def test_data_errors_surface_through_zarr(tmp_path):
    a = create(tmp_path, "float64", CastValueCodec(data_type="uint8"), 0.0, shape=(3, 4), chunks=(3, 4))
    data = np.zeros((3, 4))
    data[1, 2] = 256.0
    with pytest.raises(zdt.CastError) as info:
        a[:] = data
    assert info.value.index == (1, 2) and info.value.config_key == "out_of_range"


# --- fill values --------------------------------------------------------------------------------------

def _creation(tmp_path, dtype, codec, fill):
    """Array creation must fail. zarr >= 3.2 hands each codec its real input spec; on zarr 3.1.x
    zdt finds it by running the codecs before it (zdt.zarr_compat.array_spec_before)."""
    create(tmp_path, dtype, codec, fill)


@pytest.mark.parametrize(("dtype", "codec", "fill", "match"), [
    ("float64", CastValueCodec(data_type="int8"), 1.5, r"fill value 1.5 \(float64\) does not survive"),
    ("int32", CastValueCodec(data_type="uint8", out_of_range="clamp"), 300, r"fill value 300 \(int32\) does not survive"),
    ("float64", CastValueCodec(data_type="float32"), 0.1, r"fill value 0.1 \(float64\) does not survive"),
    ("float64", CastValueCodec(data_type="uint8", scalar_map={"encode": [["NaN", 0]]}), np.nan,
     r"fill value nan \(float64\) does not survive"),
    ("float64", CastValueCodec(data_type="uint8"), np.nan, r"fill value nan \(float64\) cannot be encoded"),
    ("int16", CastValueCodec(data_type="int8"), 1000, r"fill value 1000 \(int16\) cannot be encoded"),
])
def test_fill_values_that_do_not_round_trip_are_rejected(tmp_path, dtype, codec, fill, match):
    with pytest.raises(FillValueError, match=match):
        _creation(tmp_path, dtype, codec, fill)


@pytest.mark.parametrize(("dtype", "codec", "fill", "stored"), [
    ("float64", CastValueCodec(data_type="uint8", scalar_map=NAN_MAP), np.nan, 0),
    ("float64", CastValueCodec(data_type="float32"), -0.0, -0.0),
    ("float64", CastValueCodec(data_type="int8"), -3.0, -3),
    ("uint64", CastValueCodec(data_type="float64", rounding="towards-zero"), 2**53, 2.0**53),
])
def test_fill_values_that_round_trip(tmp_path, dtype, codec, fill, stored):
    a = create(tmp_path, dtype, codec, fill)
    got = a[:]
    assert np.array_equal(got, np.full(10, fill, dtype=dtype), equal_nan=True)
    spec = a.metadata.codecs[0].resolve_metadata(_chunk_spec(a))
    assert spec.dtype.to_json(zarr_format=3) == codec.to_dict()["configuration"]["data_type"]
    enc = np.asarray(spec.fill_value)
    assert enc == stored or (np.isnan(enc) and np.isnan(stored))
    if isinstance(stored, float) and stored == 0:
        assert np.signbit(enc) == np.signbit(stored)


def _chunk_spec(a):
    from zarr.core.array_spec import ArrayConfig, ArraySpec
    from zarr.core.buffer import default_buffer_prototype

    return ArraySpec(shape=(4,), dtype=a.metadata.data_type, fill_value=a.metadata.fill_value,
                     config=ArrayConfig.from_dict({}), prototype=default_buffer_prototype())


def test_compute_encoded_size():
    codec = CastValueCodec(data_type="uint8")
    spec = type("S", (), {"dtype": zarr.dtype.Float64()})()
    assert codec.compute_encoded_size(80, spec) == 10


def test_source_data_type_is_validated(tmp_path):
    codec = CastValueCodec(data_type="uint8")
    with pytest.raises(ConfigError, match="'bool' is not an integer or floating-point data type"):
        create(tmp_path, "bool", codec, False)


def test_map_keys_are_validated_against_the_source(tmp_path):
    codec = CastValueCodec(data_type="uint8", scalar_map={"encode": [[1e10, 0]]})
    with pytest.raises(ConfigError, match="beyond the range of float16"):
        create(tmp_path, "float16", codec, 0.0)


def test_fill_value_is_checked_behind_another_codec(tmp_path):
    """The fill value cast_value sees is the one the codecs before it produce."""
    first = CastValueCodec(data_type="float32")
    with pytest.raises(FillValueError, match=r"fill value 0.5 \(float32\)"):
        zarr.create_array(store=tmp_path / "a", shape=(4,), dtype="float64", fill_value=0.5,
                          filters=[first, CastValueCodec(data_type="int8")], compressors=None)
    a = zarr.create_array(store=tmp_path / "b", shape=(4,), dtype="float64", fill_value=2.0,
                          filters=[first, CastValueCodec(data_type="int8")], compressors=None)
    a[:2] = [1.0, -3.0]
    assert a[:].tolist() == [1.0, -3.0, 2.0, 2.0]


def test_a_codec_behind_a_type_change_is_checked_against_the_type_it_sees(tmp_path):
    """The proposal's integer chain: int16 -> float64 -> (x - 236) / 3 -> uint16. zarr (3.4)
    validates every codec against the array's own data type as well, where a scale of 1/3 is
    not an int16; zdt checks the type each codec really sees, so the chain works, and a scale
    the array's type cannot hold is still refused at creation when nothing casts before it."""
    chain = [CastValueCodec(data_type="float64"), ScaleOffsetCodec(offset=236, scale=1 / 3),
             CastValueCodec(data_type="uint16")]
    a = zarr.create_array(store=tmp_path / "a", shape=(6,), chunks=(6,), dtype="int16",
                          fill_value=236, filters=chain, compressors=None)
    x = np.array([236, 237, 238, 500, 1076, 1075], dtype=np.int16)
    a[:] = x
    assert np.abs(a[:].astype(int) - x).max() <= 1
    assert zarr.open_array(tmp_path / "a")[:].tolist() == a[:].tolist()
    with pytest.raises(ConfigError, match="scale 0.5 is not an integer"):
        zarr.create_array(store=tmp_path / "b", shape=(6,), dtype="int16", fill_value=0,
                          filters=[ScaleOffsetCodec(scale=0.5)], compressors=None)
    # and behind a cast, the type the cast gives (bitround cannot round an 8-bit float)
    with pytest.raises(ConfigError, match="cannot round data type float8_e4m3fn"):
        zarr.create_array(store=tmp_path / "c", shape=(6,), dtype="float64", fill_value=0,
                          filters=[CastValueCodec(data_type="float8_e4m3fn"),
                                   BitroundCodec(keepbits=2)], compressors=None)


def test_the_spec_from_the_codecs_before_reaches_cast_value_at_creation(monkeypatch):
    """zarr >= 3.4 hands each codec the spec the codecs before it produce; zarr 3.1.x hands
    every codec the array's own, and zdt.zarr_compat.array_spec_before recovers the right one from
    the locals of zarr's metadata constructor. Either way cast_value must check the fill value
    scale_offset produces (20 - 10 = 10) while the array is created. If zarr renames what
    array_spec_before reads, this fails here rather than moving the check to the first write."""
    from zdt.codecs.cast import CastValueConfig
    from zdt.codecs.zarr import ScaleOffsetCodec

    seen = []
    original = CastValueConfig.checked_fill
    monkeypatch.setattr(CastValueConfig, "checked_fill",
                        lambda self, source, fill: seen.append((source, float(fill))) or original(self, source, fill))
    zarr.create_array(store={}, shape=(4,), dtype="float64", fill_value=20.0, compressors=None,
                      filters=[ScaleOffsetCodec(offset=10), CastValueCodec(data_type="uint8")])
    assert ("float64", 10.0) in seen, (
        "cast_value did not see the fill value scale_offset produces at array creation"
        + ("" if zarr_compat.zarr_threads_array_spec() else
           "; zdt.zarr_compat.array_spec_before no longer finds zarr's ArrayV3Metadata.__init__ "
           "locals 'codecs_parsed_partial' / 'array_spec'"))


def test_without_the_spec_at_creation_the_fill_value_is_checked_before_any_chunk_is_written(monkeypatch, tmp_path):
    """The fallback when the real spec cannot be found at creation (zarr 3.1.x with
    array_spec_before finding nothing): resolve_metadata checks the fill value before any
    chunk is written, so the array cannot hold data next to a fill value that does not
    survive the codecs."""
    from zdt.codecs.zarr import ScaleOffsetCodec

    # zarr >= 3.4 resolves the codecs' metadata while it creates the array, 3.1.x at the
    # first read or write
    resolves_at_creation = zarr_compat.zarr_threads_array_spec()
    monkeypatch.setattr(zarr_compat, "zarr_threads_array_spec", lambda: False)
    monkeypatch.setattr(zarr_compat, "array_spec_before", lambda codec, spec: None)
    filters = [ScaleOffsetCodec(offset=10), CastValueCodec(data_type="uint8")]
    message = r"fill value -5.0 \(float64\) cannot be encoded as uint8"

    def create():
        return zarr.create_array(store=tmp_path / "a", shape=(4,), chunks=(2,), dtype="float64",
                                 fill_value=5.0, compressors=None, filters=filters)   # 5 - 10 < 0

    if resolves_at_creation:
        with pytest.raises(FillValueError, match=message):
            create()
    else:
        a = create()
        with pytest.raises(FillValueError, match=message):
            a[:2] = [11.0, 12.0]
    assert list((tmp_path / "a").rglob("c/*")) == []


def test_data_errors_name_the_chunk_element(tmp_path):
    a = create(tmp_path, "float64", CastValueCodec(data_type="uint8"), 0.0, shape=(10, 10), chunks=(4, 4))
    data = np.zeros((10, 10))
    data[9, 6] = 300.0
    with pytest.raises(zdt.CastError, match=r"chunk element \(1, 2\) = 300.0"):
        a[:] = data


# --- registration ----------------------------------------------------------------------------------------

def test_entry_points_are_declared():
    # other packages (cast-value) may register the same name; zdt's entry must be there
    eps = {(e.name, e.value) for e in entry_points(group="zarr.codecs")}
    assert ("cast_value", "zdt.codecs.zarr.cast_value:CastValueCodec") in eps
    eps = {(e.name, e.value) for e in entry_points(group="numcodecs.codecs")}
    assert ("cast_value", "zdt.codecs.numcodecs.cast_value:CastValue") in eps


def test_zdt_is_the_cast_value_implementation_without_any_config():
    # pytest turns warnings into errors: a "not configured" warning would fail this test
    from zarr.registry import get_codec_class

    assert get_codec_class("cast_value") is CastValueCodec
    a = zarr.create_array(store={}, shape=(4,), dtype="float64", fill_value=0.0,
                          filters=[{"name": "cast_value", "configuration": {"data_type": "int16"}}])
    assert isinstance(a.metadata.codecs[0], CastValueCodec)


@pytest.mark.skipif(zarr_compat.zarr_builtin("cast_value") is None,
                    reason="zarr 3.1.x has no cast_value of its own to select")
def test_zarr_config_selects_either_implementation(tmp_path):
    from zarr.registry import get_codec_class

    get_codec_class("cast_value")        # loads the entry points
    assert zarr.config.get("codecs.cast_value") == "zdt.codecs.zarr.cast_value.CastValueCodec"
    from zarr.codecs.cast_value import CastValue

    config = {"name": "cast_value", "configuration": {"data_type": "uint8", "out_of_range": "clamp"}}
    a = zarr.create_array(store=tmp_path / "a", shape=(6,), chunks=(3,), dtype="float64",
                          fill_value=0.0, filters=[config])
    a[:] = [0.5, 1.5, 2.5, 300.0, -4.0, 7.2]
    with zarr.config.set({"codecs.cast_value": "zarr.codecs.cast_value.CastValue"}):
        assert get_codec_class("cast_value") is CastValue
        b = zarr.open_array(tmp_path / "a")
        assert isinstance(b.metadata.codecs[0], CastValue)
        assert b[:].tolist() == [0.0, 2.0, 2.0, 255.0, 0.0, 7.0]
    assert get_codec_class("cast_value") is CastValueCodec


def test_first_lookup_inside_a_config_context_leaves_zdt_configured(tmp_path):
    """zarr reads zdt's installed etc/zarr/zdt.yaml at import, so even a first cast_value lookup
    inside a `zarr.config.set` context (whose exit restores the config) leaves zdt configured
    and no lookup warns. Runs in a fresh interpreter: registration is per process."""
    import subprocess
    import sys

    script = """
import warnings, zarr
warnings.simplefilter("error")
with zarr.config.set({"codecs.cast_value": "zdt.codecs.zarr.cast_value.CastValueCodec"}):
    zarr.create_array(store={}, shape=(2,), dtype="float64", fill_value=0.0,
                      filters=[{"name": "cast_value", "configuration": {"data_type": "int8"}}])
a = zarr.create_array(store={}, shape=(2,), dtype="float64", fill_value=0.0,
                      filters=[{"name": "cast_value", "configuration": {"data_type": "int8"}}])
print(type(a.metadata.codecs[0]).__module__, zarr.config.get("codecs.cast_value"))
"""
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["zdt.codecs.zarr.cast_value", "zdt.codecs.zarr.cast_value.CastValueCodec"]
