"""netCDF files as sources of zdt convert, suggest, inspect and compare (and of the API): real
model and analysis files of iris-sample-data (netCDF-4 and a netCDF-3 one), and files netCDF4
writes with CF-packed int16 and _FillValue. Every copy is checked element by element against
the source as xarray decodes it."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
import xarray as xr
import zarr

import zdt
from zdt.command import main

iris_sample_data = pytest.importorskip("iris_sample_data")
netCDF4 = pytest.importorskip("netCDF4")
BASE = os.path.join(os.path.dirname(iris_sample_data.__file__), "sample_data")
OSTIA = os.path.join(BASE, "ostia_monthly.nc")             # netCDF-4, float32, land 1e20
A1B = os.path.join(BASE, "A1B_north_america.nc")           # netCDF-4, a 360-day calendar
SPACE = os.path.join(BASE, "space_weather.nc")             # netCDF-3 classic


def run(capsys, *argv: str) -> tuple[int, str, str]:
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def within(source: str, copy: str, name: str, bound: float) -> None:
    """Every value of `name` in the copy within `bound` of the source as xarray decodes it;
    missing values (NaN once decoded) at the same places."""
    with xr.open_dataset(source) as a:
        x = np.asarray(a[name].values, dtype=np.float64)
    y = np.asarray(xr.open_zarr(copy, consolidated=False)[name].values, dtype=np.float64)
    assert x.shape == y.shape
    assert np.array_equal(np.isnan(x), np.isnan(y))
    assert np.nanmax(np.abs(x - y)) <= bound * (1 + 1e-12)


@pytest.fixture(scope="module")
def packed(tmp_path_factory):
    """OSTIA's SST CF-packed as int16 (0.01 K steps, offset 273.15), land as _FillValue -32768,
    written by netCDF4 through xarray."""
    path = str(tmp_path_factory.mktemp("packed") / "sst_packed.nc")
    with xr.open_dataset(OSTIA) as ds:
        ds = ds.load()
    ds["surface_temperature"].encoding = {"dtype": "int16", "scale_factor": 0.01,
                                          "add_offset": 273.15, "_FillValue": np.int16(-32768),
                                          "zlib": True, "complevel": 4, "shuffle": True}
    ds.to_netcdf(path, engine="netcdf4", format="NETCDF4")
    return path


def test_convert_a_netcdf4_file(capsys, tmp_path):
    out = str(tmp_path / "ostia.zarr")
    rc, stdout, err = run(capsys, "convert", OSTIA, out, "--abs-error", "0.01", "--quiet")
    assert rc == 0 and err == "", err
    assert stdout.startswith(f"wrote {out}: ")
    within(OSTIA, out, "surface_temperature", 0.01)
    # coordinates exact, attributes kept (the store a plain to_zarr writes, re-encoded)
    z = xr.open_zarr(out, consolidated=False)
    with xr.open_dataset(OSTIA) as src:
        assert np.array_equal(z["latitude"].values, src["latitude"].values)
        assert z["surface_temperature"].attrs["units"] == src["surface_temperature"].attrs["units"]
    assert zarr.open_array(out, path="surface_temperature").metadata.to_dict()["codecs"][0]["name"] \
        == "scale_offset"


def test_cf_packed_int16_stays_packed_within_the_bound(packed, capsys, tmp_path):
    out = str(tmp_path / "packed.zarr")
    rc, stdout, _ = run(capsys, "convert", packed, out, "--abs-error", "0.05")
    assert rc == 0
    assert "/surface_temperature:" in stdout and "largest abs error" in stdout
    a = zarr.open_array(out, path="surface_temperature")
    assert a.dtype == np.int16 and a.attrs["scale_factor"] == 0.01     # as the zarr path has it
    within(packed, out, "surface_temperature", 0.05)
    # the same as converting the zarr store a plain to_zarr writes of the file
    plain = str(tmp_path / "plain.zarr")
    with xr.open_dataset(packed) as ds:
        ds.to_zarr(plain, zarr_format=3, consolidated=False)
    via_zarr = zdt.suggest(plain, abs_error=0.05, progress=False)
    via_file = zdt.suggest(packed, abs_error=0.05, progress=False)
    for d in via_zarr.decisions:
        assert (via_file[d.path].action, via_file[d.path].codecs) == (d.action, d.codecs), d.path


def test_other_real_files_and_netcdf3(capsys, tmp_path):
    for src, name, bound in ((A1B, "air_temperature", 0.01), (SPACE, None, 0.01)):
        out = str(tmp_path / (os.path.basename(src) + ".zarr"))
        rc, _, err = run(capsys, "convert", src, out, "--abs-error", str(bound), "--quiet")
        assert rc == 0, err
        with xr.open_dataset(src) as ds:
            names = [name] if name else [v for v in ds.data_vars if ds[v].dtype.kind == "f"]
        for n in names:
            within(src, out, n, bound)


def test_suggest_inspect_and_compare(packed, capsys, tmp_path):
    rc, out, _ = run(capsys, "suggest", f"{packed}:surface_temperature", "--abs-error", "0.05",
                     "--quiet")
    assert rc == 0 and out.startswith("/surface_temperature: int16 (54, 18, 432)")
    rc, out, _ = run(capsys, "inspect", packed)
    assert rc == 0
    assert "/surface_temperature  (netCDF)" in out
    assert "shuffle -> zlib 4" in out and "scale_factor 0.01" in out
    assert "int16" in out and "as zarr chunks" in out
    rc, out, _ = run(capsys, "inspect", packed, "--check", "--quiet")
    assert rc == 0 and "every one reads" in out
    copy = str(tmp_path / "c.zarr")
    assert run(capsys, "convert", packed, copy, "--abs-error", "0.05", "--quiet")[0] == 0
    rc, out, _ = run(capsys, "compare", packed, copy, "--abs-error", "0.05", "--quiet")
    assert rc == 0 and out.splitlines()[-1].startswith("pass: every array within its bound")
    rc, out, _ = run(capsys, "compare", packed, copy, "--abs-error", "0.001", "--quiet")
    assert rc == 1 and "FAIL: /surface_temperature" in out
    # the API alike
    figures = zdt.compare(packed, copy, abs_error=0.05)["arrays"]["/surface_temperature"]
    assert figures["max_abs_error"] <= 0.05 and figures["checks"]["bound"]["passed"]


def test_groups_are_refused_naming_the_group(capsys, tmp_path):
    path = str(tmp_path / "grouped.nc")
    with netCDF4.Dataset(path, "w") as f:
        f.createDimension("x", 4)
        f.createVariable("a", "f4", ("x",))[:] = np.arange(4)
        g = f.createGroup("forecast")
        g.createVariable("b", "f4", ("x",))[:] = np.arange(4)
    rc, out, err = run(capsys, "convert", path, str(tmp_path / "g.zarr"), "--abs-error", "0.1")
    assert rc == 1 and out == "" and len(err.splitlines()) == 1
    assert "the netCDF-4 group /forecast holds variables; groups are not supported yet" in err
    assert not (tmp_path / "g.zarr").exists()


def test_what_is_neither_zarr_nor_netcdf_says_so(capsys, tmp_path):
    f = tmp_path / "notes.txt"
    f.write_text("not data")
    rc, _, err = run(capsys, "convert", str(f), str(tmp_path / "o.zarr"), "--abs-error", "0.1")
    assert rc == 1 and err.startswith(f"zdt convert: {f}: not a zarr store nor a netCDF file")


def test_without_a_netcdf_library_one_line_names_the_extra(tmp_path):
    code = ("import sys\n"
            "for m in ('netCDF4', 'h5netcdf', 'h5py', 'scipy'): sys.modules[m] = None\n"
            "from zdt.command import main\n"
            f"sys.exit(main(['suggest', {OSTIA!r}, '--abs-error', '0.01']))\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=tmp_path, env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr.strip().splitlines() == [
        f"zdt suggest: {OSTIA}: reading a netCDF file needs xarray with h5netcdf or netCDF4: "
        "pip install 'zdt[netcdf]'"]


def zdt_command(*argv: str, cwd) -> subprocess.CompletedProcess:
    """`python -m zdt ...` in a fresh interpreter, with Python's default warning filters (no
    -W, no PYTHONWARNINGS): what a user's shell shows."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONWARNINGS"}
    env["PYTHONPATH"] = os.pathsep.join(sys.path)
    return subprocess.run([sys.executable, "-m", "zdt", *argv], capture_output=True, text=True,
                          cwd=cwd, env=env, timeout=600)


@pytest.fixture(scope="module")
def year_one(tmp_path_factory):
    """OSTIA with its time axis in HadISST's units, "hours since 1-1-1 00:00:0.0" (the same
    instants): xarray warns (SerializationWarning) that the reference date is ambiguous."""
    import shutil

    path = str(tmp_path_factory.mktemp("year_one") / "ostia_year_one.nc")
    shutil.copy(OSTIA, path)
    with netCDF4.Dataset(path, "a") as f:
        for name in ("time", "time_bnds"):
            f[name][:] = f[name][:] + 719162 * 24       # 0001-01-01 to 1970-01-01, in hours
        f["time"].units = "hours since 1-1-1 00:00:0.0"
    return path


@pytest.mark.slow
def test_the_commands_print_no_third_party_warning(year_one, tmp_path):
    """xarray's SerializationWarning on the file's time units is no line of zdt's: suggest
    and convert print their own lines only (every command runs under main's one filter);
    library callers still get it."""
    from xarray.coding.common import SerializationWarning

    with pytest.warns(SerializationWarning, match="Ambiguous reference date"):
        with xr.open_dataset(year_one) as ds:
            assert str(ds.time.values[0]).startswith("2006-04-14")
    copy = str(tmp_path / "y.zarr")
    for argv in (("suggest", year_one, "--abs-error", "0.01"),
                 ("convert", year_one, copy, "--abs-error", "0.01")):
        proc = zdt_command(*argv, cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
        assert "Warning" not in proc.stderr + proc.stdout, (argv, proc.stderr)
    with pytest.warns(SerializationWarning):
        within(year_one, copy, "surface_temperature", 0.01)
    # python -W still decides when given: the warning is there again
    shown = subprocess.run([sys.executable, "-W", "default", "-m", "zdt", "inspect", year_one],
                           capture_output=True, text=True, cwd=tmp_path, timeout=600,
                           env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert shown.returncode == 0 and "SerializationWarning" in shown.stderr
    # a library caller sees it as xarray gives it
    with pytest.warns(SerializationWarning, match="Ambiguous reference date"):
        zdt.suggest(year_one, abs_error=0.01, progress=False)


NEMO = os.path.join(BASE, "NEMO", "nemo_1m_20150101-20150201_grid-T.nc")


@pytest.mark.parametrize(("encoding", "E", "netcdf"), [
    ({"dtype": "int32", "scale_factor": 1e-4, "_FillValue": np.int32(-2 ** 31)}, 0.05, False),
    ({"dtype": "int16", "scale_factor": 0.01, "add_offset": 273.15,
      "_FillValue": np.int16(-32768)}, 0.05, False),
    ({"dtype": "int16", "scale_factor": np.float32(0.01), "add_offset": np.float32(273.15),
      "_FillValue": np.int16(-32768)}, 0.05, True),
], ids=["zarr int32 x 1e-4 at 500 steps", "zarr int16 x 0.01 + 273.15 at 5 steps",
        "netCDF int16 x float32 0.01 + 273.15 at 5 steps"])
def test_zdt_convert_keeps_a_packed_bound_as_numpy_reads_it(capsys, tmp_path, encoding, E, netcdf):
    """NEMO's SST packed with a scale factor that is no power of two, at a bound that is a
    whole number of stored steps, converted by the command: the values xarray unpacks from
    the source and from the copy differ by at most E by NumPy's own float64 subtraction, and
    `zdt compare --json` reports that number beside a bound check that agrees with it."""
    import json

    with xr.open_dataset(NEMO) as ds:
        tos = ds[["tos"]].load()
    if netcdf:
        src = str(tmp_path / "src.nc")
        tos.to_netcdf(src, engine="netcdf4", encoding={"tos": encoding})
    else:
        src = str(tmp_path / "src.zarr")
        tos.to_zarr(src, zarr_format=3, consolidated=False, encoding={"tos": encoding})
    out = str(tmp_path / "out.zarr")
    rc, _, err = run(capsys, "convert", src, out, "--abs-error", str(E), "--quiet")
    assert rc == 0, err
    with (xr.open_dataset(src) if netcdf else xr.open_zarr(src, consolidated=False)) as a:
        x = a.tos.values
    y = xr.open_zarr(out, consolidated=False).tos.values
    assert np.array_equal(np.isnan(x), np.isnan(y))
    worst = float(np.nanmax(np.abs(y - x)))
    assert E / 2 < worst <= E
    rc, stdout, err = run(capsys, "compare", src, out, "--abs-error", str(E), "--json",
                          "--slices", "1")
    assert rc == 0, err
    figures = json.loads(stdout)["arrays"]["/tos"]
    assert figures["max_abs_error"] == figures["checks"]["bound"]["largest_error"] == worst
    assert figures["checks"]["bound"]["passed"] is True


def test_compare_pairs_a_fill_value_with_the_nan_of_a_copy_as_cf_readers_do(tmp_path):
    """OSTIA marks land with _FillValue 1e20; its copy written by xarray through zdt's HDF5
    filter marks it with NaN (xarray's own _FillValue for floats). CF readers read both as NaN:
    zdt compare pairs them (it said "the masks differ") and its figures are those of
    xarray's decoded values."""
    import json

    pytest.importorskip("h5netcdf")
    import zdt.hdf5 as zh5

    copy = str(tmp_path / "copy.nc")
    with xr.open_dataset(OSTIA) as ds:
        ds = ds.load()
    assert ds.surface_temperature.encoding["_FillValue"] == np.float32(1e20)
    ds.to_netcdf(copy, engine="h5netcdf", encoding={"surface_temperature": {
        **zh5.Predict(abs_error=0.01), "chunksizes": (1, 18, 432)}})
    env = {**os.environ, "HDF5_PLUGIN_PATH": zh5.PLUGIN_PATH,
           "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.run([sys.executable, "-m", "zdt", "compare", OSTIA, copy, "surface_temperature",
                           "--abs-error", "0.01", "--json", "--slices", "1"],
                          capture_output=True, text=True, cwd=tmp_path, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr
    figures = json.loads(proc.stdout)["arrays"]["/surface_temperature"]
    with xr.open_dataset(OSTIA) as a, xr.open_dataset(copy, engine="h5netcdf") as b:
        x = a.surface_temperature.values.astype(np.float64)
        y = b.surface_temperature.values.astype(np.float64)
    with h5py_file(copy) as f:           # (the copy's gaps are NaN in the file itself)
        assert np.isnan(f["surface_temperature"][0]).any()
    assert np.array_equal(np.isnan(x), np.isnan(y)) and np.isnan(x).any()
    assert figures["max_abs_error"] == float(np.nanmax(np.abs(y - x))) > 0.005
    assert figures["checks"]["bound"]["passed"] is True


def h5py_file(path: str):
    import h5py

    return h5py.File(path, "r")


@pytest.mark.filterwarnings("ignore:variable 't' has multiple fill values")
def test_a_fill_value_and_a_different_missing_value_convert(capsys, tmp_path):
    """A variable declaring _FillValue 1 and missing_value 2 (scipy's example_3_maskedvals has
    one): xarray masks both but cannot write them back to zarr; zdt converts it as stored, both
    sentinels kept exactly, so xarray reads the copy with the same gaps."""
    with xr.open_dataset(OSTIA) as ds:
        sst = ds["surface_temperature"].values[0].astype(np.float64)
    counts = np.where(np.isnan(sst) | (sst > 1e19), 1, np.round((sst - 260) * 100)).astype(np.int32)
    counts[::7, ::5] = 2                                   # missing_value among the data
    src = str(tmp_path / "both.nc")
    with netCDF4.Dataset(src, "w", format="NETCDF3_CLASSIC") as f:
        f.createDimension("y", counts.shape[0])
        f.createDimension("x", counts.shape[1])
        v = f.createVariable("t", "i4", ("y", "x"), fill_value=np.int32(1))
        v.missing_value = np.int32(2)
        v.set_auto_maskandscale(False)
        v[:] = counts
    out = str(tmp_path / "both.zarr")
    rc, _, err = run(capsys, "convert", src, out, "--abs-error", "3", "--quiet")
    assert rc == 0, err
    with xr.open_dataset(src) as a:
        x = a["t"].values
    y = xr.open_zarr(out, consolidated=False)["t"].values
    assert np.isnan(x).sum() == ((counts == 1) | (counts == 2)).sum() > 0
    assert np.array_equal(np.isnan(x), np.isnan(y))
    assert np.nanmax(np.abs(x - y)) <= 3
    # a Dataset xarray decoded that way cannot be written back: the API says so, naming it
    with xr.open_dataset(src) as a, pytest.raises(zdt.InputError, match="variable t declares "
                                                  "_FillValue 1 and missing_value 2"):
        zdt.suggest(a, abs_error=3, progress=False)
