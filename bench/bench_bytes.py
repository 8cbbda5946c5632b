"""Bytes on disk at the same error bound: zdt against the compressors and recipes of the field,
on real data that packages ship, storage unit by storage unit, every result's error checked.

    python bench/bench_bytes.py [--only NAME[,NAME...]] [--quick]

Data (whichever packages are installed: `pip install '.[bench]' pysz 'zfpy==1.0.1' eofs
japan-geoid pvlib h5py netCDF4 iris-sample-data` and, for the radar and SST files, `pip
install --no-deps arm_pyart cartopy`: only their data files are read):
- gridded fields: DJF 500 hPa geopotential height (eofs' example data), an SST anomaly with
  land masked (eofs), HadISST sea-surface temperature with land masked (cartopy's data), a
  cloud radar's CF-packed int16 reflectivity and Doppler velocity (Py-ART's test data: the
  bound is in dBZ and m/s), the Japanese geoid (japan-geoid, 2101 x 1601, 512 x 512 chunks),
  a global elevation model (pvlib's 5-minute DEM, 2160 x 4320, 512 x 512 chunks);
- series: matplotlib's sample data, pvlib's TMY3 hourly weather, vega_datasets' temperatures;
- fields nobody here tuned on (iris-sample-data): a scenario run's air temperature, a
  model-level potential temperature, and four masked fields written as xarray writes them
  from netCDF, their CF _FillValue (1e20, 9.97e36, -1.07e9) in the data and the zarr fill
  value NaN: OSTIA's monthly SST, ORCA2's and NEMO's ocean temperatures, a satellite
  brightness temperature with gaps; and NEMO's three monthly files as one array, a chunk a
  month (the same land mask in every chunk).

Methods, each on the same chunks (a storage unit at a time). zarr stores every chunk whole,
the part of an edge chunk past the array's edge padded; zdt pads it with the fewer bytes of
runs (each element the real one before it in the chunk's order) and the fill value (NaN here;
zdt.predict: the fill value, which it masks). The recipes, which are zarr codec chains, are
measured on the chunks padded the same way, as a writer that pads as cheaply would store them;
ZFP, SZ3 and zdt.predict, the marks for prediction, on each unit's own values. The summary also
gives the pcodec recipes on edge units cut to the array (the real elements only: a layout no
zarr writer produces):
- zdt: `zdt.convert(src, dst, abs_error=E | rel_error=R)`, the defaults (readers zarr-python,
  the whole chain searched; zdt.predict's reference mask, which lives in the array's
  metadata, counted with the chunks); `readers="any"` (plain numbers, every reader); and, for absolute
  bounds, `readers="zdt"` (zdt's own codecs allowed: zdt.predict is one more candidate);
- quantize + pcodec: the integers FixedScaleOffset would write (offset at the data's floor,
  step just under 2E, NaN as one more code) through pcodec level 8;
- BitRound + pcodec (relative bounds): keepbits = ceil(-log2 R) - 1, then pcodec level 8;
- the numcodecs recipes, each then Zstd level 3: FixedScaleOffset (step 2E), Quantize (the
  fewest digits that keep E), BitRound;
- zdt.predict (zdt's error-bounded prediction codec, docs/codecs/predict.md; read by zdt only);
- ZFP (zfpy, fixed accuracy E) and SZ3 (pysz, absolute bound E; a unit with NaN: filled with
  its mean, the mask coded apart, as SZ3's users do): whole-array compressors no zarr reader
  decodes as a codec, the marks for prediction across neighbours;
- relative bounds: zdt.predict with `rel_error` (its logarithms' chunk), and SZ3 in the
  log domain (SZ's PW_REL scheme: SZ3 on log2|x| within log2(1 + R), zeros / NaN and signs
  coded apart, misses stored exactly; `sz3_log`), the mark for relative bounds.

Every result's error is computed exactly (zdt.engine.bounds.error_of) in the data's physical
units; one that breaks the bound or loses a NaN is struck out (~~n~~). The last column is the
best that keeps the bound among the portable recipes (quantize / BitRound + pcodec, the
numcodecs recipes, ZFP); zdt should be at most that on every row. `zdt bench` draws a
rate-distortion plot per dataset (bits per value against the largest error) from these rows.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import io
import json
import math
import os
import tempfile
import warnings
from dataclasses import dataclass, field
from importlib.util import find_spec
from pathlib import Path
from typing import Any, Callable

import _common  # noqa: F401  (sets BLAS threads before numpy starts)
import numcodecs
import numpy as np

from _common import header, record_bytes

warnings.filterwarnings("ignore", message="Numcodecs codecs are not in the Zarr")
SEP = "|"
PCODEC_LEVEL = 8
ZSTD_LEVEL = 3


@dataclass
class Data:
    name: str
    values: np.ndarray                      # physical values (float), NaN where missing
    unit: str
    chunks: tuple
    bounds: list                            # [("abs", E) | ("rel", R)]
    packed: tuple | None = None             # CF: (stored int array, scale_factor, add_offset, fill)
    tags: set = field(default_factory=set)  # "grid": a gridded field (the table)
    # a masked field as xarray writes it from netCDF: the missing values as this CF _FillValue
    # in the data, the zarr fill value NaN (None: NaN in the data)
    marker: float | None = None


def _root(pkg: str) -> str | None:
    spec = find_spec(pkg)
    return spec.submodule_search_locations[0] if spec and spec.submodule_search_locations else None


def _netcdf(path: str, var: str, raw: bool = False) -> Any:
    import netCDF4

    with netCDF4.Dataset(path) as ds:
        v = ds[var]
        if raw:
            v.set_auto_maskandscale(False)
            return v[...], {k: v.getncattr(k) for k in v.ncattrs()}
        return np.ma.filled(v[...].astype(np.float64), np.nan)


def datasets() -> list[Data]:
    out: list[Data] = []
    notes = []

    def attempt(label: str, make: Callable[[], list[Data]]) -> None:
        try:
            out.extend(make())
        except (ImportError, FileNotFoundError, TypeError, OSError) as exc:
            notes.append(f"({label} left out: {type(exc).__name__}: {str(exc)[:80]})")

    def eofs() -> list[Data]:
        base = os.path.join(_root("eofs"), "examples", "example_data")
        z = _netcdf(os.path.join(base, "hgt_djf.nc"), "z")[:, 0]
        sst = _netcdf(os.path.join(base, "sst_ndjfm_anom.nc"), "sst")
        sst[np.abs(sst) > 1e10] = np.nan
        return [Data("500 hPa geopotential height, DJF (eofs)", z, "m", z.shape,
                     [("abs", 1.0), ("abs", 10.0), ("rel", 1e-3), ("abs", 0.1)], tags={"grid"}),
                Data("SST anomaly, land masked (eofs)", sst, "K", sst.shape,
                     [("abs", 0.01), ("abs", 0.1), ("abs", 0.001)], tags={"grid"})]

    def hadisst() -> list[Data]:
        path = os.path.join(_root("cartopy"), "data", "netcdf", "HadISST1_SST_update.nc")
        sst = _netcdf(path, "sst")[0]
        sst[sst < -100] = np.nan
        return [Data("HadISST sea-surface temperature, land masked (cartopy)", sst, "degC",
                     sst.shape, [("abs", 0.01), ("abs", 0.1), ("rel", 1e-3)], tags={"grid"})]

    def radar() -> list[Data]:
        path = os.path.join(_root("pyart"), "testing", "data", "example_cfradial_cr_raster.nc")
        rows = []
        for var, label, unit, bounds in (("reflectivity", "cloud radar reflectivity", "dBZ",
                                          [("abs", 0.5), ("abs", 2.0), ("abs", 0.1)]),
                                         ("mean_doppler_velocity", "cloud radar Doppler velocity",
                                          "m/s", [("abs", 0.05), ("abs", 0.5), ("abs", 0.01)])):
            stored, attrs = _netcdf(path, var, raw=True)
            stored = np.asarray(stored).astype(np.int16)
            sf, ao = float(attrs.get("scale_factor", 1.0)), float(attrs.get("add_offset", 0.0))
            fill = int(attrs.get("_FillValue", -32768))
            phys = np.where(stored == fill, np.nan, stored * sf + ao)
            rows.append(Data(f"{label} (Py-ART, int16 CF-packed)", phys, unit,
                             (min(stored.shape[0], 2048), stored.shape[1]), bounds,
                             packed=(stored, sf, ao, fill), tags={"grid"}))
        return rows

    def geoid() -> list[Data]:
        import japan_geoid

        lat, lon = np.meshgrid(15 + np.arange(2101) / 60, 120 + np.arange(1601) / 40, indexing="ij")
        g = np.asarray(japan_geoid.load_embedded_jpgeo2024().get_heights(
            lon.ravel(), lat.ravel()), dtype=np.float64).reshape(lat.shape)
        return [Data("Japanese geoid height (japan-geoid)", g, "m", (512, 512),
                     [("abs", 0.01), ("abs", 0.1), ("rel", 1e-3)], tags={"grid"})]

    def dem() -> list[Data]:
        import h5py

        with h5py.File(os.path.join(_root("pvlib"), "data", "Altitude.h5"), "r") as f:
            raw = f["Altitude"][...]
        alt = np.where(raw == 255, np.nan, raw.astype(np.float64) * 28.0 - 450.0)
        return [Data("global elevation model, 5' (pvlib, 28 m steps, ocean masked)", alt, "m",
                     (512, 512), [("abs", 0.5), ("abs", 5.0), ("abs", 50.0), ("rel", 1e-3)],
                     tags={"grid"})]

    def series() -> list[Data]:
        rows = []
        from matplotlib import cbook

        topo = cbook.get_sample_data("topobathy.npz")["topo"].astype(np.float64)
        rows.append(Data("elevation/depth off Washington (matplotlib)", topo, "m", topo.shape,
                         [("abs", 1.0), ("abs", 10.0), ("rel", 1e-2)]))
        close = cbook.get_sample_data("goog.npz")["price_data"]["close"].astype(np.float64)
        rows.append(Data("daily closing price (matplotlib goog)", close, "USD", close.shape,
                         [("abs", 0.1), ("abs", 1.0), ("rel", 1e-2)]))
        return rows

    def tmy3() -> list[Data]:
        path = Path(_root("pvlib")) / "data" / "723170TYA.CSV"
        with open(path, newline="") as f:
            rows = list(csv.reader(f))[1:]
        head, body = rows[0], rows[1:]
        out_ = []
        for col, label, unit, bounds in (("Dry-bulb (C)", "hourly temperature", "C", [("abs", 0.1), ("rel", 1e-2)]),
                                         ("GHI (W/m^2)", "hourly irradiance", "W/m2", [("abs", 1.0), ("abs", 10.0)])):
            i = head.index(col)
            x = np.array([float(r[i]) for r in body])
            out_.append(Data(f"{label}, Greensboro NC (pvlib TMY3)", x, unit, x.shape, bounds))
        return out_

    def iris() -> list[Data]:
        """iris-sample-data (`pip install iris-sample-data`): fields nobody here prepared, the
        masked ones written as xarray writes them (their CF _FillValue in the data)."""
        import iris_sample_data

        base = os.path.join(os.path.dirname(iris_sample_data.__file__), "sample_data")
        rows = []
        for f, var, label, unit, chunks, bounds in (
                ("A1B_north_america.nc", "air_temperature", "air temperature, scenario run A1B",
                 "K", (60, 37, 49), [("abs", 0.05), ("abs", 0.5), ("rel", 1e-4)]),
                ("hybrid_height.nc", "air_potential_temperature", "potential temperature, model levels",
                 "K", (15, 100, 100), [("abs", 0.01), ("abs", 0.1), ("rel", 1e-4)]),
                ("ostia_monthly.nc", "surface_temperature", "OSTIA monthly SST, land masked", "K",
                 (18, 18, 432), [("abs", 0.01), ("abs", 0.1), ("rel", 1e-4)]),
                ("orca2_votemper.nc", "votemper", "ORCA2 ocean temperature, land masked", "degC",
                 (148, 180), [("abs", 0.01), ("abs", 0.1), ("rel", 1e-3)]),
                ("toa_brightness_stereographic.nc", "data", "satellite brightness temperature, gaps",
                 "K", (160, 256), [("abs", 0.1), ("abs", 1.0), ("rel", 1e-3)]),
                ("NEMO/nemo_1m_20150101-20150201_grid-T.nc", "tos", "NEMO sea-surface temperature, land masked",
                 "degC", (1, 330, 360), [("abs", 0.01), ("abs", 0.1), ("rel", 1e-3)])):
            import netCDF4

            with netCDF4.Dataset(os.path.join(base, f)) as ds:
                v = ds.variables[var]
                x = np.ma.filled(v[...].astype(v.dtype), np.nan)
                marker = float(v.getncattr("_FillValue")) if "_FillValue" in v.ncattrs() else None
            rows.append(Data(f"{label} (iris-sample-data)", x, unit, chunks, bounds,
                             tags={"grid", "fresh"}, marker=marker if np.isnan(x).any() else None))
        # NEMO's three months as one array, a chunk a month: the land mask in every chunk
        import netCDF4

        months = []
        for f in sorted(os.listdir(os.path.join(base, "NEMO"))):
            with netCDF4.Dataset(os.path.join(base, "NEMO", f)) as ds:
                v = ds.variables["tos"]
                months.append(np.ma.filled(v[...].astype(v.dtype), np.nan))
                marker = float(v.getncattr("_FillValue"))
        rows.append(Data("NEMO sea-surface temperature, 3 months, a chunk a month (iris-sample-data)",
                         np.concatenate(months), "degC", (1, 330, 360), [("abs", 0.01), ("abs", 0.1)],
                         tags={"grid", "fresh"}, marker=marker))
        return rows

    attempt("eofs' example data", eofs)
    attempt("cartopy's HadISST", hadisst)
    attempt("Py-ART's cloud radar file", radar)
    attempt("japan-geoid", geoid)
    attempt("pvlib's DEM", dem)
    attempt("matplotlib's sample data", series)
    attempt("pvlib's TMY3", tmy3)
    attempt("iris-sample-data", iris)
    for n in notes:
        print(n)
    return out


# --- storage units -------------------------------------------------------------------------------

def units(shape: tuple, chunks: tuple):
    grid = [range(0, n, c) for n, c in zip(shape, chunks, strict=True)]
    for start in np.ndindex(*[len(g) for g in grid]):
        yield tuple(slice(g[i], min(g[i] + c, n)) for g, i, c, n in zip(grid, start, chunks, shape, strict=True))


def per_unit(x: np.ndarray, chunks: tuple, codec: Callable[[np.ndarray], tuple[int, np.ndarray]],
             as_stored: bool = True):
    """A method applied to each storage unit: (total bytes, the values read back). With
    `as_stored`, an edge unit is the whole chunk as a zarr array stores it, padded past the
    array's edge as zdt pads its own (the fewer bytes of runs, each element the real one
    before it in the chunk's order, and the fill value) -- what the recipe costs written as a zarr codec chain by a writer that pads as
    cheaply as zdt does; without, the unit's own values only (the whole-array
    compressors: ZFP, SZ3, zdt.predict)."""
    from zdt.engine.measure import paddings

    total, back = 0, np.empty_like(x)
    for sel in units(x.shape, chunks):
        u = x[sel]
        if as_stored and u.shape != tuple(chunks):
            n, y = min((codec(full) for full in paddings(u, chunks, np.nan, "cheapest")),
                       key=lambda r: r[0])
            y = np.asarray(y).reshape(chunks)[tuple(slice(0, n) for n in u.shape)]
        else:
            n, y = codec(np.ascontiguousarray(u))
        total += n
        back[sel] = np.asarray(y).reshape(u.shape)
    return total, back


# --- the methods -------------------------------------------------------------------------------

def pcodec(arr: np.ndarray) -> int:
    return len(numcodecs.PCodec(level=PCODEC_LEVEL).encode(np.ascontiguousarray(arr).reshape(-1)))


def zstd(arr: np.ndarray) -> int:
    return len(numcodecs.Zstd(level=ZSTD_LEVEL).encode(np.ascontiguousarray(arr)))


def quantize_pcodec(x: np.ndarray, chunks: tuple, E: float, as_stored: bool = True) -> tuple[int, np.ndarray]:
    finite = x[np.isfinite(x)]
    offset = math.floor(finite.min()) if finite.size else 0.0
    scale = float(np.nextafter(1 / (2 * E), np.inf))        # a step just under 2E
    top = int(np.rint((finite.max() - offset) * scale)) + 1 if finite.size else 1
    dtype = next(t for t in (np.uint16, np.uint32, np.uint64) if top < np.iinfo(t).max)

    def one(u: np.ndarray) -> tuple[int, np.ndarray]:
        nan = np.isnan(u)
        with np.errstate(invalid="ignore"):
            codes = np.where(nan, top, np.rint((u - offset) * scale)).astype(dtype)
        back = np.where(codes == top, np.nan, codes / scale + offset)
        return pcodec(codes), back

    return per_unit(x, chunks, one, as_stored)


def bitround_then(x: np.ndarray, chunks: tuple, keepbits: int, size: Callable,
                  as_stored: bool = True) -> tuple[int, np.ndarray]:
    def one(u: np.ndarray) -> tuple[int, np.ndarray]:
        r = np.asarray(numcodecs.BitRound(keepbits=keepbits).encode(u)).view(u.dtype).reshape(u.shape)
        return size(r), r
    return per_unit(x, chunks, one, as_stored)


def numcodecs_then_zstd(x: np.ndarray, chunks: tuple, codec: Any) -> tuple[int, np.ndarray]:
    def one(u: np.ndarray) -> tuple[int, np.ndarray]:
        with np.errstate(all="ignore"):
            enc = codec.encode(u)
        return zstd(np.ascontiguousarray(enc)), np.asarray(codec.decode(enc)).view(u.dtype)
    return per_unit(x, chunks, one)


def zfp(x: np.ndarray, chunks: tuple, E: float) -> tuple[int, np.ndarray]:
    import zfpy

    def one(u: np.ndarray) -> tuple[int, np.ndarray]:
        z = zfpy.compress_numpy(u, tolerance=E)
        return len(z), zfpy.decompress_numpy(z)
    return per_unit(x, chunks, one, as_stored=False)


def sz3(x: np.ndarray, chunks: tuple, E: float) -> tuple[int, np.ndarray]:
    """SZ3 on each unit; a unit with NaN (a mask: land, gaps) as SZ3's users code it: the NaN
    filled with the mean of the unit's other values, the mask apart (zstd-19 of its packed
    bits), counted in the bytes (SZ3 predicts NaN as numbers otherwise)."""
    from numcodecs.zstd import Zstd
    from pysz import sz, szConfig, szErrorBoundMode

    def one(u: np.ndarray) -> tuple[int, np.ndarray]:
        cfg = szConfig()
        cfg.errorBoundMode = szErrorBoundMode.ABS
        cfg.absErrorBound = E
        mask = np.isnan(u)
        n = 0
        if mask.any():
            n = len(Zstd(level=19).encode(np.packbits(mask).tobytes()))
            u = np.where(mask, u[~mask].mean() if (~mask).any() else 0.0, u).astype(u.dtype)
        comp, _ = sz.compress(u, cfg)
        data = bytes(comp)
        y = sz.decompress(np.frombuffer(data, np.uint8), u.dtype, u.shape)[0]
        return n + len(data), np.where(mask, np.nan, y).astype(u.dtype)
    return per_unit(x, chunks, one, as_stored=False)


def sz3_log(x: np.ndarray, chunks: tuple, R: float) -> tuple[int, np.ndarray]:
    """SZ's pointwise-relative scheme (PW_REL, Liang et al. 2018) with SZ3: SZ3 on log2|x|
    (float64; zeros, NaN and infinities filled with the mean logarithm) within log2(1 + R) times
    1 - 1e-6; each unit's map of those elements, their values, and the signs (where any value
    is negative) as zstd-19 of packed bits; the elements exp2 misses checked and stored exactly
    (a u32 index and the value each, zstd-19). The bytes are all of that."""
    from numcodecs.zstd import Zstd
    from pysz import sz, szConfig, szErrorBoundMode

    z19 = Zstd(level=19)

    def one(u: np.ndarray) -> tuple[int, np.ndarray]:
        u64 = u.astype(np.float64)
        data = np.isfinite(u64) & (u64 != 0)
        with np.errstate(divide="ignore", invalid="ignore"):
            logs = np.log2(np.abs(u64))
        logs[~data] = logs[data].mean() if data.any() else 0.0
        cfg = szConfig()
        cfg.errorBoundMode = szErrorBoundMode.ABS
        cfg.absErrorBound = math.log2(1 + R) * (1 - 1e-6)
        comp, _ = sz.compress(logs, cfg)
        n = len(bytes(comp))
        back = sz.decompress(np.frombuffer(bytes(comp), np.uint8), np.float64, u.shape)[0]
        y = np.where(data, np.copysign(np.exp2(back), u64), u64).astype(u.dtype)
        n += len(z19.encode(np.packbits(~data).tobytes())) + len(z19.encode(u[~data].tobytes()))
        if (u64[data] < 0).any():
            n += len(z19.encode(np.packbits(u64[data] < 0).tobytes()))
        with np.errstate(invalid="ignore", over="ignore"):
            miss = data & ~(np.abs(y.astype(np.float64) - u64) <= R * np.abs(u64) * (1 - 2.0 ** -50))
        if miss.any():
            at = np.flatnonzero(miss)
            y.reshape(-1)[at] = u.reshape(-1)[at]
            n += len(z19.encode(at.astype(np.uint32).tobytes() + u.reshape(-1)[at].tobytes()))
        return n, y
    return per_unit(x, chunks, one, as_stored=False)


def zdt_predict(x: np.ndarray, chunks: tuple, E: float, kind: str = "abs") -> tuple[int, np.ndarray]:
    """zdt.predict (docs/codecs/predict.md) on each unit, the fill value NaN as zarr's float
    arrays default to: zdt's own codec, read by zdt (`--readers zdt`); `kind` "rel": its
    pointwise-relative bound."""
    from zdt.codecs.predict import PredictConfig

    cfg = PredictConfig.create(**{"abs_error" if kind == "abs" else "rel_error": E})

    def one(u: np.ndarray) -> tuple[int, np.ndarray]:
        data = cfg.encode(u, np.nan)
        return len(data), cfg.decode(data, u.dtype, u.shape, np.nan)
    return per_unit(x, chunks, one, as_stored=False)


def zdt_method(d: Data, kind: str, value: float, readers: str | None) -> tuple[int, np.ndarray, str]:
    import zarr

    import zdt

    with tempfile.TemporaryDirectory() as tmp:
        src, dst = Path(tmp) / "src.zarr", Path(tmp) / "dst.zarr"
        if d.packed is not None:
            stored, sf, ao, fill = d.packed
            a = zarr.create_array(src, shape=stored.shape, chunks=d.chunks, dtype=stored.dtype,
                                  fill_value=fill, attributes={"scale_factor": sf, "add_offset": ao,
                                                               "_FillValue": fill})
            a[...] = stored
        elif d.marker is not None:
            import xarray as xr

            xr.Dataset({"x": (tuple(f"d{k}" for k in range(d.values.ndim)), d.values)}).to_zarr(
                src, encoding={"x": {"_FillValue": d.values.dtype.type(d.marker), "chunks": d.chunks}},
                zarr_format=3, consolidated=False)
        else:
            a = zarr.create_array(src, shape=d.values.shape, chunks=d.chunks, dtype=d.values.dtype,
                                  fill_value=np.nan)
            a[...] = d.values
        bound = {"abs_error": value} if kind == "abs" else {"rel_error": value}
        with contextlib.redirect_stdout(io.StringIO()):
            report = zdt.convert(src, dst, readers=readers, **bound)
        back = zarr.open_array(dst / "x" if d.marker is not None else dst, mode="r")[...]
        n = sum(p.stat().st_size for p in dst.rglob("*") if p.is_file() and p.name != "zarr.json"
                and (d.marker is None or p.parts[len(dst.parts)] == "x"))
        # (zdt.predict's reference mask lives in the array's metadata: counted with the chunks)
        meta = json.loads(((dst / "x" if d.marker is not None else dst) / "zarr.json").read_text())
        n += sum(len(json.dumps(c["configuration"]["mask"])) for c in meta.get("codecs", [])
                 if c.get("name") == "zdt.predict" and "mask" in c.get("configuration", {}))
        if d.marker is not None:
            back = np.where(back == d.values.dtype.type(d.marker), np.nan, back)
        if d.packed is not None:
            stored, sf, ao, fill = d.packed
            back = np.where(back == fill, np.nan, back * sf + ao)
        return n, back, report.arrays[0].encoding


def methods(d: Data, kind: str, value: float) -> dict[str, tuple[int, np.ndarray]]:
    x, chunks = d.values, d.chunks
    out: dict[str, tuple[int, np.ndarray]] = {}
    finite = x[np.isfinite(x)]
    if kind == "abs":
        out["quantize + pcodec"] = quantize_pcodec(x, chunks, value)
        out[UNPADDED] = quantize_pcodec(x, chunks, value, as_stored=False)
        offset = math.floor(finite.min())
        top = (finite.max() - offset) / (2 * value)
        astype = next((t for t in ("u1", "u2", "u4") if top + 1 < np.iinfo(t).max), None)
        if astype:
            out["FixedScaleOffset + zstd"] = numcodecs_then_zstd(x, chunks, numcodecs.FixedScaleOffset(
                offset=offset, scale=1 / (2 * value), dtype=x.dtype.str, astype=astype))
        digits = next(dg for dg in range(-20, 40) if 2.0 ** -(math.ceil(math.log2(10.0 ** dg)) + 1) <= value)
        out["Quantize + zstd"] = numcodecs_then_zstd(x, chunks, numcodecs.Quantize(digits=digits, dtype=x.dtype))
        with contextlib.suppress(ImportError):
            out["ZFP (zfpy)"] = zfp(x, chunks, value)
        out["zdt.predict"] = zdt_predict(x, chunks, value)
        with contextlib.suppress(ImportError):
            out["SZ3 (pysz)"] = sz3(x, chunks, value)
    else:
        keepbits = max(1, math.ceil(-math.log2(value)) - 1)
        out["BitRound + pcodec"] = bitround_then(x, chunks, keepbits, pcodec)
        out[UNPADDED] = bitround_then(x, chunks, keepbits, pcodec, as_stored=False)
        out["BitRound + zstd"] = bitround_then(x, chunks, keepbits, zstd)
        out["zdt.predict"] = zdt_predict(x, chunks, value, "rel")
        with contextlib.suppress(ImportError):
            out[SZ3_LOG] = sz3_log(x, chunks, value)
    return out


SZ3_LOG = "SZ3 log-domain"
# the pcodec recipe on each unit's own values, edge units cut to the array (no zarr writer
# stores that: every chunk is stored whole), for the summary line only
UNPADDED = "pcodec recipe, edge units unpadded"
PORTABLE = ("quantize + pcodec", "BitRound + pcodec", "FixedScaleOffset + zstd", "Quantize + zstd",
            "BitRound + zstd", "ZFP (zfpy)")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--only", help="datasets whose name contains one of these (comma-separated)")
    p.add_argument("--quick", action="store_true", help="the first two bounds of each dataset")
    args = p.parse_args()
    header("bytes on disk at the same bound")
    from zdt.engine.bounds import Bound, error_of

    print(f"\n{SEP} data {SEP} bound {SEP} values {SEP} zdt {SEP} zdt, any reader {SEP} zdt, readers zdt {SEP} quantize / BitRound "
          f"+ pcodec {SEP} numcodecs recipes + zstd {SEP} ZFP {SEP} zdt.predict {SEP} SZ3 {SEP} best portable {SEP} "
          f"zdt's encoding {SEP}")
    print(f"{SEP}---{SEP}---{SEP}---:{SEP}---:{SEP}---:{SEP}---:{SEP}---{SEP}---{SEP}---:{SEP}---:{SEP}---:{SEP}---:{SEP}---{SEP}")
    total_zdt = total_best = total_predict = total_sz3 = total_unpadded = total_own = 0
    behind_cut: list[str] = []
    rel_totals = dict.fromkeys(("zdt.predict", "zdt, readers zdt", SZ3_LOG, "BitRound + pcodec"), 0)
    for d in datasets():
        if args.only and not any(s.strip().lower() in d.name.lower() for s in args.only.split(",")):
            continue
        for kind, value in (d.bounds[:2] if args.quick else d.bounds):
            bound = Bound(kind, value)
            results: dict[str, dict] = {}

            def add(label: str, n: int, y: np.ndarray) -> None:
                err = error_of(d.values, np.asarray(y, dtype=np.float64).reshape(d.values.shape), bound)
                results[label] = {"bytes": int(n), "error": float(err), "ok": bool(err <= value)}

            n, y, encoding = zdt_method(d, kind, value, None)
            add("zdt", n, y)
            n, y, _ = zdt_method(d, kind, value, "any")
            add("zdt, any reader", n, y)
            n, y, _ = zdt_method(d, kind, value, "zdt")
            add("zdt, readers zdt", n, y)
            for label, (n, y) in methods(d, kind, value).items():
                add(label, n, y)
            assert results["zdt"]["ok"] and results["zdt, any reader"]["ok"], (d.name, kind, value, results)
            portable = [r["bytes"] for k, r in results.items() if k in PORTABLE and r["ok"]]
            best = min(portable) if portable else None
            if best is not None:
                total_zdt += results["zdt"]["bytes"]
                total_best += best
                cut = min(best, results[UNPADDED]["bytes"]) if results[UNPADDED]["ok"] else best
                total_unpadded += cut
                if results["zdt"]["bytes"] > cut:
                    behind_cut.append(f"{d.name}, {kind} {value:g}: {results['zdt']['bytes']:,} "
                                      f"vs {cut:,}")
            if "zdt.predict" in results and results.get("SZ3 (pysz)", {}).get("ok"):
                assert results["zdt.predict"]["ok"], (d.name, value, results["zdt.predict"])
                total_predict += results["zdt.predict"]["bytes"]
                total_sz3 += results["SZ3 (pysz)"]["bytes"]
                assert results["zdt, readers zdt"]["ok"], (d.name, value, results["zdt, readers zdt"])
                total_own += results["zdt, readers zdt"]["bytes"]
            if kind == "rel" and results.get(SZ3_LOG, {}).get("ok"):
                assert results["zdt.predict"]["ok"] and results["zdt, readers zdt"]["ok"], (d.name, value)
                rel_totals["zdt.predict"] += results["zdt.predict"]["bytes"]
                rel_totals["zdt, readers zdt"] += results["zdt, readers zdt"]["bytes"]
                rel_totals[SZ3_LOG] += results[SZ3_LOG]["bytes"]
                rel_totals["BitRound + pcodec"] += results["BitRound + pcodec"]["bytes"]

            def cell(*labels: str) -> str:
                parts = []
                for lab in labels:
                    r = results.get(lab)
                    if r is not None:
                        n_ = f"{r['bytes']:,}" if r["ok"] else f"~~{r['bytes']:,}~~"
                        parts.append(n_ if len(labels) == 1 else f"{lab.split(' +')[0]} {n_}")
                return "; ".join(parts) or "-"

            shown = f"{kind} {value:g}{' ' + d.unit if kind == 'abs' else ''}"
            print(f"{SEP} {d.name} {SEP} {shown} {SEP} {d.values.size:,} {SEP} **{results['zdt']['bytes']:,}** "
                  f"{SEP} {cell('zdt, any reader')} {SEP} {cell('zdt, readers zdt')} {SEP} {cell('quantize + pcodec', 'BitRound + pcodec')} "
                  f"{SEP} {cell('FixedScaleOffset + zstd', 'Quantize + zstd', 'BitRound + zstd')} "
                  f"{SEP} {cell('ZFP (zfpy)')} {SEP} {cell('zdt.predict')} {SEP} {cell('SZ3 (pysz)', SZ3_LOG)} {SEP} "
                  f"{'-' if best is None else f'{best:,}'} {SEP} {encoding} {SEP}", flush=True)
            record_bytes(d.name, kind, value, d.unit, int(d.values.size),
                         {k: r for k, r in results.items() if k != UNPADDED}, sorted(d.tags))
    if total_best:
        print(f"\nover the rows where a portable recipe keeps the bound: zdt {total_zdt:,} bytes, the "
              f"best portable recipe {total_best:,} ({total_zdt / total_best:.2f}x); with the pcodec "
              f"recipes on edge units cut to the array (a layout no zarr writer stores) "
              f"{total_unpadded:,} ({total_zdt / total_unpadded:.2f}x)")
        for line in behind_cut:
            print(f"  more than that cut recipe: {line}")
    if total_sz3:
        print(f"over the absolute-bound rows SZ3 keeps: zdt.predict {total_predict:,} bytes, SZ3 "
              f"{total_sz3:,} ({total_predict / total_sz3:.2f}x); zdt with readers zdt "
              f"{total_own:,} ({total_own / total_sz3:.2f}x)")
    if rel_totals[SZ3_LOG]:
        t = rel_totals
        print(f"over the relative-bound rows: zdt.predict {t['zdt.predict']:,} bytes, zdt with readers "
              f"zdt {t['zdt, readers zdt']:,}, SZ3 log-domain {t[SZ3_LOG]:,} "
              f"({t['zdt.predict'] / t[SZ3_LOG]:.2f}x), BitRound + pcodec {t['BitRound + pcodec']:,} "
              f"({t['zdt.predict'] / t['BitRound + pcodec']:.2f}x)")


if __name__ == "__main__":
    main()
