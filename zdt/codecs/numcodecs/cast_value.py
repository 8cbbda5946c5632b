"""cast_value as a numcodecs codec (id ``cast_value``), for zarr format 2 filters."""

from __future__ import annotations

from typing import Any

import numpy as np

from zdt.codecs.cast import CODEC, CONFIG_KEYS, CastValueConfig
from zdt.formats import format_for_dtype
from zdt.codecs.numcodecs._base import ArrayFilter, parse_dtype


class CastValue(ArrayFilter):
    """cast_value as a numcodecs codec.

    Parameters
    ----------
    dtype
        Data type of the decoded array, e.g. ``"<f8"`` or ``">f8"``.
    data_type
        zarr v3 name of the encoded data type, e.g. ``"uint8"``.
    rounding, out_of_range, scalar_map
        As for the zarr v3 codec (``zdt.CastValueCodec``).
    """

    codec_id = CODEC
    _config_class = CastValueConfig
    _config_keys = CONFIG_KEYS

    def __init__(self, dtype: Any, data_type: object, rounding: str = "nearest-even",
                 out_of_range: str | None = None, scalar_map: Any = None) -> None:
        self._setup(dtype, CastValueConfig.create(data_type=data_type, rounding=rounding,
                                                  out_of_range=out_of_range, scalar_map=scalar_map))

    def _setup(self, dtype: Any, config: CastValueConfig) -> None:
        self.dtype = parse_dtype(dtype, CODEC)
        source = format_for_dtype(self.dtype, role="dtype", config_key="dtype")
        self.config = config
        self._encode = config.encode_plan(source.name)
        self._decode = config.decode_plan(source.name)
        self._encoded_dtype = config.target.dtype.newbyteorder("<")

    @property
    def data_type(self) -> str:
        return self.config.data_type

    @property
    def rounding(self) -> str:
        return self.config.rounding

    @property
    def out_of_range(self) -> str | None:
        return self.config.out_of_range

    @property
    def scalar_map(self) -> Any:
        return self.config.scalar_map

    def _encode_array(self, arr: np.ndarray) -> np.ndarray:
        return self._encode.cast(arr)

    def _decode_array(self, arr: np.ndarray) -> np.ndarray:
        return self._decode.cast(arr)
