"""A scientist's first day with their own files: what a careless bound or a typo does, and what
is kept exact without being asked. Real model and analysis files (iris-sample-data: an OSTIA
SST analysis, a hybrid-height model run, a UGRID mesh), written to zarr by xarray as a user
would."""

from __future__ import annotations

import os

import numpy as np
import pytest
import xarray as xr
import zarr

import zdt
from zdt.command import main
from zdt.errors import UsageError

iris_sample_data = pytest.importorskip("iris_sample_data")
BASE = os.path.join(os.path.dirname(iris_sample_data.__file__), "sample_data")


def to_zarr(tmp_path, name: str, **open_kw) -> str:
    out = str(tmp_path / (name + ".zarr"))
    with xr.open_dataset(os.path.join(BASE, name), **open_kw) as ds:
        ds.to_zarr(out, zarr_format=3, consolidated=False, mode="w")
    return out


def run(capsys, *argv: str) -> tuple[int, str, str]:
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


@pytest.fixture(scope="module")
def ostia(tmp_path_factory):
    """The OSTIA monthly SST (K, land as _FillValue 1e20, NaN once xarray decodes it)."""
    return to_zarr(tmp_path_factory.mktemp("ostia"), "ostia_monthly.nc")


def test_a_name_that_matches_no_array_is_an_error_naming_the_nearest(ostia, capsys, tmp_path):
    for kw in ({"bounds": {"/sst": "abs:0.01"}, "abs_error": 0.01},
               {"include": ["/surface_temp"], "abs_error": 0.01},
               {"exclude": "/surface_temperatur", "abs_error": 0.01}):
        with pytest.raises(UsageError) as e:
            zdt.suggest(ostia, **kw)
        param = next(k for k in kw if k != "abs_error")
        assert str(e.value).startswith(f"{param}= names /"), e.value
        assert "matches no array" in str(e.value) and "/surface_temperature" in str(e.value)
    # the command names its option; nothing is written
    rc, out, err = run(capsys, "convert", ostia, str(tmp_path / "o.zarr"), "--bound",
                       "/sst=abs:0.01", "--abs-error", "0.01", "--quiet")
    assert rc == 2 and out == "" and not (tmp_path / "o.zarr").exists()
    assert err.startswith("zdt convert: --bound names /sst, which matches no array (")
    assert "/surface_temperature" in err and len(err.splitlines()) == 1
    # a glob that matches is fine; a bare number is an absolute bound in the data's units
    plan = zdt.suggest(ostia, bounds={"/surface_*": 0.01})
    assert plan["/surface_temperature"].bound == zdt.engine.bounds.Bound("abs", 0.01)


def test_a_bound_in_the_wrong_units_is_refused_unless_forced(ostia, capsys):
    x = np.asarray(zarr.open_array(ostia, path="surface_temperature")[...], dtype=np.float64)
    x[x == np.float32(1e20)] = np.nan          # (land: the _FillValue xarray wrote back)
    lo, hi = np.nanmin(x), np.nanmax(x)
    assert 250 < lo < hi < 320            # (kelvin)
    # 5 K on a field spanning ~30 K: more than a tenth of its range
    with pytest.raises(UsageError) as e:
        zdt.suggest(ostia, abs_error=5)
    text = str(e.value)
    assert text.startswith("/surface_temperature: the bound abs:5 is more than a tenth of the "
                           f"array's range ({lo:.6g} to {hi:.6g} K)"), text
    assert "force=True" in text
    rc, _, err = run(capsys, "suggest", ostia, "--abs-error", "5", "--quiet")
    assert rc == 2 and "--force" in err and "force=True" not in err
    assert zdt.suggest(ostia, abs_error=5, force=True)["/surface_temperature"].action == "encode"
    # a tenth of the range itself is a bound someone may mean
    assert zdt.suggest(ostia, abs_error=(hi - lo) / 10)["/surface_temperature"].bound.value == (hi - lo) / 10
    for rel in (1, 10):
        with pytest.raises(UsageError, match=rf"^rel_error={rel} lets every value become 0 or"):
            zdt.suggest(ostia, rel_error=rel)
        rc, _, err = run(capsys, "convert", ostia, "unused.zarr", "--rel-error", str(rel))
        assert rc == 2 and err.startswith(f"zdt convert: --rel-error {rel} lets every value") and "--force" in err
    assert zdt.suggest(ostia, rel_error=1, force=True)["/surface_temperature"].bound.value == 1


def test_api_errors_name_its_parameters_and_the_command_its_options(ostia, capsys):
    cases = [(dict(abs_error=-1), "abs_error= must be a positive finite number, not -1.0",
              "--abs-error must be a positive finite number"),
             (dict(abs_error=0.1, rel_error=0.1), "give at most one of abs_error= and rel_error=",
              "give at most one of --abs-error and --rel-error"),
             (dict(), "give a bound: abs_error=E, rel_error=R or bounds={PATH: 'abs:E'}",
              "give a bound: --abs-error E, --rel-error R or --bound PATH=abs:E"),
             (dict(abs_error=0.1, readers="zarr2"), "readers='zarr2': not a reader",
              "--readers 'zarr2': not a reader"),
             (dict(abs_error=0.1, sample=0), "sample= must be at least 1", None)]
    for kw, api, command in cases:
        with pytest.raises(UsageError) as e:
            zdt.suggest(ostia, **kw)
        assert str(e.value).startswith(api), e.value
        assert "--" not in str(e.value)
        if command is not None:
            argv = [f"--{k.replace('_', '-')}={v}" for k, v in kw.items()]
            rc, _, err = run(capsys, "suggest", ostia, *argv, "--quiet")
            assert rc == 2 and err.startswith(f"zdt suggest: {command}"), err


def test_flag_variables_mesh_indices_and_formula_terms_are_kept_exact(tmp_path):
    # a UGRID mesh: connectivities (integer indices, one a flag variable too) and coordinates
    mesh = to_zarr(tmp_path, "mesh_C4_synthetic_float.nc")
    plan = zdt.suggest(mesh, abs_error=1.0)
    by = {d.path: d for d in plan}
    for name in ("face_nodes", "edge_nodes", "face_edges", "face_links"):
        d = by[f"/example_C4_{name}"]
        assert d.action == "copy" and d.why.startswith("a mesh's connectivity (example_C4): kept exact"), d.why
    assert by["/example_C4_node_x"].why.startswith("a mesh's node coordinates (example_C4)")
    assert by["/synthetic"].action == "encode"
    # named with a bound, it is encoded (the bound is the user's word)
    assert zdt.suggest(mesh, abs_error=1.0, bounds={"/example_C4_face_x": "abs:0.5"},
                       force=True)["/example_C4_face_x"].action == "encode"
    # a flag variable on its own: CF says its values are codes
    g = zarr.open_group(str(tmp_path / "flags.zarr"), mode="w", zarr_format=3)
    sst = zarr.open_array(to_zarr(tmp_path, "ostia_monthly.nc"), path="surface_temperature")[:2]
    sst[sst == np.float32(1e20)] = np.nan
    cold, warm = np.nanpercentile(sst, [33, 66])
    quality = np.where(np.isnan(sst), 1, np.where(sst > warm, 16, np.where(sst > cold, 8, 4))).astype("int16")
    quality[:, ::5, ::7] = 2
    for name, values, attrs in (("quality", quality, {"flag_masks": [1, 2, 4, 8, 16],
                                                      "flag_meanings": "land ice cold mild warm"}),
                                ("level", quality // 2, {"flag_values": [0, 1, 2, 4, 8],
                                                         "flag_meanings": "a b c d e"})):
        a = g.create_array(name, shape=values.shape, dtype=values.dtype, attributes=attrs)
        a[...] = values
    plan = zdt.suggest(str(tmp_path / "flags.zarr"), abs_error=1.0)
    assert plan["/quality"].why.startswith("a CF flag variable (bit masks, not a quantity): kept exact")
    assert plan["/level"].why.startswith("a CF flag variable (codes with meanings, not a quantity)")
    zdt.convert(str(tmp_path / "flags.zarr"), str(tmp_path / "flags-out.zarr"), abs_error=1.0)
    back = zarr.open_array(str(tmp_path / "flags-out.zarr"), path="quality")[...]
    assert set(np.unique(back)) == {1, 2, 4, 8, 16} and np.array_equal(back, quality)
    # a hybrid height coordinate's terms named by its formula_terms alone (the data variable
    # lists no coordinates, as many model outputs do not): sigma and the orography
    hh = str(tmp_path / "hh.zarr")
    with xr.open_dataset(os.path.join(BASE, "hybrid_height.nc"), decode_coords=False) as ds:
        del ds["air_potential_temperature"].attrs["coordinates"]
        ds.to_zarr(hh, zarr_format=3, consolidated=False)
    assert "coordinates" not in zarr.open_array(hh, path="air_potential_temperature").attrs
    by = {d.path: d for d in zdt.suggest(hh, rel_error=1e-3)}
    for name in ("sigma", "surface_altitude"):
        assert by[f"/{name}"].action == "copy"
        assert by[f"/{name}"].why.startswith("a coordinate (a term of the 'formula_terms' of "
                                             "level_height): kept exact"), by[f"/{name}"].why
    assert by["/air_potential_temperature"].action == "encode"


def test_a_packed_arrays_bound_is_said_in_its_physical_units(tmp_path):
    """OSTIA's SST packed as int16 (0.01 K steps): zdt.predict keeps 5 stored steps at 0.05 K,
    and says 0.05, the user's number."""
    with xr.open_dataset(os.path.join(BASE, "ostia_monthly.nc")) as ds:
        sst = ds[["surface_temperature"]].isel(time=slice(0, 6)).load()
    src = str(tmp_path / "packed.zarr")
    sst.to_zarr(src, zarr_format=3, consolidated=False, encoding={"surface_temperature": {
        "dtype": "int16", "scale_factor": 0.01, "add_offset": 273.15, "_FillValue": np.int16(-32768)}})
    for bound, said in (({"abs_error": 0.05}, "within 0.05 "), ({"rel_error": 1e-4}, "within 0.0001 of each magnitude")):
        plan = zdt.suggest(src, readers="zdt", **bound)
        d = plan["/surface_temperature"]
        assert d.stored_bound is not None
        labels = [c["label"] for c in d.measured["candidates"] if c["label"].startswith("zdt.predict")]
        assert labels and all(said in label for label in labels), labels
