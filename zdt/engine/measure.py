"""Candidate encodings measured on chunks held in memory: the bytes each writes after the
output's compressor, and its error, at kernel level (no zarr array per candidate per chunk).

A `ChunkRunner` is one encoding on chunks of one shape: the element-wise stages (zdt's
kernels) and the serializer and compressors zarr would run, resolved once (from a throwaway
in-memory array, so the codecs are exactly those the output array will have). For a zarr
format 2 output it is the numcodecs filters and compressor themselves. `run(x)` gives the
stored bytes' length and the decoded values; `measure` runs every candidate over the kept
chunks on a thread pool (the kernels and the compressors release the GIL), each chunk once.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from zdt.engine.bounds import Bound, error_of
from zdt.engine.candidates import Encoding


@dataclass
class Output:
    """How an output array stores its chunks, apart from the encoding: its format, chunk
    shape, fill value and compressors (zarr v3 codec objects or JSON, or a numcodecs
    compressor for format 2; None: none)."""

    zarr_format: int
    chunk_shape: tuple[int, ...]
    fill_value: Any
    compressors: Any


class ChunkRunner:
    """One encoding on full chunks of one shape and data type."""

    def __init__(self, encoding: Encoding, dtype: np.dtype, output: Output) -> None:
        self.encoding = encoding
        self.dtype = np.dtype(dtype)
        self.output = output
        if output.zarr_format == 2:
            self._v2_setup()
        else:
            self._v3_setup()

    def _v3_setup(self) -> None:
        import zarr
        from zarr.abc.codec import ArrayArrayCodec, ArrayBytesCodec
        from zarr.core.array_spec import ArrayConfig, ArraySpec
        from zarr.core.buffer import default_buffer_prototype
        from zarr.storage import MemoryStore

        from zdt.pipeline import ChunkCodecs

        enc, out = self.encoding, self.output
        kwargs: dict[str, Any] = {"filters": list(enc.filters), "compressors": out.compressors}
        if enc.serializer:
            kwargs["serializer"] = enc.serializer
        a = zarr.create_array(MemoryStore(), shape=out.chunk_shape, chunks=out.chunk_shape,
                              dtype=self.dtype, fill_value=out.fill_value, **kwargs)
        codecs = a.metadata.codecs
        aa = tuple(c for c in codecs if isinstance(c, ArrayArrayCodec))
        ab = next(c for c in codecs if isinstance(c, ArrayBytesCodec))
        bb = tuple(c for c in codecs if not isinstance(c, (ArrayArrayCodec, ArrayBytesCodec)))
        spec = ArraySpec(shape=out.chunk_shape, dtype=a.metadata.data_type,
                         fill_value=a.metadata.fill_value, config=ArrayConfig.from_dict({}),
                         prototype=default_buffer_prototype())
        self.codecs = ChunkCodecs.resolve(aa, ab, bb, spec)

    def _v2_setup(self) -> None:
        from zdt.engine.arrays import v2_filters

        self.filters = v2_filters(list(self.encoding.filters), self.dtype)
        self.compressor = self.output.compressors

    def values(self, x: np.ndarray) -> np.ndarray:
        """What reading gives back for the values `x` (any shape: the stages are
        element-wise; serializer and compressors are lossless)."""
        x = np.ascontiguousarray(x, dtype=self.dtype)
        if self.output.zarr_format == 2:
            buf: Any = x
            for f in self.filters:
                buf = f.encode(buf)
            for f in reversed(self.filters):
                buf = f.decode(buf)
            return np.asarray(buf).reshape(x.shape).view(self.dtype)
        return self.codecs.from_stored(self.codecs.to_stored(x), self.dtype)

    def run(self, x: np.ndarray) -> tuple[int, np.ndarray]:
        """(stored bytes of the chunk `x` (a full chunk: edge chunks are padded with the fill
        value, as zarr pads them), the decoded chunk)."""
        x = np.ascontiguousarray(x, dtype=self.dtype)
        if self.output.zarr_format == 2:
            buf: Any = x
            for f in self.filters:
                buf = f.encode(buf)
            data = self.compressor.encode(np.ascontiguousarray(buf)) if self.compressor else buf
            size = int(np.asarray(data).nbytes) if not isinstance(data, bytes) else len(data)
            back = buf
            for f in reversed(self.filters):
                back = f.decode(back)
            return size, np.asarray(back).reshape(x.shape).view(self.dtype)
        stored = self.codecs.to_stored(x)
        data = self.codecs.stored_to_bytes(stored)
        size = 0 if data is None else len(data)
        return size, self.codecs.from_stored(stored, self.dtype)


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
    if x.shape == tuple(chunk_shape) or not x.shape:
        return [x]
    starts = [range(0, n, c) for n, c in zip(x.shape, chunk_shape, strict=True)]
    out = []
    for corner in np.ndindex(*[len(r) for r in starts]):
        sel = tuple(slice(r[i], r[i] + c) for r, i, c in zip(starts, corner, chunk_shape, strict=True))
        out.append(x[sel])
    return out


@dataclass
class Result:
    encoding: Encoding
    nbytes: int = 0             # stored bytes of the measured chunks
    error: float = 0.0          # largest error measured
    failed: str | None = None   # why it could not encode some chunk

    @property
    def ok(self) -> bool:
        return self.failed is None


@dataclass
class Measurement:
    results: list[Result]
    chunks: int = 0
    values: int = 0
    baseline: int = 0           # the same chunks with the array's codecs as they are
    notes: list[str] = field(default_factory=list)

    def fold(self, part: Measurement) -> None:
        """Add the measurement of further units (parts are folded in unit order: an
        encoding's failure is the first unit's that failed)."""
        self.chunks += part.chunks
        self.values += part.values
        self.baseline += part.baseline
        for result, p in zip(self.results, part.results, strict=True):
            if result.failed:
                continue
            if p.failed is not None:
                result.failed = p.failed
                continue
            result.nbytes += p.nbytes
            result.error = max(result.error, p.error)


def measure(samples: Sequence[np.ndarray], encodings: Sequence[Encoding], dtype: np.dtype,
            output: Output, bound: Bound, sentinels: Sequence[float],
            masking: Sequence[float] = (), *,
            baseline: Encoding | None = None, workers: int = 2,
            progress: Callable[[int], None] | None = None) -> Measurement:
    """Every encoding over every sampled unit (cut into chunks, edges padded)."""
    runners: list[tuple[Result, ChunkRunner | None]] = []
    for enc in encodings:
        result = Result(enc)
        try:
            runners.append((result, ChunkRunner(enc, dtype, output)))
        except ValueError as exc:        # the codecs refuse this configuration (zdt's errors)
            result.failed = str(exc).splitlines()[0]
            runners.append((result, None))
    base = ChunkRunner(baseline, dtype, output) if baseline is not None else None
    m = Measurement([r for r, _ in runners])

    def one(unit: np.ndarray) -> tuple[list[tuple[int, float, str | None]], int, int, int]:
        pieces = chunks_of(unit, output.chunk_shape)
        per: list[tuple[int, float, str | None]] = []
        for _, runner in runners:
            size, err, why = 0, 0.0, None
            if runner is None:
                per.append((0, math.inf, "not built"))
                continue
            for piece in pieces:
                full = padded(piece, output.chunk_shape, output.fill_value)
                try:
                    n, back = runner.run(full)
                except ValueError as exc:
                    why = str(exc).splitlines()[0]
                    break
                size += n
                region = tuple(slice(0, k) for k in piece.shape)
                err = max(err, error_of(piece, back[region], bound, sentinels, masking))
            per.append((size, err, why))
        base_size = sum(base.run(padded(p, output.chunk_shape, output.fill_value))[0]
                        for p in pieces) if base else 0
        return per, len(pieces), int(unit.size), base_size

    with ThreadPoolExecutor(max(1, workers), thread_name_prefix="zdt-measure") as pool:
        for per, nchunks, nvalues, base_size in pool.map(one, samples):
            part = Measurement([Result(r.encoding, size, err, why)
                                for (r, _), (size, err, why) in zip(runners, per, strict=True)],
                               nchunks, nvalues, base_size)
            m.fold(part)
            if progress is not None:
                progress(1)
    return m


def best(m: Measurement, bound: Bound, all_measured: bool) -> tuple[Result | None, Result | None]:
    """The smallest on disk among the measured encodings that keep the bound (proven ones; an
    unproven one only when every chunk was measured), and the runner-up."""
    ok = [r for r in m.results if r.ok and r.error <= bound.value
          and (r.encoding.proven or all_measured)]
    ok.sort(key=lambda r: (r.nbytes, r.encoding.preference, r.error))
    return (ok[0] if ok else None), (ok[1] if len(ok) > 1 else None)
