"""netCDF files (netCDF-4 / HDF5, and classic netCDF-3) and xarray Datasets as sources: opened
through xarray (h5netcdf or netCDF4, whichever is installed) with CF decoding, then read as the
zarr store a plain ``to_zarr`` would write (zdt.engine.dataset_source), which is what the
output is a re-encoded copy of."""

from __future__ import annotations

import os
from importlib import import_module
from typing import Any

from zdt.errors import InputError, MissingPackage

HDF5_MAGIC = b"\x89HDF\r\n\x1a\n"
CLASSIC_MAGIC = (b"CDF\x01", b"CDF\x02", b"CDF\x05")
INSTALL = "pip install 'zdt[netcdf]'"


def netcdf_kind(path: str) -> str | None:
    """"hdf5" (netCDF-4 / HDF5), "classic" (netCDF-3) or None, from the file's first bytes.
    (HDF5 may start its signature at 512, 1024, ... bytes: a user block; netCDF-4 never does.)"""
    try:
        with open(path, "rb") as f:
            head = f.read(8)
    except OSError:
        return None
    if head == HDF5_MAGIC:
        return "hdf5"
    if head[:4] in CLASSIC_MAGIC:
        return "classic"
    return None


def engine_for(kind: str, text: str) -> str:
    """The xarray backend that reads this kind of file here, or MissingPackage naming the
    extra."""
    # (netCDF4 first: the reference library; h5netcdf needs h5py beside it)
    order = {"hdf5": ("netCDF4", "h5netcdf"), "classic": ("netCDF4", "scipy")}[kind]
    if _importable("xarray"):
        for package in order:
            if _importable(package) and (package != "h5netcdf" or _importable("h5py")):
                return package.lower()
    raise MissingPackage(f"{text}: reading a netCDF file needs xarray with h5netcdf or netCDF4: "
                         f"{INSTALL}")


def _importable(name: str) -> bool:
    try:
        import_module(name)
    except ImportError:
        return False
    return True


def open_netcdf(path: str, text: str) -> Any:
    """The root group of the netCDF file as an xarray Dataset, CF-decoded, every variable lazy
    (read region by region from the file). A file whose other groups hold variables is refused,
    naming the first such group: zdt reads one group per source for now."""
    kind = netcdf_kind(path)
    if kind is None:
        raise InputError(f"{text}: not a netCDF or HDF5 file")
    engine = engine_for(kind, text)
    import xarray as xr

    from zdt.engine.dataset_source import sentinels_clash

    try:
        ds = xr.open_dataset(path, engine=engine, chunks=None)
    except Exception as exc:        # (a damaged file, HDF5 without netCDF dimensions, ...)
        first = str(exc).strip().splitlines()
        raise InputError(f"{text}: cannot open it as netCDF with {engine} "
                         f"({type(exc).__name__}{': ' + first[0] if first else ''})") from None
    clashing = [name for name, v in ds.variables.items() if sentinels_clash(v.encoding)]
    if clashing:
        # (xarray masks both but cannot write them back: such variables come as stored, both
        # sentinels declared in their attributes, which the engine keeps exactly)
        raw = xr.open_dataset(path, engine=engine, chunks=None, mask_and_scale=False)
        ds = ds.assign_coords({n: raw[n] for n in clashing if n in ds.coords})
        ds = ds.assign({n: raw[n] for n in clashing if n not in ds.coords})
    if kind == "hdf5":
        group = _group_with_variables(path, engine)
        if group is not None:
            ds.close()
            raise InputError(f"{text}: the netCDF-4 group {group} holds variables; groups are not "
                             f"supported yet (open it with xr.open_dataset({os.path.basename(path)!r}, "
                             f"group={group!r}) and give zdt that Dataset)")
    return ds


def _group_with_variables(path: str, engine: str) -> str | None:
    """The path of the first group below the root that holds a variable, or None."""
    if engine == "h5netcdf":
        import h5netcdf

        with h5netcdf.File(path, "r", phony_dims="access") as f:
            return _first(f, lambda g: g.groups, lambda g: g.variables, "")
    import netCDF4

    with netCDF4.Dataset(path) as f:
        return _first(f, lambda g: g.groups, lambda g: g.variables, "")


def _first(group: Any, groups: Any, variables: Any, prefix: str) -> str | None:
    for name, sub in groups(group).items():
        here = f"{prefix}/{name}"
        if variables(sub):
            return here
        deeper = _first(sub, groups, variables, here)
        if deeper is not None:
            return deeper
    return None


def dataset_source(source: Any, zarr_format: int | None = None) -> tuple[Any, str] | None:
    """(a DatasetSource, the variable named after ``FILE:``) when `source` is an xarray Dataset
    or a local netCDF / HDF5 file (``FILE`` or ``FILE:VARIABLE``); None for anything else (a
    zarr store, a URL, a store object)."""
    import sys

    xr = sys.modules.get("xarray")
    if xr is not None and isinstance(source, xr.Dataset):
        from zdt.engine.dataset_source import DatasetSource

        return DatasetSource(source, "the dataset", zarr_format), ""
    if not isinstance(source, (str, os.PathLike)):
        return None
    text = os.fspath(source)
    if text.startswith("file://"):
        text = text[len("file://"):]
    path, inner = text, ""
    if not os.path.isfile(path):
        head, sep, tail = text.rpartition(":")
        if not (sep and os.path.isfile(head)):
            return None
        path, inner = head, tail.strip("/")
    if netcdf_kind(path) is None:
        return None
    from zdt.engine.dataset_source import DatasetSource

    return DatasetSource(open_netcdf(path, path), path, zarr_format, file=path), inner


def describe_variable(view: Any) -> dict[str, Any]:
    """What ``zdt inspect`` shows of a variable of a netCDF file (or Dataset): its stored type
    and shape, the file's chunks and filters (from xarray's encoding), and the zarr array a
    plain to_zarr, and zdt convert, write of it."""
    import numpy as np

    from zdt.stores.nodes import array_type_name

    enc = view.source_encoding
    chunks = enc.get("chunksizes")
    codecs = hdf5_filters(view.file, view.path) if view.file is not None else None
    if codecs is None:
        codecs = []
        if enc.get("shuffle"):
            codecs.append({"name": "shuffle"})
        compression = enc.get("compression") or ("zlib" if enc.get("zlib") else None)
        if compression:
            level = enc.get("complevel")
            codecs.append({"name": compression, **({"level": int(level)} if level is not None else {})})
        if enc.get("fletcher32"):
            codecs.append({"name": "fletcher32"})
    packed = {k: _plain(enc[k]) for k in ("scale_factor", "add_offset", "_FillValue",
                                          "missing_value") if k in enc}
    return {
        "path": "/" + view.path,
        "source": "netCDF" if view.file is not None else "xarray Dataset",
        "shape": list(view.shape),
        "data_type": array_type_name(view),
        "chunks": list(chunks) if chunks else None,     # None: contiguous
        "codecs": codecs,
        "cf": packed,
        "logical_bytes": int(np.dtype(view.dtype).itemsize * view.size),
        "zarr_chunks": list(view.chunks),
    }


# HDF5 filter ids and the names zdt inspect gives them (HDF5's own, and the registered ones
# hdf5plugin ships: https://github.com/HDFGroup/hdf5_plugins/blob/master/docs/RegisteredFilterPlugins.md)
HDF5_FILTER_NAMES = {1: "zlib", 2: "shuffle", 3: "fletcher32", 4: "szip", 5: "nbit",
                     6: "scaleoffset", 307: "bzip2", 32001: "blosc", 32004: "lz4",
                     32008: "bitshuffle", 32013: "zfp", 32015: "zstd", 32017: "sz",
                     32024: "sz3", 32026: "blosc2", 32028: "sperr"}


def hdf5_filters(path: str, name: str) -> list[dict[str, Any]] | None:
    """The filter pipeline of variable `name` of a netCDF-4 / HDF5 file as HDF5 stores it (every
    filter, those xarray's encoding does not name too: zdt.predict's, SZ3's), with zdt.predict's
    bound; None when the file is not HDF5 or h5py is not there (the plugins need not be)."""
    if netcdf_kind(path) != "hdf5" or not _importable("h5py"):
        return None
    import h5py

    from zdt import hdf5_layout

    out = []
    with h5py.File(path, "r") as f:
        dcpl = f[name].id.get_create_plist()
        for i in range(dcpl.get_nfilters()):
            code, _flags, values, _stored = dcpl.get_filter(i)
            entry: dict[str, Any] = {"name": HDF5_FILTER_NAMES.get(code, f"HDF5 filter {code}")}
            if code == 1 and values:
                entry["level"] = int(values[0])
            elif code == hdf5_layout.FILTER_ID:
                entry = {"name": "zdt.predict", **hdf5_layout.describe(values)}
            out.append(entry)
    return out


def _plain(v: Any) -> Any:
    """A netCDF attribute value as JSON takes it."""
    import numpy as np

    v = np.asarray(v)
    if v.ndim:
        return [_plain(x) for x in v]
    x = v.item()
    return None if isinstance(x, float) and x != x else x
