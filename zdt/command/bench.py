"""``zdt bench``: run the scripts of the repository's ``bench/`` directory, then write a Markdown
report and one PNG plot per family (each implementation's time as a multiple of the copy
floor, zdt's bars in colour), so where zdt stands is visible at a glance.

Each script saves what it prints as JSON when ZDT_BENCH_JSON names a file (bench/_common.py);
this module only runs them and draws. The scripts are bench/ of the repository, installed as
the package zdt.bench, so this runs from a wheel as from a checkout (--bench-dir: others).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from zdt.errors import InputError, UsageError

RERUNS = 2             # --against: how many more runs a family with a slow row gets
RERUN_PAUSE = 10.0     # seconds before each
# --against: a row whose zdt time or floor is under SHORT seconds (in this run or the baseline)
# moves data that fits in cache, where even a copy's time moves ~2x from run to run (np.copyto of
# 8 MB: 0.22-0.41 ms back to back); such rows are held to SHORT_TOLERANCE, not --tolerance.
# --quick sizes keep that to a few rows whose input is 1 or 2 bytes per element (8M elements).
SHORT = 1e-3
SHORT_TOLERANCE = 2.0

# family -> (script, title, the script's arguments under --quick; without it, its defaults)
FAMILIES: dict[str, tuple[str, str, list[str]]] = {
    "cast": ("bench_cast.py", "cast_value", ["--n", "8000000", "--repeat", "3", "--no-threads"]),
    "cast_matrix": ("bench_cast_matrix.py", "cast_value, every pair and rounding mode",
                    ["--n", "4000000", "--repeat", "3"]),
    "scale_offset": ("bench_scale_offset.py", "scale_offset", ["--n", "8000000", "--repeat", "3"]),
    "lowprec": ("bench_lowprec.py", "low-precision types (cast_value, packbits)",
                ["--n", "8000000", "--repeat", "3"]),
    "strings": ("bench_vlen.py", "strings and bytes", ["--n", "200000", "--repeat", "3"]),
    "pipeline": ("bench_pipeline.py", "end to end through zarr (codec pipelines)",
                 ["--n", "10000000", "--chunk", "1000000", "--compressors", "none,zstd1",
                  "--tensorstore-n", "10000000", "--repeat", "5"]),
    "bitround": ("bench_bitround.py", "bitround", ["--n", "8000000", "--repeat", "3"]),
    "convert": ("bench_convert.py", "zdt convert against a plain zarr rewrite",
                ["--n", "5000000", "--chunk", "500000", "--repeat", "1"]),
    "xarray": ("bench_xarray.py", "the Python API on a lazy Dataset against the command",
               ["--n", "5000000", "--chunk", "500000", "--repeat", "1"]),
    # the prediction codec against SZ3 (not part of --quick: it has no committed baseline yet)
    "predict": ("bench_predict.py", "zdt.predict against SZ3", []),
    # bytes, not times: not part of --quick (nor of CI's speed check); a table and one
    # rate-distortion plot per dataset
    "bytes": ("bench_bytes.py", "bytes on disk at the same bound", []),
}
BYTES_ONLY = ("bytes",)         # families that measure bytes
NOT_QUICK = ("predict", *BYTES_ONLY)    # families left out of --quick


def find_bench_dir(given: str | None) -> Path:
    """--bench-dir if given, else the installed scripts (zdt.bench: bench/ of the repository)."""
    if given:
        path = Path(given).resolve()       # (the scripts run with it as their directory)
        if not (path / "_common.py").is_file():
            raise InputError(f"{path}: no bench scripts there (no _common.py)")
        return path
    from importlib.util import find_spec

    spec = find_spec("zdt.bench")
    if spec is not None and spec.submodule_search_locations:
        path = Path(list(spec.submodule_search_locations)[0])
    else:           # the source tree itself on sys.path: the checkout's bench/
        path = Path(__file__).resolve().parents[2] / "bench"
    if not (path / "_common.py").is_file():
        raise InputError(f"the bench scripts are missing from this install ({path})")
    return path


def run_family(bench_dir: Path, family: str, quick: bool, out: Path) -> dict | None:
    script, title, quick_args = FAMILIES[family]
    with tempfile.TemporaryDirectory() as tmp:
        data_file = Path(tmp) / "results.json"
        env = dict(os.environ, ZDT_BENCH_JSON=str(data_file))
        argv = [sys.executable, str(bench_dir / script), *(quick_args if quick else [])]
        t0 = time.perf_counter()
        print(f"running {script} {' '.join(argv[2:])}".rstrip(), flush=True)
        proc = subprocess.run(argv, cwd=bench_dir, env=env, capture_output=True, text=True)
        (out / f"{family}.txt").write_text(proc.stdout + proc.stderr)
        if proc.returncode != 0:
            last = (proc.stderr.strip().splitlines() or ["(no output)"])[-1]
            print(f"  {script} failed ({last}); its output is in {out / (family + '.txt')}")
            return None
        print(f"  done in {time.perf_counter() - t0:.0f} s")
        if not data_file.exists():
            return None
        data = json.loads(data_file.read_text())
    data["family"], data["title"] = family, title
    (out / f"{family}.json").write_text(json.dumps(data, indent=1))
    return data


def slowest_of(runs: list[dict]) -> dict:
    """Several runs of one family as one: per row, the run with the highest zdt / floor ratio,
    and the highest zdt allocating / fresh floor ratio (its fresh floor scaled to give it). A
    baseline for --against made this way holds what this machine does on a bad run, so a
    noisy run does not fail the check and a real slowdown still does."""
    merged = dict(runs[0], results=[], runs=len(runs))
    by_title: dict[str, list[dict]] = {}
    for data in runs:
        for row in data["results"]:
            by_title.setdefault(row["title"], []).append(row)
    for row in runs[0]["results"]:
        rows = by_title[row["title"]]
        worst = dict(max(rows, key=ratio))
        fresh = [f for f in map(fresh_ratio, rows) if f is not None]
        if fresh:
            t = worst["times"].get(ALLOC, ours(worst))
            worst["fresh_floor"] = t / max(fresh)
        merged["results"].append(worst)
    return merged


def _fmt(seconds: float) -> str:
    return f"{seconds * 1e3:.2f}" if seconds < 0.1 else f"{seconds * 1e3:.1f}"


ALLOC = "zdt (allocating)"       # bench/_common.ALLOC: the row a fresh floor is for


def fresh_ratio(row: dict) -> float | None:
    """zdt returning a new array over the fresh floor (copying into new memory), if measured."""
    if not row.get("fresh_floor"):
        return None
    return alloc_time(row) / row["fresh_floor"]


def alloc_time(row: dict) -> float:
    """zdt's time returning a new array (its own time where the row has no such entry)."""
    return row["times"].get(ALLOC, ours(row))


def table(data: dict) -> list[str]:
    lines = ["| workload | zdt (ms) | fastest peer | peer (ms) | peer / zdt | zdt / copy floor "
             "| zdt allocating / fresh floor |",
             "|---|---:|---|---:|---:|---:|---:|"]
    for r in data["results"]:
        zdt_t = ours(r)
        peers = {k: v for k, v in r["times"].items() if k in r["peers"]}
        if peers:
            name, t = min(peers.items(), key=lambda kv: kv[1])
            peer = f"{name} | {_fmt(t)} | {t / zdt_t:.2f}x"
        else:
            peer = "- | - | -"
        fresh = fresh_ratio(r)
        lines.append(f"| {r['title']} | {_fmt(zdt_t)} | {peer} | {ratio(r):.2f} | "
                     f"{'-' if fresh is None else f'{fresh:.2f}'} |")
    return lines


def plot(data: dict, path: Path) -> bool:
    if data["results"] and data["results"][0].get("kind") == "bytes":
        return plot_bytes(data, path)
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        import matplotlib.ticker
    except ImportError:
        return False
    rows = data["results"]
    names = sorted({k for r in rows for k in r["times"]}, key=lambda k: (not k.startswith("zdt"), k))
    height = max(3.5, 0.34 * sum(len(r["times"]) for r in rows) + 0.5 * len(rows) + 1.2)
    fig, ax = plt.subplots(figsize=(10, height))
    y, ticks, labels = 0.0, [], []
    cmap = plt.get_cmap("tab10")
    colors = {n: cmap(i % 10) for i, n in enumerate(names)}
    seen = set()
    for r in rows:
        start = y
        for name in names:
            if name not in r["times"]:
                continue
            ratio = r["times"][name] / r["floor"]
            zdt = name.startswith("zdt") or name == r["ours"]
            ax.barh(y, ratio, color=colors[name], edgecolor="black" if zdt else "none",
                    hatch=None if zdt else "//", alpha=1.0 if zdt else 0.55,
                    label=None if name in seen else name)
            seen.add(name)
            ax.text(ratio, y, f" {ratio:.2f}", va="center", fontsize=7)
            y += 1
        ticks.append((start + y - 1) / 2)
        labels.append(r["title"][:48])
        y += 0.8
    ax.axvline(1.0, color="black", linewidth=1)
    ax.set_xscale("log")
    ax.set_yticks(ticks, labels, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("time / copy floor (log scale; 1 = copying the same bytes; lower is better)")
    ax.set_title(f"zdt bench: {data['title']}\n{data['machine']}", fontsize=9)
    plain = matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:g}")
    ax.xaxis.set_major_formatter(plain)
    ax.xaxis.set_minor_formatter(plain)
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.12), ncol=3, frameon=False)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return True


def bytes_rows(data: dict) -> list[str]:
    """A bytes family as a table: per dataset and bound, every method's bytes (struck out
    where it broke the bound), zdt's in bold."""
    methods: list[str] = []
    for r in data["results"]:
        methods += [m for m in r["results"] if m not in methods]
    lines = ["| data | bound | " + " | ".join(methods) + " |",
             "|---|---|" + "---:|" * len(methods)]
    for r in data["results"]:
        kind, value = r["bound"]
        cells = []
        for m in methods:
            res = r["results"].get(m)
            if res is None:
                cells.append("-")
                continue
            n = f"{res['bytes']:,}"
            cells.append(f"**{n}**" if m == "zdt" else (n if res["ok"] else f"~~{n}~~"))
        shown = f"{kind} {value:g}" + (f" {r['unit']}" if kind == "abs" else "")
        lines.append(f"| {r['dataset']} | {shown} | " + " | ".join(cells) + " |")
    return lines


def plot_bytes(data: dict, path: Path) -> bool:
    """Rate-distortion: per dataset, bits per value against the largest error (absolute
    bounds), one line per method, zdt's drawn bold."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    by_dataset: dict[str, list[dict]] = {}
    for r in data["results"]:
        if r["bound"][0] == "abs":
            by_dataset.setdefault(r["dataset"], []).append(r)
    if not by_dataset:
        return False
    n = len(by_dataset)
    cols = min(3, n)
    rows = -(-n // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(4.6 * cols, 3.6 * rows), squeeze=False)
    for ax, (name, rs) in zip(axes.flat, by_dataset.items()):
        methods = sorted({m for r in rs for m in r["results"]}, key=lambda m: (not m.startswith("zdt"), m))
        for m in methods:
            pts = sorted((r["results"][m]["error"], 8 * r["results"][m]["bytes"] / r["values"])
                         for r in rs if m in r["results"] and r["results"][m]["ok"]
                         and r["results"][m]["error"] > 0)
            if pts:
                ax.plot(*zip(*pts), marker="o", markersize=3, label=m,
                        linewidth=2.2 if m == "zdt" else 1, color="black" if m == "zdt" else None)
        ax.set_xscale("log")
        ax.set_title(name[:60], fontsize=8)
        ax.set_xlabel(f"largest error ({rs[0]['unit']})", fontsize=7)
        ax.set_ylabel("bits per value", fontsize=7)
        ax.tick_params(labelsize=7)
        ax.legend(fontsize=6)
    for ax in list(axes.flat)[n:]:
        ax.axis("off")
    fig.suptitle(f"zdt bench: {data['title']}\n{data['machine']}", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return True


def report(results: list[dict], out: Path, quick: bool) -> Path:
    lines = ["# zdt bench report", ""]
    if results:
        run_kind = ("Quick run (--quick: smaller inputs, fewer repeats)." if quick
                    else "Full-size runs.")
        lines += [f"Machine: {results[0]['machine']}. {run_kind} Times are medians; "
                  "\"peer / zdt\" > 1 means zdt is faster; the copy floor is copying the same "
                  "bytes (for the pipeline: copying the input on write, filling a fresh output "
                  "once on read).", ""]
    for data in results:
        command = " ".join(["python", f"bench/{data['script']}", *data["argv"]])
        lines += [f"## {data['title']}", "", f"`{command}`", ""]
        if (out / f"{data['family']}.png").exists():
            lines += [f"![{data['title']}]({data['family']}.png)", ""]
        kind = data["results"][0].get("kind") if data["results"] else None
        lines += (bytes_rows(data) if kind == "bytes" else table(data)) + [""]
    path = out / "report.md"
    path.write_text("\n".join(lines))
    return path


def ours(row: dict) -> float:
    """A row's zdt time (seconds)."""
    return row["times"][row["ours"]]


def ratio(row: dict) -> float:
    """A row's zdt time over its floor: what --against compares (ratios, not times, so a
    busier machine moves both)."""
    return ours(row) / row["floor"]


def compare(data: dict, baseline_dir: Path, tolerance: float) -> dict[tuple[str, str], str]:
    """The rows of one family whose zdt / floor ratio (or zdt allocating / fresh floor) is above
    `tolerance` times the baseline's (SHORT_TOLERANCE for a row whose zdt time or floor is
    under SHORT seconds) while zdt's own time is above the baseline's, or that the baseline
    lacks, or that this run lost: (title, what) -> the line to print."""
    family = data["family"]
    path = baseline_dir / f"{family}.json"
    if not path.exists():
        return {("", "baseline"): f"{family}: no baseline {path}"}
    base = {r["title"]: r for r in json.loads(path.read_text())["results"]}
    now = {r["title"]: r for r in data["results"]}
    bad = {(t, "lost"): f"{family}: '{t}' is in the baseline but not in this run"
           for t in base if t not in now}
    for title, row in now.items():
        if title not in base:
            bad[(title, "new")] = f"{family}: '{title}' is not in the baseline {path}"
            continue
        short = min(ours(row), ours(base[title]), row["floor"], base[title]["floor"]) < SHORT
        tol = max(tolerance, SHORT_TOLERANCE) if short else tolerance
        why = f"more than {tol:g}x" + (f", a row or floor under {SHORT * 1e3:g} ms" if short else "")
        # a ratio that grew only because the floor ran faster than in the baseline's run (a
        # 32 MB copy's time moves up to 2x between days on this VM) is not a regression: zdt's
        # own time must have grown too
        if ratio(row) > tol * ratio(base[title]) and ours(row) > ours(base[title]):
            bad[(title, "floor")] = (f"{family}: '{title}': zdt / floor {ratio(row):.2f}, "
                                     f"baseline {ratio(base[title]):.2f} ({why})")
        now_f, base_f = fresh_ratio(row), fresh_ratio(base[title])
        if (now_f is not None and base_f is not None and now_f > tol * base_f
                and alloc_time(row) > alloc_time(base[title])):
            bad[(title, "fresh")] = (f"{family}: '{title}': zdt allocating / fresh floor "
                                     f"{now_f:.2f}, baseline {base_f:.2f} ({why})")
    return bad


def run(args: argparse.Namespace) -> int:
    bench_dir = find_bench_dir(args.bench_dir)
    families = (args.only.split(",") if args.only else
                [f for f in FAMILIES if not (args.quick and f in NOT_QUICK)])
    unknown = [f for f in families if f not in FAMILIES]
    if unknown:
        raise UsageError(f"--only {','.join(unknown)}: not a family (choose from {', '.join(FAMILIES)})")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    if args.runs < 1:
        raise UsageError(f"--runs {args.runs}: at least 1")
    if args.reruns < 0:
        raise UsageError(f"--reruns {args.reruns}: at least 0")
    against = Path(args.against) if args.against else None
    if against is not None and not against.is_dir():
        raise InputError(f"--against {against}: no such directory")
    results, regressed = [], []
    for family in families:
        data = run_family(bench_dir, family, args.quick, out)
        if data and args.runs > 1 and family not in BYTES_ONLY:
            more = [run_family(bench_dir, family, args.quick, out) for _ in range(args.runs - 1)]
            data = slowest_of([data] + [d for d in more if d])
            (out / f"{family}.json").write_text(json.dumps(data, indent=1))
        if data and against is not None and family not in BYTES_ONLY:
            bad = compare(data, against, args.tolerance)
            # a slow row may be the machine (it is shared): it counts only when --reruns more
            # runs, each after a pause, show it too
            for _ in range(args.reruns):
                if not bad:
                    break
                print(f"  {family}: {len(bad)} row(s) off their baseline; running it again")
                time.sleep(RERUN_PAUSE)
                again = run_family(bench_dir, family, args.quick, out)
                if again:
                    bad_again = compare(again, against, args.tolerance)
                    bad = {k: bad_again[k] for k in bad if k in bad_again}
            regressed += list(bad.values())
        if data:
            results.append(data)
            if not plot(data, out / f"{family}.png"):
                print("  (no plot: pip install matplotlib)")
    # the report covers every family whose results are in --out, so one family can be re-run
    everything = [json.loads((out / f"{f}.json").read_text()) for f in FAMILIES if (out / f"{f}.json").exists()]
    path = report(everything, out, args.quick)
    print(f"wrote {path}" + (f" and {len(list(out.glob('*.png')))} plots" if results else ""))
    if against is not None:
        for line in regressed:
            print(f"REGRESSION {line}")
        if not regressed:
            print(f"every row within {args.tolerance:g}x of its zdt / floor ratio in {against}")
    return 0 if len(results) == len(families) and not regressed else 1


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "bench", help="run the benchmarks; a Markdown report with plots",
        description="Runs the scripts of bench/ (zdt against NumPy, pyarrow, ml_dtypes, numcodecs, "
                    "zarr's own codecs and pipelines, cast-value-rs: whichever are installed) "
                    "and writes report.md and one PNG per family to --out (the report covers every family "
                    "whose results are in --out, so --only re-runs one and keeps the others).")
    p.add_argument("--out", default="bench-report", help="directory for the report (default: bench-report)")
    p.add_argument("--only", metavar="FAMILIES", help=f"comma-separated subset of {','.join(FAMILIES)}")
    p.add_argument("--quick", action="store_true", help="smaller inputs and fewer repeats (~1 minute)")
    p.add_argument("--bench-dir", help="run the bench scripts of this directory (default: the "
                   "installed ones, zdt.bench)")
    p.add_argument("--against", metavar="DIR", help="compare each row's zdt / floor ratio with "
                   "the JSON results in DIR (an earlier --out); exit 1 when one is more than "
                   "--tolerance times its value there and zdt's own time is above the "
                   "baseline's (a family with such a row runs --reruns more times, and the row "
                   "counts only when every run has it)")
    p.add_argument("--tolerance", type=float, default=1.3,
                   help="for --against (default 1.3; a row whose zdt time or floor is under 1 ms: "
                        "at least 2)")
    p.add_argument("--reruns", type=int, default=RERUNS,
                   help=f"for --against: how many more runs a family with a slow row gets before the "
                        f"row counts (default {RERUNS})")
    p.add_argument("--runs", type=int, default=1, help="run each family this many times and keep, "
                   "per row, the slowest zdt / floor ratio: a baseline for --against that a noisy "
                   "machine's next run stays under (default 1)")
    p.set_defaults(run=run)

