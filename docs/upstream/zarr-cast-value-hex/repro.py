"""zarr-python 3.2.0-3.4.2, zarr's own cast_value only: a "0x.." bit pattern in scalar_map, as
the cast_value spec reads entries (the fill-value encoding), fails when the codec casts.

    python repro.py     (zarr >= 3.2 with cast-value-rs; no zdt involved)
"""

import numpy as np
import zarr

m = {"encode": [["NaN", "0xffc00000"]], "decode": [["0xffc00000", "NaN"]]}
print("zarr", zarr.__version__)
try:
    a = zarr.create_array({}, shape=(3,), dtype="float64", fill_value=0, compressors=None,
                          filters=[{"name": "cast_value",
                                    "configuration": {"data_type": "float32", "scalar_map": m}}])
    a[:] = np.array([1.0, np.nan, 2.0])
    print(a[:])
except ValueError as e:
    print(f"ValueError: {e}")
