"""Candidate encodings measured on chunks held in memory: the bytes each whole chain writes
(array -> array stage, serializer, compressors) and its error, at kernel level (no zarr array
per candidate per chunk).

An encoding's array -> array stage runs once per chunk (`StageRunner`: zdt's kernels, resolved
once from a throwaway in-memory array, so the codecs are exactly those the output will have);
its error is taken there. Every back end (`BackEnd`: a serializer, bytes or numcodecs.pcodec,
and the compressors after it) then sizes the stored chunk (`BackEndRunner`). `measure` runs
every encoding and back end over the kept units on a thread pool (the kernels, the compressors
and pcodec release the GIL), each unit read once. For a zarr format 2 output the stage is the
numcodecs filters and the back end the numcodecs compressor.

A lossy serializer (zdt.predict: prediction from neighbours, so not element-wise) is measured
by decoding what it wrote: its error is taken there, chunk by chunk, edges padded as zarr
stores them.

`ChunkRunner` is one whole chain on chunks of one shape: what convert checks each unit with.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from zdt.engine.bounds import Bound, error_of
from zdt.engine.candidates import Encoding


@dataclass
class Output:
    """How an output array stores its chunks, apart from the encoding: its format, chunk
    shape and fill value."""

    zarr_format: int
    chunk_shape: tuple[int, ...]
    fill_value: Any


BYTES = {"name": "bytes", "configuration": {"endian": "little"}}
# array -> bytes codecs whose decoded chunk is not what they were given (the others are lossless)
LOSSY_SERIALIZERS = frozenset({"zdt.predict"})


def is_lossy(serializer: Any) -> bool:
    return isinstance(serializer, dict) and serializer.get("name") in LOSSY_SERIALIZERS


@dataclass(frozen=True)
class BackEnd:
    """What follows the array -> array stage: a serializer (None: the encoding's own, bytes or
    packbits) and the compressors (v3 JSON)."""

    serializer: Any = None
    compressors: tuple = ()
    costly: bool = False        # slow to measure: tried only on the encodings that lead
    # a transpose codec's order ahead of the serializer (None: none): pcodec codes the chunk
    # as one sequence, and along some fields' other axis it is smoother (a radar's rays)
    order: tuple | None = None

    @property
    def label(self) -> str:
        parts = []
        if self.serializer is not None:
            c = self.serializer.get("configuration", {})
            pages = c.get("equal_pages_up_to", 262144)
            parts.append(f"{self.serializer['name'].removeprefix('numcodecs.')}"
                         + (f" level {c['level']}" if "level" in c else "")
                         + (f", delta order {c['delta_encoding_order']}" if "delta_encoding_order" in c else "")
                         + (f", pages of up to {pages:,} values" if pages != 262144 else ""))
        if self.order is not None:
            parts.insert(0, f"transpose {list(self.order)}")
        for comp in self.compressors:
            c = comp.get("configuration", {})
            bits = [str(c[k]) for k in ("cname", "level", "clevel", "shuffle") if k in c]
            parts.append(f"{comp['name']}" + (f" ({', '.join(bits)})" if bits else ""))
        return " + ".join(parts) or "no compressor"

    def typed(self, itemsize: int) -> BackEnd:
        """This back end with every blosc compressor's typesize (where it gives none) the
        stored element's size.
        zarr derives a missing typesize from the array's data type, not from what the filters
        store (a float32 array cast to uint8 would be shuffled as 4-byte elements): the plan
        says it, so what is written is what was measured."""
        comps = tuple({**c, "configuration": {"typesize": itemsize, **c.get("configuration", {})}}
                      if c.get("name") == "blosc" else c for c in self.compressors)
        return replace(self, compressors=comps)

    def chain(self, encoding: Encoding) -> list[dict]:
        """The codecs after the encoding's filters, as zarr v3 JSON: always the serializer
        (bytes when nothing else), then every compressor."""
        serializer = self.serializer or encoding.serializer or BYTES
        order = [] if self.order is None else [{"name": "transpose",
                                                "configuration": {"order": list(self.order)}}]
        return [*order, serializer, *self.compressors]


def zdt_codecs(chain: Sequence[Any]) -> list[Any]:
    """Codec JSON with the names zdt encodes itself under another name made zdt's objects:
    numcodecs.bitround is written with zdt's kernel (its decoding is the identity, so any
    reader of the name reads it; numcodecs' own encoder turns some NaN payloads and the largest
    float into infinities)."""
    from zdt.codecs.zarr.bitround import BitroundCodec

    out = []
    for c in chain:
        if isinstance(c, dict) and c.get("name") == "numcodecs.bitround":
            out.append(BitroundCodec(keepbits=c["configuration"]["keepbits"], name=c["name"]))
        else:
            out.append(c)
    return out


def resolve_chunk_codecs(filters: Sequence[Any], serializer: Any, compressors: Any,
                         dtype: np.dtype, chunk_shape: tuple, fill_value: Any) -> Any:
    """zdt.pipeline.ChunkCodecs for this chain on chunks of one shape (from a throwaway
    in-memory array: exactly the codecs an output array with the chain has)."""
    import zarr
    from zarr.abc.codec import ArrayArrayCodec, ArrayBytesCodec
    from zarr.core.array_spec import ArrayConfig, ArraySpec
    from zarr.core.buffer import default_buffer_prototype
    from zarr.storage import MemoryStore

    from zdt.pipeline import ChunkCodecs

    kwargs: dict[str, Any] = {"filters": zdt_codecs(filters), "compressors": compressors}
    if serializer:
        kwargs["serializer"] = serializer
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")         # zarr's note that numcodecs.* are not in the spec
        a = zarr.create_array(MemoryStore(), shape=chunk_shape, chunks=chunk_shape, dtype=dtype,
                              fill_value=fill_value, **kwargs)
    codecs = a.metadata.codecs
    aa = tuple(c for c in codecs if isinstance(c, ArrayArrayCodec))
    ab = next(c for c in codecs if isinstance(c, ArrayBytesCodec))
    bb = tuple(c for c in codecs if not isinstance(c, (ArrayArrayCodec, ArrayBytesCodec)))
    spec = ArraySpec(shape=chunk_shape, dtype=a.metadata.data_type, fill_value=a.metadata.fill_value,
                     config=ArrayConfig.from_dict({}), prototype=default_buffer_prototype())
    return ChunkCodecs.resolve(aa, ab, bb, spec)


class StageRunner:
    """An encoding's array -> array stage on chunks of one shape: to the stored chunk and back
    to the values a reader gets. For an encoding rounded in memory the stored chunk is those
    values, in the array's own type."""

    def __init__(self, encoding: Encoding, dtype: np.dtype, output: Output) -> None:
        self.encoding = encoding
        self.dtype = np.dtype(dtype)
        self.zarr_format = output.zarr_format
        filters = encoding.rounding or encoding.filters
        if output.zarr_format == 2:
            from zdt.engine.arrays import v2_filters

            self.filters = v2_filters(list(filters), self.dtype)
        else:
            serializer = None if encoding.rounding else encoding.serializer
            self.codecs = resolve_chunk_codecs(filters, serializer, None, self.dtype,
                                               output.chunk_shape, output.fill_value)

    def to_stored(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(the chunk as the serializer gets it, the values a reader decodes)."""
        x = np.ascontiguousarray(x, dtype=self.dtype)
        if self.zarr_format == 2:
            buf: Any = x
            for f in self.filters:
                buf = f.encode(buf)
            stored = np.asarray(buf)
            back = buf
            for f in reversed(self.filters):
                back = f.decode(back)
            values = np.asarray(back).reshape(x.shape).view(self.dtype)
        else:
            stored = self.codecs.to_stored(x)
            values = self.codecs.from_stored(stored, self.dtype)
        if self.encoding.rounding:
            return values, values
        return stored, values

    def from_stored(self, stored: np.ndarray) -> np.ndarray:
        """The values a reader gets from a stored chunk (zarr v3: the filters undone), for a
        lossy serializer's decoded chunk."""
        return self.codecs.from_stored(stored, self.dtype)


class BackEndRunner:
    """A back end on stored chunks of one type and shape: the bytes it writes."""

    def __init__(self, backend: BackEnd, encoding: Encoding, stored: np.dtype, output: Output) -> None:
        self.backend = backend
        self.zarr_format = output.zarr_format
        self.chunk_shape = tuple(output.chunk_shape)
        serializer = backend.serializer or (None if encoding.rounding else encoding.serializer)
        self.pcodec = None
        self.lossy = is_lossy(serializer)
        if output.zarr_format == 2:
            from zdt.engine.compressors import to_v2

            self.compressor = to_v2(list(backend.compressors))
            return
        if serializer and serializer["name"] == "numcodecs.pcodec":
            import numcodecs

            self.pcodec = numcodecs.get_codec({"id": "pcodec", **serializer.get("configuration", {})})
            serializer = None
        elif backend.order is not None:
            raise ValueError("a transposed chunk is measured under pcodec only")
        # (the stored chunk's own fill value does not change its bytes: any valid one will do;
        # a lossy serializer keeps the fill value exactly: the array's own, whose type it has)
        self.codecs = resolve_chunk_codecs((), serializer, list(backend.compressors) or None,
                                           stored, output.chunk_shape,
                                           output.fill_value if self.lossy else 0)

    def nbytes(self, stored: np.ndarray) -> int:
        if self.zarr_format == 2:
            data = self.compressor.encode(np.ascontiguousarray(stored)) if self.compressor else stored
            return int(np.asarray(data).nbytes) if not isinstance(data, bytes) else len(data)
        if self.backend.order is not None:
            stored = np.transpose(np.asarray(stored).reshape(self.chunk_shape), self.backend.order)
        if self.pcodec is not None:
            data = self.pcodec.encode(np.ascontiguousarray(stored).reshape(-1))
            for codec, spec in zip(self.codecs.bb, self.codecs.bb_specs):
                buf = spec.prototype.buffer.from_bytes(bytes(data))
                data = codec._encode_sync(buf, spec).to_bytes()
            return len(data)
        data = self.codecs.stored_to_bytes(stored)
        return 0 if data is None else len(data)

    def round_trip(self, stored: np.ndarray) -> tuple[int, np.ndarray]:
        """(the bytes written, what decoding them gives), for a lossy serializer."""
        data = self.codecs.stored_to_bytes(stored)
        back = self.codecs.bytes_to_stored(data).reshape(self.chunk_shape)
        return len(data), back


class ChunkRunner:
    """One whole chain (an encoding, its serializer and the output's compressors) on full
    chunks of one shape and data type: what convert checks each unit with."""

    def __init__(self, encoding: Encoding, dtype: np.dtype, output: Output) -> None:
        self.encoding = encoding
        self.dtype = np.dtype(dtype)
        self.output = output
        self.stage = StageRunner(encoding, dtype, output)
        self.lossy: BackEndRunner | None = None
        if is_lossy(encoding.serializer):
            # (what the filters ahead of it store, and the fill value zarr hands it there)
            codecs = self.stage.codecs
            self.lossy = BackEndRunner(BackEnd(), encoding, codecs.stored_dtype,
                                       replace(output, fill_value=codecs.ab_spec.fill_value))

    def values(self, x: np.ndarray) -> np.ndarray:
        """What reading gives back for the values `x`: any shape where the stages are
        element-wise (serializer and compressors lossless); with a lossy serializer, a storage
        unit (whole chunks from its corner; edge chunks padded with the fill value, as zarr
        stores them), each chunk through the filters, encoded, decoded and back through them."""
        if self.lossy is None:
            return self.stage.to_stored(x)[1]
        shape = tuple(self.output.chunk_shape)
        out = np.empty(x.shape, dtype=self.dtype)
        for sel in chunk_slices(x.shape, shape):
            piece = x[sel]
            stored, _ = self.stage.to_stored(padded(piece, shape, self.output.fill_value))
            back = self.stage.from_stored(self.lossy.round_trip(stored)[1])
            out[sel] = back[tuple(slice(0, n) for n in piece.shape)]
        return out


def padded(x: np.ndarray, shape: tuple[int, ...], fill: Any) -> np.ndarray:
    """An edge chunk as zarr stores it: the full chunk shape, the rest the fill value."""
    if x.shape == tuple(shape):
        return x
    out = np.empty(shape, dtype=x.dtype)
    out[...] = fill if fill is not None else 0
    out[tuple(slice(0, n) for n in x.shape)] = x
    return out


def chunks_of(x: np.ndarray, chunk_shape: tuple[int, ...]) -> list[np.ndarray]:
    """A storage unit (a shard) cut into its chunks."""
    return [x[sel] for sel in chunk_slices(x.shape, chunk_shape)]


def chunk_slices(shape: tuple[int, ...], chunk_shape: tuple[int, ...]) -> list[tuple[slice, ...]]:
    """Where the chunks of a storage unit of `shape` lie in it (C order of the chunk grid)."""
    if tuple(shape) == tuple(chunk_shape) or not shape:
        return [tuple(slice(0, n) for n in shape)]
    starts = [range(0, n, c) for n, c in zip(shape, chunk_shape, strict=True)]
    return [tuple(slice(r[i], r[i] + c) for r, i, c in zip(starts, corner, chunk_shape, strict=True))
            for corner in np.ndindex(*[len(r) for r in starts])]


@dataclass
class Result:
    encoding: Encoding
    backend: BackEnd = BackEnd()
    nbytes: int = 0             # stored bytes of the measured chunks
    error: float = 0.0          # largest error measured
    failed: str | None = None   # why it could not encode some chunk

    @property
    def ok(self) -> bool:
        return self.failed is None

    @property
    def codecs(self) -> list:
        """The whole chain, zarr v3 JSON."""
        return [*self.encoding.filters, *self.backend.chain(self.encoding)]

    @property
    def label(self) -> str:
        return f"{self.encoding.label}; {self.backend.label}"


@dataclass
class Measurement:
    results: list[Result]
    values: int = 0

    def fold(self, part: Measurement) -> None:
        """Add the measurement of further units (parts are folded in unit order: an
        encoding's failure is the first unit's that failed)."""
        self.values += part.values
        for result, p in zip(self.results, part.results, strict=True):
            if result.failed:
                continue
            if p.failed is not None:
                result.failed = p.failed
                continue
            result.nbytes += p.nbytes
            result.error = max(result.error, p.error)


def measure(samples: Sequence[np.ndarray], chains: Sequence[tuple[Encoding, Sequence[BackEnd]]],
            dtype: np.dtype, output: Output, bound: Bound, declared: Any, *, workers: int = 2,
            progress: Callable[[int], None] | None = None,
            sized: frozenset | None = None) -> Measurement:
    """Every encoding with every one of its back ends (`chains`) over every sampled unit (cut
    into chunks, edges padded); `declared`: the array's Sentinels (zdt.engine.arrays). Every
    encoding's error is measured; the bytes only of the results whose positions (in the order
    of `chains` and their back ends) are in `sized` (None: all)."""
    plan: list[tuple[StageRunner | None, list[tuple[Result, BackEndRunner | None]]]] = []
    for enc, backends in chains:
        try:
            stage: StageRunner | None = StageRunner(enc, dtype, output)
            why = None
        except ValueError as exc:        # the codecs refuse this configuration (zdt's errors)
            stage, why = None, str(exc).splitlines()[0]
        runners = []
        for backend in backends:
            stored = _stored_dtype(enc.stored if not enc.rounding else np.dtype(dtype).name)
            backend = backend.typed(_itemsize(stored))
            result = Result(enc, backend, failed=why)
            runner = None
            if stage is not None:
                try:
                    runner = BackEndRunner(backend, enc, stored, output)
                except (ValueError, TypeError) as exc:
                    result.failed = str(exc).splitlines()[0]
            runners.append((result, runner))
        plan.append((stage, runners))
    m = Measurement([r for _, runners in plan for r, _ in runners])
    check = dict(sentinels=declared.values, masking=declared.masking, valid=declared.valid)

    def one(unit: np.ndarray) -> Measurement:
        pieces = chunks_of(unit, output.chunk_shape)
        part = Measurement([Result(r.encoding, r.backend, failed=r.failed) for r in m.results],
                           int(unit.size))
        k = 0
        for stage, runners in plan:
            results = part.results[k:k + len(runners)]
            k += len(runners)
            if stage is None:
                continue
            err, why = 0.0, None
            stored_chunks = []
            for piece in pieces:
                full = padded(piece, output.chunk_shape, output.fill_value)
                try:
                    stored, back = stage.to_stored(full)
                except ValueError as exc:
                    why = str(exc).splitlines()[0]
                    break
                region = tuple(slice(0, n) for n in piece.shape)
                err = max(err, error_of(piece, back[region], bound, **check))
                stored_chunks.append(stored)
            for j, (result, (_, runner)) in enumerate(zip(results, runners, strict=True)):
                if result.failed:
                    continue
                if why is not None:
                    result.failed = why
                    continue
                result.error = err
                if sized is None or k - len(runners) + j in sized:
                    if runner.lossy:        # its error is what decoding its bytes gives
                        for piece, s in zip(pieces, stored_chunks, strict=True):
                            n, back = runner.round_trip(s)
                            region = tuple(slice(0, c) for c in piece.shape)
                            result.nbytes += n
                            back = stage.from_stored(back)[region]
                            result.error = max(result.error, error_of(piece, back, bound, **check))
                    else:
                        result.nbytes = sum(runner.nbytes(s) for s in stored_chunks)
        return part

    with ThreadPoolExecutor(max(1, workers), thread_name_prefix="zdt-measure") as pool:
        for part in pool.map(one, samples):
            m.fold(part)
            if progress is not None:
                progress(1)
    return m


def _itemsize(stored: Any) -> int:
    """The bytes of one stored element (a NumPy dtype, or a zdt ZDType: its native type's)."""
    return int(stored.itemsize if isinstance(stored, np.dtype) else stored.to_native_dtype().itemsize)


def _stored_dtype(name: str) -> Any:
    """A stored type's zarr data type (the low-precision ones as zdt's ZDTypes: zarr 3.1 has
    them registered only after zdt.register())."""
    from zdt.formats import LOW_PRECISION

    if name in LOW_PRECISION:
        from zdt.dtypes import zdtype_for

        return zdtype_for(name)
    return np.dtype(name)


def best(m: Measurement, bound: Bound, all_measured: bool) -> tuple[Result | None, Result | None]:
    """The smallest on disk among the measured encodings that keep the bound (proven ones; an
    unproven one only when every chunk was measured), and the runner-up."""
    ok = [r for r in m.results if r.ok and r.error <= bound.value
          and (r.encoding.proven or all_measured)]
    ok.sort(key=lambda r: (r.nbytes, r.encoding.preference, r.error, len(r.codecs)))
    return (ok[0] if ok else None), (ok[1] if len(ok) > 1 else None)

