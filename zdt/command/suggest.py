"""``zdt suggest PATH[:ARRAY] (--abs-error E | --rel-error R)``: the smallest encoding that
keeps the bound, measured on the data (zdt.command.encoding_search does the work)."""

from __future__ import annotations

import argparse
import json
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from zdt.command import encoding_search as engine
from zdt.command import store
from zdt.command.errors import CommandError


@dataclass
class Plan:
    """The verdict on one array."""

    arr: Any
    result: engine.Result | None
    reason: str                     # why there is no result, or what was measured
    bound: float
    relative: bool

    @property
    def path(self) -> str:
        return "/" + self.arr.path


def measure_array(arr: Any, bound: float, relative: bool, sample: int | None = None) -> Plan:
    """Read the array (or `sample` of its storage units): statistics, candidates, measurement."""
    path = "/" + arr.path
    if not store.is_numeric(arr):
        raise CommandError(f"{path}: zdt suggest needs integer or float data; this array is "
                           f"{store.data_type_name(arr)}")
    dtype = np.dtype(arr.dtype)
    regions, total = store.chunk_regions(arr, sample)
    stats = engine.Stats(dtype)
    for block in store.blocks(arr, regions):
        stats.add(block)
    fill = arr.fill_value
    fill = None if fill is None else np.asarray(fill, dtype=dtype)[()]
    stats.add_value(fill)
    fmt = arr.metadata.zarr_format
    try:
        candidates = (engine.relative_candidates if relative else engine.absolute_candidates)(
            stats, bound, fmt)
    except engine.SuggestError as exc:
        raise CommandError(f"{path}: {exc}") from None
    measured = f"all {total} chunks" if len(regions) == total else f"{len(regions)} of {total} chunks"
    if not candidates:
        return Plan(arr, None, f"no {'float' if relative else 'integer'} type narrower than "
                    f"{dtype} can hold this data", bound, relative)
    results, failed = engine.measure(store.blocks(arr, regions), candidates, fill, relative, bound)
    chosen = engine.best(results, bound)
    if chosen is None:
        tried = ", ".join(f"{r.encoding.target} {_err(r.error, relative)}" for r in results)
        dropped = ", ".join(f"{label} ({why})" for label, why in failed.items())
        reason = (f"no encoding keeps {'relative' if relative else 'absolute'} error {bound:g}; "
                  f"measured: {tried or 'none'}" + (f"; failed: {dropped}" if dropped else ""))
        return Plan(arr, None, reason, bound, relative)
    return Plan(arr, chosen, f"measured on {measured} ({stats.count:,} values)", bound, relative)


def _err(value: float, relative: bool) -> str:
    if math.isinf(value):
        return "(did not keep NaN / infinities / zeros)"
    return f"{value:.3g}"


def report(plan: Plan) -> list[str]:
    r, arr = plan.result, plan.arr
    kind = "relative" if plan.relative else "absolute"
    logical = arr.nbytes
    head = (f"{plan.path}: {arr.dtype} {tuple(arr.shape)}, {store.fmt_bytes(logical)}; "
            f"{kind} error <= {plan.bound:g}")
    if r is None:
        return [head, f"  nothing suggested: {plan.reason}"]
    enc = r.encoding
    stored = enc.stored_bytes(store.product(arr.shape))
    saved = logical - stored
    return [
        head,
        f"  suggest  {enc.label}" + (" + packbits" if enc.serializer else ""),
        f"  codecs   {json.dumps(enc.codecs)}",
        f"  bytes    {store.fmt_bytes(stored)} uncompressed ({enc.bits} bits per value), saves "
        f"{store.fmt_bytes(saved)} ({saved / logical:.1%}) of {store.fmt_bytes(logical)}",
        f"  error    {r.error:.3g} largest {kind} error measured ({plan.reason}); bound {plan.bound:g}",
    ]


def bound_of(args: argparse.Namespace) -> tuple[float, bool]:
    if (args.abs_error is None) == (args.rel_error is None):
        raise CommandError("give exactly one of --abs-error and --rel-error")
    return (args.rel_error, True) if args.rel_error is not None else (args.abs_error, False)


def run(args: argparse.Namespace) -> int:
    bound, relative = bound_of(args)
    path, inner = store.split_target(args.path)
    node = store.open_node(path, inner)
    arrays = [n for _, n in store.walk(node) if store.is_array(n)]
    if not store.is_array(node):        # a group: its numeric arrays
        arrays = [a for a in arrays if store.is_numeric(a)]
        if not arrays:
            raise CommandError(f"{args.path}: no integer or float arrays")
    plans = [measure_array(a, bound, relative, args.sample) for a in arrays]
    out = []
    for plan in plans:
        out += report(plan) + [""]
    print("\n".join(out).rstrip())
    if args.json:
        print(json.dumps([{"path": p.path, "codecs": p.result.encoding.codecs if p.result else None,
                           "error": p.result.error if p.result else None} for p in plans]))
    return 1 if any(p.result is None for p in plans) else 0


def add_bound_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--abs-error", type=float, metavar="E",
                   help="largest absolute error allowed (data units)")
    p.add_argument("--rel-error", type=float, metavar="R",
                   help="largest relative error allowed, |decoded - x| <= R |x|")


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "suggest", help="the smallest encoding of an array that keeps an error bound",
        description="Reads the data (or --sample chunks of it) and proposes the smallest encoding "
                    "that keeps the bound: [scale_offset, cast_value] to the narrowest integer "
                    "type for an absolute error, the narrowest float format for a relative one. "
                    "Prints the codec JSON, the bytes saved and the error measured on the data; "
                    "never suggests an encoding whose measured error breaks the bound.")
    p.add_argument("path", metavar="PATH[:ARRAY]",
                   help="a local zarr store and optionally an array in it (else every numeric array)")
    add_bound_args(p)
    p.add_argument("--sample", type=int, metavar="N",
                   help="measure on N chunks spread over the array instead of all of it")
    p.add_argument("--json", action="store_true", help="also print the codecs as one JSON line")
    p.set_defaults(run=run)
