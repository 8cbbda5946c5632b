"""Arrays in memory for the tests of what the engine decides (test_suggest, test_commands):
a zarr array holding given data (`source`), and data written through a fresh zarr array with a
list of codecs then zstd at LEVEL (`written`: what reads back, and the bytes of its chunks,
edge chunks padded the cheaper of the two ways zdt may pad them)."""

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
    its chunks, each edge chunk stored as the cheaper of zarr's fill padding and the edge
    values repeated, the two paddings zdt may write)."""
    data = arr[...]
    out, by_fill = _chunks_of(data, arr.chunks, arr.fill_value, codecs)
    whole = tuple(-(-n // c) * c for n, c in zip(data.shape, arr.chunks))
    edge = np.pad(data, [(0, w - n) for w, n in zip(whole, data.shape)], mode="edge") if data.size else data
    _, by_edge = _chunks_of(edge, arr.chunks, arr.fill_value, codecs)
    nbytes = sum(min(len(by_fill.get(k, b"")), len(by_edge.get(k, b"")))
                 for k in by_fill.keys() | by_edge.keys())
    return out[...], nbytes


def _chunks_of(data: np.ndarray, chunks: tuple, fill, codecs: list[dict]) -> tuple[zarr.Array, dict]:
    """`data` written through a fresh array with `codecs` and zstd: (the array, its chunks'
    bytes by key)."""
    from zdt.engine.plan import split_codecs

    filters, serializer, _ = split_codecs(codecs)
    store = MemoryStore()
    kw = {"serializer": serializer} if serializer else {}
    out = zarr.create_array(store, shape=data.shape, chunks=chunks, dtype=data.dtype,
                            fill_value=fill, filters=filters,
                            compressors=[{"name": "zstd", "configuration": {"level": LEVEL}}], **kw)
    out[...] = data
    return out, {k: v.to_bytes() for k, v in store._store_dict.items() if not k.endswith("zarr.json")}
