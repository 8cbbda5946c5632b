"""``zdt.encoding(dataset, abs_error=E)``: for an xarray Dataset in memory (NumPy- or
dask-backed), the ``encoding`` argument of ``Dataset.to_zarr`` that writes what writing the
dataset plainly and then running ``zdt convert`` with the same bound would write.

How: the engine decides on zarr arrays, so the dataset is first described as the arrays a plain
``to_zarr`` would create. xarray writes their metadata (and the small index coordinates) into an
in-memory store, with every other variable's data left lazy: a NumPy-backed variable is given
the chunks zarr would pick for it (``chunks="auto"``), which xarray then passes on unchanged.
The values those arrays would hold are the variables after xarray's own CF encoding
(``scale_factor``, ``_FillValue``, ``dtype``, times as integers), read storage unit by storage
unit (zdt.engine.dataset_source: the same source zdt.suggest and zdt.convert read). The
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
from zdt.errors import MissingPackage, UsageError

# what Dataset.to_zarr's `encoding` takes per variable, besides the CF keys xarray's coders use
ZARR_KEYS = ("chunks", "shards", "compressors", "filters", "serializer", "write_empty_chunks",
             "object_codec")
CF_KEYS = ("dtype", "scale_factor", "add_offset", "_FillValue", "missing_value", "units",
           "calendar", "_Unsigned")


def encoding(dataset: Any, *, abs_error: float | None = None, rel_error: float | None = None,
             bounds: Mapping[str, Any] | None = None, include: Sequence[str] | None = None,
             exclude: Sequence[str] | None = None, compressor: Any = "auto",
             readers: Any = None, sample: int | None = None, zarr_format: int | None = None,
             progress: Any = None, force: bool = False) -> dict[str, dict]:
    """The ``encoding`` of ``dataset.to_zarr(store, encoding=...)`` that shrinks every data
    variable within its bound, as ``zdt convert`` would (the same plan, the same chunk bytes).

    Coordinates, strings and integers under a relative bound get their own encoding back
    unchanged (they are written as a plain ``to_zarr`` writes them). Variables are named as in
    the dataset; paths in `bounds` / `include` / `exclude` are ``/name``. `zarr_format` is the
    format ``to_zarr`` will be asked for (default: zarr's default). `progress`: None (the
    default) shows a bar per pass on a terminal, as the command does; False shows none; or a
    callable ``progress(label, total)`` -> ``advance(n)``. `force`: accept a bound above a tenth
    of a variable's range, or a relative bound of 1 or more.

    A chain some reader rejects cannot be rounded in memory here (xarray writes the values
    as given): such chains are left out, and the next best one is taken.
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
    from zdt.engine.dataset_source import DatasetSource
    from zdt.stores.nodes import require_zarr

    require_zarr()
    selection = selection_of(abs_error, rel_error, bounds, include, exclude, force=force)
    compression = Compression.parse(compressor)
    who = Readers.parse(readers).without_in_memory()
    if not who.filters:
        raise UsageError(f"readers {who}: they decode no lossy filter, so the values must be "
                         "rounded before they are written, which an encoding cannot do: write "
                         "the dataset plainly and run zdt.convert (or zdt convert) on the store")
    check_sample(sample)
    from zdt.engine.progress import progress_for

    views = DatasetSource(dataset, "the dataset", zarr_format).arrays
    with progress_for(progress) as bars:
        # (xarray writes the chunks: edge chunks padded with the fill value, as zarr pads)
        decisions = decide(views, selection, compression, sample, bars, None, who, own_padding=False)
    out: dict[str, dict] = {}
    for view, d in zip(views, decisions, strict=True):
        name = view.path
        enc = {k: v for k, v in dataset[name].encoding.items() if k in ZARR_KEYS + CF_KEYS}
        enc["chunks"] = tuple(view.chunks)
        if d.action == "encode":
            enc.update(_codec_keys(view.array, d.codecs, compression))
        out[name] = enc
    return out


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
