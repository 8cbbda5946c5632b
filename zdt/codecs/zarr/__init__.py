"""zdt's zarr v3 codec classes (registered through the ``zarr.codecs`` entry points). Importing
this package (zarr does, through those entry points) makes zdt the configured implementation
where zarr ships a codec of the same name. The same codecs for zarr format 2 filters are in
zdt.codecs.numcodecs."""

from zdt.zarr_compat import register_config_defaults
from zdt.codecs.zarr.cast_value import CastValueCodec
from zdt.codecs.zarr.packbits import PackBitsCodec
from zdt.codecs.zarr.scale_offset import ScaleOffsetCodec
from zdt.codecs.zarr.vlen import VLenArrowCodec, VLenBytesCodec, VLenUTF8Codec, use_string_codecs

__all__ = ["CastValueCodec", "PackBitsCodec", "ScaleOffsetCodec", "VLenArrowCodec", "VLenBytesCodec",
           "VLenUTF8Codec", "use_string_codecs"]

register_config_defaults()

# zdt's data types (zarr 3.1 never loads zarr.data_type entry points: a cast_value codec with a
# low-precision target resolves it here)
import zdt.dtypes  # noqa: E402, F401
