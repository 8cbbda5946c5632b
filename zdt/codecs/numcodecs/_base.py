"""What zdt's numcodecs codecs share.

A zarr format 2 filter is not told the array's data type, so (like numcodecs'
FixedScaleOffset) the configuration carries it: ``dtype``, a NumPy dtype string with byte
order. Encoded data is little-endian whatever the host; decoded data has ``dtype``'s byte
order. A format 2 filter never sees the array's fill value (zarr fills missing chunks after
decoding).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
from numcodecs.abc import Codec
from numcodecs.compat import ensure_contiguous_ndarray, ndarray_copy

from zdt.codecs.config_json import check_keys
from zdt.errors import ConfigError
from zdt.formats import LOW_PRECISION


def dtype_json(dtype: np.dtype) -> str:
    """How a configuration names a dtype: NumPy's string with byte order ('<f8'), or the
    zarr name of a low-precision type ('bfloat16': its NumPy string, '<V2', means raw bytes);
    zdt reads these native-order, as the array a format 2 filter is given."""
    return dtype.name if dtype.name in LOW_PRECISION else dtype.str


def parse_dtype(dtype: Any, codec: str) -> np.dtype:
    """The ``dtype`` of a configuration as a NumPy dtype (low-precision types by name)."""
    try:
        if dtype is not None:
            return np.dtype(dtype)
    except TypeError:
        pass
    raise ConfigError(f"{codec}: dtype must be a NumPy dtype string such as '<f8', got {dtype!r}",
                      config_key="dtype")


def split_config(config: Mapping[str, Any], keys: Iterable[str], codec: str) -> tuple[Any, dict[str, Any]]:
    """A numcodecs configuration read strictly: (its dtype, the codec's own configuration).
    Unknown keys, nulls and a missing dtype are ConfigErrors (numcodecs would pass them on to
    __init__ and get a TypeError)."""
    config = dict(config)
    config.pop("id", None)
    config = check_keys(config, ("dtype", *keys), codec, required=("dtype",))
    return config.pop("dtype"), config


def as_array(buf: Any, dtype: np.dtype, codec: str) -> np.ndarray:
    """`buf` as an array of `dtype`. Arrays of that type keep their shape and layout (another
    byte order is converted); raw bytes (bytes-like objects, uint8/int8/void arrays) are
    reinterpreted, numcodecs' convention for what comes out of a compressor. An array of any
    other type is a mistake, not bytes to reinterpret."""
    if isinstance(buf, np.ndarray):
        if buf.dtype == dtype:
            return buf
        if buf.dtype.newbyteorder("=") == dtype.newbyteorder("="):
            return buf.astype(dtype)
        if buf.dtype.kind not in "uiV" or buf.dtype.itemsize != 1:
            raise TypeError(f"{codec}: expected an array of {dtype} (or raw bytes), got {buf.dtype}")
    return ensure_contiguous_ndarray(buf).view(dtype)


class ArrayFilter(Codec):
    """A numcodecs codec over one of zdt's configuration classes for arrays of `dtype`.

    Subclasses give `_config_class` (with from_json, to_json, repr_args), `_config_keys`,
    `_setup(dtype, config)` (which sets `dtype`, `config`, `_encoded_dtype`) and the array
    transformations `_encode_array` / `_decode_array`."""

    codec_id: str
    _config_class: Any
    _config_keys: tuple[str, ...]
    dtype: np.dtype
    config: Any
    _encoded_dtype: np.dtype

    def _setup(self, dtype: Any, config: Any) -> None:
        raise NotImplementedError

    def _encode_array(self, arr: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def _decode_array(self, arr: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> ArrayFilter:
        dtype, rest = split_config(config, cls._config_keys, cls.codec_id)
        codec = cls.__new__(cls)
        codec._setup(dtype, cls._config_class.from_json(rest))
        return codec

    def encode(self, buf: Any) -> np.ndarray:
        out = self._encode_array(as_array(buf, self.dtype, self.codec_id))
        return out.astype(self._encoded_dtype, copy=False)

    def decode(self, buf: Any, out: Any = None) -> np.ndarray:
        dec = self._decode_array(as_array(buf, self._encoded_dtype, self.codec_id))
        return ndarray_copy(dec.astype(self.dtype, copy=False), out)

    def get_config(self) -> dict[str, Any]:
        return {"id": self.codec_id, "dtype": dtype_json(self.dtype), **self.config.to_json()}

    def __repr__(self) -> str:
        args = self.config.repr_args()
        return f"{type(self).__name__}(dtype={dtype_json(self.dtype)!r}{', ' + args if args else ''})"
