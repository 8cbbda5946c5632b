"""The `zdt` subcommands: inspect, suggest, convert, bench, and their answers to bad input.

Every suggestion is checked independently of the code that made it: its codecs are applied
through a fresh zarr array and the error recomputed here in exact arithmetic (Fractions)."""

from __future__ import annotations

import json
import math
import signal
import subprocess
import sys
import sysconfig
import time
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
import zarr
from hypothesis import example, given, settings
from hypothesis import strategies as st
from zarr.storage import MemoryStore

import zdt  # noqa: F401
from zdt.command import encoding_search as engine
from zdt.command import main

SCRIPTS = Path(sysconfig.get_path("scripts"))


def zdt_cmd(capsys, *argv: str) -> tuple[int, str, str]:
    rc = main(list(argv))
    out = capsys.readouterr()
    return rc, out.out, out.err


def readings(n: int, seed: int = 0, nan: float = 0.01) -> np.ndarray:
    """Temperature-like: 0.1-degree readings between 20 and 35, some NaN."""
    rng = np.random.default_rng(seed)
    x = np.round(rng.uniform(20, 35, n), 1)
    x[rng.random(n) < nan] = np.nan
    return x


def roundtrip(data: np.ndarray, codecs: list[dict], fill=np.nan) -> np.ndarray:
    """data through a fresh in-memory zarr array with `codecs` (filters, then a serializer)."""
    names = {"bytes", "packbits"}
    filters = [c for c in codecs if c["name"] not in names]
    serializer = [c for c in codecs if c["name"] in names]
    kw = {"serializer": serializer[0]} if serializer else {}
    a = zarr.create_array(MemoryStore(), shape=data.shape, chunks=data.shape, dtype=data.dtype,
                          fill_value=fill, filters=filters, compressors=None, **kw)
    a[...] = data
    return a[...]


def exact_error(x: np.ndarray, y: np.ndarray, relative: bool) -> Fraction | float:
    """Largest error, element by element in exact arithmetic; inf if a NaN, an infinity or a
    zero was not kept exactly."""
    worst = Fraction(0)
    for a, b in zip(x.reshape(-1).tolist(), y.reshape(-1).tolist(), strict=True):
        if math.isnan(a) or math.isinf(a) or (relative and a == 0):
            same = (math.isnan(a) and math.isnan(b)) or a == b
            if not same:
                return math.inf
            continue
        if math.isnan(b) or math.isinf(b):
            return math.inf
        d = abs(Fraction(b) - Fraction(a))
        worst = max(worst, d / abs(Fraction(a)) if relative else d)
    return worst


# -------------------------------------------------------------------------------- the engine


def suggest_data(data: np.ndarray, bound: float, relative: bool, fill=np.nan):
    stats = engine.Stats(data.dtype)
    stats.add(data)
    fill_value = None if fill is None else np.asarray(fill, dtype=data.dtype)[()]
    stats.add_value(fill_value)
    make = engine.relative_candidates if relative else engine.absolute_candidates
    candidates = make(stats, bound)
    results, _ = engine.measure([data], candidates, fill_value, relative, bound)
    return engine.best(results, bound), stats


finite_or_special = st.one_of(
    st.floats(-1e6, 1e6, allow_nan=False, width=64),
    st.sampled_from([math.nan, math.inf, -math.inf, 0.0, -0.0]))


@given(st.lists(finite_or_special, min_size=1, max_size=40),
       st.sampled_from([1e-3, 0.05, 0.5, 7.0, 1000.0]))
@settings(max_examples=60)
def test_an_absolute_suggestion_keeps_its_bound_exactly(values, bound):
    data = np.array(values, dtype=np.float64)
    best, stats = suggest_data(data, bound, relative=False)
    if best is None:
        # only when no unsigned type narrower than float64 can hold the range at a step <= 2E
        span = (stats.hi - stats.lo) if stats.lo <= stats.hi else 0
        assert span / (2 * bound) + 3 > 2 ** 32 - 8
        return
    back = roundtrip(data, best.encoding.codecs)
    err = exact_error(data, back, relative=False)
    assert err <= Fraction(bound)
    assert float(err) == pytest.approx(best.error, rel=1e-9, abs=1e-300)


@given(st.lists(finite_or_special, min_size=1, max_size=40),
       st.sampled_from([1e-4, 1e-3, 0.01, 0.1, 0.3]))
@settings(max_examples=60)
def test_a_relative_suggestion_keeps_its_bound_exactly(values, bound):
    data = np.array(values, dtype=np.float64)
    best, _ = suggest_data(data, bound, relative=True)
    if best is None:
        return
    back = roundtrip(data, best.encoding.codecs)
    assert exact_error(data, back, relative=True) <= Fraction(bound)


@given(st.floats(-1e4, 1e4), st.floats(0.1, 5e3), st.sampled_from([0.01, 0.05, 0.5, 2.0]),
       st.booleans())
# found by hypothesis: an offset of -1.4e-108 puts the error of a half-way value 1.4e-108
# above the bound, which a float difference cannot show (the measure now re-checks exactly)
@example(lo=-1.39794663702103e-108, span=1.5, bound=0.5, nan=False)
@settings(max_examples=60)
def test_the_absolute_suggestion_is_the_narrowest_type_that_comfortably_fits(lo, span, bound, nan):
    """If the range needs comfortably fewer codes than a type holds at the largest step the
    bound allows (2E), no wider type may be suggested."""
    data = np.linspace(lo, lo + span, 1000)
    if nan:
        data[::97] = np.nan
    best, _ = suggest_data(data, bound, relative=False)
    assert best is not None
    # the largest step the nice-scale grid may pick is 2E; it rounds the scale up by < 2.5x
    codes_needed = (span + 1) / (2 * bound) * 2.5 + 4
    narrowest = next(t for t in engine.UNSIGNED if codes_needed <= 2 ** engine.FORMATS[t].bits - 1)
    assert best.encoding.bits <= engine.FORMATS[narrowest].bits
    assert exact_error(data, roundtrip(data, best.encoding.codecs), False) <= Fraction(bound)


def test_nan_and_infinities_get_sentinels_both_ways():
    data = np.array([1.5, np.nan, np.inf, -np.inf, 2.0, 3.25])
    best, _ = suggest_data(data, 0.01, relative=False)
    cast = best.encoding.filters[-1]["configuration"]
    top = 2 ** best.encoding.bits - 1
    assert cast["scalar_map"]["encode"] == [["NaN", top], ["Infinity", top - 1], ["-Infinity", top - 2]]
    assert cast["scalar_map"]["decode"] == [[top, "NaN"], [top - 1, "Infinity"], [top - 2, "-Infinity"]]
    back = roundtrip(data, best.encoding.codecs)
    assert np.isnan(back[1]) and back[2] == np.inf and back[3] == -np.inf


def test_a_finite_fill_value_outside_the_data_is_part_of_the_range():
    data = np.array([10.0, 10.5, 11.0])
    best, stats = suggest_data(data, 0.5, relative=False, fill=1000.0)
    assert stats.hi == 1000.0
    # reading a never-written chunk gives the fill value back exactly through the codecs
    a = zarr.create_array(MemoryStore(), shape=(6,), chunks=(3,), dtype="float64", fill_value=1000.0,
                          filters=best.encoding.filters, compressors=None)
    a[:3] = data
    assert a[3:].tolist() == [1000.0] * 3 and a[:3].tolist() == data.tolist()


def test_integer_data_are_only_shifted_and_stay_exact():
    data = np.arange(-300, 700, dtype=np.int32)
    best, _ = suggest_data(data, 0.5, relative=False, fill=0)
    assert [c["name"] for c in best.encoding.filters] == ["scale_offset", "cast_value"]
    assert best.encoding.filters[0]["configuration"] == {"offset": -300}
    assert best.encoding.target == "uint16" and best.error == 0
    assert np.array_equal(roundtrip(data, best.encoding.codecs, fill=0), data)


def test_relative_error_picks_the_narrowest_format_whose_precision_and_range_cover_the_data():
    data = readings(5000, nan=0)                      # 20 to 35
    best, _ = suggest_data(data, 1e-3, relative=True)
    assert best.encoding.target == "float16"          # bfloat16 keeps only 2**-9 = 0.2%
    best, _ = suggest_data(data, 0.1, relative=True)
    assert best.encoding.bits == 8 and best.error <= 0.1  # float6 formats stop at 7.5 / 28
    small = np.random.default_rng(2).uniform(1, 6, 5000)  # inside float4_e2m1fn's normal range
    # a NaN fill value rules out the formats without NaN: float4 and float6 have none
    best, _ = suggest_data(small, 0.3, relative=True)
    assert best.encoding.target == "float8_e3m4"
    best, _ = suggest_data(small, 0.3, relative=True, fill=1.0)  # worst: 0.25 / 1.25 = 0.2
    assert best.encoding.target == "float4_e2m1fn" and best.encoding.serializer["name"] == "packbits"
    assert exact_error(small, roundtrip(small, best.encoding.codecs, fill=1.0), True) <= Fraction(0.3)
    best, _ = suggest_data(small, 0.07, relative=True, fill=1.0)  # 3 mantissa bits: 2**-4 / 1.0625
    assert best.encoding.target == "float6_e2m3fn"


def test_nan_rules_out_formats_without_nan():
    data = np.array([1.0, 2.0, np.nan, 4.0])
    best, _ = suggest_data(data, 0.3, relative=True)
    assert engine.FORMATS[best.encoding.target].nan_style != engine.NAN_NONE


# -------------------------------------------------------------------------------- a store


@pytest.fixture
def store(tmp_path):
    """A v3 hierarchy: readings with NaN, integer counts, strings, a nested group; and a v2 store."""
    root = zarr.open_group(tmp_path / "src", mode="w", attributes={"title": "test"})
    t = root.create_array("temps", shape=(20_000,), chunks=(4_000,), dtype="float64",
                          fill_value=np.nan, attributes={"units": "C"}, dimension_names=["time"])
    t[:] = readings(20_000)
    sub = root.create_group("sub", attributes={"level": 1})
    c = sub.create_array("counts", shape=(1000,), chunks=(100,), dtype="int32", fill_value=0)
    c[:] = np.arange(1000) % 300 - 50
    w = sub.create_array("words", shape=(10,), chunks=(5,), dtype=np.dtypes.StringDType())
    w[:] = np.array(["rain", "sun", "fog", "", "drizzle", "snow", "hail", "ok", "x", "y"],
                    dtype=np.dtypes.StringDType())
    v2 = zarr.open_group(tmp_path / "v2", mode="w", zarr_format=2)
    a = v2.create_array("temps", shape=(8000,), chunks=(3000,), dtype="float32", fill_value=np.nan)
    a[:] = readings(8000, seed=1)
    return tmp_path


def dir_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def test_inspect_lists_every_array_with_its_codecs_and_bytes(store, capsys):
    rc, out, err = zdt_cmd(capsys, "inspect", str(store / "src"), "--json")
    assert rc == 0, err
    rows = {r["path"]: r for r in json.loads(out)}
    assert set(rows) == {"/temps", "/sub/counts", "/sub/words"}
    t = rows["/temps"]
    assert t["shape"] == [20_000] and t["chunks"] == [4_000] and t["data_type"] == "float64"
    assert t["logical_bytes"] == 20_000 * 8
    assert t["stored_bytes"] == dir_bytes(store / "src" / "temps")
    assert [c["name"] for c in t["codecs"]] == ["bytes", "zstd"]
    assert rows["/sub/words"]["codecs"][0] == {"name": "vlen-utf8", "implementation": "zarr"}
    # the table form names the same things
    rc, out, _ = zdt_cmd(capsys, "inspect", str(store / "src"))
    assert rc == 0 and "/sub/counts" in out and "vlen-utf8 [zarr]" in out and "total:" in out


def test_inspect_reads_format_2_and_names_numcodecs(store, capsys):
    rc, out, _ = zdt_cmd(capsys, "inspect", f"{store / 'v2'}:temps", "--json")
    (row,) = json.loads(out)
    assert rc == 0 and row["zarr_format"] == 2 and row["data_type"] == "float32"
    assert row["codecs"] == [{"name": "blosc", "implementation": "numcodecs"}]


def test_suggest_prints_codecs_that_keep_the_bound_on_the_data(store, capsys):
    data = zarr.open_array(store / "src" / "temps")[:]
    for flag, bound in [("--abs-error", 0.05), ("--abs-error", 0.5), ("--rel-error", 1e-3)]:
        rc, out, err = zdt_cmd(capsys, "suggest", f"{store / 'src'}:temps", flag, str(bound), "--json")
        assert rc == 0, err
        (row,) = json.loads(out.strip().splitlines()[-1])
        back = roundtrip(data, row["codecs"])
        assert exact_error(data, back, flag == "--rel-error") <= Fraction(bound)
        assert "saves" in out and "measured on all 5 chunks" in out
    # 0.1-degree readings in 15 degrees: 151 steps of 0.1 fit uint8 (NaN takes 255)
    rc, out, _ = zdt_cmd(capsys, "suggest", f"{store / 'src'}:temps", "--abs-error", "0.05", "--json")
    (row,) = json.loads(out.strip().splitlines()[-1])
    assert row["codecs"][-1]["configuration"]["data_type"] == "uint8"


def test_suggest_on_a_sample_says_so(store, capsys):
    rc, out, _ = zdt_cmd(capsys, "suggest", f"{store / 'src'}:temps", "--abs-error", "0.5", "--sample", "2")
    assert rc == 0 and "measured on 2 of 5 chunks (8,000 values)" in out


@pytest.mark.parametrize("argv, message", [
    (["inspect", "{s}/nowhere"], "no such file or directory"),
    (["inspect", "{s}/src/temps/zarr.json"], "not a zarr store"),
    (["suggest", "{s}/src:nothing", "--abs-error", "1"], "no array or group 'nothing'"),
    (["suggest", "{s}/src:sub/words", "--abs-error", "1"], "needs integer or float data"),
    (["suggest", "{s}/src:temps"], "exactly one of --abs-error and --rel-error"),
    (["suggest", "{s}/src:temps", "--abs-error", "1", "--rel-error", "1"], "exactly one"),
    (["suggest", "{s}/src:temps", "--abs-error", "-1"], "positive finite number"),
    (["suggest", "{s}/src:sub/counts", "--rel-error", "0.1"], "needs float data"),
    (["convert", "{s}/src", "{s}/v2", "--abs-error", "1"], "exists"),
    (["convert", "{s}/src", "{s}/none/out", "--abs-error", "1"], "no such directory"),
    (["convert", "{s}/src", "{s}/out", "--codecs", "[1"], "--codecs is not JSON"),
    (["convert", "{s}/src", "{s}/out", "--abs-error", "1", "--compressor", "zstd:x"], "level must be an integer"),
])
def test_bad_input_gets_one_line_and_a_nonzero_exit(store, capsys, argv, message):
    rc, out, err = zdt_cmd(capsys, *[a.format(s=store) for a in argv])
    assert rc == 1
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"zdt {argv[0]}: ") and message in lines[0], err
    assert not (store / "out").exists()


def test_a_bound_no_type_meets_is_reported_and_fails(tmp_path, capsys):
    a = zarr.create_array(tmp_path / "wide", shape=(3,), chunks=(3,), dtype="float32", fill_value=0)
    a[:] = [1e-30, 1.0, 3e38]
    rc, out, err = zdt_cmd(capsys, "suggest", str(tmp_path / "wide"), "--rel-error", "1e-6")
    assert rc == 1 and "nothing suggested" in out
    rc, out, _ = zdt_cmd(capsys, "suggest", str(tmp_path / "wide"), "--abs-error", "1e-3")
    assert rc == 1 and "nothing suggested: no integer type narrower than float32" in out


def test_the_cli_never_shows_a_traceback(store):
    out = subprocess.run([str(SCRIPTS / "zdt"), "suggest", str(store / "missing"), "--abs-error", "1"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 1 and "Traceback" not in out.stderr
    assert out.stderr.strip() == f"zdt suggest: {store / 'missing'}: no such file or directory"


# -------------------------------------------------------------------------------- convert


def test_convert_reencodes_checks_and_copies_the_rest(store, capsys):
    rc, out, err = zdt_cmd(capsys, "convert", str(store / "src"), str(store / "out"),
                           "--abs-error", "0.05", "--quiet")
    assert rc == 0, err
    src, dst = zarr.open_group(store / "src", mode="r"), zarr.open_group(store / "out", mode="r")
    assert dict(dst.attrs) == {"title": "test"} and dict(dst["sub"].attrs) == {"level": 1}
    t = dst["temps"]
    assert dict(t.attrs) == {"units": "C"} and t.metadata.dimension_names == ("time",)
    assert t.chunks == (4_000,) and np.isnan(t.fill_value)
    assert [c.to_dict()["name"] for c in t.metadata.codecs][:2] == ["scale_offset", "cast_value"]
    assert exact_error(src["temps"][:], t[:], False) <= Fraction(0.05)
    assert np.array_equal(dst["sub/counts"][:], src["sub/counts"][:])
    # strings are copied byte for byte
    for f in (store / "src" / "sub" / "words").rglob("*"):
        if f.is_file():
            assert (store / "out" / "sub" / "words" / f.relative_to(store / "src" / "sub" / "words")
                    ).read_bytes() == f.read_bytes()
    assert dir_bytes(store / "out" / "temps") < dir_bytes(store / "src" / "temps")
    assert not list(store.glob("*.zdt-partial"))


def test_convert_keeps_zarr_format_2(store, capsys):
    rc, _, err = zdt_cmd(capsys, "convert", str(store / "v2"), str(store / "out"), "--rel-error", "1e-3",
                         "--compressor", "zstd:5", "--quiet")
    assert rc == 0, err
    a = zarr.open_array(store / "out" / "temps")
    assert a.metadata.zarr_format == 2 and a.metadata.filters[0].codec_id == "cast_value"
    assert a.metadata.compressor.codec_id == "zstd"
    src = zarr.open_array(store / "v2" / "temps")[:]
    assert exact_error(src, a[:], True) <= Fraction(1e-3)


def test_convert_with_explicit_codecs(store, capsys):
    codecs = [{"name": "cast_value", "configuration": {"data_type": "float32"}}]
    rc, _, err = zdt_cmd(capsys, "convert", str(store / "src"), str(store / "out"), "--codecs",
                         json.dumps(codecs), "--compressor", "none", "--quiet")
    assert rc == 0, err
    t = zarr.open_array(store / "out" / "temps")
    assert np.array_equal(t[:], zarr.open_array(store / "src" / "temps")[:].astype(np.float32).astype(np.float64),
                          equal_nan=True)
    assert t.compressors == ()


def test_a_chunk_that_breaks_the_bound_stops_the_run_and_leaves_no_destination(tmp_path, capsys):
    """The sample sees only the first chunk; a later chunk holds a value outside its range."""
    a = zarr.create_array(tmp_path / "src", shape=(3000,), chunks=(1000,), dtype="float64", fill_value=0)
    data = readings(3000, nan=0)
    data[2500] = 1e6
    a[:] = data
    rc, _, err = zdt_cmd(capsys, "convert", str(tmp_path / "src"), str(tmp_path / "out"),
                         "--abs-error", "0.05", "--sample", "1", "--quiet")
    assert rc == 1 and err.startswith("zdt convert: /: writing the chunk at ((2000, 3000),): "), err
    assert "10000000.0" in err and "out of range for uint16" in err and "without one" in err
    assert not (tmp_path / "out").exists() and not (tmp_path / "out.zdt-partial").exists()


def test_an_interrupted_convert_leaves_no_complete_looking_destination(tmp_path):
    """Ctrl-C mid-write: zarr's IO thread goes on with the chunk it was writing (which recreates
    directories), so the partial output is only removed once that work has been stopped."""
    a = zarr.create_array(tmp_path / "src", shape=(4_000_000,), chunks=(1000,), dtype="float64",
                          fill_value=0, compressors=None)
    a[:] = readings(4_000_000, nan=0)
    for attempt, delay in enumerate([0.0, 0.15, 0.3]):   # interrupted at different points
        out = tmp_path / f"out{attempt}"
        proc = subprocess.Popen([str(SCRIPTS / "zdt"), "convert", str(tmp_path / "src"), str(out),
                                 "--abs-error", "0.5", "--sample", "2"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        partial = out.with_name(out.name + ".zdt-partial") / "c"
        deadline = time.monotonic() + 60
        while not (partial.exists() and any(partial.iterdir())) and time.monotonic() < deadline:
            time.sleep(0.02)
        time.sleep(delay)
        assert proc.poll() is None, "convert finished before it could be interrupted"
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 130 and err.strip().endswith("zdt convert: interrupted")
        assert not out.exists() and not partial.parent.exists(), f"attempt {attempt}"


def test_convert_copies_a_root_array_it_does_not_reencode(tmp_path, capsys):
    """A store that is one array (no group): its directory is the destination's root."""
    a = zarr.create_array(tmp_path / "src", shape=(5,), chunks=(2,), dtype=str)
    a[:] = np.array(["a", "bb", "", "ccc", "\u00e9"])
    rc, out, err = zdt_cmd(capsys, "convert", str(tmp_path / "src"), str(tmp_path / "out"),
                           "--abs-error", "0.5")
    assert rc == 0, err
    assert "/: not numeric: copied" in out + err
    files = sorted(f.relative_to(tmp_path / "src") for f in (tmp_path / "src").rglob("*") if f.is_file())
    assert files == sorted(f.relative_to(tmp_path / "out") for f in (tmp_path / "out").rglob("*") if f.is_file())
    assert all((tmp_path / "out" / f).read_bytes() == (tmp_path / "src" / f).read_bytes() for f in files)
    assert list(zarr.open_array(tmp_path / "out")[:]) == ["a", "bb", "", "ccc", "\u00e9"]


# -------------------------------------------------------------------------------- bench


def test_bench_writes_a_report_with_a_table_per_family(tmp_path, capsys):
    rc, out, err = zdt_cmd(capsys, "bench", "--quick", "--only", "scale_offset", "--out", str(tmp_path))
    assert rc == 0, out + err
    report = (tmp_path / "report.md").read_text()
    assert "## scale_offset" in report and "| workload | zdt (ms) |" in report
    rows = [line for line in report.splitlines() if line.startswith("| float64 encode")]
    assert len(rows) == 1 and "numcodecs FixedScaleOffset" in report
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        assert not (tmp_path / "scale_offset.png").exists()
    else:
        assert (tmp_path / "scale_offset.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_bench_rejects_an_unknown_family(tmp_path, capsys):
    rc, _, err = zdt_cmd(capsys, "bench", "--only", "nope", "--out", str(tmp_path))
    assert rc == 1 and "not a family" in err
