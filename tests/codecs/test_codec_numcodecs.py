"""The numcodecs facade (zarr format 2 filters): config, buffers, byte order, shapes, and
round trips through zarr format 2 arrays."""

from __future__ import annotations

import json

import numcodecs
import numpy as np
import pytest
import zarr

from zdt import CastValue
from zdt.errors import CastError, ConfigError

NAN_MAP = {"encode": [["NaN", 0]], "decode": [[0, "NaN"]]}


def test_registered_with_numcodecs():
    codec = numcodecs.get_codec({"id": "cast_value", "dtype": "<f8", "data_type": "uint8"})
    assert isinstance(codec, CastValue)


@pytest.mark.parametrize("config", [
    {"id": "cast_value", "dtype": "<f8", "data_type": "uint8"},
    {"id": "cast_value", "dtype": ">f4", "data_type": "int16", "rounding": "towards-zero",
     "out_of_range": "wrap", "scalar_map": {"encode": [["NaN", 0]]}},
])
def test_config_round_trip(config):
    codec = CastValue.from_config(config)
    assert codec.get_config() == config
    again = numcodecs.get_codec(json.loads(json.dumps(codec.get_config())))
    assert again.get_config() == config
    assert eval(repr(codec), {"CastValue": CastValue}).get_config() == config


@pytest.mark.parametrize(("config", "match"), [
    ({"dtype": "<f8", "data_type": "uint8", "astype": "u1"}, "unknown configuration key"),
    ({"dtype": "<f8", "data_type": "float32", "out_of_range": "wrap"}, "needs an integer"),
    ({"dtype": "<c16", "data_type": "uint8"}, "not an integer or floating-point"),
    ({"dtype": "<f8", "data_type": "uint8", "rounding": "half-up"}, "rounding"),
    ({"dtype": "<f8", "data_type": "uint8", "scalar_map": {"encode": [[0.5, 999]]}}, "out of range for uint8"),
])
def test_bad_configs(config, match):
    with pytest.raises(ConfigError, match=match):
        CastValue.from_config(config)


def test_encode_keeps_shape_and_is_little_endian():
    codec = CastValue(dtype="<f8", data_type="int16", out_of_range="clamp")
    data = np.array([[1.5, -40000.0], [2.5, 7.0]])
    enc = codec.encode(data)
    assert enc.shape == (2, 2) and enc.dtype == np.dtype("<i2")
    assert enc.tolist() == [[2, -32768], [2, 7]]


def test_big_endian_source():
    codec = CastValue(dtype=">f8", data_type="uint16")
    data = np.array([1.0, 2.5, 65535.0], dtype=">f8")
    enc = codec.encode(data)
    assert enc.dtype == np.dtype("<u2") and enc.tolist() == [1, 2, 65535]
    dec = codec.decode(enc.tobytes())
    assert dec.dtype == np.dtype(">f8") and dec.tolist() == [1.0, 2.0, 65535.0]


def test_decode_from_bytes_and_into_out():
    codec = CastValue(dtype="<f4", data_type="uint8", scalar_map=NAN_MAP)
    enc = codec.encode(np.array([np.nan, 3.0, 250.0], dtype=np.float32))
    assert bytes(enc) == b"\x00\x03\xfa"
    out = np.empty(3, dtype=np.float32)
    res = codec.decode(bytes(enc), out=out)
    assert res is out
    assert np.isnan(out[0]) and out[1:].tolist() == [3.0, 250.0]


def test_encode_accepts_any_layout_and_read_only():
    codec = CastValue(dtype="<i4", data_type="int8", out_of_range="wrap")
    base = np.arange(-200, 200, dtype=np.int32).reshape(20, 20)
    for arr in (base, np.asfortranarray(base), base[::3, ::2], base.T):
        arr = arr.copy() if not arr.flags.writeable else arr
        arr.flags.writeable = False
        enc = codec.encode(arr)
        assert enc.shape == arr.shape
        assert np.array_equal(enc, arr.astype(np.int8))     # numpy's astype wraps for ints


def test_typed_arrays_are_not_reinterpreted():
    codec = CastValue(dtype=">f8", data_type="int16")
    assert codec.encode(np.array([1.0, 2.0])).tolist() == [1, 2]        # byte order converted
    with pytest.raises(TypeError, match="expected an array of float64"):
        CastValue(dtype="<f8", data_type="int16").encode(np.array([1.0, 2.0], "f4"))
    with pytest.raises(TypeError, match="expected an array of float64"):
        CastValue(dtype="<f8", data_type="uint8").encode(np.array([1, 2], "i8"))
    raw = np.array([1.0, 2.0]).view(np.uint8)                          # raw bytes: reinterpreted
    assert CastValue(dtype="<f8", data_type="int16").encode(raw).tolist() == [1, 2]


@pytest.mark.parametrize(("config", "key"), [
    ({"id": "cast_value", "dtype": "<f8"}, "data_type"),
    ({"id": "cast_value", "data_type": "uint8"}, "dtype"),
    ({"id": "cast_value", "dtype": None, "data_type": "uint8"}, "dtype"),
])
def test_missing_or_bad_required_keys(config, key):
    with pytest.raises(ConfigError) as info:
        CastValue.from_config(config)
    assert info.value.config_key == key


def test_data_type_object_form():
    codec = CastValue.from_config({"id": "cast_value", "dtype": "<f8", "data_type": {"name": "uint8"}})
    assert codec.get_config()["data_type"] == "uint8"


def test_errors_name_the_element():
    codec = CastValue(dtype="<f8", data_type="uint8")
    with pytest.raises(CastError, match=r"element \(1, 0\) = -1.0 \(float64\)"):
        codec.encode(np.array([[0.0, 1.0], [-1.0, 2.0]]))


def test_decode_errors_name_the_decode_direction_and_key():
    # out of range on decode: out_of_range decides, scalar_map.decode could map it
    codec = CastValue(dtype="<i1", data_type="int16")
    with pytest.raises(CastError) as info:
        codec.decode(np.array([1, 300], dtype="<i2").tobytes())
    assert info.value.index == (1,) and info.value.config_key == "out_of_range"
    assert "cannot decode element (1,) = 300 (int16) as int8" in str(info.value)
    assert "map the value with scalar_map.decode" in str(info.value)
    # NaN on decode into an integer: only scalar_map.decode can map it
    codec = CastValue(dtype="<i2", data_type="float32")
    with pytest.raises(CastError) as info:
        codec.decode(np.array([1.0, np.nan], dtype="<f4").tobytes())
    assert info.value.index == (1,) and info.value.config_key == "scalar_map.decode"
    assert info.value.reason == "nan"


@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("dtype", ["<f8", ">f8", "<f4"])
def test_zarr_format_2_round_trip(tmp_path, dtype, order):
    codec = CastValue(dtype=dtype, data_type="uint8", out_of_range="clamp", scalar_map=NAN_MAP)
    a = zarr.create_array(store=tmp_path / "a", shape=(6, 5), chunks=(4, 3), dtype=dtype,
                          fill_value=np.nan, filters=[codec], compressors=None, zarr_format=2,
                          order=order)
    data = np.arange(30, dtype=np.float64).reshape(6, 5) * 10.3
    data[1, 1] = np.nan
    a[:5, :4] = data[:5, :4]
    got = zarr.open_array(tmp_path / "a", zarr_format=2)[:]
    expected = np.full((6, 5), np.nan)
    expected[:5, :4] = np.where(np.isnan(data[:5, :4]), np.nan, np.clip(np.rint(data[:5, :4]), 0, 255))
    expected[expected == 0] = np.nan     # 0 decodes to NaN
    assert np.array_equal(got, expected, equal_nan=True)
    meta = json.loads((tmp_path / "a" / ".zarray").read_text())
    assert meta["filters"] == [codec.get_config()]
    # the stored chunk holds little-endian uint8 values of the cast
    raw = np.frombuffer((tmp_path / "a" / "0.0").read_bytes(), dtype="u1")
    assert raw.size == 12
