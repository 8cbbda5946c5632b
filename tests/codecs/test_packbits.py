"""packbits: the bit stream against a bit-by-bit reference written from the zarr-extensions
README, the chunks zarrs writes (worked examples), configuration, corrupt chunks, and arrays
through zarr."""

from __future__ import annotations

import json

import ml_dtypes
import numpy as np
import pytest
import zarr
from hypothesis import given
from hypothesis import strategies as st

import lowprec_model as lp
from zdt import PackBitsCodec
from zdt.errors import ConfigError, CorruptChunkError
from zdt.codecs.packbits import PackBitsConfig

# (data type, bits per component, components, signed)
TYPES = {
    "bool": (1, 1, False), "int2": (2, 1, True), "uint2": (2, 1, False), "int4": (4, 1, True),
    "uint4": (4, 1, False), "float4_e2m1fn": (4, 1, False), "float6_e2m3fn": (6, 1, False),
    "float6_e3m2fn": (6, 1, False), "int8": (8, 1, True), "uint8": (8, 1, False),
    "int16": (16, 1, True), "uint16": (16, 1, False), "int32": (32, 1, True),
    "uint32": (32, 1, False), "int64": (64, 1, True), "uint64": (64, 1, False),
    "float16": (16, 1, False), "bfloat16": (16, 1, False), "float8_e4m3fn": (8, 1, False),
    "float32": (32, 1, False), "float64": (64, 1, False), "complex64": (32, 2, False),
    "complex128": (64, 2, False),
}


def dtype_of(name: str) -> np.dtype:
    return np.dtype(getattr(ml_dtypes, name)) if name in lp.MODELS else np.dtype(name)


def component_values(arr: np.ndarray, n_bits: int, comps: int) -> list[int]:
    """Each component's N-bit unsigned value, from its little-endian bytes."""
    raw = np.ascontiguousarray(arr).reshape(-1).view(np.uint8).tobytes()
    size = len(raw) // (arr.size * comps) if arr.size else 0
    return [int.from_bytes(raw[i:i + size], "little") & ((1 << n_bits) - 1)
            for i in range(0, len(raw), size or 1)] if arr.size else []


def reference_encode(arr, name, first, last, padding):
    """The README's procedure, one bit at a time."""
    n_bits, comps, _ = TYPES[name]
    bits = []
    for v in component_values(arr, n_bits, comps):
        bits += [(v >> j) & 1 for j in range(first, last + 1)]
    pad = (-len(bits)) % 8
    bits += [0] * pad
    data = bytes(sum(bits[i + j] << j for j in range(8)) for i in range(0, len(bits), 8))
    if padding == "first_byte":
        return bytes([pad]) + data
    if padding == "last_byte":
        return data + bytes([pad])
    return data


def reference_decode(data, name, count, first, last, padding):
    """Component values back at first_bit, sign-extended (signed integers) to the storage."""
    n_bits, comps, signed = TYPES[name]
    if padding == "first_byte":
        data = data[1:]
    elif padding == "last_byte":
        data = data[:-1]
    b = last - first + 1
    stream = [(byte >> j) & 1 for byte in data for j in range(8)]
    size = dtype_of(name).itemsize // comps
    out = b""
    for i in range(count * comps):
        v = sum(stream[i * b + j] << j for j in range(b)) << first
        if signed and (v >> last) & 1:
            v -= 1 << (last + 1)
        out += (v % (1 << (8 * size))).to_bytes(size, "little")
    return out


@st.composite
def cases(draw):
    name = draw(st.sampled_from(sorted(TYPES)))
    n_bits, _, _ = TYPES[name]
    first = draw(st.integers(0, n_bits - 1))
    last = draw(st.integers(first, n_bits - 1))
    if draw(st.booleans()):
        first, last = 0, n_bits - 1
    padding = draw(st.sampled_from(["none", "first_byte", "last_byte"]))
    shape = draw(st.sampled_from([(0,), (1,), (7,), (9,), (3, 5), (2, 2, 3), ()]))
    dtype = dtype_of(name)
    raw = draw(st.binary(min_size=dtype.itemsize * int(np.prod(shape)),
                         max_size=dtype.itemsize * int(np.prod(shape))))
    arr = np.frombuffer(raw, dtype=np.uint8).copy()
    if name == "bool":
        arr &= 1
    return name, first, last, padding, arr.view(dtype).reshape(shape)


@given(case=cases())
def test_stream_matches_the_readme_procedure(case):
    name, first, last, padding, arr = case
    config = PackBitsConfig.create(padding_encoding=padding, first_bit=first, last_bit=last)
    encoded = config.encode(arr)
    assert encoded.tobytes() == reference_encode(arr, name, first, last, padding)
    decoded = config.decode(encoded, arr.dtype, arr.shape)
    assert decoded.shape == arr.shape and decoded.dtype == arr.dtype
    assert decoded.tobytes() == reference_decode(encoded.tobytes(), name, arr.size, first, last, padding)


@pytest.mark.parametrize(("dtype", "values", "config", "chunk"), [
    # chunks zarrs 0.23 (through zarrs-python) writes for the same data and configuration
    ("bool", [1, 0, 0, 0, 0, 0, 0, 0, 1, 1], {}, "0103"),
    ("bool", [1, 0, 0, 0, 0, 0, 0, 0, 1, 1], {"padding_encoding": "first_byte"}, "060103"),
    ("bool", [1, 0, 0, 0, 0, 0, 0, 0, 1, 1], {"padding_encoding": "last_byte"}, "010306"),
    ("bool", [1, 0, 0, 0, 0, 0, 0, 0], {"padding_encoding": "first_byte"}, "0001"),
    ("uint8", [1, 2, 3, 255], {"first_bit": 0, "last_bit": 3}, "21f3"),
    ("uint8", [16, 32, 48, 255], {"first_bit": 4, "last_bit": 7}, "21f3"),
    ("int8", [-1, 2, -3, 7], {"first_bit": 0, "last_bit": 3}, "2f7d"),
    ("int16", [-1, -2, 3], {"first_bit": 0, "last_bit": 9}, "fffb3f00"),
    ("uint16", [0x123, 0xABC, 0xFFF], {"first_bit": 0, "last_bit": 11}, "23c1abff0f"),
])
def test_chunks_match_what_zarrs_writes(dtype, values, config, chunk):
    arr = np.array(values, dtype=dtype)
    assert PackBitsConfig.create(**config).encode(arr).tobytes().hex() == chunk


@pytest.mark.parametrize(("dtype", "values", "config", "decoded"), [
    # first_bit > 0: the bits go back to where they were
    ("uint8", [16, 32, 48, 255], {"first_bit": 4, "last_bit": 7}, [16, 32, 48, 240]),
    ("uint8", [1, 2, 3, 255], {"first_bit": 0, "last_bit": 3}, [1, 2, 3, 15]),
    # sign extension from last_bit to all N bits (zarrs extends only to the end of the byte
    # holding the sign bit, and decodes int16 -1 from bits 0..5 as 255: the spec wins)
    ("int16", [-1, -2, 3], {"first_bit": 0, "last_bit": 5}, [-1, -2, 3]),
    ("int8", [-8, -16, 16, 112], {"first_bit": 3, "last_bit": 6}, [-8, -16, 16, -16]),
    ("int64", [-(2**40), 2**40 - 1], {"first_bit": 0, "last_bit": 40}, [-(2**40), 2**40 - 1]),
])
def test_decoding_puts_bits_back_and_extends_the_sign_per_the_spec(dtype, values, config, decoded):
    c = PackBitsConfig.create(**config)
    arr = np.array(values, dtype=dtype)
    assert c.decode(c.encode(arr), arr.dtype, arr.shape).tolist() == decoded


def test_sub_byte_types_take_their_real_width():
    arr = np.array([-8, -1, 0, 7, 3], dtype=ml_dtypes.int4)
    c = PackBitsConfig.create()
    assert c.encode(arr).tobytes().hex() == "f87003"      # nibbles 8 f | 0 7 | 3, low first
    back = c.decode(c.encode(arr), arr.dtype, arr.shape)
    assert back.view(np.uint8).tolist() == [0xF8, 0xFF, 0x00, 0x07, 0x03]    # sign-extended
    f4 = np.array([0xF1, 0x0F], dtype=np.uint8).view(ml_dtypes.float4_e2m1fn)  # high bits ignored
    assert c.encode(f4).tobytes().hex() == "f1"


# --- configuration ------------------------------------------------------------------------------

def test_configuration_json():
    assert PackBitsCodec().to_dict() == {"name": "packbits"}
    full = {"name": "packbits", "configuration": {"padding_encoding": "first_byte",
                                                  "first_bit": 2, "last_bit": 5}}
    assert PackBitsCodec.from_dict(full).to_dict() == full
    # null means the default (the README says so)
    nulls = {"name": "packbits", "configuration": {"first_bit": None, "last_bit": None}}
    assert PackBitsCodec.from_dict(nulls).to_dict() == {"name": "packbits"}


@pytest.mark.parametrize(("configuration", "key", "match"), [
    ({"start_bit": 1}, "start_bit", "unknown configuration key"),       # schema.json's names
    ({"padding_encoding": "start_byte"}, "padding_encoding", "not one of"),
    ({"padding_encoding": None}, "padding_encoding", "null"),
    ({"first_bit": 3, "last_bit": 2}, "last_bit", "less than first_bit"),
    ({"first_bit": -1}, "first_bit", "non-negative"),
    ({"last_bit": 1.5}, "last_bit", "non-negative integer"),
])
def test_bad_configurations(configuration, key, match):
    with pytest.raises(ConfigError, match=match) as info:
        PackBitsCodec.from_dict({"name": "packbits", "configuration": configuration})
    assert info.value.config_key == key


def test_bits_outside_the_data_type_are_rejected_at_creation():
    with pytest.raises(ConfigError, match="last_bit 4 is outside the 4 bits of int4"):
        zarr.create_array(store={}, shape=(4,), dtype="int4", serializer=PackBitsCodec(last_bit=4))
    with pytest.raises(ConfigError, match="cannot be packed"):
        zarr.create_array(store={}, shape=(4,), dtype="<U3", serializer=PackBitsCodec())


# --- corrupt chunks -----------------------------------------------------------------------------

@pytest.mark.parametrize(("chunk", "padding", "match", "part"), [
    ("f870", "none", r"2 bytes, but 5 components of 4 bits take 3 \(truncated\)", "length"),
    ("f8700300", "none", r"4 bytes, but 5 components of 4 bits take 3 \(trailing bytes\)", "length"),
    ("03f87003", "first_byte", "padding byte \\(first byte\\) says 3 padding bits, but 5 components of 4 bits leave 4", "padding byte"),
    ("f8700305", "last_byte", "padding byte \\(last byte\\) says 5", "padding byte"),
    ("f87013", "none", "padding bits at the end of the stream are not zero", "padding bits"),
])
def test_corrupt_chunks_are_errors_that_say_what_is_wrong(chunk, padding, match, part):
    c = PackBitsConfig.create(padding_encoding=padding)
    with pytest.raises(CorruptChunkError, match=match) as e:
        c.decode(bytes.fromhex(chunk), np.dtype(ml_dtypes.int4), (5,))
    assert (e.value.codec, e.value.part) == ("packbits", part)


# --- arrays through zarr --------------------------------------------------------------------------

@pytest.mark.parametrize("padding", ["none", "first_byte", "last_byte"])
def test_int4_arrays_take_half_a_byte_per_element(tmp_path, padding):
    data = (np.arange(100) % 16 - 8).astype(ml_dtypes.int4).reshape(10, 10)
    a = zarr.create_array(store=tmp_path / "a", shape=(10, 10), chunks=(5, 5), dtype="int4",
                          fill_value=-3, serializer=PackBitsCodec(padding_encoding=padding),
                          compressors=None)
    a[:, :5] = data[:, :5]
    b = zarr.open_array(tmp_path / "a")
    assert b[:, :5].astype(np.int8).tolist() == data[:, :5].astype(np.int8).tolist()
    assert (b[:, 5:].astype(np.int8) == -3).all()
    assert len((tmp_path / "a" / "c" / "0" / "0").read_bytes()) == 13 + (padding != "none")
    meta = json.loads((tmp_path / "a" / "zarr.json").read_text())
    assert meta["codecs"][0] == PackBitsCodec(padding_encoding=padding).to_dict()


def test_float32_keeping_the_high_bits_and_a_cast_to_float4(tmp_path):
    # float32 truncated to its 16 high bits (a bfloat16-like mantissa cut) through zarr
    data = np.array([1.0, -2.5, 3.14159, 1e30], dtype=np.float32)
    a = zarr.create_array(store=tmp_path / "a", shape=(4,), chunks=(4,), dtype="float32",
                          fill_value=0.0, serializer=PackBitsCodec(first_bit=16, last_bit=31),
                          compressors=None)
    a[:] = data
    expected = (data.view(np.uint32) & 0xFFFF0000).view(np.float32)
    assert zarr.open_array(tmp_path / "a")[:].tolist() == expected.tolist()
    # float32 -> float4 with cast_value, stored at 4 bits
    b = zarr.create_array(store=tmp_path / "b", shape=(6,), chunks=(6,), dtype="float32",
                          fill_value=0.0, compressors=None,
                          filters=[{"name": "cast_value", "configuration": {"data_type": "float4_e2m1fn"}}],
                          serializer=PackBitsCodec())
    b[:] = np.array([0.5, 1.0, -6.0, 3.0, 0.0, 4.0], dtype=np.float32)
    # float4 bits 1 2 f 5 0 6, two per byte, the first in the low nibble
    assert (tmp_path / "b" / "c" / "0").read_bytes().hex() == "215f60"
    assert zarr.open_array(tmp_path / "b")[:].tolist() == [0.5, 1.0, -6.0, 3.0, 0.0, 4.0]
