"""The job as a Python library: zdt.suggest, zdt.convert and zdt.encoding against the command
(the same plan, the same bytes), on stores, store objects, groups and xarray Datasets.

Every value read back is checked here against its bound, independently of the code that wrote
it."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import xarray as xr
import zarr
from zarr.storage import MemoryStore

import zdt
from zdt.command import main


def files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def chunk_files(root: Path) -> dict[str, bytes]:
    """Every chunk of every array below root (metadata documents left out)."""
    return {k: v for k, v in files(root).items() if not k.endswith(("zarr.json", ".zattrs", ".zarray",
                                                                       ".zgroup", ".zmetadata"))}


def dataset(n: int = 3000, seed: int = 0) -> xr.Dataset:
    """Coordinates, a float field with NaN and a CF _FillValue, a float field on a decimal
    grid, an integer count and station names."""
    rng = np.random.default_rng(seed)
    time = np.arange(n)
    temp = 12 + 6 * np.sin(time / 50)[:, None] + rng.normal(0, 0.4, (n, 8))
    temp[rng.random(temp.shape) < 0.02] = np.nan
    rain = np.round(rng.gamma(0.3, 2.0, (n, 8)), 1)
    ds = xr.Dataset(
        {"temp": (("time", "station"), temp, {"units": "degC"}),
         "rain": (("time", "station"), rain, {"units": "mm"}),
         "count": (("time",), rng.integers(0, 500, n).astype("int32")),
         "name": (("station",), np.array([f"st{i:02d}" for i in range(8)], dtype=object))},
        coords={"time": time.astype("float64") * 0.5, "station": np.arange(8),
                "lat": (("station",), np.linspace(40, 41, 8))})
    ds.temp.encoding["_FillValue"] = -999.0
    return ds


def write_plain(ds: xr.Dataset, path: Path) -> None:
    ds.to_zarr(path, zarr_format=3, consolidated=False, mode="w")


@pytest.fixture
def plain(tmp_path):
    write_plain(dataset(), tmp_path / "plain.zarr")
    return tmp_path / "plain.zarr"


# ------------------------------------------------------------------------- suggest, convert


def test_suggest_returns_the_plan_the_command_prints(plain, capsys):
    plan = zdt.suggest(str(plain), abs_error=0.05, bounds={"/rain": "abs:0.01"})
    assert main(["suggest", str(plain), "--abs-error", "0.05", "--bound", "/rain=abs:0.01",
                 "--json", "--quiet"]) == 0
    assert json.loads(capsys.readouterr().out) == json.loads(plan.dumps())
    assert main(["suggest", str(plain), "--abs-error", "0.05", "--bound", "/rain=abs:0.01",
                 "--quiet"]) == 0
    assert capsys.readouterr().out.strip() == str(plan).strip()
    assert plan["/temp"].action == "encode" and plan["/rain"].bound.value == 0.01
    assert plan["/time"].action == "copy" and plan["/name"].action == "copy"


def test_convert_writes_the_bytes_the_command_writes(plain, tmp_path, capsys):
    report = zdt.convert(plain, tmp_path / "api.zarr", abs_error=0.05)
    assert main(["convert", str(plain), str(tmp_path / "cli.zarr"), "--abs-error", "0.05",
                 "--quiet"]) == 0
    assert files(tmp_path / "api.zarr") == files(tmp_path / "cli.zarr")
    assert capsys.readouterr().out.strip() == str(report).splitlines()[-1].replace("api.zarr", "cli.zarr")
    temp = report["/temp"]
    assert temp.action == "encode" and temp.error <= 0.05
    assert temp.bytes_after < temp.bytes_before
    assert report.bytes_after == sum(len(v) for v in chunk_files(tmp_path / "api.zarr").values())
    assert report.bytes_before == sum(len(v) for v in chunk_files(plain).values())


def test_convert_applies_a_plan_as_an_object_as_json_and_as_a_file(plain, tmp_path):
    plan = zdt.suggest(plain, abs_error=0.05)
    zdt.convert(plain, tmp_path / "a.zarr", plan)
    zdt.convert(plain, tmp_path / "b.zarr", json.loads(plan.dumps()))
    (tmp_path / "plan.json").write_text(plan.dumps())
    zdt.convert(plain, tmp_path / "c.zarr", str(tmp_path / "plan.json"))
    a = files(tmp_path / "a.zarr")
    assert a == files(tmp_path / "b.zarr") == files(tmp_path / "c.zarr")


def test_a_group_in_and_a_store_object_out(plain, tmp_path):
    out = MemoryStore()
    report = zdt.convert(zarr.open_group(plain, mode="r"), out, abs_error=0.05)
    back = zarr.open_group(out, mode="r")
    x, y = zarr.open_group(plain, mode="r")["temp"][...], back["temp"][...]
    assert np.array_equal(np.isnan(x), np.isnan(y))
    assert np.nanmax(np.abs(y - x)) <= 0.05
    assert report["/temp"].action == "encode"
    assert not any(k.startswith("zdt-partial") for k in out._store_dict)   # no record left


def test_a_store_object_that_is_not_empty_is_refused_and_kept(plain):
    out = MemoryStore()
    zarr.create_array(out, name="other", shape=(3,), dtype="int8")
    before = dict(out._store_dict)
    with pytest.raises(zdt.InputError, match="exists; zdt convert writes a new store"):
        zdt.convert(plain, out, abs_error=0.05)
    assert dict(out._store_dict) == before


@pytest.mark.parametrize("call, kind, message", [
    (lambda p: zdt.suggest(p / "nowhere.zarr", abs_error=1), zdt.InputError, "no such file or directory"),
    (lambda p: zdt.suggest(p / "plain.zarr"), zdt.UsageError, "give a bound"),
    (lambda p: zdt.suggest(p / "plain.zarr", abs_error=-1), zdt.UsageError, "positive finite number"),
    (lambda p: zdt.suggest(p / "plain.zarr", abs_error=1, compressor="lzma"), zdt.UsageError,
     "is not a compressor zdt knows"),
    (lambda p: zdt.convert(p / "plain.zarr", p / "o.zarr", "plan.json", abs_error=1), zdt.UsageError,
     "give one of codecs=, plan=, or a bound"),
    (lambda p: zdt.convert(p / "plain.zarr", p / "o.zarr", str(p / "none.json")), zdt.InputError,
     "no such file"),
    (lambda p: zdt.suggest(42, abs_error=1), zdt.UsageError, "int is not a store"),
])
def test_errors_are_exceptions_with_one_line_messages(tmp_path, call, kind, message):
    write_plain(dataset(200), tmp_path / "plain.zarr")
    with pytest.raises(kind) as info:
        call(tmp_path)
    assert message in str(info.value) and "\n" not in str(info.value)
    assert isinstance(info.value, zdt.JobError)


# ---------------------------------------------------------------------------------- encoding


def read_back_and_check(path: Path, ds: xr.Dataset, bound: float, relative: bool = False) -> None:
    """Every value within its bound through xr.open_zarr, coordinates and strings bit for bit,
    NaN where NaN was."""
    back = xr.open_zarr(path, consolidated=False)
    for name in ds.coords:
        assert np.array_equal(back[name].values, ds[name].values), name
        assert back[name].values.tobytes() == ds[name].values.tobytes(), name
    assert list(back["name"].values) == list(ds["name"].values)
    for name in ("temp", "rain", "count"):
        x, y = ds[name].values.astype(np.float64), back[name].values.astype(np.float64)
        assert np.array_equal(np.isnan(x), np.isnan(y)), name
        err = np.abs(y - x)
        if relative:
            with np.errstate(divide="ignore", invalid="ignore"):
                err = np.where(x == 0, np.where(y == 0, 0, np.inf), err / np.abs(x))
        assert np.nanmax(err) <= bound, name


@pytest.mark.parametrize("chunked", [False, True], ids=["numpy", "dask"])
def test_encoding_writes_the_chunks_convert_writes(tmp_path, chunked):
    ds = dataset()
    if chunked:
        ds = ds.assign({name: ds[name].chunk({"time": 700}) for name in ("temp", "rain", "count")})
    write_plain(ds, tmp_path / "plain.zarr")
    zdt.convert(tmp_path / "plain.zarr", tmp_path / "converted.zarr", abs_error=0.05)
    encoding = zdt.encoding(ds, abs_error=0.05)
    ds.to_zarr(tmp_path / "direct.zarr", zarr_format=3, consolidated=False, encoding=encoding)
    direct, converted = chunk_files(tmp_path / "direct.zarr"), chunk_files(tmp_path / "converted.zarr")
    assert direct.keys() == converted.keys()
    # (time in chunks of 700: the fifth holds the last 200 of 3000; xarray pads it with the
    # fill value, convert as it codes cheapest, and measures its candidates so: where two are
    # close, the two routes may choose differently, convert the fewer bytes as it writes them)
    edge = {k for k in direct if chunked and "/c/4" in k}
    for name in ("temp", "rain", "count"):
        keys = [k for k in direct if k.startswith(name + "/")]
        chains = [zarr.open_array(tmp_path / root, path=name).metadata.to_dict()["codecs"]
                  for root in ("direct.zarr", "converted.zarr")]
        if chains[0] == chains[1]:
            assert all(direct[k] == converted[k] for k in keys if k not in edge), name
            assert all(len(converted[k]) <= len(direct[k]) for k in keys if k in edge), name
        else:
            assert sum(len(converted[k]) for k in keys) <= sum(len(direct[k]) for k in keys), name
    if edge:
        assert sum(len(converted[k]) for k in edge) < sum(len(direct[k]) for k in edge)
    read_back_and_check(tmp_path / "converted.zarr", ds, 0.05)
    assert sum(map(len, direct.values())) < sum(map(len, chunk_files(tmp_path / "plain.zarr").values())) / 2
    assert encoding["temp"]["filters"] and "filters" not in encoding["time"]
    assert encoding["temp"]["_FillValue"] == -999.0          # the variable's own encoding kept
    read_back_and_check(tmp_path / "direct.zarr", ds, 0.05)


def test_encoding_under_a_relative_bound_leaves_integers_and_strings_as_they_are(tmp_path):
    ds = dataset(1000)
    encoding = zdt.encoding(ds, rel_error=1e-3)
    assert "filters" not in encoding["count"] and "filters" not in encoding["name"]
    ds.to_zarr(tmp_path / "direct.zarr", zarr_format=3, consolidated=False, encoding=encoding)
    read_back_and_check(tmp_path / "direct.zarr", ds, 1e-3, relative=True)
    back = xr.open_zarr(tmp_path / "direct.zarr", consolidated=False)
    assert np.array_equal(back["count"].values, ds["count"].values)


def test_encoding_takes_per_variable_bounds_and_excludes(tmp_path):
    ds = dataset(1000)
    encoding = zdt.encoding(ds, abs_error=0.5, bounds={"/rain": "abs:0.001"}, exclude=["/count"])
    assert "filters" not in encoding["count"]
    ds.to_zarr(tmp_path / "d.zarr", zarr_format=3, consolidated=False, encoding=encoding)
    back = xr.open_zarr(tmp_path / "d.zarr", consolidated=False)
    assert np.array_equal(back["rain"].values, ds["rain"].values)      # on its 0.1 grid: exact
    assert np.nanmax(np.abs(back["temp"].values - ds["temp"].values)) <= 0.5


def test_encoding_refuses_what_is_not_a_dataset():
    with pytest.raises(zdt.UsageError, match="takes an xarray Dataset, not DataArray"):
        zdt.encoding(dataset(10)["temp"], abs_error=1)


def test_encoding_for_zarr_format_2(tmp_path):
    ds = dataset(1500)
    ds.to_zarr(tmp_path / "plain.zarr", zarr_format=2, consolidated=False)
    zdt.convert(tmp_path / "plain.zarr", tmp_path / "converted.zarr", abs_error=0.05)
    encoding = zdt.encoding(ds, abs_error=0.05, zarr_format=2)
    ds.to_zarr(tmp_path / "direct.zarr", zarr_format=2, consolidated=False, encoding=encoding)
    assert chunk_files(tmp_path / "direct.zarr") == chunk_files(tmp_path / "converted.zarr")
    assert [f.codec_id for f in encoding["temp"]["filters"]] == ["scale_offset", "cast_value"]
    read_back_and_check(tmp_path / "direct.zarr", ds, 0.05)


def test_encoding_refuses_a_bound_in_the_wrong_units_unless_forced():
    ds = dataset(500)
    with pytest.raises(zdt.UsageError, match="force=True"):
        zdt.encoding(ds, abs_error=5.0, include=["/temp"])
    assert zdt.encoding(ds, abs_error=5.0, include=["/temp"], force=True)["temp"]["filters"]
