"""Candidate encodings measured on chunks held in memory: the bytes each whole chain writes
(array -> array stage, serializer, compressors) and its error, at kernel level (no zarr array
per candidate per chunk).

A `Trial` is one encoding under one back end (`BackEnd`: a serializer, bytes or
numcodecs.pcodec, and the compressors after it), and what was measured of it. `measure` runs a
list of trials over the kept units on a thread pool (the kernels, the compressors and pcodec
release the GIL), each unit read once. An encoding's array -> array stage runs once per chunk
for all its trials (`StageRunner`); its error is taken there. Each trial's back end then sizes
the stored chunk (`BackEndRunner`). Both have one class per zarr format: for format 3 the
output's own codecs through zdt's pipeline (`ZarrStage`, `ZarrBackEnd`: resolved once from a
throwaway in-memory array, so they are exactly those the output will have), for format 2 the
numcodecs filters and compressor (`NumcodecsStage`, `NumcodecsBackEnd`).

A lossy serializer (zdt.predict: prediction from neighbours, so not element-wise) is measured
by decoding what it wrote: its error is taken there, chunk by chunk, on the real elements.

An edge chunk is measured padded as zdt.engine.writer stores it (`padding_for`), so what a
trial counts is what convert writes.

`ChunkRunner` is one whole chain on chunks of one shape: what convert checks each unit with.
"""

from __future__ import annotations

import itertools
import json
import threading
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
    # zdt writes the chunks (edge chunks padded as `padding_for` says, zdt.engine.writer);
    # False: another writer does (xarray, for zdt.encoding), which pads with the fill value
    own_padding: bool = True


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


# resolve_chunk_codecs' results by chain, type, chunk shape and fill value: a search measures
# hundreds of (encoding, back end) pairs per array, most of whose back ends repeat (the same
# compressor on the same stored type), and resolving one costs a throwaway zarr array (~2 ms,
# through zarr's event loop). ChunkCodecs are shared read-only, as zdt's pipeline shares them
# between the threads writing an array's chunks.
_RESOLVED: dict[tuple, Any] = {}
_RESOLVED_MOST = 1024
_RESOLVED_LOCK = threading.Lock()


def resolve_chunk_codecs(filters: Sequence[Any], serializer: Any, compressors: Any,
                         dtype: np.dtype, chunk_shape: tuple, fill_value: Any) -> Any:
    """zdt.pipeline.ChunkCodecs for this chain on chunks of one shape (from a throwaway
    in-memory array: exactly the codecs an output array with the chain has); the same object
    for the same arguments (_RESOLVED)."""
    key = (json.dumps([list(filters), serializer, compressors], sort_keys=True, default=repr),
           repr(dtype), tuple(chunk_shape), repr(fill_value))
    with _RESOLVED_LOCK:
        found = _RESOLVED.get(key)
    if found is None:
        found = _resolve_chunk_codecs(filters, serializer, compressors, dtype, chunk_shape, fill_value)
        with _RESOLVED_LOCK:
            if len(_RESOLVED) >= _RESOLVED_MOST:
                _RESOLVED.clear()
            _RESOLVED[key] = found
    return found


def _resolve_chunk_codecs(filters: Sequence[Any], serializer: Any, compressors: Any,
                          dtype: np.dtype, chunk_shape: tuple, fill_value: Any) -> Any:
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
    values, in the array's own type. One subclass per zarr format (`of` picks it)."""

    def __init__(self, encoding: Encoding, dtype: np.dtype) -> None:
        self.encoding = encoding
        self.dtype = np.dtype(dtype)

    @staticmethod
    def of(encoding: Encoding, dtype: np.dtype, output: Output) -> StageRunner:
        if output.zarr_format == 2:
            return NumcodecsStage(encoding, dtype)
        return ZarrStage(encoding, dtype, output)

    def to_stored(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(the chunk as the serializer gets it, the values a reader decodes)."""
        x = np.ascontiguousarray(x, dtype=self.dtype)
        stored, values = self._there_and_back(x)
        if self.encoding.rounding:
            return values, values
        return stored, values

    def _there_and_back(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(the stored chunk, the values decoded from it)."""
        raise NotImplementedError

    def from_stored(self, stored: np.ndarray) -> np.ndarray:
        """The values a reader gets from a stored chunk (the filters undone), for a lossy
        serializer's decoded chunk."""
        raise NotImplementedError

    def serializer_runner(self, output: Output) -> BackEndRunner:
        """The encoding's own serializer on the stored chunks (what the filters ahead of it
        store, with the fill value zarr hands it there): for a lossy serializer."""
        raise NotImplementedError


def fused_equivalent(filters: Sequence[Any]) -> list[Any]:
    """The filters with numcodecs.fixedscaleoffset on integers as the zdt chain that computes
    the same codes and values (cast_value float64, scale_offset, cast_value to its astype:
    numcodecs rounds (x - o) * s in float64 half to even, and its decoding, c / s + o then
    truncated, is exact where zdt.engine.candidates offers it), which zdt's fused pipeline
    runs; the output's metadata keeps numcodecs.fixedscaleoffset."""
    out: list[Any] = []
    for c in filters:
        conf = c.get("configuration", {}) if isinstance(c, dict) else {}
        if isinstance(c, dict) and c.get("name") == "numcodecs.fixedscaleoffset" \
                and np.dtype(conf["dtype"]).kind in "iu":
            # (the padding of an edge chunk, the fill value, may lie outside the codes' range:
            # NumPy's astype in numcodecs wraps it, as "wrap" does; decoded, no reader looks at it)
            out += [{"name": "cast_value", "configuration": {"data_type": "float64", "out_of_range": "clamp"}},
                    {"name": "scale_offset", "configuration": {"offset": conf["offset"],
                                                                "scale": conf["scale"]}},
                    {"name": "cast_value", "configuration": {"data_type": np.dtype(conf["astype"]).name,
                                                             "out_of_range": "wrap"}}]
        else:
            out.append(c)
    return out


class ZarrStage(StageRunner):
    """Zarr format 3: the encoding's codecs, resolved once for chunks of the output's shape
    (zdt.pipeline.ChunkCodecs)."""

    def __init__(self, encoding: Encoding, dtype: np.dtype, output: Output) -> None:
        super().__init__(encoding, dtype)
        serializer = None if encoding.rounding else encoding.serializer
        filters = encoding.rounding or encoding.filters
        fill = output.fill_value
        for c in filters:
            # (numcodecs.fixedscaleoffset never looks at the fill value, which only pads edge
            # chunks; the zdt chain standing for it checks its round trip: its offset passes)
            if isinstance(c, dict) and c.get("name") == "numcodecs.fixedscaleoffset":
                fill = c["configuration"]["offset"]
        self.codecs = resolve_chunk_codecs(fused_equivalent(filters), serializer, None, self.dtype,
                                           output.chunk_shape, fill)

    def _there_and_back(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        stored = self.codecs.to_stored(x)
        return stored, self.codecs.from_stored(stored, self.dtype)

    def from_stored(self, stored: np.ndarray) -> np.ndarray:
        return self.codecs.from_stored(stored, self.dtype)

    def serializer_runner(self, output: Output) -> BackEndRunner:
        codecs = self.codecs
        return ZarrBackEnd(BackEnd(), self.encoding, codecs.stored_dtype,
                           replace(output, fill_value=codecs.ab_spec.fill_value))


class NumcodecsStage(StageRunner):
    """Zarr format 2: the encoding's codecs as zdt's numcodecs filters."""

    def __init__(self, encoding: Encoding, dtype: np.dtype) -> None:
        super().__init__(encoding, dtype)
        from zdt.engine.arrays import v2_filters

        self.filters = v2_filters(list(encoding.rounding or encoding.filters), self.dtype)

    def _there_and_back(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        buf: Any = x
        for f in self.filters:
            buf = f.encode(buf)
        return np.asarray(buf), self._decoded(buf, x.shape)

    def from_stored(self, stored: np.ndarray) -> np.ndarray:
        return self._decoded(stored, stored.shape)

    def _decoded(self, buf: Any, shape: tuple[int, ...]) -> np.ndarray:
        for f in reversed(self.filters):
            buf = f.decode(buf)
        return np.asarray(buf).reshape(shape).view(self.dtype)


class BackEndRunner:
    """A back end on stored chunks of one type and shape: the bytes it writes. One subclass
    per zarr format (`of` picks it)."""

    def __init__(self, backend: BackEnd, encoding: Encoding) -> None:
        self.backend = backend
        self.serializer = backend.serializer or (None if encoding.rounding else encoding.serializer)
        self.lossy = is_lossy(self.serializer)

    @staticmethod
    def of(backend: BackEnd, encoding: Encoding, stored: Any, output: Output) -> BackEndRunner:
        if output.zarr_format == 2:
            return NumcodecsBackEnd(backend, encoding)
        return ZarrBackEnd(backend, encoding, stored, output)

    def nbytes(self, stored: np.ndarray) -> int:
        raise NotImplementedError

    def round_trip(self, stored: np.ndarray) -> tuple[int, np.ndarray]:
        """(the bytes written, what decoding them gives), for a lossy serializer."""
        raise NotImplementedError


class ZarrBackEnd(BackEndRunner):
    """Zarr format 3: the serializer and compressors, resolved once (zdt.pipeline.ChunkCodecs);
    numcodecs.pcodec through numcodecs' own codec, then the compressors; along the back end's
    transposed order if it has one (pcodec only)."""

    def __init__(self, backend: BackEnd, encoding: Encoding, stored: Any, output: Output) -> None:
        super().__init__(backend, encoding)
        self.chunk_shape = tuple(output.chunk_shape)
        serializer = self.serializer
        self.pcodec = None
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
        data = self.codecs.stored_to_bytes(stored)
        back = self.codecs.bytes_to_stored(data).reshape(self.chunk_shape)
        return len(data), back


class NumcodecsBackEnd(BackEndRunner):
    """Zarr format 2: the numcodecs compressor (or none)."""

    def __init__(self, backend: BackEnd, encoding: Encoding) -> None:
        super().__init__(backend, encoding)
        from zdt.engine.compressors import to_v2

        self.compressor = to_v2(list(backend.compressors))

    def nbytes(self, stored: np.ndarray) -> int:
        data = self.compressor.encode(np.ascontiguousarray(stored)) if self.compressor else stored
        return int(np.asarray(data).nbytes) if not isinstance(data, bytes) else len(data)


class ChunkRunner:
    """One whole chain on chunks of one shape and data type, as a reader decodes it: the
    encoding's stage and, where it is lossy, its serializer (the compressors after it are
    lossless): what convert checks each unit with."""

    def __init__(self, encoding: Encoding, dtype: np.dtype, output: Output) -> None:
        self.encoding = encoding
        self.dtype = np.dtype(dtype)
        self.output = output
        self.stage = StageRunner.of(encoding, dtype, output)
        self.lossy = self.stage.serializer_runner(output) if is_lossy(encoding.serializer) else None

    def values(self, x: np.ndarray) -> np.ndarray:
        """What reading gives back for the values `x`: any shape where the stages are
        element-wise (serializer and compressors lossless); with a lossy serializer, a storage
        unit (whole chunks from its corner; edge chunks padded as the writer stores them,
        `padding_for`), each chunk through the filters, encoded, decoded and back through them.
        Only the real elements come back: padding is never compared."""
        if self.lossy is None:
            return self.stage.to_stored(x)[1]
        shape = tuple(self.output.chunk_shape)
        out = np.empty(x.shape, dtype=self.dtype)
        for sel in chunk_slices(x.shape, shape):
            piece = x[sel]
            # (one way: a lossy serializer's chunks are padded with the fill value)
            full = paddings(piece, shape, self.output.fill_value,
                            padding_for(self.lossy.serializer, self.output))[0]
            stored, _ = self.stage.to_stored(full)
            back = self.stage.from_stored(self.lossy.round_trip(stored)[1])
            out[sel] = back[tuple(slice(0, n) for n in piece.shape)]
        return out


def padded(x: np.ndarray, shape: tuple[int, ...], fill: Any, how: str = "fill") -> np.ndarray:
    """An edge chunk stored whole: the full `shape`, each element past the array's edge the
    fill value (how="fill", as zarr pads it) or (how="repeat") the real element before it in
    the chunk's C order (a row's last value to the chunk's width, the last real value over
    the rows past the edge)."""
    if x.shape == tuple(shape):
        return x
    out = np.empty(shape, dtype=x.dtype)
    real = tuple(slice(0, n) for n in x.shape)
    if how == "repeat" and x.size:
        out[real] = x
        for k in range(x.ndim):
            # (elements whose first index past the edge is along axis k: the real element
            # before each is the last of the block they follow, x[i_0 .. i_k-1, -1, ..., -1])
            if x.shape[k] < shape[k]:
                lead = real[:k]
                last = x[lead + (-1,) * (x.ndim - k)]
                out[lead + (slice(x.shape[k], None),)] = last.reshape(last.shape + (1,) * (x.ndim - k))
        return out
    out[...] = fill if fill is not None else 0
    out[real] = x
    return out


def padding_for(serializer: Any, output: Output) -> str:
    """How zdt pads an edge chunk coded with `serializer` (`paddings`' `how`). No reader looks
    at padding, so it is whatever codes cheapest: "cheapest", the fewer bytes of runs (each
    element repeating the real one before it: zeros to a delta coder such as pcodec, repeats
    to zstd) and the fill value (one frequent symbol, cheaper where the values are noise);
    "fill" under a lossy serializer (zdt.predict masks the fill value and codes it for next to
    nothing) or where another writer pads (`output.own_padding` False)."""
    return "cheapest" if output.own_padding and not is_lossy(serializer) else "fill"


def paddings(x: np.ndarray, shape: tuple[int, ...], fill: Any, how: str) -> list[np.ndarray]:
    """The ways the chunk `x` may be stored under `how` (`padding_for`): a whole chunk as it
    is; an edge chunk padded with the fill value, and under "cheapest" with runs first (the
    writer keeps the first of those that writes the fewest bytes)."""
    if x.shape == tuple(shape):
        return [x]
    fill_padded = padded(x, shape, fill, "fill")
    return [padded(x, shape, fill, "repeat"), fill_padded] if how == "cheapest" else [fill_padded]


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


@dataclass(eq=False)
class Trial:
    """One encoding under one back end, and what was measured of it."""

    encoding: Encoding
    backend: BackEnd
    sized: bool = True          # its bytes are measured (else only its error)
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

    def again(self, sized: bool = True) -> Trial:
        """The same encoding and back end, nothing measured yet."""
        return Trial(self.encoding, self.backend, sized)

    def fold(self, part: Trial) -> None:
        """Add what further units showed of this trial (folded in unit order: its failure is
        the first unit's that failed)."""
        if self.failed:
            return
        if part.failed is not None:
            self.failed = part.failed
            return
        self.nbytes += part.nbytes
        self.error = max(self.error, part.error)


@dataclass
class Measurement:
    trials: list[Trial]
    values: int = 0             # the values of the units measured

    def fold(self, part: Measurement) -> None:
        """Add the measurement of further units (`part`: the same trials, in the same order)."""
        self.values += part.values
        for trial, p in zip(self.trials, part.trials, strict=True):
            trial.fold(p)


class _EncodingTrials:
    """An encoding's stage and its trials' back ends, made once for a measurement; each
    trial here holds what it showed on the units so far."""

    def __init__(self, encoding: Encoding, trials: list[Trial], dtype: np.dtype,
                 output: Output) -> None:
        try:
            self.stage: StageRunner | None = StageRunner.of(encoding, dtype, output)
            why = None
        except ValueError as exc:        # the codecs refuse this configuration (zdt's errors)
            self.stage, why = None, str(exc).splitlines()[0]
        stored = _stored_dtype(encoding.stored if not encoding.rounding else np.dtype(dtype).name)
        self.trials: list[tuple[Trial, BackEndRunner | None]] = []
        for t in trials:
            trial = Trial(encoding, t.backend.typed(_itemsize(stored)), t.sized, failed=why)
            runner = None
            if self.stage is not None:
                try:
                    runner = BackEndRunner.of(trial.backend, encoding, stored, output)
                except (ValueError, TypeError) as exc:
                    trial.failed = str(exc).splitlines()[0]
            self.trials.append((trial, runner))

    def on(self, pieces: list[np.ndarray], output: Output, bound: Bound, check: dict) -> list[Trial]:
        """What the chunks of one unit (`pieces`, edges not padded) show of each trial: bytes
        of the chunks padded as they are written (`padding_for`: an edge chunk under the
        cheaper way), errors on the real elements."""
        parts = [Trial(t.encoding, t.backend, t.sized, failed=t.failed) for t, _ in self.trials]
        stage = self.stage
        if stage is None:
            return parts
        # (each padding a trial needs, the stage run once per chunk for each way it gives)
        hows = {padding_for(runner.serializer if runner is not None else None, output)
                for _, runner in self.trials}
        err, why = 0.0, None
        stored_chunks: dict[str, list] = {how: [] for how in hows}
        for piece in pieces:
            region = tuple(slice(0, n) for n in piece.shape)
            for how in hows:
                ways = []
                for full in paddings(piece, output.chunk_shape, output.fill_value, how):
                    try:
                        stored, back = stage.to_stored(full)
                    except ValueError as exc:   # (the fill value may be outside a filter's range)
                        why = why or str(exc).splitlines()[0]
                        continue
                    err = max(err, error_of(piece, back[region], bound, **check))
                    ways.append(stored)
                if not ways:
                    break
                stored_chunks[how].append(ways)
            else:               # (every padding needed has a way: a fill value refused is no failure)
                why = None
                continue
            break
        for part, (_, runner) in zip(parts, self.trials, strict=True):
            if part.failed:
                continue
            if why is not None:
                part.failed = why
                continue
            part.error = err
            if not part.sized:
                continue
            chunks = stored_chunks[padding_for(runner.serializer, output)]
            if runner.lossy:        # its error is what decoding its bytes gives
                for piece, ways in zip(pieces, chunks, strict=True):
                    n, back = runner.round_trip(ways[0])
                    region = tuple(slice(0, c) for c in piece.shape)
                    part.nbytes += n
                    back = stage.from_stored(back)[region]
                    part.error = max(part.error, error_of(piece, back, bound, **check))
            else:
                part.nbytes = sum(min(runner.nbytes(s) for s in ways) for ways in chunks)
        return parts


def measure(samples: Sequence[np.ndarray], trials: Sequence[Trial], dtype: np.dtype,
            output: Output, bound: Bound, declared: Any, *, workers: int = 2,
            progress: Callable[[int], None] | None = None) -> Measurement:
    """Every trial over every sampled unit (cut into chunks, edges padded as written);
    `declared`: the array's Sentinels (zdt.engine.arrays). Every trial's error is measured,
    its bytes where it is `sized`. The Measurement holds one new Trial per trial given, in the
    same order (each blosc compressor given its typesize: BackEnd.typed); trials of one
    encoding next to each other share its stage."""
    groups = [_EncodingTrials(enc, list(same), dtype, output)
              for enc, same in itertools.groupby(trials, key=lambda t: t.encoding)]
    m = Measurement([t for g in groups for t, _ in g.trials])
    check = dict(sentinels=declared.values, masking=declared.masking, valid=declared.valid)

    def one(unit: np.ndarray) -> Measurement:
        pieces = chunks_of(unit, output.chunk_shape)
        return Measurement([p for g in groups for p in g.on(pieces, output, bound, check)],
                           int(unit.size))

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


def best(m: Measurement, bound: Bound, all_measured: bool) -> tuple[Trial | None, Trial | None]:
    """The smallest on disk among the measured trials that keep the bound (proven encodings;
    an unproven one only when every chunk was measured), and the runner-up."""
    ok = [r for r in m.trials if r.ok and r.error <= bound.value
          and (r.encoding.proven or all_measured)]
    ok.sort(key=lambda r: (r.nbytes, r.encoding.preference, r.error, len(r.codecs)))
    return (ok[0] if ok else None), (ok[1] if len(ok) > 1 else None)

