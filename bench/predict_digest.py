"""SHA-256 digests over zdt.predict's chunks and their decodes: run it before and after a
change that must not change what the codec writes or reads (a refactor, a speed-up, a port),
on the same machine; each digest must be equal. Three matrices, a line each:

- absolute: shapes x float32/float64 x every predictor and auto x every entropy stage x bounds
  x fill values, on smooth, noisy and special-valued data (NaN, infinities, outliers, the fill
  value);
- relative: pointwise-relative chunks of fields spanning many powers of two, with signs,
  zeros, NaN and infinities, subnormals, huge values and the fill value, at three bounds;
- large: 1000 x 1000 and 40 x 50 x 60 chunks (auto's sample blocks, masks of land and of
  random gaps, format 3's trials, float32), absolute and relative.

    python bench/predict_digest.py [--quick]      # prints each digest and its case count
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


def absolute(quick: bool) -> tuple[str, int]:
    shapes = SHAPES[::3] if quick else SHAPES
    bounds = BOUNDS[1:2] if quick else BOUNDS
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
                                cases += _add(h, c, x, fill)
    return h.hexdigest(), cases


def _add(h: "hashlib._Hash", c: PredictConfig, x: np.ndarray, fill) -> int:
    """The chunk and its decode into the digest (or the error's type, for an input the codec
    refuses)."""
    try:
        chunk = c.encode(x, fill)
        y = c.decode(chunk, x.dtype, x.shape, fill)
        h.update(chunk)
        h.update(y.tobytes())
    except ValueError as exc:
        h.update(repr(type(exc)).encode())
    return 1


def relative_data(shape: tuple[int, ...], kind: int, dtype: str) -> np.ndarray:
    rng = np.random.default_rng(kind * 1000 + len(shape))
    n = int(np.prod(shape))
    base = np.linspace(-3, 3, n).reshape(shape) if n else np.zeros(shape)
    x = np.exp(base * (1 + kind)) * (1 + 0.01 * rng.standard_normal(shape))
    if kind >= 1:
        x = x * np.where(rng.random(shape) < 0.3, -1, 1)
    if n and kind == 2:
        x.flat[::7] = 0.0
    if n and kind == 3:
        x.flat[::11], x.flat[::13], x.flat[::17] = np.nan, np.inf, -np.inf
    if n and kind == 4:
        x = x * (1e-300 if dtype == "float64" else 1e-38)
        x.flat[::5] = 5e-324 if dtype == "float64" else 1e-45
    if n and kind == 5:
        x = x * (1e300 if dtype == "float64" else 1e37)
        x.flat[::9] = -9999.0
    with np.errstate(over="ignore", under="ignore"):
        return x.astype(dtype)


def relative(quick: bool) -> tuple[str, int]:
    shapes = [(0,), (1,), (7,), (300,), (33, 65), (9, 10, 11), (257, 3), (120, 130)]
    h = hashlib.sha256()
    cases = 0
    for shape in shapes[::3] if quick else shapes:
        for dtype in ("float32", "float64"):
            for kind in range(6):
                x = relative_data(shape, kind, dtype)
                for R in (1e-6, 1e-3, 0.3):
                    for fill in (None, -9999.0, np.nan):
                        for predictor in ("interpolation", "lorenzo", "auto"):
                            for stage in ("ans", "zstd", "auto"):
                                c = PredictConfig.create(rel_error=R, predictor=predictor,
                                                         entropy=stage)
                                cases += _add(h, c, x, fill)
    return h.hexdigest(), cases


def large(quick: bool) -> tuple[str, int]:
    rng = np.random.default_rng(5)
    i, j = np.meshgrid(np.arange(1000), np.arange(1000), indexing="ij")
    x = 100 * np.sin(i / 70) * np.cos(j / 90) + rng.normal(0, 0.3, (1000, 1000))
    land = (np.sin(i / 50) + np.cos(j / 40)) > 1.2
    masked = np.where(land, np.nan, x)
    rel = 2.0 ** (x / 300)
    noisy = rng.normal(0, 1, (700, 300)) * np.exp(rng.normal(0, 3, (700, 300)))
    gaps = np.where(rng.random((400, 500)) < 0.3, -9999.0, x[:400, :500])
    cube = np.where(rng.random((40, 50, 60)) < 0.02, np.nan,
                    rng.normal(0, 1, (40, 50, 60)).cumsum(axis=2))
    fields = [("abs", 0.5, x, None), ("abs", 0.5, masked, np.nan), ("abs", 1e-3, noisy, None),
              ("abs", 0.01, gaps, -9999.0), ("abs", 0.01, cube, np.nan),
              ("abs", 0.01, cube.astype(np.float32), np.nan), ("rel", 1e-3, rel, None),
              ("rel", 1e-2, noisy, None)]
    h = hashlib.sha256()
    cases = 0
    for predictor in ("interpolation", "lorenzo", "auto", "interpolation_slices")[: 1 if quick else 4]:
        for stage in ("ans", "zstd", "auto"):
            for kind, bound, a, fill in fields:
                c = PredictConfig.create(**{f"{kind}_error": bound}, predictor=predictor,
                                         entropy=stage)
                cases += _add(h, c, a, fill)
    return h.hexdigest(), cases


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="fewer shapes, bounds and predictors")
    args = p.parse_args()
    for name, matrix in (("absolute", absolute), ("relative", relative), ("large", large)):
        digest, cases = matrix(args.quick)
        print(f"{digest}  ({cases} chunks, {name})")


if __name__ == "__main__":
    main()
