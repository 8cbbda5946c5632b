"""zdt's zarr v3 codec classes (registered through the ``zarr.codecs`` entry points). Importing
this package (zarr does, through those entry points) makes zdt the configured implementation
where zarr ships a codec of the same name. The same codecs for zarr format 2 filters are in
zdt.numcodecs_codecs."""

from zdt._compat import register_config_defaults
from zdt.zarr_codecs.cast_value import CastValueCodec
from zdt.zarr_codecs.packbits import PackBitsCodec
from zdt.zarr_codecs.scale_offset import ScaleOffsetCodec
from zdt.zarr_codecs.vlen import VLenArrowCodec, VLenBytesCodec, VLenUTF8Codec, use_string_codecs

__all__ = ["CastValueCodec", "PackBitsCodec", "ScaleOffsetCodec", "VLenArrowCodec", "VLenBytesCodec",
           "VLenUTF8Codec", "use_string_codecs"]

register_config_defaults()

# zdt's data types (zarr 3.1 never loads zarr.data_type entry points: a cast_value codec with a
# low-precision target resolves it here)
import zdt.dtypes  # noqa: E402, F401
