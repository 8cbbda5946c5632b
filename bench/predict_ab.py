"""Two builds of zdt side by side: zdt.predict's encode and decode times on the same fields,
each build in a child process of its own, the two alternating (this VM drifts), medians.

    python bench/predict_ab.py OLD_TREE NEW_TREE [--rounds 5]

Fields (1000 x 1000, float64, bench_predict's smooth field with noise): interpolation, Lorenzo
and auto at abs_error 0.5; a masked chunk (a NaN land mask); a relative chunk (2**(field/300),
rel_error 1e-3). Prints each case's time in ms for both and new / old.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

CHILD = r'''
import json, sys, time
import numpy as np
from zdt.codecs.predict import PredictConfig
rng = np.random.default_rng(5)
i, j = np.meshgrid(np.arange(1000), np.arange(1000), indexing="ij")
x = 100 * np.sin(i / 70) * np.cos(j / 90) + rng.normal(0, 0.3, (1000, 1000))
land = (np.sin(i / 50) + np.cos(j / 40)) > 1.2
masked = np.where(land, np.nan, x)
rel = 2.0 ** (x / 300)
cases = {"interpolation": (PredictConfig.create(abs_error=0.5, predictor="interpolation"), x, None),
         "lorenzo": (PredictConfig.create(abs_error=0.5, predictor="lorenzo"), x, None),
         "auto": (PredictConfig.create(abs_error=0.5), x, None),
         "masked": (PredictConfig.create(abs_error=0.5, predictor="interpolation"), masked, np.nan),
         "relative": (PredictConfig.create(rel_error=1e-3, predictor="interpolation"), rel, None)}
out = {}
for name, (config, a, fill) in cases.items():
    enc, dec = [], []
    for _ in range(3):
        t = time.perf_counter(); data = config.encode(a, fill); enc.append(time.perf_counter() - t)
        t = time.perf_counter(); config.decode(data, a.dtype, a.shape, fill); dec.append(time.perf_counter() - t)
    out[name] = (min(enc), min(dec), len(data))
print(json.dumps(out))
'''


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("old")
    p.add_argument("new")
    p.add_argument("--rounds", type=int, default=5)
    args = p.parse_args()
    runs: dict[str, list[dict]] = {"old": [], "new": []}
    for _ in range(args.rounds):
        for which in ("old", "new"):
            env = {**os.environ, "PYTHONPATH": getattr(args, which)}
            text = subprocess.run([sys.executable, "-c", CHILD], env=env, cwd="/",
                                  capture_output=True, text=True, check=True).stdout
            runs[which].append(json.loads(text))
    print(f"{'case':14} {'enc old':>8} {'enc new':>8} {'ratio':>6} {'dec old':>8} {'dec new':>8} "
          f"{'ratio':>6} {'bytes equal':>12}")
    for name in runs["old"][0]:
        med = {w: [statistics.median(r[name][k] for r in runs[w]) for k in range(2)] for w in runs}
        same = runs["old"][0][name][2] == runs["new"][0][name][2]
        print(f"{name:14} {1e3 * med['old'][0]:8.1f} {1e3 * med['new'][0]:8.1f} "
              f"{med['new'][0] / med['old'][0]:6.2f} {1e3 * med['old'][1]:8.1f} "
              f"{1e3 * med['new'][1]:8.1f} {med['new'][1] / med['old'][1]:6.2f} {str(same):>12}")


if __name__ == "__main__":
    main()
