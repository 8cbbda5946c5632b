"""zdt.predict chunks encoded for convert's check, kept for the write that follows (the zarr
codec asks its `encoded` hook, which zdt.engine.writer points here: the codec itself knows
nothing of conversions).

convert checks a storage unit by encoding and decoding each of its chunks (the decision's
chain as a reader decodes it: zdt.engine.measure.ChunkRunner), then writes the unit through
zarr, which encodes every chunk again: with zdt.predict, half the write's time went to the
second encoding. Encoding is a pure function of (the configuration, the data type, the shape,
the fill value, the values bit for bit), so the write may take the bytes the check made.

Inside `session()` (the thread that checks and then writes one unit), every chunk zdt.predict
encodes is kept: its key, a copy of its values and its bytes. Any thread's encode first asks
`take` for a kept chunk with the same key and the same values (compared bit for bit against
the copy, so nothing done to the caller's array afterwards can change what matches); a match
is handed out once. When the session ends, what it kept and nobody took is dropped. At most
LIMIT bytes of values are kept at a time (a unit larger than that: its first chunks); a chunk
not found only costs the encoding it would have cost anyway.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np

LIMIT = 64 << 20            # bytes of values kept at a time, over every session
PROBES = 4096               # the values a fingerprint reads (spread over the chunk)


@dataclass
class _Kept:
    owner: int                  # the session's thread
    key: tuple
    fingerprint: int
    values: np.ndarray          # a copy, flat, as unsigned integers of the values' width
    data: bytes


_lock = threading.Lock()
_kept: list[_Kept] = []
_local = threading.local()


@contextmanager
def session() -> Iterator[None]:
    """Keep what zdt.predict encodes in this thread until the block ends; then drop what
    nobody took."""
    me = threading.get_ident()
    _local.on = True
    try:
        yield
    finally:
        _local.on = False
        with _lock:
            _kept[:] = [k for k in _kept if k.owner != me]


def take(config: Any, arr: np.ndarray, fill: Any) -> bytes | None:
    """The bytes kept for encoding `arr` with `config` and `fill` (and no longer kept), or
    None."""
    if not _kept:                       # (no session anywhere: the usual case)
        return None
    found = _lookup(config, arr, fill)
    if found is None:
        return None
    key, fingerprint, flat = found
    with _lock:
        for i, k in enumerate(_kept):
            if (k.key == key and k.fingerprint == fingerprint
                    and np.array_equal(k.values, flat)):
                del _kept[i]
                return k.data
    return None


def keep(config: Any, arr: np.ndarray, fill: Any, data: bytes) -> None:
    """Keep `data`, what encoding `arr` with `config` and `fill` gave, if this thread is in a
    session and LIMIT allows."""
    if not getattr(_local, "on", False):
        return
    with _lock:
        if sum(k.values.nbytes for k in _kept) + arr.nbytes > LIMIT:
            return
    found = _lookup(config, arr, fill)
    if found is None:
        return
    key, fingerprint, flat = found
    entry = _Kept(threading.get_ident(), key, fingerprint, flat.copy(), data)
    with _lock:
        _kept.append(entry)


def _lookup(config: Any, arr: np.ndarray, fill: Any) -> tuple[tuple, int, np.ndarray] | None:
    """(the key, the fingerprint, the values as flat unsigned integers (a view where `arr` is
    contiguous)), or None for what is not kept (a fill value the data type cannot hold: the
    encoder says what is wrong)."""
    if arr.dtype.kind not in "iuf" or arr.dtype.itemsize not in (1, 2, 4, 8):
        return None
    try:
        fill_bits = None if fill is None else np.asarray(fill, dtype=arr.dtype).tobytes()
    except Exception:       # (a fill the type cannot hold, a warning made an error: not kept)
        return None
    key = (config, arr.dtype.str, arr.shape, fill_bits)
    flat = np.ascontiguousarray(arr).reshape(-1).view(f"u{arr.dtype.itemsize}")
    step = max(1, flat.size // PROBES)
    return key, hash(flat[::step].tobytes()), flat
