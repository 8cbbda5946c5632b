"""Low-precision formats: cast_value into and out of them, and packbits, against ml_dtypes.

    python bench/bench_lowprec.py [--n 10000000] [--repeat 9]

10M float32 (and float64) values, nearest-even, into float16, bfloat16, float8_e4m3fn,
float8_e5m2, float4_e2m1fn and int4 and back to float32. zdt is timed as its kernel with `out=`
(every rule: overflow, NaN and infinity checked, rounded once) and allocating its output; the
peer is ml_dtypes' `astype` (allocating), which checks nothing (overflow gives NaN or saturates),
and for float16, a NumPy type, NumPy's own `astype`. Whether the peer rounds as the spec does
(once, to nearest, ties to even) is measured too, on values just off the midpoints between
neighbouring values of each format (where rounding twice, through float32, goes wrong) and on
random values: the count of results whose bits differ from zdt's, which the tests check against
an exact reference.
A saturating cast (clamp) with a tenth of the values beyond float8_e4m3fn's range; three casts
in the other rounding modes (the peers have none: their nearest-even astype is shown); packbits of
int4 (8x as many elements) against copying the int4 bytes. Ratios are to the peer and to
np.copyto of the float32 array (the larger side of every cast).
"""

from __future__ import annotations

import argparse

import _common  # noqa: F401  (sets BLAS threads before numpy starts)
import ml_dtypes
import numpy as np

from _common import ALLOC, copy_floor, fresh_floor, header, interleaved, print_table
from zdt.codecs.cast import CastPlan
from zdt.formats import FORMATS
from zdt.codecs.packbits import PackBitsConfig

TARGETS = ["float16", "bfloat16", "float8_e4m3fn", "float8_e5m2", "float4_e2m1fn", "int4"]


def data_for(target: str, n: int, dtype: str, rng: np.random.Generator) -> np.ndarray:
    """Values inside the target's range (the common case: no element needs the exact path)."""
    top = {"float16": 60000.0, "bfloat16": 1e30, "float8_e4m3fn": 400.0, "float8_e5m2": 50000.0,
           "float4_e2m1fn": 5.5, "int4": 7.4}[target]
    x = rng.uniform(-top, top, n)
    if target == "int4":
        x = np.clip(x, -8.4, 7.4)
    return x.astype(dtype)


def rounding_probe(source: str, target: str, rng: np.random.Generator) -> np.ndarray:
    """Values of `source` inside the target's finite range: every midpoint between neighbouring
    finite values, the next value of `source` on either side of it (a tie, and just off one:
    rounding through float32 first turns a float64 just off a tie into the tie), and random
    values."""
    fmt = FORMATS[target]
    every = np.arange(1 << (8 * fmt.itemsize), dtype=np.uint8 if fmt.itemsize == 1 else np.uint16)
    if fmt.is_sub_byte:
        every = every[every < (1 << fmt.bits)]
    values = np.array([float(v) for v in every.view(fmt.dtype)])
    values = np.unique(values[np.isfinite(values)])
    mid = (values[:-1] + values[1:]) / 2          # exact: float64 has bits to spare
    mid = mid.astype(source)
    off = np.concatenate([mid, np.nextafter(mid, np.inf), np.nextafter(mid, -np.inf)])
    rand = rng.uniform(values[0], values[-1], 100_000).astype(source)
    return np.concatenate([off, rand])


def rounding_differences(source: str, target: str, rng: np.random.Generator) -> tuple[int, int]:
    """(values whose peer result differs from zdt's in its bits, values probed)."""
    x = rounding_probe(source, target, rng)
    tdt = np.dtype(getattr(ml_dtypes, target, target))
    ours = CastPlan(FORMATS[source], FORMATS[target]).cast(x)
    theirs = x.astype(tdt)
    width = np.uint8 if tdt.itemsize == 1 else np.uint16
    return int((ours.view(width) != theirs.view(width)).sum()), x.size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=10_000_000)
    parser.add_argument("--repeat", type=int, default=9)
    args = parser.parse_args()
    header("bench_lowprec")
    rng = np.random.default_rng(1)
    rows = []
    for source in ("float32", "float64"):
        for target in TARGETS:
            x = data_for(target, args.n, source, rng)
            tdt = np.dtype(getattr(ml_dtypes, target, target))
            peer = "numpy astype" if target == "float16" else "ml_dtypes astype"
            enc_out = np.empty(args.n, dtype=tdt)
            plan = CastPlan(FORMATS[source], FORMATS[target], out_of_range=None)
            impls = {"zdt cast_value kernel": lambda: plan.cast(x, out=enc_out),
                     ALLOC: lambda: plan.cast(x),
                     peer: lambda: x.astype(tdt)}
            f32 = x if source == "float32" else x.astype(np.float32)
            floor = copy_floor(f32, args.repeat)
            name = f"{source} -> {target} encode"
            row = print_table(name, interleaved(impls, args.repeat), floor, "zdt cast_value kernel",
                              fresh=fresh_floor(x, tdt, args.repeat))
            rows.append((name, row))
            if source != "float32":
                continue
            y = plan.cast(x)
            dec_out = np.empty(args.n, dtype=np.float32)
            back = CastPlan(FORMATS[target], FORMATS["float32"])
            impls = {"zdt cast_value kernel": lambda: back.cast(y, out=dec_out),
                     ALLOC: lambda: back.cast(y),
                     peer: lambda: y.astype(np.float32)}
            name = f"{target} -> float32 decode"
            row = print_table(name, interleaved(impls, args.repeat), floor, "zdt cast_value kernel",
                              fresh=fresh_floor(y, np.float32, args.repeat))
            rows.append((name, row))
    # Saturating: out_of_range="clamp" with a tenth of the values beyond the range, which
    # clamp writes in the loop itself (before, each took the exact path); and the directed
    # modes and nearest-away (bit-pattern loops like nearest-even's; float64 rounded to odd
    # into float32 first), where the peers, which have nearest-even only, show the same
    # conversion in that mode for scale. (source, target, rounding, the values put beyond
    # the range under clamp or None)
    cases = [("float32", "float8_e4m3fn", "nearest-even", (500.0, 5000.0)),
             ("float32", "float8_e4m3fn", "towards-zero", None),
             ("float64", "float16", "nearest-away", None),
             ("float32", "float4_e2m1fn", "towards-positive", (10.0, 100.0))]
    for source, target, rounding, beyond_range in cases:
        x = data_for(target, args.n, source, rng)
        if beyond_range:
            beyond = rng.random(args.n) < 0.1
            x[beyond] = np.sign(x[beyond]) * rng.uniform(*beyond_range, int(beyond.sum())).astype(source)
        tdt = np.dtype(getattr(ml_dtypes, target, target))
        out = np.empty(args.n, dtype=tdt)
        plan = CastPlan(FORMATS[source], FORMATS[target], rounding=rounding,
                        out_of_range="clamp" if beyond_range else None)
        even = rounding == "nearest-even"
        peer = ("numpy" if target == "float16" else "ml_dtypes") + " astype" + ("" if even else " (nearest-even)")
        impls = {"zdt cast_value kernel": lambda: plan.cast(x, out=out), ALLOC: lambda: plan.cast(x),
                 peer: lambda: x.astype(tdt)}
        f32 = x if source == "float32" else x.astype(np.float32)
        name = f"{source} -> {target}" + ("" if even else f" {rounding}") + \
            (("" if even else ",") + " clamp, 10% beyond its range" if beyond_range else "")
        with np.errstate(over="ignore"):
            rows.append((name, print_table(name, interleaved(impls, args.repeat), copy_floor(f32, args.repeat),
                                           "zdt cast_value kernel", fresh=fresh_floor(x, tdt, args.repeat))))
    # packbits of int4: half a byte per element. At --n elements these calls take tens of
    # microseconds on inputs that sit in cache, where one interrupt moves the ratio by 1.5x (the
    # quick bench's 2M elements timed 1.7-3.1x the copy from run to run); 8x as many elements
    # (1 byte each) are out of cache and take milliseconds.
    q = CastPlan(FORMATS["float32"], FORMATS["int4"]).cast(data_for("int4", 8 * args.n, "float32", rng))
    packer = PackBitsConfig.create()
    packed = packer.encode(q)
    impls = {"zdt packbits encode": lambda: packer.encode(q),
             "numpy copy of the int4 bytes (no packing)": lambda: q.copy()}
    name = "packbits int4 encode"
    rows.append((name, print_table(name, interleaved(impls, args.repeat), copy_floor(q, args.repeat),
                                   "zdt packbits encode")))
    impls = {"zdt packbits decode": lambda: packer.decode(packed, q.dtype, q.shape),
             "numpy copy of the int4 bytes (no packing)": lambda: q.copy()}
    name = "packbits int4 decode"
    rows.append((name, print_table(name, interleaved(impls, args.repeat), copy_floor(q, args.repeat),
                                   "zdt packbits decode")))

    # the peer's rounding, measured: int4 is left out (its astype truncates towards zero, as
    # NumPy's float -> int casts do; cast_value rounds)
    print(f"\nrounding (nearest-even; {'ml_dtypes ' + ml_dtypes.__version__}, numpy {np.__version__} for float16):"
          " results of the peer's astype whose bits differ from rounding once (zdt)")
    for source in ("float32", "float64"):
        for target in TARGETS[:-1]:
            differ, probed = rounding_differences(source, target, rng)
            print(f"  {source} -> {target:14s} {differ:6d} of {probed:7d} values")

    print("\nsummary (time ratios; < 1 means zdt is faster)")
    print(f"  {'workload':40s} {'zdt/peer':>9s} {'peer/zdt':>9s} {'zdt/copy f32':>13s}")
    for name, r in rows:
        print(f"  {name:40s} {r['ours'] / r['fastest_peer']:9.2f} {r['fastest_peer'] / r['ours']:9.2f} "
              f"{r['ours'] / r['floor']:13.2f}")


if __name__ == "__main__":
    main()
