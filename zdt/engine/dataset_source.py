"""An xarray Dataset as a source the engine reads like a zarr store: the arrays a plain
``dataset.to_zarr`` would create (their metadata, in a store in memory), each read storage unit
by storage unit from the variable after xarray's CF encoding (``scale_factor``, ``_FillValue``,
``dtype``, times as integers). ``zdt.encoding``, ``zdt.suggest`` / ``zdt.convert`` /
``zdt.compare`` on a Dataset, and netCDF files (zdt.engine.netcdf), all go through it.

Speed: every unit is one small dask graph computed on the calling thread (the engine's own
pools run units side by side; dask's pool inside each would only contend), and the bytes a
plain write stores are counted in the same pass that reads a unit, so a pass over the data is
one read of it. A Dataset opened lazily (``xr.open_zarr``, ``open_dataset(chunks={})``) is
read once by the survey and once by the write, as ``zdt convert`` reads a store.
"""

from __future__ import annotations

import threading
import warnings
from collections.abc import Mapping
from typing import Any

import numpy as np

from zdt.errors import InputError


class DatasetSource:
    """The zarr group a plain ``to_zarr`` of `dataset` creates (`root`, metadata and the small
    eagerly written arrays only) and its arrays as `ArrayView`s; `text` names it in messages,
    `file` is the file it was read from (None: a Dataset in memory)."""

    def __init__(self, dataset: Any, text: str, zarr_format: int | None = None,
                 file: str | None = None) -> None:
        from zdt.stores.location import STORE, Location
        from zdt.stores.nodes import is_array, walk

        self.dataset, self.text, self.file = dataset, text, file
        root, self.lazy, eager = _template(dataset, zarr_format)
        # where it is, for the checks a destination makes (not inside the source, ...)
        self.location = (Location(text, "", {}) if file is not None
                         else Location(text, STORE, {}, "main", root.store))
        self.root = SourceGroup(root, self)
        self.nodes: list[tuple[str, Any]] = [
            (p, ArrayView(n, self.lazy, p in eager, file) if is_array(n) else
             (self.root if n is root else n)) for p, n in walk(root)]

    @property
    def arrays(self) -> list[ArrayView]:
        return [n for _, n in self.nodes if isinstance(n, ArrayView)]

    def node(self, inner: str) -> Any:
        """The root (inner ""), or the array named `inner`."""
        if not inner:
            return self.root
        for view in self.arrays:
            if view.path == inner.strip("/"):
                return view
        names = ", ".join(v.path for v in self.arrays) or "none"
        raise InputError(f"{self.text}: no variable {inner!r} (variables: {names})")


class SourceGroup:
    """The template's root group, walked as its views (zdt.stores.nodes.walk asks for
    `zdt_nodes`)."""

    def __init__(self, group: Any, source: DatasetSource) -> None:
        self.group, self.source = group, source

    def __getattr__(self, name: str) -> Any:
        return getattr(self.group, name)

    @property
    def zdt_nodes(self) -> list[tuple[str, Any]]:
        return self.source.nodes


class ArrayView:
    """One template array, its values read from the CF-encoded dataset variable: what the
    engine sees of an array a plain to_zarr writes. Reading a storage unit also counts the
    bytes the plain write stores for it (`stored_bytes`)."""

    zdt_view = True             # (zdt.stores.nodes.is_array)

    def __init__(self, array: Any, lazy: Any, eager: bool, file: str | None = None) -> None:
        self.array = array
        self.eager = eager          # its chunks are in the template already (index coordinates)
        self.file = file            # the netCDF file it is read from (None: a Dataset)
        self.variable = _encoded(lazy, array.path)
        # how the source stores it (a netCDF file's chunks, filters, CF packing: zdt inspect)
        self.source_encoding = dict(lazy.variables[array.path].encoding)
        self._dask = _is_dask(self.variable.data)
        self._unit_index: dict[tuple, int] | None = None
        self._sizes: dict[int, int] = {}
        self._local = threading.local()
        self._docs: dict[str, Any] | None = None

    def __getattr__(self, name: str) -> Any:
        return getattr(self.array, name)

    def __repr__(self) -> str:
        return f"<ArrayView /{self.array.path} {self.array.shape} {self.array.dtype}>"

    def values(self, region: Any) -> np.ndarray:
        """The values at `region` (NumPy), nothing counted."""
        if self._dask:
            # the graph of this region alone, computed here: the engine's threads run units in
            # parallel already
            return np.asarray(self.variable.data[region].compute(scheduler="synchronous"))
        return np.asarray(self.variable[region].values)

    def __getitem__(self, region: Any) -> np.ndarray:
        x = self.values(region)
        i = self._unit_of(region)
        if i is not None and i not in self._sizes:
            self._sizes[i] = self._size(region, x)
        return x

    def stored_bytes(self) -> int:
        """The bytes of chunks a plain write stores (chunks holding only the fill value, which
        zarr leaves out, count nothing): each unit through the array's own codecs, those no
        pass has read yet read now."""
        from zdt.engine.arrays import storage_units

        for i, region in enumerate(storage_units(self.array)):
            if i not in self._sizes:
                self[region]
        return sum(self._sizes.values())

    def _unit_of(self, region: Any) -> int | None:
        if not isinstance(region, tuple) or not all(isinstance(s, slice) for s in region):
            return None
        if self._unit_index is None:
            from zdt.engine.arrays import storage_units

            self._unit_index = {tuple((s.start, s.stop) for s in r): i
                                for i, r in enumerate(storage_units(self.array))}
        return self._unit_index.get(tuple((s.start, s.stop) for s in region))

    def _size(self, region: tuple[slice, ...], x: np.ndarray) -> int:
        """The bytes of the unit `x` as the plain write stores it: written into this thread's
        scratch copy of the array (its metadata alone), its chunks counted and dropped."""
        import zarr
        from zarr.storage import MemoryStore

        from zdt.stores.nodes import METADATA_KEYS

        local = self._local
        if getattr(local, "clone", None) is None:
            local.held = {}
            scratch = MemoryStore(local.held)
            from zarr.core.sync import sync

            for name, doc in self._metadata().items():
                sync(scratch.set(name, doc))
            local.clone = zarr.open_array(store=scratch, mode="r+")
        local.clone[region] = x
        held = local.held
        return sum(len(held.pop(k)) for k in [k for k in held if k not in METADATA_KEYS])

    def _metadata(self) -> dict[str, Any]:
        if self._docs is None:
            from zarr.core.buffer import default_buffer_prototype
            from zarr.core.sync import sync

            from zdt.stores.nodes import METADATA_KEYS

            src = self.array.store_path
            docs = {}
            for name in METADATA_KEYS:
                key = f"{src.path}/{name}" if src.path else name
                doc = sync(src.store.get(key, default_buffer_prototype()))
                if doc is not None:
                    docs[name] = doc
            self._docs = docs
        return self._docs


def _is_dask(data: Any) -> bool:
    return hasattr(data, "dask") and hasattr(data, "compute")


def _template(dataset: Any, zarr_format: int | None) -> tuple[Any, Any, set[str]]:
    """(the zarr group a plain ``dataset.to_zarr`` would create, metadata only and the arrays
    xarray writes at once, in memory; the dataset with every other variable lazy and chunked as
    that write chunks it; the paths of the arrays written at once)."""
    import zarr
    from zarr.storage import MemoryStore

    lazy = dataset.copy()
    eager = set()
    for name, var in dataset.variables.items():
        if var.dtype.kind in "OSUT":
            # strings: written as they are (xarray would load a lazy one all the same)
            if var.chunks is not None:
                lazy[name] = var.load()
            eager.add(str(name))
            continue
        if name in dataset.indexes or var.ndim == 0:
            eager.add(str(name))
            continue
        if var.chunks is None:
            lazy[name] = var.chunk(_zarr_chunks(var, dataset[name].encoding, zarr_format))
    for name, var in dataset.variables.items():
        if sentinels_clash(var.encoding):
            fill, missing = var.encoding["_FillValue"], var.encoding["missing_value"]
            raise InputError(f"the variable {name} declares _FillValue {_plain(fill)} and missing_value "
                             f"{_plain(missing)}: xarray cannot write both back; open the file with "
                             f"mask_and_scale=False (zdt keeps both sentinels exactly) or give "
                             f"zdt the netCDF file itself")
    store = MemoryStore()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")      # e.g. zarr's note on v3 consolidated metadata
        lazy.to_zarr(store, compute=False, zarr_format=zarr_format, consolidated=False)
    return zarr.open_group(store=store, mode="r"), lazy, eager


def sentinels_clash(encoding: Mapping) -> bool:
    """Whether a variable declares a _FillValue and a different missing_value (xarray masks
    both as it reads, and cannot write them back)."""
    if encoding.get("_FillValue") is None or encoding.get("missing_value") is None:
        return False
    a, b = np.asarray(encoding["_FillValue"]), np.asarray(encoding["missing_value"])
    if a.size != 1 or b.size != 1:
        return True
    if a.dtype.kind == "f" and b.dtype.kind == "f" and np.isnan(a) and np.isnan(b):
        return False
    return bool(a != b)


def _zarr_chunks(var: Any, encoding: Mapping, zarr_format: int | None) -> Any:
    """The chunks zarr gives this variable's array when to_zarr is not told any: the ones in
    its encoding, else those of chunks="auto" (asked of zarr itself)."""
    if encoding.get("chunks"):
        return dict(zip(var.dims, encoding["chunks"], strict=True))
    import zarr
    from zarr.storage import MemoryStore

    a = zarr.create_array(MemoryStore(), shape=var.shape, dtype=_stored_dtype(var, encoding),
                          chunks="auto", zarr_format=zarr_format)
    return dict(zip(var.dims, a.chunks, strict=True))


def _stored_dtype(var: Any, encoding: Mapping) -> np.dtype:
    if "dtype" in encoding:
        return np.dtype(encoding["dtype"])
    dtype = np.dtype(var.dtype)
    return np.dtype("int64") if dtype.kind in "mM" else (dtype if dtype.kind != "O" else np.dtype("O"))


def _encoded(dataset: Any, name: str) -> Any:
    """The variable `name` as xarray's zarr backend stores it (CF-encoded), lazily."""
    try:
        from xarray.backends.zarr import encode_zarr_variable
    except ImportError as exc:
        raise InputError(f"this xarray has no encode_zarr_variable ({exc}): write the dataset "
                         "plainly with to_zarr and give zdt the store") from None
    return encode_zarr_variable(dataset.variables[name], name=name)


def _plain(value: Any) -> str:
    """A sentinel as its attribute reads: 1, not np.int32(1)."""
    return str(value.item()) if isinstance(value, np.generic) else repr(value)
