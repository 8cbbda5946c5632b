"""zdt: fast, exact, spec-complete data-type conversion codecs for Zarr.

Public names load lazily so ``import zdt`` stays cheap and does not import zarr:

* ``zdt.CastValueCodec``  the zarr v3 ``cast_value`` codec
* ``zdt.CastValue``       the same as a numcodecs codec (zarr format 2 filter)
* ``zdt.cast_array``      cast a NumPy array with cast_value semantics
"""

from importlib import import_module

__version__ = "0.1.0"

_LAZY = {
    "CastValueCodec": "zdt.codecs.cast_value",
    "CastValue": "zdt.numcodecs_codecs",
    "cast_array": "zdt.cast",
    "CastError": "zdt.errors",
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
