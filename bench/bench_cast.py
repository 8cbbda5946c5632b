"""cast_value: zdt against its peers, 10M elements per workload.

    python bench/bench_cast.py [--n 10000000] [--repeat 9] [--only f64->u8]
    python bench/bench_cast.py --stream     # where streaming stores start to pay

Peers (whichever are installed): zarr's built-in cast_value codec (zarr >= 3.2),
cast_value_rs.cast_array_into (writes into a preallocated array, as zdt's `out=` does), the
cast-value package's NumPy implementation, and plain NumPy astype (no cast_value semantics: a
lower bound for "just convert"). zdt is timed as its kernel with `out=` (compare with
cast_array_into) and as its zarr codec (compare with zarr's codec). Ratios are to the fastest
peer and to np.copyto of the input bytes. A final run casts two chunks in two threads to show
the GIL is released.
"""

from __future__ import annotations

import argparse

import _common  # noqa: F401  (sets BLAS threads before numpy starts)
import numpy as np

from _common import ALLOC, copy_floor, fresh_floor, header, in_threads, interleaved, print_table
from zdt.codecs.cast import CastPlan
from zdt.formats import FORMATS

try:
    import cast_value_rs
except ImportError:
    cast_value_rs = None
try:
    import cast_value as cast_value_np
except ImportError:
    cast_value_np = None
try:
    from zarr.codecs.cast_value import CastValue as ZarrCastValue
except ImportError:
    ZarrCastValue = None

ROUNDINGS = ["nearest-even", "towards-zero", "towards-positive", "towards-negative", "nearest-away"]


def make_data(n: int, seed: int = 12345) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    f64_u8 = rng.uniform(-10.0, 270.0, n)          # clamps at both ends
    f64_u8[rng.random(n) < 0.01] = np.nan          # 1% missing values
    return {
        "f64_u8": f64_u8,
        "f32_i16": (rng.standard_normal(n) * 40000).astype(np.float32),   # ~40% out of int16
        "i32_u8": rng.integers(0, 256, n, dtype=np.int32),
        "f64_f32": rng.standard_normal(n) * 1e6,
        "i64_f64": rng.integers(-2**63, 2**63 - 1, n, dtype=np.int64),    # most need rounding
        "f64_i32": rng.standard_normal(n) * 1e6,
    }


NAN_MAP = {"encode": [["NaN", 0]], "decode": [[0, "NaN"]]}


def f64_u8_workload(src: np.ndarray) -> dict:
    return dict(name="f64->u8 nearest-even clamp, NaN->0", src=src, target="uint8",
                rounding="nearest-even", oor="clamp", smap=NAN_MAP, direction="encode")


def workloads(data: dict[str, np.ndarray]) -> list[dict]:
    nan_map = NAN_MAP
    w = [
        f64_u8_workload(data["f64_u8"]),
        dict(name="u8->f64 decode, 0->NaN", src=None, target="float64", rounding="nearest-even",
             oor="clamp", smap=nan_map, direction="decode", source_of="f64_u8"),
        dict(name="f32->i16 towards-zero wrap (out-of-range values)", src=data["f32_i16"],
             target="int16", rounding="towards-zero", oor="wrap", smap=None, direction="encode"),
        dict(name="i32->u8, no out_of_range", src=data["i32_u8"], target="uint8",
             rounding="nearest-even", oor=None, smap=None, direction="encode"),
        dict(name="f64->f32", src=data["f64_f32"], target="float32", rounding="nearest-even",
             oor=None, smap=None, direction="encode"),
        dict(name="f64->f32 towards-zero", src=data["f64_f32"], target="float32",
             rounding="towards-zero", oor=None, smap=None, direction="encode"),
        dict(name="f64->f32 nearest-away", src=data["f64_f32"], target="float32",
             rounding="nearest-away", oor=None, smap=None, direction="encode"),
        dict(name="i64->f64 towards-zero", src=data["i64_f64"], target="float64",
             rounding="towards-zero", oor=None, smap=None, direction="encode"),
    ]
    for r in ROUNDINGS:
        w.append(dict(name=f"f64->i32 clamp {r}", src=data["f64_i32"], target="int32", rounding=r,
                      oor="clamp", smap=None, direction="encode"))
    return w


def zdt_plan(source: str, wl: dict) -> CastPlan:
    pairs = (wl["smap"] or {}).get(wl["direction"])
    return CastPlan(FORMATS[source], FORMATS[wl["target"]], rounding=wl["rounding"],
                    out_of_range=wl["oor"], scalar_map=pairs or (), direction=wl["direction"])


def rs_entries(wl: dict, src: np.ndarray) -> dict | None:
    pairs = (wl["smap"] or {}).get(wl["direction"])
    if not pairs:
        return None
    to_src = float if src.dtype.kind == "f" else int
    to_tgt = float if np.dtype(wl["target"]).kind == "f" else int
    return {to_src(k): to_tgt(v) for k, v in pairs}


def codec_callables(wl: dict, src: np.ndarray) -> dict:
    """zdt's and zarr's codec objects, driven the way zarr's pipeline drives them."""
    from zarr.core.array_spec import ArrayConfig, ArraySpec
    from zarr.core.buffer import default_buffer_prototype
    from zarr.core.buffer.cpu import NDBuffer
    from zarr.core.dtype import get_data_type_from_json

    from zdt.codecs.zarr import CastValueCodec

    out = {}
    src_z = get_data_type_from_json(src.dtype.name, zarr_format=3)
    buf = NDBuffer.from_numpy_array(src)
    if wl["direction"] == "encode":
        config = dict(data_type=wl["target"], rounding=wl["rounding"], out_of_range=wl["oor"],
                      scalar_map=wl["smap"])
        spec_dtype = src_z
        method = "_encode_sync"
    else:
        # decoding: the codec's data_type is the stored type (src), the array's type is target
        config = dict(data_type=src.dtype.name, rounding=wl["rounding"], out_of_range=wl["oor"],
                      scalar_map=wl["smap"])
        spec_dtype = get_data_type_from_json(wl["target"], zarr_format=3)
        method = "_decode_sync"
    spec = ArraySpec(shape=src.shape, dtype=spec_dtype, fill_value=spec_dtype.default_scalar(),
                     config=ArrayConfig.from_dict({}), prototype=default_buffer_prototype())
    ours = CastValueCodec(**config)
    out["zdt codec (zarr pipeline API)"] = lambda: getattr(ours, method)(buf, spec)
    if ZarrCastValue is not None and cast_value_rs is not None:
        theirs = ZarrCastValue(**config)
        out["zarr built-in codec"] = lambda: getattr(theirs, method)(buf, spec)
    return out


def run(args: argparse.Namespace) -> list[tuple[str, dict]]:
    data = make_data(args.n)
    data["u8_from_f64"] = zdt_plan("float64", workloads(data)[0]).cast(data["f64_u8"])
    summary = []
    for wl in workloads(data):
        if args.only and args.only not in wl["name"]:
            continue
        src = data["u8_from_f64"] if wl["src"] is None else wl["src"]
        plan = zdt_plan(src.dtype.name, wl)
        out = np.empty(src.shape, dtype=wl["target"])
        impls = {"zdt kernel (out=)": lambda: plan.cast(src, out=out), ALLOC: lambda: plan.cast(src)}
        impls.update(codec_callables(wl, src))
        if cast_value_rs is not None:
            entries = rs_entries(wl, src)
            impls["cast_value_rs.cast_array_into"] = lambda: cast_value_rs.cast_array_into(
                src, out, rounding_mode=wl["rounding"], out_of_range_mode=wl["oor"],
                scalar_map_entries=entries)
        if cast_value_np is not None:
            entries_np = rs_entries(wl, src)
            impls["cast-value (numpy impl)"] = lambda: cast_value_np.cast_array(
                src, target_dtype=np.dtype(wl["target"]), rounding_mode=wl["rounding"],
                out_of_range_mode=wl["oor"], scalar_map_entries=entries_np)
        impls["numpy astype (no semantics)"] = lambda: np.copyto(out, src, casting="unsafe")
        times = interleaved(impls, args.repeat)
        floor = copy_floor(src, args.repeat)
        row = print_table(wl["name"], times, floor, "zdt kernel (out=)",
                          note=f"{src.size:,} x {src.dtype} -> {wl['target']}",
                          fresh=fresh_floor(src, np.dtype(wl["target"]), args.repeat))
        nan = float("nan")
        row["vs_rs"] = times["zdt kernel (out=)"] / times.get("cast_value_rs.cast_array_into", nan)
        row["vs_zarr"] = times["zdt codec (zarr pipeline API)"] / times.get("zarr built-in codec", nan)
        summary.append((wl["name"], row))
    return summary


def threads(args: argparse.Namespace) -> None:
    """Two chunks of the f64->u8 map workload: one thread after the other, then two threads at
    once. Chunk sizes from cache-resident to DRAM-bound: where one thread already streams at
    memory bandwidth, a second thread has nothing left to add."""
    data = make_data(args.n, seed=7)["f64_u8"]
    wl = f64_u8_workload(data)
    plan = zdt_plan("float64", wl)
    entries = rs_entries(wl, data)
    print("\nGIL: f64->u8 clamp NaN->0, two chunks, each cast `reps` times per thread")
    print(f"  {'implementation':32s} {'chunk':>10s} {'reps':>5s} {'1 thread ms':>12s} "
          f"{'2 threads ms':>13s} {'speed-up':>9s}")
    for size in (65_536, 1_048_576, args.n):
        reps = max(1, args.n // size)
        chunks = [data[:size].copy(), data[-size:].copy()]
        outs = [np.empty(size, np.uint8) for _ in chunks]
        cases = {"zdt": lambda i: plan.cast(chunks[i], out=outs[i])}
        if cast_value_rs is not None:
            cases["cast_value_rs.cast_array_into"] = lambda i: cast_value_rs.cast_array_into(
                chunks[i], outs[i], rounding_mode="nearest-even", out_of_range_mode="clamp",
                scalar_map_entries=entries)
        for name, fn in cases.items():
            def work(i, fn=fn):
                for _ in range(reps):
                    fn(i)
            one = interleaved({"seq": lambda: (work(0), work(1))}, args.repeat)["seq"]
            two = sorted(in_threads([lambda: work(0), lambda: work(1)])
                         for _ in range(args.repeat))[args.repeat // 2]
            print(f"  {name:32s} {size:10,d} {reps:5d} {one * 1e3:12.2f} {two * 1e3:13.2f} "
                  f"{one / two:8.2f}x")


def streaming(args: argparse.Namespace) -> None:
    """Where run_steps starts writing with streaming stores (STREAM_OUTPUT in
    zdt/kernels/_steps.pyx): float64 -> int32 towards-zero clamp into a preallocated output of
    each size, forced one way and the other, alone and followed by a read of the output (what a
    consumer pays when the result is no longer in cache). Ratios streaming / ordinary."""
    from zdt import kernels

    plan = CastPlan(FORMATS["float64"], FORMATS["int32"], rounding="towards-zero",
                    out_of_range="clamp")
    step = plan.stage.step()
    if not step.streams:
        print(f"\nstreaming stores: none in the {kernels.build()} build")
        return
    rng = np.random.default_rng(3)
    print("\nstreaming stores: f64->i32 towards-zero clamp, streaming / ordinary stores "
          "(< 1: streaming is faster)")
    print(f"  {'output MB':>9s} {'ordinary ms':>12s} {'write':>7s} {'ordinary + read ms':>19s} "
          f"{'write + read':>13s}")
    for n in (250_000, 1_000_000, 2_000_000, 4_000_000, 8_000_000, 16_000_000):
        x = rng.standard_normal(n) * 1e6
        out = np.empty(n, np.int32)
        reps = max(1, 20_000_000 // n)

        def write(s, x=x, out=out, reps=reps):
            for _ in range(reps):
                kernels.run_steps([step], x, out, stream=s)

        def write_read(s, x=x, out=out, reps=reps):
            for _ in range(reps):
                kernels.run_steps([step], x, out, stream=s)
                out.sum()

        t = interleaved({"w1": lambda: write(True), "w0": lambda: write(False),
                         "r1": lambda: write_read(True), "r0": lambda: write_read(False)},
                        args.repeat)
        print(f"  {n * 4 / 2**20:9.1f} {t['w0'] / reps * 1e3:12.3f} {t['w1'] / t['w0']:7.2f} "
              f"{t['r0'] / reps * 1e3:19.3f} {t['r1'] / t['r0']:13.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=10_000_000)
    parser.add_argument("--repeat", type=int, default=9)
    parser.add_argument("--only", default="")
    parser.add_argument("--no-threads", action="store_true")
    parser.add_argument("--stream", action="store_true",
                        help="only the streaming-store threshold table")
    args = parser.parse_args()
    if args.stream:
        header("bench_cast --stream")
        streaming(args)
        return
    header("bench_cast")
    print("peers:", ", ".join(p for p, ok in [("zarr built-in", ZarrCastValue is not None and cast_value_rs is not None),
                                              ("cast_value_rs", cast_value_rs is not None),
                                              ("cast-value numpy", cast_value_np is not None),
                                              ("numpy", True)] if ok))
    summary = run(args)
    if not args.no_threads:
        threads(args)
    print("\nsummary (time ratios; < 1 means zdt is faster)")
    print(f"  {'workload':50s} {'zdt/rs_into':>12s} {'zdt/zarr codec':>15s} {'zdt/copy':>9s}")
    for name, s in summary:
        print(f"  {name:50s} {s['vs_rs']:12.2f} {s['vs_zarr']:15.2f} {s['ours'] / s['floor']:9.2f}")


if __name__ == "__main__":
    main()
