"""numcodecs facades over zdt's kernels, for zarr format 2 filters (entry point group
``numcodecs.codecs``): ``CastValue`` (id ``cast_value``) and ``ScaleOffset`` (``scale_offset``).

Like numcodecs' FixedScaleOffset, the configuration carries the array's data type (``dtype``,
a NumPy dtype string with byte order), because a format 2 filter is not told it. Encoded data
is little-endian whatever the host; decoded data has ``dtype``'s byte order. A format 2 filter
never sees the array's fill value (zarr fills missing chunks after decoding).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numcodecs.abc import Codec
from numcodecs.compat import ensure_contiguous_ndarray, ndarray_copy

from zdt.cast import (
    CODEC,
    check_wrap_target,
    data_type_name,
    parse_out_of_range,
    parse_rounding,
    parse_scalar_map,
    plan_for,
)
from zdt.errors import ConfigError
from zdt.formats import format_for, format_for_dtype


def _as_array(buf: Any, dtype: np.dtype) -> np.ndarray:
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
            raise TypeError(f"{CODEC}: expected an array of {dtype} (or raw bytes), got {buf.dtype}")
    return ensure_contiguous_ndarray(buf).view(dtype)


def _checked_config(config: dict[str, Any], keys: tuple[str, ...], required: tuple[str, ...],
                    codec: str) -> dict[str, Any]:
    """A numcodecs config without its id: unknown keys and missing required keys are
    ConfigErrors (numcodecs would pass them to __init__ and get a TypeError)."""
    config = dict(config)
    config.pop("id", None)
    unknown = sorted(set(config) - set(keys))
    if unknown:
        raise ConfigError(f"{codec}: unknown configuration key(s) {', '.join(map(repr, unknown))}; "
                          f"allowed: {', '.join(keys)}", config_key=unknown[0])
    for key in required:
        if key not in config:
            raise ConfigError(f"{codec}: configuration needs {key!r}", config_key=key)
    return config


def _parse_dtype(dtype: Any, codec: str) -> np.dtype:
    try:
        if dtype is not None:
            return np.dtype(dtype)
    except TypeError:
        pass
    raise ConfigError(f"{codec}: dtype must be a NumPy dtype string such as '<f8', got {dtype!r}",
                      config_key="dtype")


class CastValue(Codec):
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
    _keys = ("dtype", "data_type", "rounding", "out_of_range", "scalar_map")

    def __init__(
        self,
        dtype: Any,
        data_type: str,
        rounding: str = "nearest-even",
        out_of_range: str | None = None,
        scalar_map: Any = None,
    ) -> None:
        self.dtype = _parse_dtype(dtype, CODEC)
        source = format_for_dtype(self.dtype, role="dtype", config_key="dtype")
        target = format_for(data_type_name(data_type), role="target data_type")
        self.data_type = target.name
        self.rounding = parse_rounding(rounding)
        self.out_of_range = parse_out_of_range(out_of_range)
        check_wrap_target(target, self.out_of_range)
        self.scalar_map = parse_scalar_map(scalar_map)
        maps = self.scalar_map or {}
        common = dict(rounding=self.rounding, out_of_range=self.out_of_range)
        self._encode = plan_for(source.name, target.name, pairs=maps.get("encode"),
                                direction="encode", **common)
        self._decode = plan_for(target.name, source.name, pairs=maps.get("decode"),
                                direction="decode", **common)
        self._encoded_dtype = target.dtype.newbyteorder("<")

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> CastValue:
        config = _checked_config(config, cls._keys, ("dtype", "data_type"), CODEC)
        if "scalar_map" in config:
            parse_scalar_map(config["scalar_map"], from_json=True)
        return cls(**config)

    def get_config(self) -> dict[str, Any]:
        config: dict[str, Any] = {"id": self.codec_id, "dtype": self.dtype.str,
                                  "data_type": self.data_type}
        if self.rounding != "nearest-even":
            config["rounding"] = self.rounding
        if self.out_of_range is not None:
            config["out_of_range"] = self.out_of_range
        if self.scalar_map:
            config["scalar_map"] = {d: [list(p) for p in pairs] for d, pairs in self.scalar_map.items()}
        return config

    def encode(self, buf: Any) -> np.ndarray:
        out = self._encode.cast(_as_array(buf, self.dtype))
        return out.astype(self._encoded_dtype, copy=False)

    def decode(self, buf: Any, out: Any = None) -> np.ndarray:
        dec = self._decode.cast(_as_array(buf, self._encoded_dtype))
        dec = dec.astype(self.dtype, copy=False)
        return ndarray_copy(dec, out)

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_config().items() if k != "id")
        return f"{type(self).__name__}({args})"


class ScaleOffset(Codec):
    """scale_offset as a numcodecs codec: encode ``(x - offset) * scale``, decode
    ``x / scale + offset``, in ``dtype``, checked (see zdt.ScaleOffsetCodec).

    Parameters
    ----------
    dtype
        Data type of the array, e.g. ``"<f8"``; encoded data has the same type, little-endian.
    offset, scale
        JSON scalars in the fill-value encoding of ``dtype``.
    """

    codec_id = "scale_offset"
    _keys = ("dtype", "offset", "scale")

    def __init__(self, dtype: Any, offset: Any = 0, scale: Any = 1) -> None:
        from zdt.scale_offset import parse_scalar_config, plan_for

        self.dtype = _parse_dtype(dtype, "scale_offset")
        fmt = format_for_dtype(self.dtype, role="dtype", config_key="dtype", codec="scale_offset")
        self.offset = parse_scalar_config(offset, "offset")
        self.scale = parse_scalar_config(scale, "scale")
        self._plan = plan_for(fmt.name, self.offset, self.scale)
        self._encoded_dtype = fmt.dtype.newbyteorder("<")

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> ScaleOffset:
        return cls(**_checked_config(config, cls._keys, ("dtype",), "scale_offset"))

    def get_config(self) -> dict[str, Any]:
        config: dict[str, Any] = {"id": self.codec_id, "dtype": self.dtype.str}
        if not (isinstance(self.offset, (int, float)) and self.offset == 0):
            config["offset"] = self.offset
        if not (isinstance(self.scale, (int, float)) and self.scale == 1):
            config["scale"] = self.scale
        return config

    def encode(self, buf: Any) -> np.ndarray:
        out = self._plan.encode(_as_array(buf, self.dtype))
        return out.astype(self._encoded_dtype, copy=False)

    def decode(self, buf: Any, out: Any = None) -> np.ndarray:
        dec = self._plan.decode(_as_array(buf, self._encoded_dtype)).astype(self.dtype, copy=False)
        return ndarray_copy(dec, out)

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_config().items() if k != "id")
        return f"{type(self).__name__}({args})"
