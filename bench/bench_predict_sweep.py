"""zdt.predict against SZ3 across bounds: one 1000 x 1000 float64 chunk coded over and over (warm),
one thread, at absolute bounds of 1e-4, 1e-3 and 1e-2 of the field's range, and at relative bounds
of 1e-4, 1e-3 and 1e-2 against SZ3 in the log domain (its log2 and exp2 timed with it). Each row
is a ratio to SZ3's time (min of --repeat rounds, the implementations alternating); every result
is decoded and checked against its bound.

    python bench/bench_predict_sweep.py [--repeat 9] [--fields smooth,ridges] [--signed]

Fields: "smooth", a smooth field with a little noise (bench_predict's, its noise a tenth);
"ridges", a sum of random plane waves with a little noise (a field with more structure at
small scales); "noisy" (not in the default run), bench_predict's field itself (noise 0.3: at
1e-4 of its range the bound is below the noise). Extra zdt configurations are rows of their own: --config NAME=JSON (keys of
PredictConfig.create, e.g. --config 'lorenzo={"predictor": "lorenzo"}'). --signed: the relative
rows on the field itself, which changes sign (its signs coded too).
"""

from __future__ import annotations

import argparse
import json
import math

import _common  # noqa: F401  (sets BLAS threads before numpy starts)
import numpy as np

from _common import fastest
from zdt.codecs.predict import PredictConfig

FRACTIONS = (1e-4, 1e-3, 1e-2)


def smooth(side: int) -> np.ndarray:
    i, j = np.mgrid[0:side, 0:side]
    rng = np.random.default_rng(0)
    return (1000 * np.sin(i / 300) * np.cos(j / 200) + 50 * np.sin(i / 17 + j / 23)
            + rng.normal(0, 0.03, (side, side)))


def ridges(side: int) -> np.ndarray:
    rng = np.random.default_rng(1)
    i, j = np.mgrid[0:side, 0:side] / side
    x = np.zeros((side, side))
    for _ in range(24):
        k = rng.normal(0, 12, 2)
        x += rng.normal(0, 1) / (1 + np.hypot(*k) / 6) * np.sin(2 * np.pi * (k[0] * i + k[1] * j)
                                                               + rng.uniform(0, 2 * np.pi))
    return 100 * x + rng.normal(0, 0.01, (side, side))


def noisy(side: int) -> np.ndarray:
    from bench_predict import field

    return field(side * side)


FIELDS = {"smooth": smooth, "ridges": ridges, "noisy": noisy}


def sz_config(bound: float):
    from pysz import szConfig, szErrorBoundMode

    c = szConfig()
    c.errorBoundMode = szErrorBoundMode.ABS
    c.absErrorBound = bound
    return c


def row(title: str, enc: dict, dec: dict, sizes: dict, repeat: int) -> None:
    te, td = fastest(enc, repeat), fastest(dec, repeat)
    sz_e, sz_d = te.pop("SZ3"), td.pop("SZ3")
    cells = [f"{k} enc {v / sz_e:.2f}x" for k, v in te.items()]
    cells += [f"{k} dec {v / sz_d:.2f}x" for k, v in td.items()]
    print(f"  {title:22s} SZ3 enc {sz_e * 1e3:6.1f} ms dec {sz_d * 1e3:5.1f} ms | " + ", ".join(cells))
    print(f"  {'':22s} bytes: " + ", ".join(f"{k} {v:,}" for k, v in sizes.items()))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeat", type=int, default=9)
    p.add_argument("--side", type=int, default=1000)
    p.add_argument("--fields", default="smooth,ridges")
    p.add_argument("--config", action="append", default=[], metavar="NAME=JSON")
    p.add_argument("--no-relative", action="store_true")
    p.add_argument("--signed", action="store_true",
                   help="relative rows on the field itself, which changes sign (SZ3: log2 |x| "
                        "and the signs as a zstd frame of their bitmap)")
    args = p.parse_args()
    from pysz import sz

    extra = {k: json.loads(v) for k, v in (c.split("=", 1) for c in args.config)}
    print(f"zdt.predict / SZ3 time, one {args.side}x{args.side} float64 chunk, warm, one thread, "
          f"min of {args.repeat}")
    for name in args.fields.split(","):
        x = np.ascontiguousarray(FIELDS[name](args.side))
        span = float(x.max() - x.min())
        print(f"\n{name} (range {span:.4g}), absolute bound E = fraction of the range")
        for frac in FRACTIONS:
            E = frac * span
            cfgs = {"auto": PredictConfig.create(abs_error=E)}
            cfgs.update({k: PredictConfig.create(abs_error=E, **v) for k, v in extra.items()})
            szc = sz_config(E)
            coded = {k: c.encode(x, np.nan) for k, c in cfgs.items()}
            s = np.frombuffer(bytes(sz.compress(x, szc)[0]), np.uint8)
            for k, c in cfgs.items():
                assert np.all(np.abs(c.decode(coded[k], x.dtype, x.shape, np.nan) - x) <= E), k
            assert np.all(np.abs(sz.decompress(s, x.dtype, x.shape)[0] - x) <= E)
            enc: dict = {k: (lambda c=c: c.encode(x, np.nan)) for k, c in cfgs.items()}
            dec: dict = {k: (lambda c=c, b=coded[k]: c.decode(b, x.dtype, x.shape, np.nan))
                         for k, c in cfgs.items()}
            enc["SZ3"] = lambda: sz.compress(x, szc)
            dec["SZ3"] = lambda: sz.decompress(s, x.dtype, x.shape)
            sizes = {k: len(v) for k, v in coded.items()} | {"SZ3": len(s)}
            row(f"E = {frac:g} range", enc, dec, sizes, args.repeat)
        if args.no_relative:
            continue
        if args.signed:
            relative_signed(name, x, extra, args.repeat)
            continue
        pos = np.exp2(x / (span / 12))      # (positive, spanning twelve binades)
        print(f"{name}: relative bound R on 2**(x * 12 / range), against SZ3 on log2 x")
        for R in FRACTIONS:
            cfgs = {"auto": PredictConfig.create(rel_error=R)}
            cfgs.update({k: PredictConfig.create(rel_error=R, **v) for k, v in extra.items()})
            szc = sz_config(math.log2(1 + R) * (1 - 1e-6))
            coded = {k: c.encode(pos, np.nan) for k, c in cfgs.items()}
            s = np.frombuffer(bytes(sz.compress(np.log2(pos), szc)[0]), np.uint8)
            for k, c in cfgs.items():
                y = c.decode(coded[k], pos.dtype, pos.shape, np.nan)
                assert np.all(np.abs(y - pos) <= R * pos), k
            enc = {k: (lambda c=c: c.encode(pos, np.nan)) for k, c in cfgs.items()}
            dec = {k: (lambda c=c, b=coded[k]: c.decode(b, pos.dtype, pos.shape, np.nan))
                   for k, c in cfgs.items()}
            enc["SZ3"] = lambda: sz.compress(np.log2(pos), szc)
            dec["SZ3"] = lambda: np.exp2(sz.decompress(s, pos.dtype, pos.shape)[0])
            sizes = {k: len(v) for k, v in coded.items()} | {"SZ3": len(s)}
            row(f"R = {R:g}", enc, dec, sizes, args.repeat)


def relative_signed(name: str, x: np.ndarray, extra: dict, repeat: int) -> None:
    """Relative rows on a field that changes sign: zdt's relative chunk (its signs kind 3's
    zstd bitmap or kind 4's tiles) against SZ3 on log2 |x| plus the signs as a zstd frame of
    their bitmap."""
    from numcodecs import Zstd
    from pysz import sz

    zstd = Zstd(level=3)
    print(f"{name}: relative bound R on the field itself ({(x < 0).mean():.0%} negative), "
          f"against SZ3 on log2 |x| and the signs' bitmap through zstd")
    for R in FRACTIONS:
        cfgs = {"auto": PredictConfig.create(rel_error=R)}
        cfgs.update({k: PredictConfig.create(rel_error=R, **v) for k, v in extra.items()})
        szc = sz_config(math.log2(1 + R) * (1 - 1e-6))
        coded = {k: c.encode(x, np.nan) for k, c in cfgs.items()}

        def sz_encode():
            return (sz.compress(np.log2(np.abs(x)), szc)[0],
                    zstd.encode(np.packbits(np.signbit(x)).tobytes()))
        s, signs = sz_encode()

        def sz_decode():
            y = np.exp2(sz.decompress(np.frombuffer(bytes(s), np.uint8), x.dtype, x.shape)[0])
            neg = np.unpackbits(np.frombuffer(zstd.decode(signs), np.uint8), count=x.size)
            return np.where(neg.reshape(x.shape).astype(bool), -y, y)
        for k, c in cfgs.items():
            y = c.decode(coded[k], x.dtype, x.shape, np.nan)
            assert np.all(np.abs(y - x) <= R * np.abs(x)), k
        assert np.all(np.abs(sz_decode() - x) <= 1.01 * R * np.abs(x))
        enc = {k: (lambda c=c: c.encode(x, np.nan)) for k, c in cfgs.items()}
        dec = {k: (lambda c=c, b=coded[k]: c.decode(b, x.dtype, x.shape, np.nan))
               for k, c in cfgs.items()}
        enc["SZ3"] = sz_encode
        dec["SZ3"] = sz_decode
        sizes = ({f"{k} (kind {v[4]})": len(v) for k, v in coded.items()}
                 | {"SZ3": len(bytes(s)) + len(signs)})
        row(f"R = {R:g}", enc, dec, sizes, repeat)


if __name__ == "__main__":
    main()
