"""``zdt suggest STORE[:ARRAY] (--abs-error E | --rel-error R | --bound PATH=...)``: for every
array, the encoding that writes the fewest bytes and keeps its bound, measured on the data
(zdt.suggest does the work); ``--json`` prints the plan ``zdt convert --plan`` applies."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from zdt.command.options import (add_scheduler_arg, add_selection_args, add_storage_args,
                                 bound_kwargs, progress_bars, storage_kwargs)


def run(args: argparse.Namespace) -> int:
    from zdt.engine.api import suggest
    from zdt.errors import DAMAGED

    with progress_bars(args.quiet) as progress:
        plan = suggest(args.path, **bound_kwargs(args), **storage_kwargs(args),
                       compressor=args.compressor or "auto", scheduler=args.scheduler,
                       on_damaged_chunk=args.on_damaged_chunk, progress=progress)
    print(plan.dumps() if args.json else plan)
    for d in plan.damaged:
        print(f"zdt suggest: {d.array} chunk {d.key} is damaged, read as the fill value: "
              f"{d.reason}", file=sys.stderr)
    if plan.damaged:
        return DAMAGED
    return 1 if plan.unmet else 0


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
                        "http(s)://) and optionally an array or group in it; or a netCDF-4 / "
                        "HDF5 / netCDF-3 file (FILE.nc[:VARIABLE], read through xarray)")
    add_storage_args(p)
    add_selection_args(p)
    add_scheduler_arg(p, "the survey and the measurement")
    p.add_argument("--on-damaged-chunk", choices=("stop", "fill"), default="stop",
                   help="a source chunk that does not decode: stop (the default), or read it as "
                        "the array's fill value, as convert --on-damaged-chunk fill writes it, and "
                        "list every one on stderr (exit status 4)")
    p.add_argument("--json", action="store_true",
                   help="print the plan as JSON (for zdt convert --plan) instead of the report")
    p.set_defaults(run=run)
