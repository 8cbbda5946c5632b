"""The Python API on a lazily opened Dataset against the `zdt` command on the same store.

    python bench/bench_xarray.py [--n 20000000] [--chunk 1000000] [--repeat 3] [--abs-error 0.01]

Two stores, written plainly by zarr / xarray: a 2-d field of N float64 values (a smooth pattern
plus noise, 0.001-unit readings, 0.1% NaN; CHUNK values per chunk: bench_convert.py's), and a
91 x 128 x 344 float32 field chunked along time (one 2-d slice per chunk). On each, every
route runs in a fresh process as a user runs it (interpreter start and imports included) and
writes a new store:

- command convert: ``zdt convert SRC DST --abs-error E``;
- zdt.convert(ds): ``zdt.convert(xr.open_zarr(SRC), DST, abs_error=E)``;
- encoding + to_zarr: ``ds.to_zarr(DST, encoding=zdt.encoding(ds, abs_error=E))``;
- command suggest / zdt.suggest(ds): the decision alone.

Times: the command's is its process's wall time (interpreter start and imports included); an
API route's is its call's (what a user in a session waits for: xarray, dask and the Dataset
are there already; the whole process's time is printed beside it). The ratios are the API
call over the command (issue 56 asks for at most 1.5); the bytes each writes are printed too
(the same encoding: the same bytes). Page cache: each source is read once before timing.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import _common  # noqa: F401  (sets BLAS threads before numpy starts)
import numpy as np

from _common import header, record

API = """
import sys, time, xarray as xr, zdt
route, src, dst, bound = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
ds = xr.open_zarr(src, consolidated=False)
t0 = time.perf_counter()
if route == "convert":
    zdt.convert(ds, dst, abs_error=bound, progress=False)
elif route == "encoding":
    ds.to_zarr(dst, zarr_format=3, consolidated=False,
               encoding=zdt.encoding(ds, abs_error=bound, progress=False))
else:
    zdt.suggest(ds, abs_error=bound, progress=False)
print("SECONDS", time.perf_counter() - t0)
"""


def make_field(path: Path, n: int, chunk: int) -> None:
    """bench_convert.py's 2-d field, as a group xarray opens (one variable, dimensions named)."""
    import zarr

    from bench_convert import field_shape, fill_field

    shape, chunks = field_shape(n, chunk)
    group = zarr.open_group(path, mode="w", zarr_format=3)
    fill_field(group.create_array("t", shape=shape, chunks=chunks, dtype="float64",
                                  fill_value=np.nan, dimension_names=["y", "x"]))

def make_slices(path: Path) -> None:
    """A 91 x 128 x 344 float32 SST-like field (K), one time step per chunk, with coordinates."""
    import xarray as xr

    rng = np.random.default_rng(7)
    t = np.arange(91)[:, None, None]
    lat = np.linspace(-60, 60, 128)
    lon = np.linspace(0, 360, 344, endpoint=False)
    field = (280 + 20 * np.cos(np.deg2rad(lat))[None, :, None]
             + 3 * np.sin(t / 10 + np.deg2rad(lon)[None, None, :])
             + rng.normal(0, 0.2, (91, 128, 344))).astype("float32")
    ds = xr.Dataset({"sst": (("time", "lat", "lon"), field, {"units": "K"})},
                    coords={"time": np.arange(91), "lat": lat, "lon": lon})
    ds.to_zarr(path, zarr_format=3, consolidated=False, mode="w",
               encoding={"sst": {"chunks": (1, 128, 344)}})


def stored(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and "zarr.json" not in p.name)


def timed(argv: list[str], out: Path | None, repeat: int) -> tuple[float, float]:
    """Median seconds of `argv` (which writes `out`, removed before each run): (the time it
    reports on a line "SECONDS s", else its wall time; its wall time)."""
    times, walls = [], []
    for _ in range(repeat):
        if out is not None:
            shutil.rmtree(out, ignore_errors=True)
        t0 = time.perf_counter()
        proc = subprocess.run(argv, capture_output=True, text=True)
        walls.append(time.perf_counter() - t0)
        if proc.returncode != 0:
            sys.exit(f"{' '.join(argv)} failed: {proc.stderr.strip()}")
        said = [line.split()[1] for line in proc.stdout.splitlines() if line.startswith("SECONDS ")]
        times.append(float(said[0]) if said else walls[-1])
    return sorted(times)[len(times) // 2], sorted(walls)[len(walls) // 2]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=20_000_000)
    p.add_argument("--chunk", type=int, default=1_000_000)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--abs-error", type=float, default=0.01)
    p.add_argument("--dir", help="where to write the stores (default: a temporary directory)")
    args = p.parse_args()
    header("the Python API on xr.open_zarr against the zdt command")
    zdt = [sys.executable, "-m", "zdt"]
    api = [sys.executable, "-c", API]
    bound = str(args.abs_error)
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        root = Path(tmp)
        sources = {f"{args.n / 1e6:g}M float64, {args.chunk / 1e6:g}M per chunk": root / "field.zarr",
                   "91 x 128 x 344 float32, chunked along time": root / "slices.zarr"}
        make_field(sources[next(iter(sources))], args.n, args.chunk)
        make_slices(root / "slices.zarr")
        for title, src in sources.items():
            subprocess.run([sys.executable, "-c", "import sys, xarray as xr; "
                            "xr.open_zarr(sys.argv[1], consolidated=False).load()", str(src)],
                           check=True)                          # into the page cache
            out = root / "out.zarr"
            routes = {
                "command convert": (zdt + ["convert", str(src), str(out), "--abs-error", bound,
                                           "--quiet"], out),
                "zdt.convert(ds)": (api + ["convert", str(src), str(out), bound], out),
                "encoding + to_zarr": (api + ["encoding", str(src), str(out), bound], out),
                "command suggest": (zdt + ["suggest", str(src), "--abs-error", bound, "--quiet"], None),
                "zdt.suggest(ds)": (api + ["suggest", str(src), str(out), bound], None),
            }
            times, walls, sizes = {}, {}, {}
            for name, (argv, dst) in routes.items():
                times[name], walls[name] = timed(argv, dst, args.repeat)
                sizes[name] = stored(dst) if dst is not None else None
            print(f"\n{title}, abs error {args.abs_error:g} (median of {args.repeat}, seconds; "
                  f"a fresh process each)")
            print(f"  {'route':24s} {'s':>8s} {'/command':>9s} {'process s':>10s} {'bytes':>12s}")
            for name, t in times.items():
                against = times["command suggest" if "suggest" in name else "command convert"]
                size = f"{sizes[name]:12,d}" if sizes[name] is not None else f"{'-':>12s}"
                print(f"  {name:24s} {t:8.2f} {t / against:9.2f} {walls[name]:10.2f} {size}")
            record(f"xarray route: {title}", times, times["command convert"], "zdt.convert(ds)",
                   peers=["command convert"])


if __name__ == "__main__":
    main()
