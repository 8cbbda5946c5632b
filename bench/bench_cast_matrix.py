"""cast_value across every pair of types and every rounding mode: where is a fast loop slow?

    python bench/bench_cast_matrix.py [--n 2000000] [--repeat 3] [--show 25] [--only float32->int8]

The other benches time the casts users run most; this one times all of them (15 types: the
integers, float16 / 32 / 64, bfloat16, float8_e4m3fn, float8_e5m2, float4_e2m1fn, int4; every
ordered pair, each rounding mode where the pair can round), each on values inside both types'
ranges with fractional parts, out_of_range="clamp", so no element needs the exact path. A loop
gcc left scalar, or a branch on random data, shows here as a pair several times slower than
its neighbours (float64 -> float32 in the directed modes once ran at 25x nearest-even).

Every pair is timed against one floor, np.copyto of n float64 (so the ratio ranks the time
per element: a 1-byte pair's own copy sits in cache and would make it look 50x slow). Prints
the slowest --show casts; records two rows for `zdt bench`: the slowest cast (which one goes
in the note) and the median one.
"""

from __future__ import annotations

import argparse
import itertools
import statistics

import _common  # noqa: F401  (sets BLAS threads before numpy starts)
import ml_dtypes
import numpy as np

from _common import header, interleaved, record
from zdt.codecs.cast import CastPlan
from zdt.formats import FORMATS

TYPES = ["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64", "float16",
         "float32", "float64", "bfloat16", "float8_e4m3fn", "float8_e5m2", "float4_e2m1fn", "int4"]
ROUNDINGS = ["nearest-even", "towards-zero", "towards-positive", "towards-negative", "nearest-away"]
OURS = "zdt cast_value kernel"


def value_range(name: str) -> tuple[float, float]:
    fmt = FORMATS[name]
    info = ml_dtypes.iinfo(fmt.dtype) if fmt.is_int else ml_dtypes.finfo(fmt.dtype)
    lo, hi = float(info.min), float(info.max)
    # 64-bit integers stay within 2**53: larger ones into a small float take the exact path by
    # design (float64 would round them before the small format rounds again)
    return max(lo, -2.0**53), min(hi, 2.0**53)


def data(source: str, target: str, n: int, rng: np.random.Generator) -> np.ndarray:
    """n values of `source` inside both ranges (halved, so rounding never leaves them), with
    fractional parts where the source has them; float ranges capped at 1e6 so values spread
    over few binades, as measured data does."""
    lo = max(value_range(source)[0], value_range(target)[0]) / 2
    hi = min(value_range(source)[1], value_range(target)[1]) / 2
    lo, hi = max(lo, -1e6), min(hi, 1e6)
    x = rng.uniform(lo, hi, n)
    fmt = FORMATS[source]
    if fmt.is_int:
        x = np.round(x)
    return x.astype(fmt.dtype)


def run(args: argparse.Namespace) -> None:
    rng = np.random.default_rng(5)
    floor = interleaved({"copy": (lambda a=np.ones(args.n), b=np.empty(args.n): np.copyto(b, a))},
                        args.repeat)["copy"]
    rows = []
    for source, target in itertools.permutations(TYPES, 2):
        if args.only and args.only != f"{source}->{target}":
            continue
        x = data(source, target, args.n, rng)
        out = np.empty(args.n, dtype=FORMATS[target].dtype)
        rounds = FORMATS[target].is_float or FORMATS[source].is_float
        modes = ROUNDINGS if rounds else ROUNDINGS[:1]
        plans = {m: CastPlan(FORMATS[source], FORMATS[target], rounding=m, out_of_range="clamp")
                 for m in modes}
        times = interleaved({m: (lambda p=p: p.cast(x, out=out)) for m, p in plans.items()},
                            args.repeat)
        rows += [(t, source, target, m) for m, t in times.items()]
    rows.sort(reverse=True)
    print(f"\n{len(rows)} casts of {args.n:,} elements, slowest first; floor: np.copyto of "
          f"{args.n:,} float64, {floor * 1e3:.3f} ms")
    print(f"  {'source':14s} {'target':14s} {'rounding':17s} {'ms':>8s} {'ns/el':>6s} {'/floor':>7s}")
    for t, source, target, mode in rows[:args.show]:
        print(f"  {source:14s} {target:14s} {mode:17s} {t * 1e3:8.3f} {t / args.n * 1e9:6.2f} "
              f"{t / floor:7.2f}")
    median = rows[len(rows) // 2]
    print(f"  median {median[0] * 1e3:.3f} ms ({median[0] / floor:.2f} of the floor); "
          f"{sum(r[0] > floor for r in rows)} of {len(rows)} casts slower than the floor")
    for what, (t, source, target, mode) in (("slowest", rows[0]), ("median", median)):
        record(f"{what} of {len(rows)} casts (every pair and rounding mode, {args.n:,} elements)",
               {OURS: t}, floor, OURS, f"{source} -> {target} {mode}; floor: copying "
               f"{args.n:,} float64", [])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=2_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--show", type=int, default=25)
    parser.add_argument("--only", default="", help="one pair, as SOURCE->TARGET")
    args = parser.parse_args()
    header("bench_cast_matrix")
    run(args)


if __name__ == "__main__":
    main()
