"""Variable-length strings and bytes: byte-exactness with numcodecs, the Arrow offsets layout
against an independent encoder written from the ZEP, missing values, layouts, corrupt chunks
(each with its exact error; hypothesis feeds random and mutated buffers), round trips through
zarr arrays, codec selection and the zero-copy hand-off to pyarrow."""

from __future__ import annotations

import json
import struct
import warnings

import numcodecs
import numpy as np
import pytest
import zarr
from hypothesis import given
from hypothesis import strategies as st

from zdt import VLenArrowCodec, VLenBytesCodec, VLenUTF8Codec, use_string_codecs
from zdt.codecs import vlen
from zdt.errors import ConfigError, CorruptChunkError

SDT = np.dtypes.StringDType()
texts = st.text(alphabet=st.characters(codec="utf-8"), max_size=40)
byte_strings = st.binary(max_size=40)


def arrow_reference(items: list[bytes], width: int) -> bytes:
    """The ZEP's layout, written from its pseudo-code: offsets, zero padding to 64, data."""
    offsets = [0]
    for it in items:
        offsets.append(offsets[-1] + len(it))
    head = struct.pack(f"<{len(offsets)}{'i' if width == 4 else 'q'}", *offsets)
    pad = (-len(head)) % 64
    return head + b"\0" * pad + b"".join(items)


# --- vlen-utf8 / vlen-bytes against numcodecs ------------------------------------------------------

@given(st.lists(texts, max_size=60))
def test_utf8_byte_identical_to_numcodecs(items):
    obj = np.array(items + [""], dtype=object)[:-1] if items else np.array([], dtype=object)
    expected = bytes(numcodecs.VLenUTF8().encode(obj))
    assert vlen.encode(obj, utf8=True).tobytes() == expected
    assert vlen.encode(obj.astype(SDT), utf8=True).tobytes() == expected
    back = vlen.decode(expected, (len(items),), utf8=True)
    assert back.dtype == SDT and back.tolist() == items
    assert vlen.decode(expected, (len(items),), utf8=True, dtype=object).tolist() == items


@given(st.lists(byte_strings, max_size=60))
def test_bytes_byte_identical_to_numcodecs(items):
    obj = np.empty(len(items), dtype=object)
    obj[:] = items
    expected = bytes(numcodecs.VLenBytes().encode(obj))
    assert vlen.encode(obj, utf8=False, codec="vlen-bytes").tobytes() == expected
    back = vlen.decode(expected, (len(items),), utf8=False, codec="vlen-bytes")
    assert back.dtype == object and back.tolist() == items


@given(st.lists(texts, max_size=60), st.sampled_from([4, 8]))
def test_arrow_layout_matches_the_zep(items, width):
    expected = arrow_reference([s.encode() for s in items], width)
    got = vlen.encode(np.array(items, dtype=SDT), utf8=True, layout=vlen.ARROW, width=width)
    assert got.tobytes() == expected
    assert vlen.decode(expected, (len(items),), utf8=True, layout=vlen.ARROW, width=width).tolist() == items


def test_empty_arrow_chunk_is_one_zero_offset_padded_to_64():
    assert vlen.encode(np.array([], dtype=SDT), utf8=True, layout=vlen.ARROW).tobytes() == b"\0" * 64


@pytest.mark.parametrize("strings", [
    ["", "", ""],
    ["a\0b", "\0", "trailing\0"],
    ["é", "日本語", "🙂🙃", "mixed ascii and ü"],
    ["x" * 100_000, "", "y" * 70_000],
])
def test_special_strings(strings):
    for layout in (vlen.VLEN, vlen.ARROW):
        enc = vlen.encode(np.array(strings, dtype=SDT), utf8=True, layout=layout)
        assert vlen.decode(enc, (len(strings),), utf8=True, layout=layout).tolist() == strings


def test_elements_are_in_c_order_whatever_the_memory_layout():
    base = np.array([f"s{i}" for i in range(12)], dtype=SDT).reshape(3, 4)
    expected = vlen.encode(base, utf8=True).tobytes()
    for arr in (np.asfortranarray(base), base.T.copy().T, base.copy()):
        assert vlen.encode(arr, utf8=True).tobytes() == expected
    strided = np.array([f"s{i}" for i in range(24)], dtype=SDT).reshape(6, 4)[::2]
    assert vlen.decode(vlen.encode(strided, utf8=True), (3, 4), utf8=True).tolist() == strided.tolist()
    ro = base.copy()
    ro.flags.writeable = False
    assert vlen.encode(ro, utf8=True).tobytes() == expected
    zero_d = np.array("only", dtype=SDT)
    assert vlen.decode(vlen.encode(zero_d, utf8=True), (), utf8=True)[()] == "only"


def test_fixed_width_unicode_is_accepted():
    arr = np.array(["ab", "cde"], dtype="U3")
    assert vlen.encode(arr, utf8=True).tobytes() == bytes(numcodecs.VLenUTF8().encode(arr.astype(object)))


# --- missing values and wrong types -------------------------------------------------------------------

def test_missing_values_are_errors_never_empty_strings():
    na = np.dtypes.StringDType(na_object=None)
    arr = np.array([["a", "b"], ["c", None]], dtype=na)
    for layout in (vlen.VLEN, vlen.ARROW):
        with pytest.raises(ValueError, match=r"element \(1, 1\) is a missing value"):
            vlen.encode(arr, utf8=True, layout=layout)
    obj = np.array(["a", None], dtype=object)
    with pytest.raises(ValueError, match=r"element \(1,\) is a missing value"):
        vlen.encode(obj, utf8=True)
    # without an na_object, numpy has no missing value: all strings encode
    assert vlen.encode(np.array(["a", ""], dtype=SDT), utf8=True).size == 4 + 4 + 1 + 4


@pytest.mark.parametrize(("items", "utf8", "match"), [
    (["a", 1.5], True, r"element \(1,\) is a float, expected str"),
    (["a", b"b"], True, r"element \(1,\) is a bytes, expected str"),
    ([b"a", "b"], False, r"element \(1,\) is a str, expected bytes"),
    (["a", "\ud800"], True, r"element \(1,\) cannot be encoded as UTF-8"),
])
def test_wrong_element_types(items, utf8, match):
    obj = np.empty(len(items), dtype=object)
    obj[:] = items
    with pytest.raises((TypeError, ValueError), match=match):
        vlen.encode(obj, utf8=utf8)


def test_int32_offsets_limit_names_int64():
    from zdt.kernels import _vlen

    with pytest.raises(ValueError, match=r'configure \{"offsets": "int64"\}'):
        _vlen._check_limits(10, 2**31, 100, vlen.ARROW, 4, "zdt.vlen_arrow")
    _vlen._check_limits(10, 2**31, 100, vlen.ARROW, 8, "zdt.vlen_arrow")
    with pytest.raises(ValueError, match="does not fit a 32-bit length"):
        _vlen._check_limits(1, 2**32, 2**32, vlen.VLEN, 4, "vlen-bytes")


# --- corrupt chunks -----------------------------------------------------------------------------------

def vchunk(*items: bytes, count: int | None = None) -> bytes:
    out = struct.pack("<I", len(items) if count is None else count)
    for it in items:
        out += struct.pack("<I", len(it)) + it
    return out


@pytest.mark.parametrize(("buf", "n", "match", "part"), [
    (b"\x01\x00", 1, "the chunk is shorter than its header", "header"),
    (vchunk(b"ab", count=3), 3, r"element \(1,\): the chunk ends before its length", "lengths"),
    (vchunk(b"ab", b"cd", count=3), 2, "the chunk holds 3 elements but its shape needs 2", "header"),
    (vchunk(b"ab")[:-1], 1, r"element \(0,\): its length 2 runs past the end", "lengths"),
    (struct.pack("<II", 1, 0xFFFFFFFF) + b"x", 1, r"element \(0,\): its length 4294967295 runs past", "lengths"),
    (vchunk(b"ok", b"\xff\xfe"), 2, r"element \(1,\) is not valid UTF-8 \(byte 0 of it\)", "data"),
    (vchunk(b"a\xc3"), 1, r"element \(0,\) is not valid UTF-8 \(byte 1 of it\)", "data"),
    (vchunk(b"\xed\xa0\x80"), 1, "not valid UTF-8", "data"),               # surrogate
    (vchunk(b"\xc0\x80"), 1, "not valid UTF-8", "data"),                   # overlong NUL
    (vchunk(b"\xf4\x90\x80\x80"), 1, "not valid UTF-8", "data"),           # beyond U+10FFFF
    (vchunk(b"ab") + b"\0", 1, "1 bytes follow the last element", "data"),
])
def test_corrupt_vlen_chunks(buf, n, match, part):
    with pytest.raises(CorruptChunkError, match=match) as e:
        vlen.decode(buf, (n,), utf8=True)
    assert (e.value.codec, e.value.part) == ("vlen-utf8", part)


def test_corrupt_chunk_error_uses_the_nd_index():
    buf = vchunk(b"a", b"b", b"c", b"\xff")
    with pytest.raises(ValueError, match=r"element \(1, 1\) is not valid UTF-8"):
        vlen.decode(buf, (2, 2), utf8=True)


def test_bytes_are_not_utf8_checked():
    assert vlen.decode(vchunk(b"\xff\xfe"), (1,), utf8=False).tolist() == [b"\xff\xfe"]


def achunk(offsets, data=b"", width=4, pad=None):
    head = struct.pack(f"<{len(offsets)}{'i' if width == 4 else 'q'}", *offsets)
    padding = b"\0" * ((-len(head)) % 64) if pad is None else pad
    return head + padding + data


@pytest.mark.parametrize(("buf", "n", "match", "part"), [
    (b"\0" * 63, 0, "the chunk is shorter than its header", "header"),
    (achunk([0, 2, 4])[:60], 2, "shorter than its header", "header"),
    (achunk([1, 2], b"ab"), 1, "the first offset is 1, not 0", "offsets"),
    (achunk([0, 3, 2], b"abc"), 2, r"offset number 2 \(2\) is smaller than the one before it", "offsets"),
    (achunk([0, 2, 9], b"abcd"), 2, r"element \(1,\): its length 7 runs past the end", "lengths"),
    (achunk([0, 2], b"abcd"), 1, r"the last offset \(2\) is not the length of the data", "offsets"),
    (achunk([0, 2], b"ab", pad=b"\0" * 55 + b"\x01"), 1, "padding byte 55 after the offsets is not zero", "padding"),
    (achunk([0, 2, 4], b"ab\xff\xfe"), 2, r"element \(1,\) is not valid UTF-8", "data"),
    (achunk([0, -1], b""), 1, r"offset number 1 \(-1\) is smaller", "offsets"),
])
def test_corrupt_arrow_chunks(buf, n, match, part):
    with pytest.raises(CorruptChunkError, match=match) as e:
        vlen.decode(buf, (n,), utf8=True, layout=vlen.ARROW)
    assert e.value.part == part


def test_arrow_int64_offsets_are_read_as_64_bit():
    buf = achunk([0, 2**40], b"", width=8)
    with pytest.raises(ValueError, match="runs past the end"):
        vlen.decode(buf, (1,), utf8=False, layout=vlen.ARROW, width=8)


@given(st.binary(max_size=300), st.integers(0, 20), st.sampled_from([0, 1]), st.sampled_from([4, 8]),
       st.booleans())
def test_random_buffers_never_crash(buf, n, layout, width, utf8):
    try:
        out = vlen.decode(buf, (n,), utf8=utf8, layout=layout, width=width)
    except ValueError as e:
        assert "corrupt chunk" in str(e)
        return
    # a buffer that decodes is a valid chunk: encoding gives it back
    assert vlen.encode(out, utf8=utf8, layout=layout, width=width).tobytes() == buf


@given(st.lists(texts, min_size=1, max_size=20), st.data())
def test_mutated_chunks_never_crash(items, data):
    for layout in (vlen.VLEN, vlen.ARROW):
        buf = bytearray(vlen.encode(np.array(items, dtype=SDT), utf8=True, layout=layout).tobytes())
        for _ in range(data.draw(st.integers(1, 4))):
            op = data.draw(st.sampled_from(["flip", "truncate", "extend"]))
            if op == "flip" and buf:
                i = data.draw(st.integers(0, len(buf) - 1))
                buf[i] ^= 1 << data.draw(st.integers(0, 7))
            elif op == "truncate":
                del buf[data.draw(st.integers(0, len(buf))):]
            else:
                buf += bytes(data.draw(st.binary(min_size=1, max_size=8)))
        try:
            out = vlen.decode(bytes(buf), (len(items),), utf8=True, layout=layout)
        except ValueError as e:
            assert "corrupt chunk" in str(e)
            continue
        assert out.shape == (len(items),)


# --- zarr arrays ------------------------------------------------------------------------------------------

STRINGS = np.array([["", "a", "bé", "日本", "x" * 300], ["a\0b", "🙂", " ", "last", ""]], dtype=SDT)


def _create(path, serializer, data=STRINGS, chunks=(1, 2), fill_value=None):
    from zarr.core.dtype import VariableLengthBytes

    kw = {} if fill_value is None else {"fill_value": fill_value}
    dtype = VariableLengthBytes() if data.dtype == object else data.dtype
    with warnings.catch_warnings():
        # zarr marks its variable-length bytes data type as not yet in the spec
        warnings.simplefilter("ignore", category=zarr.errors.UnstableSpecificationWarning)
        return zarr.create_array(store=path, shape=data.shape, chunks=chunks, dtype=dtype,
                                 serializer=serializer, compressors=None, **kw)


@pytest.mark.parametrize("serializer", [VLenUTF8Codec(), VLenArrowCodec(), VLenArrowCodec(offsets="int64")])
def test_string_arrays_round_trip(tmp_path, serializer):
    a = _create(tmp_path / "a", serializer)
    a[:] = STRINGS
    with use_string_codecs():
        b = zarr.open_array(tmp_path / "a")
        got = b[:]
    assert got.dtype == SDT and got.tolist() == STRINGS.tolist()
    assert b[1, 1:4].tolist() == ["🙂", " ", "last"]


def test_partial_writes_and_fill_values(tmp_path):
    a = _create(tmp_path / "a", VLenArrowCodec(), chunks=(2, 2), fill_value="-")
    a[0, 1:4] = ["p", "q", "r"]
    expected = [["-", "p", "q", "r", "-"], ["-"] * 5]
    assert a[:].tolist() == expected
    assert not (tmp_path / "a" / "c" / "0" / "2").exists()


def test_chunks_are_byte_identical_to_zarrs_own_codec(tmp_path):
    from zarr.codecs.vlen_utf8 import VLenUTF8Codec as ZarrVLenUTF8

    ours = _create(tmp_path / "ours", VLenUTF8Codec())
    ours[:] = STRINGS
    theirs = _create(tmp_path / "theirs", ZarrVLenUTF8())
    theirs[:] = STRINGS
    files = sorted(p.relative_to(tmp_path / "ours") for p in (tmp_path / "ours" / "c").rglob("*") if p.is_file())
    assert files
    for f in files:
        assert (tmp_path / "ours" / f).read_bytes() == (tmp_path / "theirs" / f).read_bytes()


def test_written_by_zarr_read_by_zdt_and_the_reverse(tmp_path):
    from zarr.codecs.vlen_utf8 import VLenUTF8Codec as ZarrVLenUTF8

    a = _create(tmp_path / "by_zarr", ZarrVLenUTF8())
    a[:] = STRINGS
    b = _create(tmp_path / "by_zdt", VLenUTF8Codec())
    b[:] = STRINGS
    with use_string_codecs():
        r = zarr.open_array(tmp_path / "by_zarr")
        assert type(r.metadata.codecs[0]) is VLenUTF8Codec
        assert r[:].tolist() == STRINGS.tolist()
    with use_string_codecs(False):
        r = zarr.open_array(tmp_path / "by_zdt")
        assert type(r.metadata.codecs[0]).__module__.startswith("zarr.")
        assert r[:].tolist() == STRINGS.tolist()


# zarr marks its variable-length bytes data type as not yet in the spec
@pytest.mark.filterwarnings("ignore::zarr.errors.UnstableSpecificationWarning")
def test_bytes_arrays(tmp_path):
    data = np.empty((2, 3), dtype=object)
    data[:] = [[b"", b"\x00\xff", b"abc"], [b"x" * 1000, b"\x80", b"z"]]
    for serializer in (VLenBytesCodec(), VLenArrowCodec()):
        a = _create(tmp_path / type(serializer).__qualname__, serializer, data=data, chunks=(2, 2))
        a[:] = data
        got = zarr.open_array(tmp_path / type(serializer).__qualname__)
        with use_string_codecs():
            assert got[:].tolist() == data.tolist()


def test_use_string_codecs_switches_reading_writing_and_creation(tmp_path):
    from zarr.codecs.vlen_utf8 import VLenUTF8Codec as ZarrVLenUTF8
    from zarr.registry import get_codec_class

    assert get_codec_class("vlen-utf8") is ZarrVLenUTF8          # zarr's default
    with use_string_codecs():
        assert get_codec_class("vlen-utf8") is VLenUTF8Codec
        assert get_codec_class("vlen-bytes") is VLenBytesCodec
        a = zarr.create_array(store=tmp_path / "a", shape=(2,), dtype=str)
        assert isinstance(a.metadata.codecs[0], VLenUTF8Codec)
    assert get_codec_class("vlen-utf8") is ZarrVLenUTF8
    b = zarr.create_array(store=tmp_path / "b", shape=(2,), dtype=str)
    assert type(b.metadata.codecs[0]) is ZarrVLenUTF8
    use_string_codecs()
    try:
        assert get_codec_class("vlen-utf8") is VLenUTF8Codec
    finally:
        use_string_codecs(False)
    assert get_codec_class("vlen-utf8") is ZarrVLenUTF8


def test_codec_metadata(tmp_path):
    assert VLenUTF8Codec().to_dict() == {"name": "vlen-utf8", "configuration": {}}
    assert VLenArrowCodec().to_dict() == {"name": "zdt.vlen_arrow"}
    assert VLenArrowCodec.from_dict({"name": "zdt.vlen_arrow", "configuration": {"offsets": "int64"}}).offsets == "int64"
    with pytest.raises(ConfigError, match="offsets 'int16' is not one of"):
        VLenArrowCodec(offsets="int16")
    with pytest.raises(ConfigError, match="unknown configuration key"):
        VLenArrowCodec.from_dict({"name": "zdt.vlen_arrow", "configuration": {"width": 4}})
    a = _create(tmp_path / "a", VLenArrowCodec(offsets="int64"))
    meta = json.loads((tmp_path / "a" / "zarr.json").read_text())
    assert meta["codecs"][0] == {"name": "zdt.vlen_arrow", "configuration": {"offsets": "int64"}}
    with pytest.raises(ConfigError, match="cannot store data type 'int32'"):
        zarr.create_array(store={}, shape=(2,), dtype="int32", serializer=VLenArrowCodec())


def test_corrupt_chunk_in_a_zarr_array(tmp_path):
    a = _create(tmp_path / "a", VLenUTF8Codec(), chunks=(2, 5))
    a[:] = STRINGS
    path = tmp_path / "a" / "c" / "0" / "0"
    path.write_bytes(path.read_bytes()[:-3])
    with use_string_codecs(), pytest.raises(ValueError, match="vlen-utf8: corrupt chunk"):
        zarr.open_array(tmp_path / "a")[:]


# --- pyarrow -----------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("kind", "offsets"), [("string", "int32"), ("string", "int64"),
                                              ("bytes", "int32"), ("bytes", "int64")])
def test_chunk_to_arrow_without_copying(kind, offsets):
    import pyarrow as pa

    from zdt.codecs.arrow import arrow_to_chunk, chunk_to_arrow

    items = ["", "a", "bé", "x" * 100, "🙂"]
    data = np.array(items, dtype=SDT) if kind == "string" else np.array([s.encode() for s in items], dtype=object)
    width = 4 if offsets == "int32" else 8
    chunk = vlen.encode(data, utf8=kind == "string", layout=vlen.ARROW, width=width)
    before = pa.total_allocated_bytes()
    arr = chunk_to_arrow(chunk, len(items), offsets=offsets, kind=kind)
    assert pa.total_allocated_bytes() == before                       # nothing allocated
    assert arr.buffers()[1].address == chunk.ctypes.data               # offsets: the chunk's
    assert arr.buffers()[2].address == chunk.ctypes.data + 64          # data: the chunk's
    expected_type = {("string", 4): pa.string(), ("string", 8): pa.large_string(),
                     ("bytes", 4): pa.binary(), ("bytes", 8): pa.large_binary()}[kind, width]
    assert arr.type == expected_type
    assert arr.to_pylist() == (items if kind == "string" else [s.encode() for s in items])
    arr.validate(full=True)
    assert arrow_to_chunk(arr).tobytes() == chunk.tobytes()
    assert arrow_to_chunk(arr.slice(1, 3)).tobytes() == vlen.encode(
        data[1:4], utf8=kind == "string", layout=vlen.ARROW, width=width).tobytes()


def test_chunk_to_arrow_validates_first():
    from zdt.codecs.arrow import chunk_to_arrow

    with pytest.raises(ValueError, match="not valid UTF-8"):
        chunk_to_arrow(achunk([0, 1], b"\xff"), 1)


def test_invalid_utf8_is_caught_when_decoding_into_objects_too():
    with pytest.raises(ValueError, match=r"element \(1, 0\) is not valid UTF-8 \(byte 1 of it\)"):
        vlen.decode(vchunk(b"a", b"b", b"x\xff", b"d"), (2, 2), utf8=True, dtype=object)


def test_huge_chunk_shapes_do_not_overflow_the_header_size():
    for n in (2**62, 2**61 + 5, 2**40):
        with pytest.raises(ValueError, match="shorter than its header"):
            vlen.decode(b"\0" * 4096, (n,), utf8=True, layout=vlen.ARROW)
        with pytest.raises(ValueError, match="shape needs"):
            vlen.decode(b"\0" * 4096, (n,), utf8=True, layout=vlen.VLEN)
    with pytest.raises(ValueError, match="negative extent"):
        vlen.decode(b"", (-1,), utf8=True, layout=vlen.ARROW)


def test_a_buffer_changing_between_the_passes_is_caught():
    """The decode pass re-checks every span against the buffer: a caller mutating its bytearray
    between validation and decoding gets an error, never an out-of-bounds read."""
    from zdt.kernels import _vlen

    buf = bytearray(vchunk(b"ab", b"cd"))
    raw = np.frombuffer(buf, dtype=np.uint8)
    _vlen.validate(raw, 2, vlen.VLEN, 4, True, "vlen-utf8", (2,))
    buf[4:8] = struct.pack("<I", 10**6)          # after validation, as a racing thread could
    with pytest.raises(ValueError, match="changed while it was being decoded"):
        _vlen.decode_strings(raw, 2, vlen.VLEN, 4, "vlen-utf8", (2,))
    with pytest.raises(ValueError, match="changed while it was being decoded"):
        _vlen.decode_objects(raw, 2, vlen.VLEN, 4, False, "vlen-bytes", (2,))


def test_arrow_codec_offsets_must_be_a_name():
    with pytest.raises(ConfigError, match="offsets"):
        VLenArrowCodec(offsets=["int32"])


def test_arrow_to_chunk_rejects_other_types():
    import pyarrow as pa

    from zdt.codecs.arrow import arrow_to_chunk

    with pytest.raises(TypeError, match="expected a \\(large\\) string or binary array"):
        arrow_to_chunk(pa.array([1, 2]))
