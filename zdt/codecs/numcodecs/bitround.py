"""bitround as a numcodecs codec, for zarr format 2 filters.

It writes numcodecs' own id and configuration (``{"id": "bitround", "keepbits": k}``), so an
array it wrote is read by numcodecs' BitRound anywhere (decoding is the identity); it rounds
with zdt's kernel (every type zdt.codecs.bitround names, integers included, and NaN / the
largest finite value kept where numcodecs 0.17 turns them into infinities). numcodecs keeps
``bitround`` for its own class, so this is not registered under that id: use the object.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numcodecs.abc import Codec
from numcodecs.compat import ensure_ndarray_like, ndarray_copy

from zdt.codecs.bitround import CODEC, BitroundConfig


class BitRound(Codec):
    """numcodecs codec: keep ``keepbits`` significant bits of every value (see
    zdt.codecs.bitround); decoding is the identity."""

    codec_id = CODEC

    def __init__(self, keepbits: int) -> None:
        self.config = BitroundConfig.create(keepbits=keepbits)

    @property
    def keepbits(self) -> int:
        return self.config.keepbits

    def encode(self, buf: Any) -> np.ndarray:
        arr = np.asarray(ensure_ndarray_like(buf))
        return self.config.plan(arr.dtype).round(arr)

    def decode(self, buf: Any, out: Any = None) -> Any:
        return ndarray_copy(ensure_ndarray_like(buf), out)

    def get_config(self) -> dict[str, Any]:
        return {"id": CODEC, **self.config.to_json()}

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> BitRound:
        config = dict(config)
        config.pop("id", None)
        codec = cls.__new__(cls)
        codec.config = BitroundConfig.from_json(config)
        return codec

    def __repr__(self) -> str:
        return f"BitRound({self.config.repr_args()})"
