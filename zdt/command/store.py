"""Opening stores, walking their arrays, and reading arrays chunk by chunk."""

from __future__ import annotations

import warnings
from typing import Any, NamedTuple

import numpy as np

from zdt.command.errors import CommandError
from zdt.command.location import Location, check_options_used, environment_note, reason


def split_target(target: str, storage_options: dict | None = None,
                 branch: str = "main") -> tuple[Location, str]:
    """``STORE[:ARRAY]`` -> (the store's location, array path inside the store, "" for the
    root)."""
    loc, inner = Location.parse(target, storage_options, branch).split_array()
    check_options_used(storage_options or {}, loc)
    return loc, inner


def open_node(loc: Location, inner: str = "") -> Any:
    """The group or array at `inner` of the store at `loc`, read-only."""
    import zarr

    import zdt.codecs.zarr  # noqa: F401  zdt's codecs and data types resolve in the metadata

    if loc.scheme == "":
        if not loc.path.exists():
            raise CommandError(f"{loc.text}: no such file or directory")
        if not loc.path.is_dir():
            raise CommandError(f"{loc.text}: not a zarr store (a store is a directory, a .zip "
                               f"file or a URL)")
    elif loc.scheme == "zip":
        if not loc.path.exists():
            raise CommandError(f"{loc.text}: no such file or directory")
        if not loc.path.is_file():
            raise CommandError(f"{loc.text}: not a zip file")
    try:
        store = loc.open()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            root = zarr.open(store=store, mode="r")
    except CommandError:
        raise
    except Exception as exc:
        if loc.is_local:
            raise CommandError(f"{loc.text}: not a zarr store ({first_line(exc)})") from None
        what = "no zarr store there" if isinstance(exc, FileNotFoundError) else "cannot read it"
        raise CommandError(f"{loc.text}: {what} ({reason(exc)}){environment_note(loc)}") from None
    if not inner:
        return root
    if not isinstance(root, zarr.Group):
        raise CommandError(f"{loc.text} is a single array; it has no member {inner!r}")
    try:
        return root[inner]
    except KeyError:
        names = ", ".join(name for name, node in walk(root) if is_array(node)) or "none"
        raise CommandError(f"{loc.text}: no array or group {inner!r} (arrays: {names})") from None


def is_array(node: Any) -> bool:
    import zarr

    return isinstance(node, zarr.Array)


def walk(node: Any) -> list[tuple[str, Any]]:
    """(path inside the store, node) for node and everything below it, parents first."""
    import zarr

    if not isinstance(node, zarr.Group):
        return [(node.path, node)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zarr warns about every non-zarr file it meets
        members = sorted(node.members(max_depth=None), key=lambda m: m[1].path)
    return [(node.path, node)] + [(child.path, child) for _, child in members]


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
    return Sentinels(tuple(values), special, tuple(masking))


def reader(arr: Any) -> Any:
    """region -> its values (NumPy)."""
    def read(region: tuple[slice, ...]) -> np.ndarray:
        return np.asarray(arr[region])
    return read


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
            raise CommandError(f"codec {c['name']!r} has no zarr format 2 form here; a format 2 "
                               "array takes scale_offset, cast_value and bitround")
    return out


def codec_names(arr: Any) -> list[tuple[str, str]]:
    """(codec name, which library runs it) for each codec of the array, in order."""
    meta = arr.metadata
    if meta.zarr_format == 2:
        codecs = [*(meta.filters or ()), *([meta.compressor] if meta.compressor else [])]
        return [(c.codec_id, implementation(c)) for c in codecs]
    return [(c.to_dict()["name"], implementation(c)) for c in meta.codecs]


def implementation(codec: Any) -> str:
    module = type(codec).__module__
    top = module.split(".")[0]
    if top == "zarr" and ".numcodecs" in module:
        return "numcodecs"
    return top


def data_type_name(arr: Any) -> str:
    meta = arr.metadata
    if meta.zarr_format == 3:
        name = meta.data_type.to_json(zarr_format=3)
        return name if isinstance(name, str) else json_name(name)
    return str(arr.dtype)


def json_name(value: Any) -> str:
    return value.get("name", str(value)) if isinstance(value, dict) else str(value)


def is_numeric(arr: Any) -> bool:
    return np.dtype(arr.dtype).kind in "iuf" and np.dtype(arr.dtype).names is None


def first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


def product(shape: tuple[int, ...]) -> int:
    return int(np.prod(shape, dtype=np.int64))


def fmt_bytes(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if abs(n) < 1000 or unit == "TB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000
    return f"{n} B"



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
            data = sync(st.get(key, default_buffer_prototype()))
            if data is not None:
                digest.update(f"{key}\0{len(data)}\0".encode())
                digest.update(data.to_bytes())
    return digest.hexdigest()
