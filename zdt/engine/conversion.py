"""One conversion from its beginning to its end: `Conversion` runs the steps of ``zdt.convert``
in the order they happen, and its docstring says what each leaves on the destination."""

from __future__ import annotations

import signal
import threading
import warnings
from typing import Any

import numpy as np

from zdt.engine import arrays, damage
from zdt.engine.cluster import cluster_for
from zdt.engine.compressors import Compression
from zdt.engine.decide import Progress
from zdt.engine.decide import decide as decide_arrays
from zdt.engine.plan import Decision, Plan
from zdt.engine.readers import Readers
from zdt.engine.selection import Selection, coordinates
from zdt.engine.writer import (ArrayReport, kill_point, open_written, runner_for, unit_label,
                               write_array)
from zdt.errors import InputError, JobError, KeptError, StorageError, Terminated, UsageError
from zdt.stores.destination import Destination, copy_keys
from zdt.stores.location import Location
from zdt.stores.nodes import fingerprint, is_array, open_node, stored_chunk_bytes, walk


class Mismatch(KeptError):
    """A unit an earlier run wrote does not hold what the source encodes to now."""


class Conversion:
    """One run of ``zdt.convert``: the source, the destination (`Destination`, one class per
    kind of store: zdt.stores.destination) and the steps between them. `run` takes them in
    this order; a destination's kind only changes how each is done, through its methods.

    1. check (the constructor): the source's nodes are walked and a digest of their metadata
       taken; the destination refuses what it cannot be (not empty, inside the source or the
       source inside it, not writable; resuming: no partial copy there). Nothing is written.
    2. begin: the partial copy exists and holds its record (the source and the digest): the
       directory ``DST.zdt-partial`` with ``zdt-partial.json`` in it (a directory or a zip
       file), the marker object ``zdt-partial.json`` at DST (an object store, a store
       object), the scratch branch ``BRANCH.zdt-partial`` (Icechunk: the record goes with
       its next commit). DST itself is no zarr store.
       Resuming, `reopen` instead: the partial copy a stopped run left is opened and its
       record read; another digest is refused, a recorded plan is the plan. This step runs
       before the others' error handling: a partial copy it refuses stays as it is.
    3. decide: the plan (given, one chain for every numeric array, or decided as ``suggest``
       decides). Nothing is written.
    4. verify (resuming only): every unit the record lists holds what the source encodes to
       now (decoded values bit for bit; copied arrays byte for byte), else a `Mismatch`;
       then what a kill left half-written (zarr's temp files) is removed.
    5. record: the plan joins the record (a resumed run keeps the one it found).
    6. write: every group and array, parents first, as the plan says; each storage unit is
       checked against its bound, written, and then recorded as written (an empty object
       ``zdt-partial.d/<array>/<unit>``; Icechunk >= 2: the commit of the next checkpoint,
       every CHECKPOINT_SECONDS, which amends the scratch branch's one commit; Icechunk 1
       records nothing before the end). Consolidated metadata last, where the source had it.
    7. finish: the copy becomes DST and drops its record: the directory is renamed into place
       (a zip file is packed first); in an object store the root's documents go into place
       and then the marker is removed, the commit point; Icechunk's BRANCH is moved to the
       scratch branch's one commit (only if it has not moved) and the scratch branch deleted.
       Only now is DST a zarr store.

    `abandon`: an error in steps 2 to 7 removes everything this conversion wrote (the staging
    directory and packed zip file; every object of the store, which was empty before; the
    scratch branch), except after a `KeptError` (a `Mismatch`, or an Icechunk branch that
    moved): that partial copy stays, for the user to look at. Ctrl-C, SIGTERM and SIGKILL leave
    the partial copy with its record (the units recorded as written are whole: each is
    recorded after it is written); ``resume=True`` goes on from step 2, with the same request
    (the record holds it: bounds, names, readers, compressor, codecs or plan, sample; another
    is refused, naming the difference).
    ``ZDT_CONVERT_KILL_AT`` (survey, unit:N, last, finish) kills the process at those
    points (zdt.engine.writer.kill_point).
    """

    def __init__(self, src: Location, dest: Destination, compression: Compression,
                 readers: Readers, progress: Progress, salvage: Any = None,
                 root: Any = None) -> None:
        self.src, self.dest = src, dest
        self.compression, self.readers, self.progress = compression, readers, progress
        self.salvage = salvage          # zdt.engine.damage.Salvage: --on-damaged-chunk fill
        # `root`: a Dataset or netCDF file read as a store (zdt.engine.dataset_source)
        self.nodes = walk(root if root is not None else open_node(src))
        dest.check(src)
        self.arrays = [n for _, n in self.nodes if is_array(n)]
        self.record: dict[str, Any] = {"source": src.text, "fingerprint": fingerprint(self.nodes)}
        self.notes: list[str] = []
        self.begun = False              # the partial copy exists (begun or reopened)
        self.decisions: dict[str, Decision] = {}        # by path, once decided

    def run(self, plan: Plan | None, chain: list | None, selection: Selection,
            sample: int | None, scheduler: str | None) -> tuple[Plan, list[ArrayReport]]:
        """Every step, in order (see the class); (the plan carried out, what each array got)."""
        dest = self.dest
        self.record["request"] = request_of(plan, chain, selection, sample, self.readers,
                                            self.compression, self.salvage)
        # (before the try: a partial copy that cannot be resumed stays as it is)
        recorded = self.reopen() if dest.resume else None
        if recorded is not None:
            plan, chain = recorded, None
        previous = _install_sigterm()
        try:
            with cluster_for(scheduler, self.src) as cluster:
                if not dest.resume:
                    self.begin()
                kill_point("survey")
                the_plan = self.decide(plan, chain, selection, sample, cluster)
                if dest.resume:
                    self.verify()
                if recorded is None:
                    self.record_plan(the_plan)
                reports = self.write(cluster)
                kill_point("finish")
                self.finish(the_plan)
        except BaseException as exc:
            failure = self.abandon(exc)
            if failure is not None:
                raise failure from None
            raise
        finally:
            _restore_sigterm(previous)
        return the_plan, reports

    # --- 2. begin -----------------------------------------------------------------------------
    def begin(self) -> None:
        """A new partial copy, holding the record."""
        self.dest.begin(self.record)
        self.begun = True

    def reopen(self) -> Plan | None:
        """Resuming: the partial copy reopened; the plan the stopped run recorded (None: it
        recorded none, and the plan is made again), checked against this source."""
        dest = self.dest
        dest.reopen()
        self.begun = True
        earlier = dest.record_of()
        if earlier is None:         # nothing recorded, nothing to check: from the start
            self.notes.append(f"{dest.partial_name()}: the stopped conversion recorded nothing; "
                              f"converting from the start")
            return None
        if earlier.get("fingerprint") != self.record["fingerprint"]:
            raise InputError(f"resume=True: the source {self.src.text} is not the store the stopped "
                             f"conversion read ({earlier.get('source')}, or it changed since): "
                             f"remove {dest.partial_name()} and convert again")
        if "request" in earlier and earlier["request"] != self.record["request"]:
            before, now = earlier["request"], self.record["request"]
            keys = [k for k in dict.fromkeys([*before, *now]) if before.get(k) != now.get(k)]
            said = "; ".join(f"{_setting(k, before.get(k))} then, {_setting(k, now.get(k))} now"
                             for k in keys)
            raise UsageError(f"resume=True: the stopped conversion was asked otherwise ({said}): "
                             f"resume with its settings, or remove {dest.partial_name()} and "
                             f"convert again")
        if earlier.get("plan") is None:
            return None
        recorded = Plan.from_json(earlier["plan"], f"resume=True: {dest.partial_name()}")
        self.compression = Compression.parse(recorded.compressor)
        self.readers = Readers.parse(recorded.readers)
        return recorded

    # --- 3. decide ----------------------------------------------------------------------------
    def decide(self, plan: Plan | None, chain: list | None, selection: Selection,
               sample: int | None, cluster: Any) -> Plan:
        """The plan: `plan` as given, `chain` for every numeric array, or decided."""
        if plan is not None:
            by_path = plan.check_against(self.arrays, f"plan for {self.src.text}")
            decisions = [by_path["/" + a.path] for a in self.arrays]
        elif chain is not None:
            coords = coordinates(self.arrays)
            selection.check_names(["/" + a.path for a in self.arrays], coords)
            decisions = []
            for a in self.arrays:
                path = "/" + a.path
                why = selection.excluded(path) or (coords.get(path) and f"{coords[path]}: kept exact")
                if why or not arrays.is_numeric(a):
                    decisions.append(Decision(path, "copy", why or "not numeric: copied"))
                else:
                    decisions.append(Decision(path, "encode", "codecs given", codecs=chain))
        else:
            decisions = decide_arrays(self.arrays, selection, self.compression, sample,
                                      self.progress, cluster, self.readers, self.salvage)
        self.decisions = {d.path: d for d in decisions}
        return Plan(self.src.text, str(self.compression), decisions, str(self.readers))

    # --- 4. verify ----------------------------------------------------------------------------
    def verify(self) -> None:
        """Resuming: every unit the stopped run recorded as written holds what the source
        encodes to now (decoded values compared bit for bit; copied arrays byte for byte),
        else a Mismatch (the partial copy is kept); then the files a kill left half-written
        are removed."""
        dest, salvage = self.dest, self.salvage
        stale = f"remove {dest.partial_name()} and convert again"
        for arr in self.arrays:
            path = "/" + arr.path
            done = dest.done(path)
            if not done:
                continue
            d = self.decisions[path]
            if d.action == "copy" or arr.size == 0:
                if salvage is not None and arr.size and self._salvaged(arr):
                    continue
                if _lazy_view(arr):
                    self._verify_values(arr, stale)
                    continue
                if not dest.holds_copy_of(arr.store_path.store, arr.store_path.path, arr.path):
                    raise Mismatch(f"resume=True: {path} in {dest.partial_name()} is not the source's "
                                   f"copy (the source changed since, or the copy is damaged): {stale}")
                continue
            written = open_written(dest.store, arr.path, "r")
            runner = runner_for(arr, d)
            regions = arrays.storage_units(arr)
            read = arrays.reader(arr, salvage)
            for i in sorted(done, key=lambda k: int(k) if k.isdigit() else -1):
                if not i.isdigit() or int(i) >= len(regions):
                    raise Mismatch(f"resume=True: {dest.partial_name()} records unit {i} of {path}, "
                                   f"which has {len(regions)}: {stale}")
                region = regions[int(i)]
                want = np.ascontiguousarray(runner.values(read(region)))
                got = np.ascontiguousarray(written[region])
                if want.dtype != got.dtype or want.tobytes() != got.tobytes():
                    raise Mismatch(f"resume=True: {path} unit {unit_label(region)} in "
                                   f"{dest.partial_name()} does not hold what the source encodes "
                                   f"to (the source changed since, or the copy is damaged): {stale}")
        dest.remove_torn_files()

    def _verify_values(self, arr: Any, stale: str) -> None:
        """Resuming: a copied Dataset variable holds, unit by unit, the values it reads as now."""
        written = open_written(self.dest.store, arr.path, "r")
        for region in arrays.storage_units(arr):
            want, got = np.asarray(arr.values(region)), np.asarray(written[region])
            same = (got.tobytes() == want.tobytes() if want.dtype.kind in "biufcmM"
                    else bool(np.array_equal(got, want)))
            if got.dtype != want.dtype or not same:
                raise Mismatch(f"resume=True: /{arr.path} unit {unit_label(region)} in "
                               f"{self.dest.partial_name()} does not hold what the source reads "
                               f"as (the source changed since, or the copy is damaged): {stale}")

    def _salvaged(self, arr: Any) -> bool:
        """Resuming with --on-damaged-chunk fill: a copied array whose copy records damaged
        chunks holds, unit by unit, what the source reads as around them (else a Mismatch)."""
        dest = self.dest
        written = open_written(dest.store, arr.path, "r")
        if damage.ATTRIBUTE not in written.attrs:
            return False
        for region in arrays.storage_units(arr):
            values, found = damage.read_around(arr, region)
            self.salvage.note(found)
            got = np.asarray(written[region])
            # (bits for numbers, NaN payloads included; equality for strings and objects)
            same = (got.tobytes() == values.tobytes() if values.dtype.kind in "biufcmM"
                    else bool(np.array_equal(got, values)))
            if got.dtype != values.dtype or not same:
                raise Mismatch(f"resume=True: /{arr.path} unit {unit_label(region)} in "
                               f"{dest.partial_name()} does not hold what the source reads as: "
                               f"remove {dest.partial_name()} and convert again")
        return True

    # --- 5. record ----------------------------------------------------------------------------
    def record_plan(self, plan: Plan) -> None:
        """The plan joins the record (what a resumed run applies)."""
        self.dest.write_record({**self.record, "plan": plan.to_json()})

    # --- 6. write -----------------------------------------------------------------------------
    def write(self, cluster: Any) -> list[ArrayReport]:
        """Every node of the source (parents first) into the destination, as the plan says;
        consolidated metadata again where the source had it. With --on-damaged-chunk fill, a
        damaged chunk's elements are written as the fill value and the array's attributes list
        the damaged chunks (zdt.engine.damage)."""
        import zarr

        from zdt.pipeline import use_pipeline

        dest, salvage = self.dest, self.salvage
        reports = []
        with use_pipeline():
            for _, n in self.nodes:
                if not is_array(n):
                    zarr.open_group(store=dest.store, path=n.path, mode="a",
                                    zarr_format=n.metadata.zarr_format, attributes=dict(n.attrs))
                    continue
                path = "/" + n.path
                d = self.decisions[path]
                if d.action == "copy" or n.size == 0:
                    reports.append(self._copy(n, d))
                else:
                    reports.append(write_array(dest, n, d, self.compression, self.progress,
                                               cluster, salvage))
        kill_point("last")
        root = self.nodes[0][1]          # walk lists the root first
        if isinstance(root, zarr.Group) and root.metadata.consolidated_metadata is not None:
            with warnings.catch_warnings():
                # zarr warns that v3 consolidated metadata is not in the spec: the source had it
                warnings.simplefilter("ignore")
                zarr.consolidate_metadata(dest.store)
        return reports

    def _copy(self, arr: Any, d: Decision) -> ArrayReport:
        """An array copied byte for byte (unless a stopped run did), recorded as "copied"."""
        dest, salvage, path = self.dest, self.salvage, "/" + arr.path
        if "copied" not in dest.done(path):
            copy_keys(arr.store_path.store, arr.store_path.path, dest.store, arr.path)
            if _lazy_view(arr):
                # (the template holds its metadata only: its values come from the Dataset)
                self._write_values(arr)
            if salvage is not None and arr.size:
                new = open_written(dest.store, arr.path, "r+")
                damage.salvage_copied(arr, new, salvage)
                damage.record(new, salvage.found(path))
            dest.mark(path, "copied")
            if dest.checkpoint_due():
                dest.checkpoint()
        if _lazy_view(arr):         # (as the plain write would store it: what was written)
            size = after = stored_chunk_bytes(open_written(dest.store, arr.path, "r"))
            return ArrayReport(path, "copy", d.why, size, after, None, d.bound)
        size = after = stored_chunk_bytes(arr)
        if salvage is not None and salvage.found(path):       # (rewritten units)
            after = stored_chunk_bytes(open_written(dest.store, arr.path, "r"))
        return ArrayReport(path, "copy", d.why, size, after, None, d.bound)

    def _write_values(self, arr: Any) -> None:
        """A Dataset variable copied as a plain to_zarr writes it: unit by unit, its values
        through its own codecs, on the engine's threads."""
        from concurrent.futures import ThreadPoolExecutor

        from zdt.engine.decide import THREADS
        from zdt.pipeline import workers

        regions = arrays.storage_units(arr)
        advance = self.progress(f"copy /{arr.path}", len(regions))

        def one(region: tuple[slice, ...]) -> None:
            new[region] = arr.values(region)
            advance(1)

        with warnings.catch_warnings():
            # zarr's notes on data types without a v3 spec (fixed-length bytes): the source's
            # types, written as a plain to_zarr writes them
            warnings.simplefilter("ignore")
            new = open_written(self.dest.store, arr.path, "r+")
            with ThreadPoolExecutor(workers(most=THREADS), thread_name_prefix="zdt-copy") as pool:
                list(pool.map(one, regions))

    # --- 7. finish ----------------------------------------------------------------------------
    def finish(self, plan: Plan) -> None:
        """The copy becomes the destination (an Icechunk commit's message names the source
        and the plan)."""
        self.dest.finish(f"zdt convert from {self.src.describe()}\n\n" + plan.dumps())

    # --- on any failure -----------------------------------------------------------------------
    def abandon(self, exc: BaseException) -> StorageError | None:
        """After `exc` stopped steps 2 to 7: zarr's IO settled, then everything this conversion
        wrote removed (not after a KeptError); returns the one line an OS or connection error
        becomes (StorageError), worded before the partial copy goes."""
        if isinstance(exc, KeyboardInterrupt):
            from zdt.zarr_compat import stop_zarr_io

            # an interrupted write goes on in zarr's IO thread: stop it before cleaning up
            stop_zarr_io()
        else:
            from zdt.zarr_compat import settle_zarr_io

            settle_zarr_io()        # a failed write's sibling chunk writes: let them end
        if isinstance(exc, KeyboardInterrupt):
            # Ctrl-C or SIGTERM: what is written stays, to be resumed (the command says so)
            if self.begun:
                kept = (f"the partial copy {self.dest.partial_name()} is kept: the same command "
                        f"with --resume finishes it (or remove it)")
                exc.zdt_kept = kept                         # type: ignore[attr-defined]
                exc.add_note(f"zdt.convert: {kept.replace('--resume', 'resume=True')}")
            return None
        failure = None if isinstance(exc, JobError) else self._storage_failure(exc)
        if not isinstance(exc, KeptError):          # e.g. a resumed copy that does not match
            self.dest.abandon()
        return failure

    def _storage_failure(self, exc: BaseException) -> StorageError | None:
        """An OS or connection error while converting, as one line naming the destination, the
        file or chunk key written and what the copy held then: ``DST: no space left on device
        writing DST.zdt-partial/temps/c/3/1 (1.9 MB written)``."""
        if not isinstance(exc, OSError) or isinstance(exc, StorageError):
            return None
        dest = self.dest
        key = getattr(exc, "zdt_key", None)
        target = f"{dest.partial_name()}/{key}" if key else (exc.filename or dest.partial_name())
        where = f" writing {target}"
        written = dest.written_bytes()
        held = f" ({arrays.fmt_bytes(written)} written)" if written else ""
        if exc.errno is not None and exc.strerror:
            why = exc.strerror[0].lower() + exc.strerror[1:]
            return StorageError(f"{dest.loc.text}: {why}{where}{held}")
        text = str(exc).splitlines()[0] if str(exc) else ""
        return StorageError(f"{dest.loc.text}:{where} failed ({exc.__class__.__name__}"
                            f"{': ' + text if text else ''}){held}")


def _lazy_view(arr: Any) -> bool:
    """A Dataset variable whose chunks are not in the template (zdt.engine.dataset_source)."""
    return getattr(arr, "zdt_view", False) and not arr.eager


def request_of(plan: Plan | None, chain: list | None, selection: Selection, sample: int | None,
               readers: Readers, compression: Compression, salvage: Any) -> dict[str, Any]:
    """What a conversion was asked, as JSON (its record: a resumed run must ask the same)."""
    default = selection.default
    return {"abs_error": default.value if default is not None and not default.relative else None,
            "rel_error": default.value if default is not None and default.relative else None,
            "bounds": {p: str(b) for p, b in selection.bounds.items()},
            "include": list(selection.include), "exclude": list(selection.exclude),
            "readers": str(readers), "compressor": str(compression), "sample": sample,
            "codecs": chain, "plan": plan.to_json()["arrays"] if plan is not None else None,
            "on_damaged_chunk": "fill" if salvage is not None else "stop"}


def _setting(key: str, value: Any) -> str:
    """One setting of a request as the API names it (the command shows its option)."""
    if value in (None, [], {}):
        return f"no {key}="
    if key == "plan":
        return "another plan=" if value else "plan="
    if key == "bounds":
        return "bounds=" + ",".join(f"{p}={b}" for p, b in value.items())
    if isinstance(value, list):
        return f"{key}=" + ",".join(map(str, value)) if all(isinstance(v, str) for v in value) \
            else f"{key}=(other codecs)"
    return f"{key}={value:g}" if isinstance(value, float) else f"{key}={value}"


def _terminate(signum: int, frame: Any) -> None:
    raise Terminated()


def _install_sigterm() -> Any:
    """SIGTERM handled like Ctrl-C while converting (main thread only: elsewhere Python cannot
    install handlers, and the caller's own handling applies)."""
    if threading.current_thread() is not threading.main_thread():
        return None
    return signal.signal(signal.SIGTERM, _terminate)


def _restore_sigterm(previous: Any) -> None:
    if previous is not None:
        signal.signal(signal.SIGTERM, previous)
