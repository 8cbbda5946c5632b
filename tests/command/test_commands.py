"""The `zdt` subcommands: inspect, suggest, convert, bench, and their answers to bad input.

Every suggestion is checked independently of the code that made it: its codecs are applied
through a fresh zarr array and the error recomputed here in exact arithmetic (Fractions)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sysconfig
import time
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
import zarr

import zdt  # noqa: F401
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


def exact_error(x: np.ndarray, y: np.ndarray, relative: bool) -> Fraction | float:
    from exact import exact_error as exact

    return exact(x, y, relative)


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
    root.create_array("empty", shape=(0,), dtype="float64")
    root.create_array("scalar", shape=(), dtype="float64")[()] = 1.5
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
    assert set(rows) == {"/temps", "/sub/counts", "/sub/words", "/empty", "/scalar"}
    assert rows["/empty"]["shape"] == [0] and rows["/scalar"]["shape"] == []
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


def plan_of(capsys, *argv) -> dict:
    rc, out, err = zdt_cmd(capsys, "suggest", *argv, "--json", "--quiet")
    assert rc == 0, err
    return json.loads(out)


def written_back(data: np.ndarray, codecs: list[dict], fill=np.nan) -> np.ndarray:
    from zarr_arrays import source, written

    return written(source(data, fill), codecs)[0]


def test_suggest_prints_codecs_that_keep_the_bound_on_the_data(store, capsys):
    data = zarr.open_array(store / "src" / "temps")[:]
    for flag, bound in [("--abs-error", 0.05), ("--abs-error", 0.5), ("--rel-error", 1e-3)]:
        plan = plan_of(capsys, f"{store / 'src'}:temps", flag, str(bound))
        (entry,) = plan["arrays"]
        assert entry["action"] == "encode" and entry["path"] == "/temps"
        back = written_back(data, entry["codecs"])
        assert exact_error(data, back, flag == "--rel-error") <= Fraction(bound)
        assert entry["measured"]["on"] == "all 5 storage units"
    rc, out, _ = zdt_cmd(capsys, "suggest", f"{store / 'src'}:temps", "--abs-error", "0.05", "--quiet")
    assert rc == 0 and "on disk" in out and "runner-up" in out and "largest abs error" in out
    # 0.1-degree readings in 15 degrees: the data's own 0.1 grid, 151 codes + NaN (in uint8, or
    # uint16 under pcodec, whichever writes fewer bytes)
    (entry,) = plan_of(capsys, f"{store / 'src'}:temps", "--abs-error", "0.01")["arrays"]
    cast = [c for c in entry["codecs"] if c["name"] == "cast_value"][-1]
    assert cast["configuration"]["data_type"] in ("uint8", "uint16") and "grid" in entry["why"]
    back = written_back(data, entry["codecs"])
    assert exact_error(data, back, False) <= Fraction(1, 10 ** 12)


def test_suggest_on_a_sample_says_so(store, capsys):
    rc, out, _ = zdt_cmd(capsys, "suggest", f"{store / 'src'}:temps", "--abs-error", "0.5",
                         "--sample", "2", "--quiet")
    assert rc == 0 and "measured on 2 of 5 storage units (8,000 values)" in out


USAGE = {"give a bound", "at most one of", "positive finite number", "write abs:E or rel:R",
         "PATH=abs:E", "--codecs is not JSON", "the level must be an integer from -131072 to 22",
         "zstd levels are -131072 to 22", "is not a compressor zdt knows", "blosc's compressors are",
         "give one of --codecs, --plan, or a bound"}


@pytest.mark.parametrize("argv, message", [
    (["inspect", "{s}/nowhere"], "no such file or directory"),
    (["inspect", "{s}/src/temps/zarr.json"], "not a zarr store"),
    (["suggest", "{s}/src:nothing", "--abs-error", "1"], "no array or group 'nothing'"),
    (["suggest", "{s}/src:sub/words", "--abs-error", "1"], "needs integer or float data"),
    (["suggest", "{s}/src:temps"], "give a bound"),
    (["suggest", "{s}/src:temps", "--abs-error", "1", "--rel-error", "1"], "at most one of"),
    (["suggest", "{s}/src:temps", "--abs-error", "-1"], "positive finite number"),
    (["suggest", "{s}/src:temps", "--bound", "temps=abs"], "write abs:E or rel:R"),
    (["suggest", "{s}/src:temps", "--bound", "abs:1"], "PATH=abs:E"),
    (["suggest", "{s}/src:empty", "--abs-error", "1"], "no elements"),
    (["suggest", "{s}/src:scalar", "--abs-error", "1"], "0-d array"),
    (["convert", "{s}/src", "{s}/v2", "--abs-error", "1"], "exists"),
    (["convert", "{s}/src", "{s}/none/out", "--abs-error", "1"], "no such directory"),
    (["convert", "{s}/src", "{s}/src/out", "--abs-error", "1"], "inside the source"),
    (["convert", "{s}/src", "{s}", "--abs-error", "1"], "exists"),
    (["convert", "{s}/src", "{s}/out", "--codecs", "[1"], "--codecs is not JSON"),
    (["convert", "{s}/src", "{s}/out", "--abs-error", "1", "--compressor", "zstd:x"],
     "the level must be an integer from -131072 to 22"),
    (["convert", "{s}/src", "{s}/out", "--abs-error", "1", "--compressor", "zstd:99"],
     "zstd levels are -131072 to 22"),
    (["convert", "{s}/src", "{s}/out", "--abs-error", "1", "--compressor", "lzma"],
     "is not a compressor zdt knows"),
    (["convert", "{s}/src", "{s}/out", "--abs-error", "1", "--compressor", "blosc-snappy:3"],
     "blosc's compressors are"),
    (["convert", "{s}/src", "{s}/out", "--abs-error", "1", "--plan", "{s}/plan.json"],
     "give one of --codecs, --plan, or a bound"),
    (["convert", "{s}/src", "{s}/out", "--plan", "{s}/nope.json"], "no such file"),
])
def test_bad_input_gets_one_line_and_a_nonzero_exit(store, capsys, argv, message):
    """Exit status 2 for a wrong request (an option's value, options that contradict each
    other), 1 for what cannot be done with these stores (docs/command.md, "Exit status")."""
    before = tree(store / "src")
    rc, out, err = zdt_cmd(capsys, *[a.format(s=store) for a in argv])
    assert rc == (2 if message in USAGE else 1)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"zdt {argv[0]}: ") and message in lines[0], err
    assert not (store / "out").exists() and not (store / "src" / "out").exists()
    assert tree(store / "src") == before                 # the source untouched


@pytest.mark.parametrize("argv, message", [
    (["suggest", "{s}/src:temps", "--sample", "0", "--abs-error", "1"], "must be at least 1, not 0"),
    (["convert", "{s}/src", "{s}/out", "--sample", "-3", "--abs-error", "1"], "must be at least 1"),
])
def test_argument_errors_are_usage_errors(store, capsys, argv, message):
    with pytest.raises(SystemExit) as info:
        main([a.format(s=store) for a in argv])
    assert info.value.code == 2 and message in capsys.readouterr().err


def test_a_destination_that_holds_the_source_is_refused(tmp_path, capsys):
    zarr.create_array(tmp_path / "outer" / "src", shape=(4,), dtype="float64")
    rc, _, err = zdt_cmd(capsys, "convert", str(tmp_path / "outer" / "src"), str(tmp_path / "outer"),
                         "--abs-error", "1")
    assert rc == 1 and "exists" in err
    rc, _, err = zdt_cmd(capsys, "convert", str(tmp_path / "outer" / "src"),
                         str(tmp_path / "outer" / "src" / "c"), "--abs-error", "1")
    assert rc == 1 and "inside the source" in err


@pytest.fixture
def read_only_dir(tmp_path):
    """A directory no one may write: mode 555 for an ordinary user; for root (whom modes do not
    stop) a read-only tmpfs mounted on it."""
    ro = tmp_path / "ro"
    ro.mkdir()
    if os.geteuid() != 0:
        ro.chmod(0o555)
        yield ro
        ro.chmod(0o755)
        return
    mount = subprocess.run(["mount", "-t", "tmpfs", "-o", "ro,size=64k", "tmpfs", str(ro)],
                           capture_output=True, text=True)
    if mount.returncode != 0:
        pytest.skip(f"running as root without the right to mount a read-only file system: "
                    f"{mount.stderr.strip()}")
    try:
        yield ro
    finally:
        subprocess.run(["umount", str(ro)], check=True)


def test_a_destination_that_cannot_be_written_is_refused(store, read_only_dir, capsys):
    before = tree(store / "src")
    dst = read_only_dir / "out"
    rc, out, err = zdt_cmd(capsys, "convert", str(store / "src"), str(dst), "--abs-error", "1")
    assert rc == 1 and err.strip() == (f"zdt convert: {read_only_dir}: not writable (a read-only "
                                       f"file system)"), err
    assert out == "" and not dst.exists() and tree(store / "src") == before


def test_a_destination_under_a_file_is_refused(store, capsys):
    (store / "afile").write_text("x")
    rc, _, err = zdt_cmd(capsys, "convert", str(store / "src"), str(store / "afile" / "out"),
                         "--abs-error", "1")
    assert rc == 1 and err.strip() == f"zdt convert: {store / 'afile'}: not a directory", err


def test_a_bound_no_type_meets_is_reported_and_fails(tmp_path, capsys):
    a = zarr.create_array(tmp_path / "wide", shape=(3,), chunks=(3,), dtype="float32", fill_value=0)
    a[:] = [1e-30, 1.0, 3e38]
    rc, out, err = zdt_cmd(capsys, "suggest", str(tmp_path / "wide"), "--rel-error", "1e-9", "--quiet")
    # (nothing lossy keeps it; the values as they are, recompressed, are all that is measured)
    assert rc == 0 and "no encoding narrower than float32 keeps" in out


def test_the_cli_never_shows_a_traceback(store):
    out = subprocess.run([str(SCRIPTS / "zdt"), "suggest", str(store / "missing"), "--abs-error", "1"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 1 and "Traceback" not in out.stderr
    assert out.stderr.strip() == f"zdt suggest: {store / 'missing'}: no such file or directory"


@pytest.mark.parametrize("reader", ["head -c 20", "true"])
@pytest.mark.parametrize("command", ["inspect --json {src}", "inspect {src}",
                                     "suggest --json --quiet {src} --abs-error 0.5"])
def test_a_closed_pipe_ends_quietly(store, command, reader):
    """zdt ... | head: no traceback, no message; zdt ends as a Unix tool would (0 if it finished
    writing before the reader left, else 141, the status of a tool SIGPIPE ended)."""
    cmd = f"'{SCRIPTS / 'zdt'}' {command.format(src=store / 'src')}"
    script = f"{cmd} | {reader}; echo ${{PIPESTATUS[0]}} > '{store / 'status'}'"
    proc = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=120)
    status = int((store / "status").read_text())
    assert proc.stderr == "" and status in (0, 141), (status, proc.stderr)
    if reader.startswith("head"):
        assert len(proc.stdout) == 20


# -------------------------------------------------------------------------------- convert


def tree(path: Path) -> dict[str, bytes]:
    return {str(f.relative_to(path)): f.read_bytes() for f in sorted(path.rglob("*")) if f.is_file()}


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
    assert tree(store / "out" / "sub" / "words") == tree(store / "src" / "sub" / "words")
    assert dir_bytes(store / "out" / "temps") < dir_bytes(store / "src" / "temps")
    assert not list(store.glob("*.zdt-partial"))


def test_coordinates_stay_exact_unless_a_bound_names_them(tmp_path, capsys):
    """What xarray writes for a curvilinear grid: 1-d dimension coordinates, 2-d lat/lon named
    in the data's `coordinates` attribute, CF bounds variables; all copied, unless --bound
    names one."""
    import xarray as xr

    rng = np.random.default_rng(7)
    y, x = np.arange(40) * 0.25, np.arange(50) * 0.25
    ds = xr.Dataset(
        {"t": (("y", "x"), np.round(rng.uniform(250, 300, (40, 50)), 2), {"units": "K"}),
         "x_bnds": (("x", "nv"), np.stack([x - 0.125, x + 0.125], axis=1))},
        coords={"y": y, "x": ("x", x, {"bounds": "x_bnds"}),
                "lat": (("y", "x"), 40 + y[:, None] * 0.9 + x[None, :] * 0.1),
                "lon": (("y", "x"), -100 + x[None, :] * 0.9 - y[:, None] * 0.1)})
    ds.to_zarr(tmp_path / "src", zarr_format=3, consolidated=False)
    plan = plan_of(capsys, str(tmp_path / "src"), "--abs-error", "0.1")
    by = {a["path"]: a for a in plan["arrays"]}
    assert by["/t"]["action"] == "encode"
    assert by["/x"]["why"].startswith("a coordinate (1-d, named like a dimension)")
    assert by["/lat"]["why"].startswith("a coordinate (named in the 'coordinates' of t)")
    assert by["/lon"]["why"].startswith("a coordinate (named in the 'coordinates' of t)")
    assert by["/x_bnds"]["why"].startswith("a coordinate (the CF bounds of x)")
    assert all(by[p]["action"] == "copy" for p in ("/x", "/y", "/lat", "/lon", "/x_bnds"))
    plan = plan_of(capsys, str(tmp_path / "src"), "--abs-error", "0.1", "--bound", "/lat=abs:0.01")
    lat = next(a for a in plan["arrays"] if a["path"] == "/lat")
    assert lat["action"] == "encode" and lat["bound"] == {"abs": 0.01}
    rc, _, err = zdt_cmd(capsys, "convert", str(tmp_path / "src"), str(tmp_path / "out"),
                         "--abs-error", "0.1")
    assert rc == 0, err
    for name in ("x", "y", "lat", "lon", "x_bnds"):
        assert tree(tmp_path / "out" / name) == tree(tmp_path / "src" / name)
    back = xr.open_zarr(tmp_path / "out", consolidated=False)
    assert float(back.t.sel(y=2.5, x=5.0).lat) == float(ds.t.sel(y=2.5, x=5.0).lat)


def test_convert_copies_zero_size_and_0d_arrays(store, capsys):
    rc, out, err = zdt_cmd(capsys, "convert", str(store / "src"), str(store / "out"),
                           "--abs-error", "0.05")
    assert rc == 0, err
    assert "/empty: copied (no elements: nothing to gain)" in out
    assert "/scalar: copied (a 0-d array (one value): nothing to gain)" in out
    assert zarr.open_array(store / "out" / "empty").shape == (0,)
    assert zarr.open_array(store / "out" / "scalar")[()] == 1.5
    assert tree(store / "out" / "scalar") == tree(store / "src" / "scalar")


def test_a_relative_bound_copies_the_integer_arrays_and_encodes_the_floats(store, capsys):
    """The issue's case: --rel-error refused any store holding an integer array."""
    rc, out, err = zdt_cmd(capsys, "convert", str(store / "src"), str(store / "out"),
                           "--rel-error", "1e-3")
    assert rc == 0, err
    assert "/sub/counts: copied (integers under a relative bound: kept exact)" in out
    assert tree(store / "out" / "sub" / "counts") == tree(store / "src" / "sub" / "counts")
    src = zarr.open_array(store / "src" / "temps")[:]
    assert exact_error(src, zarr.open_array(store / "out" / "temps")[:], True) <= Fraction(1, 1000)


def test_convert_keeps_zarr_format_2(store, capsys):
    rc, _, err = zdt_cmd(capsys, "convert", str(store / "v2"), str(store / "out"), "--rel-error", "1e-3",
                         "--compressor", "zstd:5", "--quiet")
    assert rc == 0, err
    a = zarr.open_array(store / "out" / "temps")
    assert a.metadata.zarr_format == 2 and a.metadata.compressor.codec_id == "zstd"
    assert {f.codec_id for f in a.metadata.filters} <= {"cast_value", "bitround", "scale_offset"}
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


def test_the_plan_suggest_writes_is_what_convert_applies(store, capsys):
    plan = plan_of(capsys, str(store / "src"), "--abs-error", "0.05")
    assert {a["path"]: a["action"] for a in plan["arrays"]} == {
        "/temps": "encode", "/sub/counts": "encode", "/sub/words": "copy", "/empty": "copy",
        "/scalar": "copy"}
    (store / "plan.json").write_text(json.dumps(plan))
    rc, _, err = zdt_cmd(capsys, "convert", str(store / "src"), str(store / "a"), "--plan",
                         str(store / "plan.json"), "--quiet")
    assert rc == 0, err
    rc, _, err = zdt_cmd(capsys, "convert", str(store / "src"), str(store / "b"), "--abs-error",
                         "0.05", "--quiet")
    assert rc == 0, err
    assert tree(store / "a") == tree(store / "b")
    # an edited plan is applied as written: counts copied, temps through other codecs
    for entry in plan["arrays"]:
        if entry["path"] == "/sub/counts":
            entry.update(action="copy", why="edited by hand")
            del entry["codecs"]
        if entry["path"] == "/temps":
            entry["codecs"] = [{"name": "cast_value", "configuration": {"data_type": "float32"}}]
    (store / "plan.json").write_text(json.dumps(plan))
    rc, out, err = zdt_cmd(capsys, "convert", str(store / "src"), str(store / "c"), "--plan",
                           str(store / "plan.json"))
    assert rc == 0, err
    assert "/sub/counts: copied (edited by hand)" in out
    assert tree(store / "c" / "sub" / "counts") == tree(store / "src" / "sub" / "counts")
    assert zarr.open_array(store / "c" / "temps").metadata.codecs[0].to_dict()["name"] == "cast_value"


def test_a_plan_for_another_store_is_refused(store, capsys):
    plan = plan_of(capsys, str(store / "src"), "--abs-error", "0.05")
    plan["arrays"] = [a for a in plan["arrays"] if a["path"] != "/sub/words"]
    (store / "plan.json").write_text(json.dumps(plan))
    rc, _, err = zdt_cmd(capsys, "convert", str(store / "src"), str(store / "out"), "--plan",
                         str(store / "plan.json"))
    assert rc == 1 and "the plan has no entry for /sub/words" in err
    plan = plan_of(capsys, str(store / "src"), "--abs-error", "0.05")
    next(a for a in plan["arrays"] if a["path"] == "/temps")["shape"] = [7]
    (store / "plan.json").write_text(json.dumps(plan))
    rc, _, err = zdt_cmd(capsys, "convert", str(store / "src"), str(store / "out"), "--plan",
                         str(store / "plan.json"))
    assert rc == 1 and "/temps has shape (20000,) in the store but (7,) in the plan" in err


def test_include_exclude_and_per_array_bounds(store, capsys):
    plan = plan_of(capsys, str(store / "src"), "--exclude", "/sub/*", "--abs-error", "0.5")
    actions = {a["path"]: (a["action"], a.get("why", "")) for a in plan["arrays"]}
    assert actions["/sub/counts"] == ("copy", "excluded (an exclude glob matches it)")
    plan = plan_of(capsys, str(store / "src"), "--include", "/sub/*", "--abs-error", "0.5")
    assert {a["path"]: a["action"] for a in plan["arrays"]}["/temps"] == "copy"
    plan = plan_of(capsys, str(store / "src"), "--bound", "/temps=rel:1e-2")
    by = {a["path"]: a for a in plan["arrays"]}
    assert by["/temps"]["bound"] == {"rel": 0.01} and by["/temps"]["action"] == "encode"
    assert by["/sub/counts"]["why"] == "no bound given for it"


def test_a_unit_that_breaks_the_bound_stops_the_run_and_names_the_value(tmp_path, capsys):
    """A hand-edited plan whose codecs cannot keep the bound: the unit that breaks it stops the
    run, naming the element and its value in the data's units; nothing is left behind."""
    a = zarr.create_array(tmp_path / "src", shape=(3000,), chunks=(1000,), dtype="float64", fill_value=0)
    a[:] = readings(3000, nan=0)
    plan = plan_of(capsys, str(tmp_path / "src"), "--abs-error", "0.05")
    plan["arrays"][0]["codecs"] = [{"name": "cast_value", "configuration": {"data_type": "float8_e4m3fn"}}]
    (tmp_path / "plan.json").write_text(json.dumps(plan))
    before = tree(tmp_path / "src")
    rc, _, err = zdt_cmd(capsys, "convert", str(tmp_path / "src"), str(tmp_path / "out"), "--plan",
                         str(tmp_path / "plan.json"), "--quiet")
    assert rc == 1 and err.startswith("zdt convert: /: the storage unit (0:1000) breaks the "
                                      "absolute error <= 0.05: element ("), err
    assert "reads back as" in err
    assert not (tmp_path / "out").exists() and not (tmp_path / "out.zdt-partial").exists()
    assert tree(tmp_path / "src") == before
    # a value out of an edited encoding's range: named in the data's units, not scaled
    a[1234] = 1e6
    plan["arrays"][0]["codecs"] = [{"name": "scale_offset", "configuration": {"offset": 0, "scale": 10}},
                                   {"name": "cast_value", "configuration": {"data_type": "uint16"}}]
    (tmp_path / "plan.json").write_text(json.dumps(plan))
    rc, _, err = zdt_cmd(capsys, "convert", str(tmp_path / "src"), str(tmp_path / "out"), "--plan",
                         str(tmp_path / "plan.json"), "--quiet")
    assert rc == 1 and "the storage unit (1000:2000) cannot be encoded: the value " in err
    assert "1000000.0 at (1234,)" in err
    # an encoding the fill value does not fit: refused before anything is written
    plan["arrays"][0]["codecs"][0]["configuration"]["offset"] = 20
    (tmp_path / "plan.json").write_text(json.dumps(plan))
    rc, _, err = zdt_cmd(capsys, "convert", str(tmp_path / "src"), str(tmp_path / "out"), "--plan",
                         str(tmp_path / "plan.json"), "--quiet")
    assert rc == 1 and "fill value" in err, err
    assert not (tmp_path / "out").exists() and not (tmp_path / "out.zdt-partial").exists()


def test_sigterm_is_handled_like_ctrl_c(tmp_path):
    # (1000 units of 500 values: the write takes seconds, the survey before it less; the
    # per-unit cost, not the values, sets the time)
    a = zarr.create_array(tmp_path / "src", shape=(500_000,), chunks=(500,), dtype="float64",
                          fill_value=0, compressors=None)
    a[:] = readings(500_000, nan=0)
    out = tmp_path / "out"
    proc = subprocess.Popen([str(SCRIPTS / "zdt"), "convert", str(tmp_path / "src"), str(out),
                             "--abs-error", "0.5", "--sample", "2"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    partial = out.with_name(out.name + ".zdt-partial") / "c"
    deadline = time.monotonic() + 60
    while not (partial.exists() and any(partial.iterdir())) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert proc.poll() is None, "convert finished before it could be terminated"
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 143, err
    assert err.strip().endswith(f"zdt convert: terminated; the partial copy {partial.parent} is "
                                "kept: the same command with --resume finishes it (or remove it)")
    assert not out.exists() and partial.exists()


def test_progress_shows_before_the_first_unit_on_a_terminal(tmp_path):
    """On a terminal the first pass's bar appears before any unit is read. No clock: the first
    chunk of the source is a named pipe nobody writes, so reading it blocks the survey for
    good; a bar drawn only after the survey (or after any array) would never show."""
    import fcntl
    import struct
    import termios

    a = zarr.create_array(tmp_path / "src", shape=(3_000_000,), chunks=(100_000,), dtype="float64",
                          fill_value=np.nan)
    a[:] = readings(3_000_000)
    first_chunk = tmp_path / "src" / "c" / "0"
    first_chunk.unlink()
    os.mkfifo(first_chunk)
    master, slave = os.openpty()
    # a terminal 100 columns wide (a fresh pty has none, and tqdm draws nothing in 0 columns)
    fcntl.ioctl(master, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))
    proc = subprocess.Popen([str(SCRIPTS / "zdt"), "suggest", str(tmp_path / "src"), "--abs-error",
                             "0.05"], stdin=slave, stdout=slave, stderr=slave)
    os.close(slave)
    seen = b""
    deadline = time.monotonic() + 300          # (only for a failure: the bar never came)
    try:
        while b"scan /" not in seen and time.monotonic() < deadline:
            try:
                seen += os.read(master, 4096)
            except OSError:
                break
    finally:
        proc.kill()
        proc.wait()
        os.close(master)
    assert b"scan /" in seen, seen[-300:]
    assert b"0/30" in seen[seen.index(b"scan /"):]


@pytest.mark.slow
def test_an_interrupted_convert_is_kept_and_resumes_to_an_uninterrupted_runs_bytes(tmp_path):
    """Ctrl-C mid-write: no complete-looking destination, the partial copy is kept and says how
    to finish it, and --resume finishes it to the bytes of a run never stopped (zarr's IO
    thread goes on with the chunk it was writing: a torn chunk is never one recorded)."""
    # (500 units of 500 values: the write takes seconds, the survey before it less; the
    # per-unit cost, not the values, sets the time)
    a = zarr.create_array(tmp_path / "src", shape=(250_000,), chunks=(500,), dtype="float64",
                          fill_value=0, compressors=None)
    a[:] = readings(250_000, nan=0)
    # interrupted at two points: once the first chunk, and once 200 chunks are written (by
    # count, not by time: a loaded machine writes the 500 units at any speed)
    for attempt, written in enumerate([1, 200]):
        out = tmp_path / f"out{attempt}"
        proc = subprocess.Popen([str(SCRIPTS / "zdt"), "convert", str(tmp_path / "src"), str(out),
                                 "--abs-error", "0.5", "--sample", "2"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                # Ctrl-C as a terminal delivers it: a shell that started these
                                # tests in the background (CI under nohup, `cmd &`) hands its
                                # children SIGINT ignored, and Python then never raises it
                                preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        partial = out.with_name(out.name + ".zdt-partial") / "c"
        deadline = time.monotonic() + 60

        def count() -> int:
            try:
                return sum(1 for _ in partial.iterdir())
            except FileNotFoundError:
                return 0

        while count() < written and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.005)
        assert proc.poll() is None, "convert finished before it could be interrupted"
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 130, err
        assert err.strip().endswith(f"zdt convert: interrupted; the partial copy {partial.parent} "
                                    "is kept: the same command with --resume finishes it (or "
                                    "remove it)"), err
        assert not out.exists() and partial.parent.exists(), f"attempt {attempt}"
        again = subprocess.run([str(SCRIPTS / "zdt"), "convert", str(tmp_path / "src"), str(out),
                                "--abs-error", "0.5", "--sample", "2", "--resume", "--quiet"],
                               capture_output=True, text=True, timeout=300)
        assert again.returncode == 0, again.stderr
        assert not partial.parent.exists()
        if attempt == 0:
            whole = tmp_path / "whole"
            ref = subprocess.run([str(SCRIPTS / "zdt"), "convert", str(tmp_path / "src"), str(whole),
                                  "--abs-error", "0.5", "--sample", "2", "--quiet"],
                                 capture_output=True, text=True, timeout=300)
            assert ref.returncode == 0, ref.stderr
        assert tree(out) == tree(whole), f"attempt {attempt}"


def test_resume_with_other_settings_is_refused_naming_the_difference(tmp_path, capsys):
    """Killed at 0.005, resumed at 0.001: the copy would hold the old bound's chunks."""
    import sys

    a = zarr.create_array(tmp_path / "src", shape=(40_000,), chunks=(4_000,), dtype="float64",
                          fill_value=0)
    a[:] = readings(40_000, nan=0)
    out = tmp_path / "out"
    args = ["convert", str(tmp_path / "src"), str(out), "--quiet"]
    killed = subprocess.run([sys.executable, "-m", "zdt", *args, "--abs-error", "0.005"],
                            env=dict(os.environ, ZDT_CONVERT_KILL_AT="unit:3"),
                            capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert killed.returncode == -9, killed.stderr
    partial = out.with_name(out.name + ".zdt-partial")
    for other, said in ((["--abs-error", "0.001"], "--abs-error 0.005 then, --abs-error 0.001 now"),
                        (["--rel-error", "0.001"], "--abs-error 0.005 then, no --abs-error now; "
                                                   "no --rel-error then, --rel-error 0.001 now"),
                        (["--abs-error", "0.005", "--readers", "zdt"],
                         "--readers zarr-python then, --readers zdt now"),
                        (["--abs-error", "0.005", "--exclude", "/x*"], "no --exclude then, --exclude /x* now")):
        rc, stdout, err = zdt_cmd(capsys, *args, *other, "--resume")
        assert rc == 2 and err == (f"zdt convert: --resume: the stopped conversion was asked "
                                   f"otherwise ({said}): resume with its settings, or remove "
                                   f"{partial} and convert again\n"), err
        assert partial.exists() and not out.exists()
    with pytest.raises(zdt.UsageError, match=r"\(abs_error=0.005 then, abs_error=0.001 now\)"):
        zdt.convert(tmp_path / "src", out, abs_error=0.001, resume=True)
    rc, _, err = zdt_cmd(capsys, *args, "--abs-error", "0.005", "--resume")
    assert rc == 0 and not partial.exists(), err


def test_convert_copies_a_root_array_it_does_not_reencode(tmp_path, capsys):
    """A store that is one array (no group): its directory is the destination's root."""
    a = zarr.create_array(tmp_path / "src", shape=(5,), chunks=(2,), dtype=str)
    a[:] = np.array(["a", "bb", "", "ccc", "\u00e9"])
    rc, out, err = zdt_cmd(capsys, "convert", str(tmp_path / "src"), str(tmp_path / "out"),
                           "--abs-error", "0.5")
    assert rc == 0, err
    assert "/: copied (string data: kept as it is)" in out
    files = sorted(f.relative_to(tmp_path / "src") for f in (tmp_path / "src").rglob("*") if f.is_file())
    assert files == sorted(f.relative_to(tmp_path / "out") for f in (tmp_path / "out").rglob("*") if f.is_file())
    assert all((tmp_path / "out" / f).read_bytes() == (tmp_path / "src" / f).read_bytes() for f in files)
    assert list(zarr.open_array(tmp_path / "out")[:]) == ["a", "bb", "", "ccc", "\u00e9"]


# -------------------------------------------------------------------------------- bench


@pytest.mark.slow
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
    assert rc == 2 and "not a family" in err


@pytest.mark.slow
def test_bench_against_a_baseline_flags_rows_whose_ratio_grew(tmp_path, capsys, monkeypatch):
    """--against compares each row's zdt / floor ratio with an earlier run's: a baseline whose
    ratios are 100x better flags every row (after running the family three times); one 100x
    worse, none; a row the baseline lacks is flagged too."""
    from zdt.command import bench

    monkeypatch.setattr(bench, "RERUN_PAUSE", 0.0)
    script, title, _ = bench.FAMILIES["bitround"]      # (small: the logic is what is tested)
    monkeypatch.setitem(bench.FAMILIES, "bitround", (script, title, ["--n", "20000", "--repeat", "1"]))
    first = tmp_path / "first"
    rc, out, err = zdt_cmd(capsys, "bench", "--quick", "--only", "bitround", "--out", str(first))
    assert rc == 0, out + err
    data = json.loads((first / "bitround.json").read_text())
    titles = [r["title"] for r in data["results"]]

    def baseline(name: str, factor: float, drop_first: bool = False) -> Path:
        d = tmp_path / name
        d.mkdir()
        # both ratios --against checks scale: zdt / floor and zdt allocating / fresh floor
        rows = [dict(r, times={k: t * factor if k in (r["ours"], "zdt (allocating)") else t
                               for k, t in r["times"].items()})
                for r in data["results"]]
        (d / "bitround.json").write_text(json.dumps(dict(data, results=rows[drop_first:])))
        return d

    rc, out, _ = zdt_cmd(capsys, "bench", "--quick", "--only", "bitround", "--out",
                         str(tmp_path / "a"), "--against", str(baseline("slow", 100.0)))
    assert rc == 0 and "every row within 1.3x" in out, out
    rc, out, _ = zdt_cmd(capsys, "bench", "--quick", "--only", "bitround", "--out",
                         str(tmp_path / "b"), "--against", str(baseline("fast", 0.01)))
    assert rc == 1 and out.count("running it again") == bench.RERUNS == 2, out
    assert all(f"REGRESSION bitround: '{t}'" in out for t in titles), out
    rc, out, _ = zdt_cmd(capsys, "bench", "--quick", "--only", "bitround", "--out",
                         str(tmp_path / "b0"), "--against", str(baseline("fast0", 0.01)),
                         "--reruns", "0")
    assert rc == 1 and "running it again" not in out, out
    assert all(f"REGRESSION bitround: '{t}'" in out for t in titles), out
    rc, out, _ = zdt_cmd(capsys, "bench", "--quick", "--only", "bitround", "--out",
                         str(tmp_path / "c"), "--against", str(baseline("short", 100.0, True)))
    assert rc == 1 and f"'{titles[0]}' is not in the baseline" in out


def test_bench_against_holds_rows_under_a_millisecond_to_a_wider_tolerance(tmp_path):
    """A row whose zdt time or floor is under bench.SHORT (in this run or the baseline) may
    grow up to SHORT_TOLERANCE before it counts; a longer row is held to --tolerance."""
    from zdt.command.bench import SHORT, SHORT_TOLERANCE, compare

    def row(title: str, ours: float, floor: float) -> dict:
        return {"title": title, "note": "", "times": {"zdt": ours, "peer": 1.0}, "floor": floor,
                "ours": "zdt", "peers": ["peer"]}

    short, long_ = SHORT / 4, SHORT * 4
    base = {"family": "f", "results": [row("short", short, short), row("long", long_, long_),
                                       row("short floor", long_, short)]}
    (tmp_path / "f.json").write_text(json.dumps(base))
    grown = 1.5                             # above 1.3, below SHORT_TOLERANCE
    assert 1.3 < grown < SHORT_TOLERANCE
    now = {"family": "f", "results": [row("short", short * grown, short),
                                      row("long", long_ * grown, long_),
                                      row("short floor", long_ * grown, short)]}
    assert set(compare(now, tmp_path, 1.3)) == {("long", "floor")}
    much = SHORT_TOLERANCE * 1.2
    now = {"family": "f", "results": [row("short", short * much, short), row("long", long_, long_),
                                      row("short floor", long_ * much, short)]}
    bad = compare(now, tmp_path, 1.3)
    assert set(bad) == {("short", "floor"), ("short floor", "floor")}
    assert all("under 1 ms" in line for line in bad.values()), bad


def test_bench_against_ignores_a_ratio_that_grew_because_the_floor_got_faster(tmp_path):
    """The floor (a copy) moves more between days than zdt's loops: a ratio above tolerance
    counts only when zdt's own time grew too, for the floor ratio and the fresh one alike."""
    from zdt.command.bench import ALLOC, compare

    def row(title: str, ours: float, floor: float, alloc: float, fresh: float) -> dict:
        return {"title": title, "note": "", "times": {"zdt": ours, ALLOC: alloc, "peer": 1.0},
                "floor": floor, "ours": "zdt", "peers": ["peer"], "fresh_floor": fresh}

    base = {"family": "f", "results": [row(t, 0.010, 0.010, 0.020, 0.010) for t in "abcd"]}
    (tmp_path / "f.json").write_text(json.dumps(base))
    now = {"family": "f", "results": [
        row("a", 0.009, 0.005, 0.020, 0.010),   # floor twice as fast, zdt a bit faster: fine
        row("b", 0.014, 0.010, 0.020, 0.010),   # zdt 1.4x slower, same floor: regression
        row("c", 0.010, 0.010, 0.019, 0.005),   # fresh floor faster, allocating faster: fine
        row("d", 0.010, 0.010, 0.030, 0.010),   # allocating 1.5x slower: regression
    ]}
    assert set(compare(now, tmp_path, 1.3)) == {("b", "floor"), ("d", "fresh")}


def test_bench_runs_keep_the_slowest_ratio_of_each_row(tmp_path, capsys):
    """--runs N: per row, the run with the highest zdt / floor ratio, and the highest zdt
    allocating / fresh floor ratio even when another run had it."""
    from zdt.command.bench import ALLOC, fresh_ratio, ratio, slowest_of

    def row(title: str, ours: float, floor: float, alloc: float, fresh: float) -> dict:
        return {"title": title, "note": "", "times": {"zdt": ours, ALLOC: alloc, "peer": 1.0},
                "floor": floor, "ours": "zdt", "peers": ["peer"], "fresh_floor": fresh}

    runs = [{"family": "f", "results": [row("a", 2.0, 1.0, 3.0, 1.0), row("b", 1.0, 1.0, 1.0, 1.0)]},
            {"family": "f", "results": [row("a", 1.0, 1.0, 5.0, 1.0), row("b", 4.0, 2.0, 1.0, 2.0)]}]
    merged = slowest_of(runs)
    got = {r["title"]: (ratio(r), fresh_ratio(r)) for r in merged["results"]}
    assert got["a"] == (2.0, 5.0)          # floor ratio from run 1, fresh ratio from run 2
    assert got["b"] == (2.0, 1.0)
    assert merged["runs"] == 2
    rc, _, err = zdt_cmd(capsys, "bench", "--runs", "0", "--out", str(tmp_path))
    assert rc == 2 and "--runs 0" in err
