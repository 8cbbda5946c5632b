"""zdt.predict against SZ3 (pysz): encode and decode time of the same chunks at the same absolute
bound, single-threaded, and zdt.predict's chunks on 1 and 2 threads (the kernels release the
GIL; pysz holds it, so SZ3 gets no thread row). Every decoded chunk is checked against the
bound. The rows time the interpolation predictor; "auto" (the default, which chooses the
predictor of each chunk on samples) has a row of its own in the encode table.

    python bench/bench_predict.py [--n 8000000] [--chunk 1000] [--repeat 7]

Data: a smooth 2-d field with noise (n values as a square, chunks of --chunk x --chunk); for
the masked tables, the same chunks with a land mask (NaN) against SZ3 given the mask apart; for
the relative-bound tables, 2**(field / 300) (positive, spanning a few binades) against SZ3 in
the log domain. Bytes against SZ3 on real data are in bench_bytes.py.
"""

from __future__ import annotations

import argparse
import math
from concurrent.futures import ThreadPoolExecutor
from collections.abc import Callable

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
    p.add_argument("--repeat", type=int, default=7)   # (medians of 7: this VM drifts by a fifth)
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
    masked(chunks, E, args.repeat, floor)
    relative(chunks, args.rel_error, args.repeat, floor)
    warm(chunks[0], len(chunks), E, args.rel_error, args.repeat, floor)


def land(shape: tuple[int, int]) -> np.ndarray:
    """A land mask of a chunk: two discs and a coast, about a third of the elements."""
    i, j = np.mgrid[0:shape[0], 0:shape[1]]
    n, m = shape
    return (((i - 0.3 * n) ** 2 + (j - 0.6 * m) ** 2 < (0.25 * n) ** 2)
            | ((i - 0.8 * n) ** 2 + (j - 0.2 * m) ** 2 < (0.2 * n) ** 2) | (j > 0.85 * m + 0.1 * i))


def masked(chunks: list, E: float, repeat: int, floor: float) -> None:
    """The same chunks with a land mask (NaN, the fill value): zdt.predict's masked chunks (the
    mask stream, no symbol for a masked element) against SZ3 as its users code a masked field
    (the NaN filled with the mean of the other values, the mask apart: zstd of its packed
    bits, level 3 here, where speed is measured (bench_bytes takes level 19 for the bytes);
    the filling, packing and zstd timed with it)."""
    from numcodecs.zstd import Zstd

    wet = [np.where(land(u.shape), np.nan, u) for u in chunks]
    cfg = PredictConfig.create(abs_error=E, predictor="interpolation")
    auto = PredictConfig.create(abs_error=E)
    encoded = [cfg.encode(u, np.nan) for u in wet]
    for u, b in zip(wet, encoded):
        y = cfg.decode(b, u.dtype, u.shape, np.nan)
        assert np.array_equal(np.isnan(y), np.isnan(u)) and np.nanmax(np.abs(y - u)) <= E
    enc = {"zdt.predict masked (1 thread)": lambda: [cfg.encode(u, np.nan) for u in wet],
           "zdt.predict masked auto (1 thread)": lambda: [auto.encode(u, np.nan) for u in wet]}
    dec = {"zdt.predict masked (1 thread)": lambda: [cfg.decode(b, u.dtype, u.shape, np.nan)
                                                     for u, b in zip(wet, encoded)]}
    sizes = {"zdt.predict": sum(map(len, encoded))}
    try:
        from pysz import sz, szConfig, szErrorBoundMode

        szc = szConfig()
        szc.errorBoundMode = szErrorBoundMode.ABS
        szc.absErrorBound = E

        def sz_encode(u: np.ndarray) -> tuple[bytes, bytes]:
            mask = np.isnan(u)
            bits = bytes(Zstd(level=3).encode(np.packbits(mask).tobytes()))
            return bits, bytes(sz.compress(np.where(mask, u[~mask].mean(), u), szc)[0])

        def sz_decode(u: np.ndarray, coded: tuple[bytes, bytes]) -> np.ndarray:
            mask = np.unpackbits(np.frombuffer(Zstd().decode(coded[0]), np.uint8))[:u.size]
            y = sz.decompress(np.frombuffer(coded[1], np.uint8), u.dtype, u.shape)[0]
            return np.where(mask.reshape(u.shape).astype(bool), np.nan, y)
        sz_enc = [sz_encode(u) for u in wet]
        for u, b in zip(wet, sz_enc):
            y = sz_decode(u, b)
            assert np.array_equal(np.isnan(y), np.isnan(u)) and np.nanmax(np.abs(y - u)) <= E
        enc["SZ3 + mask apart (pysz, 1 thread)"] = lambda: [sz_encode(u) for u in wet]
        dec["SZ3 + mask apart (pysz, 1 thread)"] = lambda: [sz_decode(u, b) for u, b in zip(wet, sz_enc)]
        sizes["SZ3 + mask"] = sum(len(a) + len(b) for a, b in sz_enc)
    except ImportError:
        pass
    share = sum(int(land(u.shape).sum()) for u in chunks) / sum(u.size for u in chunks)
    note = (f"the same chunks, {share:.0%} of the elements masked (NaN), abs error {E:g}; bytes: "
            + ", ".join(f"{k} {v:,}" for k, v in sizes.items()))
    print_table("zdt.predict encode, masked", interleaved(enc, repeat), floor,
                "zdt.predict masked (1 thread)", note)
    print_table("zdt.predict decode, masked", interleaved(dec, repeat), floor,
                "zdt.predict masked (1 thread)", note)


def relative(chunks: list, R: float, repeat: int, floor: float) -> None:
    """Pointwise-relative bound R on a positive field (2**(x / 300) of the same chunks):
    zdt.predict's format-2 chunks (the logarithms' chunk, checked element by element) against
    SZ3 on log2 x within log2(1 + R) (SZ's PW_REL; its log2 and exp2 timed with it, no sign or
    zero maps: the field has neither, and no check of exp2's misses, which this field has
    none of: a lower bound of that scheme's time)."""
    pos = [np.exp2(u / 300) for u in chunks]
    rel = PredictConfig.create(rel_error=R, predictor="interpolation")
    auto = PredictConfig.create(rel_error=R)
    encoded = [rel.encode(u, np.nan) for u in pos]
    for u, b in zip(pos, encoded):
        assert np.all(np.abs(rel.decode(b, u.dtype, u.shape, np.nan) - u) <= R * np.abs(u))
    enc = {"zdt.predict rel (1 thread)": lambda: [rel.encode(u, np.nan) for u in pos],
           "zdt.predict rel auto (1 thread)": lambda: [auto.encode(u, np.nan) for u in pos]}
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
    note = (f"the same chunks as 2**(x / 300), rel error {R:g}, format 2 kind {encoded[0][4]}; bytes: "
            + ", ".join(f"{k} {v:,}" for k, v in sizes.items()))
    print_table("zdt.predict encode, relative bound", interleaved(enc, repeat), floor,
                "zdt.predict rel (1 thread)", note)
    print_table("zdt.predict decode, relative bound", interleaved(dec, repeat), floor,
                "zdt.predict rel (1 thread)", note)


def warm(chunk: np.ndarray, times: int, E: float, R: float, repeat: int, floor: float) -> None:
    """One chunk coded `times` times over, each result dropped at once: the tables above keep
    every chunk's result (as a reader keeps the chunks it decodes), and there each call's fresh
    working memory costs page faults (the C library hands freed memory back to the system
    between calls), SZ3's larger working memory more of them; here the same memory serves
    every call, for both. Absolute bound E and relative bound R (2**(x / 300), against SZ3 in
    the log domain, as above)."""
    try:
        from pysz import sz, szConfig, szErrorBoundMode
    except ImportError:
        return
    pos = np.exp2(chunk / 300)
    cfg = PredictConfig.create(abs_error=E, predictor="interpolation")
    rel = PredictConfig.create(rel_error=R, predictor="interpolation")
    auto, rel_auto = PredictConfig.create(abs_error=E), PredictConfig.create(rel_error=R)
    sza, szr = szConfig(), szConfig()
    sza.errorBoundMode = szr.errorBoundMode = szErrorBoundMode.ABS
    sza.absErrorBound = E
    szr.absErrorBound = math.log2(1 + R) * (1 - 1e-6)
    a, r = cfg.encode(chunk, np.nan), rel.encode(pos, np.nan)
    sa = np.frombuffer(bytes(sz.compress(chunk, sza)[0]), np.uint8)
    sr = np.frombuffer(bytes(sz.compress(np.log2(pos), szr)[0]), np.uint8)
    assert np.all(np.abs(cfg.decode(a, chunk.dtype, chunk.shape, np.nan) - chunk) <= E)
    assert np.all(np.abs(rel.decode(r, pos.dtype, pos.shape, np.nan) - pos) <= R * pos)

    def over(f: Callable[[], object]) -> Callable[[], None]:
        def run() -> None:
            for _ in range(times):
                f()
        return run

    note = (f"one {chunk.shape[0]}x{chunk.shape[1]} float64 chunk {times} times, each result "
            f"dropped; abs error {E:g}, and rel error {R:g} on 2**(x / 300)")
    tables = {
        "zdt.predict warm encode": {
            "zdt.predict (1 thread)": over(lambda: cfg.encode(chunk, np.nan)),
            "zdt.predict auto (1 thread)": over(lambda: auto.encode(chunk, np.nan)),
            "SZ3 (pysz, 1 thread)": over(lambda: sz.compress(chunk, sza))},
        "zdt.predict warm decode": {
            "zdt.predict (1 thread)": over(lambda: cfg.decode(a, chunk.dtype, chunk.shape, np.nan)),
            "SZ3 (pysz, 1 thread)": over(lambda: sz.decompress(sa, chunk.dtype, chunk.shape))},
        "zdt.predict warm encode, relative bound": {
            "zdt.predict rel (1 thread)": over(lambda: rel.encode(pos, np.nan)),
            "zdt.predict rel auto (1 thread)": over(lambda: rel_auto.encode(pos, np.nan)),
            "SZ3 log-domain (pysz, 1 thread)": over(lambda: sz.compress(np.log2(pos), szr))},
        "zdt.predict warm decode, relative bound": {
            "zdt.predict rel (1 thread)": over(lambda: rel.decode(r, pos.dtype, pos.shape, np.nan)),
            "SZ3 log-domain (pysz, 1 thread)": over(
                lambda: np.exp2(sz.decompress(sr, pos.dtype, pos.shape)[0]))}}
    for title, impls in tables.items():
        print_table(title, interleaved(impls, repeat), floor, next(iter(impls)), note)


if __name__ == "__main__":
    main()
