"""``zdt convert SRC DST``: a re-encoded copy of a store, array by array, storage unit by unit.

What to do with each array comes from ``--plan FILE`` (``zdt suggest --json``, applied as
written), ``--codecs JSON`` (the same codecs for every numeric array), or a bound (decided as
``zdt suggest`` decides: zdt.command.decide). Arrays that are not re-encoded (coordinates,
strings, excluded ones, arrays no encoding shrinks) are copied byte for byte; groups,
attributes, dimension names, fill values and consolidated metadata are carried over.

Every storage unit written with a bound is checked first: its values go through the
encoding's stages and back in memory and the error is computed exactly; a unit that breaks
the bound stops the run, naming the element and its value in the data's units.

SRC and DST are local directories, .zip files or URLs (zdt.command.location). A DST that
exists is complete (zdt.command.destination: staged and renamed locally, a marker object on
object stores; Ctrl-C, SIGTERM and errors remove what was written). The source is only read.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import warnings
from concurrent.futures import ThreadPoolExecutor
from collections.abc import Callable
from typing import Any

import numpy as np

from zdt.command import store
from zdt.command.bounds import Bound, error_of, worst_element
from zdt.command.candidates import Encoding
from zdt.command.compressors import Compression
from zdt.command.decide import decide, fmt_error, workers
from zdt.command.destination import Destination, copy_keys, same_keys
from zdt.command.errors import CommandError, Kept
from zdt.command.location import Location, check_options_used, parse_storage_options
from zdt.command.measure import ChunkRunner, Output
from zdt.command.options import (add_scheduler_arg, add_selection_args, add_storage_args, progress_bars,
                                 selection_of)
from zdt.command.plan import Decision, Plan, coordinates
from zdt.errors import ZdtError

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


def create_like(root: Any, arr: Any, codecs: list[dict], compression: Compression) -> Any:
    """An empty array in the store `root` like `arr` (shape, chunks, shards, fill value, attributes,
    dimension names, format), with `codecs` and the compressors `compression` gives it."""
    import zarr

    meta = arr.metadata
    filters, serializer, inline = split_codecs(codecs)
    compressors = inline or compression.for_array(arr)
    kwargs: dict[str, Any] = dict(
        store=root, name=arr.path or None, shape=arr.shape, chunks=arr.chunks,
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


def copy_array(dst_root: Any, arr: Any) -> None:
    """An array's objects (metadata and chunks), byte for byte, into the store dst_root."""
    copy_keys(arr.store_path.store, arr.store_path.path, dst_root, arr.path)


def create_group(dst_root: Any, group: Any) -> None:
    import zarr

    zarr.open_group(store=dst_root, path=group.path, mode="a",
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


def _runner(arr: Any, d: Decision, compression: Compression) -> ChunkRunner:
    """The decision's encoding on chunks in memory (what the written array will hold)."""
    filters, serializer, inline = split_codecs(d.codecs)
    enc = Encoding(d.why, tuple(filters), serializer, "", True)
    output = Output(arr.metadata.zarr_format, tuple(arr.chunks), arr.fill_value,
                    inline or compression.for_array(arr))
    return ChunkRunner(enc, np.dtype(arr.dtype), output)


class UnitWriter:
    """Writes storage units of one array: each read from the source, checked against the bound
    (if any), written to `new`, then recorded with `mark(path, unit)`. Built in this process, or
    in a dask worker from a zdt.command.cluster.UnitJob."""

    def __init__(self, arr: Any, new: Any, d: Decision, compression: Compression,
                 mark: Callable[[str, str], None]) -> None:
        self.path = "/" + arr.path
        self.read = store.reader(arr)
        self.new = new
        self.bound = d.bound
        declared = store.sentinels_of(arr)
        self.sentinels, self.masking = declared.values, declared.masking
        self.runner = _runner(arr, d, compression) if d.bound is not None else None
        self.mark = mark

    def reopen(self, out: Any) -> None:
        """Write into the store `out` from now on (an Icechunk session after a checkpoint)."""
        import zarr

        self.new = zarr.open_array(store=out, path=self.path.lstrip("/"), mode="r+")

    def write(self, i: int, region: tuple[slice, ...]) -> float:
        """Unit i (at `region`); returns its largest error (0 without a bound)."""
        path, bound = self.path, self.bound
        x = self.read(region)
        error = 0.0
        if self.runner is not None:
            try:
                y = self.runner.values(x)
            except ZdtError as exc:
                idx = getattr(exc, "index", None)
                at = ""
                if isinstance(idx, tuple) and len(idx) == x.ndim:
                    g = tuple(s.start + k for s, k in zip(region, idx, strict=True))
                    at = f"the value {x[idx].item()!r} at {g}: "
                raise CommandError(f"{path}: the storage unit {_unit_label(region)} cannot be "
                                   f"encoded: {at}{str(exc).splitlines()[0]}") from None
            error = error_of(x, y, bound, self.sentinels, self.masking)
            if not error <= bound.value:
                raise CommandError(f"{path}: the storage unit {_unit_label(region)} breaks the "
                                   f"{bound.describe()}: "
                                   f"{_worst(x, y, region, bound, self.sentinels, self.masking)}")
        try:
            self.new[region] = x
        except ZdtError as exc:
            raise CommandError(f"{path}: writing the storage unit {_unit_label(region)}: "
                               f"{str(exc).splitlines()[0]}") from None
        self.mark(path, str(i))
        _kill_point("unit", i)
        return error


def run_windowed(todo: list, submit: Callable[[Any], Any], settle: Callable[[Any, Any], list[float]],
                 dest: Destination, window: int, before: Callable[[], None] | None = None,
                 after: Callable[[], None] | None = None,
                 cancel: Callable[[list], Any] | None = None) -> list[float]:
    """Every item of `todo` started with `submit(item)` (a future), at most `window` in flight,
    each settled with `settle(item, future)` (its errors) in the order started. When the
    destination's checkpoint is due (before a unit is started, and after the last) no unit is
    started until those in flight are settled; then `before()`, dest.checkpoint(), `after()`
    (the store written is a new one)."""
    from collections import deque

    errors: list[float] = []
    pending: deque = deque()
    try:
        for item in todo:
            if dest.checkpoint_due():
                while pending:
                    errors += settle(*pending.popleft())
                if before is not None:
                    before()
                dest.checkpoint()
                if after is not None:
                    after()
            pending.append((item, submit(item)))
            while len(pending) >= window:
                errors += settle(*pending.popleft())
        while pending:
            errors += settle(*pending.popleft())
        if dest.checkpoint_due():           # the array's last units
            if before is not None:
                before()
            dest.checkpoint()
            if after is not None:
                after()
    except BaseException:
        if cancel is not None:
            cancel([f for _, f in pending])
        raise
    return errors


def write_array(dest: Destination, arr: Any, d: Decision, compression: Compression,
                progress: Any, cluster: Any = None) -> str:
    """Create the re-encoded array (or, resuming, open it) and write it unit by unit, on this
    machine's threads or on `cluster` (zdt.command.cluster.Cluster); units an earlier run
    wrote are skipped (verify_done checked them). Returns the line that reports it."""
    import zarr

    path = "/" + arr.path
    done = dest.done(path)
    new = None
    if dest.resume:             # the stopped run may have created it before writing a unit
        try:
            new = zarr.open_array(store=dest.store, path=arr.path, mode="r+")
        except (FileNotFoundError, KeyError, ValueError):
            new = None
    if new is None:
        new = create_like(dest.store, arr, d.codecs, compression)
    regions = store.storage_units(arr)
    todo = [(i, r) for i, r in enumerate(regions) if str(i) not in done]
    advance = progress(f"write {path}", len(regions))
    advance(len(regions) - len(todo))
    if cluster is not None:
        errors = cluster.write_units(dest, arr, d, compression, todo, advance)
    else:
        writer = UnitWriter(arr, new, d, compression, dest.mark)

        def one(item: tuple[int, tuple[slice, ...]]) -> float:
            error = writer.write(*item)
            advance(1)
            return error

        with ThreadPoolExecutor(workers(), thread_name_prefix="zdt-convert") as pool:
            errors = run_windowed(todo, lambda item: pool.submit(one, item),
                                  lambda item, future: [future.result()], dest, 2 * workers(),
                                  after=lambda: writer.reopen(dest.store),
                                  cancel=lambda futures: [f.cancel() for f in futures])
    worst = max(errors, default=0.0)
    checked = f", largest {d.bound.kind} error {fmt_error(worst)} (every value)" if d.bound else ""
    if done and d.bound:
        checked += f" ({len(done)} units written by the stopped run, checked again)"
    return f"{path}: {d.why}{checked}"


def verify_done(dest: Destination, nodes: list[tuple[str, Any]], decisions: dict[str, Decision],
                compression: Compression) -> None:
    """Resuming: every unit the stopped run recorded as written must hold what the source
    encodes to now (decoded values compared bit for bit; copied arrays byte for byte)."""
    import zarr

    for _, arr in nodes:
        if not store.is_array(arr):
            continue
        path = "/" + arr.path
        done = dest.done(path)
        if not done:
            continue
        d = decisions[path]
        stale = f"remove {dest.partial_name()} and convert again"
        if d.action == "copy" or arr.size == 0:
            if not same_keys(arr.store_path.store, arr.store_path.path, dest.store, arr.path):
                raise Mismatch(f"--resume: {path} in {dest.partial_name()} is not the source's copy "
                               f"(the source changed since, or the copy is damaged): {stale}")
            continue
        written = zarr.open_array(store=dest.store, path=arr.path, mode="r")
        runner = _runner(arr, d, compression)
        regions = store.storage_units(arr)
        read = store.reader(arr)
        for i in sorted(done, key=lambda k: int(k) if k.isdigit() else -1):
            if not i.isdigit() or int(i) >= len(regions):
                raise Mismatch(f"--resume: {dest.partial_name()} records unit {i} of {path}, which "
                               f"has {len(regions)}: {stale}")
            region = regions[int(i)]
            want = np.ascontiguousarray(runner.values(read(region)))
            got = np.ascontiguousarray(written[region])
            if want.dtype != got.dtype or want.tobytes() != got.tobytes():
                raise Mismatch(f"--resume: {path} unit {_unit_label(region)} in {dest.partial_name()} "
                               f"does not hold what the source encodes to (the source changed since, "
                               f"or the copy is damaged): {stale}")


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
    options = parse_storage_options(args.storage_options)
    src, inner = Location.parse(args.src, options, args.branch).split_array()
    if inner:
        raise CommandError("zdt convert copies a whole store: give SRC without :ARRAY")
    node = store.open_node(src)
    dest = Destination(Location.parse(args.dst, options, args.branch), resume=args.resume)
    check_options_used(options, src, dest.loc)
    dest.check(src)
    nodes = store.walk(node)
    arrays = [n for _, n in nodes if store.is_array(n)]
    record = {"source": src.text, "fingerprint": store.fingerprint(nodes)}
    recorded_plan = None
    if args.resume:
        dest.begin(record)
        earlier = dest.record_of()
        if earlier is None:         # nothing recorded, nothing to check: from the start
            if not args.quiet:
                _say(f"{dest.partial_name()}: the stopped conversion recorded nothing; converting "
                     f"from the start")
        elif earlier.get("fingerprint") != record["fingerprint"]:
            raise CommandError(f"--resume: the source {src.text} is not the store the stopped "
                               f"conversion read ({earlier.get('source')}, or it changed since): "
                               f"remove {dest.partial_name()} and convert again")
        if earlier is not None and earlier.get("plan") is not None:
            recorded_plan = Plan.from_json(earlier["plan"], f"--resume: {dest.partial_name()}")
            compression = Compression.parse(recorded_plan.compressor)
    cluster = None
    previous = signal.signal(signal.SIGTERM, _terminate)
    try:
        if args.scheduler:
            from zdt.command.cluster import Cluster

            cluster = Cluster(args.scheduler)
            cluster.source = src
        with progress_bars(args.quiet) as progress:
            if not args.resume:
                dest.begin(record)
            _kill_point("survey")
            if recorded_plan is not None:
                by_path = recorded_plan.check_against(arrays, f"--resume: {dest.partial_name()}")
                decisions = [by_path["/" + a.path] for a in arrays]
            elif plan is not None:
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
                decisions = decide(arrays, selection, compression, args.sample, progress, cluster)
            the_plan = Plan(src.text, str(compression), decisions)
            if args.resume:
                # a copy that does not match is refused before anything in it changes
                verify_done(dest, nodes, dict(zip(["/" + a.path for a in arrays], decisions, strict=True)),
                            compression)
                dest.remove_torn_files()
            if recorded_plan is None:
                dest.write_record({**record, "plan": the_plan.to_json()})

            lines = _convert(dest, nodes, dict(zip(["/" + a.path for a in arrays], decisions, strict=True)),
                             compression, progress, cluster)
            _kill_point("finish")
            dest.finish(f"zdt convert from {src.describe()}\n\n" + the_plan.dumps())
    except BaseException as exc:
        if isinstance(exc, KeyboardInterrupt):
            from zdt.zarr_compat import stop_zarr_io

            # an interrupted write goes on in zarr's IO thread: stop it before cleaning up
            stop_zarr_io()
        if not isinstance(exc, Kept):               # e.g. a resumed copy that does not match
            dest.abandon()
        if isinstance(exc, PermissionError):
            raise CommandError(f"{args.dst}: {exc.strerror} ({exc.filename})") from None
        if isinstance(exc, (OSError, ConnectionError)) and not dest.loc.is_local:
            raise CommandError(f"{args.dst}: writing failed ({exc.__class__.__name__}: "
                               f"{str(exc).splitlines()[0] if str(exc) else ''})") from None
        raise
    finally:
        signal.signal(signal.SIGTERM, previous)
        if cluster is not None:
            cluster.close()
    if not args.quiet:
        for line in lines:
            _say(line)
    _say(f"wrote {args.dst}")
    return 0


class Mismatch(Kept):
    """A unit an earlier run wrote does not hold what the source encodes to now."""


def _kill_point(where: str, unit: int | None = None) -> None:
    """Testing hook (tests/test_command_stores.py): ZDT_CONVERT_KILL_AT=survey|unit:N|last|finish
    sends this process SIGKILL there, as a preempted node would be stopped."""
    at = os.environ.get("ZDT_CONVERT_KILL_AT")
    if at and at == (where if unit is None else f"{where}:{unit}"):
        os.kill(os.getpid(), signal.SIGKILL)


def _say(line: str) -> None:
    try:
        print(line, flush=True)
    except BrokenPipeError:          # the reader went away: the copy is done all the same
        pass


def _terminate(signum: int, frame: Any) -> None:
    raise Terminated()


def _convert(dest: Destination, nodes: list[tuple[str, Any]], decisions: dict[str, Decision],
             compression: Compression, progress: Any, cluster: Any = None) -> list[str]:
    import zarr

    import zdt

    lines = []
    with zdt.use_pipeline():
        for _, n in nodes:
            if not store.is_array(n):
                create_group(dest.store, n)
                continue
            path = "/" + n.path
            d = decisions[path]
            if d.action == "copy" or n.size == 0:
                if "copied" not in dest.done(path):
                    copy_array(dest.store, n)
                    dest.mark(path, "copied")
                    if dest.checkpoint_due():
                        dest.checkpoint()
                lines.append(f"{path}: copied ({d.why})" if d.why else f"{path}: copied")
            else:
                lines.append(write_array(dest, n, d, compression, progress, cluster))
    _kill_point("last")
    root = nodes[0][1]          # walk lists the root first
    if isinstance(root, zarr.Group) and root.metadata.consolidated_metadata is not None:
        with warnings.catch_warnings():
            # zarr warns that v3 consolidated metadata is not in the spec: the source had it
            warnings.simplefilter("ignore")
            zarr.consolidate_metadata(dest.store)
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
    p.add_argument("src", metavar="SRC", help="a zarr store: a directory, a .zip file or a URL "
                   "(s3://, gs://, az://, http(s)://, file://)")
    p.add_argument("dst", metavar="DST", help="the new store (must not exist, or be an empty "
                   "prefix of an object store)")
    add_storage_args(p)
    p.add_argument("--codecs", metavar="JSON", help="codecs for every numeric array")
    p.add_argument("--plan", metavar="FILE", help="apply the plan `zdt suggest --json` wrote")
    add_scheduler_arg(p, "the survey, the measurement and the writes")
    p.add_argument("--resume", action="store_true",
                   help="finish a conversion that was stopped (killed, a lost node): the units it "
                        "wrote are checked against the source and kept, the rest written, with the "
                        "plan it recorded; refused if the source changed since (into Icechunk: "
                        "from the scratch branch's last checkpoint, refused if the branch moved)")
    add_selection_args(p)
    p.set_defaults(run=run)
