"""``zdt inspect PATH``: every array of a zarr store or group, its codecs and what it stores."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from zdt.command.options import add_storage_args, progress_bars, storage_kwargs


def describe(arr: Any) -> dict[str, Any]:
    from zdt.engine.readers import what_reads
    from zdt.stores import nodes

    logical = arr.nbytes
    stored = arr.nbytes_stored()
    readers = None
    if arr.metadata.zarr_format == 3:
        readers = what_reads(arr.metadata.to_dict()["codecs"], nodes.array_type_name(arr))
    return {
        "path": "/" + arr.path,
        "zarr_format": arr.metadata.zarr_format,
        "shape": list(arr.shape),
        "data_type": nodes.array_type_name(arr),
        "chunks": list(arr.chunks),
        "shards": list(arr.shards) if getattr(arr, "shards", None) else None,
        "codecs": [{"name": name, "implementation": impl} for name, impl in nodes.codecs_of(arr)],
        "logical_bytes": int(logical),
        "stored_bytes": int(stored),
        "ratio": round(logical / stored, 3) if stored else None,
        # per reader (docs/readers.md): what to install to read it, or "no: why"
        "readers": readers,
    }


def check(arr: Any, progress: Any) -> dict[str, Any]:
    """Every chunk of `arr` read and decoded: how many, and the damaged ones."""
    from zdt.engine import damage

    found = damage.check_array(arr, progress)
    return {"chunks": damage.chunk_count(arr), "damaged": [d.to_json() for d in found]}


def run(args: argparse.Namespace) -> int:
    from zdt.engine.sources import open_source
    from zdt.engine.arrays import fmt_bytes
    from zdt.errors import DAMAGED
    from zdt.stores import nodes

    _, node, _ = open_source(args.path, **storage_kwargs(args))
    arrays = [n for _, n in nodes.walk(node) if nodes.is_array(n)]
    if arrays and getattr(arrays[0], "zdt_view", False):
        return run_netcdf(args, arrays)
    rows = [describe(n) for n in arrays]
    if args.check:
        with progress_bars(args.quiet) as progress:
            for row, arr in zip(rows, arrays, strict=True):
                row["check"] = check(arr, progress)
    damaged = [d for r in rows for d in r.get("check", {}).get("damaged", [])]
    status = DAMAGED if damaged else 0
    if damaged:         # (stderr: the one line a script or a log shows; the list is on stdout)
        print(f"zdt inspect: {len(damaged)} damaged chunk{'s' * (len(damaged) != 1)} in "
              f"{len({d['array'] for d in damaged})} of {len(rows)} arrays (listed on stdout)",
              file=sys.stderr)
    if args.json:
        json.dump(rows, sys.stdout, indent=2)
        print()
        return status
    if not rows:
        print(f"{args.path}: no arrays")
        return 0
    print(f"{args.path}: {len(rows)} array{'s' * (len(rows) != 1)} "
          "(stored bytes: chunks and metadata as they are in the store)")
    for r in rows:
        shards = f", shards {tuple(r['shards'])}" if r["shards"] else ""
        ratio = f"{r['ratio']:.2f}x" if r["ratio"] else "-"
        print(f"\n{r['path']}  (zarr v{r['zarr_format']})")
        print(f"  shape {tuple(r['shape'])}, {r['data_type']}, chunks {tuple(r['chunks'])}{shards}")
        chain = " -> ".join(f"{c['name']} [{c['implementation']}]" for c in r["codecs"]) or "(none)"
        print(f"  codecs  {chain}")
        print(f"  bytes   {fmt_bytes(r['logical_bytes'])} logical, "
              f"{fmt_bytes(r['stored_bytes'])} stored, ratio {ratio}")
        if r["readers"]:
            print("  readers " + "; ".join(f"{name}: {how}" for name, how in r["readers"].items()))
        if "check" in r:
            bad = r["check"]["damaged"]
            n = r["check"]["chunks"]
            print(f"  check   {n} chunk{'s' * (n != 1)} read, "
                  + (f"{len(bad)} damaged:" if bad else "every one decodes"))
            for d in bad:
                print(f"    chunk {d['chunk']}: {d['reason']}")
    total_l = sum(r["logical_bytes"] for r in rows)
    total_s = sum(r["stored_bytes"] for r in rows)
    if len(rows) > 1:
        print(f"\ntotal: {fmt_bytes(total_l)} logical, {fmt_bytes(total_s)} stored"
              + (f", ratio {total_l / total_s:.2f}x" if total_s else ""))
    for line in readers_summary(rows):
        print(line)
    return status


def run_netcdf(args: argparse.Namespace, views: list[Any]) -> int:
    """zdt inspect of a netCDF file: its variables as the file stores them, and the zarr
    arrays zdt convert writes of them (what a plain to_zarr writes, CF-encoded)."""
    import os

    from zdt.engine.arrays import fmt_bytes
    from zdt.engine.netcdf import describe_variable
    from zdt.errors import DAMAGED

    rows = [describe_variable(v) for v in views]
    if args.check:
        with progress_bars(args.quiet) as progress:
            for row, view in zip(rows, views, strict=True):
                row["check"] = check_values(view, progress)
    damaged = [d for r in rows for d in r.get("check", {}).get("damaged", [])]
    if damaged:
        print(f"zdt inspect: {len(damaged)} unreadable part{'s' * (len(damaged) != 1)} in "
              f"{len({d['array'] for d in damaged})} of {len(rows)} variables (listed on stdout)",
              file=sys.stderr)
    status = DAMAGED if damaged else 0
    if args.json:
        json.dump(rows, sys.stdout, indent=2)
        print()
        return status
    size = os.path.getsize(views[0].file)
    print(f"{args.path}: {len(rows)} variable{'s' * (len(rows) != 1)}, {fmt_bytes(size)} file "
          "(types as stored, CF packing undone by readers)")
    for r in rows:
        chunks = f"chunks {tuple(r['chunks'])}" if r["chunks"] else "contiguous"
        print(f"\n{r['path']}  (netCDF)")
        print(f"  shape {tuple(r['shape'])}, {r['data_type']}, {chunks}")
        chain = " -> ".join(_filter_text(c) for c in r["codecs"]) or "(none)"
        print(f"  filters {chain}")
        if r["cf"]:
            print("  CF      " + ", ".join(f"{k} {v}" for k, v in r["cf"].items()))
        print(f"  bytes   {fmt_bytes(r['logical_bytes'])} logical")
        print(f"  as zarr chunks {tuple(r['zarr_chunks'])} (zdt convert, a plain to_zarr)")
        if "check" in r:
            bad = r["check"]["damaged"]
            n = r["check"]["chunks"]
            print(f"  check   {n} part{'s' * (n != 1)} read, "
                  + (f"{len(bad)} unreadable:" if bad else "every one reads"))
            for d in bad:
                print(f"    {d['chunk']}: {d['reason']}")
    return status


def _filter_text(c: dict[str, Any]) -> str:
    """A netCDF variable's filter as inspect prints it: "zlib 4", "zdt.predict (abs_error=0.01,
    predictor=auto)"."""
    extra = ", ".join(f"{k}={v}" for k, v in c.items() if k not in ("name", "level", "data_type"))
    return c["name"] + (f" {c['level']}" if "level" in c else "") + (f" ({extra})" if extra else "")


def check_values(view: Any, progress: Any) -> dict[str, Any]:
    """Every storage unit of a netCDF variable read through xarray: how many, and those that
    fail (named by their region)."""
    from zdt.engine.arrays import storage_units
    from zdt.stores.location import reason

    units = storage_units(view)
    advance = progress(f"check /{view.path}", len(units))
    bad = []
    for region in units:
        try:
            view.values(region)
        except Exception as exc:        # noqa: BLE001 (each failure listed, not the first only)
            where = "(" + ", ".join(f"{s.start}:{s.stop}" for s in region) + ")"
            bad.append({"array": "/" + view.path, "chunk": where, "reason": reason(exc)})
        advance(1)
    return {"chunks": len(units), "damaged": bad}


def readers_summary(rows: list[dict]) -> list[str]:
    """Which readers open every array of the store, with what to install, and which do not."""
    v3 = [r for r in rows if r["readers"]]
    if not v3:
        return []
    lines = ["", "to read this store:"]
    for name in v3[0]["readers"]:
        cant = [f"{r['path']}: {r['readers'][name][4:]}" for r in v3 if r["readers"][name].startswith("no")]
        if cant:
            lines.append(f"  {name}: no ({'; '.join(cant[:3])}{'; ...' if len(cant) > 3 else ''})")
        else:
            # (the union of what each array needs: one pip install line)
            parts = dict.fromkeys(p for r in v3 for p in r["readers"][name].split()[2:])
            lines.append(f"  {name}: pip install {' '.join(parts)}")
    return lines


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "inspect", help="list the arrays of a zarr store: types, chunks, codecs, bytes",
        description="Every array in a zarr store or group (zarr v2 and v3): shape, data type, "
                    "chunks, the codec chain with the library that runs each codec here "
                    "(zdt, zarr, numcodecs), logical and stored bytes and their ratio. Of a "
                    "netCDF file: each variable's stored type, chunks, filters and CF packing, "
                    "and the chunks zdt convert writes it with.")
    p.add_argument("path", metavar="STORE[:ARRAY]", help="a zarr store (a directory, a .zip file "
                   "or a URL: s3://, gs://, az://, http(s)://), optionally a group or array in "
                   "it; or a netCDF-4 / HDF5 / netCDF-3 file (FILE.nc[:VARIABLE])")
    add_storage_args(p)
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.add_argument("--check", action="store_true",
                   help="read and decode every chunk and list the damaged ones (exit status 4 "
                        "when there are any; a chunk the store cannot give stops it, exit 3)")
    p.add_argument("--quiet", action="store_true", help="no progress bars (with --check)")
    p.set_defaults(run=run)
