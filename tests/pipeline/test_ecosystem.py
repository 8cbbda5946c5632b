"""zdt where users meet it: xarray datasets, dask on worker processes, the zarrs-python codec
pipeline, and zarr format 2 arrays read by a process that imported only zarr. Each package is
the real one (the `test` extra installs them); a test is skipped only where one cannot install.

Expected values are computed independently of zdt: the scale_offset + cast_value chain below
stores round((t - 19) * 10) (nearest-even, numpy's rint) and reads back stored / 10 + 19."""

from __future__ import annotations

import json
import subprocess
import sys
import warnings
from pathlib import Path

import numcodecs
import numpy as np
import pytest
import zarr

import zdt
from zdt import CastValueCodec, ScaleOffsetCodec, VLenArrowCodec
from zdt.pipeline import PATH as ZDT_PIPELINE

SDT = np.dtypes.StringDType()
NAN_MAP = {"encode": [["NaN", 0]], "decode": [[0, "NaN"]]}
BATCHED = "zarr.core.codec_pipeline.BatchedCodecPipeline"


def chain() -> list:
    return [ScaleOffsetCodec(offset=19, scale=10), CastValueCodec(data_type="uint8", scalar_map=NAN_MAP)]


def temperatures(shape: tuple[int, ...], seed: int = 0) -> np.ndarray:
    t = np.round(np.random.default_rng(seed).uniform(20, 35, shape), 1)
    t.flat[::17] = np.nan
    return t


def expected(t: np.ndarray) -> np.ndarray:
    return np.rint((t - 19) * 10) / 10 + 19


def stored_files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


# --- xarray ------------------------------------------------------------------------------------------

def dataset():
    xr = pytest.importorskip("xarray")
    t = temperatures((20, 30))
    t[10:15] = np.nan                      # one whole chunk of fill values: never stored
    names = np.array(["a", "bé", "", "日本", "🙂 x"] * 4, dtype=SDT)
    return xr.Dataset({"t": (("x", "y"), t), "name": (("x",), names)},
                      coords={"x": np.arange(20, dtype="int32")})


@pytest.mark.parametrize("pipeline", [BATCHED, ZDT_PIPELINE])
def test_xarray_dataset_round_trips_with_zdt_codecs_and_string_codecs(tmp_path, pipeline):
    xr = pytest.importorskip("xarray")
    ds = dataset()
    encoding = {"t": {"filters": chain(), "compressors": None, "chunks": (5, 30)},
                "name": {"chunks": (8,)}}
    with zarr.config.set({"codec_pipeline.path": pipeline}), zdt.use_string_codecs():
        ds.to_zarr(tmp_path / "ds.zarr", mode="w", encoding=encoding, zarr_format=3, consolidated=False)
        back = xr.open_zarr(tmp_path / "ds.zarr", consolidated=False).load()
    meta = json.loads((tmp_path / "ds.zarr" / "t" / "zarr.json").read_text())
    assert [c["name"] for c in meta["codecs"]] == ["scale_offset", "cast_value", "bytes"]
    assert meta["fill_value"] == "NaN"
    np.testing.assert_array_equal(back.t.values, expected(ds.t.values))
    assert np.isnan(back.t.values[10:15]).all()
    assert not (tmp_path / "ds.zarr" / "t" / "c" / "2" / "0").exists()     # the all-NaN chunk
    assert back.name.dtype == SDT and back.name.values.tolist() == ds.name.values.tolist()
    # the string chunks are the standard vlen-utf8 layout (numcodecs reads them)
    first = (tmp_path / "ds.zarr" / "name" / "c" / "0").read_bytes()
    smeta = json.loads((tmp_path / "ds.zarr" / "name" / "zarr.json").read_text())
    if any(c["name"] == "zstd" for c in smeta["codecs"]):
        first = numcodecs.Zstd().decode(first)
    assert numcodecs.VLenUTF8().decode(first).tolist() == ds.name.values[:8].tolist()


def test_xarray_writes_the_same_bytes_through_either_pipeline(tmp_path):
    pytest.importorskip("xarray")
    ds = dataset()
    for pipeline, name in ((BATCHED, "a.zarr"), (ZDT_PIPELINE, "b.zarr")):
        encoding = {"t": {"filters": chain(), "compressors": None, "chunks": (5, 30)},
                    "name": {"serializer": VLenArrowCodec(), "compressors": None}}
        with zarr.config.set({"codec_pipeline.path": pipeline}):
            ds.to_zarr(tmp_path / name, mode="w", encoding=encoding, zarr_format=3, consolidated=False)
    a, b = stored_files(tmp_path / "a.zarr"), stored_files(tmp_path / "b.zarr")
    assert a.keys() == b.keys() and a == b


def test_xarray_arrow_string_layout_round_trips(tmp_path):
    xr = pytest.importorskip("xarray")
    ds = dataset()[["name"]]
    with zdt.use_pipeline():
        ds.to_zarr(tmp_path / "s.zarr", mode="w", zarr_format=3, consolidated=False,
                   encoding={"name": {"serializer": VLenArrowCodec(offsets="int64"), "chunks": (6,)}})
        back = xr.open_zarr(tmp_path / "s.zarr", consolidated=False).load()
    assert back.name.dtype == SDT and back.name.values.tolist() == ds.name.values.tolist()


# --- dask on worker processes ----------------------------------------------------------------------

@pytest.fixture(scope="module")
def client():
    distributed = pytest.importorskip("distributed")
    import cloudpickle

    # Worker processes cannot import this test module (pytest imports it as `tests.…` with
    # --import-mode=importlib, and no checkout is on a worker's sys.path): ship its functions
    # by value, as a user's notebook functions are shipped.
    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    # (distributed still sends a module-level function by name; the functions run in workers
    # are defined inside the tests, which always travel by value)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                           dashboard_address=None)
    with cluster, distributed.Client(cluster) as c:
        yield c


def test_dask_writes_and_reads_through_worker_processes(tmp_path, client):
    da = pytest.importorskip("dask.array")
    t = temperatures((400, 300), seed=3)
    x = da.from_array(t, chunks=(100, 150))
    with zdt.use_pipeline():
        z = zarr.create_array(tmp_path / "d.zarr", shape=t.shape, chunks=(100, 150), dtype="float64",
                              fill_value=np.nan, filters=chain(), compressors=None)
    da.store(x, z, lock=False)                                   # the array is pickled to workers

    def seen_in_worker(a):
        return type(a._async_array.codec_pipeline).__name__, type(a.metadata.codecs[1]).__module__

    def worker_view(path: str) -> tuple:
        """In a worker process: open the array by path with zdt's pipeline selected by name."""
        import zarr

        with zarr.config.set({"codec_pipeline.path": "zdt.pipeline.ZdtCodecPipeline"}):
            a = zarr.open_array(path)
            return (type(a._async_array.codec_pipeline).__name__,
                    [type(c).__module__ for c in a.metadata.codecs], a[0:2, 0:3].tolist())

    assert client.submit(seen_in_worker, z).result(timeout=120) == ("ZdtCodecPipeline", "zdt.codecs.zarr.cast_value")
    np.testing.assert_array_equal(da.from_zarr(z).compute(), expected(t))
    pipe, modules, corner = client.submit(worker_view, str(tmp_path / "d.zarr")).result(timeout=120)
    assert pipe == "ZdtCodecPipeline"
    assert modules[:2] == ["zdt.codecs.zarr.scale_offset", "zdt.codecs.zarr.cast_value"]
    np.testing.assert_array_equal(np.array(corner), expected(t[0:2, 0:3]))


def test_dask_string_array_written_by_workers(tmp_path, client):
    da = pytest.importorskip("dask.array")
    items = np.array([f"s{i}-" + "é" * (i % 7) for i in range(1000)], dtype=SDT)
    with zdt.use_pipeline():
        z = zarr.create_array(tmp_path / "s.zarr", shape=items.shape, chunks=(64,), dtype=str,
                              serializer=VLenArrowCodec(), compressors=None)
    da.store(da.from_array(items, chunks=128), z, lock=False)
    assert zarr.open_array(tmp_path / "s.zarr")[:].tolist() == items.tolist()


# --- zarrs-python -------------------------------------------------------------------------------------

ZARRS = "zarrs.ZarrsCodecPipeline"


def test_zarrs_pipeline_hands_zdt_codecs_to_zarr_and_stores_the_same_bytes(tmp_path):
    pytest.importorskip("zarrs")
    t = temperatures((60, 50), seed=5)
    for pipeline, name in ((ZARRS, "a.zarr"), (ZDT_PIPELINE, "b.zarr")):
        with zarr.config.set({"codec_pipeline.path": pipeline}), warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            a = zarr.create_array(tmp_path / name, shape=t.shape, chunks=(20, 25), dtype="float64",
                                  fill_value=np.nan, filters=chain(),
                                  compressors=[{"name": "zstd", "configuration": {"level": 1}}])
            a[:] = t
            np.testing.assert_array_equal(a[:], expected(t))
        if pipeline == ZARRS:
            # zarrs has no scale_offset: it says so and runs zarr's pipeline, with zdt's codecs
            assert any("unsupported by ZarrsCodecPipeline" in str(x.message) for x in w)
    assert stored_files(tmp_path / "a.zarr") == stored_files(tmp_path / "b.zarr")


LOW = ["int2", "uint2", "int4", "uint4", "float4_e2m1fn", "float6_e2m3fn", "float6_e3m2fn",
       "float8_e4m3fn", "float8_e5m2", "bfloat16"]


def low_values(name: str, n: int) -> np.ndarray:
    ml_dtypes = pytest.importorskip("ml_dtypes")
    dt = np.dtype(getattr(ml_dtypes, name))
    rng = np.random.default_rng(7)
    if name == "bfloat16":
        return rng.standard_normal(n).astype(np.float32).astype(dt)
    bits = {"int2": 2, "uint2": 2, "int4": 4, "uint4": 4, "float4_e2m1fn": 4,
            "float6_e2m3fn": 6, "float6_e3m2fn": 6}.get(name, 8)
    raw = rng.integers(0, 1 << bits, n).astype(np.uint8)
    if name.startswith("int"):
        raw = ((raw.astype(np.int8) << (8 - bits)) >> (8 - bits)).view(np.uint8)   # ml_dtypes' form
    values = raw.view(dt)
    if name.startswith("float"):
        values = values[~np.isnan(values.astype(np.float32))]     # NaN bits: not comparable
    return values


@pytest.mark.parametrize(("name", "serializer"),
                         [(n, "bytes") for n in LOW] + [(n, "packbits") for n in LOW if n != "bfloat16"])
def test_zarrs_itself_reads_and_writes_low_precision_types_as_zdt_does(name, serializer):
    pytest.importorskip("zarrs")
    values = low_values(name, 41)
    config = {"endian": "little"} if name == "bfloat16" else {}
    stores = {}
    for pipeline in (ZARRS, ZDT_PIPELINE):
        # strict: zarrs must do it itself, not hand it to zarr's pipeline
        with zarr.config.set({"codec_pipeline.path": pipeline, "codec_pipeline.strict": True}):
            a = zarr.create_array({}, shape=values.shape, chunks=(16,), dtype=name, fill_value=0,
                                  serializer={"name": serializer, "configuration": config}, compressors=None)
            a[:] = values
            assert a[:].view(np.uint8).tolist() == values.view(np.uint8).tolist()
            stores[pipeline] = a.store
    data = [{k: v.to_bytes() for k, v in s._store_dict.items() if k.startswith("c/")} for s in stores.values()]
    assert data[0] == data[1]
    # and each reads what the other wrote
    for writer, reader in ((ZARRS, ZDT_PIPELINE), (ZDT_PIPELINE, ZARRS)):
        with zarr.config.set({"codec_pipeline.path": reader, "codec_pipeline.strict": True}):
            got = zarr.open_array(stores[writer])[:]
        assert got.view(np.uint8).tolist() == values.view(np.uint8).tolist()


def test_zarrs_reads_strings_zdt_wrote_and_the_reverse(tmp_path):
    pytest.importorskip("zarrs")
    items = np.array(["", "a", "é日本", "x" * 100] * 10, dtype=SDT)
    with zdt.use_string_codecs():
        for writer, reader, name in ((ZARRS, ZDT_PIPELINE, "a"), (ZDT_PIPELINE, ZARRS, "b")):
            with zarr.config.set({"codec_pipeline.path": writer}):
                a = zarr.create_array(tmp_path / name, shape=items.shape, chunks=(16,), dtype=str)
                a[:] = items
            with zarr.config.set({"codec_pipeline.path": reader}):
                assert zarr.open_array(tmp_path / name)[:].tolist() == items.tolist()
    assert stored_files(tmp_path / "a") == stored_files(tmp_path / "b")


# --- zarr format 2, a reader that imports only zarr -------------------------------------------------

def test_format_2_array_with_zdt_filters_read_by_a_process_importing_only_zarr(tmp_path):
    t = temperatures((7, 9), seed=9)
    a = zarr.create_array(tmp_path / "v2.zarr", shape=t.shape, chunks=(4, 4), dtype="float64",
                          fill_value=np.nan, zarr_format=2, compressors=None,
                          filters=[zdt.ScaleOffset(offset=19, scale=10, dtype="float64"),
                                   zdt.CastValue(data_type="uint8", dtype="float64", scalar_map=NAN_MAP)])
    a[:] = t
    filters = json.loads((tmp_path / "v2.zarr" / ".zarray").read_text())["filters"]
    assert [f["id"] for f in filters] == ["scale_offset", "cast_value"]
    script = ("import json, sys, zarr\n"
              "a = zarr.open_array(sys.argv[1])\n"
              "print(json.dumps([a[:].tolist(), sorted(m for m in sys.modules if m.startswith('zdt.codecs.numcodecs'))]))\n")
    out = subprocess.run([sys.executable, "-c", script, str(tmp_path / "v2.zarr")],
                         capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert out.returncode == 0, out.stderr
    values, modules = json.loads(out.stdout.replace("NaN", "null"))
    got = np.array([[np.nan if v is None else v for v in row] for row in values])
    np.testing.assert_array_equal(got, expected(t))
    assert "zdt.codecs.numcodecs.cast_value" in modules          # found through its entry point
