"""End to end: writing and reading a whole array through zarr, per codec pipeline.

    python bench/bench_pipeline.py [--n 50000000] [--chunk 1000000] [--repeat 3] [--zstd]

The array: n float64 values (temperatures with 1% NaN) in chunks of `chunk`, MemoryStore,
codecs [scale_offset(offset=19, scale=10), cast_value(uint8, NaN <-> 0)], no compressor (or
zstd level 1 with --zstd). Setups (those this zarr has):

  zarr default pipeline + zarr's codecs   BatchedCodecPipeline with zarr's own cast_value /
                                          scale_offset (zarr >= 3.2, cast-value-rs)
  zarr Fused pipeline + zarr's codecs     zarr 3.4's FusedCodecPipeline
  zarr default pipeline + zdt codecs
  zarr Fused pipeline + zdt codecs
  zdt pipeline + zdt codecs               zdt.pipeline.ZdtCodecPipeline

Median ms of `a[:] = data` (write, a fresh store each time) and `a[:]` (read). Floors: write =
np.copyto of the float64 input; read = filling a fresh float64 array of that size once, on one
thread (the allocation's page faults plus one pass of writes).
"""

from __future__ import annotations

import argparse
import statistics
import time
import warnings

import _common  # noqa: F401  (sets BLAS threads before numpy starts)
import numpy as np
import zarr
from zarr.storage import MemoryStore

from _common import header, record

from zdt.pipeline import OURS, comparison_setups

def make(n: int, chunk: int, zstd: bool) -> zarr.Array:
    codecs = [{"name": "scale_offset", "configuration": {"offset": 19, "scale": 10}},
              {"name": "cast_value", "configuration": {
                  "data_type": "uint8", "scalar_map": {"encode": [["NaN", 0]], "decode": [[0, "NaN"]]}}}]
    return zarr.create_array(store=MemoryStore(), shape=(n,), chunks=(chunk,), dtype="float64",
                             fill_value=np.nan, filters=codecs,
                             compressors=[{"name": "zstd", "configuration": {"level": 1}}] if zstd else None)


def timed(fn, repeat: int) -> float:
    ts = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=50_000_000)
    parser.add_argument("--chunk", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--zstd", action="store_true")
    args = parser.parse_args()
    header("bench_pipeline")
    warnings.simplefilter("ignore")
    rng = np.random.default_rng(1)
    data = np.round(rng.uniform(20, 35, args.n), 1)     # 0.1-degree readings -> 10..160 stored; 0 holds NaN
    data[rng.random(args.n) < 0.01] = np.nan
    print(f"{args.n:,} float64 in chunks of {args.chunk:,}, "
          f"{'zstd level 1' if args.zstd else 'no compressor'}, [scale_offset, cast_value uint8]")
    print(f"  {'setup':42s} {'write ms':>9s} {'read ms':>9s} {'write/floor':>12s} {'read/floor':>11s}")
    dst = np.empty_like(data)
    w_floor = timed(lambda: np.copyto(dst, data), args.repeat)
    r_floor = timed(lambda: np.full(args.n, 1.0), args.repeat)
    results = {}
    reference = None
    for name, config in comparison_setups().items():
        with zarr.config.set(config):
            arrays = []

            def write() -> None:
                a = make(args.n, args.chunk, args.zstd)
                a[:] = data
                arrays.append(a)

            w = timed(write, args.repeat)
            a = arrays[-1]
            got = a[:]
            # every setup must store and return the same thing: within 0.05 of the input
            assert np.allclose(got, data, atol=0.051, equal_nan=True), name
            if reference is None:
                reference = got
            assert np.array_equal(got, reference, equal_nan=True), name
            r = timed(lambda: a[:], args.repeat)
        results[name] = (w, r)
        print(f"  {name:42s} {w * 1e3:9.1f} {r * 1e3:9.1f} {w / w_floor:12.2f} {r / r_floor:11.2f}")
    print(f"  {'floor':42s} {w_floor * 1e3:9.1f} {r_floor * 1e3:9.1f}")
    what = f"{args.n:,} float64, chunks of {args.chunk:,}{', zstd' if args.zstd else ''}"
    peers = [k for k in results if "zarr's codecs" in k]
    record(f"write ({what})", {k: v[0] for k, v in results.items()}, w_floor, OURS,
           "floor: copying the input", peers)
    record(f"read ({what})", {k: v[1] for k, v in results.items()}, r_floor, OURS,
           "floor: filling a fresh output once", peers)
    best = min((k for k in results if "zarr's codecs" in k), key=lambda k: results[k][0] + results[k][1],
               default=None)
    if best:
        zw, zr = results[OURS]
        bw, br = results[best]
        print(f"\nzdt pipeline vs {best}: write {bw / zw:.2f}x faster, read {br / zr:.2f}x faster")


if __name__ == "__main__":
    main()
