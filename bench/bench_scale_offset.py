"""scale_offset: zdt against its peers, 10M elements, encode and decode.

    python bench/bench_scale_offset.py [--n 10000000] [--repeat 9]

Peers (whichever are installed): zarr's built-in scale_offset codec (zarr >= 3.2), numcodecs'
FixedScaleOffset (astype = dtype, so it adds np.around and a cast but no narrowing), and the
plain NumPy expression into a preallocated array (no checks). zdt is timed as its kernel with
`out=` and as its zarr codec. Then the two-codec chain [scale_offset, cast_value uint8] of the
spec's example, through zdt's and zarr's codec objects. Ratios are to the fastest peer and to
np.copyto of the input bytes.
"""

from __future__ import annotations

import argparse

import _common  # noqa: F401  (sets BLAS threads before numpy starts)
import numcodecs
import numpy as np

from _common import ALLOC, copy_floor, fresh_floor, header, interleaved, print_table
from zdt.codecs.scale_offset import cached_plan

try:
    from zarr.codecs.scale_offset import ScaleOffset as ZarrScaleOffset
except ImportError:
    ZarrScaleOffset = None
try:
    import cast_value_rs  # noqa: F401  zarr's cast_value needs it
    from zarr.codecs.cast_value import CastValue as ZarrCastValue
except ImportError:
    ZarrCastValue = None


def spec_for(arr: np.ndarray, dtype_name: str | None = None):
    from zarr.core.array_spec import ArrayConfig, ArraySpec
    from zarr.core.buffer import default_buffer_prototype
    from zarr.core.dtype import get_data_type_from_json

    dt = get_data_type_from_json(dtype_name or arr.dtype.name, zarr_format=3)
    return ArraySpec(shape=arr.shape, dtype=dt, fill_value=dt.default_scalar(),
                     config=ArrayConfig.from_dict({}), prototype=default_buffer_prototype())


def buffer(arr: np.ndarray):
    from zarr.core.buffer.cpu import NDBuffer

    return NDBuffer.from_numpy_array(arr)


def alone(args: argparse.Namespace) -> list:
    from zdt.codecs.zarr import ScaleOffsetCodec

    rng = np.random.default_rng(1)
    cases = [
        ("float64", rng.uniform(0, 2540, args.n), -10, 0.1),
        ("int32", rng.integers(1000, 500_000, args.n, dtype=np.int32), 1000, 3),
        ("int16", rng.integers(-3000, 3000, args.n, dtype=np.int16), -100, 7),
        ("uint8", rng.integers(20, 80, args.n, dtype=np.uint8), 20, 3),
    ]
    rows = []
    for dtype, data, offset, scale in cases:
        plan = cached_plan(dtype, offset, scale)
        encoded = plan.encode(data)
        for direction, src in (("encode", data), ("decode", encoded)):
            decode = direction == "decode"
            out = np.empty_like(src)
            spec, buf = spec_for(src), buffer(src)
            ours = ScaleOffsetCodec(offset=offset, scale=scale)
            impls = {
                "zdt kernel (out=)": (lambda p=plan, s=src, o=out: p.decode(s, out=o)) if decode
                else (lambda p=plan, s=src, o=out: p.encode(s, out=o)),
                ALLOC: (lambda p=plan, s=src: p.decode(s)) if decode
                else (lambda p=plan, s=src: p.encode(s)),
                "zdt codec (zarr pipeline API)": (lambda: ours._decode_sync(buf, spec)) if decode
                else (lambda: ours._encode_sync(buf, spec)),
            }
            if ZarrScaleOffset is not None:
                theirs = ZarrScaleOffset(offset=offset, scale=scale)
                impls["zarr built-in codec"] = (lambda: theirs._decode_sync(buf, spec)) if decode \
                    else (lambda: theirs._encode_sync(buf, spec))
            fso = numcodecs.FixedScaleOffset(offset=offset, scale=scale, dtype=dtype, astype=dtype)
            impls["numcodecs FixedScaleOffset"] = (lambda: fso.decode(src)) if decode else (lambda: fso.encode(src))
            if decode:
                impls["numpy expression (no checks)"] = lambda: np.add(np.divide(src, scale, out=out, casting="unsafe"), offset, out=out, casting="unsafe")
            else:
                impls["numpy expression (no checks)"] = lambda: np.multiply(np.subtract(src, offset, out=out, casting="unsafe"), scale, out=out, casting="unsafe")
            times = interleaved(impls, args.repeat)
            floor = copy_floor(src, args.repeat)
            name = f"{dtype} {direction} (offset={offset}, scale={scale})"
            row = print_table(name, times, floor, "zdt kernel (out=)", note=f"{src.size:,} x {dtype}",
                              fresh=fresh_floor(src, src.dtype, args.repeat))
            row["vs_zarr"] = times["zdt codec (zarr pipeline API)"] / times.get("zarr built-in codec", float("nan"))
            rows.append((name, row))
    return rows


def chain(args: argparse.Namespace) -> list:
    """The spec's float64 -> uint8 example: [scale_offset(-10, 0.1), cast_value(uint8, NaN<->0)]."""
    from zdt.codecs.zarr import CastValueCodec, ScaleOffsetCodec

    rng = np.random.default_rng(2)
    data = rng.uniform(0, 2540, args.n)
    data[rng.random(args.n) < 0.01] = np.nan
    cv = dict(data_type="uint8", rounding="nearest-even",
              scalar_map={"encode": [["NaN", 0]], "decode": [[0, "NaN"]]})
    so = dict(offset=-10, scale=0.1)
    spec64, spec8 = spec_for(data), spec_for(data, "uint8")
    zdt_codecs = (ScaleOffsetCodec(**so), CastValueCodec(**cv))
    impls_enc = {"zdt codecs": zdt_codecs}
    if ZarrScaleOffset is not None and ZarrCastValue is not None:
        impls_enc["zarr built-in codecs"] = (ZarrScaleOffset(**so), ZarrCastValue(**cv))
    buf = buffer(data)
    encoded = zdt_codecs[1]._encode_sync(zdt_codecs[0]._encode_sync(buf, spec64), spec64)
    rows = []
    for direction in ("encode", "decode"):
        impls = {}
        for name, (s_codec, c_codec) in impls_enc.items():
            if direction == "encode":
                impls[name] = lambda s=s_codec, c=c_codec: c._encode_sync(s._encode_sync(buf, spec64), spec64)
            else:
                impls[name] = lambda s=s_codec, c=c_codec: s._decode_sync(c._decode_sync(encoded, spec64), spec64)
        times = interleaved(impls, args.repeat)
        src = data if direction == "encode" else encoded.as_numpy_array()
        floor = copy_floor(src, args.repeat)
        name = f"chain float64 -> [scale_offset, cast_value uint8] {direction}"
        row = print_table(name, times, floor, "zdt codecs", note="spec example, 1% NaN",
                          fresh=fresh_floor(src, np.uint8 if direction == "encode" else np.float64,
                                            args.repeat))
        row["vs_zarr"] = times["zdt codecs"] / times.get("zarr built-in codecs", float("nan"))
        rows.append((name, row))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=10_000_000)
    parser.add_argument("--repeat", type=int, default=9)
    args = parser.parse_args()
    header("bench_scale_offset")
    print("peers:", ", ".join(p for p, ok in [("zarr built-in", ZarrScaleOffset is not None),
                                              ("numcodecs", True), ("numpy", True)] if ok))
    rows = alone(args) + chain(args)
    print("\nsummary (time ratios; < 1 means zdt is faster)")
    print(f"  {'workload':58s} {'zdt/zarr':>9s} {'zdt/copy':>9s}")
    for name, r in rows:
        print(f"  {name:58s} {r['vs_zarr']:9.2f} {r['ours'] / r['floor']:9.2f}")


if __name__ == "__main__":
    main()
