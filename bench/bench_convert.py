"""`zdt convert` against a plain zarr rewrite of the same store, 50M float64 values on local disk.

    python bench/bench_convert.py [--n 50000000] [--chunk 1000000] [--repeat 3] [--abs-error 0.01] [--rel-error 1e-4]

The store: a 2-d field (a smooth pattern plus noise, 0.001-unit readings, 0.1% NaN, NaN fill
value) written by zarr with its default compressor (zstd). Timed, each in a fresh process as a
user runs it, each writing a new store:

- plain rewrite: zarr.open the source, create the same array elsewhere (same chunks, same
  compressor), `dst[...] = src[...]` (what the issue calls a plain zarr rewrite);
- zdt convert --abs-error E: the whole job (the survey pass over every value, the size
  measurement, the write with every storage unit checked against the bound);
- zdt convert --codecs: the write pass alone with the encoding the bound gave (no search);
- zdt convert --rel-error R: the whole job under a relative bound (bitround and the narrow
  floats among the candidates);
- both again with --readers zdt: zdt.predict among the candidates (absolute, and relative
  through the values' logarithms), measured and checked like the rest;
- SZ3 (pysz, if installed): every chunk through SZ3 at the absolute bound, one thread (pysz
  holds the GIL), written to files: a prediction codec's throughput on the same data.

The floor is the plain rewrite; the ratios say what the search and the checks cost on top.
The bytes each writes are printed too. Page cache: the source is read once before timing, so
every run reads it from memory.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

import _common  # noqa: F401  (sets BLAS threads before numpy starts)
import numpy as np

from _common import header, record

SZ3 = """
import sys, os, numpy as np, zarr
from pysz import sz, szConfig, szErrorBoundMode
src = zarr.open_array(sys.argv[1], mode="r")
os.makedirs(sys.argv[3])
cfg = szConfig()
cfg.errorBoundMode = szErrorBoundMode.ABS
cfg.absErrorBound = float(sys.argv[2])
rows = src.chunks[0]
for i, r0 in enumerate(range(0, src.shape[0], rows)):
    comp, _ = sz.compress(np.ascontiguousarray(src[r0:r0 + rows]), cfg)
    with open(os.path.join(sys.argv[3], str(i)), "wb") as f:
        f.write(bytes(comp))
"""

REWRITE = """
import sys, zarr
src = zarr.open_array(sys.argv[1], mode="r")
dst = zarr.create_array(sys.argv[2], shape=src.shape, chunks=src.chunks, dtype=src.dtype,
                        fill_value=src.fill_value, compressors=src.compressors)
dst[...] = src[...]
"""


def field_shape(n: int, chunk: int) -> tuple[tuple[int, int], tuple[int, int]]:
    """(shape, chunks) of the field of n values: rows of 10,000 where n allows."""
    cols = 10_000 if n % 10_000 == 0 else n
    return (n // cols, cols), (max(1, chunk // cols), cols)


def fill_field(a) -> None:
    """Writes the field into the 2-d float64 array `a`: a smooth pattern plus noise, readings
    of 0.001, 0.1% NaN, in blocks of about 8M values."""
    rows, cols = a.shape
    rng = np.random.default_rng(5)
    step = max(1, (8_000_000 // cols))
    j = np.arange(cols) / cols
    for r0 in range(0, rows, step):
        i = (np.arange(r0, min(rows, r0 + step)) / rows)[:, None]
        block = 15 + 10 * np.sin(6 * i) * np.cos(9 * j) + rng.normal(0, 0.5, (i.shape[0], cols))
        block = np.round(block, 3)
        block[rng.random(block.shape) < 0.001] = np.nan
        a[r0:r0 + block.shape[0]] = block


def make_source(path: Path, n: int, chunk: int) -> None:
    import zarr

    shape, chunks = field_shape(n, chunk)
    fill_field(zarr.create_array(path, shape=shape, chunks=chunks, dtype="float64",
                                 fill_value=np.nan))


def stored(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def timed(argv: list[str], out: Path, repeat: int) -> float:
    """Median wall seconds of `argv` (which writes `out`), `out` removed before each run."""
    times = []
    for _ in range(repeat):
        shutil.rmtree(out, ignore_errors=True)
        t0 = time.perf_counter()
        proc = subprocess.run(argv, capture_output=True, text=True)
        times.append(time.perf_counter() - t0)
        if proc.returncode != 0:
            sys.exit(f"{' '.join(argv)} failed: {proc.stderr.strip()}")
    return sorted(times)[len(times) // 2]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=50_000_000)
    p.add_argument("--chunk", type=int, default=1_000_000)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--abs-error", type=float, default=0.01)
    p.add_argument("--rel-error", type=float, default=1e-4)
    p.add_argument("--dir", help="where to write the stores (default: a temporary directory)")
    args = p.parse_args()
    header("zdt convert vs a plain rewrite")
    zdt = str(Path(sysconfig.get_path("scripts")) / "zdt")
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        root = Path(tmp)
        src = root / "src"
        make_source(src, args.n, args.chunk)
        stored(src)
        subprocess.run([sys.executable, "-c", "import sys, zarr; zarr.open_array(sys.argv[1])[...]",
                        str(src)], check=True)                       # into the page cache
        plan = json.loads(subprocess.run(
            [zdt, "suggest", str(src), "--abs-error", str(args.abs_error), "--json", "--quiet"],
            capture_output=True, text=True, check=True).stdout)
        (entry,) = plan["arrays"]
        codecs = json.dumps(entry["codecs"])
        runs = {
            "plain zarr rewrite (same compressor)": [sys.executable, "-c", REWRITE, str(src)],
            f"zdt convert --abs-error {args.abs_error:g} (search + write + check)":
                [zdt, "convert", "--quiet", str(src), "--abs-error", str(args.abs_error)],
            "zdt convert --codecs (write + encode only)":
                [zdt, "convert", "--quiet", str(src), "--codecs", codecs],
            f"zdt convert --rel-error {args.rel_error:g} (search + write + check)":
                [zdt, "convert", "--quiet", str(src), "--rel-error", str(args.rel_error)],
            # zdt.predict among the candidates (every candidate measured, every unit checked)
            f"zdt convert --abs-error {args.abs_error:g} --readers zdt":
                [zdt, "convert", "--quiet", str(src), "--abs-error", str(args.abs_error),
                 "--readers", "zdt"],
            f"zdt convert --rel-error {args.rel_error:g} --readers zdt":
                [zdt, "convert", "--quiet", str(src), "--rel-error", str(args.rel_error),
                 "--readers", "zdt"],
        }
        try:
            import pysz  # noqa: F401

            # the same data through SZ3 (one thread, as pysz runs), chunk by chunk into files:
            # where a prediction codec's speed stands
            runs[f"SZ3 (pysz) at abs {args.abs_error:g}, every chunk, one thread"] = [
                sys.executable, "-c", SZ3, str(src), str(args.abs_error)]
        except ImportError:
            pass
        times, sizes = {}, {}
        for name, argv in runs.items():
            out = root / "out"
            argv = argv + [str(out)]
            times[name] = timed(argv, out, args.repeat)
            sizes[name] = stored(out)
        floor = times["plain zarr rewrite (same compressor)"]
        what = f"{args.n:,} float64, chunks of {args.chunk:,}, zstd"
        print(f"\n{what}; source {stored(src):,} bytes; encoding: {entry['why']}")
        print(f"  {'run':58s} {'s':>7s} {'/rewrite':>9s} {'bytes written':>15s}")
        for name, t in times.items():
            print(f"  {name:58s} {t:7.2f} {t / floor:9.2f} {sizes[name]:15,}")
        record(f"convert ({what})", times, floor, next(k for k in times if "--abs-error" in k),
               "floor: a plain zarr rewrite", peers=[])


if __name__ == "__main__":
    main()
