"""Writing one re-encoded array of a conversion (zdt.engine.conversion), storage unit by
storage unit.

The array is created like the source's (shape, chunks, shards, fill value, attributes,
dimension names, format) with the plan's codecs. Every storage unit written with a bound is
checked first: its values go through the encoding's stages and back in memory and the error is
computed exactly; a unit that breaks the bound stops the run, naming the element and its value
in the data's units. Units run on this process's threads, or on a dask cluster
(zdt.engine.cluster), into a `zdt.stores.destination.Destination`.

Edge chunks. zarr stores every chunk whole, and pads the part of an edge chunk past the array's
edge with the fill value, which is then encoded with the rest; no reader looks at it. zdt pads
it with what codes cheapest instead (zdt.engine.measure.padding_for): of runs (each element
repeating the real one before it in the chunk's order, which a delta coder codes for next to
nothing) and the fill value (cheaper where the values are noise), whichever writes fewer bytes
with the copy's own codecs (`arrays.ChunkSizer`); zdt.predict keeps zarr's fill value, which it
masks. To make zarr store that padding, a unit that ends inside an inner chunk is written
through a view of the same array (same store, same keys) whose shape is the array's rounded up
to whole inner chunks: the unit's region, rounded up the same way, is whole chunks there, and
zarr encodes them as given. The view's metadata is never stored, and inner chunks wholly past
the edge stay absent (the shape is rounded to the inner chunk grid, not to the shard grid). The
check compares the real elements only; measure sizes trials' edge chunks the same way, so what
suggest counts is what is written.
"""

from __future__ import annotations

import json
import os
import signal
import warnings
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np

from zdt.codecs.zarr.predict import PredictCodec
from zdt.engine import arrays, damage, predict_memo
from zdt.engine.bounds import Bound, error_of, worst_element
from zdt.engine.candidates import Encoding
from zdt.engine.compressors import Compression, to_v2
from zdt.engine.decide import THREADS
from zdt.engine.measure import (ChunkRunner, Output, chunk_slices, is_lossy, padding_for, paddings,
                                zdt_codecs)
from zdt.engine.packing import Packing
from zdt.engine.plan import Decision, fmt_error, split_codecs
from zdt.errors import InputError, UsageError, ZdtError
from zdt.stores.destination import Destination
from zdt.stores.nodes import stored_chunk_bytes


# --- a codec chain and the arrays written with it --------------------------------------------

def parse_codecs(codecs: Any, where: str = "codecs") -> list[dict]:
    """A codec chain given as JSON text, a codec, or a list of codecs -> the list."""
    if isinstance(codecs, str):
        try:
            codecs = json.loads(codecs)
        except json.JSONDecodeError as exc:
            raise UsageError(f"{where} is not JSON: {exc}") from None
    if isinstance(codecs, dict):
        codecs = [codecs]
    if not isinstance(codecs, list) or not codecs or not all(isinstance(c, dict) and "name" in c for c in codecs):
        raise UsageError(f'{where} must be a list of codecs like {{"name": ..., "configuration": {{...}}}}')
    return codecs


@contextmanager
def numcodecs_note_silenced() -> Iterator[None]:
    """Without zarr's note that numcodecs.* codecs are not in the v3 spec, which it gives for
    every array with one that it creates or opens: the readers were chosen, and what zdt prints
    is its report alone."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "Numcodecs codecs are not in the Zarr")
        yield


def open_written(store: Any, path: str, mode: str) -> Any:
    """An array of the destination, opened without zarr's note on numcodecs codecs."""
    import zarr

    with numcodecs_note_silenced():
        return zarr.open_array(store=store, path=path, mode=mode)


def create_like(root: Any, arr: Any, codecs: list[dict], compression: Compression) -> Any:
    """An empty array in the store `root` like `arr` (shape, chunks, shards, fill value,
    attributes, dimension names, format), with `codecs` and the compressors `compression` gives
    it (compressors in `codecs` win)."""
    import zarr

    meta = arr.metadata
    filters, serializer, inline = split_codecs(codecs)
    # a chain that names its serializer names all its compressors (none: none); one without
    # (a plan written by hand, --codecs) gets the compressors `compression` gives the array
    compressors: Any = inline if serializer is not None else compression.for_array(arr)
    if meta.zarr_format == 2 and serializer is not None:
        compressors = to_v2(list(inline))
    kwargs: dict[str, Any] = dict(
        store=root, name=arr.path or None, shape=arr.shape, chunks=arr.chunks,
        dtype=meta.data_type if meta.zarr_format == 3 else arr.dtype,
        fill_value=arr.fill_value, attributes=dict(arr.attrs), compressors=compressors or None,
        zarr_format=meta.zarr_format, overwrite=False)
    if meta.zarr_format == 3:
        kwargs.update(filters=zdt_codecs(filters), shards=getattr(arr, "shards", None),
                      dimension_names=meta.dimension_names)
        if serializer:
            kwargs["serializer"] = serializer
    else:
        if serializer and serializer["name"] != "bytes":
            raise UsageError(f"/{arr.path}: zarr format 2 arrays have no {serializer['name']!r}")
        kwargs.update(filters=arrays.v2_filters(filters, np.dtype(arr.dtype)), order=meta.order)
    try:
        with numcodecs_note_silenced():
            return zarr.create_array(**kwargs)
    except (ValueError, TypeError, KeyError) as exc:
        raise InputError(f"/{arr.path}: cannot create it with codecs {json.dumps(codecs)}: "
                         f"{str(exc).splitlines()[0]}") from None


def runner_for(arr: Any, d: Decision) -> ChunkRunner:
    """The decision's encoding on chunks in memory (what the written array will hold; with
    round_with, the values rounded in memory)."""
    filters, serializer, _ = split_codecs(d.codecs)
    if is_lossy(serializer) and any(f["name"] == "transpose" for f in filters):
        # (its predictions run along the transposed chunk: checking it means transposing too)
        raise InputError(f"/{arr.path}: {serializer['name']} behind a transpose: convert cannot "
                         f"check that chain yet; give the chain without the transpose")
    # (a transpose only reorders a chunk's elements for the serializer: the values are the same)
    filters = [f for f in filters if f["name"] != "transpose"]
    enc = Encoding(d.why, tuple(filters), serializer, "", True, rounding=tuple(d.round_with or ()))
    output = Output(arr.metadata.zarr_format, tuple(arr.chunks), arr.fill_value)
    return ChunkRunner(enc, np.dtype(arr.dtype), output)


def unit_label(region: tuple[slice, ...]) -> str:
    return "(" + ", ".join(f"{s.start}:{s.stop}" for s in region) + ")"


# --- one array --------------------------------------------------------------------------------

class UnitWriter:
    """Writes storage units of one array: each read from the source, checked against the bound
    (if any), written to `new`. Built in this process, or in a dask worker
    (zdt.engine.cluster)."""

    def __init__(self, arr: Any, new: Any, d: Decision, salvage: Any = None) -> None:
        self.path = "/" + arr.path
        self.read = arrays.reader(arr, salvage)
        self.new = new
        self.bound = d.check
        declared = arrays.sentinels_of(arr)
        self.declared = dict(sentinels=declared.values, masking=declared.masking, valid=declared.valid)
        self.runner = runner_for(arr, d) if d.bound is not None else None
        self.grid = tuple(arr.chunks)       # the inner chunks (a shard's, if sharded)
        self.output = Output(arr.metadata.zarr_format, self.grid, arr.fill_value)
        self.padding = padding_for(split_codecs(d.codecs or [])[1], self.output)
        self._whole: Any = None             # the whole-chunk view (_store)
        self._sizer: arrays.ChunkSizer | None = None

    def reopen(self, out: Any) -> None:
        """Write into the store `out` from now on (an Icechunk session after a checkpoint)."""
        self.new = open_written(out, self.path.lstrip("/"), "r+")
        self._whole = self._sizer = None

    def write(self, i: int, region: tuple[slice, ...]) -> float:
        """Unit i (at `region`); returns its largest error (0 without a bound)."""
        x = self.read(region)
        if self.runner is None or self.runner.lossy is None:
            return self._check_and_write(i, region, x)
        # (the check encodes every chunk of a lossy serializer: the write takes those bytes
        # instead of encoding each chunk again, predict_memo)
        PredictCodec.encoded = predict_memo
        with predict_memo.session():
            return self._check_and_write(i, region, x)

    def _check_and_write(self, i: int, region: tuple[slice, ...], x: np.ndarray) -> float:
        path, bound = self.path, self.bound
        error = 0.0
        if self.runner is not None:
            try:
                y = self.runner.values(x)
            except ZdtError as exc:
                idx = getattr(exc, "index", None)
                at = ""
                if isinstance(idx, tuple) and len(idx) == x.ndim:
                    g = tuple(s.start + k for s, k in zip(region, idx, strict=True))
                    at = f"the value {x[idx].item()!r} at {g}: "
                raise InputError(f"{path}: the storage unit {unit_label(region)} cannot be "
                                 f"encoded: {at}{str(exc).splitlines()[0]}") from None
            error = error_of(x, y, bound, **self.declared)
            if not error <= bound.value:
                raise InputError(f"{path}: the storage unit {unit_label(region)} breaks the "
                                 f"{bound.describe()}: {self._worst(x, y, region)}")
            if self.runner.encoding.rounding:
                x = y                   # the values rounded in memory are what is written
        try:
            self._store(region, x)
        except ZdtError as exc:
            raise InputError(f"{path}: writing the storage unit {unit_label(region)}: "
                             f"{str(exc).splitlines()[0]}") from None
        except OSError as exc:          # (storage_failure names the chunk key in its line)
            exc.zdt_key = self._key(region)
            raise
        kill_point("unit", i)
        return error

    def _store(self, region: tuple[slice, ...], x: np.ndarray) -> None:
        """`x` into the copy at `region`; a unit that ends inside an inner chunk through the
        whole-chunk view, its edge chunks padded (the module's docstring)."""
        whole = tuple(slice(s.start, -(-s.stop // c) * c)
                      for s, c in zip(region, self.grid, strict=True))
        if whole == region or self.padding == "fill":
            self.new[region] = x        # (zarr pads with the fill value itself)
            return
        if self._whole is None:
            self._whole = arrays.whole_chunk_view(self.new)
        shape = tuple(s.stop - s.start for s in whole)
        unit = np.empty(shape, dtype=x.dtype)
        for sel in chunk_slices(shape, self.grid):
            piece = x[tuple(slice(s.start, min(s.stop, n)) for s, n in zip(sel, x.shape, strict=True))]
            unit[sel] = self._cheapest(piece)
        self._whole[whole] = unit

    def _cheapest(self, piece: np.ndarray) -> np.ndarray:
        """The chunk `piece` as stored: an edge chunk under the way that writes the fewest
        bytes with the copy's own codecs (the first, on a tie: as measure counts it)."""
        ways = paddings(piece, self.grid, self.output.fill_value, self.padding)
        if len(ways) == 1:
            return ways[0]
        if self._sizer is None:
            self._sizer = arrays.ChunkSizer(self.new)
        sizes = []
        for w in ways:
            try:
                sizes.append(self._sizer.nbytes(w))
            except (ZdtError, ValueError):      # (a fill value outside a filter's range)
                sizes.append(np.inf)
        return ways[sizes.index(min(sizes))]

    def _key(self, region: tuple[slice, ...]) -> str | None:
        """The key of the storage unit at `region` in the copy (c/3/1; a shard's, if sharded)."""
        try:
            unit = getattr(self.new, "shards", None) or self.new.chunks
            coords = tuple(s.start // n for s, n in zip(region, unit, strict=True))
            key = self.new.metadata.encode_chunk_key(coords)
        except (AttributeError, TypeError, ValueError, ZeroDivisionError):
            return None
        return f"{self.new.path}/{key}" if self.new.path else key

    def _worst(self, x: np.ndarray, y: np.ndarray, region: tuple[slice, ...]) -> str:
        """The element that breaks the bound, by its index in the array, in the data's units."""
        i, why = worst_element(x, y, self.bound, **self.declared)
        local = np.unravel_index(i, x.shape)
        index = tuple(int(s.start + j) for s, j in zip(region, local, strict=True))
        return (f"element {index} = {x.reshape(-1)[i].item()!r} reads back as "
                f"{y.reshape(-1)[i].item()!r} ({why})")


def run_windowed(todo: list, submit: Callable[[Any], Any], settle: Callable[[Any, Any], list[float]],
                 dest: Destination, window: int, after: Callable[[], None] | None = None,
                 cancel: Callable[[list], Any] | None = None) -> list[float]:
    """Every item of `todo` started with `submit(item)` (a future), at most `window` in flight,
    each settled with `settle(item, future)` (its errors) in the order started. When the
    destination's checkpoint is due (before a unit is started, and after the last) no unit is
    started until those in flight are settled; then dest.checkpoint() and `after()` (the store
    written is a new one)."""
    errors: list[float] = []
    pending: deque = deque()

    def checkpoint() -> None:
        while pending:
            errors.extend(settle(*pending.popleft()))
        dest.checkpoint()
        if after is not None:
            after()

    try:
        for item in todo:
            if dest.checkpoint_due():
                checkpoint()
            pending.append((item, submit(item)))
            while len(pending) >= window:
                errors.extend(settle(*pending.popleft()))
        while pending:
            errors.extend(settle(*pending.popleft()))
        if dest.checkpoint_due():           # the array's last units
            checkpoint()
    except BaseException:
        if cancel is not None:
            cancel([f for _, f in pending])
        raise
    return errors


@dataclass
class ArrayReport:
    """What a conversion did with one array."""

    path: str
    action: str                 # "encode" or "copy"
    encoding: str               # the encoding's description, or why the array was copied
    bytes_before: int           # its chunks' bytes in the source
    bytes_after: int            # ... and in the copy
    error: float | None         # the largest error over every value written (None: copied)
    bound: Bound | None = None
    resumed_units: int = 0      # units a stopped run wrote, checked again and kept

    def line(self) -> str:
        if self.action == "copy":
            return f"{self.path}: copied ({self.encoding})" if self.encoding else f"{self.path}: copied"
        checked = (f", largest {self.bound.kind} error {fmt_error(self.error)} (every value)"
                   if self.bound is not None else "")
        if self.resumed_units and self.bound is not None:
            checked += f" ({self.resumed_units} units written by the stopped run, checked again)"
        return f"{self.path}: {self.encoding}{checked}"


def write_array(dest: Destination, arr: Any, d: Decision, compression: Compression,
                progress: Any, cluster: Any = None, salvage: Any = None) -> ArrayReport:
    """Create the re-encoded array (or, resuming, open it) and write it unit by unit, on this
    machine's threads or on `cluster`; units an earlier run wrote are skipped (the conversion
    verified them)."""
    path = "/" + arr.path
    done = dest.done(path)
    new = None
    if dest.resume:             # the stopped run may have created it before writing a unit
        try:
            new = open_written(dest.store, arr.path, "r+")
        except (FileNotFoundError, KeyError, ValueError):
            new = None
    if new is None:
        new = create_like(dest.store, arr, d.codecs, compression)
    regions = arrays.storage_units(arr)
    todo = [(i, r) for i, r in enumerate(regions) if str(i) not in done]
    advance = progress(f"write {path}", len(regions))
    advance(len(regions) - len(todo))
    if cluster is not None:
        errors = cluster.write_units(dest, arr, d, todo, advance)
    else:
        from zdt.pipeline import workers

        writer = UnitWriter(arr, new, d, salvage)

        def one(item: tuple[int, tuple[slice, ...]]) -> float:
            error = writer.write(*item)
            dest.mark(path, str(item[0]))
            advance(1)
            return error

        threads = workers(most=THREADS)
        with ThreadPoolExecutor(threads, thread_name_prefix="zdt-convert") as pool:
            errors = run_windowed(todo, lambda item: pool.submit(one, item),
                                  lambda item, future: [future.result()], dest, 2 * threads,
                                  after=lambda: writer.reopen(dest.store),
                                  cancel=lambda futures: [f.cancel() for f in futures])
    found = salvage.found(path) if salvage is not None else []
    if found:
        damage.record(open_written(dest.store, arr.path, "r+"), found)
    written = open_written(dest.store, arr.path, "r")
    error = max(errors, default=0.0) if d.bound is not None else None
    packing = Packing.of(arr)
    if error is not None and packing is not None and d.stored_bound is not None:
        error = packing.physical_error(error)
    # (a Dataset variable: what a plain to_zarr stores of it, counted as its units were read)
    before = arr.stored_bytes() if getattr(arr, "zdt_view", False) else stored_chunk_bytes(arr)
    return ArrayReport(path, "encode", d.why, before, stored_chunk_bytes(written), error, d.bound,
                       len(done))


def kill_point(where: str, unit: int | None = None) -> None:
    """Testing hook (tests/stores/test_command_stores.py): ZDT_CONVERT_KILL_AT=survey|unit:N|last|finish
    sends this process SIGKILL there, as a preempted node would be stopped."""
    at = os.environ.get("ZDT_CONVERT_KILL_AT")
    if at and at == (where if unit is None else f"{where}:{unit}"):
        os.kill(os.getpid(), signal.SIGKILL)
