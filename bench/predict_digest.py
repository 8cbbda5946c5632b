"""One SHA-256 over zdt.predict's chunks and their decodes on a broad matrix: run it before and
after a change that must not change what the codec writes or reads (a refactor, a speed-up),
on the same machine; the two digests must be equal. Shapes x float32/float64 x every
predictor and auto x every entropy stage x bounds x fill values, on smooth, noisy and
special-valued data (NaN, infinities, outliers, the fill value).

    python bench/predict_digest.py [--quick]      # prints the digest and the case count
"""

from __future__ import annotations

import argparse
import hashlib

import numpy as np

from zdt.codecs.predict import PredictConfig

SHAPES = [(0,), (1,), (2,), (37,), (1000,), (1, 1), (3, 5), (16, 16), (33, 65), (200, 300),
          (1, 40, 1), (9, 10, 11), (40, 30, 20), (2, 3, 4, 5), (3, 4, 2, 3, 5)]
PREDICTORS = ["lorenzo", "interpolation", "interpolation_reversed", "interpolation_slices", "auto"]
STAGES = ["zstd", "pcodec", "pcodec_levels", "ans", "auto"]
BOUNDS = [1e-4, 0.05, 2.0]
FILLS = [None, np.nan, -9999.0]


def data(shape: tuple[int, ...], kind: int, dtype: str, fill) -> np.ndarray:
    rng = np.random.default_rng(abs(hash((shape, kind))) % 2**32)
    grids = np.meshgrid(*[np.arange(n) for n in shape], indexing="ij")
    x = np.zeros(shape)
    for k, g in enumerate(grids):
        x = x + 10 * np.sin(g / (4 + 3 * k))
    x = x + rng.normal(0, [0.01, 0.3, 5.0][kind], shape)
    if kind == 2 and x.size:
        pick = rng.random(shape)
        x[pick < 0.02] = np.nan
        x[(pick > 0.02) & (pick < 0.03)] = np.inf
        x[(pick > 0.03) & (pick < 0.04)] = 1e30
        if fill is not None:
            x[pick > 0.95] = fill
    return x.astype(dtype)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="fewer shapes and bounds")
    args = p.parse_args()
    shapes = SHAPES[::3] if args.quick else SHAPES
    bounds = BOUNDS[1:2] if args.quick else BOUNDS
    h = hashlib.sha256()
    cases = 0
    for shape in shapes:
        for dtype in ("float32", "float64"):
            for kind in range(3):
                for fill in FILLS:
                    x = data(shape, kind, dtype, fill)
                    for E in bounds:
                        for predictor in PREDICTORS:
                            for stage in STAGES:
                                if predictor == "lorenzo" and stage == "pcodec_levels":
                                    continue
                                c = PredictConfig.create(abs_error=E, predictor=predictor,
                                                         entropy=stage)
                                chunk = c.encode(x, fill)
                                y = c.decode(chunk, x.dtype, x.shape, fill)
                                h.update(chunk)
                                h.update(y.tobytes())
                                cases += 1
    print(f"{h.hexdigest()}  ({cases} chunks)")


if __name__ == "__main__":
    main()
