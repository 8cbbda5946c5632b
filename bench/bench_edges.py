"""Edge chunks: what zdt writes (default readers) against the best portable recipe, on fields
chunked so that most chunks are edge chunks, as a user's own chunking often leaves them.

    python bench/bench_edges.py [--zdt-only]

The fields are ones bench_bytes does not measure and nobody tuned the padding on:
iris-sample-data's model surface altitude, a space-weather electron density and its total
electron content, the Darwin SOI series, Atlantic profiles of potential temperature and
salinity, and Py-ART's PPI reflectivity; plus the two layouts issue 58 names: the model-level
potential temperature (15 levels) in chunks of 8 levels, and eofs' DJF geopotential (65 x 1 x
29 x 49) in chunks of 33 x 1 x 15 x 49. Each is chunked at about half its
extent along its first axes, so an edge chunk is near half padding.

Columns (bench_bytes' methods, the same chunks): zdt with the default readers; the best
portable recipe (quantize / BitRound + pcodec, the numcodecs recipes + zstd, ZFP), its edge
chunks padded as cheaply as zdt pads its own; the pcodec recipe on the real elements only (a
layout no zarr writer stores). `--zdt-only` prints zdt's bytes alone (for another checkout's
zdt, with PYTHONPATH pointing at it).
"""

from __future__ import annotations

import argparse
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402

import bench_bytes as bb  # noqa: E402
from _common import header  # noqa: E402


def half(shape: tuple, axes: int) -> tuple:
    """Chunks of about half the extent along the first `axes` axes longer than 4."""
    out, left = [], axes
    for n in shape:
        if left and n > 4:
            out.append(math.ceil(n / 2) + (n % 2 == 0))
            left -= 1
        else:
            out.append(n)
    return tuple(out)


def fields() -> list[bb.Data]:
    rows: list[bb.Data] = []
    try:
        import iris_sample_data
        import netCDF4
    except ImportError:
        print("iris-sample-data or netCDF4 missing: pip install iris-sample-data netCDF4")
        return rows
    base = os.path.join(os.path.dirname(iris_sample_data.__file__), "sample_data")

    def read(f: str, var: str) -> np.ndarray:
        with netCDF4.Dataset(os.path.join(base, f)) as ds:
            v = ds.variables[var]
            return np.ma.filled(v[...].astype(v.dtype), np.nan)

    for f, var, label, unit, axes, bounds in (
            ("hybrid_height.nc", "surface_altitude", "model surface altitude", "m", 2,
             [("abs", 0.5), ("abs", 5.0), ("rel", 1e-3)]),
            ("space_weather.nc", "Ne", "electron density (space weather)", "1e11/m3", 2,
             [("abs", 0.001), ("abs", 0.01), ("rel", 1e-3)]),
            ("space_weather.nc", "TEC", "total electron content (space weather)", "TECU", 2,
             [("abs", 0.01), ("rel", 1e-3)]),
            ("SOI_Darwin.nc", "SOI_Darwin", "Darwin SOI series", "hPa", 1,
             [("abs", 0.05), ("abs", 0.5)]),
            ("atlantic_profiles.nc", "theta", "Atlantic profiles, potential temperature", "K", 1,
             [("abs", 0.001), ("abs", 0.01)]),
            ("atlantic_profiles.nc", "salinity", "Atlantic profiles, salinity", "psu", 1,
             [("abs", 0.001), ("abs", 0.01)])):
        x = read(f, var)
        rows.append(bb.Data(f"{label} (iris-sample-data)", x, unit, half(x.shape, axes), bounds))
    theta = read("hybrid_height.nc", "air_potential_temperature")
    rows.append(bb.Data("potential temperature, model levels, chunks of 8 levels (iris-sample-data)",
                        theta, "K", (8, 100, 100), [("abs", 0.01), ("abs", 0.1), ("rel", 1e-4)]))
    root = bb._root("eofs")
    if root is not None:
        path = os.path.join(root, "examples", "example_data", "hgt_djf.nc")
        z = bb._netcdf(path, "z")
        rows.append(bb.Data("500 hPa geopotential height, DJF, 4-d (eofs)", z, "m", (33, 1, 15, 49),
                            [("abs", 1.0), ("abs", 10.0), ("rel", 1e-3)]))
    root = bb._root("pyart")
    if root is not None:
        path = os.path.join(root, "testing", "data", "example_cfradial_ppi.nc")
        with netCDF4.Dataset(path) as ds:
            v = ds.variables["reflectivity_horizontal"]
            x = np.ma.filled(v[...].astype(np.float32), np.nan)
        rows.append(bb.Data("PPI reflectivity (Py-ART)", x, "dBZ", half(x.shape, 2),
                            [("abs", 0.5), ("abs", 0.1)]))
    return rows


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--zdt-only", action="store_true", help="zdt's bytes alone")
    args = p.parse_args()
    header("edge chunks: zdt against the best portable recipe")
    from zdt.engine.bounds import Bound, error_of

    print("\n| data | shape / chunks | bound | zdt | best portable | zdt / best "
          "| pcodec recipe, real elements only |")
    print("|---|---|---|---:|---:|---:|---:|")
    total_zdt = total_best = 0
    above = []
    for d in fields():
        for kind, value in d.bounds:
            n_zdt, y, _ = bb.zdt_method(d, kind, value, None)
            bound = Bound(kind, value)
            err = error_of(d.values, np.asarray(y, np.float64).reshape(d.values.shape), bound)
            assert err <= value, (d.name, kind, value, err)
            shown = f"{kind} {value:g}{' ' + d.unit if kind == 'abs' else ''}"
            layout = f"{'x'.join(map(str, d.values.shape))} / {'x'.join(map(str, d.chunks))}"
            if args.zdt_only:
                print(f"| {d.name} | {layout} | {shown} | {n_zdt:,} | | | |", flush=True)
                continue
            results = {}
            for label, (n, yy) in bb.methods(d, kind, value).items():
                e = error_of(d.values, np.asarray(yy, np.float64).reshape(d.values.shape), bound)
                results[label] = (n, e <= value)
            portable = [n for k, (n, ok) in results.items() if k in bb.PORTABLE and ok]
            best = min(portable) if portable else None
            cut = results.get(bb.UNPADDED)
            if best is not None:
                total_zdt += n_zdt
                total_best += best
                if n_zdt > best:
                    above.append(f"{d.name}, {shown}: {n_zdt:,} vs {best:,}")
            print(f"| {d.name} | {layout} | {shown} | {n_zdt:,} | {'-' if best is None else f'{best:,}'} | "
                  f"{'-' if best is None else f'{n_zdt / best:.3f}'} | "
                  f"{'-' if cut is None or not cut[1] else f'{cut[0]:,}'} |", flush=True)
    if total_best:
        print(f"\nzdt {total_zdt:,} bytes, the best portable recipe {total_best:,} "
              f"({total_zdt / total_best:.3f}x); rows above it: {len(above)}")
        for line in above:
            print(f"  above: {line}")


if __name__ == "__main__":
    main()
