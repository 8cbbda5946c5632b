"""``zdt convert SRC DST``: a re-encoded copy of a store or netCDF file, as a zarr store
(zdt.convert does the work).

What to do with each array comes from ``--plan FILE`` (``zdt suggest --json``, applied as
written), ``--codecs JSON`` (the same codecs for every numeric array), or a bound (decided as
``zdt suggest`` decides). DST appears only when the copy is complete; the source is only read.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from zdt.command.options import (add_scheduler_arg, add_selection_args, add_storage_args,
                                 bound_kwargs, progress_bars, say, storage_kwargs)


def run(args: argparse.Namespace) -> int:
    from zdt.engine.api import convert
    from zdt.errors import DAMAGED

    with progress_bars(args.quiet) as progress:
        report = convert(args.src, args.dst, args.plan, codecs=args.codecs,
                         **bound_kwargs(args), **storage_kwargs(args),
                         compressor=args.compressor, resume=args.resume,
                         scheduler=args.scheduler, on_damaged_chunk=args.on_damaged_chunk,
                         report=args.report, progress=progress)
    lines = str(report).splitlines()
    for line in lines if not args.quiet else lines[-1:]:
        say(line)
    if report.damaged:
        # the job is done and the copy is not whole: every damaged chunk on stderr (also in
        # the arrays' attributes, zdt_damaged_chunks), and a status of its own
        for d in report.damaged:
            print(f"zdt convert: {d.array} chunk {d.key} is damaged, written as the fill value: "
                  f"{d.reason}", file=sys.stderr)
        return DAMAGED
    return 0


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
                   "(s3://, gs://, az://, http(s)://, file://, icechunk://); or a netCDF-4 / "
                   "HDF5 / netCDF-3 file, read through xarray (CF-encoded as to_zarr writes it)")
    p.add_argument("dst", metavar="DST", help="the new store (must not exist, or be an empty "
                   "prefix of an object store)")
    add_storage_args(p)
    p.add_argument("--codecs", metavar="JSON", help="codecs for every numeric array")
    p.add_argument("--plan", metavar="FILE", help="apply the plan `zdt suggest --json` wrote")
    add_scheduler_arg(p, "the survey, the measurement and the writes")
    p.add_argument("--on-damaged-chunk", choices=("stop", "fill"), default="stop",
                   help="a source chunk that does not decode: stop (the default: one line naming "
                        "it, exit 1), or fill: write its elements as the array's fill value, list "
                        "every such chunk on stderr and in the array's attributes "
                        "(zdt_damaged_chunks), exit 4")
    p.add_argument("--resume", action="store_true",
                   help="finish a conversion that was stopped (killed, a lost node): the units it "
                        "wrote are checked against the source and kept, the rest written, with the "
                        "plan it recorded; refused if the source changed since (into Icechunk: "
                        "from the scratch branch's last checkpoint, refused if the branch moved)")
    p.add_argument("--report", metavar="FILE.html",
                   help="then compare the copy with the source and write a page of figures and "
                        "pictures there: errors, maps, histograms, spectra, the decision's bytes "
                        "against error (zdt compare's; needs matplotlib: pip install 'zdt[report]')")
    add_selection_args(p)
    p.set_defaults(run=run)
