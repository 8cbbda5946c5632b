"""What zdt writes for each ``readers=`` choice, read by those readers in environments where zdt
is not installed (zdt replaces codec classes where it is, so only such an environment tells
what a collaborator without it sees): zarr-python at the oldest version the docs name (3.2)
and the newest, zarrs-python (its Rust pipeline, strictly) and TensorStore. Every value is
checked against its bound in exact arithmetic, every sentinel bit for bit.

The arrays are the kinds the engine meets, from real files (iris-sample-data): an SST analysis
in float32 with land as _FillValue 1e20 and as NaN, the same packed as int16 (scale 0.01,
offset 273.15) the way L4 products pack it, an ocean model's SST packed as int32 with a scale
of 1e-4, and a float64 electron density; absolute and relative bounds.

``ZDT_READER_VENVS`` names the environments, ``newest=PYTHON,oldest=PYTHON``: newest with the
newest zarr, cast-value-rs, pcodec, zarrs, tensorstore and xarray; oldest with zarr 3.2.0,
cast-value-rs, pcodec and xarray (CI's Python 3.12 leg makes both, .ci/run). Without it the
tests skip: such environments need a Python that zarr >= 3.2 installs on (3.12).
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
import xarray as xr
import zarr

import zdt
from exact import exact_scaled_error

VENVS = dict(item.split("=", 1) for item in os.environ.get("ZDT_READER_VENVS", "").split(",") if "=" in item)
pytestmark = [
    pytest.mark.skipif(
        not {"newest", "oldest"} <= set(VENVS),
        reason="set ZDT_READER_VENVS=newest=PYTHON,oldest=PYTHON: environments without zdt (CI's "
               "Python 3.12 leg makes them)"),
    # (one worker runs them all under --dist loadgroup, as CI's 3.12 leg does: the 36
    # conversions of `written` are made once, not once a worker)
    pytest.mark.xdist_group("readers_without_zdt"),
]
iris_sample_data = pytest.importorskip("iris_sample_data")
BASE = Path(iris_sample_data.__file__).parent / "sample_data"
CHILD = Path(__file__).parents[1] / "readers_child.py"

# (source, bound) pairs: the kinds of array, each under the bounds a user gives it
CASES = [("sst_fill", {"abs_error": 0.02}), ("sst_fill", {"rel_error": 1e-4}),
         ("sst_nan", {"abs_error": 0.02}), ("sst_nan", {"rel_error": 1e-4}),
         ("sst_int16", {"abs_error": 0.05}), ("sst_int16", {"rel_error": 1e-4}),
         ("tos_int32", {"abs_error": 0.005}), ("ne_float64", {"abs_error": 0.01}),
         ("ne_float64", {"rel_error": 1e-3})]
# the readers each choice must satisfy (zarr-python at both versions)
CHOICES = {"zarr-python": ("zarr-python",), "zarrs": ("zarrs",), "tensorstore": ("tensorstore",),
           "any": ("zarr-python", "zarrs", "tensorstore")}


def sources(root: Path) -> dict[str, tuple[str, str]]:
    """name -> (store, array), each a zarr v3 store as xarray writes it."""
    out = {}
    with xr.open_dataset(BASE / "ostia_monthly.nc") as ds:
        sst = ds[["surface_temperature"]].isel(time=slice(0, 12)).load()
    cases = {
        "sst_fill": (sst, {}),
        "sst_nan": (sst, {"_FillValue": np.float32(np.nan)}),
        "sst_int16": (sst, {"dtype": "int16", "scale_factor": 0.01, "add_offset": 273.15,
                            "_FillValue": np.int16(-32768)}),
    }
    with xr.open_dataset(BASE / "NEMO" / "nemo_1m_20150101-20150201_grid-T.nc") as ds:
        cases["tos_int32"] = (ds[["tos"]].load(), {"dtype": "int32", "scale_factor": 1e-4,
                                                  "_FillValue": np.int32(-2**31)})
    with xr.open_dataset(BASE / "space_weather.nc") as ds:
        cases["ne_float64"] = (ds[["Ne"]].load(), {})
    for name, (ds, enc) in cases.items():
        var = next(iter(ds.data_vars))
        # (packed: the packing's own _FillValue instead of the file's float sentinels)
        kept = {} if "dtype" in enc else {k: v for k, v in ds[var].encoding.items()
                                          if k in ("_FillValue", "missing_value", "dtype")}
        encoding = {var: {**kept, **enc}}
        path = root / f"{name}.zarr"
        ds.to_zarr(path, zarr_format=3, consolidated=False, mode="w", encoding=encoding)
        out[name] = (str(path), var)
    return out


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    """Every case converted for every choice of readers: (case, choice) -> output store."""
    root = tmp_path_factory.mktemp("without-zdt")
    src = sources(root)
    out = {}
    for i, (name, bound) in enumerate(CASES):
        for choice in CHOICES:
            dst = root / f"{i}-{name}-{choice}.zarr"
            zdt.convert(src[name][0], str(dst), readers=choice, **bound)
            out[(i, choice)] = str(dst)
    return src, out


def read_without_zdt(python: str, reader: str, jobs: list[dict], where: Path) -> dict:
    spec = where / f"jobs-{reader}.json"
    spec.write_text(json.dumps(jobs))
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    proc = subprocess.run([python, str(CHILD), reader, str(spec)], capture_output=True, text=True,
                          timeout=600, cwd=where, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def check(name: str, src: tuple[str, str], got: np.ndarray, bound: dict) -> None:
    """got (the stored values a reader decoded) against the source's, exactly: NaN and the
    fill value in place, every other value within the bound (CF-packed: in physical units)."""
    arr = zarr.open_array(src[0], path=src[1], mode="r")
    x, attrs = arr[...], dict(arr.attrs)
    assert got.dtype == x.dtype and got.shape == x.shape, name
    fill = attrs.get("_FillValue")
    if isinstance(fill, str):           # (xarray writes a float _FillValue as base64 bytes)
        raw = base64.b64decode(fill)
        fill = float(np.frombuffer(raw, dtype=f"<f{len(raw)}")[0])
    def specials(v: np.ndarray) -> np.ndarray:
        out = np.isnan(v) if v.dtype.kind == "f" else np.zeros(v.shape, bool)
        if fill is not None and not (isinstance(fill, float) and np.isnan(fill)):
            out |= v == np.asarray(fill, v.dtype)
        return out
    special = specials(x)
    assert np.array_equal(special, specials(got)), f"{name}: the mask moved"
    assert special.any() == (not name.startswith("ne_")), name       # (land, but in Ne)
    assert x[special].tobytes() == got[special].tobytes(), f"{name}: a sentinel changed"
    worst = exact_scaled_error(x[~special], got[~special], Fraction(attrs.get("scale_factor", 1)),
                               Fraction(attrs.get("add_offset", 0)), relative="rel_error" in bound)
    limit = Fraction(bound.get("abs_error", bound.get("rel_error")))
    assert worst <= limit, f"{name}: error {float(worst):.6g} beyond {float(limit):g}"


@pytest.mark.parametrize("venv", ["newest", "oldest"])
def test_zarr_python_without_zdt_reads_what_zdt_wrote_for_it(written, venv, tmp_path):
    src, out = written
    choices = [c for c, readers in CHOICES.items() if "zarr-python" in readers]
    jobs = [{"store": out[(i, c)], "array": src[name][1], "out": str(tmp_path / f"{i}-{c}.npy")}
            for i, (name, _) in enumerate(CASES) for c in choices]
    result = read_without_zdt(VENVS[venv], "zarr-python", jobs, tmp_path)
    if venv == "oldest":
        assert result["versions"]["zarr"] == "3.2.0", result["versions"]
    # (the packed int16 at a bound of several stored steps is numcodecs' FixedScaleOffset: read
    # here by numcodecs' own class)
    i = CASES.index(("sst_int16", {"abs_error": 0.05}))
    meta = json.loads((Path(out[(i, "zarr-python")]) / src["sst_int16"][1] / "zarr.json").read_text())
    assert "numcodecs.fixedscaleoffset" in [c["name"] for c in meta["codecs"]], meta["codecs"]
    assert result["errors"] == {}, result
    for i, (name, bound) in enumerate(CASES):
        for c in choices:
            check(f"{name} {bound} for {c}, zarr {result['versions']['zarr']}", src[name],
                  np.load(tmp_path / f"{i}-{c}.npy"), bound)


@pytest.mark.parametrize("reader", ["zarrs", "tensorstore"])
def test_zarrs_and_tensorstore_without_zdt_read_what_zdt_wrote_for_them(written, reader, tmp_path):
    src, out = written
    choices = [c for c, readers in CHOICES.items() if reader in readers]
    jobs = [{"store": out[(i, c)], "array": src[name][1], "out": str(tmp_path / f"{i}-{c}.npy")}
            for i, (name, _) in enumerate(CASES) for c in choices]
    result = read_without_zdt(VENVS["newest"], reader, jobs, tmp_path)
    assert result["errors"] == {}, result
    for i, (name, bound) in enumerate(CASES):
        for c in choices:
            check(f"{name} {bound} for {c}, {reader}", src[name], np.load(tmp_path / f"{i}-{c}.npy"), bound)


def test_zdt_inspect_names_what_each_reader_needs(written, capsys):
    """The same outputs, as zdt inspect describes them: what it says a reader needs is what
    the environments above hold."""
    from zdt.command import main

    src, out = written
    i = CASES.index(("sst_int16", {"abs_error": 0.05}))
    assert main(["inspect", out[(i, "zarr-python")], "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    sst = next(r for r in rows if r["path"] == "/surface_temperature")
    assert sst["readers"]["zarr-python"].startswith("pip install 'zarr>=3.2'")
    i = CASES.index(("sst_fill", {"abs_error": 0.02}))
    assert main(["inspect", out[(i, "tensorstore")]]) == 0
    text = capsys.readouterr().out
    assert "to read this store:" in text and "  tensorstore: pip install 'tensorstore'" in text
