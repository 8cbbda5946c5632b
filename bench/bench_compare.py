"""`zdt compare` against reading both stores, and its peak memory.

    python bench/bench_compare.py [--n 200000000] [--repeat 2] [--slices 16] [--keep DIR]

The stores: a (time, lat, lon) float64 field (smooth pattern plus noise, 721 x 1440 slices,
chunks of 4 slices = 33 MB), written by zarr with its default compressor (zstd), and a copy
`zdt convert --codecs` wrote (bitround keepbits 12 + zstd: no search, so making it is quick).
Timed in fresh processes, as a user runs them, interleaved:

- read both: every storage unit of both arrays read with zarr (`arr[region]`) on two threads,
  a unit at a time per thread, nothing else: the floor (the issue: compare at no less than
  half the speed of reading both stores, i.e. a ratio of at most 2);
- zdt compare --json: the figures of every value (one pass over both stores, unit by unit),
  DSSIM and the spectral error on --slices slices.

Peak memory is each process's maximum resident set (wait4's ru_maxrss), which for compare
should stay near a few storage units plus one slice's working set, whatever the store's size.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import _common  # noqa: F401  (sets BLAS threads before numpy starts)
import numpy as np

from _common import header

READ_BOTH = """
import sys, zarr
from concurrent.futures import ThreadPoolExecutor
from zdt.engine.arrays import storage_units
a, b = (zarr.open_array(p, mode="r") for p in sys.argv[1:3])
def both(region):
    a[region]; b[region]
with ThreadPoolExecutor(2) as pool:
    list(pool.map(both, storage_units(a)))
"""

BITROUND = ('[{"name":"bitround","configuration":{"keepbits":12}},'
            '{"name":"bytes","configuration":{"endian":"little"}},{"name":"zstd","configuration":{"level":3}}]')


def make_source(path: Path, n: int) -> None:
    import zarr

    ny, nx = 721, 1440
    nt = max(1, n // (ny * nx))
    a = zarr.create_array(path, shape=(nt, ny, nx), chunks=(4, ny, nx), dtype="float64")
    rng = np.random.default_rng(3)
    lat = np.linspace(-90, 90, ny)[:, None]
    lon = np.linspace(0, 360, nx, endpoint=False)[None, :]
    for t0 in range(0, nt, 4):
        t = np.arange(t0, min(nt, t0 + 4))[:, None, None]
        a[t0:t0 + t.shape[0]] = (288 - 30 * np.sin(np.radians(lat)) ** 2 + 5 * np.cos(np.radians(lon) + t / 10)
                                 + rng.normal(0, 0.3, (t.shape[0], ny, nx)))


def timed(argv: list[str]) -> tuple[float, int]:
    """(wall seconds, peak RSS in MB) of a fresh process."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    if status != 0:
        raise SystemExit(f"{argv[:3]} failed (status {status})")
    return wall, usage.ru_maxrss // 1024


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=200_000_000, help="values in the field (default 200M: 1.6 GB)")
    p.add_argument("--repeat", type=int, default=2)
    p.add_argument("--slices", type=int, default=16)
    p.add_argument("--keep", help="make (or reuse) the stores in this directory")
    args = p.parse_args()
    header("bench_compare")
    where = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="zdt-bench-compare-"))
    src, dst = where / "src.zarr", where / "dst.zarr"
    zdt_cmd = [sys.executable, "-m", "zdt"]
    if not src.exists():
        make_source(src, args.n)
    if not dst.exists():
        subprocess.run([*zdt_cmd, "convert", str(src), str(dst), "--codecs", BITROUND, "--quiet"], check=True)
    size = sum(f.stat().st_size for f in src.rglob("*") if f.is_file())
    size_dst = sum(f.stat().st_size for f in dst.rglob("*") if f.is_file())
    import zarr

    arr = zarr.open_array(src, mode="r")
    print(f"stores: {arr.shape} float64, {arr.nbytes / 1e9:.2f} GB of values; {size / 1e9:.2f} GB and "
          f"{size_dst / 1e9:.2f} GB on disk; chunks {arr.chunks}")
    subprocess.run([sys.executable, "-c", READ_BOTH, str(src), str(dst)], check=True)   # (page cache)
    runs: dict[str, list[tuple[float, int]]] = {"read both (floor)": [], "zdt compare --json": []}
    for _ in range(args.repeat):
        runs["read both (floor)"].append(timed([sys.executable, "-c", READ_BOTH, str(src), str(dst)]))
        runs["zdt compare --json"].append(timed([*zdt_cmd, "compare", str(src), str(dst), "--json", "--quiet",
                                                 "--slices", str(args.slices)]))
    floor = min(t for t, _ in runs["read both (floor)"])
    print(f"\n{'':24s} {'best s':>8s} {'GB/s (values, both)':>20s} {'x floor':>8s} {'peak RSS MB':>12s}")
    for name, r in runs.items():
        best = min(t for t, _ in r)
        print(f"{name:24s} {best:8.2f} {2 * arr.nbytes / 1e9 / best:20.2f} {best / floor:8.2f} "
              f"{max(m for _, m in r):12d}")
    if not args.keep:
        import shutil

        shutil.rmtree(where)


if __name__ == "__main__":
    main()
