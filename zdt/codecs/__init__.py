"""zarr v3 codec classes. Importing this package (zarr does, through the ``zarr.codecs`` entry
points) makes zdt the configured implementation where zarr ships a codec of the same name."""

from zdt._compat import register_config_defaults
from zdt.codecs.cast_value import CastValueCodec
from zdt.codecs.scale_offset import ScaleOffsetCodec
from zdt.codecs.vlen import VLenArrowCodec, VLenBytesCodec, VLenUTF8Codec, use_string_codecs

__all__ = ["CastValueCodec", "ScaleOffsetCodec", "VLenArrowCodec", "VLenBytesCodec",
           "VLenUTF8Codec", "use_string_codecs"]

register_config_defaults()
