"""``zdt.encoding(dataset, abs_error=E)``: for an xarray Dataset in memory (NumPy- or
dask-backed), the ``encoding`` argument of ``Dataset.to_zarr`` that writes what writing the
dataset plainly and then running ``zdt convert`` with the same bound would write.

How: the engine decides on zarr arrays, so the dataset is first described as the arrays a plain
``to_zarr`` would create. xarray writes their metadata (and the small index coordinates) into an
in-memory store, with every other variable's data left lazy: a NumPy-backed variable is given
the chunks zarr would pick for it (``chunks="auto"``), which xarray then passes on unchanged.
The values those arrays would hold are the variables after xarray's own CF encoding
(``scale_factor``, ``_FillValue``, ``dtype``, times as integers), read region by region. The
engine's survey, candidates and measurement then run as for a store, including the bytes the
plain write would store (each chunk through the array's own codecs; chunks zarr does not write
because they hold only the fill value left out), and the plan becomes, per variable, the
variable's own encoding plus ``chunks``, ``filters``, ``serializer`` and ``compressors``
(format 2 arrays get numcodecs filters and compressor).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from zdt.engine.compressors import Compression
from zdt.engine.readers import Readers
from zdt.errors import InputError, MissingPackage, UsageError

# what Dataset.to_zarr's `encoding` takes per variable, besides the CF keys xarray's coders use
ZARR_KEYS = ("chunks", "shards", "compressors", "filters", "serializer", "write_empty_chunks",
             "object_codec")
CF_KEYS = ("dtype", "scale_factor", "add_offset", "_FillValue", "missing_value", "units",
           "calendar", "_Unsigned")


def encoding(dataset: Any, *, abs_error: float | None = None, rel_error: float | None = None,
             bounds: Mapping[str, Any] | None = None, include: Sequence[str] | None = None,
             exclude: Sequence[str] | None = None, compressor: Any = "auto",
             readers: Any = None, sample: int | None = None, zarr_format: int | None = None,
             progress: Any = None) -> dict[str, dict]:
    """The ``encoding`` of ``dataset.to_zarr(store, encoding=...)`` that shrinks every data
    variable within its bound, as ``zdt convert`` would (the same plan, the same chunk bytes).

    Coordinates, strings and integers under a relative bound get their own encoding back
    unchanged (they are written as a plain ``to_zarr`` writes them). Variables are named as in
    the dataset; paths in `bounds` / `include` / `exclude` are ``/name``. `zarr_format` is the
    format ``to_zarr`` will be asked for (default: zarr's default).
    """
    try:
        import xarray as xr
    except ImportError:
        raise MissingPackage("zdt.encoding needs xarray: pip install xarray") from None
    if not isinstance(dataset, xr.Dataset):
        raise UsageError(f"zdt.encoding takes an xarray Dataset, not {type(dataset).__name__} "
                         "(for a DataArray: da.to_dataset())")
    from zdt.engine.selection import check_sample, selection_of
    from zdt.engine.decide import decide
    from zdt.stores.nodes import is_array, require_zarr, walk

    require_zarr()
    selection = selection_of(abs_error, rel_error, bounds, include, exclude)
    compression = Compression.parse(compressor)
    who = Readers.parse(readers)
    if not who.filters:
        raise UsageError(f"readers {who}: they decode no lossy filter, so the values must be "
                         "rounded before they are written, which an encoding cannot do: write "
                         "the dataset plainly and run zdt.convert (or zdt convert) on the store")
    check_sample(sample)
    template, store = _template(dataset, zarr_format)
    nodes = [n for _, n in walk(template) if is_array(n)]
    views = [_VariableView(n, dataset) for n in nodes]
    decisions = decide(views, selection, compression, sample,
                       progress or (lambda label, total: (lambda n: None)), None, who)
    out: dict[str, dict] = {}
    for view, d in zip(views, decisions, strict=True):
        name = view.path
        enc = {k: v for k, v in dataset[name].encoding.items() if k in ZARR_KEYS + CF_KEYS}
        enc["chunks"] = tuple(view.chunks)
        if d.action == "encode":
            enc.update(_codec_keys(view.array, d.codecs, compression))
        out[name] = enc
    return out


def _template(dataset: Any, zarr_format: int | None) -> tuple[Any, Any]:
    """The zarr group a plain ``dataset.to_zarr`` would create, metadata only (and index
    coordinates, which xarray writes at once), in memory."""
    import warnings

    import zarr
    from zarr.storage import MemoryStore

    lazy = dataset.copy()
    for name, var in dataset.variables.items():
        if var.dtype.kind in "OSUT":
            # strings: written as they are (xarray would load a lazy one all the same)
            if var.chunks is not None:
                lazy[name] = var.load()
            continue
        if name in dataset.indexes or var.chunks is not None or var.ndim == 0:
            continue
        lazy[name] = var.chunk(_zarr_chunks(var, dataset[name].encoding, zarr_format))
    store = MemoryStore()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")      # e.g. zarr's note on v3 consolidated metadata
        lazy.to_zarr(store, compute=False, zarr_format=zarr_format, consolidated=False)
    return zarr.open_group(store=store, mode="r"), store


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


class _VariableView:
    """One template array, its values read from the dataset variable after xarray's CF
    encoding: what the engine sees of an array a plain to_zarr writes."""

    def __init__(self, array: Any, dataset: Any) -> None:
        self.array = array
        self.variable = _encoded(dataset, array.path)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.array, name)

    def __getitem__(self, region: Any) -> np.ndarray:
        return np.asarray(self.variable[region].values if hasattr(self.variable, "values")
                          else self.variable[region])

    def stored_bytes(self) -> int:
        """The bytes of chunks a plain write stores: the array's metadata copied into a store
        of its own, every storage unit written there and its chunks' sizes counted (so chunks
        zarr leaves out, holding only the fill value, count nothing), then dropped."""
        import zarr
        from zarr.core.buffer import default_buffer_prototype
        from zarr.core.sync import sync
        from zarr.storage import MemoryStore

        from zdt.engine.arrays import storage_units
        from zdt.stores.nodes import METADATA_KEYS

        src = self.array.store_path
        held: dict = {}
        scratch = MemoryStore(held)
        for name in METADATA_KEYS:
            key = f"{src.path}/{name}" if src.path else name
            doc = sync(src.store.get(key, default_buffer_prototype()))
            if doc is not None:
                sync(scratch.set(name, doc))
        clone = zarr.open_array(store=scratch, mode="r+")
        total = 0
        for region in storage_units(self.array):
            clone[region] = self[region]
            for key in [k for k in held if k not in METADATA_KEYS]:
                total += len(held.pop(key))
        return total


def _encoded(dataset: Any, name: str) -> Any:
    """The variable `name` as xarray's zarr backend stores it (CF-encoded), lazily."""
    try:
        from xarray.backends.zarr import encode_zarr_variable
    except ImportError as exc:
        raise InputError(f"zdt.encoding: this xarray has no encode_zarr_variable ({exc}); "
                         "write the dataset plainly and run zdt convert on the store") from None
    return encode_zarr_variable(dataset.variables[name], name=name)


def _codec_keys(array: Any, codecs: list[dict], compression: Compression) -> dict:
    """The to_zarr encoding keys that give an array `codecs` (the compressors as convert gives
    them: those the chain names after its serializer, else what `compression` gives it)."""
    from zdt.engine.arrays import v2_filters
    from zdt.engine.compressors import to_v2
    from zdt.engine.measure import zdt_codecs
    from zdt.engine.plan import split_codecs

    filters, serializer, inline = split_codecs(codecs)
    compressors = inline if serializer is not None else compression.chain(array)
    if array.metadata.zarr_format == 2:
        # (zarr 3 takes a format 2 array's compressor as `compressors` too, and xarray with it)
        v2 = to_v2(list(compressors))
        return {"filters": v2_filters(filters, np.dtype(array.dtype)),
                "compressors": [v2] if v2 is not None else None}
    from zarr.registry import get_codec_class

    def build(c: Any) -> Any:
        return get_codec_class(c["name"]).from_dict(c) if isinstance(c, dict) else c

    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")         # zarr's note that numcodecs.* are not in the spec
        out = {"filters": [build(c) for c in zdt_codecs(filters)],
               "compressors": [build(c) for c in compressors] or None}
        if serializer is not None:
            out["serializer"] = build(serializer)
    return out
