"""Damaged chunks of a source: found chunk by chunk (``zdt inspect --check``, ``zdt.check``),
and read around (``zdt convert --on-damaged-chunk fill``: a damaged chunk's elements get the
array's fill value, and the run reports every one).

A chunk is damaged when its bytes are there but do not decode (a truncated or corrupted frame,
a codec's checksum, a shard index that points outside its shard). A chunk the store cannot give
(an I/O error, a timeout, a refused request) is a storage fault, not damage: it stops the run
with the store's error (exit 3), since the chunk may be whole and readable on the next try.
A missing chunk is not damage either: zarr reads it as the fill value, as it was written.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np

from zdt.engine import arrays
from zdt.engine.arrays import storage_fault
from zdt.stores.location import reason
from zdt.stores.nodes import codecs_text


@dataclass(frozen=True)
class Damage:
    """One chunk that does not decode."""

    array: str          # "/temp"
    key: str            # the chunk's store key ("c/2"); sharded: the shard's, and the chunk in it
    reason: str         # the codecs and what the decoder said

    def __str__(self) -> str:
        return f"{self.array} chunk {self.key}: {self.reason}"

    def to_json(self) -> dict[str, str]:
        return {"array": self.array, "chunk": self.key, "reason": self.reason}


def reason_of(arr: Any, exc: BaseException) -> str:
    return f"{codecs_text(arr)}: {reason(exc)}"


def chunk_key(arr: Any, cell: tuple[int, ...]) -> str:
    """A chunk's store key; for a sharded array the shard's key and the chunk's place in it."""
    shards = getattr(arr, "shards", None)
    if not shards:
        return arr.metadata.encode_chunk_key(cell)
    per = [s // c for s, c in zip(shards, arr.chunks, strict=True)]
    shard = tuple(i // p for i, p in zip(cell, per, strict=True))
    inner = tuple(i % p for i, p in zip(cell, per, strict=True))
    return f"{arr.metadata.encode_chunk_key(shard)} (inner chunk {inner})"


def filled(arr: Any, shape: tuple[int, ...]) -> np.ndarray:
    """`shape` elements of the array's fill value (its type's zero when it declares none)."""
    out = np.zeros(shape, dtype=arr.dtype)
    if arr.fill_value is not None:
        out[...] = arr.fill_value
    return out


def read_around(arr: Any, region: tuple[slice, ...]) -> tuple[np.ndarray, list[Damage]]:
    """The values of `region`, a damaged chunk's elements the fill value, and the damage; a
    storage fault raises StorageError (see the module)."""
    try:
        return np.asarray(arr[region]), []
    except MemoryError:
        raise
    except Exception as exc:                # zarr's and the codecs' errors name no chunk
        if storage_fault(exc):
            raise arrays.read_failure(arr, region, exc) from exc
    out = filled(arr, tuple(s.stop - s.start for s in region))
    damaged = []
    for cell in arrays.grid_cells(region, arr.chunks):     # (inner chunks, for a sharded array)
        part = tuple(slice(max(s.start, i * c), min(s.stop, (i + 1) * c))
                     for s, i, c in zip(region, cell, arr.chunks, strict=True))
        local = tuple(slice(p.start - s.start, p.stop - s.start) for p, s in zip(part, region, strict=True))
        try:
            out[local] = arr[part]
        except MemoryError:
            raise
        except Exception as exc:
            if storage_fault(exc):
                raise arrays.read_failure(arr, part, exc) from exc
            damaged.append(Damage("/" + arr.path, chunk_key(arr, cell), reason_of(arr, exc)))
    return out, damaged


def chunk_count(arr: Any) -> int:
    return int(np.prod([max(1, -(-s // c)) for s, c in zip(arr.shape, arr.chunks, strict=True)]))


def check_array(arr: Any, progress: Any = None) -> list[Damage]:
    """Every chunk of the array read and decoded (storage unit by storage unit, on the thread
    pool; `progress(label, total)` gives the bar's advance); the ones that do not decode, in
    key order."""
    from zdt.engine.decide import THREADS
    from zdt.pipeline import workers

    units = arrays.storage_units(arr)
    advance = progress(f"check /{arr.path}", len(units)) if progress is not None else None

    def one(region: tuple[slice, ...]) -> list[Damage]:
        damaged = read_around(arr, region)[1]
        if advance is not None:
            advance(1)
        return damaged

    with ThreadPoolExecutor(workers(most=THREADS), thread_name_prefix="zdt-check") as pool:
        return [d for part in pool.map(one, units) for d in part]


class Salvage:
    """``--on-damaged-chunk fill``: readers that read around damaged chunks (read_around) and
    remember each one once, however often it is read (the survey and the writes read the same
    units). Shared by the threads of a run."""

    def __init__(self) -> None:
        import threading

        self._lock = threading.Lock()
        self._found: dict[tuple[str, str], Damage] = {}

    def note(self, damaged: list[Damage]) -> None:
        with self._lock:
            for d in damaged:
                self._found.setdefault((d.array, d.key), d)

    def reader(self, arr: Any) -> Any:
        def read(region: tuple[slice, ...]) -> np.ndarray:
            values, damaged = read_around(arr, region)
            self.note(damaged)
            return values
        return read

    def found(self, array: str | None = None) -> list[Damage]:
        """The damage seen so far (of one array: its path), in the order it was first seen."""
        with self._lock:
            return [d for d in self._found.values() if array is None or d.array == array]


def salvage_copied(arr: Any, new: Any, salvage: Salvage) -> None:
    """An array copied byte for byte (`new`, in the destination) from a source whose chunks
    may be damaged: every chunk read; each storage unit with a damaged chunk written again
    through `new`'s codecs from what decodes, the damaged chunks' elements the fill value (a
    unit of nothing but the fill value is no chunk at all, as zarr writes it)."""
    def one(region: tuple[slice, ...]) -> None:
        values, damaged = read_around(arr, region)
        if damaged:
            salvage.note(damaged)
            new[region] = values

    from zdt.engine.decide import THREADS
    from zdt.pipeline import workers

    with ThreadPoolExecutor(workers(most=THREADS), thread_name_prefix="zdt-salvage") as pool:
        list(pool.map(one, arrays.storage_units(arr)))


ATTRIBUTE = "zdt_damaged_chunks"


def record(new: Any, damaged: list[Damage]) -> None:
    """The damaged chunks of the source, in the written array's attributes (ATTRIBUTE: a list
    of {"chunk", "reason"}), so the copy says what it does not hold."""
    if damaged:
        new.attrs[ATTRIBUTE] = [{"chunk": d.key, "reason": d.reason} for d in damaged]
