"""Faults of a conversion on real storage: a damaged source chunk is one line that names the
array, the chunk's key, the codecs and the reason, from the command and the Python API alike;
the source is never touched and nothing complete-looking is left behind."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import zarr

import zdt
from store_helpers import tree_digest
from zdt.command import main
from zdt.errors import InputError


@pytest.fixture
def damaged(tmp_path):
    """A group whose /temp (zstd, 4 chunks of 2500) has chunk c/2 truncated to half."""
    src = tmp_path / "src.zarr"
    g = zarr.open_group(src, mode="w")
    rng = np.random.default_rng(1)
    temp = g.create_array("temp", shape=(10_000,), chunks=(2_500,), dtype="f8",
                          compressors=zarr.codecs.ZstdCodec(level=3))
    temp[...] = np.round(rng.normal(15, 5, 10_000), 2)
    good = g.create_array("wind", shape=(100,), chunks=(100,), dtype="f8")
    good[...] = np.arange(100.0)
    chunk = src / "temp" / "c" / "2"
    data = chunk.read_bytes()
    chunk.write_bytes(data[: len(data) // 2])
    return src


@pytest.mark.parametrize("command", ["suggest", "convert"])
def test_a_damaged_chunk_is_one_line_naming_array_key_and_codec(damaged, tmp_path, capsys, command):
    before = tree_digest(damaged)
    dst = tmp_path / "out.zarr"
    argv = [command, str(damaged), *([str(dst)] if command == "convert" else []), "--abs-error", "0.01"]
    rc = main(argv)
    err = capsys.readouterr().err
    assert rc == 1, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    assert lines[0].startswith(f"zdt {command}: cannot decode /temp chunk c/2 (bytes, zstd): "), err
    assert "zstd" in lines[0].lower().split("):", 1)[1], err     # the codec's own reason
    assert tree_digest(damaged) == before
    assert not dst.exists()


def test_the_api_raises_the_same_message(damaged, tmp_path):
    with pytest.raises(InputError, match=r"^cannot decode /temp chunk c/2 \(bytes, zstd\): "):
        zdt.convert(str(damaged), str(tmp_path / "out.zarr"), abs_error=0.01)


def damaged_shard(src: Path) -> Path:
    """A 40x40 float32 array in 20x20 shards of 10x10 chunks whose shard c/1/0 has its index
    overwritten."""
    a = zarr.create_array(src, shape=(40, 40), chunks=(10, 10), shards=(20, 20), dtype="f4",
                          compressors=zarr.codecs.ZstdCodec(level=1))
    a[...] = np.arange(1600, dtype="f4").reshape(40, 40)
    shard = src / "c" / "1" / "0"
    data = bytearray(shard.read_bytes())
    data[-40:] = b"\xff" * 40                # the shard index, overwritten
    shard.write_bytes(bytes(data))
    return src


def test_a_damaged_chunk_of_a_sharded_array_names_the_shard(tmp_path):
    src = damaged_shard(tmp_path / "sharded.zarr")
    with pytest.raises(InputError, match=r"^cannot decode / chunk c/1/0 \(sharding_indexed\): "):
        zdt.suggest(str(src), abs_error=0.5)


# --- finding the damage: zdt inspect --check, zdt.check -----------------------------------------

def test_inspect_check_lists_every_damaged_chunk_and_exits_4(damaged, capsys):
    (damaged / "temp" / "c" / "0").write_bytes(b"\x28\xb5\x2f\xfd garbage")   # a second one
    before = tree_digest(damaged)
    rc = main(["inspect", str(damaged), "--check", "--quiet"])
    out, err = capsys.readouterr()
    assert rc == 4, out + err
    assert err.strip().splitlines() == [
        "zdt inspect: 2 damaged chunks in 1 of 2 arrays (listed on stdout)"], err
    assert "  check   4 chunks read, 2 damaged:" in out, out
    assert "    chunk c/0: bytes, zstd: " in out and "    chunk c/2: bytes, zstd: " in out, out
    assert "  check   1 chunk read, every one decodes" in out, out
    assert tree_digest(damaged) == before


def test_inspect_check_json_and_a_whole_store(tmp_path, capsys):
    import json

    src = tmp_path / "whole.zarr"
    a = zarr.create_array(src, shape=(30, 30), chunks=(10, 10), dtype="i2")
    a[...] = np.arange(900, dtype="i2").reshape(30, 30)
    assert main(["inspect", str(src), "--check", "--json"]) == 0
    out, err = capsys.readouterr()
    assert err == ""
    (row,) = json.loads(out)
    assert row["check"] == {"chunks": 9, "damaged": []}
    assert zdt.check(str(src)) == []


def test_zdt_check_names_the_inner_chunks_of_a_damaged_shard(tmp_path):
    src = damaged_shard(tmp_path / "sharded.zarr")
    found = zdt.check(str(src))
    assert [d.key for d in found] == [f"c/1/0 (inner chunk ({i}, {j}))" for i in (0, 1) for j in (0, 1)]
    assert all(d.array == "/" and d.reason.startswith("sharding_indexed") for d in found), found


# --- salvaging: zdt convert --on-damaged-chunk fill ---------------------------------------------

def test_fill_copies_the_rest_lists_the_damage_and_exits_4(damaged, tmp_path, capsys):
    before = tree_digest(damaged)
    dst = tmp_path / "out.zarr"
    rc = main(["convert", str(damaged), str(dst), "--abs-error", "0.01",
               "--on-damaged-chunk", "fill", "--quiet"])
    out, err = capsys.readouterr()
    assert rc == 4, out + err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(
        "zdt convert: /temp chunk c/2 is damaged, written as the fill value: bytes, zstd: "), err
    assert "1 damaged source chunk written as the fill value" in out, out
    assert tree_digest(damaged) == before
    src = zarr.open_group(damaged, mode="r")
    new = zarr.open_group(dst, mode="r")
    x, y = src["temp"], new["temp"][...]
    for k in (0, 1, 3):                              # the chunks that decode: within the bound
        part = slice(2500 * k, 2500 * (k + 1))
        assert np.max(np.abs(x[part] - y[part])) <= 0.01
    assert np.all(y[5000:7500] == src["temp"].fill_value)     # the damaged one: the fill value
    assert new["temp"].attrs["zdt_damaged_chunks"] == [
        {"chunk": "c/2", "reason": lines[0].split("fill value: ", 1)[1]}]
    np.testing.assert_array_equal(new["wind"][...], np.arange(100.0))
    assert "zdt_damaged_chunks" not in new["wind"].attrs


def test_suggest_with_fill_plans_what_convert_with_fill_writes(damaged, tmp_path, capsys):
    """suggest --on-damaged-chunk fill reads the damaged chunk as the fill value, lists it on
    stderr, exits 4, and its plan applied with fill writes the bytes convert decides alone."""
    before = tree_digest(damaged)
    rc = main(["suggest", str(damaged), "--abs-error", "0.01", "--on-damaged-chunk", "fill",
               "--json", "--quiet"])
    out, err = capsys.readouterr()
    assert rc == 4, err
    assert err.strip().splitlines() == [line for line in err.strip().splitlines()
                                        if line.startswith("zdt suggest: /temp chunk c/2 is damaged, "
                                                           "read as the fill value: bytes, zstd: ")]
    assert len(err.strip().splitlines()) == 1, err
    plan_file = tmp_path / "plan.json"
    plan_file.write_text(out)
    plan = zdt.suggest(str(damaged), abs_error=0.01, on_damaged_chunk="fill")
    assert [(d.array, d.key) for d in plan.damaged] == [("/temp", "c/2")]
    assert plan["/temp"].action == "encode"
    a, b = tmp_path / "a.zarr", tmp_path / "b.zarr"
    zdt.convert(str(damaged), str(a), str(plan_file), on_damaged_chunk="fill")
    zdt.convert(str(damaged), str(b), abs_error=0.01, on_damaged_chunk="fill")
    assert tree_digest(a) == tree_digest(b)
    assert tree_digest(damaged) == before
    with pytest.raises(zdt.InputError, match="/temp chunk c/2"):
        zdt.suggest(str(damaged), abs_error=0.01)


def test_fill_on_an_array_that_is_copied_and_a_sharded_one(tmp_path):
    src = tmp_path / "src.zarr"
    g = zarr.open_group(src, mode="w")
    ids = g.create_array("ids", shape=(40,), chunks=(10,), dtype="i4", fill_value=-1,
                         compressors=zarr.codecs.ZstdCodec(level=1))
    ids[...] = np.arange(40, dtype="i4")
    sh = g.create_array("field", shape=(40, 40), chunks=(10, 10), shards=(20, 20), dtype="f4",
                        fill_value=np.nan, compressors=zarr.codecs.ZstdCodec(level=1))
    sh[...] = np.arange(1600, dtype="f4").reshape(40, 40) / 16
    (src / "ids" / "c" / "1").write_bytes(b"not zstd")
    shard = src / "field" / "c" / "1" / "1"
    data = bytearray(shard.read_bytes())
    data[-40:] = b"\xff" * 40                # the shard index, overwritten
    shard.write_bytes(bytes(data))
    before = tree_digest(src)
    report = zdt.convert(str(src), str(tmp_path / "out.zarr"), abs_error=0.5,
                         on_damaged_chunk="fill", exclude=["/ids"])
    assert tree_digest(src) == before
    assert [a.action for a in report.arrays] == ["encode", "copy"]
    assert report["ids"].bytes_after < report["ids"].bytes_before       # c/1 is no chunk now
    assert sorted((d.array, d.key) for d in report.damaged) == sorted(
        [("/field", f"c/1/1 (inner chunk ({i}, {j}))") for i in (0, 1) for j in (0, 1)] + [("/ids", "c/1")])
    new = zarr.open_group(tmp_path / "out.zarr", mode="r")
    got = new["ids"][...]
    np.testing.assert_array_equal(got[:10], np.arange(10))
    assert np.all(got[10:20] == -1)
    np.testing.assert_array_equal(got[20:], np.arange(20, 40))
    f = new["field"][...]
    assert np.all(np.isnan(f[20:, 20:]))
    want = np.arange(1600, dtype="f4").reshape(40, 40) / 16
    assert np.max(np.abs(f[:20] - want[:20])) <= 0.5 and np.max(np.abs(f[:, :20] - want[:, :20])) <= 0.5
    assert len(new["field"].attrs["zdt_damaged_chunks"]) == 4
    assert zdt.check(str(tmp_path / "out.zarr")) == []       # the copy itself is whole


def test_fill_is_refused_where_it_cannot_run_and_a_bad_value_is_usage(damaged, tmp_path, capsys):
    with pytest.raises(SystemExit) as stop:                 # argparse's own usage error
        main(["convert", str(damaged), str(tmp_path / "o.zarr"), "--abs-error", "0.1",
              "--on-damaged-chunk", "skip"])
    assert stop.value.code == 2 and "invalid choice: 'skip'" in capsys.readouterr().err
    from zdt.errors import UsageError

    with pytest.raises(UsageError, match="on_damaged_chunk='skip': stop or fill"):
        zdt.convert(str(damaged), str(tmp_path / "o.zarr"), abs_error=0.1, on_damaged_chunk="skip")
    with pytest.raises(UsageError, match="does not run on a dask cluster"):
        zdt.convert(str(damaged), str(tmp_path / "o.zarr"), abs_error=0.1, on_damaged_chunk="fill",
                    scheduler="tcp://127.0.0.1:1")
    assert not (tmp_path / "o.zarr").exists()


@pytest.mark.parametrize("at", ["unit:3"])
def test_a_killed_salvage_resumes_to_the_bytes_of_an_uninterrupted_one(damaged, tmp_path, at):
    """Killed (SIGKILL) while salvaging, resumed with the same options: the same chunks,
    attributes included, as a run that was never stopped."""
    import os
    import subprocess
    import sys

    args = ["--abs-error", "0.01", "--on-damaged-chunk", "fill", "--quiet"]
    clean = tmp_path / "clean.zarr"
    # (from tmp_path: at the checkout's root `python -m zdt` would find the source tree first)
    ref = subprocess.run([sys.executable, "-m", "zdt", "convert", str(damaged), str(clean), *args],
                         capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert ref.returncode == 4, ref.stderr
    dst = tmp_path / "out.zarr"
    proc = subprocess.run([sys.executable, "-m", "zdt", "convert", str(damaged), str(dst), *args],
                          env=dict(os.environ, ZDT_CONVERT_KILL_AT=at), capture_output=True,
                          text=True, timeout=300, cwd=tmp_path)
    assert proc.returncode == -9 and not dst.exists(), proc.stderr
    again = subprocess.run([sys.executable, "-m", "zdt", "convert", str(damaged), str(dst), *args,
                            "--resume"], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert again.returncode == 4, again.stderr
    assert again.stderr == ref.stderr
    assert tree_digest(dst) == tree_digest(clean)
