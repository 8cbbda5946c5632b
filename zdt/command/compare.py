"""``zdt compare SRC DST [ARRAY...]``: what an encoding did to the data (zdt.compare does the
work): per array, the errors, PSNR, R^2, DSSIM, the spectral error and ClimateBenchPress's
pass/fail checks (docs/compare.md)."""

from __future__ import annotations

import argparse
import json
import math
import sys
from typing import Any

from zdt.command.options import add_storage_args, positive_int, progress_bars, say, storage_kwargs


def _num(v: float | None, digits: int = 4) -> str:
    if v is None:
        return "-"
    if not math.isfinite(v):
        return "inf" if v > 0 else ("-inf" if v < 0 else "nan")
    return f"{v:.{digits}g}"


def _verdict(check: dict) -> str:
    return {True: "pass", False: "FAIL", None: "not decided"}[check["passed"]]


def lines_of(name: str, f: dict[str, Any]) -> list[str]:
    """The table `zdt compare` prints for one array."""
    c = f["checks"]
    bound = c["bound"]
    rel = c["rel_error_share"]
    share = "-" if rel["value"] is None else f"{100 * rel['value']:.3g}%"
    psnr = "-" if f["psnr"] is None else ("inf (identical)" if math.isinf(f["psnr"]) else f"{f['psnr']:.2f} dB")
    return [
        name,
        f"  errors   max abs {_num(f['max_abs_error'])}, max rel {_num(f['max_rel_error'])}, "
        f"mean abs {_num(f['mean_abs_error'])}, rmse {_num(f['rmse'])}, bias {_num(f['bias'])}",
        f"  fidelity psnr {psnr}, r2 {_num(f['r2'], 8)}, dssim {_num(f['dssim'], 6)}, "
        f"spectral error {_num(f['spectral_error'])}",
        "  checks   " + "; ".join([
            (f"bound {bound['bound']} (largest {_num(bound['largest_error'])}): {_verdict(bound)}"
             if bound["bound"] else "bound: not decided (give --abs-error, --rel-error or --bound)"),
            f"{share} of points above relative error {rel['threshold']:g} (< {100 * rel['most']:g}%): "
            f"{_verdict(rel)}",
            f"r2 > {c['r2']['least']}: {_verdict(c['r2'])}"]),
    ]


def run(args: argparse.Namespace) -> int:
    from zdt.engine.compare import compare, to_json

    with progress_bars(args.quiet) as progress:
        result = compare(args.src, args.dst, args.arrays or None, abs_error=args.abs_error,
                         rel_error=args.rel_error, bounds=args.bound, slices=args.slices,
                         html=args.html, progress=progress, **storage_kwargs(args))
    figures = result["arrays"]
    if args.json:
        json.dump(to_json(result), sys.stdout, indent=2)
        print()
    if not figures:
        print(f"zdt compare: no numeric array is in both {args.src} and {args.dst}", file=sys.stderr)
        return 1
    if not args.json:
        for i, (name, f) in enumerate(figures.items()):
            if i:
                say("")
            for line in lines_of(name, f):
                say(line)
    verdict, failed = summary(figures, args.strict)
    if not args.json:
        say("")
        say(verdict)
    return 1 if failed else 0


def summary(figures: dict[str, Any], strict: bool) -> tuple[str, bool]:
    """The last line: whether every bound holds (and, with --strict, every check passes),
    and whether the comparison failed (exit 1: a script's gate)."""
    over = [name for name, f in figures.items() if f["checks"]["bound"]["passed"] is False]
    checks = [f"{name} ({key})" for name, f in figures.items() for key, c in f["checks"].items()
              if key != "bound" and c["passed"] is False]
    decided = any(f["checks"]["bound"]["passed"] is not None for f in figures.values())
    if over:
        return f"FAIL: {', '.join(over)} beyond {'its' if len(over) == 1 else 'their'} bound", True
    if strict and checks:
        return f"FAIL (--strict): {', '.join(checks)}", True
    if not decided:
        return (f"no bound given: nothing failed or passed ({len(figures)} array"
                f"{'s' * (len(figures) != 1)} compared; --abs-error, --rel-error or --bound decide)"), False
    note = f"; checks that failed (informative without --strict): {', '.join(checks)}" if checks else ""
    return f"pass: every array within its bound{note}", False


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "compare", help="what an encoding did to the data: errors, PSNR, R^2, DSSIM, spectra",
        description="Reads every numeric array present in both SRC and DST (or the ARRAYs named), "
                    "storage unit by storage unit in bounded memory, and prints per array the "
                    "errors of DST's values against SRC's (max abs / rel, mean abs, rmse, bias), "
                    "PSNR, R^2, DSSIM and the spectral error of up to --slices 2-d slices, and "
                    "ClimateBenchPress's pass/fail checks. NaN, infinities and missing values "
                    "must sit at the same places in both (else one line naming the first "
                    "difference, exit 1). The last line says whether every array keeps its "
                    "bound; exit 1 when one does not (a gate for scripts). docs/compare.md "
                    "defines every figure.")
    p.add_argument("src", metavar="SRC", help="the original store (a directory, a .zip file or a "
                   "URL), optionally :ARRAY or :GROUP; or the netCDF file it was converted from")
    p.add_argument("dst", metavar="DST", help="the store to compare with it (a zdt convert output)")
    p.add_argument("arrays", metavar="ARRAY", nargs="*",
                   help="the arrays to compare, by path (/t2m; default: every numeric array in both)")
    add_storage_args(p)
    p.add_argument("--abs-error", type=float, metavar="E",
                   help="the absolute bound the bound check checks (every array)")
    p.add_argument("--rel-error", type=float, metavar="R",
                   help="the relative bound the bound check checks, |decoded - x| <= R |x|")
    p.add_argument("--bound", action="append", metavar="PATH=abs:E|rel:R",
                   help="the bound of the arrays PATH matches (a glob); repeatable")
    p.add_argument("--slices", type=positive_int, default=16, metavar="N",
                   help="2-d slices (the last two axes) that DSSIM and the spectral error read, "
                        "evenly spread (default 16)")
    p.add_argument("--json", action="store_true",
                   help='print {"arrays": {PATH: {figure: value, ..., "checks": {...}}}}')
    p.add_argument("--html", metavar="FILE", help="also write a page of figures and pictures there "
                   "(maps, errors, histograms, spectra; needs matplotlib: pip install 'zdt[report]')")
    p.add_argument("--strict", action="store_true",
                   help="exit 1 when a ClimateBenchPress check fails too (without it they inform; "
                        "a bound that does not hold always exits 1)")
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    p.set_defaults(run=run)
