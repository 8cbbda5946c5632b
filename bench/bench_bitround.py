"""bitround: zdt against its peers, 10M elements per data type.

    python bench/bench_bitround.py [--n 10000000] [--repeat 9]

Peers: numcodecs' BitRound (float16/32/64; its encode is a NumPy expression over a view that
allocates), and the same three NumPy ufunc steps into preallocated arrays with no NaN or
infinity rule (a lower bound for any NumPy implementation: "no semantics"). zdt is timed as its
kernel with `out=` and as its zarr codec through zarr's codec API, beside numcodecs' BitRound
as a zarr codec (zarr.codecs.numcodecs); both codecs return a fresh array, whose first touch
costs about as much as the rounding itself. Ratios are to the fastest
peer and to np.copyto of the input bytes.
"""

from __future__ import annotations

import argparse

import _common  # noqa: F401  (sets BLAS threads before numpy starts)
import numcodecs
import numpy as np

from _common import ALLOC, copy_floor, fresh_floor, header, interleaved, print_table
from zdt.codecs.bitround import cached_plan
from zdt.codecs.zarr import BitroundCodec


def numpy_lower_bound(x: np.ndarray, keepbits: int):
    """Round half to even on the bit pattern, in three in-place ufunc steps (no NaN rule)."""
    bits = x.view(f"u{x.itemsize}")
    drop = np.finfo(x.dtype).nmant - keepbits
    one = bits.dtype.type(1)
    half = bits.dtype.type((1 << (drop - 1)) - 1)
    mask = bits.dtype.type(~((1 << drop) - 1) & ((1 << (8 * x.itemsize)) - 1))
    tmp = np.empty_like(bits)
    out = np.empty_like(bits)

    def run():
        np.right_shift(bits, drop, out=tmp)
        np.bitwise_and(tmp, one, out=tmp)
        np.add(tmp, half, out=tmp)
        np.add(bits, tmp, out=out)
        np.bitwise_and(out, mask, out=out)
        return out

    return run


def zarr_codec(codec, x: np.ndarray):
    """codec.encode of x as zarr's codec pipeline calls it (a fresh output per call)."""
    from zarr.core.array_spec import ArrayConfig, ArraySpec
    from zarr.core.buffer import default_buffer_prototype
    from zarr.core.buffer.cpu import NDBuffer
    from zarr.core.dtype import get_data_type_from_json

    dt = get_data_type_from_json(x.dtype.name, zarr_format=3)
    spec = ArraySpec(shape=x.shape, dtype=dt, fill_value=dt.default_scalar(),
                     config=ArrayConfig.from_dict({}), prototype=default_buffer_prototype())
    buf = NDBuffer.from_numpy_array(x)
    if hasattr(codec, "_encode_sync"):
        return lambda: codec._encode_sync(buf, spec)
    import asyncio                  # zarr's numcodecs wrappers are async only (tens of us a call)

    loop = asyncio.new_event_loop()
    return lambda: loop.run_until_complete(codec._encode_single(buf, spec))


def numcodecs_zarr_codec(keepbits: int):
    """numcodecs' BitRound as a zarr v3 codec (zarr.codecs.numcodecs since zarr 3.1.3)."""
    try:
        from zarr.codecs.numcodecs import BitRound
    except ImportError:
        return None
    return BitRound(keepbits=keepbits)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=10_000_000)
    p.add_argument("--repeat", type=int, default=9)
    args = p.parse_args()
    header("bitround")
    rng = np.random.default_rng(3)
    speedups = []
    for dtype, keepbits in (("float32", 7), ("float64", 12), ("float16", 4)):
        x = rng.lognormal(2, 1.5, args.n).astype(dtype)
        x[::1000] = np.nan
        plan = cached_plan(np.dtype(dtype), keepbits)
        out = np.empty_like(x)
        nc = numcodecs.BitRound(keepbits=keepbits)
        impls = {
            "zdt kernel (out=)": lambda p=plan, x=x, o=out: p.round(x, out=o),
            ALLOC: lambda p=plan, x=x: p.round(x),
            "zdt codec (zarr codec API)": zarr_codec(BitroundCodec(keepbits=keepbits), x),
            "numcodecs BitRound": lambda c=nc, x=x: c.encode(x),
            "numpy, preallocated (no semantics)": numpy_lower_bound(x, keepbits),
        }
        theirs = numcodecs_zarr_codec(keepbits)
        if theirs is not None:
            impls["numcodecs BitRound (zarr codec API)"] = zarr_codec(theirs, x)
        # the same answer wherever numcodecs has no NaN / largest-value problem (SPEC_NOTES)
        ok = np.isfinite(x)
        assert np.array_equal(plan.round(x)[ok].view(f"u{x.itemsize}"),
                              np.asarray(nc.encode(x)).view(f"u{x.itemsize}")[ok])
        times = interleaved(impls, args.repeat)
        print_table(f"bitround {dtype} keepbits={keepbits}, {args.n:,} values (0.1% NaN)",
                    times, copy_floor(x, args.repeat), "zdt kernel (out=)",
                    fresh=fresh_floor(x, x.dtype, args.repeat))
        codec_vs = times.get("numcodecs BitRound (zarr codec API)", times["numcodecs BitRound"])
        speedups.append((dtype, times["numcodecs BitRound"] / times["zdt kernel (out=)"],
                         codec_vs / times["zdt codec (zarr codec API)"]))
    print("\nnumcodecs BitRound / zdt: " + ", ".join(
        f"{d} kernel {k:.1f}x, codec {c:.1f}x" for d, k, c in speedups))


if __name__ == "__main__":
    main()
