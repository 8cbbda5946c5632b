"""zdt's codecs as numcodecs codecs, for zarr format 2 filters (entry point group
``numcodecs.codecs``): ``CastValue`` (id ``cast_value``) and ``ScaleOffset`` (``scale_offset``);
``Predict`` (``zdt.predict``: a compressor);
``BitRound`` writes numcodecs' own ``bitround`` (numcodecs reads it with its class).
The zarr v3 codecs are in zdt.codecs.zarr; both faces share their configuration classes
(zdt.codecs.cast.CastValueConfig, zdt.codecs.scale_offset.ScaleOffsetConfig)."""

from zdt.codecs.numcodecs.bitround import BitRound
from zdt.codecs.numcodecs.cast_value import CastValue
from zdt.codecs.numcodecs.predict import Predict
from zdt.codecs.numcodecs.scale_offset import ScaleOffset

__all__ = ["BitRound", "CastValue", "Predict", "ScaleOffset"]
