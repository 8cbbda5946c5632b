"""zdt's codec pipeline against zarr's own: the same stored bytes, the same values for every kind
of selection, the same errors; fused chains, missing and edge chunks, shards, compressors;
selection through zarr's config; threads; pickling."""

from __future__ import annotations

import pickle
import re
import threading

import ml_dtypes
import numpy as np
import pytest
import zarr
from zarr.storage import MemoryStore

import zdt
from zdt import pipeline as zp

ZARR = "zarr.core.codec_pipeline.BatchedCodecPipeline"

NAN_MAP = {"encode": [["NaN", 0]], "decode": [[0, "NaN"]]}
# name: (array dtype, array -> array codecs, compressor, fill value, NaN in the data)
CHAINS = {
    "scale_offset+cast_value uint8": ("float64", [
        {"name": "scale_offset", "configuration": {"offset": -10, "scale": 0.1}},
        {"name": "cast_value", "configuration": {"data_type": "uint8", "out_of_range": "clamp",
                                                 "scalar_map": NAN_MAP}}], None, 0.0, True),
    "cast_value int16 wrap": ("float32", [
        {"name": "cast_value", "configuration": {"data_type": "int16", "rounding": "towards-zero",
                                                 "out_of_range": "wrap"}}], None, 2.0, False),
    "scale_offset int32": ("int32", [{"name": "scale_offset", "configuration": {"offset": 5, "scale": 3}}],
                           None, 5, False),
    "cast_value bfloat16 + zstd": ("float32", [
        {"name": "cast_value", "configuration": {"data_type": "bfloat16"}}], "zstd", -0.5, True),
    "cast_value float8_e4m3fn clamp": ("float64", [
        {"name": "cast_value", "configuration": {"data_type": "float8_e4m3fn", "out_of_range": "clamp"}}],
        None, 1.5, True),
    "no array->array codec, zstd": ("float64", [], "zstd", -0.5, True),
}


def data_for(dtype: str, shape: tuple[int, ...], nan: bool) -> np.ndarray:
    rng = np.random.default_rng(3)
    if dtype.startswith("int"):
        return rng.integers(-1000, 1000, shape).astype(dtype) * 3 + 5
    x = rng.uniform(-20, 40, shape).astype(dtype)
    if nan:
        x.flat[::17] = np.nan
    return x


def create(store, name, dtype, filters, compressor, shape, chunks, shards=None, fill=0.0):
    return zarr.create_array(store=store, name=name, shape=shape, chunks=chunks, shards=shards,
                             dtype=dtype, fill_value=fill, filters=filters,
                             compressors=[{"name": compressor, "configuration": {"level": 1}}] if compressor else None)


def write_pattern(a, data):
    """Whole chunks, partial chunks, a scalar, an edge, and chunks never written."""
    n0 = data.shape[0]
    a[: n0 // 2] = data[: n0 // 2]
    a[n0 // 2 + 1: n0 - 3, 2:7] = data[n0 // 2 + 1: n0 - 3, 2:7]
    a[n0 - 1, :] = data[n0 - 1, :]
    a[1, 3] = data[1, 3]


SELECTIONS = [
    ("basic", (slice(None), slice(None))),
    ("partial", (slice(3, 17), slice(5, 11))),
    ("int", (5, slice(2, 12))),
    ("strided", (slice(None, None, 3), 4)),
    ("oindex drop_axes", ("o", ([1, 11, 2, 24], 3))),
    ("oindex", ("o", ([0, 5, 22], [1, 10]))),
    ("vindex", ("v", ([1, 11, 24], [2, 3, 11]))),
    ("edge", (slice(18, 25), slice(0, 12))),
]


def select(a, sel):
    if sel[0] == "o":
        return a.oindex[sel[1]]
    if sel[0] == "v":
        return a.vindex[sel[1]]
    return a[sel]


@pytest.mark.parametrize("shards", [None, (10, 8)], ids=["chunks", "shards"])
@pytest.mark.parametrize("chain", sorted(CHAINS))
def test_same_bytes_and_values_as_zarrs_pipeline(chain, shards):
    dtype, filters, compressor, fill, nan = CHAINS[chain]
    shape, chunks = (25, 12), (5, 4)
    data = data_for(dtype, shape, nan)
    stores = {}
    for path in (ZARR, zp.PATH):
        store = MemoryStore()
        with zarr.config.set({"codec_pipeline.path": path}):
            a = create(store, "a", dtype, filters, compressor, shape, chunks, shards, fill)
            write_pattern(a, data)
        stores[path] = store
    ours, theirs = stores[zp.PATH]._store_dict, stores[ZARR]._store_dict
    assert sorted(ours) == sorted(theirs)
    for key in theirs:
        assert ours[key].to_bytes() == theirs[key].to_bytes(), key
    for name, sel in SELECTIONS:
        with zarr.config.set({"codec_pipeline.path": ZARR}):
            expected = select(zarr.open_array(stores[ZARR], path="a", mode="r"), sel)
        with zarr.config.set({"codec_pipeline.path": zp.PATH}):
            a = zarr.open_array(stores[ZARR], path="a", mode="r")
            assert isinstance(a._async_array.codec_pipeline, zp.ZdtCodecPipeline)
            got = select(a, sel)
        assert got.dtype == expected.dtype and got.shape == expected.shape, name
        assert np.array_equal(got.view(np.uint8) if got.dtype.kind == "V" else got,
                              expected.view(np.uint8) if expected.dtype.kind == "V" else expected,
                              equal_nan=got.dtype.kind == "f"), name


def _store_contents(store) -> dict:
    from zarr.core.buffer import default_buffer_prototype
    from zarr.core.sync import sync

    async def read_all() -> dict:
        keys = [k async for k in store.list()]
        return {k: (await store.get(k, default_buffer_prototype())).to_bytes() for k in keys}

    return sync(read_all())


@pytest.mark.parametrize("kind", ["memory", "directory", "zip"])
def test_every_kind_of_store_same_bytes_and_values(kind, tmp_path, monkeypatch):
    """Stores with zarr's synchronous surface (zarr >= 3.4: memory, directory) are read and
    written from the pool's threads; others (zip, and every store on zarr 3.1) through zarr's
    event loop. Either way: zarr's bytes, zarr's values, fill-value chunks deleted."""
    from zarr.storage import LocalStore, StorePath, ZipStore

    used = []
    for name in ("get", "put"):
        orig = getattr(zp._SyncStoreIo, name)
        monkeypatch.setattr(zp._SyncStoreIo, name,
                            staticmethod(lambda *a, _o=orig, _n=name: (used.append(_n), _o(*a))[1]))
    dtype, filters, compressor, fill, nan = CHAINS["scale_offset+cast_value uint8"]
    shape, chunks = (25, 12), (5, 4)
    data = data_for(dtype, shape, nan)
    data[5:10, :8] = fill                   # whole chunks of the fill value: not stored
    contents = {}
    for path in (ZARR, zp.PATH):
        where = tmp_path / path.rsplit(".", 1)[-1]
        store = {"memory": MemoryStore, "directory": lambda: LocalStore(where),
                 "zip": lambda: ZipStore(f"{where}.zip", mode="w")}[kind]()
        with zarr.config.set({"codec_pipeline.path": path}):
            a = create(store, "a", dtype, filters, compressor, shape, chunks, None, fill)
            if kind == "zip":
                a[:] = data                 # a zip entry is written once
            else:
                write_pattern(a, data)
                a[5:10, :8] = fill          # chunks that held data, now all fill: deleted
            contents[path] = _store_contents(store)
            if path == zp.PATH:
                for name, sel in SELECTIONS:
                    got = select(a, sel)
                    with zarr.config.set({"codec_pipeline.path": ZARR}):
                        expected = select(zarr.open_array(store, path="a", mode="r" if kind != "zip" else "a"), sel)
                    assert np.array_equal(got, expected, equal_nan=True), name
        if kind == "zip":
            store.close()
    assert contents[zp.PATH] == contents[ZARR]
    assert not any(k.startswith("a/c/1/0") for k in contents[ZARR])
    sync_surface = kind != "zip" and hasattr(StorePath, "set_sync")
    assert bool(used) == sync_surface
    if sync_surface:
        assert set(used) == {"get", "put"}


@pytest.mark.parametrize("serializer", ["zarr vlen-utf8", "zdt vlen-utf8", "zdt.vlen_arrow"])
def test_string_arrays_same_bytes_and_values_as_zarrs_pipeline(serializer):
    shape, chunks = (25, 12), (5, 4)
    rng = np.random.default_rng(4)
    words = np.array(["", "a", "é", "日本語", "x" * 40, "🙂 y"], dtype=object)
    data = words[rng.integers(0, len(words), shape)].astype(np.dtypes.StringDType())
    codec = {"zdt.vlen_arrow": zdt.VLenArrowCodec()}.get(serializer, "auto")
    stores = {}
    for path in (ZARR, zp.PATH):
        store = MemoryStore()
        with zarr.config.set({"codec_pipeline.path": path}), zdt.use_string_codecs(serializer != "zarr vlen-utf8"):
            a = zarr.create_array(store=store, name="a", shape=shape, chunks=chunks, dtype=str,
                                  serializer=codec, compressors=None)
            write_pattern(a, data)
        stores[path] = store
    ours, theirs = stores[zp.PATH]._store_dict, stores[ZARR]._store_dict
    assert sorted(ours) == sorted(theirs)
    assert all(ours[k].to_bytes() == theirs[k].to_bytes() for k in theirs)
    for name, sel in SELECTIONS:
        with zarr.config.set({"codec_pipeline.path": ZARR}):
            expected = select(zarr.open_array(stores[ZARR], path="a", mode="r"), sel)
        with zarr.config.set({"codec_pipeline.path": zp.PATH}):
            got = select(zarr.open_array(stores[ZARR], path="a", mode="r"), sel)
        assert got.dtype == expected.dtype and got.tolist() == expected.tolist(), name


def test_the_chain_is_fused_and_runs_on_the_pool(monkeypatch):
    from zdt import kernels

    calls, threads = [], set()
    run_steps = kernels.run_steps

    def spy(steps, src, dst):
        name = threading.current_thread().name
        if name.startswith("zdt"):          # the pipeline's pool (not fill-value checks)
            calls.append(len(steps))
            threads.add(name)
        return run_steps(steps, src, dst)

    monkeypatch.setattr(kernels, "run_steps", spy)
    dtype, filters = CHAINS["scale_offset+cast_value uint8"][:2]
    with zdt.use_pipeline():
        a = create(MemoryStore(), "a", dtype, filters, None, (40,), (10,))
        a[:] = np.arange(40.0) * 10          # values the 0.1 scale keeps
        assert a[:].tolist() == (np.arange(40.0) * 10).tolist()
    # 4 chunks written, 4 read, each one pass of both steps (the one-step calls are the fill
    # value going through scale_offset when a thread compiles the chunk's stages)
    assert [n for n in calls if n != 1] == [2] * 8
    assert threads


def test_errors_are_the_codecs_own():
    dtype, filters = "float64", [{"name": "cast_value", "configuration": {"data_type": "uint8"}}]
    data = np.arange(20.0)
    data[13] = 300.0
    messages = []
    for path in (ZARR, zp.PATH):
        with zarr.config.set({"codec_pipeline.path": path}):
            a = create(MemoryStore(), "a", dtype, filters, None, (20,), (5,))
            with pytest.raises(zdt.CastError) as info:
                a[:] = data
            messages.append(str(info.value))
    assert messages[0] == messages[1]
    assert "chunk element (3,) = 300.0 (float64) as uint8" in messages[1]


def test_a_fused_error_names_the_failing_codec_and_its_value_at_that_stage():
    """The second codec of a fused chain fails: the error is that codec's own, with the
    element's index in the chunk and the value scale_offset handed it (not the array's), as
    zarr's pipeline raises it codec by codec."""
    filters = [{"name": "scale_offset", "configuration": {"offset": 100, "scale": 2}},
               {"name": "cast_value", "configuration": {"data_type": "uint8"}}]
    data = np.arange(100.0, 140.0)
    data[27] = 300.0                            # (300 - 100) * 2 = 400 does not fit uint8
    messages = []
    for path in (ZARR, zp.PATH):
        with zarr.config.set({"codec_pipeline.path": path}):
            a = create(MemoryStore(), "a", "float64", filters, None, (40,), (10,), fill=100.0)
            with pytest.raises(zdt.CastError) as info:
                a[:] = data
            messages.append(str(info.value))
            assert info.value.index == (7,) and float(info.value.value) == 400.0
    assert messages[0] == messages[1]
    assert "cannot encode chunk element (7,) = 400.0 (float64) as uint8" in messages[1]


def test_a_read_of_part_of_a_chunk_names_the_element_by_its_index_in_the_chunk():
    """A selection decodes only its elements; a failing one is named by its place in the chunk
    (here (2, 3) of a 4 x 5 chunk, reached through a strided selection)."""
    store = MemoryStore()
    filters = [{"name": "cast_value", "configuration": {"data_type": "int32"}}]
    a = create(store, "a", "int16", filters, None, (4, 5), (4, 5), fill=0)
    a[:] = np.arange(20, dtype=np.int16).reshape(4, 5)
    raw = create(store, "raw", "int32", [], None, (4, 5), (4, 5), fill=0)
    bad = np.arange(20, dtype=np.int32).reshape(4, 5)
    bad[2, 3] = 70000
    raw[:] = bad
    store._store_dict["a/c/0/0"] = store._store_dict["raw/c/0/0"]
    with zdt.use_pipeline():                    # zdt decodes only what is selected
        assert zarr.open_array(store, path="a")[0:2, :].tolist() == bad[0:2, :].tolist()
    messages = []
    for path in (ZARR, zp.PATH):
        with zarr.config.set({"codec_pipeline.path": path}):
            b = zarr.open_array(store, path="a")
            with pytest.raises(zdt.CastError) as info:
                b[1:4:1, 1::2]
            messages.append(str(info.value))
            assert info.value.index == (2, 3)
    assert messages[0] == messages[1]


@pytest.mark.filterwarnings("ignore:The data type .* does not have a Zarr V3 specification")
@pytest.mark.parametrize("shape,index", [((6,), (3,)), ((), ())])
def test_one_element_of_a_structured_array(shape, index):
    """Reading or writing one element of a structured (record) array: NumPy hands back an
    np.void there, not a view."""
    dtype = [("foo", "S3"), ("bar", "i4"), ("baz", "f8")]
    values = np.array([(b"aaa", 1, 1.5), (b"bbb", 2, 2.5), (b"ccc", 3, 3.5), (b"ddd", 4, 4.5),
                       (b"eee", 5, 5.5), (b"fff", 6, 6.5)], dtype=dtype)
    value = values if shape else values[0]
    results = []
    for path in (ZARR, zp.PATH):
        with zarr.config.set({"codec_pipeline.path": path}):
            a = zarr.create_array(store=MemoryStore(), shape=shape, chunks=shape or (), dtype=dtype,
                                  fill_value=None, compressors=None)
            a[...] = value
            got = a[index]
            a[index] = (b"zzz", 9, 9.5)
            results.append((got.tolist(), a[...].tolist()))
    assert results[0] == results[1]
    assert results[1][0] == ((b"ddd", 4, 4.5) if shape else (b"aaa", 1, 1.5))


def test_decode_errors_are_the_codecs_own():
    # stored int32 values that do not fit the int16 array: decoding fails
    store = MemoryStore()
    filters = [{"name": "cast_value", "configuration": {"data_type": "int32"}}]
    a = create(store, "a", "int16", filters, None, (8,), (4,), fill=0)
    a[:] = np.arange(8, dtype=np.int16)
    b = create(store, "raw", "int32", [], None, (8,), (4,), fill=0)
    b[:] = np.array([1, 2, 3, 4, 5, 70000, 7, 8], dtype=np.int32)
    store._store_dict["a/c/1"] = store._store_dict["raw/c/1"]
    messages = []
    for path in (ZARR, zp.PATH):
        with zarr.config.set({"codec_pipeline.path": path}):
            with pytest.raises(zdt.CastError) as info:
                zarr.open_array(store, path="a")[:]
            messages.append(str(info.value))
    assert messages[0] == messages[1] and "decode chunk element (1,) = 70000 (int32) as int16" in messages[0]


@pytest.mark.parametrize("fill", [0.0, None])
def test_format_2_arrays_give_the_same_bytes(fill):
    """zarr format 2: numcodecs filters and compressor inside one V2Codec (run by zdt where that
    codec has synchronous methods, by zarr's pipeline otherwise); a null fill value compares
    chunks with the type's default."""
    stores = {}
    for path in (ZARR, zp.PATH):
        store = MemoryStore()
        with zarr.config.set({"codec_pipeline.path": path}):
            a = zarr.create_array(store=store, shape=(10, 6), chunks=(4, 4), dtype="float64",
                                  zarr_format=2, fill_value=fill, order="F",
                                  filters=[zdt.CastValue(dtype="<f8", data_type="float32")])
            a[:7] = np.arange(42.0).reshape(7, 6)
            a[8, 1] = 0.0
            stores[path] = store
    ours, theirs = stores[zp.PATH]._store_dict, stores[ZARR]._store_dict
    assert sorted(ours) == sorted(theirs)
    assert all(ours[k].to_bytes() == theirs[k].to_bytes() for k in theirs)
    with zdt.use_pipeline():
        got = zarr.open_array(stores[ZARR], mode="r")[:]
    with zarr.config.set({"codec_pipeline.path": ZARR}):
        expected = zarr.open_array(stores[ZARR], mode="r")[:]
    assert np.array_equal(got, expected, equal_nan=True)


def test_selection_through_zarrs_config():
    from importlib.metadata import entry_points

    assert ("zdt", "zdt.pipeline:ZdtCodecPipeline") in {
        (e.name, e.value) for e in entry_points(group="zarr.codec_pipeline")}
    before = zarr.config.get("codec_pipeline.path")
    with zdt.use_pipeline():
        assert zarr.config.get("codec_pipeline.path") == zp.PATH
    assert zarr.config.get("codec_pipeline.path") == before


def test_thread_count_follows_zarrs_config():
    with zarr.config.set({"threading.max_workers": 3}):
        assert zp.workers() == 3
        assert zp._executor()._max_workers == 3


def test_arrays_with_the_pipeline_pickle():
    dtype, filters = CHAINS["scale_offset+cast_value uint8"][:2]
    with zdt.use_pipeline():
        a = create(MemoryStore(), "a", dtype, filters, None, (12,), (4,))
        a[:] = np.arange(12.0)
        a[:4]           # fills the stage cache
        b = pickle.loads(pickle.dumps(a))
        assert b[:].tolist() == a[:].tolist()


def test_low_precision_through_packbits():
    with zdt.use_pipeline():
        a = zarr.create_array(store=MemoryStore(), shape=(10,), chunks=(4,), dtype="float32",
                              fill_value=0.0, compressors=None, serializer=zdt.PackBitsCodec(),
                              filters=[{"name": "cast_value", "configuration": {"data_type": "int4",
                                                                                "out_of_range": "clamp"}}])
        a[:] = np.arange(10.0) - 4
        assert a[:].tolist() == [-4, -3, -2, -1, 0, 1, 2, 3, 4, 5]
        b = zarr.create_array(store=MemoryStore(), shape=(6,), chunks=(3,), dtype="int4",
                              fill_value=0, compressors=None)
        b[:] = np.array([-8, -1, 0, 1, 7, 3], dtype=ml_dtypes.int4)
        assert b[:].astype(np.int8).tolist() == [-8, -1, 0, 1, 7, 3]


def test_arrays_of_zarrs_unstable_data_types_do_not_warn_under_zdts_pipeline():
    """zarr warns when one of its data types without a v3 spec is asked for its v3 name; zdt's
    pipeline must not ask (zarr's own test_v2 found it, run with zdt's pipeline)."""
    with zdt.use_pipeline():        # (pytest turns warnings into errors)
        a = zarr.create_array(store=MemoryStore(), shape=(3,), dtype="V7", zarr_format=2,
                              fill_value=None, compressors=None)
        a[:] = np.array([b"abcdefg", b"1234567", b"xyzxyzx"], dtype="V7")
        assert a[:].tolist() == [b"abcdefg", b"1234567", b"xyzxyzx"]


@pytest.mark.parametrize("endian", ["little", "big"])
@pytest.mark.parametrize("stored", ["uint8", "int16", "float32", "float64", "bfloat16", "int4"])
def test_the_bytes_codecs_byte_orders_give_zarrs_bytes_and_values(stored, endian):
    """Either byte order of zarr's `bytes` codec, one- and multi-byte types, a type of
    zarr-extensions and a sub-byte one, whole and partial chunks: the stored bytes and the
    values read are zarr's."""
    data = data_for("float64", (9, 7), True)
    filters = [{"name": "cast_value", "configuration": {
        "data_type": stored, "out_of_range": "clamp", "scalar_map": {"encode": [["NaN", 0]]}}}]
    stores, values = {}, {}
    for path in (ZARR, zp.PATH):
        store = MemoryStore()
        with zarr.config.set({"codec_pipeline.path": path}):
            a = zarr.create_array(store=store, name="a", shape=data.shape, chunks=(4, 3),
                                  dtype="float64", fill_value=1.0, filters=filters, compressors=None,
                                  serializer={"name": "bytes", "configuration": {"endian": endian}})
            write_pattern(a, data)
            a[2:7, 1] = data[2:7, 1]                     # partial chunks: old bytes decoded
            values[path] = a[:]
        stores[path] = store._store_dict
    assert sorted(stores[zp.PATH]) == sorted(stores[ZARR])
    for key, buf in stores[ZARR].items():
        assert stores[zp.PATH][key].to_bytes() == buf.to_bytes(), key
    assert np.array_equal(values[zp.PATH], values[ZARR], equal_nan=True)


@pytest.mark.parametrize("length", [0, 13, 19, 40])
def test_a_chunk_of_the_wrong_length_is_refused_naming_it(length):
    """Stored bytes that cannot be the chunk (truncated, too long): reading it, and writing part
    of it (which decodes it first), raise an error that names the chunk and both lengths."""
    store = MemoryStore()
    filters = [{"name": "cast_value", "configuration": {"data_type": "int16"}}]
    a = create(store, "a", "float32", filters, None, (20,), (10,), fill=0.0)
    a[:] = np.arange(20.0)
    store._store_dict["a/c/1"] = store._store_dict["a/c/1"].__class__.from_bytes(bytes(range(length)))
    with zarr.config.set({"codec_pipeline.path": ZARR}), pytest.raises(ValueError):
        zarr.open_array(store, path="a")[:]                 # zarr refuses it too, in its words
    with zdt.use_pipeline():
        b = zarr.open_array(store, path="a")
        assert b[:10].tolist() == list(range(10))              # the other chunk still reads
        message = f"'a/c/1' holds {length} bytes, not the 20 of a chunk of shape (10,) and type int16"
        with pytest.raises(ValueError, match=re.escape(message)):
            b[:]
        with pytest.raises(ValueError, match=re.escape(message)):
            b[12] = 5.0
    assert len(store._store_dict["a/c/1"]) == length            # nothing was written over it
