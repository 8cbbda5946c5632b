"""End to end: writing and reading a whole array through zarr, per codec pipeline.

    python bench/bench_pipeline.py [--n 50000000] [--chunk 1000000] [--small-chunk 65536]
                                   [--compressors none,zstd1,blosc-lz4] [--repeat 5]
                                   [--tensorstore-n 50000000]

1. Setups. n float64 values (temperatures with 1% NaN) in chunks of `chunk`, MemoryStore,
   codecs [scale_offset(offset=19, scale=10), cast_value(uint8, NaN <-> 0)], each compressor
   of --compressors (none, zstd1: zstd level 1, blosc-lz4: blosc lz4 level 5 without
   shuffle). Setups (those this zarr has):

     zarr default pipeline + zarr's codecs   BatchedCodecPipeline with zarr's own cast_value /
                                             scale_offset (zarr >= 3.2, cast-value-rs)
     zarr Fused pipeline + zarr's codecs     zarr 3.4's FusedCodecPipeline
     zarr default pipeline + zdt codecs
     zarr Fused pipeline + zdt codecs
     zdt pipeline + zdt codecs               zdt.pipeline.ZdtCodecPipeline

   Median ms of `a[:] = data` (write, a fresh store each time) and `a[:]` (read). Floors:
   write = np.copyto of the float64 input; read = filling a fresh float64 array once, on one
   thread (the allocation's page faults plus one pass of writes).

2. With a compressor, zdt's pipeline against the compressor's own floor, measured in the same
   run: zdt's time without a compressor plus the compressor alone (numcodecs, the library
   zarr's zstd / blosc codecs call) over the very chunks zdt stored, on a pool of as many
   threads as the pipeline uses.

3. Small chunks: zdt's pipeline with chunks of `small-chunk` elements against the same array
   in chunks of `chunk` (same n, so the ratio is per element), each compressor. With a
   compressor (and `none` among --compressors), also the compressor alone in small chunks
   against large ones (numcodecs' own cost per call shows there), and zdt in small chunks
   against its floor at that size: zdt without a compressor plus the compressor alone, both
   in small chunks.

4. Low-precision arrays against TensorStore (when installed): tensorstore-n float32 values in
   chunks of `chunk`, stored as bfloat16 and float8_e4m3fn (no compressor), in a memory store
   and in a directory. zdt: a float32 array with cast_value(data_type, nearest-even) through
   zdt's pipeline; TensorStore: the zarr3 array of the narrow type, written from and read
   back as float32 (`ts.cast`). Both must read back the same values. Beside them, zdt's
   conversion alone: the cast_value kernel over the same chunks on the pipeline's threads,
   into memory already written once (no store, no allocation): what the pipeline's time adds
   to it is zarr's store and write path and the allocator's page faults.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import tempfile
import time
import warnings
from concurrent.futures import ThreadPoolExecutor

import _common  # noqa: F401  (sets BLAS threads before numpy starts)
import numpy as np
import zarr
from zarr.storage import LocalStore, MemoryStore

from _common import header, interleaved, record

from zdt.codecs.cast import CastPlan
from zdt.formats import FORMATS
from zdt.pipeline import OURS, comparison_setups, workers

KERNEL_ALONE = "zdt kernel alone (no store, on the pipeline's threads)"

COMPRESSORS = {
    "none": None,
    "zstd1": {"name": "zstd", "configuration": {"level": 1}},
    "blosc-lz4": {"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5, "shuffle": "noshuffle",
                                                     "typesize": 1}},
}
CODECS = [{"name": "scale_offset", "configuration": {"offset": 19, "scale": 10}},
          {"name": "cast_value", "configuration": {
              "data_type": "uint8", "scalar_map": {"encode": [["NaN", 0]], "decode": [[0, "NaN"]]}}}]


def make(n: int, chunk: int, compressor: str) -> zarr.Array:
    comp = COMPRESSORS[compressor]
    return zarr.create_array(store=MemoryStore(), shape=(n,), chunks=(chunk,), dtype="float64",
                             fill_value=np.nan, filters=CODECS, compressors=[comp] if comp else None)


def timed(fn, repeat: int) -> float:
    ts = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)


def write_read(n: int, chunk: int, compressor: str, data: np.ndarray, repeat: int) -> tuple:
    """(write s, read s, the last array written) with the current zarr config."""
    arrays = []

    def write() -> None:
        a = make(n, chunk, compressor)
        a[:] = data
        arrays.append(a)
        del arrays[:-1]

    w = timed(write, repeat)
    a = arrays[-1]
    return w, timed(lambda: a[:], repeat), a


def setups(args, data: np.ndarray, compressor: str, w_floor: float, r_floor: float) -> dict:
    print(f"\n{args.n:,} float64 in chunks of {args.chunk:,}, compressor {compressor}, "
          f"[scale_offset, cast_value uint8]")
    print(f"  {'setup':42s} {'write ms':>9s} {'read ms':>9s} {'write/floor':>12s} {'read/floor':>11s}")
    results, reference = {}, None
    for name, config in comparison_setups().items():
        with zarr.config.set(config):
            w, r, a = write_read(args.n, args.chunk, compressor, data, args.repeat)
            got = a[:]
        # every setup must store and return the same thing: within 0.05 of the input
        assert np.allclose(got, data, atol=0.051, equal_nan=True), name
        if reference is None:
            reference = got
        assert np.array_equal(got, reference, equal_nan=True), name
        results[name] = (w, r)
        print(f"  {name:42s} {w * 1e3:9.1f} {r * 1e3:9.1f} {w / w_floor:12.2f} {r / r_floor:11.2f}")
    print(f"  {'floor':42s} {w_floor * 1e3:9.1f} {r_floor * 1e3:9.1f}")
    what = f"{args.n:,} float64, chunks of {args.chunk:,}" + ("" if compressor == "none" else f", {compressor}")
    peers = [k for k in results if "zarr's codecs" in k]
    record(f"write ({what})", {k: v[0] for k, v in results.items()}, w_floor, OURS,
           "floor: copying the input", peers)
    record(f"read ({what})", {k: v[1] for k, v in results.items()}, r_floor, OURS,
           "floor: filling a fresh output once", peers)
    best = min(peers, key=lambda k: results[k][0] + results[k][1], default=None)
    if best:
        zw, zr = results[OURS]
        bw, br = results[best]
        print(f"  zdt pipeline vs {best}: write {bw / zw:.2f}x faster, read {br / zr:.2f}x faster")
    return results


def alone(compressor: str):
    """The numcodecs codec zarr's codec of that name calls, configured as COMPRESSORS."""
    import numcodecs

    return {"zstd1": numcodecs.Zstd(level=1),
            "blosc-lz4": numcodecs.Blosc(cname="lz4", clevel=5, shuffle=0)}[compressor]


def stored_chunks(a: zarr.Array) -> list[np.ndarray]:
    """The chunks an array without a compressor stored in its MemoryStore, as bytes."""
    stored = a.store._store_dict
    return [np.frombuffer(stored[k].as_numpy_array(), dtype=np.uint8)
            for k in sorted(stored) if k.startswith("c")]


def compressor_alone(compressor: str, chunks: list[np.ndarray], repeat: int,
                     pool: ThreadPoolExecutor) -> tuple[float, float]:
    """(compress s, decompress s) of every chunk on the pool: the compressor's own time."""
    codec = alone(compressor)
    compressed = list(pool.map(codec.encode, chunks))
    return (timed(lambda: list(pool.map(codec.encode, chunks)), repeat),
            timed(lambda: list(pool.map(codec.decode, compressed)), repeat))


def compressor_floor(args, data: np.ndarray, compressors: list[str]) -> None:
    """zdt with each compressor against (zdt without one) + (the compressor alone)."""
    with zarr.config.set(comparison_setups()[OURS]):
        w0, r0, bare = write_read(args.n, args.chunk, "none", data, args.repeat)
        timed_runs = {c: write_read(args.n, args.chunk, c, data, args.repeat)[:2] for c in compressors}
    chunks = stored_chunks(bare)
    pool = ThreadPoolExecutor(workers())
    print(f"\nwith a compressor, against its floor (zdt without a compressor + the compressor alone "
          f"over the same {len(chunks)} stored chunks on {workers()} threads)")
    print(f"  {'compressor':12s} {'zdt write':>10s} {'floor':>8s} {'ratio':>6s} {'zdt read':>10s} {'floor':>8s} {'ratio':>6s}")
    for c, (w, r) in timed_runs.items():
        enc, dec = compressor_alone(c, chunks, args.repeat, pool)
        fw, fr = w0 + enc, r0 + dec
        print(f"  {c:12s} {w * 1e3:10.1f} {fw * 1e3:8.1f} {w / fw:6.2f} {r * 1e3:10.1f} {fr * 1e3:8.1f} {r / fr:6.2f}")
        what = f"{args.n:,} float64, chunks of {args.chunk:,}, {c}"
        record(f"write against the compressor's floor ({what})", {OURS: w}, fw, OURS,
               "floor: zdt without a compressor + the compressor alone", [])
        record(f"read against the compressor's floor ({what})", {OURS: r}, fr, OURS,
               "floor: zdt without a compressor + the compressor alone", [])
    pool.shutdown()


def small_chunks(args, data: np.ndarray, compressors: list[str]) -> None:
    """zdt's pipeline in small chunks against the same array in large ones, per compressor;
    with a compressor, also the compressor alone in small chunks against large ones (its own
    cost per call) and zdt in small chunks against its floor at that size."""
    print(f"\nchunks of {args.small_chunk:,} against chunks of {args.chunk:,} (zdt pipeline, same n)")
    print(f"  {'compressor':12s} {'write ms':>9s} {'ratio':>6s} {'read ms':>9s} {'ratio':>6s}"
          f"   {'compressor alone: write':>23s} {'read':>5s}   {'zdt / floor: write':>18s} {'read':>5s}")
    pool = ThreadPoolExecutor(workers())
    times, bare = {}, {}
    with zarr.config.set(comparison_setups()[OURS]):
        for c in compressors:
            # interleaved, so drift hits both sizes alike
            big, small = [], []
            for _ in range(args.repeat):
                big.append(write_read(args.n, args.chunk, c, data, 1)[:2])
                small.append(write_read(args.n, args.small_chunk, c, data, 1)[:2])
            times[c] = [tuple(statistics.median(x[i] for x in runs) for i in (0, 1)) for runs in (big, small)]
            (bw, br), (sw, sr) = times[c]
            line = f"  {c:12s} {sw * 1e3:9.1f} {sw / bw:6.2f} {sr * 1e3:9.1f} {sr / br:6.2f}"
            what = f"{args.n:,} float64, chunks of {args.small_chunk:,}" + ("" if c == "none" else f", {c}")
            note = f"floor: the same in chunks of {args.chunk:,}"
            record(f"write, small chunks ({what})", {OURS: sw}, bw, OURS, note, [])
            record(f"read, small chunks ({what})", {OURS: sr}, br, OURS, note, [])
            if c != "none" and "none" in times:
                if not bare:        # the chunks zdt stores without a compressor, at both sizes
                    bare = {size: stored_chunks(write_read(args.n, size, "none", data, 1)[2])
                            for size in (args.chunk, args.small_chunk)}
                (ew, er), (esw, esr) = (compressor_alone(c, bare[size], args.repeat, pool)
                                        for size in (args.chunk, args.small_chunk))
                nsw, nsr = times["none"][1]
                fw, fr = nsw + esw, nsr + esr
                line += f"   {esw / ew:23.2f} {esr / er:5.2f}   {sw / fw:18.2f} {sr / fr:5.2f}"
                note = "floor: zdt without a compressor + the compressor alone, both in these chunks"
                record(f"write against the compressor's floor ({what})", {OURS: sw}, fw, OURS, note, [])
                record(f"read against the compressor's floor ({what})", {OURS: sr}, fr, OURS, note, [])
            print(line)
    pool.shutdown()


def tensorstore_rows(args) -> None:
    try:
        import tensorstore as ts
    except ImportError:
        print("\n(TensorStore is not installed: no low-precision comparison)")
        return
    n, chunk = args.tensorstore_n, args.chunk
    data = np.random.default_rng(2).normal(0, 50, n).astype(np.float32)    # within float8_e4m3fn
    dst = np.empty_like(data)
    w_floor = timed(lambda: np.copyto(dst, data), args.repeat)
    r_floor = timed(lambda: np.full(n, 1.0, dtype=np.float32), args.repeat)
    print(f"\nlow-precision arrays: {n:,} float32 in chunks of {chunk:,}, written from and read "
          f"back as float32, against TensorStore")
    print(f"  {'type / store':24s} {'zdt write':>10s} {'ts write':>9s} {'zdt read':>9s} {'ts read':>8s}"
          f"  {'kernel alone: write':>19s} {'read':>5s}")
    pool = ThreadPoolExecutor(workers())
    starts = range(0, n, chunk)
    root = tempfile.mkdtemp(prefix="zdt-bench-")
    try:
        for dtype in ("bfloat16", "float8_e4m3fn"):
            for kind in ("memory", "directory"):
                kv = ({"driver": "memory"} if kind == "memory"
                      else {"driver": "file", "path": os.path.join(root, f"ts-{dtype}") + "/"})
                spec = {"driver": "zarr3", "kvstore": kv, "create": True, "delete_existing": True,
                        "metadata": {"shape": [n], "data_type": dtype,
                                     "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [chunk]}},
                                     "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}]}}
                t = ts.cast(ts.open(spec).result(), ts.float32)
                with zarr.config.set(comparison_setups()[OURS]):
                    store = MemoryStore() if kind == "memory" else LocalStore(os.path.join(root, f"zdt-{dtype}"))
                    a = zarr.create_array(store, shape=(n,), chunks=(chunk,), dtype="float32", compressors=None,
                                          filters=[{"name": "cast_value", "configuration": {
                                              "data_type": dtype, "rounding": "nearest-even"}}])
                    # zdt's conversion alone: the kernel chunk by chunk on the pipeline's
                    # threads, into memory already written once
                    enc, dec = (CastPlan(FORMATS["float32"], FORMATS[dtype]),
                                CastPlan(FORMATS[dtype], FORMATS["float32"]))
                    narrow, back = enc.cast(data), np.ones_like(data)

                    def on_pool(plan: CastPlan, src: np.ndarray, dst: np.ndarray):
                        return lambda: list(pool.map(
                            lambda i: plan.cast(src[i:i + chunk], out=dst[i:i + chunk]), starts))

                    w, tw, r, tr, kw, kr = interleaved({
                        "w": lambda: a.__setitem__(slice(None), data), "tw": lambda: t.write(data).result(),
                        "r": lambda: a[:], "tr": lambda: t.read().result(),
                        "kw": on_pool(enc, data, narrow), "kr": on_pool(dec, narrow, back)}, args.repeat).values()
                    got = a[:]
                assert np.array_equal(got, t.read().result(), equal_nan=True), \
                    f"zdt and TensorStore read back different {dtype} values"
                assert np.array_equal(got, back, equal_nan=True), \
                    f"zdt's kernel alone and its pipeline read back different {dtype} values"
                print(f"  {dtype + ' / ' + kind:24s} {w * 1e3:10.1f} {tw * 1e3:9.1f} {r * 1e3:9.1f} {tr * 1e3:8.1f}"
                      f"  {kw * 1e3:19.1f} {kr * 1e3:5.1f}")
                what = f"{n:,} float32 as {dtype}, chunks of {chunk:,}, {kind} store"
                record(f"write ({what})", {OURS: w, "tensorstore": tw, KERNEL_ALONE: kw}, w_floor, OURS,
                       "floor: copying the input", ["tensorstore"])
                record(f"read ({what})", {OURS: r, "tensorstore": tr, KERNEL_ALONE: kr}, r_floor, OURS,
                       "floor: filling a fresh output once", ["tensorstore"])
    finally:
        pool.shutdown()
        shutil.rmtree(root, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=50_000_000)
    parser.add_argument("--chunk", type=int, default=1_000_000)
    parser.add_argument("--small-chunk", type=int, default=65536)
    parser.add_argument("--compressors", default="none,zstd1,blosc-lz4",
                        help=f"comma-separated, of {','.join(COMPRESSORS)}")
    parser.add_argument("--tensorstore-n", type=int, default=50_000_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    compressors = args.compressors.split(",")
    unknown = [c for c in compressors if c not in COMPRESSORS]
    if unknown:
        parser.error(f"--compressors: unknown {','.join(unknown)}")
    header("bench_pipeline")
    warnings.simplefilter("ignore")
    rng = np.random.default_rng(1)
    data = np.round(rng.uniform(20, 35, args.n), 1)     # 0.1-degree readings -> 10..160 stored; 0 holds NaN
    data[rng.random(args.n) < 0.01] = np.nan
    dst = np.empty_like(data)
    w_floor = timed(lambda: np.copyto(dst, data), args.repeat)
    r_floor = timed(lambda: np.full(args.n, 1.0), args.repeat)
    for c in compressors:
        setups(args, data, c, w_floor, r_floor)
    squeezed = [c for c in compressors if c != "none"]
    if squeezed:
        compressor_floor(args, data, squeezed)
    if args.small_chunk:
        small_chunks(args, data, compressors)
    if args.tensorstore_n:
        tensorstore_rows(args)


if __name__ == "__main__":
    main()
