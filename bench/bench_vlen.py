"""Variable-length strings and bytes: zdt against numcodecs, zarr's built-in codecs and pyarrow.

    python bench/bench_vlen.py [--n 1000000] [--repeat 7]

Data: 1M strings of 0..32 characters, 20% with non-ASCII characters (and the same as UTF-8
bytes for vlen-bytes). Encode and decode, from / to StringDType (what zarr's string data type
holds) and object arrays. zarr's built-in codecs are driven through their codec objects, as
zarr's pipeline does; pyarrow builds / converts a StringArray. The Arrow-offsets layout
(zdt.vlen_arrow) is timed next to vlen-utf8. Ratios are to the fastest peer and to np.copyto of
the vlen chunk's bytes (what every implementation must at least read or write).
"""

from __future__ import annotations

import argparse
import os

import _common  # noqa: F401  (sets BLAS threads before numpy starts)
import numcodecs
import numpy as np

from _common import copy_floor, header, interleaved, print_table
from zdt.codecs import vlen

try:
    import pyarrow as pa
except ImportError:
    pa = None

SDT = np.dtypes.StringDType()


def make_strings(n: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    ascii_chars = np.array(list("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 _-"))
    other = np.array(list("éüßøñçåλπд日本語中文🙂€"))
    pool = []
    for i in range(4096):      # a pool of distinct strings, reused (building 1M in Python is slow)
        length = rng.integers(0, 33)
        chars = rng.choice(ascii_chars, length)
        if i % 5 == 0 and length:
            chars[rng.integers(0, length)] = rng.choice(other)
        pool.append("".join(chars))
    return np.array([pool[j] for j in rng.integers(0, len(pool), n)], dtype=object)


def zarr_spec(n: int, dtype):
    from zarr.core.array_spec import ArrayConfig, ArraySpec
    from zarr.core.buffer import default_buffer_prototype

    return ArraySpec(shape=(n,), dtype=dtype, fill_value=dtype.default_scalar(),
                     config=ArrayConfig.from_dict({}), prototype=default_buffer_prototype())


def main() -> None:
    import warnings

    from zarr.codecs.vlen_utf8 import VLenBytesCodec as ZarrVLenBytes
    from zarr.codecs.vlen_utf8 import VLenUTF8Codec as ZarrVLenUTF8
    from zarr.core.buffer.cpu import Buffer, NDBuffer
    from zarr.core.dtype import VariableLengthBytes, VariableLengthUTF8

    from zdt.codecs.zarr import VLenArrowCodec, VLenBytesCodec, VLenUTF8Codec

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    header("bench_vlen")
    n = args.n
    obj = make_strings(n)
    sdt = obj.astype(SDT)
    obj_bytes = np.array([s.encode() for s in obj], dtype=object)
    nbytes = sum(len(s) for s in obj_bytes)
    print(f"{n:,} strings, {nbytes / n:.1f} UTF-8 bytes on average, "
          f"{np.mean([not s.isascii() for s in obj[:100000]]):.0%} non-ASCII")

    spec_s = zarr_spec(n, VariableLengthUTF8())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        spec_b = zarr_spec(n, VariableLengthBytes())
    nc_utf8, nc_bytes = numcodecs.VLenUTF8(), numcodecs.VLenBytes()
    chunk = bytes(nc_utf8.encode(obj))
    chunk_b = bytes(nc_bytes.encode(obj_bytes))
    arrow_chunk = vlen.encode(sdt, utf8=True, layout=vlen.ARROW)
    arrow_chunk_b = vlen.encode(obj_bytes, utf8=False, layout=vlen.ARROW)
    sdt_buf, obj_buf, objb_buf = NDBuffer.from_numpy_array(sdt), NDBuffer.from_numpy_array(obj), NDBuffer.from_numpy_array(obj_bytes)
    cb, cb_b = Buffer.from_bytes(chunk), Buffer.from_bytes(chunk_b)
    ab, ab_b = Buffer.from_array_like(arrow_chunk), Buffer.from_array_like(arrow_chunk_b)
    ours_s, ours_b, ours_a = VLenUTF8Codec(), VLenBytesCodec(), VLenArrowCodec()
    theirs_s, theirs_b = ZarrVLenUTF8(), ZarrVLenBytes()
    pa_arr = pa.array(obj, type=pa.string()) if pa else None
    pa_arr_b = pa.array(obj_bytes, type=pa.binary()) if pa else None
    r = args.repeat
    floor_s = copy_floor(np.frombuffer(chunk, np.uint8), r)
    floor_b = copy_floor(np.frombuffer(chunk_b, np.uint8), r)

    def table(title, impls, ours, floor):
        return print_table(title, interleaved(impls, r), floor, ours)["times"]

    results = {}
    impls = {
        "zdt vlen-utf8 codec": lambda: ours_s._encode_sync(sdt_buf, spec_s),
        "zdt zdt.vlen_arrow codec": lambda: ours_a._encode_sync(sdt_buf, spec_s),
        "zarr built-in vlen-utf8 codec": lambda: theirs_s._encode_sync(sdt_buf, spec_s),
        "numcodecs VLenUTF8 (StringDType input)": lambda: nc_utf8.encode(sdt),
    }
    if pa:
        impls["pyarrow pa.array(StringDType)"] = lambda: pa.array(sdt)
    results["encode from StringDType"] = table("encode from StringDType", impls, "zdt vlen-utf8 codec", floor_s)

    impls = {
        "zdt vlen-utf8 codec": lambda: ours_s._decode_sync(cb, spec_s),
        "zdt zdt.vlen_arrow codec": lambda: ours_a._decode_sync(ab, spec_s),
        "zarr built-in vlen-utf8 codec": lambda: theirs_s._decode_sync(cb, spec_s),
    }
    if pa:
        impls["pyarrow StringArray -> StringDType"] = lambda: pa_arr.to_numpy(zero_copy_only=False).astype(SDT)
    results["decode into StringDType"] = table("decode into StringDType", impls, "zdt vlen-utf8 codec", floor_s)

    impls = {
        "zdt vlen-utf8 (objects)": lambda: vlen.encode(obj, utf8=True),
        "numcodecs VLenUTF8": lambda: nc_utf8.encode(obj),
    }
    if pa:
        impls["pyarrow pa.array(objects)"] = lambda: pa.array(obj, type=pa.string())
    results["encode from objects (str)"] = table("encode from object arrays of str", impls, "zdt vlen-utf8 (objects)", floor_s)

    impls = {
        "zdt vlen-utf8 (objects)": lambda: vlen.decode(chunk, (n,), utf8=True, dtype=object),
        "numcodecs VLenUTF8": lambda: nc_utf8.decode(chunk),
    }
    if pa:
        impls["pyarrow StringArray.to_numpy"] = lambda: pa_arr.to_numpy(zero_copy_only=False)
    results["decode into objects (str)"] = table("decode into object arrays of str", impls, "zdt vlen-utf8 (objects)", floor_s)

    impls = {
        "zdt vlen-bytes codec": lambda: ours_b._encode_sync(objb_buf, spec_b),
        "zdt zdt.vlen_arrow codec (bytes)": lambda: ours_a._encode_sync(objb_buf, spec_b),
        "zarr built-in vlen-bytes codec": lambda: theirs_b._encode_sync(objb_buf, spec_b),
        "numcodecs VLenBytes": lambda: nc_bytes.encode(obj_bytes),
    }
    if pa:
        impls["pyarrow pa.array(bytes objects)"] = lambda: pa.array(obj_bytes, type=pa.binary())
    results["vlen-bytes encode"] = table("vlen-bytes encode (object arrays of bytes)", impls, "zdt vlen-bytes codec", floor_b)

    impls = {
        "zdt vlen-bytes codec": lambda: ours_b._decode_sync(cb_b, spec_b),
        "zdt zdt.vlen_arrow codec (bytes)": lambda: ours_a._decode_sync(ab_b, spec_b),
        "zarr built-in vlen-bytes codec": lambda: theirs_b._decode_sync(cb_b, spec_b),
        "numcodecs VLenBytes": lambda: nc_bytes.decode(chunk_b),
    }
    if pa:
        impls["pyarrow BinaryArray.to_numpy"] = lambda: pa_arr_b.to_numpy(zero_copy_only=False)
    results["vlen-bytes decode"] = table("vlen-bytes decode (object arrays of bytes)", impls, "zdt vlen-bytes codec", floor_b)

    print("\nsummary (speed-up = peer time / zdt time; > 1 means zdt is faster)")
    rows = [
        ("encode from StringDType vs zarr", "encode from StringDType", "zarr built-in vlen-utf8 codec", "zdt vlen-utf8 codec"),
        ("decode into StringDType vs zarr", "decode into StringDType", "zarr built-in vlen-utf8 codec", "zdt vlen-utf8 codec"),
        ("encode from objects vs numcodecs", "encode from objects (str)", "numcodecs VLenUTF8", "zdt vlen-utf8 (objects)"),
        ("decode into objects vs numcodecs", "decode into objects (str)", "numcodecs VLenUTF8", "zdt vlen-utf8 (objects)"),
        ("vlen-bytes encode vs numcodecs", "vlen-bytes encode", "numcodecs VLenBytes", "zdt vlen-bytes codec"),
        ("vlen-bytes decode vs numcodecs", "vlen-bytes decode", "numcodecs VLenBytes", "zdt vlen-bytes codec"),
        ("arrow layout encode vs vlen-utf8 (zdt)", "encode from StringDType", "zdt vlen-utf8 codec", "zdt zdt.vlen_arrow codec"),
        ("arrow layout decode vs vlen-utf8 (zdt)", "decode into StringDType", "zdt vlen-utf8 codec", "zdt zdt.vlen_arrow codec"),
    ]
    for label, table_name, peer, us in rows:
        t = results[table_name]
        print(f"  {label:44s} {t[peer] / t[us]:6.2f}x")

    threads_table(sdt, n, r, {"zdt vlen-utf8": (ours_s, spec_s), "zarr built-in vlen-utf8": (theirs_s, spec_s)})


def threads_table(sdt: np.ndarray, n: int, repeat: int, codecs: dict) -> None:
    """Chunk-parallel encode / decode of one StringDType array: the chunks share the array's
    string allocator (and its lock); decoded chunks are new arrays, each with its own."""
    from concurrent.futures import ThreadPoolExecutor

    from zarr.core.buffer.cpu import Buffer, NDBuffer

    per = max(1, n // 16)
    cpus = os.cpu_count() or 1
    bounds = [(i, min(i + per, n)) for i in range(0, n, per)]
    print(f"\nthreads: {len(bounds)} chunks of {per:,} strings of one StringDType array, "
          f"1 thread vs {cpus} (speed-up = 1-thread time / {cpus}-thread time)")
    print(f"  {'codec':28s} {'encode 1':>9s} {'encode N':>9s} {'speed-up':>9s} "
          f"{'decode 1':>9s} {'decode N':>9s} {'speed-up':>9s}")
    pools = {1: ThreadPoolExecutor(1), cpus: ThreadPoolExecutor(cpus)}
    for name, (codec, spec) in codecs.items():
        cspec = zarr_spec(per, spec.dtype)
        bufs = [NDBuffer.from_numpy_array(sdt[a:b]) for a, b in bounds]
        encoded = [Buffer.from_array_like(np.asarray(codec._encode_sync(x, cspec).as_numpy_array()))
                   for x in bufs]
        encoded = [e for e, (a, b) in zip(encoded, bounds) if b - a == per]

        def run(pool, fn, items):
            return lambda: list(pool.map(fn, items))

        enc = lambda x, c=codec, sp=cspec: c._encode_sync(x, sp)      # noqa: E731
        dec = lambda x, c=codec, sp=cspec: c._decode_sync(x, sp)      # noqa: E731
        t = interleaved({f"e{k}": run(p, enc, bufs) for k, p in pools.items()}
                        | {f"d{k}": run(p, dec, encoded) for k, p in pools.items()}, repeat)
        print(f"  {name:28s} {t['e1'] * 1e3:9.1f} {t[f'e{cpus}'] * 1e3:9.1f} {t['e1'] / t[f'e{cpus}']:8.2f}x "
              f"{t['d1'] * 1e3:9.1f} {t[f'd{cpus}'] * 1e3:9.1f} {t['d1'] / t[f'd{cpus}']:8.2f}x")
    for p in pools.values():
        p.shutdown()


if __name__ == "__main__":
    main()
