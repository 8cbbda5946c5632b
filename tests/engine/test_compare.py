"""zdt.compare / `zdt compare`: every figure against an independent slow computation
(tests/compare_reference.py: per element, exact sums, the DFT's double sum, DSSIM's window per
pixel), on arrays whose specials, missing values, chunks and shapes hypothesis draws; the
checks at their thresholds; the errors (shapes, types, masks) as one line."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import zarr
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis_budget import examples

import compare_reference as ref
import zdt
from store_helpers import run_cmd
from zdt.engine import compare as cmp
from zdt.errors import InputError

MISSING = -9999.0


def pair(x: np.ndarray, y: np.ndarray, chunks: tuple[int, ...] | None = None, attrs: dict | None = None,
         dtype: str | None = None) -> tuple[zarr.Array, zarr.Array]:
    """x and y as two zarr arrays in memory (the same chunks and attributes)."""
    out = []
    for v in (x, y):
        a = zarr.create_array({}, shape=v.shape, chunks=chunks or tuple(max(1, n) for n in v.shape),
                              dtype=dtype or v.dtype,
                              attributes=attrs or {}, fill_value=0)
        a[...] = v
        out.append(a)
    return out[0], out[1]


def close(got: float | None, want: float | None, scale: float = 1.0) -> bool:
    if want is None or got is None:
        return got is want
    if math.isinf(want) or math.isinf(got):
        return got == want
    return math.isclose(got, want, rel_tol=1e-6, abs_tol=1e-12 * scale)


@st.composite
def fields(draw, min_side: int = 1, max_side: int = 9, max_lead: int = 3):
    """(x, y, chunks): a source with NaN, infinities, zeros and missing values at some
    places, and a copy that keeps the specials and moves the values by up to a drawn step."""
    lead = draw(st.integers(1, max_lead))
    shape = (lead, draw(st.integers(min_side, max_side)), draw(st.integers(min_side, max_side)))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    kind = draw(st.sampled_from(["smooth", "noise", "constant", "zeros"]))
    i, j = np.meshgrid(np.arange(shape[1]), np.arange(shape[2]), indexing="ij")
    if kind == "smooth":
        x = 20 * np.sin(i / 3.0 + rng.random()) * np.cos(j / 4.0) + rng.normal(0, 0.5, shape)
    elif kind == "noise":
        x = rng.normal(0, draw(st.sampled_from([1e-3, 1.0, 1e6])), shape)
    elif kind == "constant":
        x = np.full(shape, draw(st.sampled_from([0.0, 3.5, -2e10])))
    else:
        x = np.where(rng.random(shape) < 0.5, 0.0, rng.normal(0, 1, shape))
    x = np.broadcast_to(x, shape).copy()
    step = draw(st.sampled_from([0.0, 1e-9, 1e-3, 0.5, 10.0]))
    y = x + rng.uniform(-step, step, shape)
    exact = rng.random(shape) < draw(st.sampled_from([0.0, 0.3]))
    y[exact] = x[exact]
    for value, share in ((np.nan, draw(st.sampled_from([0.0, 0.1]))),
                         (np.inf, draw(st.sampled_from([0.0, 0.02]))),
                         (-np.inf, draw(st.sampled_from([0.0, 0.02]))),
                         (MISSING, draw(st.sampled_from([0.0, 0.1])))):
        at = rng.random(shape) < share
        x[at] = value
        y[at] = value
    chunks = tuple(draw(st.integers(1, n)) for n in shape)
    return x, y, chunks


def reference(x: np.ndarray, y: np.ndarray) -> dict:
    """The figures, slowly: the values are the elements that are no special in x."""
    values = np.isfinite(x) & (x != MISSING)
    want = ref.pointwise(x[values].tolist(), y[values].tolist())
    ssims, spectra = [], []
    for k in range(x.shape[0]):
        a = np.where(values[k], x[k], np.nan).tolist()
        b = np.where(values[k], y[k], np.nan).tolist()
        s = ref.dssim(a, b)
        if s is not None:
            ssims.append(s)
        e = ref.spectral_error(a, b)
        if e is not None:
            spectra.append(e)
    want["dssim"] = sum(ssims) / len(ssims) if ssims else None
    want["spectral_error"] = sum(spectra) / len(spectra) if spectra else None
    return want


@settings(max_examples=examples(30))
@given(fields())
def test_pointwise_figures_agree_with_the_slow_exact_computation(case):
    x, y, chunks = case
    a, b = pair(x, y, chunks, {"_FillValue": MISSING})
    got = zdt.compare(a, b, slices=0)["arrays"]["/"]
    assert set(got) == set(cmp.KEYS)
    want = reference(x, y)
    scale = max([1.0] + [abs(v) for v in x[np.isfinite(x)].tolist()])
    for key in ("max_abs_error", "max_rel_error", "mean_abs_error", "rmse", "psnr", "r2", "bias",
                "rel_error_share"):
        assert close(got[key], want.get(key), scale), (key, got[key], want.get(key))
    assert got["dssim"] is None and got["spectral_error"] is None       # (slices=0)


@settings(max_examples=examples(12))
@given(fields(min_side=8, max_side=14, max_lead=2))
def test_dssim_and_the_spectral_error_agree_with_the_slow_computation(case):
    x, y, chunks = case
    a, b = pair(x, y, chunks, {"_FillValue": MISSING})
    got = zdt.compare(a, b)["arrays"]["/"]
    want = reference(x, y)
    assert close(got["dssim"], want["dssim"]), ("dssim", got["dssim"], want["dssim"])
    # (each computation's power spectrum of a slice of n values comes within about
    # dp = 4 n eps (n max|x|^2) of the exact one, each bin's difference d within 2 dp, so the
    # mean of d^2 within 2 |d| 2 dp + (2 dp)^2, |d| at most sqrt(bins x that mean): where two
    # slices' spectra barely differ (a constant 3.5 or -2e10 and its copy moved by 1e-9) this
    # is the least either can resolve)
    got_e, want_e = got["spectral_error"], want["spectral_error"]
    if want_e is None or got_e is None:
        assert got_e is want_e
    else:
        dp = 4 * x[0].size * 2.0 ** -52 * x[0].size * max(
            [1.0] + (np.abs(x[np.isfinite(x)]) ** 2).tolist())
        slack = 4 * math.sqrt(max(x.shape[1:]) * max(got_e, want_e)) * dp + 4 * dp * dp
        assert math.isclose(got_e, want_e, rel_tol=1e-6, abs_tol=slack), (got_e, want_e, slack)


def test_dssim_of_a_known_case():
    """Identical slices: 1; a slice against its negation (the same range): far below."""
    rng = np.random.default_rng(1)
    x = rng.normal(0, 1, (40, 50))
    assert cmp.dssim(x, x.copy()) == pytest.approx(1.0, abs=1e-12)
    assert cmp.dssim(x, -x) < 0.2
    assert cmp.dssim(x[:10], x[:10]) is None             # (smaller than the 11 x 11 window)


def test_a_copy_that_is_exact_gives_zero_errors_and_infinite_psnr():
    x = np.random.default_rng(2).normal(0, 1, (3, 20, 30))
    a, b = pair(x, x)
    got = zdt.compare(a, b, abs_error=1e-6)["arrays"]["/"]
    assert got["max_abs_error"] == 0 and got["rmse"] == 0 and got["bias"] == 0
    assert got["psnr"] == math.inf and got["r2"] == 1.0 and got["dssim"] == pytest.approx(1.0)
    assert got["spectral_error"] == 0
    assert all(c["passed"] for c in got["checks"].values())


def test_the_bound_check_is_exact_at_the_bound():
    x = np.array([1.0, 2.0, 0.0, -4.0])
    a, b = pair(x, x + np.array([0.5, -0.5, 0.0, 0.25]))
    assert zdt.compare(a, b, abs_error=0.5)["arrays"]["/"]["checks"]["bound"] == {
        "bound": "abs:0.5", "largest_error": 0.5, "passed": True}
    y = x.copy()
    y[0] = np.nextafter(1.5, 2.0)                # one ulp above 1 + 0.5
    a, b = pair(x, y)
    check = zdt.compare(a, b, abs_error=0.5)["arrays"]["/"]["checks"]["bound"]
    assert check["passed"] is False and check["largest_error"] > 0.5
    # relative: zero must stay zero, exactly
    a, b = pair(x, np.where(x == 0, 1e-300, x))
    got = zdt.compare(a, b, rel_error=1e-3)["arrays"]["/"]
    assert got["checks"]["bound"]["passed"] is False and got["max_rel_error"] == math.inf
    a, b = pair(x, x * (1 + 1e-3))
    assert zdt.compare(a, b, rel_error=1e-3)["arrays"]["/"]["checks"]["bound"]["passed"] is True
    # no bound given: not decided
    assert zdt.compare(a, b)["arrays"]["/"]["checks"]["bound"]["passed"] is None


def test_the_share_and_r2_checks_at_their_thresholds():
    x = np.linspace(1.0, 2.0, 1000)
    y = x.copy()
    y[:49] *= 1 + 2e-4                  # 4.9% of the points above 1e-4: passes
    a, b = pair(x, y)
    c = zdt.compare(a, b)["arrays"]["/"]["checks"]
    assert c["rel_error_share"]["value"] == pytest.approx(0.049) and c["rel_error_share"]["passed"]
    y[:50] *= 1 + 2e-4                  # 5%: fails (fewer than 5% may)
    a, b = pair(x, y)
    c = zdt.compare(a, b)["arrays"]["/"]["checks"]
    assert c["rel_error_share"]["value"] == pytest.approx(0.05) and not c["rel_error_share"]["passed"]
    assert c["r2"]["passed"] and c["r2"]["value"] > 0.99999
    a, b = pair(x, x + np.random.default_rng(3).normal(0, 0.01, x.shape))
    c = zdt.compare(a, b)["arrays"]["/"]["checks"]
    assert c["r2"]["value"] < 0.99999 and c["r2"]["passed"] is False


def test_cf_packed_arrays_are_compared_in_physical_units():
    """int16 with scale_factor / add_offset and a _FillValue in stored units: each array is
    unpacked with its own attributes; the fill positions are no values."""
    rng = np.random.default_rng(4)
    stored = rng.integers(-1000, 1000, (4, 30, 20)).astype(np.int16)
    stored[rng.random(stored.shape) < 0.1] = -32768
    moved = np.where(stored == -32768, stored, stored + rng.integers(-2, 3, stored.shape)).astype(np.int16)
    attrs = {"scale_factor": 0.01, "add_offset": 273.15, "_FillValue": -32768}
    a, b = pair(stored, moved, (2, 15, 20), attrs)
    got = zdt.compare(a, b, abs_error=0.02, slices=0)["arrays"]["/"]
    keep = stored != -32768
    want = ref.pointwise((stored[keep] * 0.01 + 273.15).tolist(), (moved[keep] * 0.01 + 273.15).tolist())
    for key, value in want.items():
        assert close(got[key], value, 300.0), (key, got[key], value)
    # 2 steps of 0.01 are 0.02 exactly, but not as a reader unpacks them (stored x 0.01 +
    # 273.15 in float64): the check is on what the reader sees, the very figure reported
    unpacked = np.abs((moved[keep] * 0.01 + 273.15) - (stored[keep] * 0.01 + 273.15)).max()
    assert got["max_abs_error"] == unpacked > 0.02
    bound = got["checks"]["bound"]
    assert bound["largest_error"] == got["max_abs_error"] and bound["passed"] is False
    again = zdt.compare(a, b, abs_error=float(unpacked), slices=0)["arrays"]["/"]
    assert again["checks"]["bound"]["passed"] is True


def test_masks_shapes_and_types_that_differ_are_one_line_naming_the_difference():
    x = np.arange(24.0).reshape(4, 6)
    y = x.copy()
    y[2, 3] = np.nan
    a, b = pair(x, y, (2, 3))
    with pytest.raises(InputError) as e:
        zdt.compare(a, b)
    assert str(e.value) == ("/: the masks differ: element (2, 3) is the value 15.0 in the source "
                            "and NaN in the decoded copy (1 such elements in the storage unit at "
                            "[2:4, 3:6])")
    a, b = pair(x, x[:3])
    with pytest.raises(InputError, match=r"^/: the shapes differ: \(4, 6\) in the source, \(3, 6\) "
                                         r"in the decoded copy$"):
        zdt.compare(a, b)
    a, _ = pair(x, x)
    _, b = pair(x, x.astype(np.float32))
    with pytest.raises(InputError, match="^/: the data types differ: float64 in the source, float32 in "
                                         "the decoded copy$"):
        zdt.compare(a, b)


def test_slices_are_spread_evenly_and_cropped_to_the_centre():
    assert cmp.slice_indices((3, 5, 5), 16) == [(0,), (1,), (2,)]
    picks = cmp.slice_indices((100, 5, 5), 16)
    assert len(picks) == 16 and picks[0] == (0,) and picks[-1] == (99,)
    assert cmp.slice_indices((2, 3, 4, 4), 16) == [(0, 0), (0, 1), (0, 2), (1, 0), (1, 1), (1, 2)]
    assert cmp.slice_indices((5, 4, 4), 0) == []
    assert cmp.crop_window(100) == slice(0, 100)
    assert cmp.crop_window(5000) == slice(1476, 3524)


@pytest.fixture
def converted(tmp_path):
    """A store of two arrays (one with NaN gaps) and its zdt convert copy at abs 0.05."""
    rng = np.random.default_rng(5)
    t = np.arange(30)[:, None, None]
    i, j = np.meshgrid(np.arange(40), np.arange(50), indexing="ij")
    temp = 280 + 10 * np.sin(i / 7 + t / 5) * np.cos(j / 9) + rng.normal(0, 0.1, (30, 40, 50))
    sst = temp - 5
    sst[:, :10, :12] = np.nan
    g = zarr.open_group(tmp_path / "src.zarr", mode="w", zarr_format=3)
    for name, v in (("temp", temp), ("sst", sst)):
        g.create_array(name, shape=v.shape, chunks=(10, 20, 50), dtype="float64")[...] = v
    rc = zdt.convert(tmp_path / "src.zarr", tmp_path / "dst.zarr", abs_error=0.05)
    assert rc.arrays
    return tmp_path / "src.zarr", tmp_path / "dst.zarr"


def test_the_command_prints_json_with_exactly_the_figures(converted, capsys):
    src, dst = converted
    rc, out, err = run_cmd(capsys, "compare", str(src), str(dst), "--abs-error", "0.05", "--json", "--quiet")
    assert rc == 0, err

    def no_constants(name):
        raise AssertionError(f"not JSON: {name}")

    data = json.loads(out, parse_constant=no_constants)
    assert set(data) == {"arrays"} and set(data["arrays"]) == {"/sst", "/temp"}
    for name, f in data["arrays"].items():
        assert set(f) == set(cmp.KEYS), name
        assert 0 < f["max_abs_error"] <= 0.05 and f["checks"]["bound"]["passed"] is True
        assert f["dssim"] > 0.99 and f["r2"] > 0.9999
    assert data["arrays"]["/temp"]["spectral_error"] is not None
    assert data["arrays"]["/sst"]["spectral_error"] is None         # (every slice has NaN)
    # the library gives the same, and the figures of one array when named
    lib = zdt.compare(src, dst, ["sst"], abs_error=0.05)
    assert cmp.to_json(lib) == {"arrays": {"/sst": data["arrays"]["/sst"]}}


def test_the_command_prints_a_table_and_one_line_errors(converted, capsys, tmp_path):
    src, dst = converted
    rc, out, err = run_cmd(capsys, "compare", str(src), str(dst), "/temp", "--quiet")
    assert rc == 0, err
    lines = out.splitlines()
    assert lines[0] == "/temp" and lines[1].startswith("  errors   max abs 0.0")
    # (uniform errors of up to 0.05 on a field of variance ~50: R^2 = 1 - 0.05^2 / 3 / 50 = 0.99998)
    assert "bound: not decided" in lines[3] and "r2 > 0.99999: FAIL" in lines[3]
    rc, out, err = run_cmd(capsys, "compare", str(src), str(dst), "/nope")
    assert rc == 1 and err == f"zdt compare: /nope: no such array in {src}\n"
    rc, out, err = run_cmd(capsys, "compare", str(src), str(tmp_path / "missing.zarr"))
    assert rc != 0 and len(err.splitlines()) == 1 and "Traceback" not in err, err
    rc, out, err = run_cmd(capsys, "compare", str(src), str(dst), "--slices", "0")
    assert rc == 2 and "--slices" in err


def test_the_command_is_a_gate_for_scripts_exit_1_when_a_bound_does_not_hold(converted, capsys):
    src, dst = converted
    # converted at 0.05: a tighter bound fails, and says so in its last line
    rc, out, err = run_cmd(capsys, "compare", str(src), str(dst), "--abs-error", "0.01", "--quiet")
    assert rc == 1 and err == "", err
    assert out.splitlines()[-1] == "FAIL: /sst, /temp beyond their bound"
    rc, out, _ = run_cmd(capsys, "compare", str(src), str(dst), "--bound", "/sst=abs:0.01",
                         "--abs-error", "0.05", "--quiet", "--json")
    assert rc == 1 and json.loads(out)["arrays"]["/temp"]["checks"]["bound"]["passed"] is True
    # within the bound: exit 0, though the r2 check fails (informative unless --strict)
    rc, out, _ = run_cmd(capsys, "compare", str(src), str(dst), "--abs-error", "0.05", "--quiet")
    assert rc == 0 and out.splitlines()[-1].startswith("pass: every array within its bound; checks "
                                                        "that failed (informative without --strict): /sst (rel_error_share), /sst (r2)")
    rc, out, _ = run_cmd(capsys, "compare", str(src), str(dst), "--abs-error", "0.05", "--quiet", "--strict")
    assert rc == 1 and out.splitlines()[-1].startswith("FAIL (--strict): /sst (rel_error_share), /sst (r2)")
    rc, out, _ = run_cmd(capsys, "compare", str(src), str(dst), "/temp", "--quiet")
    assert rc == 0 and out.splitlines()[-1].startswith("no bound given")


def test_a_chunk_that_does_not_decode_is_one_line_naming_it(converted, capsys):
    src, dst = converted
    chunk = next(p for p in sorted((dst / "temp").rglob("*")) if p.is_file() and p.name != "zarr.json")
    chunk.write_bytes(b"not a chunk")
    rc, out, err = run_cmd(capsys, "compare", str(src), str(dst), "/temp", "--quiet")
    key = chunk.relative_to(dst / "temp").as_posix()
    assert rc != 0 and len(err.splitlines()) == 1 and "Traceback" not in err, err
    assert "/temp" in err and key in err, err


def test_integers_are_checked_on_their_own_values_exactly():
    """Beyond 2^53 float64 cannot tell 2^60 from 2^60 + 1: the bound check takes the
    integers; an int8 difference of 255 and a uint64 one of 2^64 - 1 come out whole."""
    x = np.array([2**60, 5, -7], dtype=np.int64)
    a, b = pair(x, x + np.array([1, 0, 0], dtype=np.int64))
    check = zdt.compare(a, b, abs_error=0.5)["arrays"]["/"]["checks"]["bound"]
    assert check == {"bound": "abs:0.5", "largest_error": 1.0, "passed": False}
    attrs = {"scale_factor": 0.5, "add_offset": 1.0}
    a, b = pair(np.array([127, 0], dtype=np.int8), np.array([-128, 0], dtype=np.int8), attrs=attrs)
    check = zdt.compare(a, b, abs_error=127.5)["arrays"]["/"]["checks"]["bound"]
    assert check == {"bound": "abs:127.5", "largest_error": 127.5, "passed": True}
    a, b = pair(np.array([0, 3], dtype=np.uint64), np.array([2**64 - 1, 3], dtype=np.uint64), attrs=attrs)
    check = zdt.compare(a, b, abs_error=1.0, slices=0)["arrays"]["/"]["checks"]["bound"]
    assert check["passed"] is False and check["largest_error"] == float((2**64 - 1) * 0.5)


def test_constant_sources_empty_axes_and_no_slices_give_figures_not_errors(tmp_path):
    """R^2 of a constant source with errors is undefined (None, not the ratio of rounding
    noise); an axis of length 0 or slices=0 compares (and draws) without failing."""
    x = np.full(1000, 0.1)
    a, b = pair(x, x + 1e-3)
    got = zdt.compare(a, b)["arrays"]["/"]
    assert got["r2"] is None and got["checks"]["r2"]["passed"] is None and got["psnr"] is None
    assert got["max_abs_error"] == pytest.approx(1e-3)
    for shape in ((3, 0, 5), (0, 5, 5), (5, 0)):
        a, b = pair(np.zeros(shape), np.zeros(shape))
        got = zdt.compare(a, b, html=tmp_path / "empty.html")["arrays"]["/"]
        assert got["max_abs_error"] is None and got["dssim"] is None and got["spectral_error"] is None
    x = np.random.default_rng(6).normal(0, 1, (3, 20, 20))
    a, b = pair(x, x + 0.01)
    got = zdt.compare(a, b, "/", slices=0, html=tmp_path / "noslice.html")["arrays"]["/"]
    assert got["dssim"] is None and got["max_abs_error"] == pytest.approx(0.01)
    assert (tmp_path / "noslice.html").read_text().count("data:image/png") == 1


def test_packed_arrays_are_checked_as_a_reader_unpacks_them():
    """CF-packed data is checked on the values a reader unpacks (stored x scale + offset in
    float64, each rounded), the figures compare reports: errors of exactly 0.01 in rationals
    whose unpacked float64 differences exceed 0.01 fail at 0.01; a relative bound where scale
    and offset cancel is decided on the reader's quotient."""
    from fractions import Fraction

    rng = np.random.default_rng(8)
    xs = rng.uniform(0, 100, 500)
    ys = xs + 0.1
    for i in range(xs.size):            # the largest y with |y - x| 0.1 <= 0.01 exactly
        while abs(Fraction(ys[i]) - Fraction(xs[i])) * Fraction(0.1) > Fraction(0.01):
            ys[i] = np.nextafter(ys[i], -np.inf)
    unpacked = np.abs((ys * 0.1 + 0.0) - (xs * 0.1 + 0.0)).max()
    assert unpacked > 0.01
    a, b = pair(xs, ys, attrs={"scale_factor": 0.1, "add_offset": 0.0})
    got = zdt.compare(a, b, abs_error=0.01)["arrays"]["/"]
    assert got["max_abs_error"] == got["checks"]["bound"]["largest_error"] == unpacked
    assert got["checks"]["bound"]["passed"] is False
    x = np.array([-9999999980, 5], dtype=np.int64)
    a, b = pair(x, x + np.array([1, 0]), attrs={"scale_factor": 0.1, "add_offset": 1e9})
    # physical value 2 (exactly 1e9 - 999999998), error 0.1: relative 0.05 in rationals; the
    # reader's unpacked value is 2.0000001192..., its quotient a little below 0.05
    px = x.astype(np.float64) * 0.1 + 1e9
    py = (x + np.array([1, 0])).astype(np.float64) * 0.1 + 1e9
    reader = float(np.abs(py[0] - px[0]) / np.abs(px[0]))
    for limit in (reader, np.nextafter(reader, 0.0)):
        got = zdt.compare(a, b, rel_error=float(limit))["arrays"]["/"]
        assert got["checks"]["bound"]["largest_error"] == got["max_rel_error"] == reader
        assert got["checks"]["bound"]["passed"] is bool(reader <= limit)


def test_a_missing_value_and_a_nan_are_the_same_gap_as_cf_readers_see_them():
    """The source's _FillValue 1e20 where the copy holds NaN (or the other way round): xarray
    masks both to NaN, so compare pairs them; the figures are over the other elements. A NaN
    against a value is still a different mask."""
    x = np.arange(24.0).reshape(4, 6)
    x[1, 2] = x[3, 5] = 1e20
    y = x + 0.25
    y[1, 2] = y[3, 5] = np.nan
    for a, b in (pair(x, y, (2, 3), {"_FillValue": 1e20}), pair(y, x, (2, 3), {"_FillValue": 1e20})):
        got = zdt.compare(a, b, abs_error=0.25, slices=0)["arrays"]["/"]
        assert got["max_abs_error"] == got["mean_abs_error"] == 0.25
        assert got["checks"]["bound"]["passed"] is True
    z = y.copy()
    z[1, 2] = 12.0
    a, b = pair(x, z, (2, 3), {"_FillValue": 1e20})
    with pytest.raises(InputError, match=r"element \(1, 2\) is a missing value in the source and "
                                         r"the value 12.0 in the decoded copy"):
        zdt.compare(a, b)
