"""``zdt convert SRC DST``: a re-encoded copy of a store, array by array, chunk by chunk.

The copy is written to ``DST.zdt-partial`` and renamed to DST only when every array is done,
so an interrupted run never leaves a DST that looks complete (the partial directory is removed
on Ctrl-C or an error; a killed process leaves it, named for what it is). Memory stays bounded
by one storage unit (a shard, or a chunk) at a time. With a bound, each array gets the
encoding ``zdt suggest`` would give it (measured on --sample chunks, or all of it), and every
unit written is read back and checked against the bound; a unit that breaks it stops the run.
Groups, attributes and arrays that are not re-encoded (strings, booleans, an array no encoding
makes smaller) are copied byte for byte.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
from pathlib import Path
from typing import Any

import numpy as np

from zdt.command import store
from zdt.command.errors import CommandError
from zdt.command.suggest import add_bound_args, bound_of, measure_array
from zdt.command.encoding_search import error_of

PARTIAL = ".zdt-partial"


def parse_codecs(text: str) -> list[dict]:
    try:
        codecs = json.loads(text)
    except json.JSONDecodeError as exc:
        raise CommandError(f"--codecs is not JSON: {exc}") from None
    if isinstance(codecs, dict):
        codecs = [codecs]
    if not isinstance(codecs, list) or not all(isinstance(c, dict) and "name" in c for c in codecs):
        raise CommandError('--codecs must be a JSON list of codecs like {"name": ..., "configuration": {...}}')
    return codecs


def parse_compressor(text: str | None) -> tuple[str, Any] | None:
    """None: keep each array's compressors; else ("none" | "zstd" | "blosc", level) or
    ("json", [codec, ...]) (zarr v3 JSON, for v3 arrays)."""
    if text is None or text == "keep":
        return None
    name, _, level = text.partition(":")
    if name in ("none", "zstd", "blosc"):
        try:
            return name, int(level) if level else None
        except ValueError:
            raise CommandError(f"--compressor {text!r}: the level must be an integer") from None
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        raise CommandError(f"--compressor {text!r}: use none, keep, zstd[:LEVEL], blosc[:LEVEL] "
                           "or codec JSON") from None
    return "json", value if isinstance(value, list) else [value]


def _compressors(choice: tuple[str, Any], zarr_format: int) -> Any:
    kind, value = choice
    if kind == "none":
        return None
    if kind == "json":
        if zarr_format == 2:
            raise CommandError("--compressor as JSON is zarr v3 codec JSON; this store has "
                               "format 2 arrays: use zstd[:LEVEL] or blosc[:LEVEL]")
        return value
    if zarr_format == 2:
        import numcodecs

        return numcodecs.Zstd(level=value or 3) if kind == "zstd" else numcodecs.Blosc(
            cname="zstd", clevel=value or 5, shuffle=numcodecs.Blosc.SHUFFLE)
    from zarr.codecs import BloscCodec, ZstdCodec

    return ZstdCodec(level=value or 3) if kind == "zstd" else BloscCodec(
        cname="zstd", clevel=value or 5, shuffle="shuffle")


def _is_serializer(name: str) -> bool:
    """An array -> bytes codec, by zarr's registry (an unknown name is left to zarr to reject)."""
    from zarr.abc.codec import ArrayBytesCodec
    from zarr.registry import get_codec_class

    try:
        return issubclass(get_codec_class(name), ArrayBytesCodec)
    except (KeyError, ValueError):      # unknown codec: KeyError (zarr 3.1), ValueError (newer)
        return False


def _split(codecs: list[dict]) -> tuple[list[dict], dict | None, list[dict]]:
    """A v3 codec list -> (filters, serializer, compressors)."""
    for i, c in enumerate(codecs):
        if _is_serializer(c["name"]):
            return codecs[:i], c, codecs[i + 1:]
    return codecs, None, []


def _v2_filters(filters: list[dict], dtype: np.dtype) -> list[Any]:
    """zarr v3 JSON of zdt's array -> array codecs as zdt's numcodecs facades (format 2)."""
    from zdt.formats import format_for
    from zdt.codecs.numcodecs import CastValue, ScaleOffset

    out = []
    for c in filters:
        config = dict(c.get("configuration", {}))
        if c["name"] == "scale_offset":
            out.append(ScaleOffset(dtype=dtype.str, **config))
        elif c["name"] == "cast_value":
            out.append(CastValue(dtype=dtype.str, **config))
            dtype = format_for(config["data_type"]).dtype.newbyteorder("<")
        else:
            raise CommandError(f"codec {c['name']!r} has no zarr format 2 form here; "
                               "a format 2 array takes scale_offset and cast_value")
    return out


def _create_like(root: Path, arr: Any, codecs: list[dict], compressors: Any) -> Any:
    import zarr

    meta = arr.metadata
    filters, serializer, inline_compressors = _split(codecs)
    if inline_compressors:
        compressors = inline_compressors
    elif compressors is None:
        compressors = arr.compressors or None
    else:
        compressors = _compressors(compressors, meta.zarr_format)
    kwargs: dict[str, Any] = dict(
        store=str(root), name=arr.path or None, shape=arr.shape, chunks=arr.chunks,
        dtype=meta.data_type if meta.zarr_format == 3 else arr.dtype,
        fill_value=arr.fill_value, attributes=dict(arr.attrs), compressors=compressors,
        zarr_format=meta.zarr_format, overwrite=False)
    if meta.zarr_format == 3:
        kwargs.update(filters=filters, shards=getattr(arr, "shards", None),
                      dimension_names=meta.dimension_names)
        if serializer:
            kwargs["serializer"] = serializer
    else:
        if serializer and serializer["name"] != "bytes":
            raise CommandError(f"/{arr.path}: zarr format 2 arrays have no {serializer['name']!r}")
        kwargs.update(filters=_v2_filters(filters, np.dtype(arr.dtype)), order=meta.order)
    try:
        return zarr.create_array(**kwargs)
    except CommandError:
        raise
    except Exception as exc:
        raise CommandError(f"/{arr.path}: cannot create it with codecs {json.dumps(codecs)}: "
                           f"{str(exc).splitlines()[0]}") from None


def _copy_tree(src_root: Path, dst_root: Path, node: Any) -> None:
    """Copy an array's directory (metadata and chunks) byte for byte."""
    src = src_root / node.path
    dst = dst_root / node.path
    dst.parent.mkdir(parents=True, exist_ok=True)
    shutil.copytree(src, dst, dirs_exist_ok=True)  # a root array's directory is dst_root


def _create_group(dst_root: Path, group: Any) -> None:
    import zarr

    zarr.open_group(store=str(dst_root), path=group.path, mode="a",
                    zarr_format=group.metadata.zarr_format, attributes=dict(group.attrs))


def _check(path: str, region: tuple[slice, ...], x: np.ndarray, y: np.ndarray,
           bound: float, relative: bool) -> None:
    err = error_of(np.asarray(x), np.asarray(y), relative, bound)
    if not err <= bound:
        where = tuple((s.start, s.stop) for s in region)
        shown = "special values or zeros not kept" if math.isinf(err) else f"error {err:.3g}"
        raise CommandError(f"{path}: the chunk at {where} breaks the bound ({shown} > {bound:g}); "
                           "run again with a larger --sample or without one")


def run(args: argparse.Namespace) -> int:
    given = [args.codecs is not None, args.abs_error is not None, args.rel_error is not None]
    if sum(given) != 1:
        raise CommandError("give exactly one of --codecs, --abs-error and --rel-error")
    codecs = parse_codecs(args.codecs) if args.codecs is not None else None
    bound, relative = bound_of(args) if codecs is None else (None, False)
    compressors = parse_compressor(args.compressor)
    src_path, inner = store.split_target(args.src)
    if inner:
        raise CommandError("zdt convert copies a whole store: give SRC without :ARRAY")
    dst = Path(args.dst)
    partial = dst.with_name(dst.name + PARTIAL)
    if dst.exists():
        raise CommandError(f"{dst} exists; zdt convert writes a new store")
    if partial.exists():
        raise CommandError(f"{partial} exists: an earlier convert was killed; remove it first")
    node = store.open_node(src_path)
    if not dst.parent.exists():
        raise CommandError(f"{dst.parent}: no such directory")

    nodes = store.walk(node)
    try:
        _convert(src_path, partial, nodes, codecs, bound, relative, compressors, args)
    except BaseException as exc:
        if isinstance(exc, KeyboardInterrupt):
            from zdt.zarr_compat import stop_zarr_io

            # the interrupted write goes on in zarr's IO thread: stop it before cleaning up
            stop_zarr_io()
        shutil.rmtree(partial, ignore_errors=True)
        raise
    os.replace(partial, dst)
    print(f"wrote {dst}")
    return 0


def _convert(src_root: Path, out: Path, nodes: list[tuple[str, Any]], codecs: list[dict] | None,
             bound: float | None, relative: bool, compressors: Any, args: argparse.Namespace) -> None:
    import zarr
    from tqdm import tqdm

    out.mkdir()
    jobs = []  # (source array, codecs or None to copy as it is)
    for _, n in nodes:
        if not store.is_array(n):
            _create_group(out, n)
            continue
        if not store.is_numeric(n):
            jobs.append((n, None, "not numeric: copied"))
        elif codecs is not None:
            jobs.append((n, codecs, "codecs from --codecs"))
        else:
            plan = measure_array(n, bound, relative, args.sample)
            if plan.result is None:
                jobs.append((n, None, f"copied ({plan.reason})"))
            else:
                r = plan.result
                jobs.append((n, r.encoding.codecs, f"{r.encoding.label}, error {r.error:.3g} measured"))
    units = sum(store.chunk_regions(a)[1] for a, c, _ in jobs if c is not None)

    def say(line: str) -> None:
        if not args.quiet:
            tqdm.write(line)

    with tqdm(total=units, unit="chunk", disable=True if args.quiet else None, leave=False) as bar:
        for arr, chain, why in jobs:
            path = "/" + arr.path
            if chain is None:
                _copy_tree(src_root, out, arr)
                say(f"{path}: {why}")
                continue
            new = _create_like(out, arr, chain, compressors)
            regions, _ = store.chunk_regions(arr)
            bar.set_description(path)
            for region in regions:
                x = arr[region]
                try:
                    new[region] = x
                except Exception as exc:
                    where = tuple((s.start, s.stop) for s in region)
                    hint = (" (the encoding was chosen from a sample that did not see this "
                            "value: run again with a larger --sample or without one)"
                            if args.sample and codecs is None else "")
                    raise CommandError(f"{path}: writing the chunk at {where}: "
                                       f"{str(exc).splitlines()[0]}{hint}") from None
                if bound is not None:
                    _check(path, region, x, new[region], bound, relative)
                bar.update(1)
            say(f"{path}: {why}")
    root = nodes[0][1]          # walk lists the root first
    if isinstance(root, zarr.Group) and root.metadata.consolidated_metadata is not None:
        zarr.consolidate_metadata(str(out))


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "convert", help="write a re-encoded copy of a store",
        description="Writes a re-encoded copy of SRC to DST, array by array and chunk by chunk "
                    "in bounded memory. With --abs-error / --rel-error each numeric array gets "
                    "the encoding `zdt suggest` finds, and every chunk written is read back and "
                    "checked against the bound. Groups, attributes and arrays left alone are "
                    "copied as they are. DST appears only when the copy is complete.")
    p.add_argument("src", metavar="SRC", help="a local zarr store")
    p.add_argument("dst", metavar="DST", help="the new store (must not exist)")
    p.add_argument("--codecs", metavar="JSON",
                   help="codecs for every numeric array, as `zdt suggest` prints them")
    add_bound_args(p)
    p.add_argument("--compressor", metavar="C", help="none, keep (the default: each array's "
                   "own), zstd[:LEVEL], blosc[:LEVEL] or a codec as JSON")
    p.add_argument("--sample", type=int, metavar="N",
                   help="choose each encoding from N chunks (every chunk is still checked)")
    p.add_argument("--quiet", action="store_true", help="no progress bar or per-array lines")
    p.set_defaults(run=run)
