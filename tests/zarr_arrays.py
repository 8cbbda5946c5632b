"""Arrays in memory for the tests of what the engine decides (test_suggest, test_commands):
a zarr array holding given data (`source`), and data written through a fresh zarr array with a
list of codecs then zstd at LEVEL (`written`: what reads back, and the bytes of its chunks)."""

from __future__ import annotations

import numpy as np
import zarr
from zarr.storage import MemoryStore

LEVEL = 3


def source(data: np.ndarray, fill, chunks=None, attrs=None) -> zarr.Array:
    a = zarr.create_array(MemoryStore(), shape=data.shape, chunks=chunks or data.shape,
                          dtype=data.dtype, fill_value=fill, attributes=attrs or {})
    a[...] = data
    return a


def written(arr: zarr.Array, codecs: list[dict]) -> tuple[np.ndarray, int]:
    """arr's data through a fresh array with `codecs` and zstd: (what reads back, the bytes of
    its chunks)."""
    from zdt.engine.plan import split_codecs

    filters, serializer, _ = split_codecs(codecs)
    store = MemoryStore()
    kw = {"serializer": serializer} if serializer else {}
    out = zarr.create_array(store, shape=arr.shape, chunks=arr.chunks, dtype=arr.dtype,
                            fill_value=arr.fill_value, filters=filters,
                            compressors=[{"name": "zstd", "configuration": {"level": LEVEL}}], **kw)
    out[...] = arr[...]
    nbytes = sum(len(v) for k, v in store._store_dict.items() if not k.endswith("zarr.json"))
    return out[...], nbytes
