"""zdt.predict against SZ3 (pysz): encode and decode time of the same chunks at the same absolute
bound, single-threaded, and zdt.predict's chunks on 1 and 2 threads (the kernels release the
GIL; pysz holds it, so SZ3 gets no thread row). Every decoded chunk is checked against the
bound. The rows time the interpolation predictor; "auto" (the default, which chooses the
predictor of each chunk on samples) has a row of its own in the encode table.

    python bench/bench_predict.py [--n 8000000] [--chunk 1000] [--repeat 3]

Data: a smooth 2-d field with noise (n values as a square, chunks of --chunk x --chunk); for
the relative-bound tables, 2**(field / 300) (positive, spanning a few binades) against SZ3 in
the log domain. Bytes against SZ3 on real data are in bench_bytes.py.
"""

from __future__ import annotations

import argparse
import math
from concurrent.futures import ThreadPoolExecutor

import _common  # noqa: F401  (sets BLAS threads before numpy starts)
import numpy as np

from _common import copy_floor, header, interleaved, print_table
from zdt.codecs.predict import PredictConfig


def field(n: int) -> np.ndarray:
    side = int(math.isqrt(n))
    i, j = np.mgrid[0:side, 0:side]
    rng = np.random.default_rng(0)
    return (1000 * np.sin(i / 300) * np.cos(j / 200) + 50 * np.sin(i / 17 + j / 23)
            + rng.normal(0, 0.3, (side, side)))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=8_000_000)
    p.add_argument("--chunk", type=int, default=1000)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--abs-error", type=float, default=0.5)
    p.add_argument("--rel-error", type=float, default=1e-3)
    args = p.parse_args()
    header("zdt.predict against SZ3")
    x = field(args.n)
    E, c = args.abs_error, args.chunk
    chunks = [np.ascontiguousarray(x[r:r + c, s:s + c]) for r in range(0, x.shape[0], c)
              for s in range(0, x.shape[1], c)]
    floor = copy_floor(x, args.repeat)
    cfg = PredictConfig.create(abs_error=E, predictor="interpolation")
    encoded = [cfg.encode(u, np.nan) for u in chunks]
    for u, b in zip(chunks, encoded):
        assert np.all(np.abs(cfg.decode(b, u.dtype, u.shape, np.nan) - u) <= E)
    auto = PredictConfig.create(abs_error=E)
    impls_enc = {"zdt.predict (1 thread)": lambda: [cfg.encode(u, np.nan) for u in chunks],
                 "zdt.predict auto (1 thread)": lambda: [auto.encode(u, np.nan) for u in chunks]}
    impls_dec = {"zdt.predict (1 thread)": lambda: [cfg.decode(b, u.dtype, u.shape, np.nan)
                                                    for u, b in zip(chunks, encoded)]}
    pool = ThreadPoolExecutor(2)
    impls_enc["zdt.predict (2 threads)"] = lambda: list(pool.map(lambda u: cfg.encode(u, np.nan), chunks))
    impls_dec["zdt.predict (2 threads)"] = lambda: list(pool.map(
        lambda ub: cfg.decode(ub[1], ub[0].dtype, ub[0].shape, np.nan), zip(chunks, encoded)))
    sizes = {"zdt.predict": sum(map(len, encoded))}
    try:
        from pysz import sz, szConfig, szErrorBoundMode

        szc = szConfig()
        szc.errorBoundMode = szErrorBoundMode.ABS
        szc.absErrorBound = E
        sz_enc = [np.frombuffer(bytes(sz.compress(u, szc)[0]), np.uint8) for u in chunks]
        for u, b in zip(chunks, sz_enc):
            assert np.all(np.abs(sz.decompress(b, u.dtype, u.shape)[0] - u) <= E)
        impls_enc["SZ3 (pysz, 1 thread)"] = lambda: [sz.compress(u, szc) for u in chunks]
        impls_dec["SZ3 (pysz, 1 thread)"] = lambda: [sz.decompress(b, u.dtype, u.shape)
                                                     for u, b in zip(chunks, sz_enc)]
        sizes["SZ3"] = sum(len(b) for b in sz_enc)
    except ImportError:
        print("(pysz not installed: no SZ3 rows)")
    note = (f"{x.size:,} float64 in {len(chunks)} chunks of {c}x{c}, abs error {E:g}; bytes: "
            + ", ".join(f"{k} {v:,}" for k, v in sizes.items()))
    print_table("zdt.predict encode", interleaved(impls_enc, args.repeat), floor,
                "zdt.predict (1 thread)", note)
    print_table("zdt.predict decode", interleaved(impls_dec, args.repeat), floor,
                "zdt.predict (1 thread)", note)
    pool.shutdown()
    relative(chunks, args.rel_error, args.repeat, floor)


def relative(chunks: list, R: float, repeat: int, floor: float) -> None:
    """Pointwise-relative bound R on a positive field (2**(x / 300) of the same chunks):
    zdt.predict's format-2 chunks (the logarithms' chunk, checked element by element) against
    SZ3 on log2 x within log2(1 + R) (SZ's PW_REL; its log2 and exp2 timed with it, no sign or
    zero maps: the field has neither, and no check of exp2's misses, which this field has
    none of: a lower bound of that scheme's time)."""
    pos = [np.exp2(u / 300) for u in chunks]
    rel = PredictConfig.create(rel_error=R, predictor="interpolation")
    encoded = [rel.encode(u, np.nan) for u in pos]
    for u, b in zip(pos, encoded):
        assert np.all(np.abs(rel.decode(b, u.dtype, u.shape, np.nan) - u) <= R * np.abs(u))
    enc = {"zdt.predict rel (1 thread)": lambda: [rel.encode(u, np.nan) for u in pos]}
    dec = {"zdt.predict rel (1 thread)": lambda: [rel.decode(b, u.dtype, u.shape, np.nan)
                                                  for u, b in zip(pos, encoded)]}
    sizes = {"zdt.predict": sum(map(len, encoded))}
    try:
        from pysz import sz, szConfig, szErrorBoundMode

        szc = szConfig()
        szc.errorBoundMode = szErrorBoundMode.ABS
        szc.absErrorBound = math.log2(1 + R) * (1 - 1e-6)
        sz_enc = [np.frombuffer(bytes(sz.compress(np.log2(u), szc)[0]), np.uint8) for u in pos]
        enc["SZ3 log-domain (pysz, 1 thread)"] = lambda: [sz.compress(np.log2(u), szc) for u in pos]
        dec["SZ3 log-domain (pysz, 1 thread)"] = lambda: [np.exp2(sz.decompress(b, u.dtype, u.shape)[0])
                                                          for u, b in zip(pos, sz_enc)]
        sizes["SZ3 log-domain"] = sum(len(b) for b in sz_enc)
    except ImportError:
        pass
    note = (f"the same chunks as 2**(x / 300), rel error {R:g}; bytes: "
            + ", ".join(f"{k} {v:,}" for k, v in sizes.items()))
    print_table("zdt.predict encode, relative bound", interleaved(enc, repeat), floor,
                "zdt.predict rel (1 thread)", note)
    print_table("zdt.predict decode, relative bound", interleaved(dec, repeat), floor,
                "zdt.predict rel (1 thread)", note)


if __name__ == "__main__":
    main()
