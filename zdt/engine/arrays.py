"""An array as the engine sees it: its storage units, the sentinels it declares, its values
region by region, zdt's codecs as zarr format 2 filters, and two stand-ins of a written array
(a view of whole chunks, a sizer of one chunk) for storing edge chunks as zdt pads them."""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from zdt.errors import InputError, StorageError, UsageError, ZdtError
from zdt.stores.location import reason
from zdt.stores.nodes import codecs_text


def storage_units(arr: Any) -> list[tuple[slice, ...]]:
    """The regions of the array's storage units (shards if sharded, else chunks), in C order
    (one region, (), for a 0-d array)."""
    unit = getattr(arr, "shards", None) or arr.chunks
    counts = [max(1, -(-s // c)) for s, c in zip(arr.shape, unit, strict=True)]
    regions = []
    for index in np.ndindex(*counts):
        regions.append(tuple(slice(int(i) * c, min((int(i) + 1) * c, s))
                             for i, c, s in zip(index, unit, arr.shape, strict=True)))
    return regions


def whole_chunk_view(arr: Any) -> Any:
    """The zarr array `arr` with its shape rounded up to whole (inner) chunks: the same store
    and chunk keys, its metadata held in memory only (never saved). Writing a region of whole
    chunks there stores them as given, padding included (zdt.engine.writer)."""
    from zarr import Array
    from zarr.core.array import AsyncArray

    a = arr._async_array
    grid = tuple(arr.chunks)
    shape = tuple(-(-s // c) * c for s, c in zip(arr.shape, grid, strict=True))
    return Array(AsyncArray(a.metadata.update_shape(shape), a.store_path, a.config))


class ChunkSizer:
    """The bytes the zarr array `arr` stores for one (inner) chunk: its own codecs (a shard's
    inner ones), on a throwaway in-memory array of one chunk with its metadata. One chunk at a
    time (a lock): the chunk key is the same for every call."""

    def __init__(self, arr: Any) -> None:
        import dataclasses
        import threading

        from zarr import Array
        from zarr.codecs import ShardingCodec
        from zarr.core.array import AsyncArray
        from zarr.storage import MemoryStore, StorePath

        meta = arr.metadata
        grid = tuple(arr.chunks)
        if meta.zarr_format == 3:
            codecs = meta.codecs
            if isinstance(codecs[0], ShardingCodec):
                codecs = codecs[0].codecs
            meta = dataclasses.replace(meta, shape=grid, codecs=tuple(codecs),
                                       chunk_grid={"name": "regular", "configuration": {"chunk_shape": grid}})
        else:
            meta = dataclasses.replace(meta, shape=grid, chunks=grid)
        self.store = MemoryStore()
        self.array = Array(AsyncArray(meta, StorePath(self.store), arr._async_array.config))
        self.lock = threading.Lock()

    def nbytes(self, chunk: np.ndarray) -> int:
        """The stored bytes of `chunk` (a chunk equal to the fill value everywhere: 0)."""
        with self.lock:
            self.store._store_dict.clear()
            self.array[...] = chunk
            return sum(len(v) for v in self.store._store_dict.values())


def spread(total: int, count: int) -> list[int]:
    """`count` indices evenly spread over range(total) (all of them if count >= total)."""
    if count >= total:
        return list(range(total))
    return sorted({int(i) for i in np.linspace(0, total - 1, num=count)})


def default_sample(arr: Any, units: int, values_per_unit: int) -> int:
    """How many storage units the size measurement reads by default: all of them up to 16
    units or 4M values, else about 4M values (at least 4 units) spread over the array."""
    if units <= 16 or units * values_per_unit <= 4_000_000:
        return units
    return max(4, min(units, 4_000_000 // max(1, values_per_unit)))


class Sentinels(NamedTuple):
    """The values an array declares as markers rather than data."""

    values: tuple               # finite ones, in the array's type: back bit for bit, out of ranges
    fill_special: str | None    # "NaN" / "Infinity" / "-Infinity" when the fill value is one
    masking: tuple              # those readers take for "missing" (no data value may become one)
    valid: tuple | None = None  # CF valid_min / valid_max / valid_range: (lo, hi), stored units;
                                # a value inside must stay inside (netCDF readers mask the rest)


def sentinels_of(arr: Any) -> Sentinels:
    """The array's fill value and its CF _FillValue and missing_value attributes. The CF ones
    mask (xarray and netCDF readers hide those values), and so does the fill value of a zarr
    format 2 array (xarray takes it for _FillValue there)."""
    dtype = np.dtype(arr.dtype)
    values: list = []
    masking: list = []
    special = None
    candidates = [(arr.fill_value, arr.metadata.zarr_format == 2)]
    for key in ("_FillValue", "missing_value"):
        v = arr.attrs.get(key)
        if key == "_FillValue" and dtype.kind == "f" and isinstance(v, str):
            v = xarray_float_fill(v)
        candidates += [(w, True) for w in (v if isinstance(v, list) else [v])]
    for i, (v, masks) in enumerate(candidates):
        if v is None or isinstance(v, (str, bool)) or (isinstance(v, dict)):
            continue
        try:
            x = np.asarray(v, dtype=dtype)[()]
        except (TypeError, ValueError, OverflowError):
            continue
        if np.asarray(v, dtype=np.float64) != x.astype(np.float64) and not np.isnan(x):
            continue                    # not a value of the type: it cannot occur
        if dtype.kind == "f" and not np.isfinite(x):
            if i == 0:
                special = "NaN" if np.isnan(x) else ("Infinity" if x > 0 else "-Infinity")
            continue
        if all(x != w for w in values):
            values.append(x)
        if masks and all(x != w for w in masking):
            masking.append(x)
    return Sentinels(tuple(values), special, tuple(masking), valid_range_of(arr.attrs))


def xarray_float_fill(text: str) -> float | None:
    """A float array's _FillValue as xarray writes it in zarr attributes (format 3, and format
    2 where the zarr fill value is not the mask): base64 of the value as a little-endian
    binary64 (xarray.backends.zarr.FillValueCoder); None if `text` is not that."""
    import base64
    import binascii
    import struct

    try:
        raw = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return None
    return struct.unpack("<d", raw)[0] if len(raw) == 8 else None


def valid_range_of(attrs: Any) -> tuple[float, float] | None:
    """CF valid_range, or valid_min / valid_max (stored units), as (lo, hi); None if neither."""
    def number(v: Any) -> float | None:
        if isinstance(v, list) and len(v) == 1:
            v = v[0]
        return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None

    rng = attrs.get("valid_range")
    if isinstance(rng, list) and len(rng) == 2 and all(number(v) is not None for v in rng):
        return number(rng[0]), number(rng[1])
    lo, hi = number(attrs.get("valid_min")), number(attrs.get("valid_max"))
    if lo is None and hi is None:
        return None
    return (-np.inf if lo is None else lo), (np.inf if hi is None else hi)


def reader(arr: Any, salvage: Any = None) -> Any:
    """region -> its values (NumPy). A chunk that cannot be read or decoded is one error naming
    the array, the chunk's key and the reason (zarr's own says neither array nor chunk); with
    `salvage` (zdt.engine.damage.Salvage), a damaged chunk reads as the fill value instead."""
    if salvage is not None:
        return salvage.reader(arr)
    def read(region: tuple[slice, ...]) -> np.ndarray:
        try:
            return np.asarray(arr[region])
        except (ZdtError, MemoryError):
            raise
        except Exception as exc:
            raise read_failure(arr, region, exc) from exc
    return read


DIAGNOSE_UNITS = 256        # storage units read one by one to find the one that fails


def read_failure(arr: Any, region: tuple[slice, ...], exc: Exception) -> ZdtError:
    """Reading `region` failed with `exc`: which storage unit (shard, or chunk) fails, found by
    reading the region's units one at a time, as InputError (it does not decode: damaged) or
    StorageError (the store could not give its bytes)."""
    key, why = None, exc
    unit = getattr(arr, "shards", None) or arr.chunks
    cells = grid_cells(region, unit)
    if len(cells) == 1:         # one unit: it is the one (a transient fault would not show
        return _failure(arr, arr.metadata.encode_chunk_key(cells[0]), exc, region)  # again)
    for cell in cells[:DIAGNOSE_UNITS]:
        try:
            arr[tuple(slice(k * c, min((k + 1) * c, s)) for k, c, s in zip(cell, unit, arr.shape, strict=True))]
        except Exception as inner:
            key, why = arr.metadata.encode_chunk_key(cell), inner
            break
    return _failure(arr, key, why, region)


def grid_cells(region: tuple[slice, ...], unit: tuple[int, ...]) -> list[tuple[int, ...]]:
    """The cells of a grid of `unit`-shaped blocks (chunks, or shards) that `region` touches,
    in C order."""
    ranges = [range(s.start // c, max(s.start // c + 1, -(-s.stop // c)))
              for s, c in zip(region, unit, strict=True)]
    return [tuple(r[i] for r, i in zip(ranges, idx, strict=True))
            for idx in np.ndindex(*[len(r) for r in ranges])]


def storage_fault(exc: BaseException) -> bool:
    """An error of the store (I/O, a reset, a timeout: all OSErrors) rather than of the bytes
    it gave."""
    return isinstance(exc, OSError)


def _failure(arr: Any, key: str | None, why: BaseException, region: tuple[slice, ...]) -> ZdtError:
    where = f"/{arr.path} chunk {key}" if key is not None else \
        f"/{arr.path} at ({', '.join(f'{s.start}:{s.stop}' for s in region)})"
    filtered = getattr(arr, "zdt_view", False) and _hdf5_failure(why)
    if storage_fault(why) and not filtered:
        return StorageError(f"reading {where} from the source failed: {reason(why)}")
    if getattr(arr, "zdt_view", False):
        # (a netCDF file or Dataset: its own storage failed, not the template's codecs)
        hint = ""
        own = _predict_filter_error() if filtered else None
        if own:
            hint = f" ({own})"
        elif "filter" in str(why).lower() and arr.file:
            hint = ("; if it is zdt.predict's HDF5 filter: HDF5_PLUGIN_PATH=$(python -c "
                    "\"import zdt.hdf5; print(zdt.hdf5.PLUGIN_PATH)\")")
        at = ", ".join(f"{s.start}:{s.stop}" for s in region)
        return InputError(f"cannot read /{arr.path} at ({at}) from {arr.file or 'the Dataset'}: "
                          f"{reason(why)}{hint}")
    return InputError(f"cannot decode {where} ({codecs_text(arr)}): {reason(why)}")


def _hdf5_failure(why: BaseException) -> bool:
    """A read that HDF5 failed in a filter (h5py: "filter returned failure", netCDF-C: "HDF
    error"), not one the store failed."""
    text = str(why).lower()
    return "filter" in text or "hdf error" in text


def _predict_filter_error() -> str | None:
    """zdt.predict's own message for this thread's failed filter call: HDF5 1.14.4 and later
    drop it from the error they raise."""
    try:
        from zdt import hdf5
        return hdf5.last_error()
    except (ImportError, OSError, AttributeError):     # no plugin, or one without it
        return None


def v2_filters(filters: list[dict], dtype: np.dtype) -> list[Any]:
    """zarr v3 JSON of zdt's array -> array codecs as zdt's numcodecs codecs (format 2)."""
    from zdt.codecs.numcodecs import BitRound, CastValue, ScaleOffset
    from zdt.formats import format_for

    out: list[Any] = []
    dtype = np.dtype(dtype)
    for c in filters:
        config = dict(c.get("configuration", {}))
        if c["name"] == "scale_offset":
            out.append(ScaleOffset(dtype=dtype.str, **config))
        elif c["name"] == "cast_value":
            out.append(CastValue(dtype=dtype.str, **config))
            dtype = format_for(config["data_type"]).dtype.newbyteorder("<")
        elif c["name"] in ("bitround", "numcodecs.bitround"):
            out.append(BitRound(**config))
        else:
            raise UsageError(f"codec {c['name']!r} has no zarr format 2 form here; a format 2 "
                               "array takes scale_offset, cast_value and bitround")
    return out


def is_numeric(arr: Any) -> bool:
    return np.dtype(arr.dtype).kind in "iuf" and np.dtype(arr.dtype).names is None


def product(shape: tuple[int, ...]) -> int:
    return int(np.prod(shape, dtype=np.int64))


def fmt_bytes(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if abs(n) < 1000 or unit == "TB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000
    return f"{n} B"
