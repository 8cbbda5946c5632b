"""Deciding what to do with each array of a store: copy it as it is, or encode it with the
encoding that writes the fewest bytes and keeps its bound. ``zdt suggest`` prints (or writes)
the decisions as a plan; ``zdt convert`` carries them out.

For an array to encode: one full streaming pass (zdt.engine.survey) gives the range, the
specials and the grids every candidate's guarantee rests on, and keeps the storage units the
size measurement reads (all of them up to a few million values, else a spread, or
``--sample N``); zdt.engine.candidates makes the candidates; zdt.engine.measure runs each on
the kept units at kernel level with the output's own serializer and compressors, and the
smallest on disk that keeps the bound wins. A candidate the survey does not prove (the
one-line recipe's step of exactly 2E) is eligible only when every unit was measured.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import numpy as np

from zdt.engine import arrays
from zdt.engine import candidates as cand
from zdt.engine.bounds import Bound
from zdt.engine.compressors import Compression
from zdt.engine.measure import Output, best, measure
from zdt.engine.plan import Decision
from zdt.engine.selection import Selection, coordinates, fixed_reason
from zdt.engine.survey import survey
from zdt.stores.nodes import data_type_name, stored_chunk_bytes

Progress = Callable[[str, int], Callable[[int], None]]     # (label, total) -> advance(n)


def workers() -> int:
    return max(1, min(4, os.cpu_count() or 1))


def decide_array(arr: Any, bound: Bound, compression: Compression, sample: int | None,
                 progress: Progress, cluster: Any = None) -> Decision:
    """Survey, candidates, measurement: the decision for one array (see the module)."""
    path = "/" + arr.path
    dtype = np.dtype(arr.dtype)
    regions = arrays.storage_units(arr)
    unit_values = int(np.prod([s.stop - s.start for s in regions[0]])) if regions[0] else 1
    count = sample if sample is not None else arrays.default_sample(arr, len(regions), unit_values)
    keep = arrays.spread(len(regions), count)
    declared = arrays.sentinels_of(arr)
    sentinels = declared.values
    digits = cand.GRID_DIGITS if (dtype.kind == "f" and not bound.relative) else ()
    digits = [d for d in digits if 10.0 ** -d > 2 * bound.value]
    scan = progress(f"scan {path}", len(regions))
    if cluster is not None:
        s = cluster.survey(arr, regions, dtype, sentinels, digits, keep, scan)
    else:
        s = survey(arrays.reader(arr), regions, dtype, sentinels=sentinels, grid_digits=digits,
                   keep=keep, workers=workers(), progress=scan)
    ctx = cand.Context(dtype, s, bound, sentinels, declared.fill_special, arr.metadata.zarr_format,
                       declared.masking)
    encodings = cand.candidates(ctx)
    shape = tuple(arr.shape)
    base = dict(path=path, data_type=data_type_name(arr), shape=shape, bound=bound)
    if not encodings:
        return Decision(action="copy", why=f"no encoding narrower than {dtype} keeps the "
                        f"{bound.describe()} on this data", **base)
    output = Output(arr.metadata.zarr_format, tuple(arr.chunks), arr.fill_value,
                    compression.for_array(arr))
    samples = [s.kept[i] for i in keep]
    all_measured = len(keep) == len(regions)
    advance = progress(f"measure {path}", len(samples))
    if cluster is not None:
        m = cluster.measure(samples, encodings, dtype, output, bound, sentinels, declared.masking,
                            advance)
    else:
        m = measure(samples, encodings, dtype, output, bound, sentinels, declared.masking,
                    workers=workers(), progress=advance)
    winner, runner_up = best(m, bound, all_measured)
    measured_on = (f"all {len(regions)} storage unit{'s' * (len(regions) != 1)}" if all_measured
                   else f"{len(keep)} of {len(regions)} storage units")
    scale = arr.size / max(1, m.values)
    stored_now = arr.stored_bytes() if hasattr(arr, "stored_bytes") else stored_chunk_bytes(arr)
    if winner is None:
        tried = "; ".join(f"{r.encoding.label}: " + (r.failed or f"error {r.error:.3g}")
                          for r in m.results[:6])
        return Decision(action="copy", why=f"no encoding kept the {bound.describe()} "
                        f"(measured on {measured_on}: {tried})", **base)
    estimate = int(round(winner.nbytes * scale))
    measured = {"bytes": estimate, "bytes_now": stored_now, "error": winner.error,
                "on": measured_on, "label": winner.encoding.label,
                "values_measured": m.values}
    if runner_up is not None:
        measured["runner_up"] = {"label": runner_up.encoding.label,
                                 "bytes": int(round(runner_up.nbytes * scale)),
                                 "error": runner_up.error}
    if stored_now and estimate >= stored_now:
        return Decision(action="copy", why=f"no encoding keeping the {bound.describe()} writes "
                        f"fewer bytes than it holds now ({stored_now:,})", measured=measured, **base)
    return Decision(action="encode", why=winner.encoding.label, codecs=winner.encoding.codecs,
                    measured=measured, **base)


def decide(arrays: list[Any], selection: Selection, compression: Compression,
           sample: int | None, progress: Progress, cluster: Any = None) -> list[Decision]:
    coords = coordinates(arrays)
    decisions = []
    for arr in arrays:
        bound, named = selection.bound_for("/" + arr.path)
        why = fixed_reason(arr, bound, named, coords, selection)
        if why is not None:
            decisions.append(Decision("/" + arr.path, "copy", why, bound if named else None,
                                      data_type=data_type_name(arr), shape=tuple(arr.shape)))
            continue
        decisions.append(decide_array(arr, bound, compression, sample, progress, cluster))
    return decisions
