"""zarr-python 3.4.2, zarr's own codecs only: a cast_value to float64 ahead of scale_offset on an
int16 array, the integer use case of the cast_value / scale_offset proposal, cannot be created.

    python repro.py     (zarr 3.4.2 with cast-value-rs; no zdt involved)
"""

import numpy as np
import zarr
from zarr.codecs.cast_value import CastValue
from zarr.codecs.scale_offset import ScaleOffset
from zarr.storage import MemoryStore

filters = [CastValue(data_type="float64"), ScaleOffset(offset=236, scale=1 / 3),
           CastValue(data_type="uint16")]
print("zarr", zarr.__version__)
try:
    a = zarr.create_array(MemoryStore(), shape=(4,), dtype="int16", fill_value=236,
                          filters=filters, compressors=None)
    a[:] = np.array([236, 500, 1076, 300], dtype=np.int16)
    print("created and written:", a[:])
except ValueError as e:
    print("ValueError:", e)
