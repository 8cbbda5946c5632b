"""zdt against TensorStore's zarr3 driver: the same arrays, written by one and read by the other.

For every data type both implement (int2, int4, bfloat16, float4_e2m1fn and the float8 types
below) and in both directions:

* zdt writes (zarr.create_array, the ``bytes`` codec, no compressor), TensorStore reads;
  TensorStore writes (explicit metadata, ``bytes`` codec), zdt reads.
* The data is every bit pattern of the type (bfloat16: all 65536), written so that one chunk
  is never written and two are written in part: the fill value is read from the metadata.
* Values are compared bit for bit, including the fill region; sub-byte types compare their
  logical bits only (the high bits of the byte are free, see below). Each side's view of the
  fill value is checked as well, and given the same fill both write the same metadata JSON
  (data_type, fill_value, codecs).

zdt's chunk bytes for int2/int4 are sign-extended (zdt's rule for the free high bits) and zdt
reads TensorStore's zero-extended int2/int4 bytes correctly; zdt reads TensorStore's big-endian
bfloat16; zdt's "float8_e4m3fn" is TensorStore's float8_e4m3fn.

What TensorStore 0.1.86 does not do, pinned here so that a change shows up as a failure:

* It cannot open uint2, uint4, float6_e2m3fn, float6_e3m2fn, nor zarr-extensions'
  float8_e4m3 (the IEEE-like E4M3 with infinities; TensorStore only has float8_e4m3fn).
* Its float8_e8m0fnu <-> double conversion is off (bits 0x7f, which is 1.0, becomes 2**64, and
  1.0 becomes bits 0x3f), so JSON-number float8_e8m0fnu fill values do not interoperate: a
  fill 1.0 written as a number reads as 2**-64 in TensorStore, and TensorStore writes its fill
  "0x7f" as 1.8446744073709552e+19 (2**64). zdt therefore writes finite float8_e8m0fnu fill
  values as "0x.." bit patterns, which TensorStore reads right.
* When it writes int2/int4 values from an ml_dtypes array it stores the bytes as they are in
  memory (int4 -1 as 0x0f), while its own fill value is sign-extended (0xff). Both are valid
  (readers ignore the high bits), so this is only pinned, not a disagreement.
"""

from __future__ import annotations

import json

import ml_dtypes
import numpy as np
import pytest
import zarr

import zdt

ts = pytest.importorskip("tensorstore")

# Data types in both zdt and TensorStore's zarr3 driver.
SHARED = ["int2", "int4", "bfloat16", "float4_e2m1fn", "float8_e3m4", "float8_e4m3fn",
          "float8_e4m3fnuz", "float8_e4m3b11fnuz", "float8_e5m2", "float8_e5m2fnuz",
          "float8_e8m0fnu"]

# zdt data types TensorStore 0.1.86 cannot open.
NOT_IN_TENSORSTORE = ["uint2", "uint4", "float6_e2m3fn", "float6_e3m2fn", "float8_e4m3"]

# Logical width of the types stored one per byte with free high bits.
SUB_BYTE_BITS = {"int2": 2, "int4": 4, "float4_e2m1fn": 4}

# (data type, JSON fill value, its bit pattern): a non-zero finite fill for each type, then
# NaNs (canonical and not), infinities and negative zero.
FILLS = [
    ("int2", -2, 0x2),
    ("int4", -3, 0xd),
    ("bfloat16", 3.140625, 0x4049),
    ("float4_e2m1fn", -1.5, 0xb),
    ("float8_e3m4", 1.75, 0x3c),
    ("float8_e4m3fn", -2.5, 0xc2),
    ("float8_e4m3fnuz", 240.0, 0x7f),
    ("float8_e4m3b11fnuz", -0.5, 0xd0),
    ("float8_e5m2", -3.0, 0xc2),
    ("float8_e5m2fnuz", 1.25, 0x41),
    ("float8_e8m0fnu", "NaN", 0xff),      # finite ones: see the float8_e8m0fnu tests below
    ("float8_e4m3fn", "NaN", 0x7f),
    ("float8_e4m3fn", "0xff", 0xff),      # the other NaN of float8_e4m3fn
    ("float8_e4m3fn", -0.0, 0x80),
    ("float4_e2m1fn", -0.0, 0x8),
    ("bfloat16", -0.0, 0x8000),
    ("bfloat16", "NaN", 0x7fc0),
    ("bfloat16", "0x7fc1", 0x7fc1),       # a NaN with another payload
    ("float8_e5m2", "-Infinity", 0xfc),
]
assert {name for name, _, _ in FILLS} == set(SHARED)


def fill_id(case):
    name, fill, _ = case
    return f"{name}-{fill}"


# --- helpers ---------------------------------------------------------------------------------

def dtype_of(name: str) -> np.dtype:
    return np.dtype(getattr(ml_dtypes, name))


def uint_of(name: str) -> np.dtype:
    return np.dtype(f"u{dtype_of(name).itemsize}")


def logical_bits(arr, name: str) -> np.ndarray:
    """The bit patterns of an array of `name` (sub-byte types: the low bits of each byte)."""
    bits = np.asarray(arr).view(uint_of(name))
    if name in SUB_BYTE_BITS:
        bits = bits & np.uint8((1 << SUB_BYTE_BITS[name]) - 1)
    return bits


def every_value(name: str) -> np.ndarray:
    """Every bit pattern of the type, as ml_dtypes holds it (sub-byte types: zero-extended)."""
    count = 1 << SUB_BYTE_BITS.get(name, 8 * dtype_of(name).itemsize)
    return np.arange(count, dtype=uint_of(name)).view(dtype_of(name))


def layout(n: int) -> tuple[int, int, int]:
    """(shape, chunk, offset) for n values written at [offset, offset + n): the first and the
    next-to-last chunk are written in part, the last chunk not at all."""
    chunk = max(2, n // 4)
    return n + 2 * chunk, chunk, chunk // 2


def expected_bits(name: str, data: np.ndarray, fill_bits: int) -> tuple[np.ndarray, int, int]:
    """The array's logical bits after writing `data` over the fill; also (chunk, offset)."""
    shape, chunk, offset = layout(data.size)
    want = np.full(shape, fill_bits, dtype=uint_of(name))
    want[offset:offset + data.size] = logical_bits(data, name)
    return want, chunk, offset


def ts_open(path, **kwargs):
    return ts.open({"driver": "zarr3", "kvstore": {"driver": "file", "path": str(path)}},
                   **kwargs).result()


def ts_create(path, name, shape, chunk, fill, endian="little"):
    bytes_codec = {"name": "bytes"}
    if name == "bfloat16":
        bytes_codec["configuration"] = {"endian": endian}
    spec = {
        "driver": "zarr3",
        "kvstore": {"driver": "file", "path": str(path)},
        "metadata": {
            "data_type": name,
            "shape": [shape],
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [chunk]}},
            "codecs": [bytes_codec],
            "fill_value": fill,
        },
    }
    return ts.open(spec, create=True).result()


def zdt_create(path, name, shape, chunk, fill):
    return zarr.create_array(store=str(path), shape=(shape,), chunks=(chunk,), dtype=name,
                             fill_value=fill, compressors=None)


def metadata(path) -> dict:
    return json.loads((path / "zarr.json").read_text())


def chunk_bytes(path, index: int) -> bytes:
    return (path / "c" / str(index)).read_bytes()


def scalar_bits(value, name: str) -> int:
    return int(logical_bits(np.asarray(value, dtype=dtype_of(name)).reshape(1), name)[0])


# --- every shared type, both directions -------------------------------------------------------

# zarr 3.1's check for chunks equal to the fill value compares ml_dtypes arrays holding NaN
# with ==, which NumPy warns about (the result is right; zarr 3.4 compares bit patterns)
_ZARR31_NAN_COMPARE = "ignore:invalid value encountered in equal:RuntimeWarning"


@pytest.mark.filterwarnings(_ZARR31_NAN_COMPARE)
@pytest.mark.parametrize("case", FILLS, ids=fill_id)
def test_zdt_writes_tensorstore_reads(tmp_path, case):
    name, fill, fill_bits = case
    data = every_value(name)
    want, chunk, offset = expected_bits(name, data, fill_bits)
    path = tmp_path / "a"
    arr = zdt_create(path, name, want.size, chunk, fill)
    arr[offset:offset + data.size] = data
    assert metadata(path)["data_type"] == name
    last = want.size // chunk - 1
    assert not (path / "c" / str(last)).exists()        # only the fill value describes it

    store = ts_open(path)
    assert store.dtype.numpy_dtype == dtype_of(name)
    assert scalar_bits(store.fill_value, name) == fill_bits
    got = store.read().result()
    assert got.dtype == dtype_of(name)
    np.testing.assert_array_equal(logical_bits(got, name), want)


@pytest.mark.parametrize("case", FILLS, ids=fill_id)
def test_tensorstore_writes_zdt_reads(tmp_path, case):
    name, fill, fill_bits = case
    data = every_value(name)
    want, chunk, offset = expected_bits(name, data, fill_bits)
    path = tmp_path / "a"
    store = ts_create(path, name, want.size, chunk, fill)
    store[offset:offset + data.size].write(data).result()
    meta = metadata(path)
    assert meta["data_type"] == name
    assert meta["codecs"] == ([{"name": "bytes", "configuration": {"endian": "little"}}]
                              if name == "bfloat16" else [{"name": "bytes"}])
    last = want.size // chunk - 1
    assert not (path / "c" / str(last)).exists()

    arr = zarr.open_array(str(path), mode="r")
    assert arr.dtype == dtype_of(name)
    assert scalar_bits(arr.fill_value, name) == fill_bits
    got = arr[:]
    assert got.dtype == dtype_of(name)
    np.testing.assert_array_equal(logical_bits(got, name), want)


@pytest.mark.parametrize("case", FILLS, ids=fill_id)
def test_same_metadata_json(tmp_path, case):
    """Given the same fill value, both write the same data_type, fill_value and codecs JSON."""
    name, fill, _ = case
    zdt_create(tmp_path / "zdt", name, 4, 4, fill)
    ts_create(tmp_path / "ts", name, 4, 4, fill)
    written = [metadata(tmp_path / side) for side in ("zdt", "ts")]
    # json.dumps: -0.0 and 0.0 compare equal as numbers
    assert json.dumps(written[0]["fill_value"]) == json.dumps(written[1]["fill_value"])
    assert json.dumps(written[0]["fill_value"]) == json.dumps(fill)
    for key in ("data_type", "codecs"):
        assert written[0][key] == written[1][key]


# --- sub-byte storage ---------------------------------------------------------------------------

def sign_extend(bits: np.ndarray, width: int) -> np.ndarray:
    """The bytes with the sign bit of a `width`-bit integer copied into the high bits."""
    shift = 8 - width
    high = (bits.astype(np.uint8) << np.uint8(shift)).view(np.int8)
    return (high >> np.int8(shift)).view(np.uint8)


@pytest.mark.parametrize("name", ["int2", "int4"])
def test_zdt_stores_signed_sub_byte_integers_sign_extended(tmp_path, name):
    """zdt's rule, as zdt's pipeline writes: the high bits of an int2/int4 byte are the sign
    extension, data and fill alike, even from an ml_dtypes array that holds -1 as 0x0f (int4)
    / 0x03 (int2)."""
    width = SUB_BYTE_BITS[name]
    data = every_value(name)                               # zero-extended in memory
    assert data.view(np.uint8).max() == (1 << width) - 1
    path = tmp_path / "a"
    with zdt.use_pipeline():
        arr = zdt_create(path, name, 2 * data.size, data.size, -1)
        arr[:data.size] = data
        arr[data.size] = 1                                 # second chunk: 1, then the fill
    assert chunk_bytes(path, 0) == sign_extend(np.arange(1 << width), width).tobytes()
    assert chunk_bytes(path, 1) == bytes([1] + [0xff] * (data.size - 1))
    # TensorStore reads them as the same values, and hands out sign-extended bytes
    got = ts_open(path).read().result()
    np.testing.assert_array_equal(got[:data.size].view(np.uint8),
                                  sign_extend(np.arange(1 << width), width))
    assert got[data.size:].astype(np.int8).tolist() == [1] + [-1] * (data.size - 1)


@pytest.mark.parametrize("name", ["int2", "int4"])
def test_tensorstore_sub_byte_bytes_as_given_zdt_reads_them(tmp_path, name):
    """TensorStore stores what is in memory: an ml_dtypes array's zero-extended bytes, while
    its fill value is sign-extended. zdt's pipeline reads both as the same values
    (sign-extended)."""
    width = SUB_BYTE_BITS[name]
    data = every_value(name)
    n = data.size
    path = tmp_path / "a"
    store = ts_create(path, name, 2 * n, n, -1)
    store[:n].write(data).result()
    store[n:n + 1].write(np.array([1], dtype=dtype_of(name))).result()
    assert chunk_bytes(path, 0) == np.arange(1 << width, dtype=np.uint8).tobytes()
    assert chunk_bytes(path, 1) == bytes([1] + [0xff] * (n - 1))
    with zdt.use_pipeline():
        got = zarr.open_array(str(path), mode="r")[:]
    np.testing.assert_array_equal(got[:n].view(np.uint8), sign_extend(np.arange(1 << width), width))
    assert got[n:].astype(np.int8).tolist() == [1] + [-1] * (n - 1)


# --- bfloat16 byte order, float8_e4m3fn name, what TensorStore lacks ---------------------------

def test_zdt_reads_tensorstore_big_endian_bfloat16(tmp_path):
    data = every_value("bfloat16")
    want, chunk, offset = expected_bits("bfloat16", data, 0xbfc0)        # fill -1.5
    path = tmp_path / "a"
    store = ts_create(path, "bfloat16", want.size, chunk, -1.5, endian="big")
    store[offset:offset + data.size].write(data).result()
    assert metadata(path)["codecs"] == [{"name": "bytes", "configuration": {"endian": "big"}}]
    # chunk 0 is 'offset' fill values, then the first patterns 0x0000, 0x0001, ...
    assert chunk_bytes(path, 0)[:2 * offset + 4] == bytes.fromhex("bfc0" * offset + "00000001")

    arr = zarr.open_array(str(path), mode="r")
    assert scalar_bits(arr.fill_value, "bfloat16") == 0xbfc0
    got = arr[:]
    assert got.dtype == dtype_of("bfloat16")                 # native order in memory
    np.testing.assert_array_equal(logical_bits(got, "bfloat16"), want)


def test_float8_e4m3fn_name(tmp_path):
    """zdt's float8_e4m3fn (finite-only, max 448; not a zarr-extensions name) is TensorStore's."""
    values = np.array([448, -448, 0.001953125, -1, 0], dtype=ml_dtypes.float8_e4m3fn)
    path = tmp_path / "a"
    arr = zdt_create(path, "float8_e4m3fn", 8, 8, 448.0)
    arr[:5] = values
    meta = metadata(path)
    assert (meta["data_type"], meta["fill_value"]) == ("float8_e4m3fn", 448.0)
    store = ts_open(path)
    assert store.dtype.name == "float8_e4m3fn"
    assert store.read().result().astype(np.float32).tolist() == [
        448, -448, 0.001953125, -1, 0, 448, 448, 448]


@pytest.mark.parametrize("name", NOT_IN_TENSORSTORE)
def test_tensorstore_cannot_open(tmp_path, name):
    """A gap in TensorStore 0.1.86, not in zdt: these zarr-extensions data types (uint2, uint4,
    float6_*, and float8_e4m3, the IEEE-like E4M3 that is not TensorStore's float8_e4m3fn) are
    not among its zarr3 data types. When this fails, TensorStore has learnt one: move it to
    SHARED."""
    path = tmp_path / "a"
    zdt_create(path, name, 4, 4, 1)
    assert metadata(path)["data_type"] == name
    unsupported = f"{name} data type is not one of the supported data types"
    with pytest.raises(ValueError, match=unsupported):
        ts_open(path)


# --- TensorStore's float8_e8m0fnu conversion bug ------------------------------------------------

@pytest.mark.parametrize("fill,bits", [(1.0, 0x7f), (2.0, 0x80), (2.0 ** -127, 0x00), (0.25, 0x7d)])
def test_zdt_writes_float8_e8m0fnu_fill_values_as_bits_tensorstore_reads_them(tmp_path, fill, bits):
    """zdt writes a finite float8_e8m0fnu fill value as its "0x.." bit pattern (the v3
    fill-value encoding allows it for floats), which TensorStore reads exactly."""
    e8m0 = dtype_of("float8_e8m0fnu")
    path = tmp_path / "zdt"
    arr = zdt_create(path, "float8_e8m0fnu", 4, 2, fill)
    arr[:2] = np.array([0.5, 4.0], dtype=e8m0)
    assert metadata(path)["fill_value"] == f"0x{bits:02x}"
    store = ts_open(path)
    assert scalar_bits(store.fill_value, "float8_e8m0fnu") == bits
    assert store.read().result().view(np.uint8).tolist() == [0x7e, 0x81, bits, bits]
    assert scalar_bits(zarr.open_array(str(path), mode="r").fill_value, "float8_e8m0fnu") == bits


def test_tensorstore_float8_e8m0fnu_numeric_fill_bug(tmp_path):
    """TensorStore 0.1.86 converts float8_e8m0fnu to and from double wrongly (as if its bias
    were 63, not 127), so a numeric fill value means something else to it. ml_dtypes and zdt
    agree with zarr-extensions: 1.0 is 0x7f. This test pins the bug (why zdt writes these fill
    values as bit patterns); if it fails, TensorStore has probably fixed it."""
    e8m0 = dtype_of("float8_e8m0fnu")
    assert np.array(1.0, dtype=e8m0).view(np.uint8) == 0x7f

    # metadata with the JSON number 1.0 (bits 0x7f), as another writer may put it: TensorStore
    # reads bits 0x3f, which is 2**-64
    path = tmp_path / "numeric"
    zdt_create(path, "float8_e8m0fnu", 4, 2, 1.0)
    meta = metadata(path)
    meta["fill_value"] = 1.0
    (path / "zarr.json").write_text(json.dumps(meta))
    assert scalar_bits(zarr.open_array(str(path), mode="r").fill_value, "float8_e8m0fnu") == 0x7f
    store = ts_open(path)
    assert scalar_bits(store.fill_value, "float8_e8m0fnu") == 0x3f          # should be 0x7f
    assert store.read().result().astype(np.float64)[0] == 2.0 ** -64

    # TensorStore given the fill "0x7f" holds the right bits but writes them as the JSON number
    # 2**64, which zdt (correctly) reads as bits 0xbf.
    path = tmp_path / "ts"
    store = ts_create(path, "float8_e8m0fnu", 4, 2, "0x7f")
    assert scalar_bits(store.fill_value, "float8_e8m0fnu") == 0x7f
    assert metadata(path)["fill_value"] == 1.8446744073709552e+19              # should be 1.0
    arr = zarr.open_array(str(path), mode="r")
    assert scalar_bits(arr.fill_value, "float8_e8m0fnu") == 0xbf
    assert float(arr.fill_value) == 2.0 ** 64
