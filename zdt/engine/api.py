"""The job as a Python library: ``zdt.suggest``, ``zdt.convert`` and ``zdt.encoding``.

The ``zdt`` command is a thin layer over these three: it parses options into their arguments
and prints what they return. A source or destination is whatever zarr takes: a path, a URL
(``s3://``, ``gs://``, ``az://``, ``http(s)://``, ``icechunk://``, with ``storage_options``), a
``zarr.abc.store.Store`` (an Icechunk session's store included), or a ``zarr.Group``.

Errors are `zdt.errors.JobError`s whose message is one line naming what failed and where.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from zdt.engine.compressors import Compression
from zdt.engine.plan import Plan
from zdt.engine.progress import progress_for
from zdt.engine.readers import Readers
from zdt.engine.selection import check_sample, selection_of
from zdt.errors import InputError, UsageError

if TYPE_CHECKING:
    from zdt.engine.decide import Progress


def _no_progress(label: str, total: int) -> Callable[[int], None]:
    return lambda n: None


def check(source: Any, *, storage_options: dict | None = None, branch: str = "main",
          progress: Progress | None = None) -> list:
    """Every chunk of every array of `source` read and decoded (what ``zdt inspect --check``
    does).

    Returns
    -------
    list of zdt.engine.damage.Damage
        The chunks that do not decode (array, key, reason), in array and key order; empty when
        every chunk decodes. A chunk the store cannot give raises StorageError.
    """
    from zdt.engine import sources
    from zdt.engine.damage import check_array
    from zdt.stores import nodes

    _, node, _ = sources.open_source(source, storage_options, branch)
    return [d for _, arr in nodes.walk(node) if nodes.is_array(arr)
            for d in check_array(arr, progress or _no_progress)]


def suggest(source: Any, *, abs_error: float | None = None, rel_error: float | None = None,
            bounds: Mapping[str, Any] | None = None, include: Sequence[str] | None = None,
            exclude: Sequence[str] | None = None, compressor: Any = "auto",
            readers: str | Sequence[str] | None = None, sample: int | None = None,
            scheduler: str | None = None, storage_options: dict | None = None,
            branch: str = "main", on_damaged_chunk: str = "stop", force: bool = False,
            effort: str = "default", progress: Progress | bool | None = None) -> Plan:
    """For every array of `source`, the encoding that writes the fewest bytes on disk and keeps
    its bound, measured on the data; arrays that are not data (coordinates, strings, integers
    under a relative bound) or that no encoding shrinks are copied.

    Parameters
    ----------
    source
        A store or a group or array in it (a path, a URL, ``"STORE:ARRAY"``, a zarr Store, a
        ``zarr.Group``); or an xarray Dataset (NumPy- or dask-backed: ``xr.open_zarr(...)``) or
        a netCDF-4 / HDF5 / netCDF-3 file (``"FILE.nc"``, ``"FILE.nc:VARIABLE"``), read as the
        store a plain ``to_zarr`` of it would write (CF-encoded as xarray writes it).
    abs_error, rel_error
        The bound of every numeric array: ``|decoded - x| <= abs_error``, or
        ``|decoded - x| <= rel_error * |x|``.
    bounds
        Per-array bounds by path or glob, ``{"/temperature": "abs:0.05"}``; a bound given here
        encodes a coordinate too.
    include, exclude
        Globs of the arrays to consider / to copy as they are.
    compressor
        ``"auto"`` (the default: the serializer, bytes or pcodec, and the compressor are chosen
        per array with the rest of the encoding), or the last stage fixed: ``"keep"`` (each
        array's own), ``"none"``, ``"zstd[:LEVEL]"``, ``"blosc[-CNAME][:LEVEL]"``,
        ``"gzip[:LEVEL]"`` or zarr v3 codec JSON.
    readers
        Who will read the output: ``"zarr-python"`` (the default: zarr-python >= 3.2 with
        numcodecs and pcodec), ``"zdt"``, ``"zarrs"``, ``"tensorstore"``, a list of them or
        ``"any"``: the encoding uses only codecs every one decodes (for readers that decode
        no lossy filter, the values are rounded in memory and stored as plain numbers).
    sample
        Measure sizes on this many storage units spread over each array (the range and the
        specials always come from all of it).
    scheduler
        A dask scheduler's address, or ``"local:N"``: the passes run there.
    storage_options, branch
        For URLs: fsspec's options (as zarr and xarray take them); an Icechunk branch.
    on_damaged_chunk
        ``"stop"`` (the default): a source chunk that does not decode is an InputError naming
        it; ``"fill"``: it reads as the array's fill value, as ``convert(...,
        on_damaged_chunk="fill")`` writes it, and ``plan.damaged`` lists every one.
    force
        Use bounds that look like a mistake: an absolute bound above a tenth of an array's
        range (in other units?), a relative bound of 1 or more. Without it they are a
        UsageError naming the array, its range and units.
    effort
        zdt.predict's ``effort`` in the encodings measured: ``"fast"``, ``"default"`` (the
        default) or ``"max"`` (every predictor tried whole, the slowest).
    progress
        None (the default): a bar per pass on a terminal, as the command shows them; False:
        none; or ``progress(label, total)`` -> ``advance(n)``, called once per pass.

    Returns
    -------
    Plan
        ``print(plan)`` is the report ``zdt suggest`` prints, ``plan.dumps()`` the JSON
        ``zdt suggest --json`` writes and `convert` applies.
    """
    from zdt.engine.cluster import cluster_for
    from zdt.engine.decide import decide
    from zdt.engine.sources import open_source
    from zdt.stores.nodes import is_array, walk

    selection = selection_of(abs_error, rel_error, bounds, include, exclude, force=force,
                             effort=effort)
    compression = Compression.parse(compressor)
    who = Readers.parse(readers)
    check_sample(sample)
    loc, node, text = open_source(source, storage_options, branch)
    arrays = [n for _, n in walk(node) if is_array(n)]
    if is_array(node):
        from zdt.engine.arrays import is_numeric
        from zdt.stores.nodes import array_type_name

        if node.size == 0:
            raise InputError(f"{text}: the array has no elements: nothing to suggest")
        if node.ndim == 0:
            raise InputError(f"{text}: a 0-d array (one value): nothing to suggest")
        if not is_numeric(node):
            raise InputError(f"{text}: suggesting needs integer or float data; this array is "
                             f"{array_type_name(node)}")
    elif not arrays:
        raise InputError(f"{text}: no arrays")
    salvage = _salvage(on_damaged_chunk, scheduler)
    _check_dataset_options(text, node, scheduler, salvage)
    with cluster_for(scheduler, loc) as cluster, progress_for(progress) as bars:
        decisions = decide(arrays, selection, compression, sample, bars, cluster, who, salvage)
    plan = Plan(loc.text, str(compression), decisions, str(who))
    if salvage is not None:
        plan.damaged = salvage.found()
    return plan


def _check_dataset_options(text: str, node: Any, scheduler: str | None, salvage: Any) -> None:
    """A Dataset or netCDF source (zdt.engine.dataset_source) is read on this machine, and its
    values come through xarray, not as zarr chunks that could be damaged."""
    if not (hasattr(node, "zdt_nodes") or getattr(node, "zdt_view", False)):
        return
    if scheduler is not None:
        raise UsageError(f"{text}: a Dataset or netCDF source is read on this machine's threads; "
                         "scheduler= is for zarr stores")
    if salvage is not None:
        raise UsageError(f"{text}: on_damaged_chunk='fill' is for zarr stores (a Dataset or "
                         "netCDF source has no zarr chunks to fill)")


def _salvage(on_damaged_chunk: str, scheduler: str | None) -> Any:
    """A Salvage for on_damaged_chunk="fill" (damaged chunks read as the fill value), else None."""
    if on_damaged_chunk not in ("stop", "fill"):
        raise UsageError(f"on_damaged_chunk={on_damaged_chunk!r}: stop or fill")
    if on_damaged_chunk == "stop":
        return None
    if scheduler is not None:
        raise UsageError("on_damaged_chunk='fill' runs on this machine's threads; it does not "
                         "run on a dask cluster (scheduler=) yet")
    from zdt.engine.damage import Salvage

    return Salvage()


@dataclass
class Report:
    """What `convert` did: per array, the encoding, its bytes before and after, the largest
    error. ``str(report)`` is what ``zdt convert`` prints."""

    source: str
    destination: str
    plan: Plan
    arrays: list = field(default_factory=list)          # zdt.engine.writer.ArrayReport
    notes: list = field(default_factory=list)           # what the run said on the way
    # --on-damaged-chunk fill: the source's chunks that did not decode, written as the fill
    # value (zdt.engine.damage.Damage: array, key, reason)
    damaged: list = field(default_factory=list)

    @property
    def bytes_before(self) -> int:
        return sum(a.bytes_before for a in self.arrays)

    @property
    def bytes_after(self) -> int:
        return sum(a.bytes_after for a in self.arrays)

    def readers_need(self) -> list[str]:
        """What each reader named must install to read the encoded arrays (docs/readers.md)."""
        from zdt.engine.readers import Readers, what_reads

        encoded = [d for d in self.plan.decisions if d.action == "encode" and d.codecs]
        lines = []
        for name in Readers.parse(self.plan.readers).names:
            needs = {}
            for d in encoded:
                how = what_reads(d.codecs, d.data_type).get(name, "")
                if how.startswith("pip install "):
                    needs.update(dict.fromkeys(how.split()[2:]))
            if needs:
                lines.append(f"to read it with {name}: pip install {' '.join(needs)}")
        return lines

    def __getitem__(self, path: str) -> Any:
        for a in self.arrays:
            if a.path == "/" + path.strip("/"):
                return a
        raise KeyError(path)

    def __str__(self) -> str:
        from zdt.engine.arrays import fmt_bytes

        before, after = self.bytes_before, self.bytes_after
        change = f" ({(after - before) / before:+.1%})" if before else ""
        filled = [f"{d.array} chunk {d.key}: damaged, written as the fill value ({d.reason})"
                  for d in self.damaged]
        return "\n".join([*self.notes, *(a.line() for a in self.arrays), *filled,
                          *self.readers_need(),
                          f"wrote {self.destination}: {fmt_bytes(after)} of chunks, "
                          f"{fmt_bytes(before)} before{change}"
                          + (f"; {len(self.damaged)} damaged source chunk"
                             f"{'s' * (len(self.damaged) != 1)} written as the fill value"
                             if self.damaged else "")])


def convert(source: Any, dest: Any, plan: Plan | Mapping | str | None = None, *,
            codecs: Any = None, abs_error: float | None = None, rel_error: float | None = None,
            bounds: Mapping[str, Any] | None = None, include: Sequence[str] | None = None,
            exclude: Sequence[str] | None = None, compressor: Any = None,
            readers: str | Sequence[str] | None = None, sample: int | None = None,
            resume: bool = False, scheduler: str | None = None,
            storage_options: dict | None = None, branch: str = "main",
            on_damaged_chunk: str = "stop", report: Any = None, force: bool = False,
            effort: str = "default", progress: Progress | bool | None = None) -> Report:
    """A re-encoded copy of the store `source` at `dest`, storage unit by storage unit in
    bounded memory; every unit written is checked against its bound. `source` may also be an
    xarray Dataset or a netCDF file (see `suggest`): `dest` is then a zarr store holding what a
    plain ``to_zarr`` of it would, re-encoded.

    With `report` (a file name), the copy is then compared with its source (zdt.compare, the
    arrays that were encoded, each against its bound) and the page of figures and pictures is
    written there, with the decision's measurements (docs/compare.md; needs matplotlib).

    A source chunk that does not decode stops the run (InputError naming the array, the chunk
    and the reason), unless ``on_damaged_chunk="fill"``: then its elements are written as the
    array's fill value, the array's attributes list the damaged chunks
    (``zdt_damaged_chunks``), and so does the report (``Report.damaged``). A chunk the store
    cannot give stops the run either way (StorageError).

    What to do with each array comes from `plan` (a `Plan`, its JSON, or the path of a file
    ``zdt suggest --json`` wrote: applied as written), `codecs` (one codec chain for every
    numeric array), or a bound (decided as `suggest` decides; the same arguments). `dest`
    appears only when the copy is complete (a directory or zip file is staged and renamed; an
    object store or a store object is written after a marker, removed last; Icechunk gets one
    commit); an error or interrupt removes what was written. After a kill, the same call with
    ``resume=True`` finishes it, byte-identical to an uninterrupted run. The other arguments
    are `suggest`'s.

    Returns
    -------
    Report
        Per array: the encoding, its bytes before and after, the largest error.
    """
    from zdt.stores import destination_at
    from zdt.stores.location import Location, check_options_used

    bounds_given = abs_error is not None or rel_error is not None or bool(bounds)
    if (codecs is not None) + (plan is not None) + bounds_given != 1:
        raise UsageError("give one of codecs=, plan=, or a bound (abs_error=, rel_error=, bounds=)",
                         command="give one of --codecs, --plan, or a bound (--abs-error, "
                                 "--rel-error, --bound)")
    if plan is not None and (compressor is not None or readers is not None):
        raise UsageError("a plan names its compressors and readers; edit the plan to change them")
    check_sample(sample)
    if report is not None:
        from zdt.engine.report import require_matplotlib

        require_matplotlib()                # (before the conversion, not after)
    salvage = _salvage(on_damaged_chunk, scheduler)
    from zdt.engine.writer import parse_codecs

    chain = parse_codecs(codecs, "codecs=") if codecs is not None else None
    given_plan = _plan_of(plan) if plan is not None else None
    compression = Compression.parse(given_plan.compressor if given_plan else compressor)
    who = Readers.parse(given_plan.readers if given_plan else readers)
    selection = selection_of(abs_error, rel_error, bounds, include, exclude, required=False,
                             force=force, effort=effort)
    from zdt.engine.sources import dataset_source_of
    from zdt.stores.nodes import require_zarr

    require_zarr()
    found = dataset_source_of(source, storage_options)
    root = None
    if found is not None:           # a Dataset or a netCDF file: the store to_zarr would write
        dataset, inner = found
        src, root = dataset.location, dataset.root
        _check_dataset_options(dataset.text, root, scheduler, salvage)
    else:
        src, inner = Location.of(source, storage_options, branch, check_options=False)
    if inner:
        raise UsageError("convert copies a whole store: give the source without :ARRAY (or the "
                         "group's store)")
    dst, dst_inner = Location.of(dest, storage_options, branch, check_options=False)
    if dst_inner:
        raise UsageError("convert writes a whole store: give the destination without :ARRAY")
    check_options_used(storage_options or {}, src, dst)
    from zdt.engine.conversion import Conversion

    with progress_for(progress) as bars:
        job = Conversion(src, destination_at(dst, resume), compression, who, bars, salvage, root)
        done, reports = job.run(given_plan, chain, selection, sample, scheduler)
    if report is not None:
        from zdt.engine.compare import MAX_SLICES, compare_and_report

        encoded = {d.path: d for d in done.decisions if d.action == "encode"}
        compare_and_report(source, dest, list(encoded), lambda path: encoded[path].bound, MAX_SLICES,
                           report, {p: d.measured for p, d in encoded.items()}, storage_options,
                           branch, progress)
    return Report(src.describe(), dst.text, done, reports, job.notes,
                  salvage.found() if salvage is not None else [])


def _plan_of(plan: Plan | Mapping | str | Any) -> Plan:
    if isinstance(plan, Plan):
        return plan
    if isinstance(plan, Mapping):
        return Plan.from_json(dict(plan), "plan")
    return Plan.load(plan)


from zdt.engine.dataset import encoding  # noqa: E402  (the third of the three; its own module)
