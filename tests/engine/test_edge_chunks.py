"""Edge chunks as zdt writes them: each stored whole, the part past the array's edge padded
with what codes cheapest (the fewer bytes of runs, each element the real one before it in the
chunk's order, and the fill value; under zdt.predict the fill value, which it masks), which no
reader looks at. On a real field
(iris-sample-data's A1B air temperature) cut to 1 to 4 dimensions, zarr formats 2 and 3,
sharded or not: every value reads back within its bound (lossless chains: bit for bit) with
plain zarr-python, and with zarr-python, zarrs and TensorStore in an environment without zdt
(``ZDT_READER_VENVS=newest=PYTHON``, as test_readers_without_zdt); inner chunks wholly past
the edge stay absent from their shard; edge chunks take fewer bytes than zarr's own fill
padding gives the same chain; and what suggest measures is what convert writes.
"""

from __future__ import annotations

from collections.abc import Mapping

import json
import os
import subprocess
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
import zarr

import zdt
from exact import exact_error

iris_sample_data = pytest.importorskip("iris_sample_data")
netCDF4 = pytest.importorskip("netCDF4")
FIELD = Path(iris_sample_data.__file__).parent / "sample_data" / "A1B_north_america.nc"
CHILD = Path(__file__).parents[1] / "readers_child.py"
VENVS = dict(item.split("=", 1) for item in os.environ.get("ZDT_READER_VENVS", "").split(",") if "=" in item)
BOUND = 0.05
ARRAY = "t"                 # the array's path in its store (a group, as xarray opens it)


def field() -> np.ndarray:
    """Air temperature, 240 months x 37 x 49 (kelvin, float32)."""
    with netCDF4.Dataset(FIELD) as nc:
        return np.ma.filled(nc["air_temperature"][...], np.nan).astype(np.float32)


# ndim -> (the data, its chunks, its shards): every extent leaves a partial edge chunk, and
# every last shard holds inner chunks wholly past the array's edge
def cut(ndim: int) -> tuple[np.ndarray, tuple, tuple]:
    x = field()
    if ndim == 1:
        return x[:, 18, 24].copy(), (50,), (100,)
    if ndim == 2:
        return x[0].copy(), (15, 20), (30, 40)
    if ndim == 3:
        return x[:100].copy(), (30, 15, 20), (60, 30, 40)
    return x[:96].reshape(8, 12, 37, 49).copy(), (3, 5, 15, 20), (6, 10, 30, 40)


LAYOUTS = [(2, False), (3, False), (3, True)]
LAYOUT_IDS = ["v2", "v3", "v3-sharded"]
# how the copy is made: a bound (for zarr-python; for every reader), zdt.predict (readers
# zdt), a lossless chain
CHAINS = {
    "bound": dict(abs_error=BOUND),
    "any": dict(abs_error=BOUND, readers="any"),
    "predict": dict(abs_error=BOUND, readers="zdt"),
    "lossless": dict(codecs=[{"name": "bytes", "configuration": {"endian": "little"}},
                             {"name": "zstd", "configuration": {"level": 3}}]),
}


def source(root: Path, ndim: int, fmt: int, sharded: bool) -> tuple[str, np.ndarray]:
    x, chunks, shards = cut(ndim)
    path = root / f"src-{ndim}-{fmt}-{sharded}.zarr"
    kw = {"shards": shards} if sharded else {}
    dims = [f"d{i}" for i in range(ndim)]
    if fmt == 3:
        kw["dimension_names"] = dims
    else:
        kw["attributes"] = {"_ARRAY_DIMENSIONS": dims}
    group = zarr.open_group(str(path), mode="w", zarr_format=fmt)
    a = group.create_array(ARRAY, shape=x.shape, chunks=chunks, dtype=x.dtype,
                           fill_value=np.nan, **kw)
    a[...] = x
    return str(path), x


def exact_within(x: np.ndarray, y: np.ndarray, bound: float | None) -> None:
    """y holds x's NaN where x has them, and every other value within `bound` (None: bit for
    bit), in exact arithmetic."""
    assert y.shape == x.shape and y.dtype == x.dtype
    nan = np.isnan(x)
    assert np.array_equal(nan, np.isnan(y))
    if bound is None:
        assert x.tobytes() == y.tobytes()
        return
    worst = exact_error(x, y, relative=False)
    assert worst <= Fraction(bound), float(worst)


def chunk_files(store: str) -> dict[str, bytes]:
    """The array's chunk (or shard) files by key."""
    root = Path(store) / ARRAY
    out = {}
    for p in root.rglob("*"):
        rel = p.relative_to(root).as_posix()
        if p.is_file() and not rel.endswith(("zarr.json", ".zarray", ".zattrs", ".zgroup")):
            out[rel] = p.read_bytes()
    return out


class Copies(Mapping):
    """Every (ndim, fmt, sharded, chain) converted, each when a test first asks for it:
    key -> (source values, copy's path). (Made on demand and kept for the session: a test
    worker makes only the copies its tests read, once.)"""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.keys_ = [(ndim, fmt, sharded, name) for ndim in (1, 2, 3, 4)
                      for fmt, sharded in LAYOUTS for name in CHAINS]
        self.made: dict = {}
        self.sources: dict = {}

    def __getitem__(self, key: tuple) -> tuple:
        if key not in self.made:
            ndim, fmt, sharded, name = key
            if key[:3] not in self.sources:
                self.sources[key[:3]] = source(self.root, ndim, fmt, sharded)
            src, x = self.sources[key[:3]]
            dst = self.root / f"{ndim}-{fmt}-{sharded}-{name}.zarr"
            zdt.convert(src, str(dst), progress=False, **CHAINS[name])
            self.made[key] = (x, str(dst))
        return self.made[key]

    def __iter__(self):
        return iter(self.keys_)

    def __len__(self) -> int:
        return len(self.keys_)


@pytest.fixture(scope="session")
def copies(tmp_path_factory):
    return Copies(tmp_path_factory.mktemp("edges"))


@pytest.mark.parametrize("ndim", [1, 2, 3, 4])
@pytest.mark.parametrize(("fmt", "sharded"), LAYOUTS, ids=LAYOUT_IDS)
@pytest.mark.parametrize("chain", list(CHAINS))
def test_every_value_reads_back_within_the_bound(copies, ndim, fmt, sharded, chain):
    x, dst = copies[(ndim, fmt, sharded, chain)]
    y = zarr.open_array(dst, path=ARRAY, mode="r")[...]
    exact_within(x, y, None if chain == "lossless" else BOUND)
    # the copy's metadata is the source's shape, not the rounded-up one it was written through
    assert zarr.open_array(dst, path=ARRAY, mode="r").shape == x.shape


def shard_index(data: bytes, inner: int) -> np.ndarray:
    """A shard's index (sharding's default: at the end, then a crc32c): (offset, nbytes) per
    inner chunk, C order."""
    raw = data[-(16 * inner + 4):-4]
    return np.frombuffer(raw, dtype="<u8").reshape(inner, 2)


@pytest.mark.parametrize("ndim", [1, 2, 3, 4])
@pytest.mark.parametrize("chain", list(CHAINS))
def test_inner_chunks_past_the_edge_stay_absent(copies, ndim, chain):
    x, dst = copies[(ndim, 3, True, chain)]
    _, chunks, shards = cut(ndim)
    per = [s // c for s, c in zip(shards, chunks)]
    files = chunk_files(dst)
    grid = [-(-n // s) for n, s in zip(x.shape, shards)]
    assert len(files) == int(np.prod(grid))
    absent = np.uint64(2**64 - 1)
    seen_outside = 0
    for shard in np.ndindex(*grid):
        index = shard_index(files["c/" + "/".join(map(str, shard))], int(np.prod(per)))
        for k, inner in enumerate(np.ndindex(*per)):
            start = [(s * p + i) * c for s, p, i, c in zip(shard, per, inner, chunks)]
            outside = any(b >= n for b, n in zip(start, x.shape))
            if outside:
                seen_outside += 1
                assert index[k, 0] == absent and index[k, 1] == absent, (shard, inner)
            else:
                assert index[k, 1] != absent, (shard, inner)
    assert seen_outside > 0


def rewritten_by_zarr(dst: str, values: np.ndarray, where: Path) -> dict[str, bytes]:
    """`values` written by zarr-python alone through an array with the copy's metadata (its
    codecs, chunks, fill value): edge chunks padded with the fill value."""
    out = where / "by-zarr.zarr"
    (out / ARRAY).mkdir(parents=True)
    for name in ("zarr.json", ".zarray", ".zattrs"):
        if (Path(dst) / ARRAY / name).exists():
            (out / ARRAY / name).write_text((Path(dst) / ARRAY / name).read_text())
    zarr.open_array(str(out / ARRAY), mode="r+")[...] = values
    return chunk_files(str(out))


@pytest.mark.parametrize(("fmt", "chain"), [(3, "bound"), (2, "bound"), (3, "any"), (3, "lossless"),
                                            (3, "predict")])
def test_edge_chunks_take_fewer_bytes_than_zarrs_own_padding(copies, fmt, chain, tmp_path):
    """The copy against the same values written by zarr-python alone with the same metadata:
    whole chunks byte for byte the same, each edge chunk at most as large and together smaller
    (zdt.predict: zarr's own padding is what it codes cheapest, so every chunk the same)."""
    x, dst = copies[(3, fmt, False, chain)]
    _, chunks, _ = cut(3)
    y = zarr.open_array(dst, path=ARRAY, mode="r")[...]
    ours, theirs = chunk_files(dst), rewritten_by_zarr(dst, y, tmp_path)
    assert ours.keys() == theirs.keys()
    sep = "/" if fmt == 3 else "."
    edge = set()
    for key in ours:
        idx = [int(i) for i in key.removeprefix("c/").split(sep)]
        if any((i + 1) * c > n for i, c, n in zip(idx, chunks, x.shape)):
            edge.add(key)
    assert edge and len(edge) < len(ours)
    for key in ours.keys() - edge:
        assert ours[key] == theirs[key], key
    if chain == "predict":
        assert all(ours[k] == theirs[k] for k in edge)
    else:
        assert all(len(ours[k]) <= len(theirs[k]) for k in edge)
        assert sum(len(ours[k]) for k in edge) < sum(len(theirs[k]) for k in edge)


@pytest.mark.parametrize(("fmt", "sharded"), LAYOUTS, ids=LAYOUT_IDS)
@pytest.mark.parametrize("chain", ["bound", "predict"])
def test_what_suggest_measures_is_what_convert_writes(tmp_path, fmt, sharded, chain):
    src, _ = source(tmp_path, 3, fmt, sharded)
    plan = zdt.suggest(src, progress=False, **CHAINS[chain])
    (d,) = [d for d in plan.decisions if d.action == "encode"]
    assert d.measured["on"].startswith("all ")
    dst = tmp_path / "out.zarr"
    zdt.convert(src, str(dst), plan=plan, progress=False)
    files = chunk_files(str(dst))
    # (sharded: the plan counts each shard's index too, 16 bytes an inner chunk and a crc32c)
    assert sum(map(len, files.values())) == d.measured["bytes"]


@pytest.mark.skipif("newest" not in VENVS, reason="set ZDT_READER_VENVS=newest=PYTHON: an "
                    "environment without zdt, with zarr, zarrs and tensorstore")
@pytest.mark.parametrize("reader", ["zarr-python", "zarrs", "tensorstore"])
def test_readers_without_zdt_read_the_padded_copies(copies, reader, tmp_path):
    # (readers="zarr-python" may write codecs only zarr-python has; zarr 3.4 validates a
    # sharded scale_offset + cast_value chain with 0 carried through it: zdt gives 0 a code)
    chains = ("bound", "any", "lossless") if reader == "zarr-python" else ("any", "lossless")
    keys = [k for k in copies if k[1] == 3 and k[3] in chains]
    jobs = [{"store": copies[k][1], "array": ARRAY, "out": str(tmp_path / f"{i}.npy")}
            for i, k in enumerate(keys)]
    spec = tmp_path / "jobs.json"
    spec.write_text(json.dumps(jobs))
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    proc = subprocess.run([VENVS["newest"], str(CHILD), reader, str(spec)], capture_output=True,
                          text=True, timeout=600, cwd=tmp_path, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["errors"] == {}, result
    for i, k in enumerate(keys):
        x = copies[k][0]
        exact_within(x, np.load(tmp_path / f"{i}.npy"), None if k[3] == "lossless" else BOUND)
