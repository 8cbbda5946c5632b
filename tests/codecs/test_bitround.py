"""bitround (zarr-extensions codecs/bitround, rulings in docs/spec-rulings.md) against an exact
reference written from the spec text, the spec's own examples, numcodecs' BitRound (bit for bit
except where the rulings say it is wrong) and zarrs' integer rule; through zarr, zdt's
pipeline and as a format 2 filter."""

from __future__ import annotations

import json
import math
from fractions import Fraction

import ml_dtypes
import numcodecs
import numpy as np
import pytest
import zarr
from hypothesis import given
from hypothesis import strategies as st
from zarr.storage import MemoryStore

import zdt
from common import check_metadata, check_repr
from zdt.codecs.bitround import bitround
from zdt.errors import ConfigError

FLOATS = {"float16": (np.float16, 10, 5), "bfloat16": (ml_dtypes.bfloat16, 7, 8),
          "float32": (np.float32, 23, 8), "float64": (np.float64, 52, 11)}
INTS = ["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64"]


# --- the reference: exact arithmetic from the spec text and the rulings ------------------------

def ref_float(bits: int, name: str, keep: int) -> int:
    """A float's bit pattern rounded to `keep` mantissa bits: the nearest multiple of the unit
    in the k-th bit of its binade (subnormals: of the smallest binade), ties to the even
    multiple; NaN and +-Inf as they are; a result beyond the largest finite value rounds
    toward zero instead."""
    dtype, man, ebits = FLOATS[name]
    width = 8 * np.dtype(dtype).itemsize
    exp = (bits >> man) & ((1 << ebits) - 1)
    if exp == (1 << ebits) - 1 or keep >= man:
        return bits
    sign = bits >> (width - 1)
    bias = (1 << (ebits - 1)) - 1
    frac = bits & ((1 << man) - 1)
    emin = 1 - bias
    value = Fraction(frac, 1 << man) * Fraction(2) ** emin if exp == 0 else \
        (1 + Fraction(frac, 1 << man)) * Fraction(2) ** (exp - bias)
    unit = Fraction(2) ** (max(exp - bias, emin) - keep)
    q, r = divmod(value, unit)
    if r * 2 > unit or (r * 2 == unit and q % 2 == 1):
        q += 1
    largest = (2 - Fraction(1, 1 << man)) * Fraction(2) ** ((1 << ebits) - 2 - bias)
    if q * unit > largest:
        q = value // unit                          # toward zero
    rounded = q * unit
    out = np.array(float(rounded) if not sign else -float(rounded), dtype=np.float64).astype(dtype)
    assert Fraction(abs(float(out))) == rounded
    return int(out.view(f"u{width // 8}"))


def ref_int(value: int, name: str, keep: int) -> int:
    """The two's complement pattern rounded from its most significant set bit (ties to even);
    a carry out of the type's bits, or from a non-negative value into the sign bit, rounds
    toward zero instead."""
    info = np.iinfo(name)
    w = info.bits
    u = value % (1 << w)
    n = u.bit_length()
    if n <= keep:
        return value
    unit = 1 << (n - keep)
    q, r = divmod(u, unit)
    if r * 2 > unit or (r * 2 == unit and q % 2 == 1):
        q += 1
    out = q * unit
    signed = info.min < 0
    if out >> w or (signed and u < (1 << (w - 1)) <= out):
        out = (u // unit) * unit
    return out - (1 << w) if signed and out >= 1 << (w - 1) else out


# --- the spec's examples (codecs/bitround/sample_data, keepbits 3) --------------------------------

def test_the_specs_float32_example():
    x = np.array([0.0, 0.1, 1.2, 12.3, 123.4, 1234.5, np.nan, np.inf, -np.inf], dtype=np.float32)
    got = bitround(x, 3)
    expected = np.array([0.0, 0.1015625, 1.25, 12.0, 120.0, 1280.0, np.nan, np.inf, -np.inf],
                        dtype=np.float32)
    assert got.view(np.uint32).tolist() == expected.view(np.uint32).tolist()


def test_the_specs_uint8_example():
    x = np.array([0, 1, 10, 11, 100, 123, 200, 208, 209, 255], dtype=np.uint8)
    assert bitround(x, 3).tolist() == [0, 1, 10, 12, 96, 128, 192, 192, 224, 224]


# --- every value of the narrow types, samples of the wide ones -----------------------------------

@pytest.mark.exhaustive         # (every 16-bit pattern through a pure-Python reference: ~10 s)
@pytest.mark.parametrize("name", ["float16", "bfloat16"])
@pytest.mark.parametrize("keep", [1, 2, 3, 6, 7, 9, 10])
def test_every_16_bit_float(name, keep):
    dtype, man, _ = FLOATS[name]
    bits = np.arange(1 << 16, dtype=np.uint16)
    got = bitround(bits.view(dtype), keep).view(np.uint16)
    # (the reference rounds the magnitude and keeps the sign bit: the negative half is the
    # positive half's results with the sign bit set)
    half = [ref_float(b, name, keep) for b in range(1 << 15)] if keep < man else list(range(1 << 15))
    assert got.tolist() == half + [r | 0x8000 for r in half]


@given(st.sampled_from(["float32", "float64"]), st.integers(1, 60), st.data())
def test_wide_floats_against_the_reference(name, keep, data):
    dtype, man, _ = FLOATS[name]
    width = 8 * np.dtype(dtype).itemsize
    patterns = data.draw(st.lists(st.one_of(
        st.integers(0, (1 << width) - 1),
        st.sampled_from([0x7f7fffff, 0xff7fffff, 0x7f800001, 0xffc00001, 0x00000001, 0x007fffff]
                        if width == 32 else
                        [0x7fefffffffffffff, 0xffefffffffffffff, 0x7ff0000000000001, 1,
                         0x000fffffffffffff])), min_size=1, max_size=50))
    bits = np.array(patterns, dtype=f"u{width // 8}")
    got = bitround(bits.view(dtype), keep).view(bits.dtype)
    assert got.tolist() == [ref_float(int(b), name, keep) for b in bits]


@pytest.mark.parametrize("name", ["int8", "uint8"])
@pytest.mark.parametrize("keep", [1, 2, 3, 5, 7, 8])
def test_every_byte_integer(name, keep):
    info = np.iinfo(name)
    x = np.arange(info.min, info.max + 1).astype(name)
    assert bitround(x, keep).tolist() == [ref_int(int(v), name, keep) for v in x]


@given(st.sampled_from(INTS), st.integers(1, 64), st.data())
def test_integers_against_the_reference(name, keep, data):
    info = np.iinfo(name)
    values = data.draw(st.lists(st.one_of(st.integers(int(info.min), int(info.max)),
                                          st.sampled_from([int(info.min), int(info.max), 0, -1 if info.min else 1])),
                                min_size=1, max_size=50))
    x = np.array(values, dtype=name)
    assert bitround(x, keep).tolist() == [ref_int(int(v), name, keep) for v in x]


# --- numcodecs and zarrs ------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_bit_identical_to_numcodecs_except_where_it_makes_infinities(dtype):
    """numcodecs 0.17's BitRound turns some NaNs into infinities or zeros and the values next
    to the largest finite one into infinities (rulings); everything else is the same bits."""
    rng = np.random.default_rng(7)
    width = np.dtype(dtype).itemsize
    bits = rng.integers(0, 1 << (8 * width) - 1, 100_000, dtype=np.uint64).astype(f"u{width}")
    x = bits.view(dtype)
    nan = np.isnan(x)
    for keep in (1, 2, 3, 5, 9):
        ours = bitround(x, keep).view(bits.dtype)
        theirs = numcodecs.BitRound(keep).encode(x.copy()).view(bits.dtype)
        made_infinite = np.isfinite(x) & ~np.isfinite(theirs.view(dtype))
        same = ~nan & ~made_infinite
        assert np.array_equal(ours[same], theirs[same])
        assert np.array_equal(ours[nan], bits[nan])                     # NaNs as they were
        assert np.isfinite(ours.view(dtype)[made_infinite]).all()       # never infinite
    assert made_infinite.any() or dtype is not np.float16


def test_where_numcodecs_is_wrong_zdt_keeps_the_value():
    x = np.array([np.float32("nan"), np.float32(3.4028234663852886e38)], dtype=np.float32)
    x = np.concatenate([x, np.array([0x7f800001], dtype=np.uint32).view(np.float32)])
    theirs = numcodecs.BitRound(3).encode(x.copy()).view(np.float32)
    ours = bitround(x, 3)
    assert np.isinf(theirs[1]) and np.isinf(theirs[2])                     # numcodecs
    assert ours.view(np.uint32)[2] == 0x7f800001 and np.isnan(ours[0])     # zdt: the same NaNs
    assert ours.view(np.uint32)[1] == 0x7f700000                            # toward zero: 1.111 x 2**127


def test_integers_differ_from_zarrs_only_by_saturating_into_the_sign():
    """zarrs 0.23 rounds integers as unsigned bit patterns with a saturating add (measured with
    its bitround codec); the ruling saturates a non-negative value that would carry into the
    sign bit too: int8 127 with keepbits 2 is 96 here, -128 in zarrs."""
    x = np.array([0, 1, 5, 63, 95, 96, 120, 127, -1, -2, -64, -65, -96, -97, -127, -128], np.int8)
    zarrs = [0, 1, 4, 64, 96, 96, -128, -128, -64, -64, -64, -64, -128, -128, -128, -128]
    ours = bitround(x, 2).tolist()
    differ = [i for i in range(len(x)) if ours[i] != zarrs[i]]
    assert [int(x[i]) for i in differ] == [120, 127]
    assert [ours[i] for i in differ] == [96, 96]


# --- configuration ------------------------------------------------------------------------------------

@pytest.mark.parametrize("keepbits", [0, -1, 2.5, True, "3", None])
def test_keepbits_must_be_an_integer_of_at_least_one(keepbits):
    with pytest.raises(ConfigError) as info:
        zdt.BitroundCodec(keepbits=keepbits)
    assert info.value.config_key == "keepbits"


@pytest.mark.parametrize(("data", "match"), [
    ({"name": "bitround", "configuration": {}}, "needs 'keepbits'"),
    ({"name": "bitround", "configuration": {"keepbits": 3, "mode": 1}}, "unknown configuration key"),
    ({"name": "bitround"}, "needs a 'configuration'"),
    ({"name": "bitround", "configuration": {"keepbits": None}}, "null"),
])
def test_metadata_is_read_strictly(data, match):
    with pytest.raises(ConfigError, match=match):
        zdt.BitroundCodec.from_dict(data)


def test_the_numcodecs_alias_is_read_and_bitround_written():
    codec = zdt.BitroundCodec.from_dict({"name": "numcodecs.bitround", "configuration": {"keepbits": 4}})
    assert codec == zdt.BitroundCodec(keepbits=4)
    assert codec.to_dict() == {"name": "bitround", "configuration": {"keepbits": 4}}
    check_metadata(codec)
    check_repr(codec, {"BitroundCodec": zdt.BitroundCodec})


@pytest.mark.parametrize("dtype", ["bool", "float8_e4m3fn", "int4", str])
def test_data_types_it_cannot_round_fail_at_creation(dtype):
    zdt.register()
    with pytest.raises(ConfigError, match="bitround: cannot round data type"):
        zarr.create_array(store=MemoryStore(), shape=(4,), dtype=dtype,
                          filters=[zdt.BitroundCodec(keepbits=3)])


def test_keepbits_at_or_above_the_types_bits_is_the_identity():
    x = np.array([1.2345, -7.5e-300, np.nan], dtype=np.float64)
    assert bitround(x, 52).tobytes() == x.tobytes() and bitround(x, 99).tobytes() == x.tobytes()
    i = np.array([-128, 127, 5], dtype=np.int8)
    assert bitround(i, 8).tolist() == [-128, 127, 5]


# --- through zarr -------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16", "int16", "uint32",
                                   "complex64", "datetime64[s]"])
def test_through_zarr_both_pipelines(dtype, tmp_path):
    zdt.register()
    rng = np.random.default_rng(3)
    if dtype.startswith("datetime"):
        x = (np.datetime64("2020-01-01") + rng.integers(0, 10**8, 64).astype("m8[s]")).astype(dtype)
    elif dtype.startswith("complex"):
        x = (rng.normal(size=64) + 1j * rng.normal(size=64)).astype(dtype)
    elif dtype in ("int16", "uint32"):
        x = rng.integers(0, 30000, 64).astype(dtype)
    else:
        x = rng.normal(scale=100, size=64).astype(np.float32).astype(
            ml_dtypes.bfloat16 if dtype == "bfloat16" else dtype)
    stored = {}
    for path in ("zarr.core.codec_pipeline.BatchedCodecPipeline", "zdt.pipeline.ZdtCodecPipeline"):
        with zarr.config.set({"codec_pipeline.path": path}):
            a = zarr.create_array(store=tmp_path / path, shape=x.shape, chunks=(16,), dtype=x.dtype,
                                  compressors=None, filters=[{"name": "bitround", "configuration": {"keepbits": 5}}])
            a[:] = x
            got = zarr.open_array(tmp_path / path)[:]
        assert got.tobytes() == bitround(x, 5).tobytes()
        stored[path] = sorted((p.name, p.read_bytes()) for p in (tmp_path / path / "c").iterdir())
    assert len(set(map(repr, stored.values()))) == 1


def test_fused_with_cast_value_in_zdts_pipeline():
    x = np.linspace(-1000, 1000, 100, dtype=np.float32)
    with zdt.use_pipeline():
        a = zarr.create_array(store=MemoryStore(), shape=x.shape, chunks=(32,), dtype=x.dtype,
                              compressors=None,
                              filters=[zdt.CastValueCodec(data_type="float16"), zdt.BitroundCodec(keepbits=4)])
        a[:] = x
        got = a[:]
    assert got.tolist() == bitround(x.astype(np.float16), 4).astype(np.float32).tolist()


# --- the format 2 filter ------------------------------------------------------------------------------

def test_format_2_filter_writes_numcodecs_id_and_numcodecs_reads_it(tmp_path):
    x = np.array([1.2345, -6.5, np.nan, 3.4028234663852886e38], dtype=np.float32)
    a = zarr.create_array(store=tmp_path / "v2", shape=x.shape, chunks=(4,), dtype=x.dtype,
                          zarr_format=2, compressors=None, filters=[zdt.BitRound(keepbits=3)],
                          fill_value=0.0)
    a[:] = x
    meta = json.loads((tmp_path / "v2" / ".zarray").read_text())
    assert meta["filters"] == [{"id": "bitround", "keepbits": 3}]
    back = zarr.open_array(tmp_path / "v2")
    assert type(back.filters[0]) is numcodecs.BitRound                  # numcodecs' own class
    assert back[:].tobytes() == bitround(x, 3).tobytes()
    assert math.isfinite(float(back[3]))
    codec = zdt.BitRound(keepbits=3)
    assert codec.get_config() == {"id": "bitround", "keepbits": 3} and codec == zdt.BitRound(3)
    assert zdt.BitRound.from_config(codec.get_config()) == codec
    assert codec.decode(codec.encode(x)).tobytes() == bitround(x, 3).tobytes()
    assert codec.encode(np.arange(10, dtype=np.int16)).tolist() == bitround(np.arange(10, dtype=np.int16), 3).tolist()
