"""zdt: fast, exact, spec-complete data-type conversion codecs for Zarr.

Public names load lazily so ``import zdt`` stays cheap and does not import zarr:

* ``zdt.CastValueCodec``  the zarr v3 ``cast_value`` codec
* ``zdt.CastValue``       the same as a numcodecs codec (zarr format 2 filter)
* ``zdt.ScaleOffsetCodec`` / ``zdt.ScaleOffset``  the ``scale_offset`` codec (v3 / numcodecs)
* ``zdt.cast_array``, ``zdt.scale_offset_encode`` / ``_decode``  the same on NumPy arrays
* ``zdt.fixedscaleoffset_to_codecs`` / ``_to_filters``  numcodecs FixedScaleOffset -> both
* ``zdt.VLenUTF8Codec`` / ``VLenBytesCodec`` / ``VLenArrowCodec``  strings and bytes
* ``zdt.use_string_codecs()``  make zarr read and write vlen-utf8 / vlen-bytes with zdt
"""

from importlib import import_module

__version__ = "0.1.0"

_LAZY = {
    "CastValueCodec": "zdt.codecs.cast_value",
    "ScaleOffsetCodec": "zdt.codecs.scale_offset",
    "CastValue": "zdt.numcodecs_codecs",
    "ScaleOffset": "zdt.numcodecs_codecs",
    "VLenUTF8Codec": "zdt.codecs.vlen",
    "VLenBytesCodec": "zdt.codecs.vlen",
    "VLenArrowCodec": "zdt.codecs.vlen",
    "use_string_codecs": "zdt.codecs.vlen",
    "cast_array": "zdt.cast",
    "scale_offset_encode": "zdt.scale_offset",
    "scale_offset_decode": "zdt.scale_offset",
    "fixedscaleoffset_to_codecs": "zdt.legacy",
    "fixedscaleoffset_to_filters": "zdt.legacy",
    "CastError": "zdt.errors",
    "ScaleOffsetError": "zdt.scale_offset",
    "ConfigError": "zdt.errors",
    "FillValueError": "zdt.errors",
}

__all__ = ["__version__", *_LAZY]


def __getattr__(name: str) -> object:
    try:
        module = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module 'zdt' has no attribute {name!r}") from None
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
