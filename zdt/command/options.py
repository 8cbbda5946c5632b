"""The options ``zdt suggest`` and ``zdt convert`` share (as zdt.suggest / zdt.convert
arguments), and their progress bars."""

from __future__ import annotations

import argparse
from typing import Any

from zdt.engine.progress import progress_bars  # noqa: F401  (the commands' bars)


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def add_selection_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--abs-error", type=float, metavar="E",
                   help="largest absolute error allowed (data units), for every numeric array")
    p.add_argument("--rel-error", type=float, metavar="R",
                   help="largest relative error allowed, |decoded - x| <= R |x|")
    p.add_argument("--bound", action="append", metavar="PATH=abs:E|rel:R",
                   help="the bound of the arrays PATH matches (a glob); repeatable; names a "
                        "coordinate to encode it too")
    p.add_argument("--include", action="append", metavar="GLOB",
                   help="only the arrays whose path matches (repeatable)")
    p.add_argument("--exclude", action="append", metavar="GLOB",
                   help="copy the arrays whose path matches as they are (repeatable)")
    p.add_argument("--compressor", metavar="C", help="auto (the default: serializer, pcodec or "
                   "bytes, and compressor chosen per array by the bytes they write), or the last "
                   "stage fixed: keep (each array's own), none, zstd[:LEVEL], "
                   "blosc[-CNAME][:LEVEL], gzip[:LEVEL] or zarr v3 codec JSON")
    p.add_argument("--readers", metavar="R[,R...]",
                   help="who reads the output: zarr-python (the default: zarr-python >= 3.2 with "
                        "numcodecs and pcodec), zdt, zarrs, tensorstore, or any; the encoding uses "
                        "only codecs all of them decode (for readers of no lossy filter, values "
                        "are rounded in memory and stored as plain numbers)")
    p.add_argument("--sample", type=positive_int, metavar="N",
                   help="measure sizes on N storage units spread over each array (default: all "
                        "of an array up to ~4M values, else ~4M values' worth); the range, NaN "
                        "and infinities always come from all of it, and every chunk written is "
                        "checked")
    p.add_argument("--force", action="store_true",
                   help="use bounds that look like a mistake: an absolute bound above a tenth of an "
                        "array's range (in other units?), a relative bound of 1 or more")
    p.add_argument("--effort", choices=("fast", "default", "max"), default="default",
                   help="how hard zdt.predict's encoder looks for the smallest chunk: fast, "
                        "default, or max (every predictor tried whole; slowest)")
    p.add_argument("--quiet", action="store_true",
                   help="no progress bars (and convert reports only where it wrote)")


def add_storage_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--storage-options", metavar="JSON",
                   help="fsspec options for URL stores, as zarr and xarray take them (for "
                        "example '{\"endpoint_url\": \"http://127.0.0.1:9000\"}'); without "
                        "it the usual environment (AWS_ENDPOINT_URL, credentials) applies")
    p.add_argument("--branch", default="main", metavar="NAME",
                   help="the branch of Icechunk repositories (icechunk://, icechunk+s3://) to read "
                        "or write (default main; a destination's is created from main if missing)")


def add_scheduler_arg(p: argparse.ArgumentParser, what: str) -> None:
    p.add_argument("--scheduler", metavar="ADDRESS",
                   help=f"run {what} on a dask.distributed cluster: a scheduler's address "
                        "(tcp://host:8786; 10 s to answer) or local:N for N local worker "
                        "processes; one task per storage unit, the same result")


def bound_kwargs(args: argparse.Namespace) -> dict[str, Any]:
    """The arguments zdt.suggest and zdt.convert share, from the options above."""
    return dict(abs_error=args.abs_error, rel_error=args.rel_error, bounds=args.bound,
                include=args.include, exclude=args.exclude, sample=args.sample,
                readers=args.readers, force=args.force, effort=args.effort)


def storage_kwargs(args: argparse.Namespace) -> dict[str, Any]:
    from zdt.stores.location import parse_storage_options

    return dict(storage_options=parse_storage_options(args.storage_options), branch=args.branch)


def say(line: str) -> None:
    """A line on stdout; a reader that went away is not an error (the work is done)."""
    try:
        print(line, flush=True)
    except BrokenPipeError:
        pass
