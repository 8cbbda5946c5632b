"""The options ``zdt suggest`` and ``zdt convert`` share, and their progress bars."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from zdt.command.bounds import Bound
from zdt.command.errors import CommandError
from zdt.command.plan import Selection


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
    p.add_argument("--compressor", metavar="C", help="keep (each array's own, the default), none, "
                   "zstd[:LEVEL], blosc[-CNAME][:LEVEL], gzip[:LEVEL] or zarr v3 codec JSON; "
                   "candidates are compared by the bytes they write with it")
    p.add_argument("--sample", type=positive_int, metavar="N",
                   help="measure sizes on N storage units spread over each array (default: all "
                        "of an array up to ~4M values, else ~4M values' worth); the range, NaN "
                        "and infinities always come from all of it, and every chunk written is "
                        "checked")
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


def selection_of(args: argparse.Namespace, *, required: bool = True) -> Selection:
    if args.abs_error is not None and args.rel_error is not None:
        raise CommandError("give at most one of --abs-error and --rel-error")
    default = (Bound("abs", float(args.abs_error)) if args.abs_error is not None else
               Bound("rel", float(args.rel_error)) if args.rel_error is not None else None)
    selection = Selection.parse(args.include, args.exclude, args.bound, default)
    if required and default is None and not selection.bounds:
        raise CommandError("give a bound: --abs-error E, --rel-error R, or --bound PATH=abs:E")
    return selection


@contextmanager
def progress_bars(quiet: bool) -> Iterator[Callable[[str, int], Callable[[int], None]]]:
    """`make(label, total)` -> advance(n): one bar per pass (shown at once on a terminal,
    never when --quiet or when stderr is not a terminal)."""
    from tqdm import tqdm

    bars: list[Any] = []

    def make(label: str, total: int) -> Callable[[int], None]:
        for bar in bars:
            bar.close()
        bars.clear()
        bar = tqdm(total=total, desc=label, unit="unit", disable=True if quiet else None,
                   leave=False, mininterval=0.2)
        bars.append(bar)
        return bar.update

    try:
        yield make
    finally:
        for bar in bars:
            bar.close()
