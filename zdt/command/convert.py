"""``zdt convert SRC DST``: a re-encoded copy of a store, array by array, storage unit by unit.

What to do with each array comes from ``--plan FILE`` (``zdt suggest --json``, applied as
written), ``--codecs JSON`` (the same codecs for every numeric array), or a bound (decided as
``zdt suggest`` decides: zdt.command.decide). Arrays that are not re-encoded (coordinates,
strings, excluded ones, arrays no encoding shrinks) are copied byte for byte; groups,
attributes, dimension names, fill values and consolidated metadata are carried over.

Every storage unit written with a bound is checked first: its values go through the
encoding's stages and back in memory and the error is computed exactly; a unit that breaks
the bound stops the run, naming the element and its value in the data's units.

The copy is written to ``DST.zdt-partial`` and renamed to DST only when every array is done,
so a DST that exists is complete (a killed process leaves the partial directory, named for
what it is; Ctrl-C, SIGTERM and errors remove it). The source is only read.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from zdt.command import store
from zdt.command.bounds import Bound, error_of, worst_element
from zdt.command.candidates import Encoding
from zdt.command.compressors import Compression
from zdt.command.decide import decide, fmt_error, workers
from zdt.command.errors import CommandError
from zdt.command.measure import ChunkRunner, Output
from zdt.command.options import add_selection_args, progress_bars, selection_of
from zdt.command.plan import Decision, Plan, coordinates
from zdt.errors import ZdtError

PARTIAL = ".zdt-partial"


class Terminated(KeyboardInterrupt):
    """SIGTERM: handled like Ctrl-C (the partial copy is removed)."""


def parse_codecs(text: str) -> list[dict]:
    try:
        codecs = json.loads(text)
    except json.JSONDecodeError as exc:
        raise CommandError(f"--codecs is not JSON: {exc}") from None
    if isinstance(codecs, dict):
        codecs = [codecs]
    if not isinstance(codecs, list) or not codecs or not all(isinstance(c, dict) and "name" in c for c in codecs):
        raise CommandError('--codecs must be a JSON list of codecs like {"name": ..., "configuration": {...}}')
    return codecs


def _is_serializer(name: str) -> bool:
    """An array -> bytes codec, by zarr's registry (an unknown name is left to zarr to reject)."""
    from zarr.abc.codec import ArrayBytesCodec
    from zarr.registry import get_codec_class

    try:
        return issubclass(get_codec_class(name), ArrayBytesCodec)
    except (KeyError, ValueError):      # unknown codec: KeyError (zarr 3.1), ValueError (newer)
        return False


def split_codecs(codecs: list[dict]) -> tuple[list[dict], dict | None, list[dict]]:
    """A v3 codec list -> (array -> array codecs, serializer or None, compressors)."""
    for i, c in enumerate(codecs):
        if _is_serializer(c["name"]):
            return codecs[:i], c, codecs[i + 1:]
    return codecs, None, []


def create_like(root: Path, arr: Any, codecs: list[dict], compression: Compression) -> Any:
    """An empty array in `root` like `arr` (shape, chunks, shards, fill value, attributes,
    dimension names, format), with `codecs` and the compressors `compression` gives it."""
    import zarr

    meta = arr.metadata
    filters, serializer, inline = split_codecs(codecs)
    compressors = inline or compression.for_array(arr)
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
        kwargs.update(filters=store.v2_filters(filters, np.dtype(arr.dtype)), order=meta.order)
    try:
        return zarr.create_array(**kwargs)
    except (ValueError, TypeError, KeyError) as exc:
        raise CommandError(f"/{arr.path}: cannot create it with codecs {json.dumps(codecs)}: "
                           f"{str(exc).splitlines()[0]}") from None


def copy_array(src_root: Path, dst_root: Path, arr: Any) -> None:
    """An array's files (metadata and chunks), byte for byte."""
    src = src_root / arr.path
    dst = dst_root / arr.path
    dst.parent.mkdir(parents=True, exist_ok=True)
    shutil.copytree(src, dst, dirs_exist_ok=True)  # a root array's directory is dst_root


def create_group(dst_root: Path, group: Any) -> None:
    import zarr

    zarr.open_group(store=str(dst_root), path=group.path, mode="a",
                    zarr_format=group.metadata.zarr_format, attributes=dict(group.attrs))


def _unit_label(region: tuple[slice, ...]) -> str:
    return "(" + ", ".join(f"{s.start}:{s.stop}" for s in region) + ")"


def _worst(x: np.ndarray, y: np.ndarray, region: tuple[slice, ...], bound: Bound,
           sentinels: tuple, masking: tuple) -> str:
    """The element that breaks the bound, by its index in the array, in the data's units."""
    i, why = worst_element(x, y, bound, sentinels, masking)
    local = np.unravel_index(i, x.shape)
    index = tuple(int(s.start + j) for s, j in zip(region, local, strict=True))
    return (f"element {index} = {x.reshape(-1)[i].item()!r} reads back as "
            f"{y.reshape(-1)[i].item()!r} ({why})")


def write_array(src_root: Path, out: Path, arr: Any, d: Decision, compression: Compression,
                progress: Any) -> str:
    """Create the re-encoded array and write it unit by unit (each checked against the bound,
    if any); returns the line that reports it."""
    path = "/" + arr.path
    new = create_like(out, arr, d.codecs, compression)
    dtype = np.dtype(arr.dtype)
    declared = store.sentinels_of(arr)
    sentinels, masking = declared.values, declared.masking
    filters, serializer, inline = split_codecs(d.codecs)
    enc = Encoding(d.why, tuple(filters), serializer, "", True)
    output = Output(arr.metadata.zarr_format, tuple(arr.chunks), arr.fill_value,
                    inline or compression.for_array(arr))
    runner = ChunkRunner(enc, dtype, output) if d.bound is not None else None
    regions = store.storage_units(arr)
    advance = progress(f"write {path}", len(regions))
    read = store.reader(arr)

    def one(region: tuple[slice, ...]) -> float:
        x = read(region)
        error = 0.0
        if runner is not None:
            try:
                y = runner.values(x)
            except ZdtError as exc:
                idx = getattr(exc, "index", None)
                at = ""
                if isinstance(idx, tuple) and len(idx) == x.ndim:
                    g = tuple(s.start + i for s, i in zip(region, idx, strict=True))
                    at = f"the value {x[idx].item()!r} at {g}: "
                raise CommandError(f"{path}: the storage unit {_unit_label(region)} cannot be "
                                   f"encoded: {at}{str(exc).splitlines()[0]}") from None
            error = error_of(x, y, d.bound, sentinels, masking)
            if not error <= d.bound.value:
                raise CommandError(f"{path}: the storage unit {_unit_label(region)} breaks the "
                                   f"{d.bound.describe()}: "
                                   f"{_worst(x, y, region, d.bound, sentinels, masking)}")
        try:
            new[region] = x
        except ZdtError as exc:
            raise CommandError(f"{path}: writing the storage unit {_unit_label(region)}: "
                               f"{str(exc).splitlines()[0]}") from None
        advance(1)
        return error

    with ThreadPoolExecutor(workers(), thread_name_prefix="zdt-convert") as pool:
        errors = list(pool.map(one, regions))
    worst = max(errors, default=0.0)
    checked = f", largest {d.bound.kind} error {fmt_error(worst)} (every value)" if runner else ""
    return f"{path}: {d.why}{checked}"


def _check_paths(src: Path, dst: Path) -> Path:
    partial = dst.with_name(dst.name + PARTIAL)
    if dst.exists():
        raise CommandError(f"{dst} exists; zdt convert writes a new store")
    if partial.exists():
        raise CommandError(f"{partial} exists: an earlier convert was stopped; remove it first")
    s, d = src.resolve(), dst.resolve()
    if d == s or d.is_relative_to(s):
        raise CommandError(f"{dst} is inside the source {src}: write the copy elsewhere")
    if s.is_relative_to(d):
        raise CommandError(f"the source {src} is inside {dst}: write the copy elsewhere")
    parent = d.parent
    if not parent.exists():
        raise CommandError(f"{dst.parent}: no such directory")
    if not parent.is_dir():
        raise CommandError(f"{dst.parent}: not a directory")
    # access() answers for the file system too (read-only mounts), and for root
    if not os.access(parent, os.W_OK | os.X_OK):
        raise CommandError(f"{dst.parent}: not writable")
    return partial


def run(args: argparse.Namespace) -> int:
    given = [args.codecs is not None, args.plan is not None]
    bounds_given = args.abs_error is not None or args.rel_error is not None or bool(args.bound)
    if sum(given) + bounds_given != 1:
        raise CommandError("give one of --codecs, --plan, or a bound (--abs-error, --rel-error, "
                           "--bound)")
    if args.plan is not None and args.compressor is not None:
        raise CommandError("--plan names its compressor; edit the plan to change it")
    codecs = parse_codecs(args.codecs) if args.codecs is not None else None
    plan = Plan.load(args.plan) if args.plan is not None else None
    compression = Compression.parse(plan.compressor if plan else args.compressor)
    selection = selection_of(args, required=False)
    src_path, inner = store.split_target(args.src)
    if inner:
        raise CommandError("zdt convert copies a whole store: give SRC without :ARRAY")
    node = store.open_node(src_path)
    dst = Path(args.dst)
    partial = _check_paths(src_path, dst)
    nodes = store.walk(node)
    arrays = [n for _, n in nodes if store.is_array(n)]
    with progress_bars(args.quiet) as progress:
        if plan is not None:
            by_path = plan.check_against(arrays, f"--plan {args.plan}")
            decisions = [by_path["/" + a.path] for a in arrays]
        elif codecs is not None:
            coords = coordinates(arrays)
            decisions = []
            for a in arrays:
                path = "/" + a.path
                why = selection.excluded(path) or (coords.get(path) and f"{coords[path]}: kept exact")
                if why or not store.is_numeric(a):
                    decisions.append(Decision(path, "copy", why or "not numeric: copied"))
                else:
                    decisions.append(Decision(path, "encode", "codecs from --codecs", codecs=codecs))
        else:
            decisions = decide(arrays, selection, compression, args.sample, progress)
        previous = signal.signal(signal.SIGTERM, _terminate)
        try:
            lines = _convert(src_path, partial, nodes, dict(zip(["/" + a.path for a in arrays],
                                                                decisions, strict=True)),
                             compression, progress)
        except BaseException as exc:
            if isinstance(exc, KeyboardInterrupt):
                from zdt.zarr_compat import stop_zarr_io

                # an interrupted write goes on in zarr's IO thread: stop it before cleaning up
                stop_zarr_io()
            shutil.rmtree(partial, ignore_errors=True)
            if isinstance(exc, PermissionError):
                raise CommandError(f"{dst}: {exc.strerror} ({exc.filename})") from None
            raise
        finally:
            signal.signal(signal.SIGTERM, previous)
    os.replace(partial, dst)
    if not args.quiet:
        for line in lines:
            _say(line)
    _say(f"wrote {dst}")
    return 0


def _say(line: str) -> None:
    try:
        print(line, flush=True)
    except BrokenPipeError:          # the reader went away: the copy is done all the same
        pass


def _terminate(signum: int, frame: Any) -> None:
    raise Terminated()


def _convert(src_root: Path, out: Path, nodes: list[tuple[str, Any]],
             decisions: dict[str, Decision], compression: Compression, progress: Any) -> list[str]:
    import zarr

    import zdt

    out.mkdir()
    lines = []
    with zdt.use_pipeline():
        for _, n in nodes:
            if not store.is_array(n):
                create_group(out, n)
                continue
            d = decisions["/" + n.path]
            if d.action == "copy" or n.size == 0:
                copy_array(src_root, out, n)
                lines.append(f"/{n.path}: copied ({d.why})" if d.why else f"/{n.path}: copied")
            else:
                lines.append(write_array(src_root, out, n, d, compression, progress))
    root = nodes[0][1]          # walk lists the root first
    if isinstance(root, zarr.Group) and root.metadata.consolidated_metadata is not None:
        zarr.consolidate_metadata(str(out))
    return lines


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "convert", help="write a re-encoded copy of a store",
        description="Writes a re-encoded copy of SRC to DST, storage unit by storage unit, in "
                    "bounded memory. With a bound each numeric array gets the encoding `zdt "
                    "suggest` finds (the fewest bytes on disk that keep it; coordinates stay "
                    "exact), and every unit written is checked against the bound. --plan applies "
                    "a plan `zdt suggest --json` wrote, as written. Groups, attributes and arrays "
                    "left alone are copied as they are. DST appears only when the copy is "
                    "complete; the source is only read.")
    p.add_argument("src", metavar="SRC", help="a zarr store")
    p.add_argument("dst", metavar="DST", help="the new store (must not exist)")
    p.add_argument("--codecs", metavar="JSON", help="codecs for every numeric array")
    p.add_argument("--plan", metavar="FILE", help="apply the plan `zdt suggest --json` wrote")
    add_selection_args(p)
    p.set_defaults(run=run)
