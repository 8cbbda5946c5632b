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

import struct
from dataclasses import replace
from typing import Any

import numpy as np
from numcodecs.abc import Codec
from numcodecs.compat import ndarray_copy

from zdt.codecs.config_json import check_keys
from zdt.codecs.predict_chunk import corrupt
from zdt.codecs.predict_config import CODEC, KEYS, PredictConfig, check_dtype

# (float arrays only: nothing to keep; and no fill value, a format 2 compressor never has one)
FACE_KEYS = tuple(k for k in KEYS if k not in ("keep", "fill", "mask"))

EXTENT = struct.Struct("<Q")
MAX_DIMS = 32           # NumPy's limit on dimensions (64 since 2.0); more is a corrupt buffer
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
                 entropy: str = "auto", rel_error: float | None = None,
                 effort: str = "default") -> None:
        self.config = PredictConfig.create(abs_error=abs_error, predictor=predictor, level=level,
                                           entropy=entropy, rel_error=rel_error, effort=effort)

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
        # (the shape and type ahead of the chunk read and checked by the C library: a shape of
        # more than PER_BYTE elements a byte of the buffer is refused before any allocation)
        try:
            arr = self.config.core.decode_numcodecs(buf)
        except MemoryError:         # a corrupt shape: more elements than memory holds
            raise corrupt("the buffer's shape does not fit in memory", "shape") from None
        return ndarray_copy(arr, out) if out is not None else arr
