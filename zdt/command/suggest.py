"""``zdt suggest PATH[:ARRAY] (--abs-error E | --rel-error R | --bound PATH=...)``: for every
array, the encoding that writes the fewest bytes and keeps its bound, measured on the data
(zdt.command.decide does the work); ``--json`` prints the plan ``zdt convert --plan`` applies."""

from __future__ import annotations

import argparse
import json
from typing import Any

from zdt.command import store
from zdt.command.location import parse_storage_options
from zdt.command.compressors import Compression
from zdt.command.decide import decide, fmt_error
from zdt.command.errors import CommandError
from zdt.command.options import (add_scheduler_arg, add_selection_args, add_storage_args, progress_bars,
                                 selection_of)
from zdt.command.plan import Decision, Plan


def report(d: Decision, arr: Any, compression: Compression) -> list[str]:
    head = f"{d.path}: {store.data_type_name(arr)} {tuple(arr.shape)}, {store.fmt_bytes(arr.nbytes)}"
    if d.action == "copy":
        return [f"{head}; copied: {d.why}"]
    m = d.measured
    now = m.get("bytes_now", 0)
    saved = f" ({(now - m['bytes']) / now:.1%} fewer than the {store.fmt_bytes(now)} it holds now)" if now else ""
    comp = "" if compression.kind == "keep" else f" with --compressor {compression}"
    lines = [
        f"{head}; {d.bound.describe()}",
        f"  encode   {d.why}",
        f"  codecs   {json.dumps(d.codecs)}",
        f"  on disk  {store.fmt_bytes(m['bytes'])}{saved}{comp}",
    ]
    if "runner_up" in m:
        r = m["runner_up"]
        lines.append(f"  runner-up {r['label']}: {store.fmt_bytes(r['bytes'])}")
    lines.append(f"  error    {fmt_error(m['error'])} largest {d.bound.kind} error, measured on "
                 f"{m['on']} ({m['values_measured']:,} values); bound {d.bound.value:g}")
    return lines


def unmet(d: Decision) -> bool:
    """An array that was to be encoded but no encoding kept its bound."""
    return d.action == "copy" and d.why.startswith("no encoding kept")


def run(args: argparse.Namespace) -> int:
    selection = selection_of(args)
    compression = Compression.parse(args.compressor)
    loc, inner = store.split_target(args.path, parse_storage_options(args.storage_options), args.branch)
    node = store.open_node(loc, inner)
    arrays = [n for _, n in store.walk(node) if store.is_array(n)]
    if store.is_array(node):
        if node.size == 0:
            raise CommandError(f"{args.path}: the array has no elements: nothing to suggest")
        if node.ndim == 0:
            raise CommandError(f"{args.path}: a 0-d array (one value): nothing to suggest")
        if not store.is_numeric(node):
            raise CommandError(f"{args.path}: zdt suggest needs integer or float data; this array "
                               f"is {store.data_type_name(node)}")
    elif not arrays:
        raise CommandError(f"{args.path}: no arrays")
    cluster = None
    try:
        if args.scheduler:
            from zdt.command.cluster import Cluster

            cluster = Cluster(args.scheduler)
            cluster.source = loc
        with progress_bars(args.quiet) as progress:
            decisions = decide(arrays, selection, compression, args.sample, progress, cluster)
    finally:
        if cluster is not None:
            cluster.close()
    plan = Plan(loc.text, str(compression), decisions)
    if args.json:
        print(plan.dumps())
    else:
        out = []
        for d, arr in zip(decisions, arrays, strict=True):
            out += report(d, arr, compression)
        print("\n".join(out))
    return 1 if any(unmet(d) for d in decisions) else 0


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "suggest", help="the smallest encoding of each array that keeps an error bound",
        description="Reads every array once (range, NaN, infinities) and measures candidate "
                    "encodings on its chunks with the compressor the output will use: the one "
                    "that writes the fewest bytes and keeps the bound wins. Coordinates (1-d "
                    "arrays named like a dimension, arrays in a 'coordinates' attribute, CF "
                    "bounds) and integers under a relative bound are kept exact. Prints, per "
                    "array, the codecs, the bytes on disk, the runner-up and the error measured; "
                    "--json prints the plan `zdt convert --plan` applies as written.")
    p.add_argument("path", metavar="STORE[:ARRAY]",
                   help="a zarr store (a directory, a .zip file or a URL: s3://, gs://, az://, "
                        "http(s)://) and optionally an array or group in it")
    add_storage_args(p)
    add_selection_args(p)
    add_scheduler_arg(p, "the survey and the measurement")
    p.add_argument("--json", action="store_true",
                   help="print the plan as JSON (for zdt convert --plan) instead of the report")
    p.set_defaults(run=run)
