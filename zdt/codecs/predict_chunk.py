"""zdt.predict's chunks: what a chunk is (the spec's byte layout, docs/codecs/predict.md: the
constants below) and the calls that write and read one, which run the C library
(libzdtpredict, compiled into zdt.kernels._predict_core): the predictions, the `auto`
predictor's choice, format 3's level steps, the masked formats and the mask stream, stage 3's
rANS, the relative chunks' logarithms and their exact check, the integer arrays' escapes. Its
zstd is numcodecs' and its pcodec (stages 1 and 2) the pcodec package's, called back from C.

A corrupt chunk is a zdt.errors.CorruptChunkError (a ValueError) naming what is wrong and the
part of the chunk (`part`) it is in.
"""

from __future__ import annotations

import math
import struct
from typing import Protocol

import numpy as np

from zdt.kernels import _predict_core


class PredictConfig(Protocol):
    """What a chunk's calls take of the configuration (zdt.codecs.predict_config's
    PredictConfig, which imports this module: named here by what it has, not imported)."""

    @property
    def fill(self) -> float | None: ...
    @property
    def core(self) -> _predict_core.Codec: ...
    def check_dtype(self, dtype: np.dtype) -> np.dtype: ...

CODEC = _predict_core.CODEC
MAGIC = b"ZPR1"
FORMAT_MAGIC = b"ZPR"     # the magic's fourth byte is the format version: "1", "2", "3"
FORMAT2_MAGIC = b"ZPR2"   # format 2: a chunk of parts (kinds 1 and 3 pointwise relative, 2 masked)
FORMAT3_MAGIC = b"ZPR3"   # format 3: format 1 with a step of its own for each interpolation level
HEADER = struct.Struct("<4sBBHQ")      # magic, predictor, element size, entropy stage, n_raw
LEVEL_STEPS = struct.Struct("<dd")     # format 3, after the header: alpha, beta
KIND_RELATIVE = 1         # the first relative chunks: 2^v by a 14-term polynomial (read still)
KIND_RELATIVE_TABLE = 3   # the relative chunks zdt writes: 2^v by a table and 6 terms
MASKED_KIND = 2
# a masked chunk: magic, kind, element size, looks back (0 or 1), n_masked, the mask stream's
# length
MASKED_HEADER = struct.Struct("<4sBBHQQ")
# a relative chunk: magic, kind, element size, the logarithms' fill, b, n_exact, the
# logarithms' chunk's length
RELATIVE_HEADER = struct.Struct("<4sBBHdQQ")
PCO_LENGTH = struct.Struct("<Q")        # stages 1 and 2: a pcodec part's length, ahead of it
GROUPS = 4                              # stage 2: levels 1, 2, 4, and the rest
# the error of a corrupt chunk: corrupt(message, part) -> CorruptChunkError naming the codec
corrupt = _predict_core.corrupt


def grid4(shape: tuple[int, ...]) -> tuple[int, int, int, int]:
    """The spec's shape: extents of 1 dropped, leading dimensions beyond four merged, then
    padded with leading 1s to four (the library's grid)."""
    dims = [int(n) for n in shape if n != 1]
    while len(dims) > 4:
        dims[:2] = [dims[0] * dims[1]]
    return tuple([1] * (4 - len(dims)) + dims)        # type: ignore[return-value]


def fill_value(fill: object, dtype: np.dtype) -> float | None:
    """The fill value as the library takes it: in the array's type (a float32 array's fill
    rounded to float32), as a float; None for none."""
    if fill is None:
        return None
    return float(np.asarray(fill, dtype=dtype if dtype.kind == "f" else np.float64))


def fill_array(fill: object, dtype: np.dtype) -> np.ndarray:
    """The fill value as an array of one element of `dtype` (empty for None)."""
    if fill is None:
        return np.empty(0, dtype=dtype)
    return np.asarray([fill], dtype=dtype)


def integer_bound(abs_error: float) -> float:
    """The bound an integer array's values are coded within, as float64: the largest float64
    below k + 1/2, k = floor(abs_error) (at most 2**51): every decoded value rounds to an
    integer within k of the original, and with abs_error < 1 to the original itself."""
    return math.nextafter(math.floor(min(abs_error, 2.0 ** 51)) + 0.5, 0.0)


def encode(config: PredictConfig, arr: np.ndarray, fill: object = None) -> bytes:
    """The chunk bytes of `arr` (float32, float64 or an integer type, any shape) under
    `config`; `fill`: the array's fill value (kept bit for bit; the configuration's `fill`
    in its place where it has one), or None."""
    dtype = config.check_dtype(arr.dtype)
    fill = config.fill if config.fill is not None else fill
    x = np.ascontiguousarray(arr, dtype=dtype)
    return config.core.encode(x, fill_value(fill, dtype))


def decode(config: PredictConfig, data: object, dtype: np.dtype, shape: tuple[int, ...],
           fill: object = None) -> np.ndarray:
    """The chunk of `shape` and `dtype` that `data` (any buffer) holds; CorruptChunkError
    naming what is wrong with a corrupt chunk."""
    dtype = config.check_dtype(np.dtype(dtype))
    fill = config.fill if config.fill is not None else fill
    out = np.empty(tuple(int(n) for n in shape), dtype=dtype)
    config.core.decode(data, out, fill_value(fill, dtype))
    return out
