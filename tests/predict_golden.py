"""Golden zdt.predict chunks: written once per chunk format, committed, decoded by every later
version of zdt bit for bit (a decoder that cannot read an older chunk is a bug).

Each case is a chunk's data, given by a formula in exact integer arithmetic (the same floats on
every platform and NumPy version: no RNG, no libm), the codec configuration that wrote it and
the face (the zarr v3 codec's chunk, or the numcodecs codec's buffer, which carries its shape).
The matrix covers every predictor x entropy stage x data type, the four stage 3 context models,
wide codes (tokens with extra bits), raw values (NaN, infinities, outliers), fill-value
symbols, chunks of 0 to 5 dimensions (extents of 1 dropped, dimensions beyond four merged),
the empty chunk, integer arrays (kept values escaped, the fill value, the type's range),
format 2's pointwise-relative chunks (zeros, signs, exact values) and its masked chunks (a mask
repeated along the first axis; every predictor x stage, float32, integers, all masked) and
format 3's chunks with a step for each interpolation level (each interpolating predictor x
stage, float32, masked, relative, integers), and masked chunks whose mask looks back at the
configuration's reference mask; and (v2.8) what those never exercised: Lorenzo under stage 3's
models 2 and 3, fill-value symbols (class 4) under models 2 and 3, a relative chunk's exact
map, reference masks of chunks of 1, 2 and 4 dimensions (and 5 merged to 4), format 3 by
slices whose first level is not the chunk's, stage 2 with extents of 1 dropped and five
dimensions merged (tests/codecs/test_predict_golden_paths.py parses each chunk to show it);
and (v2.9) relative chunks of kind 3, 2^v by a table, values at both ends of float64's range
among them; and (v2.10) relative chunks of kind 4, signs coded by tiles and contexts.
What decoding must give: the SHA-256 of the decoded bytes when the chunk was written (in the
manifest), which the independent reference decoder (tests/predict_reference.py) must
reproduce, within the bound of the data.

    python tests/predict_golden.py write tests/fixtures/predict/v2 --all   (a new format: every
                                                                          case)
    python tests/predict_golden.py write tests/fixtures/predict/v1.1       (new cases of the same
                                                                          format: those no
                                                                          earlier version holds)
    python tests/predict_golden.py write tests/fixtures/predict/v2.2 --changed   (the new cases,
                                                                          and those this version
                                                                          writes differently)

never over an existing directory. tests/codecs/test_predict_golden.py reads every committed
version, and checks that this version's encoder still writes the very chunks of the newest
version that holds each case.
"""

from __future__ import annotations

import hashlib
import json
import math
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

GOLDEN = Path(__file__).parent / "fixtures" / "predict"
FILL = -9999.0


def noise(shape: tuple[int, ...], seed: int) -> np.ndarray:
    """Integers in [-512, 511], a hash of each flat index (uint64 arithmetic, which wraps)."""
    i = np.arange(math.prod(shape), dtype=np.uint64)
    h = (i + np.uint64(seed)) * np.uint64(0x9E3779B97F4A7C15)
    h ^= h >> np.uint64(29)
    h *= np.uint64(0xBF58476D1CE4E5B9)
    h ^= h >> np.uint64(32)
    return ((h >> np.uint64(54)).astype(np.int64) - 512).reshape(shape)


def smooth(shape: tuple[int, ...]) -> np.ndarray:
    """A smooth field: a product of parabolas over the indices, integers in [0, 2^20]."""
    x = np.full(shape, 1 << 20, dtype=np.int64)
    for d, n in enumerate(shape):
        g = np.arange(n, dtype=np.int64).reshape([-1 if e == d else 1 for e in range(len(shape))])
        x = x * (g * (2 * n - g) + n * n) // (2 * n * n)
    return x


def patches(shape: tuple[int, ...]) -> np.ndarray:
    """An amplitude of 0, 1, 4 or 16 for each block of 16 along every dimension (a hash of the
    block's place): quiet and noisy regions, so neighbours' codes tell about each other."""
    if not shape:
        return np.ones((), dtype=np.int64)
    blocks = np.zeros(shape, dtype=np.int64)
    for d, n in enumerate(shape):
        g = np.arange(n, dtype=np.int64).reshape([-1 if e == d else 1 for e in range(len(shape))])
        blocks = blocks * 64 + g // 16
    h = noise((int(blocks.max()) + 1,), 5)[blocks] & 3
    return np.array([0, 1, 4, 16], dtype=np.int64)[h]


def make(shape: tuple[int, ...], *, wave: int = 1, noise_amp: int = 1, scale: int = 16,
         patchy: bool = False, specials: bool = False, fill: bool = False,
         seed: int = 1) -> Callable[[str], np.ndarray]:
    """A chunk: (smooth * wave + noise * noise_amp [* patches]) / 2^scale, exact in float32 and
    float64 (integers below 2^24 over a power of two); with `specials`, NaN, +-inf, 1e30 and
    -0.0 at hashed places; with `fill`, the fill value FILL at others."""
    def data(dtype: str) -> np.ndarray:
        ints = smooth(shape) * wave // 64 + noise(shape, seed) * noise_amp * (
            patches(shape) if patchy else 1)
        assert not ints.size or np.abs(ints).max() < 2 ** 24
        x = ints.astype(np.float64) / float(2 ** scale)
        where = noise(shape, seed + 7)
        if specials:
            x[where == 100] = np.nan
            x[where == 200] = np.inf
            x[where == -300] = -np.inf
            x[where == 400] = 1e30
            x[where == -400] = -0.0
        if fill:
            x[(where > -4) & (where < 4)] = FILL
        return x.astype(dtype)
    return data


@dataclass(frozen=True)
class Case:
    name: str
    data: Callable[[str], np.ndarray]
    shape: tuple[int, ...]
    dtype: str
    config: dict
    fill: float | None = None
    face: str = "zarr"          # "zarr": the v3 codec's chunk; "numcodecs": the buffer


def _cases() -> list[Case]:
    out = []
    predictors = ["lorenzo", "interpolation", "interpolation_reversed", "interpolation_slices"]
    stages = ["zstd", "pcodec", "pcodec_levels", "ans"]
    two_d = (19, 27)
    for dtype in ("float64", "float32"):
        for p in predictors:
            for s in stages:
                if p == "lorenzo" and s == "pcodec_levels":
                    continue
                out.append(Case(f"{dtype}-{p}-{s}", make(two_d, wave=64, noise_amp=3, specials=True, fill=True),
                                two_d, dtype, {"abs_error": 0.01, "predictor": p, "entropy": s},
                                fill=FILL))
    # the shapes: 1-d, 3-d, extents of 1, five dimensions (the first two merged), one element,
    # the empty chunk; each predictor with stage 3
    shapes = {"1d": (200,), "3d": (7, 9, 11), "ones": (1, 23, 1, 17), "5d": (3, 2, 4, 5, 6),
              "one": (1, 1), "empty": (0, 5)}
    for label, shape in shapes.items():
        for p in predictors:
            out.append(Case(f"{label}-{p}-ans", make(shape, wave=16, noise_amp=2, specials=True),
                            shape,
                            "float64", {"abs_error": 0.003, "predictor": p, "entropy": "ans"},
                            fill=None))
    # stage 3's four context models: chosen by the chunk's size and how its codes spread
    models = {0: ((40, 40), 0.001, False), 1: ((24, 24), 0.02, False), 2: ((128, 128), 0.004, True),
              3: ((384, 384), 0.02, True)}
    for model, (shape, E, patchy) in models.items():
        out.append(Case(f"ans-model{model}", make(shape, wave=64, patchy=patchy), shape, "float32",
                        {"abs_error": E, "predictor": "interpolation", "entropy": "ans"}))
    # wide codes: tokens with extra bits (noise far above the bound), stage 3 and zstd
    for s in ("ans", "zstd"):
        out.append(Case(f"wide-{s}", make((60, 70), wave=64, noise_amp=300), (60, 70), "float64",
                        {"abs_error": 0.001, "predictor": "lorenzo", "entropy": s}))
    # the default configuration (auto, auto) on a chunk with a fill value
    out.append(Case("auto-fill", make((64, 48), wave=64, specials=True, fill=True), (64, 48), "float64",
                    {"abs_error": 0.02}, fill=FILL))
    # NaN as the fill value: every NaN is a fill-value symbol
    for s in ("ans", "zstd"):
        out.append(Case(f"nan-fill-{s}", make((30, 30), wave=64, specials=True), (30, 30),
                        "float32", {"abs_error": 0.01, "predictor": "lorenzo", "entropy": s},
                        fill=float("nan")))
    # the numcodecs face: the buffer carries the shape (no fill value in format 2)
    for s in ("ans", "zstd"):
        out.append(Case(f"numcodecs-{s}", make((12, 34), wave=64, specials=True), (12, 34), "float32",
                        {"abs_error": 0.05, "predictor": "interpolation", "entropy": s},
                        face="numcodecs"))
    # integer arrays (v1.1): the values as float64, rounded back; exact (E < 1) and whole steps;
    # a kept sentinel (escaped), the fill value, the type's extremes (clamped)
    for dtype, E in (("int16", 0.5), ("uint8", 2.0), ("int32", 7.5)):
        for p in ("lorenzo", "interpolation"):
            for s in ("ans", "zstd"):
                config = {"abs_error": E, "predictor": p, "entropy": s}
                if dtype == "int16":
                    config["keep"] = [-32768]
                out.append(Case(f"{dtype}-{p}-{s}", make_integers((23, 31), dtype), (23, 31), dtype,
                                config, fill=3))
    # pointwise-relative bounds (v2, format 2): zeros, negatives, NaN / infinities, a finite
    # fill value (stored exactly); every value exact (float32 at 1e-7); the numcodecs face
    for dtype in ("float64", "float32"):
        for p in ("lorenzo", "interpolation"):
            for s in ("ans", "zstd"):
                out.append(Case(f"rel-{dtype}-{p}-{s}", make_relative((21, 26)), (21, 26), dtype,
                                {"rel_error": 1e-3, "predictor": p, "entropy": s}, fill=FILL))
    out.append(Case("rel-nan-fill", make_relative((30, 30)), (30, 30), "float32",
                    {"rel_error": 0.01}, fill=float("nan")))
    out.append(Case("rel-every-value-exact", make_relative((9, 10)), (9, 10), "float32",
                    {"rel_error": 1e-7}))
    out.append(Case("rel-numcodecs", make_relative((3, 5, 7)), (3, 5, 7), "float64",
                    {"rel_error": 0.05, "predictor": "interpolation"}, face="numcodecs"))
    # a fill of the codec's own (v2.1): the data hold a CF _FillValue, the array's fill NaN
    marker = float(np.float32(1e20))
    for s in ("ans", "zstd"):
        out.append(Case(f"own-fill-{s}", make_marked((26, 33), marker), (26, 33), "float32",
                        {"abs_error": 0.01, "predictor": "interpolation", "entropy": s,
                         "fill": marker}, fill=float("nan")))
    # masked chunks (v2.2, format 2 kind 2): a land mask repeated along the first axis with a
    # few gaps of its own in one slice; every predictor x stage, float32, the fill NaN, an
    # integer array, every element masked (relative chunks' zeros: their logarithms' chunk
    # is a masked one, the rel-* cases from v2.2 on)
    shape3 = (5, 17, 23)
    for p in predictors:
        for s in stages:
            if p == "lorenzo" and s == "pcodec_levels":
                continue
            out.append(Case(f"masked-{p}-{s}", make_masked(shape3, FILL), shape3, "float64",
                            {"abs_error": 0.01, "predictor": p, "entropy": s}, fill=FILL))
    out.append(Case("masked-float32-nan", make_masked(shape3, float("nan")), shape3, "float32",
                    {"abs_error": 0.05}, fill=float("nan")))
    out.append(Case("masked-int16", make_masked_integers((6, 20, 21)), (6, 20, 21), "int16",
                    {"abs_error": 2.0, "predictor": "interpolation", "entropy": "ans"}, fill=-7))
    # (v2.3) a 4-d chunk: the mask stream's look-back along time at each step's first level
    out.append(Case("masked-4d", make_masked((3, 4, 9, 11), FILL), (3, 4, 9, 11), "float32",
                    {"abs_error": 0.01, "predictor": "interpolation", "entropy": "ans"}, fill=FILL))
    # (v2.4) a relative chunk of a masked field: NaN, the logarithms' fill value
    out.append(Case("rel-masked-nan", make_masked((4, 15, 19), float("nan")), (4, 15, 19),
                    "float32", {"rel_error": 1e-3, "entropy": "ans"}, fill=float("nan")))
    out.append(Case("masked-everything", lambda dtype: np.full((4, 9), FILL, dtype=dtype), (4, 9),
                    "float64", {"abs_error": 0.1}, fill=FILL))
    # (v2.6) format 3, a step for each interpolation level: a smooth field at a coarse bound
    # (its codes nearly all zero); each interpolating predictor x stage, float32, a masked
    # chunk's values, a relative chunk's logarithms, an integer array
    levels = (6, 20, 24)
    field = make(levels, wave=64, noise_amp=0, specials=True, fill=True)
    for p in predictors[1:]:
        for s in stages:
            out.append(Case(f"levels-{p}-{s}", field, levels, "float64",
                            {"abs_error": 2.0, "predictor": p, "entropy": s}, fill=FILL))
    out.append(Case("levels-float32", field, levels, "float32", {"abs_error": 2.0}, fill=FILL))
    out.append(Case("levels-masked", make_masked(levels, FILL), levels, "float64",
                    {"abs_error": 4.0}, fill=FILL))
    out.append(Case("levels-rel", make_relative(levels), levels, "float64", {"rel_error": 0.2},
                    fill=FILL))
    out.append(Case("levels-int16", make_smooth_integers(levels), levels, "int16",
                    {"abs_error": 500.0}, fill=3))
    # (v2.7) a reference mask (the configuration's `mask`: the land of `land` over 17 x 23,
    # its stream written here once): the first slice's mask looks back at it, stage 3 and zstd,
    # and an integer array
    reference = {"shape": [17, 23], "stream": "KUUMAggAAAAAAAAATI0qauSLuBcGLSOGgq18tA=="}
    for s in ("ans", "zstd"):
        out.append(Case(f"reference-mask-{s}", make_masked(shape3, FILL), shape3, "float64",
                        {"abs_error": 0.01, "entropy": s, "mask": reference}, fill=FILL))
    out.append(Case("reference-mask-int16", make_masked_integers((2, 17, 23)), (2, 17, 23),
                    "int16", {"abs_error": 2.0, "mask": reference}, fill=-7))
    # (v2.8) what the chunks above never exercise (issue 57): stage 3's models 2 and 3 under
    # Lorenzo (every Lorenzo stage 3 chunk above has model 0, where contexts change nothing)
    # and class 4 (fill-value symbols) under models 2 and 3, each predictor; chosen by the
    # chunk's size and how its codes spread, as the models above (the encoder takes the model
    # whose tables and symbols come out fewest: Lorenzo never takes model 1, which is model 0
    # with three empty tables more)
    models_fill = {"lorenzo-model2-fill": ((64, 64), 0.004, "lorenzo"),
                   "lorenzo-model3-fill": ((192, 192), 0.001, "lorenzo"),
                   "ans-model2-fill": ((128, 128), 0.004, "interpolation"),
                   "ans-model3-fill": ((384, 384), 0.02, "interpolation")}
    for name, (shape, E, p) in models_fill.items():
        out.append(Case(name, make(shape, wave=64, patchy=True, fill=True), shape, "float32",
                        {"abs_error": E, "predictor": p, "entropy": "ans"}, fill=FILL))
    # a relative chunk with an exact map: float32's largest values, whose decoded values
    # round past it to infinity (stored exactly, their logarithms left in the chunk)
    out.append(Case("rel-exact-map", make_largest((21, 26)), (21, 26), "float32",
                    {"rel_error": 0.01, "predictor": "interpolation", "entropy": "ans"},
                    fill=FILL))
    # reference masks for chunks of other dimension counts D (extents of 1 dropped, leading
    # dimensions merged down to four): D = 1 (the reference 1 x n_0), 2 (an extent of 1
    # dropped), 4 (the first time step's first level looks back at the reference, each later
    # step's first level one step back along dimension 0), and a 5-d chunk merged to D = 4
    # (the 1-d chunk's reference: its own gaps, make_masked's at hashed places)
    row = {"shape": [1, 512], "stream": "6QQCABsAAAAAAAAAGsnAyYf8w+92LZuFes+kz+irrEjHQvdF"
                                        "l62cx5aOXm6ru6/dZrEefO6EO56hz6LwXK4ySCtq"}
    for name, shape, mask in (("reference-mask-1d", (512,), row),
                              ("reference-mask-2d", (17, 1, 23), reference),
                              ("reference-mask-4d", (2, 3, 17, 23), reference),
                              ("reference-mask-5d", (2, 2, 2, 17, 23), reference)):
        out.append(Case(name, make_masked(shape, FILL), shape, "float64",
                        {"abs_error": 0.01, "entropy": "ans", "mask": mask}, fill=FILL))
    # format 3 by slices whose first level (8: slices of 8 x 9) is not the chunk's (16: 17
    # slices): each slice's first element takes its own first level's step
    first = (17, 8, 9)
    out.append(Case("levels-slices-first-level", make(first, wave=64, noise_amp=0), first,
                    "float64", {"abs_error": 2.0, "predictor": "interpolation_slices",
                                "entropy": "ans"}))
    # stage 2 (level groups) on shapes with extents of 1 dropped and five dimensions merged
    for label in ("ones", "5d"):
        shape = shapes[label]
        for p in predictors[1:]:
            out.append(Case(f"{label}-{p}-pcodec_levels",
                            make(shape, wave=16, noise_amp=2, specials=True), shape, "float64",
                            {"abs_error": 0.003, "predictor": p, "entropy": "pcodec_levels"}))
    # (v2.9) relative chunks of kind 3 (2^v by a table): every rel-* case above is written
    # again; and float64 values at both ends of the range, whose 2^v's scaling 2^m is not a
    # normal number (subnormal values, below 2^-1022) or near it (near the largest float64)
    out.append(Case("rel-far", make_far((21, 26)), (21, 26), "float64",
                    {"rel_error": 1e-3, "predictor": "lorenzo", "entropy": "ans"}))
    # (v2.10) relative chunks of kind 4 (signs by tiles and contexts): the rel-* cases above
    # whose signs come out smaller so are written again; and fields that change sign in
    # regions, their magnitudes of every class (near the chunk's largest, 2^4 and 2^8 below
    # it, zeros, NaN), over three dimensions (planes one after another; edge tiles narrower
    # and shorter) and two
    for shape, dtype in (((5, 24, 31), "float64"), ((40, 45), "float32")):
        out.append(Case(f"rel-signs-{len(shape)}d-{dtype}", make_signed(shape), shape, dtype,
                        {"rel_error": 1e-3, "predictor": "interpolation", "entropy": "ans"},
                        fill=float("nan")))
    return out


def make_signed(shape: tuple[int, ...]) -> Callable[[str], np.ndarray]:
    """`smooth` less its middle value, so that it changes sign along a line, times 2^-12:
    integers over a power of two (exact in float32), with a little noise, zeros and NaN at
    hashed places."""
    def data(dtype: str) -> np.ndarray:
        ints = smooth(shape) - (3 << 18) + noise(shape, 31) // 8
        x = ints.astype(np.float64) / 4096.0
        where = noise(shape, 37)
        x[(where >= -6) & (where < 6)] = 0.0
        x[where == 300] = np.nan
        return x.astype(dtype)
    return data


def make_far(shape: tuple[int, ...]) -> Callable[[str], np.ndarray]:
    """Values 2^e (1 + t / 2^20) with e from -1074 to -1010 in one half of the chunk and from
    1000 to 1023 in the other (t, e hashes of the index: exact integers), some negated."""
    def data(dtype: str) -> np.ndarray:
        n = math.prod(shape)
        t = noise(shape, 71) + 512
        low = -1074 + (noise(shape, 73) + 512) % 65
        high = 1000 + (noise(shape, 79) + 512) % 24
        e = np.where(np.arange(n).reshape(shape) < n // 2, low, high)
        x = np.ldexp(1.0 + t.astype(np.float64) / 2.0 ** 20, e)
        x[noise(shape, 83) > 300] *= -1
        return x.astype(dtype)
    return data


def land(shape: tuple[int, ...]) -> np.ndarray:
    """A land mask over the last two axes (two discs and a coast along one edge), repeated
    along the others, and a few gaps of its own in the first slice."""
    ny, nx = shape[-2:]
    y, x = np.mgrid[0:ny, 0:nx]
    mask = ((4 * y - 2 * ny) ** 2 + (4 * x - nx) ** 2 < ny * ny) | (
        (y - ny) ** 2 + (x - 4 * nx // 5) ** 2 < (ny // 3) ** 2) | (x < y // 4)
    out = np.broadcast_to(mask, shape).copy()
    if len(shape) > 2:
        out[(0,) * (len(shape) - 2)][noise((ny, nx), 31) > 500] = True
    return out


def make_masked(shape: tuple[int, ...], fill: float) -> Callable[[str], np.ndarray]:
    """`make`'s field (with specials) with `fill` on the land of `land` (its last two axes
    those of extent > 1); in a 1-d chunk, at hashed places (a quarter of the elements)."""
    base = make(shape, wave=64, noise_amp=3, specials=True)
    dims = [n for n in shape if n != 1]
    where = noise(shape, 61) < -256 if len(dims) == 1 else land(tuple(dims))

    def data(dtype: str) -> np.ndarray:
        x = base("float64")
        x[where.reshape(shape)] = fill
        return x.astype(dtype)
    return data


def make_largest(shape: tuple[int, ...]) -> Callable[[str], np.ndarray]:
    """`make_relative`'s chunk with float32's largest values, (2^24 - k) 2^104 for k = 1 ..
    31, at hashed places."""
    base = make_relative(shape)

    def data(dtype: str) -> np.ndarray:
        x = base("float64")
        where = noise(shape, 47)
        x[where > 480] = np.ldexp((2 ** 24 + 480 - where[where > 480]).astype(np.float64), 104)
        return x.astype(dtype)
    return data


def make_masked_integers(shape: tuple[int, ...]) -> Callable[[str], np.ndarray]:
    """`make_integers`' field with the fill value -7 on the land of `land`."""
    base = make_integers(shape, "int16")

    def data(dtype: str) -> np.ndarray:
        x = base(dtype)
        x[land(shape)] = -7
        return x
    return data


def make_marked(shape: tuple[int, ...], marker: float) -> Callable[[str], np.ndarray]:
    """`make`'s field with `marker` in place of the fill value and of every NaN (a masked field
    as xarray writes it: the CF _FillValue in the data)."""
    base = make(shape, wave=64, noise_amp=3, specials=True, fill=True)

    def data(dtype: str) -> np.ndarray:
        x = base("float64")
        x[(x == FILL) | np.isnan(x)] = marker
        return x.astype(dtype)
    return data


def make_relative(shape: tuple[int, ...]) -> Callable[[str], np.ndarray]:
    """A chunk for a relative bound: `make`'s field (with specials and the fill value) with
    zeros and negated values at hashed places (exact in both float types)."""
    base = make(shape, wave=64, noise_amp=3, specials=True, fill=True)

    def data(dtype: str) -> np.ndarray:
        x = base("float64")
        where = noise(shape, 23)
        x[(where >= -30) & (where < 30)] = 0.0
        x[where > 380] = -x[where > 380]
        return x.astype(dtype)
    return data


def make_smooth_integers(shape: tuple[int, ...]) -> Callable[[str], np.ndarray]:
    """`make`'s smooth field without noise, times 2000, rounded to integers (below 2^15)."""
    base = make(shape, wave=64, noise_amp=0)

    def data(dtype: str) -> np.ndarray:
        return np.round(base("float64") * 2000).astype(dtype)
    return data


def make_integers(shape: tuple[int, ...], dtype: str) -> Callable[[str], np.ndarray]:
    """An integer chunk: a smooth field with noise folded into the type's range, its extremes
    at hashed places, the fill value 3 and (int16) the sentinel -32768 at others."""
    def data(dtype: str) -> np.ndarray:
        info = np.iinfo(dtype)
        span = min(int(info.max) - int(info.min), 1 << 20)
        ints = smooth(shape) * span // (1 << 21) + noise(shape, 3) // 64 + int(info.min) + span // 4
        where = noise(shape, 11)
        ints[where == 10] = int(info.min)
        ints[where == -10] = int(info.max)
        ints[(where > 20) & (where < 26)] = 3
        if dtype == "int16":
            ints[(where > -40) & (where < -30)] = -32768
        return np.clip(ints, info.min, info.max).astype(dtype)
    return data


CASES = _cases()


def fill_json(fill: float | None) -> object:
    return None if fill is None else ("NaN" if math.isnan(fill) else fill)


def encode(case: Case) -> bytes:
    """The case's chunk (or buffer) as this version of zdt writes it."""
    x = case.data(case.dtype)
    if case.face == "numcodecs":
        from zdt.codecs.numcodecs.predict import Predict

        return bytes(Predict(**case.config).encode(x))
    from zdt.codecs.predict import PredictConfig

    return PredictConfig.create(**case.config).encode(x, case.fill)


def decode(case: Case, data: bytes) -> np.ndarray:
    """The case's chunk decoded by this version of zdt."""
    if case.face == "numcodecs":
        from zdt.codecs.numcodecs.predict import Predict

        return Predict(**case.config).decode(data)
    from zdt.codecs.predict import PredictConfig

    return PredictConfig.create(**case.config).decode(data, np.dtype(case.dtype), case.shape,
                                                      case.fill)


def digest(x: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(x).tobytes()).hexdigest()


def version_key(path: Path) -> tuple[int, ...]:
    """A fixture directory's version as numbers ("v2.10" after "v2.9")."""
    return tuple(int(part) for part in path.name[1:].split("."))


def versions() -> list[Path]:
    """The committed versions, oldest first."""
    return sorted((p for p in GOLDEN.iterdir() if p.is_dir()), key=version_key)


def written(before: Path | None = None) -> dict[str, Path]:
    """Each case's newest committed version (of those before `before`, if given)."""
    out: dict[str, Path] = {}
    for version in versions():
        if before is not None and version_key(version) >= version_key(before):
            continue
        for name in json.loads((version / "manifest.json").read_text())["cases"]:
            out[name] = version
    return out


def write_all(directory: Path, every_case: bool, changed: bool = False) -> None:
    import zdt

    if directory.exists():
        raise SystemExit(f"{directory} exists: golden chunks are written once, never over")
    earlier = {} if every_case else written(before=directory)
    cases = [c for c in CASES if c.name not in earlier or (
        changed and encode(c) != (earlier[c.name] / f"{c.name}.bin").read_bytes())]
    directory.mkdir(parents=True)
    manifest = {"zdt": zdt.__version__, "cases": {}}
    for case in cases:
        data = encode(case)
        (directory / f"{case.name}.bin").write_bytes(data)
        manifest["cases"][case.name] = {
            "dtype": case.dtype, "shape": list(case.shape), "config": case.config,
            "fill": fill_json(case.fill), "face": case.face,
            "decoded_sha256": digest(decode(case, data))}
    (directory / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    print(f"wrote {len(cases)} golden zdt.predict chunks to {directory} (zdt {zdt.__version__})")


if __name__ == "__main__":
    if len(sys.argv) not in (3, 4) or sys.argv[1] != "write" or sys.argv[3:] not in (
            [], ["--all"], ["--changed"]):
        raise SystemExit(__doc__)
    write_all(Path(sys.argv[2]), every_case=sys.argv[3:] == ["--all"],
              changed=sys.argv[3:] == ["--changed"])
