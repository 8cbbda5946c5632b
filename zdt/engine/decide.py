"""Deciding what to do with each array of a store: copy it as it is, or encode it with the
encoding that writes the fewest bytes and keeps its bound. ``zdt suggest`` prints (or writes)
the decisions as a plan; ``zdt convert`` carries them out.

For an array to encode: one full streaming pass (zdt.engine.survey) gives the range, the
specials and the grids every candidate's guarantee rests on, and keeps the storage units the
size measurement reads (all of them up to a few million values, else a spread, or
``--sample N``); zdt.engine.candidates makes the candidates; zdt.engine.measure runs each on
the kept units at kernel level under every back end that may follow it (a serializer, bytes
or pcodec, and compressors: `back_ends`; the slow ones screened, `screened`), and the
smallest on disk that keeps the bound wins. A candidate the survey does not prove (the
one-line recipe's step of exactly 2E) is eligible only when every unit was measured.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np

from zdt.engine import arrays
from zdt.engine import candidates as cand
from zdt.engine.bounds import Bound
from zdt.engine.compressors import Compression
from zdt.engine.measure import BackEnd, Measurement, Output, Trial, best, is_lossy, measure
from zdt.engine.packing import Packing
from zdt.engine.readers import Readers
from zdt.engine.plan import Decision
from zdt.engine.selection import Selection, coordinates, fixed_reason
from zdt.engine.survey import survey
from zdt.errors import UsageError
from zdt.formats import FORMATS
from zdt.stores.nodes import array_type_name, stored_chunk_bytes

Progress = Callable[[str, int], Callable[[int], None]]     # (label, total) -> advance(n)
# the engine's thread pools (survey, measurement, writes, checks): at most this many threads,
# each holding a storage unit (zdt.pipeline.workers: zarr's thread count, else the CPUs)
THREADS = 4


PCODEC = [{"name": "numcodecs.pcodec",
           "configuration": {"level": 8, "mode_spec": "auto", "delta_spec": delta,
                             **({"delta_encoding_order": 2} if delta == "try_consecutive" else {}),
                             "paging_spec": "equal_pages_up_to", "equal_pages_up_to": 262144}}
          for delta in ("auto", "try_consecutive")]


def back_ends(enc: cand.Encoding, arr: Any, compression: Compression, readers: Readers) -> list[BackEnd]:
    """What may follow an encoding's array -> array stage: with a compressor given, that; else
    bytes with each compressor `auto` tries, and numcodecs.pcodec (16- to 64-bit stored types,
    zarr v3, where the readers decode it). An encoding with its own entropy stage (zdt.predict)
    gets no compressor after it unless one is given."""
    if is_lossy(enc.serializer):
        return [BackEnd(None, tuple(compression.chain(arr)) if not compression.searched else ())]
    if not compression.searched:
        return [] if enc.for_pcodec else [BackEnd(None, tuple(compression.chain(arr)))]
    out = [] if enc.for_pcodec else [BackEnd(None, tuple(c), costly=_costly(c))
                                     for c in compression.choices(arr)]
    stored = np.dtype(arr.dtype) if enc.rounding else enc.stored
    fmt = FORMATS.get(str(stored))
    bits = fmt.bits if fmt is not None else 8 * np.dtype(stored).itemsize
    if (arr.metadata.zarr_format == 3 and enc.serializer is None and bits >= 16
            and readers.pcodec_ok(bits // 8) and str(stored) not in ("bfloat16",)
            and _pcodec_installed()):
        out += [BackEnd(p, (), costly=i > 0) for i, p in enumerate(PCODEC)]
        orders: list = [None]
        # the chunk read along its axes reversed (a transpose codec, which every reader decodes)
        if (sum(n > 1 for n in arr.chunks) >= 2 and _pcodec_takes_transposed()
                and readers.transposed_pcodec_ok(tuple(arr.shape), tuple(arr.chunks))):
            order = tuple(reversed(range(len(arr.chunks))))
            orders.append(order)
            out.append(BackEnd(PCODEC[0], (), costly=True, order=order))
        for order in orders:
            paged = _edge_pages(tuple(arr.shape), tuple(arr.chunks), order)
            if paged is not None:
                conf = {**PCODEC[0]["configuration"], "equal_pages_up_to": paged}
                out.append(BackEnd({**PCODEC[0], "configuration": conf}, (), costly=True, order=order))
    return out


def _edge_pages(shape: tuple, chunks: tuple, order: tuple | None) -> int | None:
    """pcodec's page size that puts the padding of the edge chunks along the axis read first
    (zarr stores an edge chunk whole, the part past the array's edge the fill value) in pages
    of their own, where it costs almost nothing (a page of one value), instead of spreading
    over the data's page as one more frequent symbol (about a tenth of the chunk's bytes when
    three quarters are padding); None when that axis has no partial edge chunk."""
    if not chunks:
        return None
    axis = order[0] if order is not None else 0
    n, c = shape[axis], chunks[axis]
    if n % c == 0 or c < 2:
        return None
    f = (n % c) / c                             # the part of the edge chunk's run that is data
    total = math.prod(chunks)
    # the fewest equal pages (up to 8) whose boundary after the data wastes least
    pages = min(range(2, 9), key=lambda p: (math.ceil(f * p) / p - f, p))
    return max(1, -(-total // pages))


@functools.cache
def _pcodec_installed() -> bool:
    """numcodecs.pcodec needs the pcodec package (zdt[zarr] brings it)."""
    from importlib.util import find_spec

    return find_spec("pcodec") is not None


@functools.cache
def _pcodec_takes_transposed() -> bool:
    """Whether this zarr and numcodecs write a transposed chunk through numcodecs.pcodec as it
    is: numcodecs 0.16's wrapper (zarr 3.1's environment) encodes the transposed view's memory
    in the untransposed order, and every reader then reads scrambled values. Tried once, on
    a small array in memory."""
    import warnings

    import zarr
    from zarr.storage import MemoryStore

    x = np.arange(12, dtype="uint16").reshape(3, 4)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            a = zarr.create_array(MemoryStore(), shape=x.shape, chunks=x.shape, dtype=x.dtype,
                                  filters=[{"name": "transpose", "configuration": {"order": [1, 0]}}],
                                  serializer=PCODEC[0], compressors=None)
            a[...] = x
            return bool((a[...] == x).all())
    except Exception:       # (any failure: not offered)
        return False


def _costly(chain: list[dict]) -> bool:
    """Compressors several times slower than zstd's default level to measure (zstd 9, gzip)."""
    return any(c["name"] == "gzip" or (c["name"] == "zstd" and c["configuration"]["level"] > 3)
               for c in chain)


# The search screens: every chain is sized on a spread of the sampled units up to SCREEN
# values, and only the FINALISTS smallest that keep the bound there (and the smallest of each
# kind of back end, pcodec or bytes + compressor, which rank unlike each other on unlike parts
# of an array: an ocean-only corner favours zstd) are sized on the rest (every encoding's error
# is measured on every unit all the same). Compressors rank alike on a part and on the whole;
# sizing every chain everywhere cost 10x a plain rewrite (bench/bench_convert.py).
SCREEN = 500_000
FINALISTS = 4
LEADERS = 2


def _screening_units(samples: list) -> list[int]:
    """Which sampled units screen: evenly spread over them (the first units of an array are
    its corner, often unlike the rest), as many as hold about SCREEN values."""
    per_unit = max(1, max(s.size for s in samples)) if samples else 1
    return arrays.spread(len(samples), max(1, -(-SCREEN // per_unit)))


def _family(enc: cand.Encoding, backend: BackEnd) -> str:
    if is_lossy(enc.serializer):
        return enc.serializer["name"]
    return "pcodec" if backend.serializer is not None else "bytes"


def screened(run: Callable, samples: list, trials: list[Trial], dtype: np.dtype, output: Output,
             bound: Bound, declared: Any, all_measured: bool,
             advance: Callable[[int], None]) -> Measurement:
    """measure() (or the cluster's) with screening (see SCREEN): on a spread of the units,
    every encoding with the quick back ends, then the slow ones (BackEnd.costly) with the
    LEADERS encodings that lead under that kind of back end; on the rest, every encoding's
    error and the finalists' bytes. A Measurement whose other trials are marked as screened
    out."""
    if len(trials) <= FINALISTS:
        return run(samples, trials, dtype, output, bound, declared, progress=advance)
    ids = set(_screening_units(samples))
    screen = [s for i, s in enumerate(samples) if i in ids]
    others = [s for i, s in enumerate(samples) if i not in ids]
    first = run(screen, [t.again(sized=not t.backend.costly) for t in trials], dtype, output,
                bound, declared, progress=advance)

    def keeps(t: Trial) -> bool:
        return t.ok and t.error <= bound.value and (t.encoding.proven or all_measured)

    def rank(trials: Any) -> list[Trial]:
        return sorted((t for t in trials if keeps(t)), key=lambda t: (t.nbytes, t.encoding.preference))

    # the encodings that lead under each kind of back end get that kind's slow ones (pcodec's
    # other deltas, pages and transpose for the codes pcodec likes best, which are often not
    # those a byte compressor likes best: a uint16 twin of uint8 codes)
    leaders: dict[str, list] = {}
    for t in rank(t for t in first.trials if not t.backend.costly):
        led = leaders.setdefault(_family(t.encoding, t.backend), [])
        if t.encoding not in led:
            led.append(t.encoding)
    costly = [t for t in first.trials if t.backend.costly
              and t.encoding in leaders.get(_family(t.encoding, t.backend), [])[:LEADERS]]
    if costly:
        extra = run(screen, [t.again(sized=t in costly) for t in first.trials], dtype, output,
                    bound, declared)
        for t, x in zip(first.trials, extra.trials, strict=True):
            if t in costly:
                t.nbytes = x.nbytes
    ranked = rank(t for t in first.trials if not t.backend.costly or t in costly)
    best_of_kind = {}
    for t in reversed(ranked):
        best_of_kind[_family(t.encoding, t.backend)] = t
    finalists = ranked[:FINALISTS] + [t for t in best_of_kind.values()
                                      if t not in ranked[:FINALISTS]]
    if others:
        rest = run(others, [t.again(sized=t in finalists) for t in first.trials], dtype, output,
                   bound, declared, progress=advance)
        first.fold(rest)
    for t in first.trials:
        if t not in finalists and t.failed is None:
            t.failed = "screened out (larger on the units screened)"
    return first


def decide_array(arr: Any, bound: Bound, compression: Compression, sample: int | None,
                 progress: Progress, cluster: Any = None,
                 readers: Readers = Readers(("zarr-python",)), salvage: Any = None,
                 force: bool = False, effort: str = "default",
                 own_padding: bool = True) -> Decision:
    """Survey, candidates, measurement: the decision for one array (see the module); with
    `salvage`, damaged chunks read as the fill value (zdt.engine.damage); an absolute bound
    above a tenth of the array's range is refused unless `force` (check_scale); `own_padding`
    False: another writer stores the chunks, edge chunks padded with the fill value."""
    from zdt.pipeline import workers

    path = "/" + arr.path
    dtype = np.dtype(arr.dtype)
    regions = arrays.storage_units(arr)
    unit_values = int(np.prod([s.stop - s.start for s in regions[0]])) if regions[0] else 1
    count = sample if sample is not None else arrays.default_sample(arr, len(regions), unit_values)
    keep = arrays.spread(len(regions), count)
    declared = arrays.sentinels_of(arr)
    packing = Packing.of(arr)
    digits = cand.GRID_DIGITS if (dtype.kind == "f" and packing is None) else ()
    # (every decimal grid, the finer ones too: the survey learns the step the data keep on
    # them, zdt.engine.candidates._own_grid)
    threads = workers(most=THREADS)
    scan = progress(f"scan {path}", len(regions))
    if cluster is not None:
        s = cluster.survey(arr, regions, dtype, declared.values, digits, keep, scan)
    else:
        s = survey(arrays.reader(arr, salvage), regions, dtype, sentinels=declared.values, grid_digits=digits,
                   keep=keep, workers=threads, progress=scan)
    if not force:
        check_scale(arr, bound, s, packing)
    base = dict(path=path, data_type=array_type_name(arr), shape=tuple(arr.shape), bound=bound)
    check = bound
    if packing is not None:
        check = packing.stored_bound(bound, dtype, s.lo, s.hi) if not s.empty else bound
        if check is None:
            return Decision(action="copy", why=f"{packing.describe()}; the {bound.describe()} "
                            f"allows no change to the stored numbers", **base)
        base["stored_bound"] = check
    ctx = cand.Context(dtype, s, check, declared.values, declared.fill_special,
                       arr.metadata.zarr_format, declared.masking, valid=declared.valid,
                       readers=readers, in_memory=not readers.filters, fill_value=arr.fill_value,
                       asked=bound if packing is not None else None,
                       first_slice=_first_slice(arr, check, readers, salvage), effort=effort,
                       sharded=bool(getattr(arr, "shards", None)))
    encodings = cand.candidates(ctx)
    if ctx.in_memory:
        encodings = [e.rounded_in_memory(dtype) for e in encodings]
    else:
        # a chain a reader of filters rejects (zarr-python's checks: zdt.engine.readers) keeps
        # its rounding, applied in memory, or is left out where that cannot be done
        encodings = [e if readers.reads_chain(e.filters, dtype.name, ctx.sharded)
                     else e.rounded_in_memory(dtype)
                     for e in encodings
                     if readers.in_memory or readers.reads_chain(e.filters, dtype.name, ctx.sharded)]
    narrower = (None if encodings else f"no encoding narrower than {dtype} keeps the "
                f"{bound.describe()} on this data")
    as_it_is = cand.Encoding(f"{narrower}; as it is (lossless)" if narrower else "as it is (lossless)",
                             (), None, dtype.name, True, preference=-1)
    trials = [Trial(e, b) for e in [as_it_is, *encodings]
              for b in back_ends(e, arr, compression, readers)]
    output = Output(arr.metadata.zarr_format, tuple(arr.chunks), arr.fill_value, own_padding)
    samples = [s.kept[i] for i in keep]
    all_measured = len(keep) == len(regions)
    run = cluster.measure if cluster is not None else partial(measure, workers=threads)
    m = screened(run, samples, trials, dtype, output, check, declared, all_measured,
                 progress(f"measure {path}", len(samples)))
    winner, runner_up = best(m, check, all_measured)
    measured_on = (f"all {len(regions)} storage unit{'s' * (len(regions) != 1)}" if all_measured
                   else f"{len(keep)} of {len(regions)} storage units")
    if winner is None:
        tried = "; ".join(f"{r.label}: " + (r.failed or f"error {r.error:.3g}")
                          for r in m.trials[:6])
        return Decision(action="copy", why=f"no encoding kept the {bound.describe()} "
                        f"(measured on {measured_on}: {tried})", **base)
    return _decision(arr, winner, runner_up, m, measured_on, packing, base, narrower)


def check_scale(arr: Any, bound: Bound, s: Any, packing: Packing | None) -> None:
    """An absolute bound above a tenth of the array's range (in the values a reader sees:
    CF-packed ones unpacked) is most likely in other units (metres for millimetres): a
    UsageError naming the array, its range and units, unless confirmed with force=True."""
    if bound.relative or s.empty or not s.hi > s.lo:
        return
    lo, hi = float(s.lo), float(s.hi)
    if packing is not None:
        lo, hi = sorted((lo * packing.scale + packing.offset, hi * packing.scale + packing.offset))
    if bound.value * 10 <= hi - lo:
        return
    units = arr.attrs.get("units")
    unit = f" {units}" if isinstance(units, str) and units.strip() else ""
    raise UsageError(f"/{arr.path}: the bound abs:{bound.value:g} is more than a tenth of the array's "
                     f"range ({lo:.6g} to {hi:.6g}{unit}): every value could change by that much. "
                     f"A bound is in the array's own units; give force=True to use this one")


def _first_slice(arr: Any, bound: Bound, readers: Readers, salvage: Any) -> np.ndarray | None:
    """The array's first slice along its leading dimensions (for zdt.predict's reference
    mask, zdt.engine.candidates._reference, under an absolute bound and for the types the
    codec takes) where its chunks span its last two dimensions, more than one chunk lies along
    the others, and every reader has zdt; else None, without reading anything (also where that
    slice cannot be read: the survey reports a damaged chunk itself)."""
    shape, chunks = tuple(arr.shape), tuple(arr.chunks)
    if (bound.relative or np.dtype(arr.dtype) not in cand.PREDICT_TYPES
            or arr.metadata.zarr_format != 3 or len(shape) < 3 or chunks[-2:] != shape[-2:]
            or min(shape[-2:]) < 2 or all(n <= c for n, c in zip(shape[:-2], chunks[:-2]))
            or not readers.decodes("zdt.predict") or salvage is not None):
        return None
    try:
        return np.asarray(arr[(0,) * (len(shape) - 2)])
    except Exception:       # (a damaged or missing store: the survey has read it, or failed)
        return None


def _decision(arr: Any, winner: Any, runner_up: Any, m: Any, measured_on: str,
              packing: Packing | None, base: dict, narrower: str | None) -> Decision:
    """The decision for the measured winner: encode with it, or copy the array as it is when
    it would not write fewer bytes than the array holds now (`narrower`: why only the array's
    own values were measured)."""
    bound = base["bound"]
    scale = arr.size / max(1, m.values)
    stored_now = arr.stored_bytes() if hasattr(arr, "stored_bytes") else stored_chunk_bytes(arr)
    physical = packing.physical_error if packing is not None else (lambda e: e)
    index = shard_index_bytes(arr)
    estimate = int(round(winner.nbytes * scale)) + index
    measured = {"bytes": estimate, "bytes_now": stored_now, "error": physical(winner.error),
                "on": measured_on, "label": winner.label, "values_measured": m.values}
    # every encoding measured, for the rate-distortion picture of the decision (zdt convert
    # --report): its bytes at the array's size and its largest error
    measured["candidates"] = [{"label": t.label, "bytes": int(round(t.nbytes * scale)) + index,
                               "error": physical(t.error)}
                              for t in m.trials if t.ok and t.sized and math.isfinite(t.error)]
    if runner_up is not None:
        measured["runner_up"] = {"label": runner_up.label,
                                 "bytes": int(round(runner_up.nbytes * scale)) + index,
                                 "error": physical(runner_up.error)}
    if stored_now and estimate >= stored_now:
        why = narrower or (f"no encoding keeping the {bound.describe()} writes fewer bytes than "
                           f"it holds now ({stored_now:,})")
        return Decision(action="copy", why=why, measured=measured, **base)
    why = winner.label + (f" ({packing.describe()})" if packing is not None else "")
    return Decision(action="encode", why=why, codecs=winner.codecs, measured=measured,
                    round_with=list(winner.encoding.rounding) or None, **base)


def shard_index_bytes(arr: Any) -> int:
    """The shard indexes the copy of a sharded array writes (zdt keeps the source's layout:
    16 bytes an inner chunk, and a crc32c of 4, in each shard); 0 unsharded."""
    shards = getattr(arr, "shards", None)
    if not shards:
        return 0
    n_shards = math.prod(-(-n // s) for n, s in zip(arr.shape, shards, strict=True))
    inner = math.prod(s // c for s, c in zip(shards, arr.chunks, strict=True))
    return n_shards * (16 * inner + 4)


def decide(arrays: list[Any], selection: Selection, compression: Compression,
           sample: int | None, progress: Progress, cluster: Any = None,
           readers: Readers = Readers(("zarr-python",)), salvage: Any = None,
           own_padding: bool = True) -> list[Decision]:
    coords = coordinates(arrays)
    selection.check_names(["/" + a.path for a in arrays],
                          {**coords, **{"/" + a.path: "0-d" for a in arrays if not a.shape}})
    decisions = []
    for arr in arrays:
        bound, named = selection.bound_for("/" + arr.path)
        why = fixed_reason(arr, bound, named, coords, selection)
        if why is not None:
            decisions.append(Decision("/" + arr.path, "copy", why, bound if named else None,
                                      data_type=array_type_name(arr), shape=tuple(arr.shape)))
            continue
        decisions.append(decide_array(arr, bound, compression, sample, progress, cluster, readers,
                                      salvage, selection.force, selection.effort, own_padding))
    return decisions
