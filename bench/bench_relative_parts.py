"""What a relative chunk costs beyond its logarithms' chunk: the relative-only passes (log2,
the check with its 2^v, signs, exact map and the packing on encode; 2^v, signs and exact
values on decode), in ms per million values, on bench_predict_sweep's relative field
(2**(x * 12 / range) of its "smooth" field, 1000 x 1000 float64) at R = 1e-4, 1e-3, 1e-2.

Each R times six calls, interleaved, min of --repeat rounds of the thread's CPU time, warm: the relative
chunk's encode and decode, and its logarithms' chunk's alone (encoded from the logarithms the
chunk decodes to, with its b and fill value; decoded from the chunk's own bytes). The
relative-only time is the difference; SZ3's log-domain time (numpy's log2 and exp2 with
SZ3 on log2 x, as bench_predict_sweep) is printed beside it.

    python bench/bench_relative_parts.py [--repeat 15] [--field smooth|ridges]
"""

from __future__ import annotations

import argparse
import math
import struct
import time

import _common  # noqa: F401  (sets BLAS threads before numpy starts)
import numpy as np
from _common import fastest
from bench_predict_sweep import FIELDS, sz_config

from zdt.codecs.predict import PredictConfig


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeat", type=int, default=15)
    p.add_argument("--field", default="smooth")
    p.add_argument("--no-sz", action="store_true")
    args = p.parse_args()
    x = FIELDS[args.field](1000)
    span = float(x.max() - x.min())
    pos = np.exp2(x / (span / 12))
    million = pos.size / 1e6
    print(f"relative-only parts, {args.field}, 1000 x 1000 float64, ms per million values, "
          f"min of {args.repeat}")
    for R in (1e-4, 1e-3, 1e-2):
        config = PredictConfig.create(rel_error=R)
        chunk = config.encode(pos, np.nan)
        kind, log_fill, b, length = chunk[4], struct.unpack_from("<H", chunk, 6)[0], \
            struct.unpack_from("<d", chunk, 8)[0], struct.unpack_from("<Q", chunk, 24)[0]
        inner = chunk[32:32 + length]
        fill = [-math.inf, math.nan][log_fill]
        logs_config = PredictConfig.create(abs_error=b)
        logs = logs_config.decode(inner, np.dtype("f8"), pos.shape, fill)
        enc = {"relative": lambda: config.encode(pos, np.nan),
               "logarithms": lambda: logs_config.encode(logs, fill)}
        dec = {"relative": lambda: config.decode(chunk, pos.dtype, pos.shape, np.nan),
               "logarithms": lambda: logs_config.decode(inner, np.dtype("f8"), pos.shape, fill)}
        if not args.no_sz:
            from pysz import sz

            szc = sz_config(math.log2(1 + R) * (1 - 1e-6))
            s = np.frombuffer(bytes(sz.compress(np.log2(pos), szc)[0]), np.uint8)
            enc["SZ3"] = lambda: sz.compress(np.log2(pos), szc)
            dec["SZ3"] = lambda: np.exp2(sz.decompress(s, pos.dtype, pos.shape)[0])
        clock = time.thread_time
        te, td = fastest(enc, args.repeat, clock), fastest(dec, args.repeat, clock)
        ms = {k: 1e3 * v / million for k, v in te.items()}
        md = {k: 1e3 * v / million for k, v in td.items()}
        line = (f"  R = {R:g} (kind {kind}, {len(chunk):,} bytes): encode {ms['relative']:.2f} = "
                f"logarithms {ms['logarithms']:.2f} + relative-only "
                f"{ms['relative'] - ms['logarithms']:.2f}; decode {md['relative']:.2f} = "
                f"logarithms {md['logarithms']:.2f} + relative-only "
                f"{md['relative'] - md['logarithms']:.2f}")
        if "SZ3" in ms:
            line += (f"; SZ3 log domain enc {ms['SZ3']:.2f} ({ms['relative'] / ms['SZ3']:.2f}x) "
                     f"dec {md['SZ3']:.2f} ({md['relative'] / md['SZ3']:.2f}x)")
        print(line)


if __name__ == "__main__":
    main()
