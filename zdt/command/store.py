"""Opening stores, walking their arrays, and reading arrays chunk by chunk."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from zdt.command.errors import CommandError


def split_target(target: str) -> tuple[Path, str]:
    """``PATH[:ARRAY]`` -> (path, array path inside the store, "" for the root)."""
    path, sep, inner = target.partition(":")
    if sep and not Path(target).exists():
        return Path(path), inner.strip("/")
    return Path(target), ""


def open_node(path: Path, inner: str = "") -> Any:
    """The group or array at `inner` of the local store at `path`, read-only."""
    import zarr

    import zdt.codecs.zarr  # noqa: F401  zdt's codecs and data types resolve in the metadata

    if not path.exists():
        raise CommandError(f"{path}: no such file or directory")
    if not path.is_dir():
        raise CommandError(f"{path}: not a zarr store (zdt reads stores in local directories)")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            root = zarr.open(store=str(path), mode="r")
    except Exception as exc:
        raise CommandError(f"{path}: not a zarr store ({_first_line(exc)})") from None
    if not inner:
        return root
    if not isinstance(root, zarr.Group):
        raise CommandError(f"{path} is a single array; it has no member {inner!r}")
    try:
        return root[inner]
    except KeyError:
        names = ", ".join(name for name, node in walk(root) if is_array(node)) or "none"
        raise CommandError(f"{path}: no array or group {inner!r} (arrays: {names})") from None


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


def chunk_regions(arr: Any, sample: int | None = None) -> tuple[list[tuple[slice, ...]], int]:
    """The regions of the array's storage units (shards if sharded, else chunks), in C order;
    with `sample`, that many of them evenly spaced. Returns (regions, total count)."""
    unit = getattr(arr, "shards", None) or arr.chunks
    counts = [max(1, -(-s // c)) for s, c in zip(arr.shape, unit, strict=True)]
    total = int(np.prod(counts, dtype=np.int64))
    if sample is not None and sample < total:
        picks = sorted({int(i) for i in np.linspace(0, total - 1, num=max(sample, 1))})
    else:
        picks = range(total)
    regions = []
    for flat in picks:
        index = np.unravel_index(flat, counts) if counts else ()
        regions.append(tuple(slice(int(i) * c, min((int(i) + 1) * c, s))
                             for i, c, s in zip(index, unit, arr.shape, strict=True)))
    return regions, total


def blocks(arr: Any, regions: list[tuple[slice, ...]]) -> Iterator[np.ndarray]:
    for region in regions:
        yield arr[region]


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


def _first_line(exc: BaseException) -> str:
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

