"""scale_offset as a numcodecs codec (id ``scale_offset``), for zarr format 2 filters."""

from __future__ import annotations

from typing import Any

import numpy as np

from zdt.formats import format_for_dtype
from zdt.codecs.numcodecs._base import ArrayFilter, parse_dtype
from zdt.codecs.scale_offset import CODEC, ScaleOffsetConfig


class ScaleOffset(ArrayFilter):
    """scale_offset as a numcodecs codec: encode ``(x - offset) * scale``, decode
    ``x / scale + offset``, in ``dtype``, checked (see zdt.ScaleOffsetCodec).

    Parameters
    ----------
    dtype
        Data type of the array, e.g. ``"<f8"``; encoded data has the same type, little-endian.
    offset, scale
        JSON scalars in the fill-value encoding of ``dtype``.
    """

    codec_id = CODEC
    _config_class = ScaleOffsetConfig
    _config_keys = ("offset", "scale")

    def __init__(self, dtype: Any, offset: Any = 0, scale: Any = 1) -> None:
        self._setup(dtype, ScaleOffsetConfig.create(offset=offset, scale=scale))

    def _setup(self, dtype: Any, config: ScaleOffsetConfig) -> None:
        self.dtype = parse_dtype(dtype, CODEC)
        fmt = format_for_dtype(self.dtype, role="dtype", config_key="dtype", codec=CODEC)
        self.config = config
        self._plan = config.plan(fmt.name)
        self._encoded_dtype = fmt.dtype.newbyteorder("<")

    @property
    def offset(self) -> int | float | str:
        return self.config.offset

    @property
    def scale(self) -> int | float | str:
        return self.config.scale

    def _encode_array(self, arr: np.ndarray) -> np.ndarray:
        return self._plan.encode(arr)

    def _decode_array(self, arr: np.ndarray) -> np.ndarray:
        return self._plan.decode(arr)
