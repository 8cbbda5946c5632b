"""zarr 3.4.2: iterating data_type_registry.contents while anything resolves a data type
raises 'dictionary changed size during iteration' as soon as ANY package declares a
`zarr.data_type` entry point (the first resolution lazily registers the entry points).
Needs: zarr==3.4.2 + any package with a zarr.data_type entry point (e.g. ./tinydtype)."""
import numpy as np
import zarr  # noqa: F401  (zarr.registry._collect_entrypoints() fills _lazy_load_list at import)
from zarr.core.dtype import data_type_registry
from zarr.core.dtype.npy.structured import Struct

print("registered:", len(data_type_registry.contents),
      "pending entry points:", [e.value for e in data_type_registry._lazy_load_list])
# the loop of zarr's tests/test_dtype/conftest.py:15-20 (imported by tests/test_array.py:88
# and tests/test_dtype_registry.py:38)
examples = []
for wrapper_cls in data_type_registry.contents.values():
    if wrapper_cls is Struct:
        # Struct.from_native_dtype -> get_data_type_from_native_dtype -> match_dtype -> _lazy_load
        examples.append(wrapper_cls.from_native_dtype(np.dtype([("a", np.float64), ("b", np.int8)])))
print("ok:", len(examples))
