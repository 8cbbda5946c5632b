"""CF-packed integers (scale_factor / add_offset, as radar and satellite products carry
them): the bound is in physical units, through xarray's own unpacking; the output stays the
packed integer type with the same attributes; _FillValue, missing_value and the valid range
stay exact. Every check here unpacks independently (xr.open_zarr, or stored * scale + offset
in exact arithmetic)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
import xarray as xr
import zarr

import zdt


def radar(n0: int = 2000, n1: int = 240, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    t, r = np.arange(n0)[:, None], np.arange(n1)[None, :]
    dbz = 25 * np.sin(t / 150) * np.cos(r / 40) + rng.normal(0, 3, (n0, n1)) + 5
    dbz[rng.random(dbz.shape) < 0.15] = np.nan
    return dbz


SCALE, OFFSET = 0.0025, -10.0


@pytest.fixture
def packed(tmp_path):
    """reflectivity in dBZ, stored by xarray as int16 with scale_factor, add_offset and a
    _FillValue for the NaN gates."""
    ds = xr.Dataset({"reflectivity": (("time", "range"), radar(), {"units": "dBZ"})},
                    coords={"range": np.arange(240) * 25.0})
    ds.reflectivity.encoding.update({"dtype": "int16", "scale_factor": SCALE,
                                     "add_offset": OFFSET, "_FillValue": -32768})
    ds.to_zarr(tmp_path / "radar.zarr", zarr_format=3, consolidated=False)
    return tmp_path / "radar.zarr"


@pytest.mark.parametrize("bound", [0.05, 0.5, 2.0])
def test_the_bound_holds_in_physical_units_and_the_fill_positions_stay(packed, tmp_path, bound):
    report = zdt.convert(packed, tmp_path / "small.zarr", abs_error=bound)
    src = zarr.open_array(packed / "reflectivity", mode="r")
    out = zarr.open_array(tmp_path / "small.zarr" / "reflectivity", mode="r")
    assert out.dtype == np.int16 and dict(out.attrs) == dict(src.attrs)
    x, y = src[...], out[...]
    assert np.array_equal(x == -32768, y == -32768)            # the missing gates, exactly
    # physical difference = stored difference x scale_factor (the offset cancels), in rationals
    kept = x != -32768
    worst = int(np.abs(y[kept].astype(np.int64) - x[kept]).max()) * Fraction(SCALE)
    assert worst <= Fraction(bound)
    # the report speaks in dBZ: close to the bound, not in stored steps of 0.0025
    assert report["/reflectivity"].error <= bound and report["/reflectivity"].error > bound / 10
    assert report.bytes_after < report.bytes_before
    a = xr.open_zarr(packed, consolidated=False).reflectivity.values
    b = xr.open_zarr(tmp_path / "small.zarr", consolidated=False).reflectivity.values
    assert np.array_equal(np.isnan(a), np.isnan(b)) and np.nanmax(np.abs(b - a)) <= bound + 1e-9


def test_a_bound_finer_than_one_stored_step_changes_no_stored_number(packed, tmp_path):
    """0.001 dBZ < one stored step of 0.0025: only exact encodings (the stored numbers as they
    are, or shifted, each packed losslessly) keep it."""
    report = zdt.convert(packed, tmp_path / "small.zarr", abs_error=0.001)
    assert report["/reflectivity"].error == 0
    src = zarr.open_array(packed / "reflectivity", mode="r")[...]
    out = zarr.open_array(tmp_path / "small.zarr" / "reflectivity", mode="r")[...]
    assert np.array_equal(src, out)


def test_a_relative_bound_applies_to_the_physical_value_offset_included(tmp_path):
    rng = np.random.default_rng(3)
    kelvin = 250 + 30 * rng.random((500, 100))
    a = zarr.create_array(tmp_path / "t.zarr", shape=kelvin.shape, chunks=(250, 100), dtype="int16",
                          fill_value=-1, attributes={"scale_factor": 0.01, "add_offset": 200.0})
    stored = np.round((kelvin - 200.0) / 0.01).astype(np.int16)
    a[...] = stored
    zdt.convert(tmp_path / "t.zarr", tmp_path / "o.zarr", rel_error=1e-3)
    back = zarr.open_array(tmp_path / "o.zarr", mode="r")[...]
    assert not np.array_equal(back, stored)                      # it did encode
    for u, v in zip(stored.reshape(-1)[:20000].tolist(), back.reshape(-1)[:20000].tolist(), strict=True):
        pu = Fraction(u) * Fraction(0.01) + 200
        pv = Fraction(v) * Fraction(0.01) + 200
        assert abs(pv - pu) <= Fraction(1e-3) * abs(pu)


def test_values_inside_the_valid_range_stay_inside(tmp_path):
    stored = np.concatenate([np.arange(0, 1000, dtype=np.int16), np.full(10, -999, np.int16)])
    a = zarr.create_array(tmp_path / "v.zarr", shape=stored.shape, chunks=(505,), dtype="int16",
                          fill_value=-999,
                          attributes={"scale_factor": 0.1, "valid_range": [0, 999],
                                      "_FillValue": -999})
    a[...] = stored
    zdt.convert(tmp_path / "v.zarr", tmp_path / "o.zarr", abs_error=5.0)
    back = zarr.open_array(tmp_path / "o.zarr", mode="r")[...]
    inside = (stored >= 0) & (stored <= 999)
    assert ((back[inside] >= 0) & (back[inside] <= 999)).all()
    assert np.array_equal(back[~inside], stored[~inside])
    assert np.abs(back[inside].astype(int) - stored[inside]).max() <= 50


@pytest.mark.parametrize("bound", [0.001, 0.05, 0.5])
def test_zdt_predict_codes_the_stored_integers_with_the_bound_in_physical_units(packed, tmp_path, bound):
    """With readers that have zdt, zdt.predict is offered on the stored int16 (the bound in
    stored steps: 0.001 dBZ is below one, so exact), and wins on this field; the output keeps
    the type and the CF attributes, and xarray unpacks it within the bound."""
    report = zdt.convert(packed, tmp_path / "small.zarr", abs_error=bound, readers="zdt")
    src = zarr.open_array(packed / "reflectivity", mode="r")
    out = zarr.open_array(tmp_path / "small.zarr" / "reflectivity", mode="r")
    assert out.dtype == np.int16 and dict(out.attrs) == dict(src.attrs)
    assert out.serializer.to_dict()["name"] == "zdt.predict"
    x, y = src[...], out[...]
    assert np.array_equal(x == -32768, y == -32768)
    k = int(np.abs(y.astype(np.int64) - x).max())
    assert k * Fraction(SCALE) <= Fraction(bound) and (bound > SCALE or k == 0)
    assert report["/reflectivity"].error <= bound
    # fewer bytes than what the default readers get
    plain = zdt.convert(packed, tmp_path / "plain.zarr", abs_error=bound)
    assert report["/reflectivity"].bytes_after < plain["/reflectivity"].bytes_after
    a = xr.open_zarr(packed, consolidated=False).reflectivity.values
    b = xr.open_zarr(tmp_path / "small.zarr", consolidated=False).reflectivity.values
    assert np.array_equal(np.isnan(a), np.isnan(b)) and np.nanmax(np.abs(b - a)) <= bound + 1e-9


@pytest.mark.parametrize(("encoding", "E"), [
    ({"dtype": "int32", "scale_factor": 1e-4, "_FillValue": np.int32(-2 ** 31)}, 0.05),
    ({"dtype": "int16", "scale_factor": 0.01, "add_offset": 273.15, "_FillValue": np.int16(-32768)}, 0.05),
], ids=["int32 x 1e-4 at 500 steps", "int16 x 0.01 + 273.15 at 5 steps"])
@pytest.mark.parametrize("readers", ["zarr-python", "zdt"])
def test_the_bound_holds_as_a_reader_unpacks_a_scale_that_is_no_power_of_two(tmp_path, encoding, E, readers):
    """A real SST (NEMO, iris-sample-data) packed with a scale that is no power of two, at a
    bound of a whole number of steps: exact in stored integers, but unpacked in float64 (as
    xarray does) the difference of two values 500 steps of 1e-4 apart can be
    0.050000000000000044. What xarray reads back is within E by NumPy's own subtraction,
    and zdt compare reports that very number and its check agrees."""
    import os

    iris = pytest.importorskip("iris_sample_data")
    path = os.path.join(os.path.dirname(iris.__file__), "sample_data", "NEMO",
                        "nemo_1m_20150101-20150201_grid-T.nc")
    with xr.open_dataset(path) as ds:
        tos = ds[["tos"]].load()
    src, out = tmp_path / "src.zarr", tmp_path / "out.zarr"
    tos.to_zarr(src, zarr_format=3, consolidated=False, encoding={"tos": encoding})
    zdt.convert(src, out, abs_error=E, readers=readers)
    x = xr.open_zarr(src, consolidated=False).tos.values
    y = xr.open_zarr(out, consolidated=False).tos.values
    assert x.dtype == y.dtype == np.float64
    assert np.array_equal(np.isnan(x), np.isnan(y))
    worst = float(np.nanmax(np.abs(y - x)))
    assert 0.6 * E < worst <= E
    figures = zdt.compare(src, out, ["tos"], abs_error=E, slices=0)["arrays"]["/tos"]
    assert figures["max_abs_error"] == figures["checks"]["bound"]["largest_error"] == worst
    assert figures["checks"]["bound"]["passed"] is True


def nemo_tos() -> xr.Dataset:
    import os

    iris = pytest.importorskip("iris_sample_data")
    path = os.path.join(os.path.dirname(iris.__file__), "sample_data", "NEMO",
                        "nemo_1m_20150101-20150201_grid-T.nc")
    with xr.open_dataset(path) as ds:
        return ds[["tos"]].load()


@pytest.mark.parametrize(("stored", "scale", "offset", "E"), [
    ("int16", np.float32(0.01), np.float32(273.15), 0.05),
    ("int16", np.float32(0.01), np.float32(273.15), 0.03),
    ("int8", np.float32(0.5), np.float32(10.0), 1.0),
    ("int32", np.float32(1e-4), np.float32(0.0), 0.05),
], ids=["int16 f32 at 5 steps", "int16 f32 at 3 steps", "int8 f32 at 2 steps", "int32 f32 (float64)"])
def test_a_netcdf_file_with_float32_attributes_keeps_the_bound_as_xarray_reads_both(
        tmp_path, stored, scale, offset, E):
    """A netCDF variable whose scale_factor and add_offset are float32 (as many products
    carry them): xarray unpacks its 8- and 16-bit integers in float32, and the zarr copy, whose
    attributes are JSON numbers, in float64. NumPy's difference of the two is within E (it was
    0.0500154 at E = 0.05: five float32 steps of 0.01 plus float32's rounding at 273 K), and
    zdt compare reports that very number. 32-bit integers unpack in float64 either way."""
    netCDF4 = pytest.importorskip("netCDF4")
    tos = nemo_tos()
    if stored == "int8":
        tos["tos"] = tos.tos.clip(-20, 40)
    src, out = str(tmp_path / "src.nc"), str(tmp_path / "out.zarr")
    fill = np.iinfo(stored).min
    tos.to_netcdf(src, engine="netcdf4", encoding={"tos": {
        "dtype": stored, "scale_factor": scale, "add_offset": offset,
        "_FillValue": np.dtype(stored).type(fill)}})
    with netCDF4.Dataset(src) as f:          # (the attributes are float32 in the file)
        assert f["tos"].getncattr("scale_factor").dtype == np.float32
    zdt.convert(src, out, abs_error=E, progress=False)
    with xr.open_dataset(src) as a:
        x = a.tos.values
    y = xr.open_zarr(out, consolidated=False).tos.values
    assert x.dtype == (np.float64 if stored == "int32" else np.float32) and y.dtype == np.float64
    assert np.array_equal(np.isnan(x), np.isnan(y))
    worst = float(np.nanmax(np.abs(y - x)))
    assert E / 2 < worst <= E
    figures = zdt.compare(src, out, abs_error=E, slices=0)["arrays"]["/tos"]
    assert figures["max_abs_error"] == figures["checks"]["bound"]["largest_error"] == worst
    assert figures["checks"]["bound"]["passed"] is True


@pytest.mark.parametrize("stored", ["int8", "int16", "int32", "float32"])
@pytest.mark.parametrize("types", [("f4", "f4"), ("f8", "f8"), ("f4", None), (None, "f4"),
                                   ("f4", "f8")])
def test_the_float_type_readers_unpack_into_is_xarrays(tmp_path, stored, types):
    """decoded_type against xarray itself: a variable written by netCDF4 with scale_factor /
    add_offset of these types, opened with xr.open_dataset."""
    netCDF4 = pytest.importorskip("netCDF4")
    from zdt.engine.packing import decoded_type

    path = str(tmp_path / "t.nc")
    with netCDF4.Dataset(path, "w") as f:
        f.createDimension("x", 3)
        v = f.createVariable("v", stored, ("x",))
        v.set_auto_maskandscale(False)
        for key, t in zip(("scale_factor", "add_offset"), types, strict=True):
            if t is not None:
                v.setncattr(key, np.dtype(t).type(0.5))
        v[:] = np.arange(3)
    with xr.open_dataset(path) as ds:
        expected = ds.v.dtype
        encoding = ds.v.encoding
    assert decoded_type(np.dtype(stored), encoding) == expected.name
