"""zdt.predict as a candidate of the engine: offered only when every reader named has zdt
(zarr v3, float32 / float64, an absolute bound), measured by the bytes it writes and by the
error of what its bytes decode to, and written so that every value reads back within the
bound and no value reads back as the fill value that masks it."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
import xarray as xr
import zarr

import zdt
from exact import exact_error
from zdt.codecs.predict import PredictConfig


def smooth(n0: int = 300, n1: int = 260, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    i, j = np.mgrid[0:n0, 0:n1]
    return 500 * np.sin(i / 50) * np.cos(j / 35) + rng.normal(0, 0.05, (n0, n1))


def write(root: Path, x: np.ndarray, *, fill=np.nan, attrs=None, chunks=(128, 128)) -> Path:
    g = zarr.open_group(root, mode="w")
    a = g.create_array("x", shape=x.shape, chunks=chunks, dtype=x.dtype, fill_value=fill,
                       attributes=attrs or {}, dimension_names=[f"d{k}" for k in range(x.ndim)])
    a[...] = x
    return root


def names(plan_or_path) -> set[str]:
    if isinstance(plan_or_path, Path):
        doc = json.loads((plan_or_path / "x" / "zarr.json").read_text())
        return {c["name"] for c in doc["codecs"]}
    return {c["name"] for c in plan_or_path["/x"].codecs or []}


def exactly_within(x: np.ndarray, y: np.ndarray, E: float) -> None:
    x, y = x.reshape(-1), y.reshape(-1)
    assert np.array_equal(np.isnan(x), np.isnan(y))
    assert exact_error(x, y, relative=False) <= Fraction(E)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_readers_with_zdt_get_predict_where_it_writes_fewest_bytes(tmp_path, dtype):
    x = smooth().astype(dtype)
    x[5, 7] = np.nan
    src = write(tmp_path / "src.zarr", x, chunks=(128, 100))        # edge chunks both ways
    E = 0.5
    portable = zdt.convert(src, tmp_path / "portable.zarr", abs_error=E)
    report = zdt.convert(src, tmp_path / "zdt.zarr", abs_error=E, readers="zdt")
    assert "zdt.predict" not in names(tmp_path / "portable.zarr")
    assert names(tmp_path / "zdt.zarr") == {"zdt.predict"}
    assert report.bytes_after < portable.bytes_after
    exactly_within(x, zarr.open_array(tmp_path / "zdt.zarr" / "x", mode="r")[...], E)
    # the plan's error is what the written bytes decode to, measured, not assumed
    measured = zdt.suggest(src, abs_error=E, readers="zdt")["/x"].measured
    assert 0.4 < measured["error"] <= E


def test_never_offered_to_readers_without_zdt(tmp_path):
    src = write(tmp_path / "src.zarr", smooth())
    for readers in ("zarr-python", "zarrs", "tensorstore", "zdt,zarr-python", "any"):
        plan = zdt.suggest(src, abs_error=0.5, readers=readers)
        assert "zdt.predict" not in names(plan), readers
        assert all("zdt.predict" not in r["label"] for r in [plan["/x"].measured.get("runner_up", {"label": ""})])


@pytest.mark.parametrize("zarr_fill", [0.0, np.nan])
def test_no_value_reads_back_as_a_masking_fill_value(tmp_path, zarr_fill):
    """Data crossing the CF _FillValue 0.0 (xarray writes it base64-coded in zarr v3): a value
    that decoded to 0.0 would be hidden by xarray. Where 0.0 is the zarr fill value the codec
    never reconstructs a value to it (stores such values exactly); where the zarr fill value is
    NaN and the data hold 0.0, 0.0 becomes the codec's own `fill`, with the same guarantee; the
    mask survives both."""
    x = smooth() / 100                                  # -5 .. 5, crossing 0 everywhere
    x[40:90, 30:120] = 0.0                              # missing
    E = 0.02
    near = (np.abs(x) < E) & (x != 0.0)
    assert near.sum() > 500                             # values a bare quantizer would zero
    src = tmp_path / "src.zarr"
    xr.Dataset({"x": (("a", "b"), np.where(x == 0.0, np.nan, x))}).to_zarr(
        src, encoding={"x": {"_FillValue": 0.0, "fill_value": zarr_fill, "chunks": (128, 128)}},
        zarr_format=3, consolidated=False)
    assert zarr.open_array(src / "x", mode="r")[...].tobytes() == x.tobytes()
    out = tmp_path / "out.zarr"
    zdt.convert(src, out, abs_error=E, readers="zdt")
    assert "zdt.predict" in names(out)
    doc = json.loads((out / "x" / "zarr.json").read_text())
    assert doc["codecs"][0]["configuration"].get("fill") == (None if zarr_fill == 0.0 else 0.0)
    y = zarr.open_array(out / "x", mode="r")[...]
    assert np.array_equal(x == 0.0, y == 0.0)
    exactly_within(x, y, E)
    src_ds = xr.open_zarr(src, consolidated=False)
    out_ds = xr.open_zarr(out, consolidated=False)
    assert np.array_equal(src_ds.x.isnull().values, out_ds.x.isnull().values)


@pytest.mark.parametrize("fill", [0.0, -0.0, 1.5])
def test_the_encoder_never_reconstructs_the_fill_value(fill):
    x = np.linspace(-2, 2, 4001)
    x[::7] = fill
    config = PredictConfig.create(abs_error=1.0, predictor="lorenzo", entropy="zstd")
    y = config.decode(config.encode(x, fill), x.dtype, x.shape, fill)
    was = x.view(np.uint64) == np.float64(fill).view(np.uint64)
    assert np.array_equal(y[was].view(np.uint64), x[was].view(np.uint64))
    assert not (y[x != fill] == fill).any()         # (0.0 and -0.0 are equal: both stay)
    assert np.abs(y - x).max() <= 1.0


@pytest.mark.parametrize("attrs, why", [
    ({"missing_value": 100.0}, "a masking value inside the data's range"),
    ({"valid_range": [-500.0, 500.0]}, "a valid range the decoded values could leave"),
])
def test_not_offered_where_it_cannot_keep_what_readers_mask(tmp_path, attrs, why):
    src = write(tmp_path / "src.zarr", smooth(), attrs=attrs)
    assert "zdt.predict" not in names(zdt.suggest(src, abs_error=0.5, readers="zdt")), why
    wide = {k: ([-1e4, 1e4] if k == "valid_range" else 1e6) for k in attrs}
    src2 = write(tmp_path / "src2.zarr", smooth(), attrs=wide)
    assert "zdt.predict" in names(zdt.suggest(src2, abs_error=0.5, readers="zdt"))


def test_resume_checks_predict_units_bit_for_bit(tmp_path):
    """--resume compares what the source encodes to with what the stopped run wrote: the
    codec is deterministic, so a finished copy resumes as complete."""
    src = write(tmp_path / "src.zarr", smooth())
    out = tmp_path / "out.zarr"
    zdt.convert(src, out, abs_error=0.5, readers="zdt")
    before = {p.name: p.read_bytes() for p in (out / "x" / "c").rglob("*") if p.is_file()}
    from zdt.engine.writer import runner_for
    plan = zdt.suggest(src, abs_error=0.5, readers="zdt")
    arr = zarr.open_array(src / "x", mode="r")
    runner = runner_for(arr, plan["/x"])
    written = zarr.open_array(out / "x", mode="r")
    for region in [(slice(0, 128), slice(0, 128)), (slice(256, 300), slice(256, 260))]:
        want = runner.values(arr[region])
        assert want.tobytes() == written[region].tobytes()
    assert before


def test_declared_sentinels_the_data_hold_come_back_bit_for_bit(tmp_path):
    """A missing_value other than the (NaN) fill value that occurs in the data must come back
    bit for bit: the codec takes it as its `fill` (kept exactly, never decoded to); two such
    values it cannot keep both (it would predict one like data), so it is not offered."""
    x = smooth()
    x[10:20, 10:20] = 1e6
    src = write(tmp_path / "src.zarr", x, attrs={"missing_value": 1e6})
    plan = zdt.suggest(src, abs_error=0.5, readers="zdt")
    assert "zdt.predict" in names(plan)
    out = tmp_path / "out.zarr"
    zdt.convert(src, out, plan)
    y = zarr.open_array(out / "x", mode="r")[...]
    assert (y[10:20, 10:20] == 1e6).all() and (y == 1e6).sum() == 100
    x[30:35, 30:35] = -1e6
    src2 = write(tmp_path / "src2.zarr", x, attrs={"missing_value": 1e6, "_FillValue": -1e6})
    plan = zdt.suggest(src2, abs_error=0.5, readers="zdt")
    assert "zdt.predict" not in names(plan)
    zdt.convert(src2, tmp_path / "out2.zarr", plan)
    y = zarr.open_array(tmp_path / "out2.zarr" / "x", mode="r")[...]
    assert (y[10:20, 10:20] == 1e6).all() and (y[30:35, 30:35] == -1e6).all()


def test_a_hand_chain_with_a_filter_ahead_of_predict_is_checked_as_read(tmp_path):
    """A plan edited by hand to put scale_offset ahead of zdt.predict: each unit is checked
    against the bound on what readers get (the filter undone, not the stored values 1000
    away), and the copy keeps the bound."""
    x = smooth() + 1000.0
    src = write(tmp_path / "src.zarr", x, chunks=(128, 100))
    out = tmp_path / "out.zarr"
    plan = zdt.suggest(src, abs_error=0.01, readers="zdt")
    plan["/x"].codecs = [{"name": "scale_offset", "configuration": {"offset": 1000.0, "scale": 1.0}},
                         {"name": "zdt.predict", "configuration": {"abs_error": 0.01}}]
    report = zdt.convert(src, out, plan)
    assert names(out) == {"scale_offset", "zdt.predict"}
    exactly_within(x, zarr.open_array(out / "x", mode="r")[...], 0.01)
    assert 0 < report.arrays[0].error <= 0.01


def test_a_hand_chain_with_predict_behind_a_transpose_is_refused(tmp_path):
    """A plan with a bound, edited to put zdt.predict behind a transpose: its predictions run
    along the transposed chunk, which convert's check does not model yet: refused in one
    line, nothing written."""
    src = write(tmp_path / "src.zarr", smooth())
    plan = zdt.suggest(src, abs_error=0.01, readers="zdt")
    plan["/x"].codecs = [{"name": "transpose", "configuration": {"order": [1, 0]}},
                         {"name": "zdt.predict", "configuration": {"abs_error": 0.01}}]
    with pytest.raises(zdt.InputError, match="behind a transpose"):
        zdt.convert(src, tmp_path / "out.zarr", plan)
    assert not (tmp_path / "out.zarr").exists()


def test_relative_bounds_get_predict_through_logarithms_with_readers_that_have_zdt(tmp_path):
    """A positive field spanning decades with exact zeros (precipitation-like) under a
    pointwise-relative bound: with readers zdt the engine writes zdt.predict (rel_error), in
    fewer bytes than the portable choice; every value within R of its magnitude, zeros zero,
    the NaN mask kept."""
    i, j = np.mgrid[0:200, 0:180]
    rng = np.random.default_rng(4)
    x = 10.0 ** (2 * np.sin(i / 30) * np.cos(j / 25) + rng.normal(0, 0.01, i.shape))
    x[x < 0.05] = 0.0
    x[100:110, 20:40] = np.nan
    src = write(tmp_path / "src.zarr", x, chunks=(128, 100))
    R = 1e-3
    portable = zdt.convert(src, tmp_path / "portable.zarr", rel_error=R)
    report = zdt.convert(src, tmp_path / "zdt.zarr", rel_error=R, readers="zdt")
    doc = json.loads((tmp_path / "zdt.zarr" / "x" / "zarr.json").read_text())
    assert [c["name"] for c in doc["codecs"]] == ["zdt.predict"]
    assert doc["codecs"][0]["configuration"]["rel_error"] == R
    assert report.bytes_after < 0.8 * portable.bytes_after
    y = zarr.open_array(tmp_path / "zdt.zarr" / "x", mode="r")[...]
    assert np.array_equal(np.isnan(x), np.isnan(y)) and np.array_equal(x == 0, y == 0)
    assert exact_error(x, y, relative=True) <= Fraction(R)


def test_a_cf_fill_value_the_data_hold_becomes_the_codecs_fill(tmp_path):
    """xarray writes a masked float field's missing values as the CF _FillValue (here 1e20, as
    netCDF ocean models do) into the data and gives the zarr array the fill value NaN: the
    engine hands 1e20 to zdt.predict as its `fill` (kept exactly, predicted around, never
    decoded to), and xarray reads the same mask and values within the bound."""
    i, j = np.mgrid[0:150, 0:170]
    sst = (15 + 12 * np.sin(i / 40) * np.cos(j / 33)).astype("float32")
    land = ((i - 70) ** 2 / 900 + (j - 80) ** 2 / 1600 < 1) | (j < 12)
    src = tmp_path / "src.zarr"
    xr.Dataset({"tos": (("y", "x"), np.where(land, np.nan, sst))}).to_zarr(
        src, encoding={"tos": {"_FillValue": np.float32(1e20), "chunks": (64, 64)}},
        zarr_format=3, consolidated=False)
    stored = zarr.open_array(src / "tos", mode="r")
    assert np.isnan(stored.fill_value) and (stored[...] == np.float32(1e20)).sum() == land.sum()
    E = 0.01
    out = tmp_path / "out.zarr"
    portable = zdt.convert(src, tmp_path / "portable.zarr", abs_error=E)
    report = zdt.convert(src, out, abs_error=E, readers="zdt")
    doc = json.loads((out / "tos" / "zarr.json").read_text())
    assert [c["name"] for c in doc["codecs"]] == ["zdt.predict"]
    assert doc["codecs"][0]["configuration"]["fill"] == float(np.float32(1e20))
    assert report.bytes_after < 0.8 * portable.bytes_after
    y = zarr.open_array(out / "tos", mode="r")[...]
    assert np.array_equal(y == np.float32(1e20), land)
    exactly_within(np.where(land, np.nan, sst), np.where(land, np.nan, y), E)
    back = xr.open_zarr(out, consolidated=False).tos.values
    assert np.array_equal(np.isnan(back), land)


def test_the_write_takes_the_chunks_the_check_encoded_and_writes_the_same_bytes(tmp_path,
                                                                                monkeypatch):
    """convert checks each unit by encoding and decoding its chunks; the write takes those
    bytes (zdt.engine.predict_memo) instead of encoding every chunk again: one encoding fewer
    per chunk written, and the same store as with every chunk encoded twice."""
    from zdt.engine import predict_memo

    x = smooth()
    x[5, 7] = np.nan
    src = write(tmp_path / "src.zarr", x, chunks=(128, 100))        # 3 x 3 chunks, edges
    calls = []
    encode = PredictConfig.encode
    monkeypatch.setattr(PredictConfig, "encode",
                        lambda self, *a: calls.append(1) or encode(self, *a))
    zdt.convert(src, tmp_path / "once.zarr", abs_error=0.5, readers="zdt")
    once = len(calls)
    monkeypatch.setattr(predict_memo, "LIMIT", 0)                   # (nothing kept)
    calls.clear()
    zdt.convert(src, tmp_path / "twice.zarr", abs_error=0.5, readers="zdt")
    assert names(tmp_path / "once.zarr") == {"zdt.predict"}
    assert len(calls) - once == 9, (once, len(calls))
    assert not predict_memo._kept
    once_dir, twice_dir = tmp_path / "once.zarr", tmp_path / "twice.zarr"
    files = sorted(p.relative_to(once_dir) for p in once_dir.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(twice_dir) for p in twice_dir.rglob("*") if p.is_file())
    assert all((once_dir / f).read_bytes() == (twice_dir / f).read_bytes() for f in files)


@pytest.mark.parametrize("bound", [{"abs_error": 0.5}, {"abs_error": 5.0}, {"rel_error": 1e-3}])
def test_grid_codes_coded_exactly_by_predict_where_the_grid_is_coarser_than_the_bound(tmp_path, bound):
    """Data on a grid of 28 m (an elevation model quantized at its source), with a masked
    region: with readers zdt the engine writes the grid's codes coded exactly by zdt.predict
    (abs_error 0.5 on the integer codes), fewer bytes than zdt.predict on the values (which
    quantizes in steps of 2E and loses the grid) and than the grid's codes through pcodec;
    every value comes back on its grid point (up to float32's rounding of the offset
    arithmetic), the mask as NaN."""
    i, j = np.mgrid[0:300, 0:280]
    rng = np.random.default_rng(8)
    height = 2000 * np.sin(i / 60) * np.cos(j / 45) + 30 * rng.normal(0, 1, i.shape).cumsum(axis=1) / 20
    x = (np.round(height / 28) * 28 - 450).astype("float32")
    x[:40, :60] = np.nan
    src = write(tmp_path / "src.zarr", x, chunks=(150, 140))
    report = zdt.convert(src, tmp_path / "zdt.zarr", readers="zdt", **bound)
    doc = json.loads((tmp_path / "zdt.zarr" / "x" / "zarr.json").read_text())
    codecs = [c["name"] for c in doc["codecs"]]
    assert codecs == ["scale_offset", "cast_value", "zdt.predict"], codecs
    assert doc["codecs"][0]["configuration"]["scale"] == pytest.approx(1 / 28)
    assert doc["codecs"][2]["configuration"]["abs_error"] == 0.5
    y = zarr.open_array(tmp_path / "zdt.zarr" / "x", mode="r")[...]
    assert np.array_equal(np.isnan(x), np.isnan(y))
    assert exact_error(x, y, relative=False) <= Fraction(1, 1000)
    alone = PredictConfig.create(**bound)
    values = sum(len(alone.encode(x[a:a + 150, b:b + 140], np.nan))
                 for a in (0, 150) for b in (0, 140))
    assert report.bytes_after < 0.9 * values
    portable = zdt.convert(src, tmp_path / "portable.zarr", **bound)
    assert report.bytes_after < 0.9 * portable.bytes_after


def test_chunks_along_time_get_the_first_slice_s_mask_as_their_reference(tmp_path):
    """A land-masked field chunked one time step a chunk: with readers zdt the engine gives
    zdt.predict the first slice's mask as its reference (`mask`), every chunk's mask looks
    back at it (the header's field 1), and the chunks hold fewer bytes than the same
    conversion's without one; the mask and the bound come back. One chunk along time: no
    reference (nothing to share)."""
    i, j = np.mgrid[0:90, 0:120]
    land = (np.sin(i / 5) * np.cos(j / 7) + 0.6 * np.sin(i / 3.1 + j / 4.3)) > 0.4
    rng = np.random.default_rng(2)
    x = np.stack([280 + np.sin(i / 9 + t) + np.cos(j / 11) + rng.normal(0, 0.01, i.shape)
                  for t in range(4)])
    x[:, land] = np.nan
    src = write(tmp_path / "src.zarr", x, chunks=(1, 90, 120))
    zdt.convert(src, tmp_path / "ref.zarr", abs_error=0.05, readers="zdt")
    doc = json.loads((tmp_path / "ref.zarr" / "x" / "zarr.json").read_text())
    codec = doc["codecs"][-1]
    assert codec["name"] == "zdt.predict" and codec["configuration"]["mask"]["shape"] == [90, 120]
    chunks = sorted((tmp_path / "ref.zarr" / "x" / "c").rglob("*"))
    chunks = [p for p in chunks if p.is_file()]
    assert len(chunks) == 4 and all(p.read_bytes()[:7] == b"ZPR2\x02\x08\x01" for p in chunks)
    y = zarr.open_array(tmp_path / "ref.zarr" / "x", mode="r")[...]
    assert np.array_equal(np.isnan(x), np.isnan(y))
    assert np.nanmax(np.abs(y - x)) <= 0.05
    plain = PredictConfig.create(abs_error=0.05)
    without = sum(len(plain.encode(x[t:t + 1], np.nan)) for t in range(4))
    assert sum(p.stat().st_size for p in chunks) < without - 3 * 200
    # what suggest prints shows the reference's stream by its length only (the plan keeps it)
    plan = zdt.suggest(src, abs_error=0.05, readers="zdt")
    text = "\n".join(plan["/x"].report())
    stream = codec["configuration"]["mask"]["stream"]
    assert f"<{len(stream)} base64 characters>" in text and stream not in text
    assert plan["/x"].codecs[-1]["configuration"]["mask"]["stream"] == stream
    one = write(tmp_path / "one.zarr", x, chunks=(4, 90, 120))
    zdt.convert(one, tmp_path / "one_out.zarr", abs_error=0.05, readers="zdt")
    doc = json.loads((tmp_path / "one_out.zarr" / "x" / "zarr.json").read_text())
    assert "mask" not in doc["codecs"][-1].get("configuration", {})


def test_the_effort_asked_reaches_every_predict_encoding_and_a_bad_one_is_refused(tmp_path):
    """zdt.suggest / convert(effort=...) and --effort: the zdt.predict encodings the engine
    measures and writes carry it (absent for the default), and the chunks they write decode
    within the bound."""
    from zdt.command import main as command
    from zdt.errors import UsageError

    x = smooth()
    src = write(tmp_path / "src.zarr", x)
    for effort in ("fast", "max"):
        dst = tmp_path / f"{effort}.zarr"
        zdt.convert(src, dst, abs_error=0.5, readers="zdt", effort=effort)
        doc = json.loads((dst / "x" / "zarr.json").read_text())
        (codec,) = [c for c in doc["codecs"] if c["name"] == "zdt.predict"]
        assert codec["configuration"]["effort"] == effort
        exactly_within(x, zarr.open_array(dst / "x", mode="r")[...], 0.5)
    plan = zdt.suggest(src, abs_error=0.5, readers="zdt")
    (codec,) = [c for c in plan["/x"].codecs if c["name"] == "zdt.predict"]
    assert "effort" not in codec["configuration"]
    with pytest.raises(UsageError, match="effort= must be one of fast, default, max, not 'slow'"):
        zdt.suggest(src, abs_error=0.5, readers="zdt", effort="slow")
    assert command(["convert", str(src), str(tmp_path / "cli.zarr"), "--abs-error", "0.5",
                    "--readers", "zdt", "--effort", "max", "--quiet"]) == 0
    doc = json.loads((tmp_path / "cli.zarr" / "x" / "zarr.json").read_text())
    assert [c["configuration"]["effort"] for c in doc["codecs"] if c["name"] == "zdt.predict"] \
        == ["max"]
