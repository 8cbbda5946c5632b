"""zdt.predict as a numcodecs codec (id ``zdt.predict``): a zarr format 2 compressor, or a
codec for numcodecs users on arrays of any shape.

A numcodecs codec is not told the array's shape and type when it decodes, so its encoded
buffer carries them ahead of a zdt.predict chunk (docs/codecs/predict.md, "numcodecs face"):
one byte D, D extents as little-endian u64, then the chunk of that shape. The element size in
the chunk's header gives the type (4: float32, 8: float64). Format 2 compressors never see
the array's fill value: every value, the fill value too, is predicted within E (NaN and the
infinities are stored exactly, as always).

Like every numcodecs codec, it gives back the bytes it was given in their memory order: a
Fortran-ordered array is predicted as the C-ordered array its memory holds (its transpose),
and decodes as that (zarr format 2 reshapes it in the array's order).
"""

from __future__ import annotations

import math
import struct
from dataclasses import replace
from typing import Any

import numpy as np
from numcodecs.abc import Codec
from numcodecs.compat import ndarray_copy

from zdt.codecs.config_json import check_keys
from zdt.codecs.predict import CODEC, HEADER, KEYS, PredictConfig, check_dtype, corrupt

# (float arrays only: nothing to keep; and no fill value, a format 2 compressor never has one)
FACE_KEYS = tuple(k for k in KEYS if k not in ("keep", "fill", "mask"))

EXTENT = struct.Struct("<Q")
MAX_DIMS = 32           # NumPy's limit on dimensions (64 since 2.0); more is a corrupt buffer
BY_SIZE = {4: np.dtype("float32"), 8: np.dtype("float64")}
# the most elements a byte of a chunk can stand for: zstd packs at most ~16,000 two-byte
# symbols in a byte, pcodec ~26,000 equal ones (measured); stage 3 has no such limit, so the
# encoder falls back to zstd beyond it; a corrupt shape beyond it is refused before anything
# is allocated for it
PER_BYTE = 65536


class Predict(Codec):
    """Error-bounded prediction (see zdt.codecs.zarr.PredictCodec): every value decodes within
    ``abs_error`` of the encoded one, or within ``rel_error`` times its magnitude. ``predictor``: "auto", "lorenzo", "interpolation",
    "interpolation_reversed" or "interpolation_slices"; ``level``: zstd's; ``entropy``:
    "auto", "ans", "zstd", "pcodec" or "pcodec_levels" (docs/codecs/predict.md)."""

    codec_id = CODEC

    def __init__(self, abs_error: float | None = None, predictor: str = "auto", level: int = 3,
                 entropy: str = "auto", rel_error: float | None = None) -> None:
        self.config = PredictConfig.create(abs_error=abs_error, predictor=predictor, level=level,
                                           entropy=entropy, rel_error=rel_error)

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> Predict:
        config = dict(config)
        config.pop("id", None)
        return cls(**check_keys(config, FACE_KEYS, CODEC))

    def get_config(self) -> dict[str, Any]:
        return {"id": self.codec_id, **self.config.to_json()}

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.config.to_json().items())
        return f"{type(self).__name__}({args})"

    def encode(self, buf: Any) -> bytes:
        if not isinstance(buf, np.ndarray):
            raise TypeError(f"{CODEC}: encodes a NumPy array of float32 or float64 (its shape "
                            f"and type are part of the prediction), not {type(buf).__name__}")
        if buf.ndim > MAX_DIMS:
            raise ValueError(f"{CODEC}: an array of {buf.ndim} dimensions (at most {MAX_DIMS})")
        # (float types only: its buffer says the type by the element size alone)
        check_dtype(buf.dtype, integers=False)
        if buf.flags.f_contiguous and not buf.flags.c_contiguous:
            buf = buf.T         # its memory as it lies (numcodecs' contract: the same bytes back)
        head = bytes([buf.ndim]) + b"".join(EXTENT.pack(n) for n in buf.shape)
        data = head + self.config.encode(buf)
        if buf.size > PER_BYTE * len(data):
            # (stage 3 codes a chunk of one repeated code in a few bytes whatever its size; the
            # decoder takes that many elements a byte for a corrupt shape, so such a chunk is
            # written with zstd, which never packs more than PER_BYTE a byte)
            data = head + replace(self.config, entropy="zstd").encode(buf)
        return data

    def decode(self, buf: Any, out: Any = None) -> np.ndarray:
        data = memoryview(buf).cast("B") if not isinstance(buf, bytes) else buf
        if len(data) < 1:
            raise corrupt("an empty buffer holds no array", "shape")
        ndim = data[0]
        start = 1 + EXTENT.size * ndim
        if ndim > MAX_DIMS:
            raise corrupt(f"the buffer claims {ndim} dimensions (at most {MAX_DIMS})", "shape")
        if len(data) < start + HEADER.size:
            raise corrupt(f"a buffer of {len(data)} bytes ends before its shape and the "
                          f"{HEADER.size}-byte chunk header", "shape")
        shape = tuple(EXTENT.unpack_from(data, 1 + EXTENT.size * d)[0] for d in range(ndim))
        size = data[start + 5]
        if size not in BY_SIZE:
            raise corrupt(f"the chunk holds {size}-byte elements (4 or 8)", "header")
        count = math.prod(shape)
        if any(n > np.iinfo(np.intp).max for n in shape) or count * size > np.iinfo(np.intp).max:
            raise corrupt(f"the buffer's shape {shape} is larger than an array can be", "shape")
        if count > PER_BYTE * len(data):
            raise corrupt(f"the buffer's shape {shape} has more elements than {len(data)} bytes "
                          f"can encode (at most {PER_BYTE:,} a byte)", "shape")
        try:
            arr = self.config.decode(data[start:], BY_SIZE[size], shape)
        except MemoryError:         # a corrupt shape: more elements than memory holds
            raise corrupt(f"the buffer's shape {shape} ({count:,} elements) does not fit in "
                          f"memory", "shape") from None
        return ndarray_copy(arr, out) if out is not None else arr
