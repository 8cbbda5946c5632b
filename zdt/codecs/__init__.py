"""zarr v3 codec classes. Importing this package (zarr does, through the ``zarr.codecs`` entry
points) makes zdt the configured implementation where zarr ships a codec of the same name."""

from zdt._compat import register_config_defaults
from zdt.codecs.cast_value import CastValueCodec
from zdt.codecs.scale_offset import ScaleOffsetCodec

__all__ = ["CastValueCodec", "ScaleOffsetCodec"]

register_config_defaults()
