"""zdt.predict's `predictor="auto"` at each `effort` against the best predictor chosen with
hindsight, on two sets of real fields: the TUNING set (iris-sample-data's netCDF files that
auto's constants were chosen on) and the REPORTING set (fields auto was not tuned on: pvlib's
Linke turbidity climatology in 512 x 512 tiles, matplotlib's Jacksboro fault DEM, MRI slice and
topography-bathymetry grid, the ORCA2 grid's cell bounds from iris-sample-data's
orca2_votemper.nc, outside the tuning set), each at an absolute bound of 1e-2, 1e-3 and 1e-4 of its range.

The hindsight best of a row is the smallest chunk any fixed predictor writes (each with every
format and stage the encoder tries for it). For each row: each effort's bytes over the best.
Every chunk is decoded and checked against the bound.

    python bench/bench_auto.py [--set tuning|reporting|fresh|unseen|all] [--rows]
        (pip install netCDF4 iris-sample-data pvlib h5py matplotlib eofs cartopy japan-geoid
         arm_pyart)

Prints, per set, each effort's total over the total of the best, its worst row, the rows more
than 5% above the best (--rows: every row), and each effort's encoding time in total.
"""

from __future__ import annotations

import argparse
import gzip
import os
import time
from collections.abc import Iterator

import _common  # noqa: F401  (sets BLAS threads before numpy starts)
import numpy as np

from zdt.codecs import predict as P

# the tuning set: auto's constants were chosen on these
TUNING_FILES = ["E1_north_america.nc", "A1B_north_america.nc", "space_weather.nc",
                "atlantic_profiles.nc", "rotated_pole.nc",
                "NEMO/nemo_1m_20150201-20150301_grid-T.nc",
                "NEMO/nemo_1m_20150301-20150401_grid-T.nc", "SOI_Darwin.nc",
                "mesh_C4_synthetic_float.nc", "ostia_monthly.nc"]
FRACTIONS = (1e-2, 1e-3, 1e-4)
EFFORTS = ("fast", "default", "max")
FIXED = ("lorenzo", "interpolation", "interpolation_reversed", "interpolation_slices")
TILE = 512
SAMPLE_FROM = 1 << 16       # (the encoder samples chunks of this many elements or more)


def _root(pkg: str) -> str:
    import importlib.util

    spec = importlib.util.find_spec(pkg)
    if spec is None or spec.origin is None:
        raise ImportError(pkg)
    return os.path.dirname(spec.origin)


def _finite_span(x: np.ndarray) -> float | None:
    finite = x[np.isfinite(x)]
    if finite.size and finite.max() > finite.min():
        return float(finite.max() - finite.min())
    return None


def tuning() -> Iterator[tuple[str, np.ndarray]]:
    import netCDF4

    base = os.path.join(_root("iris_sample_data"), "sample_data")
    for name in TUNING_FILES:
        path = os.path.join(base, name)
        if not os.path.exists(path):
            continue
        with netCDF4.Dataset(path) as ds:
            for var, v in ds.variables.items():
                if v.dtype.kind != "f" or v.size < SAMPLE_FROM:
                    continue
                yield f"{name}:{var}", np.ma.filled(v[...].astype(v.dtype), np.nan)


def reporting() -> Iterator[tuple[str, np.ndarray]]:
    import h5py
    import netCDF4

    with h5py.File(os.path.join(_root("pvlib"), "data", "LinkeTurbidities.h5"), "r") as f:
        lt = f["LinkeTurbidity"]
        # (land and sea tiles at three latitudes, in January, April, July and October)
        for month in (0, 3, 6, 9):
            for row, col in ((300, 1900), (800, 3000), (1300, 500)):
                tile = np.asarray(lt[row:row + TILE, col:col + TILE, month], dtype=np.float32)
                yield f"pvlib LinkeTurbidity m{month + 1} [{row}, {col}]", tile
    data = os.path.join(_root("matplotlib"), "mpl-data", "sample_data")
    yield "matplotlib jacksboro_fault_dem", np.load(
        os.path.join(data, "jacksboro_fault_dem.npz"))["elevation"].astype(np.float64)
    with gzip.open(os.path.join(data, "s1045.ima.gz")) as f:
        yield "matplotlib s1045 MRI", np.frombuffer(f.read(), np.uint16).reshape(256, 256) \
            .astype(np.float32)
    yield "matplotlib topobathy", np.load(os.path.join(data, "topobathy.npz"))["topo"]
    base = os.path.join(_root("iris_sample_data"), "sample_data")
    for name, var in (("orca2_votemper.nc", "nav_lat_bnds"), ("orca2_votemper.nc", "nav_lon_bnds")):
        with netCDF4.Dataset(os.path.join(base, name)) as ds:
            v = ds.variables[var]
            yield f"{name}:{var}", np.ma.filled(v[...].astype(v.dtype), np.nan)


def fresh() -> Iterator[tuple[str, np.ndarray]]:
    import h5py
    import netCDF4

    with h5py.File(os.path.join(_root("pvlib"), "data", "Altitude.h5"), "r") as f:
        alt = f["Altitude"]
        for row, col in ((200, 800), (700, 2200), (1200, 3300), (1500, 1200)):
            yield f"pvlib Altitude [{row}, {col}]", np.asarray(alt[row:row + TILE, col:col + TILE],
                                                               dtype=np.float32)
    with h5py.File(os.path.join(_root("pvlib"), "data", "LinkeTurbidities.h5"), "r") as f:
        lt = f["LinkeTurbidity"]
        for month, (row, col) in ((1, (200, 1000)), (4, (1000, 2000)), (7, (1600, 3500)),
                                  (10, (500, 3700))):
            yield f"pvlib LinkeTurbidity m{month + 1} [{row}, {col}]", np.asarray(
                lt[row:row + TILE, col:col + TILE, month], dtype=np.float32)
    base = os.path.join(_root("eofs"), "examples", "example_data")
    for name, var in (("hgt_djf.nc", "z"), ("sst_ndjfm_anom.nc", "sst")):
        with netCDF4.Dataset(os.path.join(base, name)) as ds:
            v = ds.variables[var]
            yield f"eofs {name}:{var}", np.ma.filled(v[...].astype(v.dtype), np.nan)
    path = os.path.join(_root("cartopy"), "data", "netcdf", "HadISST1_SST_update.nc")
    with netCDF4.Dataset(path) as ds:
        v = ds.variables["sst"]
        yield "cartopy HadISST1_SST_update.nc:sst", np.ma.filled(v[...].astype(v.dtype), np.nan)


def unseen() -> Iterator[tuple[str, np.ndarray]]:
    import japan_geoid
    import netCDF4

    lat, lon = np.meshgrid(15 + np.arange(2101) / 60, 120 + np.arange(1601) / 40, indexing="ij")
    g = np.asarray(japan_geoid.load_embedded_jpgeo2024().get_heights(lon.ravel(), lat.ravel()),
                   dtype=np.float64).reshape(lat.shape)
    for row, col in ((0, 0), (512, 512), (1024, 1024), (1536, 1024)):
        yield f"japan-geoid [{row}, {col}]", g[row:row + TILE, col:col + TILE]
    path = os.path.join(_root("pyart"), "testing", "data", "example_cfradial_cr_raster.nc")
    with netCDF4.Dataset(path) as ds:
        for var in ("reflectivity", "mean_doppler_velocity", "snr"):
            v = ds.variables[var]
            x = np.ma.filled(v[...].astype(np.float64), np.nan)
            yield f"pyart cr_raster:{var}", x[:2048]
    base = os.path.join(_root("iris_sample_data"), "sample_data")
    for name, var in (("hybrid_height.nc", "air_potential_temperature"),
                      ("orca2_votemper.nc", "votemper"),
                      ("toa_brightness_stereographic.nc", "data"),
                      ("NEMO/nemo_1m_20150101-20150201_grid-T.nc", "tos")):
        with netCDF4.Dataset(os.path.join(base, name)) as ds:
            v = ds.variables[var]
            yield f"{name}:{var}", np.ma.filled(v[...].astype(v.dtype), np.nan)


SETS = {"tuning": tuning, "reporting": reporting, "fresh": fresh, "unseen": unseen}
NOTE = {"tuning": "auto was tuned on it",
        "reporting": "auto's constants were not tuned on it; its one bad row led to the "
                     "estimate of raw values",
        "fresh": "not tuned on; first measured at 1.0384x the best (worst row 2.055x), its one "
                 "bad row led to estimating every sample's raw values by zstd",
        "unseen": "not tuned on, not looked at before the figures reported"}


def fixed(shape: tuple[int, ...]) -> tuple[str, ...]:
    """The predictors auto tries on a chunk of this shape (the last two: two or more
    dimensions of extent > 1)."""
    return FIXED if sum(n > 1 for n in shape) >= 2 else FIXED[:2]


def encoded(config: P.PredictConfig, x: np.ndarray, E: float) -> int:
    data = config.encode(x, np.nan)
    y = config.decode(data, x.dtype, x.shape, np.nan)
    assert np.array_equal(np.isnan(y), np.isnan(x))
    assert np.nanmax(np.abs(y.astype(np.float64) - x)) <= E
    return len(data)


def run(name: str, all_rows: bool) -> None:
    totals = dict.fromkeys(EFFORTS, 0)
    seconds = dict.fromkeys(EFFORTS, 0.0)
    worst = {e: (0.0, "") for e in EFFORTS}
    best_total = rows = 0
    shown = []
    for key, x in SETS[name]():
        span = _finite_span(x)
        if span is None:
            continue
        for fraction in FRACTIONS:
            E = span * fraction
            sizes = {p: encoded(P.PredictConfig.create(abs_error=E, predictor=p), x, E)
                     for p in fixed(x.shape)}
            best = min(sizes.values())
            cells = []
            for effort in EFFORTS:
                config = P.PredictConfig.create(abs_error=E, effort=effort)
                config.encode(x, np.nan)
                t0 = time.perf_counter()
                config.encode(x, np.nan)
                seconds[effort] += time.perf_counter() - t0
                ours = encoded(config, x, E)
                totals[effort] += ours
                if ours / best > worst[effort][0]:
                    worst[effort] = (ours / best, f"{key} at {fraction:g}")
                cells.append(f"{effort} {ours / best:.3f}x")
            best_total += best
            rows += 1
            line = (f"  {key} {x.shape} E = {fraction:g} of the range: best {best:,} "
                    f"({min(sizes, key=sizes.get)}); " + ", ".join(cells))
            if all_rows or any(float(c.split()[1][:-1]) > 1.05 for c in cells):
                shown.append(line)
    print(f"{name} set ({NOTE[name]}):"
          f" {rows} rows, the best predictor of each row {best_total:,} bytes")
    for effort in EFFORTS:
        ratio, where = worst[effort]
        print(f"  effort {effort:8s} {totals[effort]:>12,} bytes, {totals[effort] / best_total:.4f}x "
              f"the best; worst row {ratio:.3f}x ({where}); encoding {seconds[effort]:.2f} s")
    print("  rows" + (":" if all_rows else " more than 5% above the best:") +
          ("" if shown else " none"))
    for line in shown:
        print(line)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", choices=(*SETS, "all"), default="all")
    parser.add_argument("--rows", action="store_true", help="print every row")
    args = parser.parse_args()
    for name in (tuple(SETS) if args.set == "all" else (args.set,)):
        run(name, args.rows)


if __name__ == "__main__":
    main()
