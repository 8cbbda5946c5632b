"""zdt's zarr v3 codecs (zarr finds them through zdt's ``zarr.codecs`` entry points; importing
this package registers nothing). The same codecs for zarr format 2 filters are in
zdt.codecs.numcodecs; what they compute is in zdt.codecs."""

from zdt.codecs.zarr.bitround import BitroundCodec
from zdt.codecs.zarr.cast_value import CastValueCodec
from zdt.codecs.zarr.packbits import PackBitsCodec
from zdt.codecs.zarr.predict import PredictCodec
from zdt.codecs.zarr.scale_offset import ScaleOffsetCodec
from zdt.codecs.zarr.vlen import VLenArrowCodec, VLenBytesCodec, VLenUTF8Codec, use_string_codecs

__all__ = ["BitroundCodec", "CastValueCodec", "PackBitsCodec", "PredictCodec", "ScaleOffsetCodec", "VLenArrowCodec", "VLenBytesCodec",
           "VLenUTF8Codec", "use_string_codecs"]
