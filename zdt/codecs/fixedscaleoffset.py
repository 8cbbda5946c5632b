"""numcodecs FixedScaleOffset -> [scale_offset, cast_value], as the scale_offset spec describes.

numcodecs' FixedScaleOffset (v2 filter ``fixedscaleoffset``, v3 ``numcodecs.fixedscaleoffset``)
encodes ``astype(around((x - offset) * scale))`` and decodes ``x / scale + offset`` cast back to
``dtype``. The spec's replacement is a ``scale_offset`` codec with the same offset and scale
followed by a ``cast_value`` to ``astype`` with ``out_of_range: "wrap"`` for integer types
(NumPy's astype wraps) and the default nearest-even rounding (``np.around`` rounds half to
even). Differences that remain, by construction of the spec:

* numcodecs computes integer arrays in float64; scale_offset computes in the array's type and
  raises on overflow where numcodecs wrapped after the fact;
* numcodecs computes float32 arrays' decode in float64 and rounds once to float32, scale_offset
  rounds each operation in float32: decoded float32 values can differ in the last bit
  (float64 arrays decode identically);
* NaN: numcodecs' astype makes it an arbitrary integer, cast_value raises unless a scalar_map
  maps it;
* a float ``astype`` also rounds to whole numbers in numcodecs (np.around); cast_value to a
  float type keeps fractions;
* numcodecs never looked at the array's fill value; cast_value requires it to survive the
  chain (a fill value of 0 with a non-zero offset usually does not: use a fill value that
  encodes inside ``astype``'s range, such as the offset itself).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from zdt.errors import ConfigError
from zdt.formats import format_for_dtype

_KEYS = {"offset", "scale", "dtype", "astype"}


def _fixedscaleoffset_fields(config: dict[str, Any]) -> dict[str, Any]:
    """The four fields of a v2 (``{"id": "fixedscaleoffset", ...}``) or v3
    (``{"name": "numcodecs.fixedscaleoffset", "configuration": {...}}``) configuration, all
    required, offset and scale JSON numbers."""
    if config.get("id") == "fixedscaleoffset":
        fields = {k: v for k, v in config.items() if k != "id"}
    elif config.get("name") == "numcodecs.fixedscaleoffset":
        extra = set(config) - {"name", "configuration"}
        if extra:
            raise ConfigError(f"fixedscaleoffset: unknown key(s) {sorted(extra)}", config_key=sorted(extra)[0])
        fields = dict(config.get("configuration") or {})
    else:
        raise ConfigError("not a numcodecs fixedscaleoffset configuration: expected id "
                          "'fixedscaleoffset' (zarr v2) or name 'numcodecs.fixedscaleoffset' "
                          f"(zarr v3), got {config!r}", config_key="id")
    unknown = set(fields) - _KEYS
    if unknown:
        raise ConfigError(f"fixedscaleoffset: unknown key(s) {sorted(unknown)}", config_key=sorted(unknown)[0])
    for key in ("offset", "scale", "dtype", "astype"):
        if key not in fields:
            raise ConfigError(f"fixedscaleoffset: missing {key!r}", config_key=key)
    for key in ("offset", "scale"):
        v = fields[key]
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise ConfigError(f"fixedscaleoffset: {key} must be a JSON number, got {v!r}", config_key=key)
    return fields


def _in_dtype(value: float | int, dtype: np.dtype, key: str) -> int | float:
    """The offset/scale as a JSON scalar of the array's type (integers must be integral)."""
    if dtype.kind in "iu":
        if isinstance(value, int):
            return value
        if not math.isfinite(value) or not value.is_integer():
            raise ConfigError(
                f"fixedscaleoffset: {key}={value!r} is not an integer, so no scale_offset on the "
                f"integer type {dtype} computes the same (numcodecs computed in float64)",
                config_key=key)
        return int(value)
    return float(value)


def fixedscaleoffset_to_json(config: dict[str, Any]) -> list[dict[str, Any]]:
    """The zarr v3 codec metadata that replaces a fixedscaleoffset configuration."""
    fields = _fixedscaleoffset_fields(config)
    dtype = np.dtype(fields["dtype"])
    astype = format_for_dtype(np.dtype(fields["astype"]), role="astype", config_key="astype")
    scale_offset: dict[str, Any] = {"name": "scale_offset"}
    so_config = {}
    offset, scale = _in_dtype(fields["offset"], dtype, "offset"), _in_dtype(fields["scale"], dtype, "scale")
    if offset != 0:
        so_config["offset"] = offset
    if scale != 1:
        so_config["scale"] = scale
    if so_config:
        scale_offset["configuration"] = so_config
    cast: dict[str, Any] = {"data_type": astype.name}
    if astype.is_int:
        cast["out_of_range"] = "wrap"
    return [scale_offset, {"name": "cast_value", "configuration": cast}]


def fixedscaleoffset_to_codecs(config: dict[str, Any]) -> list:
    """[ScaleOffsetCodec, CastValueCodec] (zarr v3) replacing a fixedscaleoffset configuration."""
    from zdt.codecs.zarr import CastValueCodec, ScaleOffsetCodec

    so, cv = fixedscaleoffset_to_json(config)
    return [ScaleOffsetCodec.from_dict(so), CastValueCodec.from_dict(cv)]


def fixedscaleoffset_to_filters(config: dict[str, Any]) -> list:
    """[ScaleOffset, CastValue] numcodecs filters (zarr format 2) replacing a fixedscaleoffset."""
    from zdt.codecs.numcodecs import CastValue, ScaleOffset

    fields = _fixedscaleoffset_fields(config)
    so, cv = fixedscaleoffset_to_json(config)
    dtype = np.dtype(fields["dtype"]).str
    return [ScaleOffset(dtype=dtype, **so.get("configuration", {})),
            CastValue(dtype=dtype, **cv["configuration"])]
