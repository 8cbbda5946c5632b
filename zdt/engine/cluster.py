"""Suggestions and conversions on a dask.distributed cluster (``scheduler=`` / ``--scheduler``).

A scheduler's address (``tcp://host:8786``) connects to a running scheduler (``tcp://host:8786``; one that does not
answer within CONNECT_TIMEOUT seconds is an error); ``local:N`` starts a
LocalCluster of N worker processes (one thread each) on this machine and stops it at the end.

Each storage unit (shard or chunk of the destination) is one task: the worker opens the
source and the partial destination itself (from picklable `Location`s, never an open store),
writes the unit through zdt's pipeline and checks it against the bound, exactly as a thread of a
single-process run does: never two tasks on one chunk, the same bytes, a worker's memory bounded
by one unit; the unit is recorded as written once its task returns. Into Icechunk, the session
is forked to the workers, the forks come back with the results and are merged before each
checkpoint and the one commit (Icechunk's documented way of writing from many processes).

The survey and the measurement that decide an encoding run there too: one task per storage
unit reads it and returns its part of the survey (folded in unit order, as a single process
folds them), and one task per sampled unit measures every candidate encoding on it.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Any

from zdt.errors import InputError, MissingPackage, UsageError

CONNECT_TIMEOUT = 10        # seconds to wait for a scheduler's answer


@dataclass(frozen=True)
class UnitJob:
    """What a worker needs to write units of one array (all picklable)."""

    src: Any                    # zdt.stores.location.Location of the source
    array: str                  # the array's path in both stores
    target: Any                 # what the destination gives workers (Destination.for_worker)
    decision: dict              # Decision.to_json()


# A worker process opens each source array once, not once per task (opening reads metadata: on
# an object store, a request or more).
_opened: dict[tuple, Any] = {}


def _source_array(src: Any, array: str) -> Any:
    from zdt.stores.nodes import open_node

    key = (src, repr(src.storage_options), array)
    if key not in _opened:
        _opened[key] = open_node(src, array)
    return _opened[key]


def run_units(job: UnitJob, units: list[tuple[int, tuple[slice, ...]]]) -> tuple[list[float], Any]:
    """In a worker: write `units` of the job's array; (their errors, the target written)."""
    import zarr

    from zdt.engine.plan import Decision
    from zdt.pipeline import use_pipeline
    from zdt.engine.writer import UnitWriter

    arr = _source_array(job.src, job.array)
    with use_pipeline():
        new = zarr.open_array(store=job.target.store, path=job.array, mode="r+")
        writer = UnitWriter(arr, new, Decision.from_json(job.decision, "a task"))
        errors = [writer.write(i, region) for i, region in units]
    return errors, job.target


def survey_units(src: Any, array: str, units: list[tuple[int, tuple[slice, ...]]], dtype: Any,
                 sentinels: tuple, digits: list[int], keep: set[int]) -> list[Any]:
    """In a worker: the survey parts of `units` of the source's array."""
    from zdt.engine.arrays import reader
    from zdt.engine.survey import survey_unit

    read = reader(_source_array(src, array))
    return [survey_unit(read(region), i, dtype, sentinels, digits, i in keep) for i, region in units]


def measure_sample(sample: Any, trials: list, dtype: Any, output: Any, bound: Any,
                   declared: Any) -> Any:
    """In a worker: every trial on one sampled unit."""
    from zdt.engine.measure import measure

    return measure([sample], trials, dtype, output, bound, declared, workers=1)


@contextmanager
def cluster_for(scheduler: str | None, source: Any) -> Iterator[Cluster | None]:
    """A Cluster for `scheduler`, closed at the end (`source`: the Location its tasks read),
    or None without a scheduler."""
    if not scheduler:
        yield None
        return
    cluster = Cluster(scheduler)
    cluster.source = source
    try:
        yield cluster
    finally:
        cluster.close()


class Cluster:
    """A dask.distributed client (and the LocalCluster it started, if any)."""

    def __init__(self, spec: str) -> None:
        try:
            from distributed import Client, LocalCluster
        except ImportError:
            raise MissingPackage("a scheduler needs dask.distributed: pip install 'dask[distributed]'") from None
        self.spec, self.local = spec, None
        self.source: Any = None         # the Location converted (set by convert)
        if spec.startswith("local:"):
            try:
                n = int(spec[len("local:"):])
            except ValueError:
                n = 0
            if n < 1:
                raise UsageError(f"scheduler={spec}: local:N needs a worker count N >= 1")
            import logging

            # No dashboard, and the scheduler's own HTTP endpoints on a free loopback port:
            # left alone it binds 0.0.0.0:8787, which another cluster on the machine may hold
            self.local = LocalCluster(n_workers=n, threads_per_worker=1, processes=True,
                                      host="127.0.0.1", dashboard_address=None,
                                      scheduler_kwargs={"dashboard": False,
                                                        "dashboard_address": "127.0.0.1:0"},
                                      silence_logs=logging.ERROR)
            self.client = Client(self.local)
        else:
            try:
                self.client = Client(spec, timeout=CONNECT_TIMEOUT)
            except (OSError, TimeoutError, ValueError) as exc:
                raise InputError(f"scheduler={spec}: no dask scheduler answered within "
                                   f"{CONNECT_TIMEOUT} s ({type(exc).__name__})") from None

    def survey(self, arr: Any, regions: list, dtype: Any, sentinels: Any, digits: list[int],
               keep: Any, progress: Any) -> Any:
        """zdt.engine.survey.survey on the cluster: the same result."""
        from zdt.engine.survey import Survey, fold

        n = len(regions)
        futures = self.client.map(survey_units, [self.source] * n, [arr.path] * n,
                                  [[(i, r)] for i, r in enumerate(regions)], [dtype] * n,
                                  [tuple(sentinels)] * n, [list(digits)] * n, [set(keep)] * n,
                                  pure=False)
        total, digits = Survey(dtype), list(digits)
        try:
            for future in futures:          # in unit order, as one process folds them
                for part in future.result():
                    fold(part, total, digits, progress)
        except BaseException:
            self.client.cancel(futures)
            raise
        return total

    def measure(self, samples: list, trials: list, dtype: Any, output: Any, bound: Any,
                declared: Any, *, progress: Any = None, workers: Any = None) -> Any:
        """zdt.engine.measure.measure on the cluster: the same result."""
        from zdt.engine.measure import Measurement

        n = len(samples)
        futures = self.client.map(measure_sample, samples, [list(trials)] * n, [dtype] * n,
                                  [output] * n, [bound] * n, [declared] * n, pure=False)
        m = Measurement([t.again(t.sized) for t in trials])
        try:
            for future in futures:          # in sample order
                m.fold(future.result())
                if progress is not None:
                    progress(1)
        except BaseException:
            self.client.cancel(futures)
            raise
        return m

    def close(self) -> None:
        self.client.close()
        if self.local is not None:
            self.local.close()

    def write_units(self, dest: Any, arr: Any, d: Any, todo: list[tuple[int, tuple[slice, ...]]],
                    advance: Any) -> list[float]:
        """Every unit of `todo` as a task (at most twice the cluster's threads in flight), each
        recorded as written when its task returns; into Icechunk each task writes into a fork
        of the session, given back to be merged before each checkpoint and at the end."""
        from zdt.engine.writer import run_windowed

        path = "/" + arr.path
        job = UnitJob(self.source, arr.path, dest.for_worker(), d.to_json())

        def refork() -> None:
            nonlocal job
            job = replace(job, target=dest.for_worker())

        def settle(item: tuple, future: Any) -> list[float]:
            errs, written = future.result()
            dest.take_back(written)
            dest.mark(path, str(item[0]))
            advance(len(errs))
            return errs

        window = 2 * max(1, sum(self.client.nthreads().values()))
        errors = run_windowed(todo, lambda item: self.client.submit(run_units, job, [item], pure=False),
                              settle, dest, window, after=refork, cancel=self.client.cancel)
        dest.gather()
        return errors
