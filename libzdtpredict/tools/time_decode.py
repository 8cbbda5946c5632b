"""Decode time of the C library against zdt's Cython decoder, side by side in one run, on
fields of 1e6 elements (1000 x 1000: a smooth field with noise, as bench_predict's; the same
with 20% of it masked by a fill value; a relative bound), each chunk written by zdt's encoder.
The best of `--repeat` alternating runs of each.

    PYTHONPATH=/work/wt-ccore /work/main/.venv/bin/python libzdtpredict/tools/time_decode.py
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from zdt_predict_ctypes import Library  # noqa: E402

from zdt.codecs.predict import PredictConfig  # noqa: E402


def smooth(n: int, rng: np.random.Generator) -> np.ndarray:
    i, j = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
    return 50 * np.sin(i / 97.0) * np.cos(j / 61.0) + 20 * np.sin((i + 2 * j) / 211.0) + \
        rng.normal(0, 0.3, (n, n))


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", default=None)
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()
    lib = Library(args.lib)
    rng = np.random.default_rng(1)
    base = smooth(1000, rng)
    masked = base.copy()
    masked[(np.indices(base.shape)[0] - 500) ** 2 + (np.indices(base.shape)[1] - 300) ** 2 <
           250 ** 2] = -9999.0
    rows = [
        ("float64 abs 0.5, lorenzo", base, {"abs_error": 0.5, "predictor": "lorenzo"}, None),
        ("float64 abs 0.5, interpolation", base, {"abs_error": 0.5, "predictor": "interpolation"}, None),
        ("float64 abs 0.05, interpolation, zstd", base,
         {"abs_error": 0.05, "predictor": "interpolation", "entropy": "zstd"}, None),
        ("float32 abs 0.5, interpolation", base.astype(np.float32),
         {"abs_error": 0.5, "predictor": "interpolation"}, None),
        ("float64 abs 0.5, masked 20%", masked, {"abs_error": 0.5, "predictor": "interpolation"},
         -9999.0),
        ("float64 rel 1e-3", np.abs(base) + 1.0, {"rel_error": 1e-3, "predictor": "interpolation"},
         None),
    ]
    print(f"libzdt-predict {lib.version}; best of {args.repeat}, ms per 1e6-element chunk")
    print(f"{'field':42} {'bytes':>9} {'Cython':>8} {'C':>8} {'C/Cython':>9}")
    for label, x, cfg, fill in rows:
        config = PredictConfig.create(**cfg)
        data = config.encode(x, fill)
        best_py = best_c = float("inf")
        for _ in range(args.repeat):
            t = time.perf_counter()
            y = config.decode(data, x.dtype, x.shape, fill)
            best_py = min(best_py, time.perf_counter() - t)
            t = time.perf_counter()
            z = lib.decode(data, x.dtype, x.shape, config.abs_error, fill)
            best_c = min(best_c, time.perf_counter() - t)
        assert y.tobytes() == z.tobytes(), label
        print(f"{label:42} {len(data):9} {best_py * 1e3:8.2f} {best_c * 1e3:8.2f} "
              f"{best_c / best_py:9.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
