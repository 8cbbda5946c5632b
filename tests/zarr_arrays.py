"""Arrays in memory for the tests of what the engine decides (test_suggest, test_commands):
a zarr array holding given data (`source`), and data written through a fresh zarr array with a
list of codecs then zstd at LEVEL (`written`: what reads back, and the bytes of its chunks,
edge chunks padded as zdt pads them)."""

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
    its chunks, each edge chunk padded as zdt pads it: the fewer bytes of repeat_padded's and
    zarr's fill value, or the fill value alone under zdt.predict)."""
    data = arr[...]
    back, by_fill = _written(data, arr.chunks, arr.fill_value, codecs)
    if any(c.get("name") == "zdt.predict" for c in codecs) or data.shape == ():
        return back[...], sum(map(len, by_fill.values()))
    _, by_repeat = _written(repeat_padded(data, arr.chunks), arr.chunks, arr.fill_value, codecs)
    nbytes = sum(min(len(by_fill.get(k, b"")), len(by_repeat.get(k, b"")))
                 for k in by_fill.keys() | by_repeat.keys())
    return back[...], nbytes


def repeat_padded(data: np.ndarray, chunks: tuple) -> np.ndarray:
    """`data` grown to whole chunks, each edge chunk padded as zdt pads it: every element past
    the array's edge the real element before it in the chunk's C order."""
    whole = tuple(-(-n // c) * c for n, c in zip(data.shape, chunks))
    out = np.zeros(whole, dtype=data.dtype)
    for corner in np.ndindex(*[w // c for w, c in zip(whole, chunks)]):
        full = tuple(slice(i * c, (i + 1) * c) for i, c in zip(corner, chunks))
        piece = data[full]
        if piece.size == 0:
            continue
        chunk = np.zeros(chunks, dtype=data.dtype).reshape(-1)
        last = None
        for k, index in enumerate(np.ndindex(*chunks)):
            if all(i < n for i, n in zip(index, piece.shape)):
                last = piece[index]
            chunk[k] = last
        out[full] = chunk.reshape(chunks)
    return out


def _written(data: np.ndarray, chunks: tuple, fill, codecs: list[dict]) -> tuple[zarr.Array, dict]:
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
