"""`zdt convert` end to end on real data that a test dependency ships (matplotlib's sample data),
written by xarray as a scientist would write it, read back by xarray:

- topobathy.npz: elevation and depth off the coast of Washington (float32, 91 x 120) on a
  latitude / longitude grid;
- jacksboro_fault_dem.npz: a digital elevation model (int16, 344 x 403) on x / y;
- goog.npz: daily stock prices (float64) and volumes (int64) on a time axis (which xarray
  stores as int64 days with a `units` attribute).

Everything is checked independently of the code under test: errors in exact arithmetic, the
bytes on disk against the numcodecs recipe at the same bound and zstd level."""

from __future__ import annotations

import math
from fractions import Fraction
from pathlib import Path

import numcodecs
import numpy as np
import pytest
import xarray as xr
import zarr
from matplotlib import cbook

from zdt.command import main

COORDS = ("latitude", "longitude", "time", "x", "y")


def sample_dataset():
    topo = cbook.get_sample_data("topobathy.npz")
    dem = cbook.get_sample_data("jacksboro_fault_dem.npz")
    goog = cbook.get_sample_data("goog.npz")["price_data"]
    ny, nx = dem["elevation"].shape
    return xr.Dataset(
        {"topo": (("latitude", "longitude"), topo["topo"], {"units": "m"}),
         "elevation": (("y", "x"), dem["elevation"], {"units": "m"}),
         "close": (("time",), goog["close"], {"units": "USD"}),
         "volume": (("time",), goog["volume"])},
        coords={"latitude": topo["latitude"], "longitude": topo["longitude"],
                "time": goog["date"].astype("datetime64[ns]"),
                "x": float(dem["xmin"]) + float(dem["dx"]) * np.arange(nx),
                "y": float(dem["ymin"]) + float(dem["dy"]) * np.arange(ny)},
        attrs={"title": "matplotlib sample data"})


@pytest.fixture(scope="module")
def written(tmp_path_factory) -> Path:
    src = tmp_path_factory.mktemp("real") / "src.zarr"
    sample_dataset().to_zarr(src, zarr_format=3, mode="w", consolidated=False)
    return src


def convert(capsys, src: Path, dst: Path, *bound: str) -> str:
    rc = main(["convert", str(src), str(dst), *bound])   # (no bars: stderr is not a terminal)
    out = capsys.readouterr()
    assert rc == 0, out.err
    return out.out


def largest_error(x: np.ndarray, y: np.ndarray, relative: bool) -> Fraction:
    worst = Fraction(0)
    for a, b in zip(x.reshape(-1).tolist(), y.reshape(-1).tolist(), strict=True):
        if isinstance(a, float) and math.isnan(a):
            assert math.isnan(b)
            continue
        e = abs(Fraction(b) - Fraction(a))
        worst = max(worst, e / abs(Fraction(a)) if relative and a else e)
    return worst


def files(path: Path) -> dict[str, bytes]:
    return {str(p.relative_to(path)): p.read_bytes() for p in path.rglob("*") if p.is_file()}


def chunk_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and p.name != "zarr.json")


def test_an_absolute_bound_on_real_data_keeps_coordinates_and_sel(written, tmp_path, capsys):
    before = files(written)
    out = convert(capsys, written, tmp_path / "dst.zarr", "--abs-error", "0.5")
    for name in COORDS:
        assert f"/{name}: copied (a coordinate" in out
    src, dst = xr.open_zarr(written, consolidated=False), xr.open_zarr(tmp_path / "dst.zarr", consolidated=False)
    # coordinates bit for bit, so selections by label find what they found before
    for name in COORDS:
        assert src[name].values.tobytes() == dst[name].values.tobytes()
    lat, lon = float(src.latitude[37]), float(src.longitude[81])
    assert float(dst.topo.sel(latitude=lat, longitude=lon)) == pytest.approx(
        float(src.topo.sel(latitude=lat, longitude=lon)), abs=0.5)
    day = src.time.values[500]
    assert abs(float(dst["close"].sel(time=day)) - float(src["close"].sel(time=day))) <= 0.5
    span = dst.topo.sel(latitude=slice(48.5, 49.5), longitude=slice(235, 236))
    assert span.shape == src.topo.sel(latitude=slice(48.5, 49.5), longitude=slice(235, 236)).shape
    # every value within the bound, exactly; integers (any error < 1 is none) exact
    for name in ("topo", "close"):
        assert largest_error(src[name].values, dst[name].values, False) <= Fraction(1, 2)
    for name in ("elevation", "volume"):
        assert np.array_equal(src[name].values, dst[name].values)
    assert dst.attrs == src.attrs and dst.topo.attrs == src.topo.attrs
    assert dst.topo.dims == ("latitude", "longitude")
    # the source untouched, the copy smaller
    assert files(written) == before
    assert chunk_bytes(tmp_path / "dst.zarr") < chunk_bytes(written)


def test_fewer_bytes_than_fixedscaleoffset_on_the_elevation_grid(written, tmp_path, capsys):
    """The recipe: FixedScaleOffset with scale 1/(2E) from the data's floor, then the same zstd
    (level 0, what xarray's zarr writes by default) on the same single chunk."""
    convert(capsys, written, tmp_path / "dst.zarr", "--abs-error", "0.5")
    x = zarr.open_array(written / "topo")[...]
    codec = zarr.open_array(written / "topo").metadata.codecs[-1].to_dict()
    assert codec["name"] == "zstd"
    recipe = numcodecs.FixedScaleOffset(offset=math.floor(float(x.min())), scale=1.0,
                                        dtype="<f4", astype="<u2")
    recipe_bytes = len(numcodecs.Zstd(level=codec["configuration"]["level"]).encode(recipe.encode(x)))
    assert chunk_bytes(tmp_path / "dst.zarr" / "topo") <= recipe_bytes


def test_a_relative_bound_on_real_data_copies_the_integers(written, tmp_path, capsys):
    out = convert(capsys, written, tmp_path / "dst.zarr", "--rel-error", "1e-3")
    assert "/elevation: copied (integers under a relative bound: kept exact)" in out
    assert "/volume: copied (integers under a relative bound: kept exact)" in out
    src, dst = xr.open_zarr(written, consolidated=False), xr.open_zarr(tmp_path / "dst.zarr", consolidated=False)
    for name in ("topo", "close"):
        assert largest_error(src[name].values, dst[name].values, True) <= Fraction(1, 1000)
    for name in ("elevation", "volume", *COORDS):
        assert src[name].values.tobytes() == dst[name].values.tobytes()
    for name in ("elevation", "volume"):
        assert files(written / name) == files(tmp_path / "dst.zarr" / name)
