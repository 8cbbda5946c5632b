"""Opening stores and walking their nodes; what a node holds in its store (metadata documents,
stored bytes, codecs) and copying or comparing a node's objects byte for byte."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from zdt.errors import InputError, JobError, MissingPackage, StorageError
from zdt.stores.location import Location, environment_note, reason


def open_node(loc: Location, inner: str = "") -> Any:
    """The group or array at `inner` of the store at `loc`, read-only."""
    import zarr

    import zdt.codecs.zarr  # noqa: F401  zdt's codecs and data types resolve in the metadata

    if loc.scheme == "":
        if not loc.path.exists():
            raise InputError(f"{loc.text}: no such file or directory")
        if not loc.path.is_dir():
            raise InputError(f"{loc.text}: not a zarr store nor a netCDF file (a store is a "
                             f"directory, a .zip file or a URL; netCDF-4, HDF5 and netCDF-3 "
                             f"files are read through xarray)")
    elif loc.scheme == "zip":
        if not loc.path.exists():
            raise InputError(f"{loc.text}: no such file or directory")
        if not loc.path.is_file():
            raise InputError(f"{loc.text}: not a zip file")
    store = loc.open()
    try:
        root = _open(store, "")
    except JobError:
        raise
    except Exception as exc:
        if loc.is_local:
            raise InputError(f"{loc.text}: not a zarr store ({first_line(exc)})") from None
        if isinstance(exc, (FileNotFoundError, KeyError)):
            raise InputError(f"{loc.text}: no zarr store there ({reason(exc)})"
                             f"{environment_note(loc)}") from None
        raise StorageError(f"{loc.text}: cannot read it ({reason(exc)}){environment_note(loc)}") from None
    if not inner:
        return root
    if not isinstance(root, zarr.Group):
        raise InputError(f"{loc.text} is a single array; it has no member {inner!r}")
    try:
        return root[inner]
    except KeyError:
        names = ", ".join(name for name, node in walk(root) if is_array(node)) or "none"
        raise InputError(f"{loc.text}: no array or group {inner!r} (arrays: {names})") from None


@contextmanager
def reading_metadata(where: Any) -> Iterator[None]:
    """Errors of reading a store's metadata documents (walking its tree, its fingerprint) as
    one line naming the store: the store's own (an I/O error, a reset, a timeout) as
    StorageError; a document that does not parse as InputError."""
    try:
        yield
    except JobError:
        raise
    except OSError as exc:          # (ConnectionError and TimeoutError are OSErrors)
        raise StorageError(f"{where}: reading its metadata failed ({reason(exc)})") from None
    except (ValueError, UnicodeDecodeError) as exc:      # (json.JSONDecodeError is a ValueError)
        raise InputError(f"{where}: a metadata document does not parse ({reason(exc)})") from None


def store_text(node: Any) -> str:
    """How messages name the store a node is in."""
    return str(node.store_path.store)


def _open(store: Any, path: str) -> Any:
    import zarr

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if getattr(store, "read_only", True):
            return zarr.open(store=store, path=path, mode="r")
        # a writable store object given in Python: zarr opens it for reading as it is
        from zarr.api.synchronous import open as zopen

        return zopen(store=store, path=path, mode="r")


def is_array(node: Any) -> bool:
    """A zarr array, or a Dataset variable read as one (zdt.engine.dataset_source.ArrayView)."""
    import zarr

    return isinstance(node, zarr.Array) or getattr(node, "zdt_view", False)


def walk(node: Any) -> list[tuple[str, Any]]:
    """(path inside the store, node) for node and everything below it, parents first."""
    import zarr

    if hasattr(node, "zdt_nodes"):          # a Dataset read as a store (dataset_source)
        return list(node.zdt_nodes)
    if not isinstance(node, zarr.Group):
        return [(node.path, node)]
    with warnings.catch_warnings(), reading_metadata(store_text(node)):
        warnings.simplefilter("ignore")  # zarr warns about every non-zarr file it meets
        members = sorted(node.members(max_depth=None), key=lambda m: m[1].path)
    return [(node.path, node)] + [(child.path, child) for _, child in members]


def codecs_of(arr: Any) -> list[tuple[str, str]]:
    """(codec name, which library runs it) for each codec of the array, in order: its codecs
    (format 3), or its filters and compressor (format 2)."""
    meta = arr.metadata
    if meta.zarr_format == 2:
        codecs = [*(meta.filters or ()), *([meta.compressor] if meta.compressor else [])]
        return [(c.codec_id, implementation(c)) for c in codecs]
    return [(c.to_dict()["name"], implementation(c)) for c in meta.codecs]


def codecs_text(arr: Any) -> str:
    """The array's codecs as messages name them: "scale_offset, cast_value, bytes, zstd"
    ("no codecs" for a format 2 array without filters or compressor)."""
    return ", ".join(name for name, _ in codecs_of(arr)) or "no codecs"


def implementation(codec: Any) -> str:
    module = type(codec).__module__
    top = module.split(".")[0]
    if top == "zarr" and ".numcodecs" in module:
        return "numcodecs"
    return top


def array_type_name(arr: Any) -> str:
    """The array's data type by name, as plans and messages give it: its zarr v3 name (format
    3), NumPy's (format 2)."""
    meta = arr.metadata
    if meta.zarr_format == 3:
        with warnings.catch_warnings():     # (zarr's note on types without a v3 spec: a name)
            warnings.simplefilter("ignore")
            name = meta.data_type.to_json(zarr_format=3)
        return name if isinstance(name, str) else json_name(name)
    return str(arr.dtype)


def json_name(value: Any) -> str:
    return value.get("name", str(value)) if isinstance(value, dict) else str(value)


def first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


METADATA_KEYS = ("zarr.json", ".zarray", ".zgroup", ".zattrs", ".zmetadata")


def stored_chunk_bytes(arr: Any) -> int:
    """The bytes of the array's chunks in its store now (its metadata documents left out):
    what copying its chunks writes."""
    from zarr.core.sync import sync

    store, prefix = arr.store_path.store, arr.store_path.path
    meta = 0
    for name in METADATA_KEYS:
        key = f"{prefix}/{name}" if prefix else name
        try:
            meta += int(sync(store.getsize(key)))
        except (FileNotFoundError, KeyError):
            pass
    return int(arr.nbytes_stored()) - meta


def fingerprint(nodes: list[tuple[str, Any]]) -> str:
    """A digest of every metadata document of the nodes (shapes, types, codecs, attributes):
    what a resumed conversion checks first to know it reads the store it started on."""
    import hashlib

    from zarr.core.buffer import default_buffer_prototype
    from zarr.core.sync import sync

    digest = hashlib.sha256()
    for _, node in sorted(nodes, key=lambda pn: pn[0]):
        st, prefix = node.store_path.store, node.store_path.path
        for name in METADATA_KEYS:
            key = f"{prefix}/{name}" if prefix else name
            with reading_metadata(store_text(node)):
                data = sync(st.get(key, default_buffer_prototype()))
            if data is not None:
                digest.update(f"{key}\0{len(data)}\0".encode())
                digest.update(data.to_bytes())
    return digest.hexdigest()


def require_zarr() -> None:
    """The job works on zarr stores through zarr-python 3 (an extra of zdt's)."""
    try:
        import zarr
    except ImportError:
        raise MissingPackage("this needs zarr >= 3.1, which is not installed: "
                             "pip install 'zdt[zarr]'") from None
    if int(zarr.__version__.split(".")[0]) < 3:
        raise MissingPackage(f"this needs zarr >= 3.1; zarr {zarr.__version__} is installed: "
                             "pip install 'zdt[zarr]'")
