"""zdt's codecs as numcodecs codecs, for zarr format 2 filters (entry point group
``numcodecs.codecs``): ``CastValue`` (id ``cast_value``) and ``ScaleOffset`` (``scale_offset``).
The zarr v3 codecs are in zdt.zarr_codecs; both faces share their configuration classes
(zdt.cast.CastValueConfig, zdt.scale_offset.ScaleOffsetConfig)."""

from zdt.numcodecs_codecs.cast_value import CastValue
from zdt.numcodecs_codecs.scale_offset import ScaleOffset

__all__ = ["CastValue", "ScaleOffset"]
