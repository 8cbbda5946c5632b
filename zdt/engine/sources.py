"""Where the engine's sources open: a zarr store, group or array (zdt.stores), an xarray
Dataset, or a netCDF-4 / HDF5 / netCDF-3 file, the last two read as the store a plain
``to_zarr`` writes of them (zdt.engine.netcdf, zdt.engine.dataset_source). Here, above the
stores, because a Dataset source belongs to the engine."""

from __future__ import annotations

from typing import Any

from zdt.errors import UsageError
from zdt.stores.location import Location
from zdt.stores.nodes import open_node, require_zarr


def open_source(source: Any, storage_options: dict | None, branch: str) -> tuple[Any, Any, str]:
    """(location, node, the text messages name it by) of a store, group or array to read; an
    xarray Dataset or a netCDF file is read as the store a plain to_zarr writes of it
    (zdt.engine.netcdf)."""
    require_zarr()
    found = dataset_source_of(source, storage_options)
    if found is not None:
        src, inner = found
        return src.location, src.node(inner), src.text + (f":{inner}" if inner else "")
    loc, inner = Location.of(source, storage_options, branch)
    return loc, open_node(loc, inner), loc.text + (f":{inner}" if inner else "")


def dataset_source_of(source: Any, storage_options: dict | None) -> tuple[Any, str] | None:
    """(zdt.engine.dataset_source.DatasetSource, the variable named) for an xarray Dataset or a
    local netCDF file; None for a zarr store."""
    from zdt.engine.netcdf import dataset_source

    found = dataset_source(source)
    if found is not None and storage_options:
        raise UsageError(f"storage_options are for URLs; {found[0].text} is read here")
    return found
