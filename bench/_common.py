"""Shared benchmark helpers: interleaved timing, the copy-bandwidth floor, table printing, and
(when ZDT_BENCH_JSON names a file) every printed result saved as JSON for `zdt bench`.

Import this before NumPy does any work: it pins BLAS to one thread so idle BLAS workers do not
spin on the second core while we time.
"""

from __future__ import annotations

import atexit
import json
import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import platform  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import threading  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402

import numpy as np  # noqa: E402


def interleaved(impls: dict[str, Callable[[], object]], repeat: int) -> dict[str, float]:
    """Median seconds per implementation; one call of each per round, rounds interleaved so
    drift (thermal, other load) hits every implementation alike. One warm-up round first."""
    times: dict[str, list[float]] = {name: [] for name in impls}
    for name, fn in impls.items():
        fn()
    for _ in range(repeat):
        for name, fn in impls.items():
            t0 = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t0)
    return {name: statistics.median(ts) for name, ts in times.items()}


def fastest(impls: dict[str, Callable[[], object]], repeat: int,
            clock: Callable[[], float] = time.perf_counter) -> dict[str, float]:
    """Min seconds of `clock` per implementation, one call of each per round, rounds
    interleaved; one warm-up round first."""
    times = {k: float("inf") for k in impls}
    for f in impls.values():
        f()
    for _ in range(repeat):
        for k, f in impls.items():
            t0 = clock()
            f()
            times[k] = min(times[k], clock() - t0)
    return times


def copy_floor(arr: np.ndarray, repeat: int) -> float:
    """Median seconds of np.copyto of the same bytes: the memory-bandwidth floor."""
    dst = np.empty_like(arr)
    return interleaved({"copy": lambda: np.copyto(dst, arr)}, repeat)["copy"]


def fresh_floor(src: np.ndarray, out_dtype, repeat: int) -> float:
    """The floor of a call that returns a new array: the larger of copying the input and
    copying an output-sized array into newly allocated memory (ndarray.copy: the page faults
    of a fresh allocation, then memcpy)."""
    out = np.ones(src.shape, dtype=out_dtype)
    t = interleaved({"in": lambda: src.copy(), "out": lambda: out.copy()}, repeat)
    return max(t["in"], t["out"])


ALLOC = "zdt (allocating)"      # the row a fresh floor is compared with


def in_threads(fns: list[Callable[[], object]]) -> float:
    """Wall seconds to run every fn in its own thread, concurrently."""
    threads = [threading.Thread(target=fn) for fn in fns]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return time.perf_counter() - t0


def machine() -> str:
    return (f"Python {platform.python_version()}, numpy {np.__version__}, "
            f"{os.cpu_count()} cpus, {platform.machine()}, {platform.processor() or ''}").strip(", ")


def print_table(title: str, results: dict[str, float], floor: float, ours: str,
                note: str = "", fresh: float | None = None) -> dict[str, float]:
    """One workload: ms, ratio to the fastest peer (not us), ratio to the copy floor (and,
    given `fresh`, to the fresh floor: see fresh_floor)."""
    peers = {k: v for k, v in results.items() if not k.startswith("zdt")}
    fastest_peer = min(peers.values()) if peers else None
    print(f"\n{title}{'  (' + note + ')' if note else ''}")
    print(f"  {'implementation':40s} {'ms':>8s} {'/fastest peer':>14s} {'/copy floor':>12s}"
          + (f" {'/fresh floor':>13s}" if fresh else ""))
    for name, t in sorted(results.items(), key=lambda kv: kv[1]):
        rel = f"{t / fastest_peer:14.2f}" if fastest_peer else f"{'-':>14s}"
        print(f"  {name:40s} {t * 1e3:8.2f} {rel} {t / floor:12.2f}"
              + (f" {t / fresh:13.2f}" if fresh else ""))
    print(f"  {'np.copyto (same input bytes)':40s} {floor * 1e3:8.2f}")
    if fresh:
        print(f"  {'fresh floor (copy into new memory)':40s} {fresh * 1e3:8.2f}")
    record(title, results, floor, ours, note, fresh=fresh)
    return {"ours": results[ours], "fastest_peer": fastest_peer or float("nan"), "floor": floor,
            "times": results}


_RECORDS: list[dict] = []


def record(title: str, times: dict[str, float], floor: float, ours: str, note: str = "",
           peers: list[str] | None = None, fresh: float | None = None) -> None:
    """Keep one workload's medians (seconds) for ZDT_BENCH_JSON; `ours` is zdt's headline
    implementation; the peers are `peers`, else the names not starting with "zdt" that do the
    same job (not the "(no checks)" / "(no semantics)" NumPy lower bounds)."""
    if peers is None:
        peers = [k for k in times if not k.startswith("zdt") and "(no " not in k]
    row = {"title": title, "note": note, "times": dict(times), "floor": floor, "ours": ours,
           "peers": peers}
    if fresh:
        row["fresh_floor"] = fresh
    _RECORDS.append(row)


def record_bytes(dataset: str, kind: str, value: float, unit: str, values: int,
                 results: dict[str, dict], tags: list[str] = ()) -> None:
    """Keep one dataset and bound's bytes for ZDT_BENCH_JSON (a "bytes" family: `zdt bench`
    tables them and draws bits per value against the largest error): per method, its bytes,
    largest error and whether it kept the bound."""
    _RECORDS.append({"kind": "bytes", "dataset": dataset, "bound": [kind, value], "unit": unit,
                     "values": values, "results": results, "tags": list(tags),
                     "title": f"{dataset}, {kind} {value:g}"})


@atexit.register
def _dump() -> None:
    path = os.environ.get("ZDT_BENCH_JSON")
    if path and _RECORDS:
        with open(path, "w") as f:
            json.dump({"script": os.path.basename(sys.argv[0]), "argv": sys.argv[1:],
                       "machine": machine(), "results": _RECORDS}, f, indent=1)


def header(name: str) -> None:
    print(f"{name} -- {machine()}")
    print(f"argv: {' '.join(sys.argv)}")
