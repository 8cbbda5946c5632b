"""zdt: fast, exact, spec-complete data-type conversion codecs for Zarr.

Importing zdt changes nothing in zarr or numcodecs: they find zdt's codecs, data types and
pipeline through its entry points (``zarr.codecs``, ``zarr.data_type``, ``zarr.codec_pipeline``,
``numcodecs.codecs``). zarr 3.1 does not load ``zarr.data_type`` entry points: there, call
``zdt.register()`` once before using zdt's data types. Public names load lazily (the
numcodecs ones without importing zarr):

* ``zdt.CastValueCodec``  the zarr v3 ``cast_value`` codec
* ``zdt.CastValue``       the same as a numcodecs codec (zarr format 2 filter)
* ``zdt.ScaleOffsetCodec`` / ``zdt.ScaleOffset``  the ``scale_offset`` codec (v3 / numcodecs)
* ``zdt.PackBitsCodec``   the ``packbits`` codec (zarr v3): elements at their real bit width
* ``zdt.PredictCodec`` / ``zdt.Predict``  the ``zdt.predict`` codec (zarr v3 / numcodecs, a
                          format 2 compressor): error-bounded prediction of floats
* ``zdt.BitroundCodec`` / ``zdt.BitRound`` / ``zdt.bitround``  the ``bitround`` codec (v3, a
                          numcodecs filter writing numcodecs' own id, NumPy arrays)
* ``zdt.cast_array``, ``zdt.scale_offset_encode`` / ``_decode``  the same on NumPy arrays
* ``zdt.fixedscaleoffset_to_codecs`` / ``_to_filters``  numcodecs FixedScaleOffset -> both
* ``zdt.VLenUTF8Codec`` / ``VLenBytesCodec`` / ``VLenArrowCodec``  strings and bytes
* ``zdt.use_string_codecs()``  make zarr read and write vlen-utf8 / vlen-bytes with zdt
* ``zdt.use_pipeline()``  make zarr run zdt's fused, parallel codec pipeline
* ``zdt.dtypes``          zarr data types for bfloat16, float8 / float6 / float4, int2 / int4 /
                          uint2 / uint4 (and float8_e4m3fn)
* ``zdt.register()``      register those data types with zarr (needed on zarr 3.1 only)

Shrinking data within an error bound (zdt.engine.api; the ``zdt`` command is a layer over it):

* ``zdt.suggest(source, abs_error=E)``  the plan: per array, the encoding that writes the fewest
                          bytes and keeps the bound (``print(plan)``, ``plan.dumps()``)
* ``zdt.convert(source, dest, plan)``  a re-encoded copy of a store; returns a report
* ``zdt.compare(source, decoded)``  per array, what the encoding did to the data: errors,
                          PSNR, R^2, DSSIM, the spectral error and pass/fail checks
* ``zdt.check(source)``  every chunk read and decoded: the damaged ones (array, key, reason)
* ``zdt.encoding(dataset, abs_error=E)``  for an xarray Dataset in memory, the ``encoding=`` of
                          ``Dataset.to_zarr`` that writes what ``zdt convert`` would
"""

from importlib import import_module
from importlib.machinery import EXTENSION_SUFFIXES
from pathlib import Path

__version__ = "0.1.0"


def _check_built() -> None:
    """Fail with a message that says what to do when the compiled extensions are missing: the
    usual cause is Python importing the unbuilt source tree instead of the installed zdt."""
    here = Path(__file__).resolve().parent
    if any((here / "kernels" / f"_types{suffix}").exists() for suffix in EXTENSION_SUFFIXES):
        return
    if (here.parent / "setup.py").exists():
        raise ImportError(
            f"zdt is being imported from its source tree ({here}), where its compiled "
            f"extensions are not built. Python looks in the current directory first "
            f"(python -m, python -c), so at the repository root this tree hides an installed "
            f"zdt. Run the installed command instead (.venv/bin/zdt demo), run Python from "
            f"another directory, or build the extensions in place with: pip install -e .")
    raise ImportError(f"zdt's compiled extensions are missing from {here}: reinstall zdt "
                      f"(pip install --force-reinstall zdt)")


_check_built()

_LAZY = {
    "CastValueCodec": "zdt.codecs.zarr.cast_value",
    "BitroundCodec": "zdt.codecs.zarr.bitround",
    "BitRound": "zdt.codecs.numcodecs.bitround",
    "bitround": "zdt.codecs.bitround",
    "ScaleOffsetCodec": "zdt.codecs.zarr.scale_offset",
    "PackBitsCodec": "zdt.codecs.zarr.packbits",
    "PredictCodec": "zdt.codecs.zarr.predict",
    "Predict": "zdt.codecs.numcodecs.predict",
    "CastValue": "zdt.codecs.numcodecs.cast_value",
    "ScaleOffset": "zdt.codecs.numcodecs.scale_offset",
    "VLenUTF8Codec": "zdt.codecs.zarr.vlen",
    "VLenBytesCodec": "zdt.codecs.zarr.vlen",
    "VLenArrowCodec": "zdt.codecs.zarr.vlen",
    "use_string_codecs": "zdt.codecs.zarr.vlen",
    "use_pipeline": "zdt.pipeline",
    "ZdtCodecPipeline": "zdt.pipeline",
    "cast_array": "zdt.codecs.cast",
    "scale_offset_encode": "zdt.codecs.scale_offset",
    "scale_offset_decode": "zdt.codecs.scale_offset",
    "fixedscaleoffset_to_codecs": "zdt.codecs.fixedscaleoffset",
    "fixedscaleoffset_to_filters": "zdt.codecs.fixedscaleoffset",
    "CastError": "zdt.errors",
    "ScaleOffsetError": "zdt.errors",
    "ConfigError": "zdt.errors",
    "FillValueError": "zdt.errors",
    "register": "zdt.dtypes",
    "suggest": "zdt.engine.api",
    "convert": "zdt.engine.api",
    "encoding": "zdt.engine.api",
    "check": "zdt.engine.api",
    "compare": "zdt.engine.compare",
    "Plan": "zdt.engine.plan",
    "Report": "zdt.engine.api",
    "JobError": "zdt.errors",
    "UsageError": "zdt.errors",
    "InputError": "zdt.errors",
    "StorageError": "zdt.errors",
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


