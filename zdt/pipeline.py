"""zdt's codec pipeline for zarr: fused array -> array chains, chunks straight into place, in
parallel.

Select it with ``zdt.use_pipeline()`` or zarr's config key ``codec_pipeline.path`` set to
``"zdt.pipeline.ZdtCodecPipeline"`` (``ZARR_CODEC_PIPELINE__PATH`` in the environment).

For a chunk whose array -> array codecs are element-wise zdt codecs (``ElementwiseCodec``:
``scale_offset``, ``cast_value``, ``bitround``, in any number and order, or none), then any
array -> bytes and bytes -> bytes codecs with synchronous methods (bytes, packbits, zstd,
crc32c, ...):

* reading: the stored bytes go through the bytes codecs, then the selected part of the chunk
  goes through every array -> array codec at once, block by block (`zdt.codecs.steps.run`
  over the kernels' ``run_steps``: each block of 2048 elements passes every step while it is
  in cache), straight into its region of the output array; a missing chunk writes the fill
  value there;
* writing: the caller's region (or the merged chunk, for a partial write) goes through the
  chain the other way into one chunk-sized array, then the bytes codecs; a chunk equal to the
  fill value is deleted unless ``write_empty_chunks``;
* chunks run on a thread pool (the kernels release the GIL) in groups of consecutive chunks;
  its size is zarr's ``threading.max_workers``, else ``codec_pipeline.max_workers``, else the
  number of CPUs. A store with zarr's synchronous surface (zarr >= 3.4) is read and written
  from the pool's threads; any other through zarr's event loop, which fetches a group before
  the pool's work on it and stores it after.

zarr format 2 arrays (numcodecs filters and compressor in one array -> bytes codec) take the
same path where that codec has synchronous methods (zarr >= 3.4). Anything else (a sharded
array's outer level, codecs without synchronous methods, other output buffers) goes to zarr's
own BatchedCodecPipeline unchanged, so the stored bytes never depend on the pipeline. Inside
a shard, zarr builds the configured pipeline for the inner chunks, so they are fused too.

Errors: a failing element raises the error of the codec whose step failed (the element's
index in the chunk, its value at that stage, the data types), the message zarr's pipeline
gives running the codecs one by one. A read decodes only the selected elements, so an element
outside the selection never fails it.
"""

from __future__ import annotations

import asyncio
import math
import os
import threading
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import zarr
from zarr.abc.codec import ArrayBytesCodec, BytesBytesCodec, CodecPipeline
from zarr.codecs import BytesCodec
from zarr.core.codec_pipeline import BatchedCodecPipeline
from zarr.storage import StorePath

from zdt.codecs import steps
from zdt.codecs.cast import canonical_stage
from zdt.codecs.zarr._base import ElementwiseCodec
from zdt.formats import sub_byte_format

PATH = "zdt.pipeline.ZdtCodecPipeline"
ZARR_DEFAULT = "zarr.core.codec_pipeline.BatchedCodecPipeline"
ZARR_FUSED = "zarr.core.codec_pipeline.FusedCodecPipeline"     # zarr >= 3.4
OURS = "zdt pipeline + zdt codecs"


def comparison_setups(every_combination: bool = True) -> dict[str, dict]:
    """The setups zdt's pipeline is measured against (`zdt demo`, bench/bench_pipeline.py):
    label -> zarr config, OURS last.

    zarr's default pipeline (and its Fused one, zarr >= 3.4) with zarr's own cast_value and
    scale_offset where this zarr can run them; the same pipelines with zdt's codecs (with
    every_combination, else only zarr's default pipeline and only when zarr has no codecs of
    its own); zdt's pipeline with zdt's codecs.
    """
    from zarr.core import codec_pipeline

    from zdt.zarr_compat import codec_config, zarr_builtins_usable

    pipelines = {"zarr default pipeline": ZARR_DEFAULT}
    if hasattr(codec_pipeline, "FusedCodecPipeline"):
        pipelines["zarr Fused pipeline"] = ZARR_FUSED
    zarr_codecs, zdt_codecs = codec_config("zarr"), codec_config("zdt")
    out = {}
    if zarr_builtins_usable():
        out.update({f"{label} + zarr's codecs": {"codec_pipeline.path": path, **zarr_codecs}
                    for label, path in pipelines.items()})
    if every_combination or not out:
        out.update({f"{label} + zdt codecs": {"codec_pipeline.path": path, **zdt_codecs}
                    for label, path in pipelines.items()
                    if every_combination or path == ZARR_DEFAULT})
    out[OURS] = {"codec_pipeline.path": PATH, **zdt_codecs}
    return out


# --- the thread pool (module level: pipelines are pickled with their arrays) -------------------

_pool: ThreadPoolExecutor | None = None
_pool_size = 0
_pool_lock = threading.Lock()


def workers(most: int | None = None) -> int:
    """Threads for chunk work: zarr's threading.max_workers, else codec_pipeline.max_workers
    (zarr >= 3.4), else the number of CPUs; at most `most` (the engine's pools, whose threads
    each hold a storage unit)."""
    n = os.cpu_count() or 1
    for key in ("threading.max_workers", "codec_pipeline.max_workers"):
        configured = zarr.config.get(key, None)
        if configured:
            n = int(configured)
            break
    return max(1, min(most, n)) if most is not None else n


def _executor() -> ThreadPoolExecutor:
    global _pool, _pool_size
    n = workers()
    with _pool_lock:
        if _pool is None or _pool_size != n:
            old, _pool, _pool_size = _pool, ThreadPoolExecutor(n, thread_name_prefix="zdt"), n
            if old is not None:
                old.shutdown(wait=False)
        return _pool


def _reset_after_fork() -> None:
    global _pool, _pool_size
    _pool, _pool_size = None, 0


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_reset_after_fork)


# Chunks go to the pool in groups of about GROUP_ELEMENTS elements: one hand-off (a few tens of
# microseconds of event-loop and thread wake-ups) per group, not per chunk, when chunks are small.
GROUP_ELEMENTS = 1 << 20


def _groups(batch: list) -> list:
    """The batch cut into runs of consecutive chunks, each about GROUP_ELEMENTS elements, and
    at least as many runs as the pool has threads when there are that many chunks."""
    if not batch:
        return []
    per_chunk = max(1, int(np.prod(batch[0][1].shape)))
    k = max(1, min(GROUP_ELEMENTS // per_chunk, -(-len(batch) // workers())))
    return [batch[i:i + k] for i in range(0, len(batch), k)]


class _Requests:
    """The store requests of one read or write through zarr's event loop, at most
    async.concurrency at a time (zarr's rule), from any number of groups."""

    def __init__(self) -> None:
        self.limit = asyncio.Semaphore(zarr.config.get("async.concurrency", 10) or 10)

    async def one(self, coro_fn: Any, *args: Any) -> Any:
        async with self.limit:
            return await coro_fn(*args)

    async def all(self, calls: list) -> list:
        return list(await asyncio.gather(*(self.one(*c) for c in calls)))


async def _nothing() -> None:
    return None


_SYNC_METHODS = ("get_sync", "set_sync", "delete_sync")


def _has_sync_io(byte_getter: Any) -> bool:
    """Whether a chunk's store can be read and written without the event loop (zarr >= 3.4's
    all-or-nothing store sync surface: MemoryStore, LocalStore, a shard's inner chunks). Then
    each group fetches, decodes, encodes and stores its chunks on one pool thread: no
    coroutine per chunk, which at small chunks costs more than the chunk's own work."""
    store = getattr(byte_getter, "store", None)
    if store is not None and hasattr(byte_getter, "path"):         # a StorePath
        return (all(callable(getattr(store, m, None)) for m in _SYNC_METHODS)
                and all(callable(getattr(byte_getter, m, None)) for m in _SYNC_METHODS)
                and bool(getattr(store, "_supports_sync_io", True)))
    return all(callable(getattr(byte_getter, m, None)) for m in _SYNC_METHODS)


def _store_call(byte_io: Any, method: str, *args: Any, **kwargs: Any) -> Any:
    """byte_io.<method>(...) for get_sync / set_sync / delete_sync; a StorePath's store is
    called directly, as StorePath itself does, without its check of the store against a
    runtime Protocol (~1 us a chunk with the GIL held; _has_sync_io checked the store once for
    the batch)."""
    if type(byte_io) is StorePath:
        return getattr(byte_io.store, method)(byte_io.path, *args, **kwargs)
    return getattr(byte_io, method)(*args, **kwargs)


# How a group's work on the pool reaches the store: get(k, item) gives the stored bytes of its
# k-th chunk (None: missing), put(k, item, data) says what to store there (None: delete it).

class _SyncStoreIo:
    """The store's synchronous methods, called from the pool thread that runs the group."""

    @staticmethod
    def get(k: int, item: tuple) -> Any:
        return _store_call(item[0], "get_sync", prototype=item[1].prototype)

    @staticmethod
    def put(k: int, item: tuple, data: Any) -> None:
        if data is None:
            _store_call(item[0], "delete_sync")
        else:
            _store_call(item[0], "set_sync", data)


class _LoopIo:
    """Through zarr's event loop: what it fetched for the group before the pool's work, and
    what it stores after (`stored`)."""

    def __init__(self, fetched: list) -> None:
        self.fetched = fetched
        self.stored: list = []

    def get(self, k: int, item: tuple) -> Any:
        return self.fetched[k]

    def put(self, k: int, item: tuple, data: Any) -> None:
        self.stored.append((item[0], data))


_SYNC_STORE_IO = _SyncStoreIo()


def _chunk_index(shape: tuple[int, ...], selection: Any, drop_axes: tuple[int, ...]) -> Any:
    """For errors: the chunk index of the element at a C-order position of chunk[selection]
    (squeezed by drop_axes). Computed only when an element fails."""
    def nd_index(flat: int) -> tuple[int, ...]:
        positions = np.arange(int(np.prod(shape)), dtype=np.intp).reshape(shape)[selection]
        if drop_axes:
            positions = positions.squeeze(axis=drop_axes)
        return tuple(int(i) for i in np.unravel_index(int(np.reshape(positions, -1)[flat]), shape))
    return nd_index


# --- the chain of one chunk ------------------------------------------------------------------------

def _fill(spec: Any) -> Any:
    fill = spec.fill_value
    return spec.dtype.default_scalar() if fill is None else fill


def _all_fill(chunk: np.ndarray, spec: Any) -> bool:
    """zarr's empty-chunk test (NDBuffer.all_equal against the fill value). Its comparison is
    element-wise (by value with NaN equal to NaN, or by bits when the fill is a float zero), so
    a first element of a different value (not both NaN) decides it without reading the chunk."""
    fill = _fill(spec)
    if chunk.size and chunk.dtype.kind in "biuf" and isinstance(fill, (bool, int, float, np.number)):
        first = chunk.flat[0]
        if first != fill and not (first != first and fill != fill):
            return False
    return bool(spec.prototype.nd_buffer.from_ndarray_like(chunk).all_equal(fill))


def _has_sync(codec: Any) -> bool:
    return callable(getattr(codec, "_decode_sync", None)) and callable(getattr(codec, "_encode_sync", None))


@dataclass(frozen=True)
class ChunkCodecs:
    """The codecs of chunks of one spec, resolved once: the spec each codec sees, the fused
    element-wise stages of both directions and the bytes codecs. Runs chunks held in memory
    either way; zdt's pipeline uses it for every fused chunk, and `zdt suggest` / `convert`
    to measure candidate encodings on chunks in memory (no zarr array per candidate).

    Under zarr's `bytes` codec, a sub-byte data type (int2 / int4 / uint2 / uint4, float4 /
    float6) gets zdt's rule for the unused high bits as a stage at each end: ignored on read,
    written as the sign extension (signed integers) or zero."""

    aa: tuple               # the element-wise array -> array codecs
    ab: Any                 # the array -> bytes codec
    bb: tuple               # bytes -> bytes codecs
    aa_specs: tuple
    ab_spec: Any
    bb_specs: tuple
    decode: list            # zdt.codecs.steps.Stage, in the order they run
    encode: list
    stored_dtype: np.dtype  # what the array -> bytes codec holds (after every array -> array codec)
    nbytes: int | None      # a chunk's length in bytes under zarr's `bytes` codec (else None)

    @classmethod
    def resolve(cls, aa: tuple, ab: Any, bb: tuple, chunk_spec: Any) -> ChunkCodecs:
        """Resolve the spec each codec sees (as zarr's pipeline does) and collect the
        element-wise codecs' stages."""
        aa_specs, spec = [], chunk_spec
        encode, decode = [], []
        for codec in aa:
            aa_specs.append(spec)
            stages = codec.stages(spec)
            if stages.encode is not None:
                encode.append(stages.encode)
            if stages.decode is not None:
                decode.insert(0, stages.decode)
            spec = codec.resolve_metadata(spec)
        ab_spec = spec
        stored = ab_spec.dtype.to_native_dtype()
        fmt = sub_byte_format(ab_spec.dtype)
        if fmt is not None and isinstance(ab, BytesCodec):
            encode.append(canonical_stage(fmt))
            decode.insert(0, canonical_stage(fmt))
        spec = ab.resolve_metadata(spec)
        bb_specs = []
        for codec in bb:
            bb_specs.append(spec)
            spec = codec.resolve_metadata(spec)
        return cls(tuple(aa), ab, tuple(bb), tuple(aa_specs), ab_spec, tuple(bb_specs), decode,
                   encode, stored,
                   stored.itemsize * math.prod(ab_spec.shape) if type(ab) is BytesCodec else None)

    def bytes_to_stored(self, raw: Any, key: Any = None) -> np.ndarray:
        """Stored bytes -> the array -> bytes codec's output (the chunk before the stages).
        Under zarr's `bytes` codec, bytes of the wrong length for the chunk raise a ValueError
        naming the chunk (`key`: its store path, if known), both lengths, shape and type."""
        for codec, spec in zip(reversed(self.bb), reversed(self.bb_specs)):
            raw = codec._decode_sync(raw, spec)
        if self.nbytes is not None and len(raw) != self.nbytes:
            name = getattr(key, "path", None) or "a stored chunk"
            raise ValueError(f"{name!r} holds {len(raw)} bytes, not the {self.nbytes} of a chunk "
                             f"of shape {tuple(self.ab_spec.shape)} and type {self.stored_dtype} "
                             f"(a truncated or corrupt chunk, or one written with other codecs)")
        arr = np.asarray(self.ab._decode_sync(raw, self.ab_spec).as_ndarray_like())
        if arr.dtype.itemsize > 1 and not arr.dtype.isnative:
            arr = arr.astype(arr.dtype.newbyteorder("="))
        return arr

    def stored_to_bytes(self, arr: np.ndarray) -> Any:
        """A chunk after the stages -> the bytes the store holds (None: nothing to store)."""
        proto = self.ab_spec.prototype
        data = self.ab._encode_sync(proto.nd_buffer.from_ndarray_like(arr), self.ab_spec)
        for codec, spec in zip(self.bb, self.bb_specs):
            if data is None:
                break
            data = codec._encode_sync(data, spec)
        return data

    def to_stored(self, chunk: np.ndarray) -> np.ndarray:
        """A whole chunk through the encode stages (a new C-ordered array)."""
        stored = np.empty(chunk.shape, dtype=self.stored_dtype.newbyteorder("="), order="C")
        run_chain(self.encode, chunk, stored)
        return stored

    def from_stored(self, stored: np.ndarray, dtype: np.dtype) -> np.ndarray:
        """A whole stored chunk back through the decode stages (a new array of `dtype`)."""
        out = np.empty(stored.shape, dtype=dtype)
        run_chain(self.decode, stored, out)
        return out


def run_chain(stages: list, src: np.ndarray, dst: np.ndarray, nd_index: Any = None) -> None:
    """src -> dst through the fused stages (a plain copy without any); a failing element
    raises its codec's own error, naming its index in the chunk (`nd_index` maps a C-order
    position in src to it) and its value at that stage."""
    if not stages:
        np.copyto(dst, src)
        return
    if not (src.dtype.isnative and src.flags.aligned) or np.may_share_memory(src, dst):
        # (a buffer from elsewhere, e.g. unpickled by dask, may be unaligned)
        src = np.array(src, dtype=src.dtype.newbyteorder("="))
    if not dst.flags.aligned:
        target = np.empty(dst.shape, dtype=dst.dtype)
        steps.run(stages, src, target, where="chunk element", nd_index=nd_index)
        np.copyto(dst, target)
        return
    steps.run(stages, src, dst, where="chunk element", nd_index=nd_index)


@dataclass(frozen=True)
class ZdtCodecPipeline(CodecPipeline):
    """See the module docstring. `inner` is zarr's own pipeline over the same codecs: what zdt
    does not fuse, and the batch methods the sharding codec calls, go there."""

    codecs: tuple
    inner: BatchedCodecPipeline
    fused: bool                 # the chunks' codecs are a chain zdt runs itself

    @classmethod
    def from_codecs(cls, codecs: Iterable[Any], *, batch_size: int | None = None) -> ZdtCodecPipeline:
        codecs = tuple(codecs)
        inner = BatchedCodecPipeline.from_codecs(codecs, batch_size=batch_size)
        return cls(codecs, inner, cls._fusable(inner))

    @staticmethod
    def _fusable(inner: BatchedCodecPipeline) -> bool:
        return (all(isinstance(c, ElementwiseCodec) for c in inner.array_array_codecs)
                and isinstance(inner.array_bytes_codec, ArrayBytesCodec)
                and _has_sync(inner.array_bytes_codec)
                and not hasattr(inner.array_bytes_codec, "decode_partial")
                and all(isinstance(c, BytesBytesCodec) and _has_sync(c) for c in inner.bytes_bytes_codecs))

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state.pop("_stage_cache", None)        # kernel specs: rebuilt after unpickling
        state.pop("_stage_last", None)
        return state

    def evolve_from_array_spec(self, array_spec: Any) -> ZdtCodecPipeline:
        inner = self.inner.evolve_from_array_spec(array_spec)
        return replace(self, codecs=tuple(inner), inner=inner, fused=self._fusable(inner))

    # --- delegated to zarr's pipeline --------------------------------------------------------------
    def __iter__(self) -> Any:
        return iter(self.inner)

    @property
    def supports_partial_decode(self) -> bool:
        return self.inner.supports_partial_decode

    @property
    def supports_partial_encode(self) -> bool:
        return self.inner.supports_partial_encode

    def validate(self, *, shape: tuple[int, ...], dtype: Any, chunk_grid: Any) -> None:
        self.inner.validate(shape=shape, dtype=dtype, chunk_grid=chunk_grid)

    def compute_encoded_size(self, byte_length: int, array_spec: Any) -> int:
        return self.inner.compute_encoded_size(byte_length, array_spec)

    async def decode(self, chunk_bytes_and_specs: Iterable[tuple[Any, Any]]) -> Iterable[Any]:
        return await self.inner.decode(chunk_bytes_and_specs)

    async def encode(self, chunk_arrays_and_specs: Iterable[tuple[Any, Any]]) -> Iterable[Any]:
        return await self.inner.encode(chunk_arrays_and_specs)

    # --- the chunk chain -----------------------------------------------------------------------------
    def _stages(self, chunk_spec: Any) -> ChunkCodecs:
        # specs are immutable values: cache per spec (zarr 3.4 passes one spec object for every
        # chunk; the identity check spares hashing it per chunk)
        last = self.__dict__.get("_stage_last")
        if last is not None and last[0] is chunk_spec:
            return last[1]
        cache = self.__dict__.setdefault("_stage_cache", {})
        try:
            stages = cache.get(chunk_spec)
            hashable = True
        except TypeError:       # an unhashable spec: resolved every time
            stages, hashable = None, False
        if stages is None:
            stages = ChunkCodecs.resolve(self.inner.array_array_codecs, self.inner.array_bytes_codec,
                                         self.inner.bytes_bytes_codecs, chunk_spec)
            if hashable:
                if len(cache) > 64:
                    cache.clear()
                cache[chunk_spec] = stages
        self.__dict__["_stage_last"] = (chunk_spec, stages)
        return stages

    # --- both directions: groups of chunks on the pool ------------------------------------------
    async def _on_pool(self, batch: list, work: Any, fetch_all: bool, *args: Any) -> list:
        """`work(items, io, *args)` for each group of the batch (`_groups`) on the thread pool;
        their results, in order. A store with zarr's synchronous surface is read and written
        from the group's own thread (_SyncStoreIo): no coroutine per chunk, which at small
        chunks costs more than the chunk's own work. Any other through zarr's event loop
        (_LoopIo): a group's chunks are fetched before its work (every one, or without
        `fetch_all` those not written whole) and what it put is stored after, so a group's
        fetches and stores overlap the other groups' work."""
        loop, pool = asyncio.get_running_loop(), _executor()
        if _has_sync_io(batch[0][0]):
            return await asyncio.gather(*(loop.run_in_executor(pool, work, g, _SYNC_STORE_IO, *args)
                                          for g in _groups(batch)))
        requests = _Requests()

        async def group(items: list) -> Any:
            io = _LoopIo(await requests.all([(item[0].get, item[1].prototype)
                                             if fetch_all or not item[4] else (_nothing,)
                                             for item in items]))
            done = await loop.run_in_executor(pool, work, items, io, *args)
            await requests.all([(bs.delete,) if data is None else (bs.set, data)
                                for bs, data in io.stored])
            return done

        return await asyncio.gather(*(group(g) for g in _groups(batch)))

    # --- read -----------------------------------------------------------------------------------------
    def _readable_into(self, out: Any, batch: list) -> bool:
        out_np = out.as_ndarray_like()
        return (self.fused and isinstance(out_np, np.ndarray) and bool(batch)
                and out_np.dtype == batch[0][1].dtype.to_native_dtype())

    async def read(self, batch_info: Iterable[tuple], out: Any, drop_axes: tuple[int, ...] = ()) -> tuple:
        batch = list(batch_info)
        if not self._readable_into(out, batch):
            results = await self.inner.read(batch, out, drop_axes)
            return tuple(results) if results is not None else tuple({"status": "present"} for _ in batch)
        done = await self._on_pool(batch, self._read_group, True, out.as_ndarray_like(), drop_axes)
        return tuple(status for statuses in done for status in statuses)

    def _read_group(self, items: list, io: Any, out_np: np.ndarray, drop_axes: tuple[int, ...]) -> list:
        """A group's chunks decoded into out_np; their statuses (zarr's)."""
        statuses = []
        for k, item in enumerate(items):
            raw = io.get(k, item)
            self._read_one(raw, item, out_np, drop_axes)
            statuses.append({"status": "missing" if raw is None else "present"})
        return statuses

    def _read_one(self, raw: Any, item: tuple, out_np: np.ndarray, drop_axes: tuple[int, ...]) -> None:
        _, chunk_spec, chunk_selection, out_selection, _ = item
        if raw is None:
            out_np[out_selection] = _fill(chunk_spec)
            return
        st = self._stages(chunk_spec)
        stored = st.bytes_to_stored(raw, item[0])
        if stored.shape != tuple(chunk_spec.shape):
            stored = stored.reshape(chunk_spec.shape)
        src = stored[chunk_selection]
        if drop_axes:
            src = src.squeeze(axis=drop_axes)
        dst = out_np[out_selection]
        # (one element of a structured type comes back as an np.void, not a view)
        into_place = (isinstance(dst, np.ndarray) and np.may_share_memory(dst, out_np)
                      and dst.shape == src.shape)
        target = dst if into_place else np.empty(src.shape, dtype=out_np.dtype)
        run_chain(st.decode, src, target, _chunk_index(stored.shape, chunk_selection, drop_axes))
        if not into_place:
            out_np[out_selection] = target

    # --- write ----------------------------------------------------------------------------------------
    async def write(self, batch_info: Iterable[tuple], value: Any, drop_axes: tuple[int, ...] = ()) -> None:
        batch = list(batch_info)
        value_np = value.as_ndarray_like()
        if not (self.fused and batch and isinstance(value_np, np.ndarray)):
            await self.inner.write(batch, value, drop_axes)
            return
        await self._on_pool(batch, self._write_group, False, value_np, drop_axes)

    def _write_group(self, items: list, io: Any, value_np: np.ndarray, drop_axes: tuple[int, ...]) -> None:
        """A group's chunks encoded from value_np (a chunk not written whole merged into what
        the store holds) and stored."""
        for k, item in enumerate(items):
            old = None if item[4] else io.get(k, item)      # (item[4]: the chunk is written whole)
            io.put(k, item, self._write_one(old, item, value_np, drop_axes))

    def _write_one(self, old: Any, item: tuple, value_np: np.ndarray, drop_axes: tuple[int, ...]) -> Any:
        _, chunk_spec, chunk_selection, out_selection, complete = item
        st = self._stages(chunk_spec)
        dtype = chunk_spec.dtype.to_native_dtype()
        shape = tuple(chunk_spec.shape)
        region = value_np if value_np.shape == () else value_np[out_selection]
        if complete and isinstance(region, np.ndarray) and region.shape == shape:
            chunk = region
        else:
            chunk = np.empty(shape, dtype=dtype, order=chunk_spec.order)
            if old is None:
                chunk[...] = _fill(chunk_spec)
            else:
                stored = st.bytes_to_stored(old, item[0]).reshape(shape)
                run_chain(st.decode, stored, chunk)
            if drop_axes and region.shape != ():
                region = region[tuple(None if i in drop_axes else slice(None) for i in range(len(shape)))]
            chunk[chunk_selection] = region
        # as zarr: a chunk equal to the fill value (or the type's default) is not stored
        if not chunk_spec.config.write_empty_chunks and _all_fill(chunk, chunk_spec):
            return None
        chunk = np.asarray(chunk, dtype=dtype)
        if not st.encode:
            return st.stored_to_bytes(chunk)         # as zarr's pipeline: no copy first
        return st.stored_to_bytes(st.to_stored(chunk))



class use_pipeline:
    """Make zarr use zdt's codec pipeline for the arrays it opens from now on (``enable=False``:
    zarr's default); as a context manager, only inside the block::

        zdt.use_pipeline()
        with zdt.use_pipeline():
            ...
    """

    def __init__(self, enable: bool = True) -> None:
        self._previous = zarr.config.get("codec_pipeline.path")
        zarr.config.set({"codec_pipeline.path": PATH if enable else ZARR_DEFAULT})

    def __enter__(self) -> use_pipeline:
        return self

    def __exit__(self, *exc: object) -> None:
        zarr.config.set({"codec_pipeline.path": self._previous})
