"""zdt inspect / suggest / convert on stores that are not local directories, against real
servers started here on 127.0.0.1: an S3 API server (moto in server mode, as s3fs and zarr test
themselves) and `python -m http.server`; and .zip files. Every conversion is compared byte for
byte with the same conversion between local directories."""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import numpy as np
import pytest

from store_helpers import KEY, SECRET, free_port, icechunk_contents, run_cmd, s3_bytes, store_bytes


def make_source(path: Path) -> np.ndarray:
    import zarr

    rng = np.random.default_rng(5)
    temps = np.round(rng.normal(15, 8, (60, 40)), 2)
    root = zarr.open_group(str(path), mode="w", attributes={"title": "zdt store test"})
    a = root.create_array("temps", shape=temps.shape, chunks=(20, 20), dtype="float64",
                          fill_value=np.nan, dimension_names=["y", "x"])
    a[:] = temps
    y = root.create_array("y", shape=(60,), chunks=(60,), dtype="float64", dimension_names=["y"])
    y[:] = np.arange(60.0)
    return temps


@pytest.fixture(scope="module")
def local_pair_template(tmp_path_factory):
    """The source and its local-to-local conversion, made once per module (a conversion is
    most of a test's setup); each test gets copies of its own (tests may kill, resume and
    corrupt what they are given)."""
    from zdt.command import main

    where = tmp_path_factory.mktemp("local-pair")
    temps = make_source(where / "src.zarr")
    assert main(["convert", str(where / "src.zarr"), str(where / "ref.zarr"), "--abs-error", "0.05",
                 "--quiet"]) == 0
    return where, temps


@pytest.fixture
def local_pair(local_pair_template, tmp_path):
    """A source directory and the local-to-local conversion of it (the reference bytes)."""
    where, temps = local_pair_template
    src, ref = tmp_path / "src.zarr", tmp_path / "ref.zarr"
    shutil.copytree(where / "src.zarr", src)
    shutil.copytree(where / "ref.zarr", ref)
    return src, ref, temps.copy()


def test_convert_to_and_from_s3_gives_the_local_bytes(local_pair, s3, capsys, tmp_path):
    fs, bucket, options = s3
    src, ref, temps = local_pair
    url = f"s3://{bucket}/out.zarr"
    rc, out, err = run_cmd(capsys, "convert", str(src), url, "--abs-error", "0.05", "--quiet",
                           "--storage-options", options)
    assert rc == 0, err
    assert out.strip().startswith(f"wrote {url}: ")
    assert s3_bytes(fs, f"{bucket}/out.zarr") == store_bytes(ref)     # no marker left behind
    rc, out, err = run_cmd(capsys, "inspect", url + ":temps", "--storage-options", options, "--json")
    assert rc == 0, err
    assert [r["path"] for r in json.loads(out)] == ["/temps"]
    back = tmp_path / "back.zarr"
    rc, _, err = run_cmd(capsys, "convert", url, str(back), "--codecs",
                         json.dumps([{"name": "bytes", "configuration": {"endian": "little"}}]), "--quiet", "--storage-options", options)
    assert rc == 0, err
    import zarr

    got = zarr.open_array(str(back), path="temps", mode="r")[:]
    assert np.max(np.abs(got - temps)) <= 0.05
    rc, out, err = run_cmd(capsys, "suggest", url, "--abs-error", "0.05", "--json",
                           "--storage-options", options)
    assert rc == 0, err
    assert json.loads(out)["source"] == url


def test_s3_endpoint_and_credentials_from_the_environment(local_pair, s3, capsys, monkeypatch):
    fs, bucket, options = s3
    src, ref, _ = local_pair
    monkeypatch.setenv("AWS_ENDPOINT_URL", json.loads(options)["endpoint_url"])
    url = f"s3://{bucket}/env.zarr"
    rc, _, err = run_cmd(capsys, "convert", str(src), url, "--abs-error", "0.05", "--quiet")
    assert rc == 0, err
    assert s3_bytes(fs, f"{bucket}/env.zarr") == store_bytes(ref)


def test_object_store_destinations_refuse_what_is_there(local_pair, s3, capsys):
    fs, bucket, options = s3
    src, _, _ = local_pair
    fs.pipe(f"{bucket}/taken/something", b"x")
    rc, _, err = run_cmd(capsys, "convert", str(src), f"s3://{bucket}/taken", "--abs-error", "0.05",
                         "--storage-options", options)
    assert rc == 1 and err.strip() == f"zdt convert: s3://{bucket}/taken exists; zdt convert writes a new store"
    fs.pipe(f"{bucket}/stopped/zdt-partial.json", b"{}")
    fs.pipe(f"{bucket}/stopped/temps/zarr.json", b"{}")
    rc, _, err = run_cmd(capsys, "convert", str(src), f"s3://{bucket}/stopped", "--abs-error", "0.05",
                         "--storage-options", options)
    assert rc == 1 and "holds zdt-partial.json: an earlier convert was stopped" in err
    assert fs.cat_file(f"{bucket}/stopped/temps/zarr.json") == b"{}"        # untouched


def test_a_failed_conversion_into_an_object_store_leaves_nothing(local_pair, s3, capsys):
    fs, bucket, options = s3
    src, _, _ = local_pair
    # uint8 without clamping cannot hold negative temperatures: fails mid-write
    codecs = json.dumps([{"name": "cast_value", "configuration": {"data_type": "uint8"}}])
    rc, _, err = run_cmd(capsys, "convert", str(src), f"s3://{bucket}/failed", "--codecs", codecs,
                         "--storage-options", options)
    assert rc == 1 and "cannot be encoded" in err, err
    assert not fs.exists(f"{bucket}/failed") or fs.find(f"{bucket}/failed") == []


def test_unreachable_endpoints_and_missing_buckets_are_one_line(local_pair, s3, capsys, tmp_path):
    fs, bucket, options = s3
    src, _, _ = local_pair
    dead = json.dumps({"endpoint_url": f"http://127.0.0.1:{free_port()}",
                       "config_kwargs": {"retries": {"max_attempts": 1}, "connect_timeout": 2}})
    t0 = time.monotonic()
    rc, _, err = run_cmd(capsys, "inspect", f"s3://{bucket}/x.zarr", "--storage-options", dead)
    assert rc == 3 and len(err.strip().splitlines()) == 1, err          # storage
    assert f"s3://{bucket}/x.zarr" in err and time.monotonic() - t0 < 60
    rc, _, err = run_cmd(capsys, "inspect", "s3://no-such-bucket-zdt/x.zarr", "--storage-options", options)
    assert rc == 1 and len(err.strip().splitlines()) == 1
    assert err.startswith("zdt inspect: s3://no-such-bucket-zdt/x.zarr: no zarr store there"), err
    rc, _, err = run_cmd(capsys, "convert", str(src), f"s3://{bucket}/y", "--abs-error", "1",
                         "--storage-options", "{not json")
    assert rc == 2 and "--storage-options is not JSON" in err           # usage
    rc, _, err = run_cmd(capsys, "inspect", "ftp://example.com/x.zarr")
    assert rc == 2 and "zdt does not read ftp:// stores" in err
    rc, _, err = run_cmd(capsys, "inspect", str(src), "--storage-options", "{}")
    assert rc == 0
    rc, _, err = run_cmd(capsys, "inspect", str(src), "--storage-options", '{"anon": true}')
    assert rc == 2 and "is a local path" in err


def test_zip_files_as_source_and_destination(local_pair, capsys, tmp_path):
    import zarr

    src, ref, temps = local_pair
    dst = tmp_path / "out.zip"
    rc, _, err = run_cmd(capsys, "convert", str(src), str(dst), "--abs-error", "0.05", "--quiet")
    assert rc == 0, err
    assert not list(tmp_path.glob("*.zdt-partial*"))
    with zipfile.ZipFile(dst) as zf:
        names = zf.namelist()
        assert len(names) == len(set(names))                 # every entry once
        assert {n: zf.read(n) for n in names} == store_bytes(ref)
    rc, out, err = run_cmd(capsys, "inspect", f"{dst}:temps", "--json")
    assert rc == 0, err
    back = tmp_path / "back.zarr"
    rc, _, err = run_cmd(capsys, "convert", str(dst), str(back), "--codecs", json.dumps([{"name": "bytes", "configuration": {"endian": "little"}}]),
                         "--quiet")
    assert rc == 0, err
    assert np.max(np.abs(zarr.open_array(str(back), path="temps", mode="r")[:] - temps)) <= 0.05
    rc, _, err = run_cmd(capsys, "convert", str(src), str(dst), "--abs-error", "0.05")
    assert rc == 1 and "exists" in err
    (tmp_path / "not.zip").write_bytes(b"not a zip")
    rc, _, err = run_cmd(capsys, "inspect", str(tmp_path / "not.zip"))
    assert rc == 1 and len(err.strip().splitlines()) == 1 and "not.zip" in err


@pytest.fixture
def http_server(tmp_path):
    root = tmp_path / "served"
    root.mkdir()
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1",
                             "--directory", str(root)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.05)
        yield root, f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(10)


def test_http_sources_are_read_and_never_written(local_pair, http_server, capsys, tmp_path):
    import zarr

    src, ref, _ = local_pair
    served, base = http_server
    with pytest.warns(UserWarning, match="[Cc]onsolidated metadata"):
        zarr.consolidate_metadata(str(src))       # http has no listing zarr can use
    shutil.copytree(src, served / "src.zarr")
    out = tmp_path / "from-http.zarr"
    rc, _, err = run_cmd(capsys, "convert", f"{base}/src.zarr", str(out), "--abs-error", "0.05", "--quiet")
    assert rc == 0, err
    local = tmp_path / "from-local.zarr"
    rc, _, err = run_cmd(capsys, "convert", str(src), str(local), "--abs-error", "0.05", "--quiet")
    assert rc == 0, err
    assert store_bytes(out) == store_bytes(local)
    rc, _, err = run_cmd(capsys, "convert", str(src), f"{base}/new.zarr", "--abs-error", "0.05")
    assert rc == 1 and err.strip() == f"zdt convert: {base}/new.zarr: http:// stores are read only"
    rc, _, err = run_cmd(capsys, "inspect", f"{base}/missing.zarr")
    assert rc == 1 and len(err.strip().splitlines()) == 1 and f"{base}/missing.zarr" in err


def test_icechunk_repositories_as_destination_and_source(local_pair, capsys, tmp_path):
    import icechunk

    src, ref, _ = local_pair
    url = f"icechunk://{tmp_path / 'repo'}"
    rc, out, err = run_cmd(capsys, "convert", str(src), url, "--abs-error", "0.05", "--quiet")
    assert rc == 0, err
    repo = icechunk.Repository.open(icechunk.local_filesystem_storage(str(tmp_path / "repo")))
    commits = list(repo.ancestry(branch="main"))
    assert len(commits) == 2                                  # the repository's first + ours
    message = commits[0].message
    assert message.startswith(f"zdt convert from {src}") and '"/temps"' in message
    assert json.loads(message.split("\n\n", 1)[1])["source"] == str(src)   # the plan
    assert icechunk_contents(repo) == store_bytes(ref)
    # another branch of the same repository: created from main, main untouched
    other = tmp_path / "other.zarr"
    make_source(other)
    rc, _, err = run_cmd(capsys, "convert", str(other), url, "--codecs",
                         json.dumps([{"name": "bytes", "configuration": {"endian": "little"}}]),
                         "--branch", "raw", "--quiet")
    assert rc == 1 and "(branch raw) is not empty, and it would start as main" in err
    rc, _, err = run_cmd(capsys, "convert", str(other), f"icechunk://{tmp_path / 'repo2'}", "--codecs",
                         json.dumps([{"name": "bytes", "configuration": {"endian": "little"}}]),
                         "--branch", "raw", "--quiet")
    assert rc == 0, err
    repo2 = icechunk.Repository.open(icechunk.local_filesystem_storage(str(tmp_path / "repo2")))
    assert sorted(repo2.list_branches()) == ["main", "raw"]
    assert icechunk_contents(repo2, "main") == {}
    # as a source: the same bytes as converting the local original
    back, direct = tmp_path / "back.zarr", tmp_path / "direct.zarr"
    for source, out_dir in ((url, back), (str(ref), direct)):
        rc, _, err = run_cmd(capsys, "convert", source, str(out_dir), "--codecs",
                             json.dumps([{"name": "bytes", "configuration": {"endian": "little"}}]), "--quiet")
        assert rc == 0, err
    assert store_bytes(back) == store_bytes(direct)
    rc, out, err = run_cmd(capsys, "inspect", url + ":temps", "--json")
    assert rc == 0 and json.loads(out)[0]["path"] == "/temps", err
    rc, _, err = run_cmd(capsys, "inspect", url, "--branch", "nope")
    assert rc == 1 and "no branch 'nope' (branches: main)" in err
    rc, _, err = run_cmd(capsys, "inspect", f"icechunk://{tmp_path / 'missing'}")
    assert rc == 1 and err.strip().endswith("no Icechunk repository there")


def test_an_icechunk_conversion_that_fails_commits_nothing(local_pair, capsys, tmp_path):
    import icechunk

    src, _, _ = local_pair
    url = f"icechunk://{tmp_path / 'repo'}"
    codecs = json.dumps([{"name": "cast_value", "configuration": {"data_type": "uint8"}}])
    rc, _, err = run_cmd(capsys, "convert", str(src), url, "--codecs", codecs)
    assert rc == 1 and "cannot be encoded" in err and len(err.strip().splitlines()) == 1
    repo = icechunk.Repository.open(icechunk.local_filesystem_storage(str(tmp_path / "repo")))
    assert len(list(repo.ancestry(branch="main"))) == 1          # only the repository's own
    assert icechunk_contents(repo) == {}
    assert sorted(repo.list_branches()) == ["main"]               # the scratch branch is gone


def test_icechunk_in_s3(local_pair, s3, capsys):
    import icechunk

    fs, bucket, options = s3
    src, ref, _ = local_pair
    url = f"icechunk+s3://{bucket}/repo"
    rc, _, err = run_cmd(capsys, "convert", str(src), url, "--abs-error", "0.05", "--quiet",
                         "--storage-options", options)
    assert rc == 0, err
    storage = icechunk.s3_storage(bucket=bucket, prefix="repo", endpoint_url=json.loads(options)["endpoint_url"],
                                  allow_http=True, force_path_style=True, region="us-east-1",
                                  access_key_id=KEY, secret_access_key=SECRET)
    repo = icechunk.Repository.open(storage)
    assert icechunk_contents(repo) == store_bytes(ref)
    rc, out, err = run_cmd(capsys, "inspect", url, "--storage-options", options, "--json")
    assert rc == 0 and {r["path"] for r in json.loads(out)} == {"/temps", "/y"}, err


def test_a_killed_conversion_into_icechunk_in_s3_resumes(local_pair, s3, capsys, tmp_path):
    import icechunk

    fs, bucket, options = s3
    src, ref, _ = local_pair
    url = f"icechunk+s3://{bucket}/repo"
    killed_run(str(src), url, "unit:2", tmp_path, "--storage-options", options, ZDT_CHECKPOINT_SECONDS="0")
    storage = icechunk.s3_storage(bucket=bucket, prefix="repo", endpoint_url=json.loads(options)["endpoint_url"],
                                  allow_http=True, force_path_style=True, region="us-east-1",
                                  access_key_id=KEY, secret_access_key=SECRET)
    repo = icechunk.Repository.open(storage)
    assert sorted(repo.list_branches()) == ["main", "main.zdt-partial"] and icechunk_contents(repo) == {}
    rc, out, err = run_cmd(capsys, "convert", str(src), url, "--abs-error", "0.05", "--resume",
                           "--storage-options", options)
    assert rc == 0, err
    repo = icechunk.Repository.open(storage)
    assert sorted(repo.list_branches()) == ["main"] and len(list(repo.ancestry(branch="main"))) == 2
    assert icechunk_contents(repo) == store_bytes(ref)
    if icechunk_version() >= 2:
        assert "(2 units written by the stopped run, checked again)" in out, out


def killed_run(src: str, dst: str, at: str, tmp_path: Path, *extra: str, **env_extra: str) -> None:
    """`zdt convert` in a process of its own, SIGKILLed at `at` (ZDT_CONVERT_KILL_AT)."""
    import os

    env = dict(os.environ, ZDT_CONVERT_KILL_AT=at, **env_extra)
    proc = subprocess.run([sys.executable, "-m", "zdt", "convert", src, dst, "--abs-error", "0.05",
                           "--quiet", *extra], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == -9, (at, proc.returncode, proc.stderr)


@pytest.mark.parametrize("at", ["survey", "unit:0", "unit:3", "last", "finish"])
def test_a_killed_conversion_resumes_to_the_same_bytes(local_pair, capsys, tmp_path, at):
    src, ref, _ = local_pair
    dst = tmp_path / "out.zarr"
    killed_run(str(src), str(dst), at, tmp_path)
    partial = tmp_path / "out.zarr.zdt-partial"
    assert not dst.exists() and (partial / "zdt-partial.json").is_file()
    if at == "unit:3":
        # what zarr's LocalStore leaves when killed between writing a file and renaming it: a
        # torn chunk, and a torn record of a unit
        (partial / "temps" / "c" / "2").mkdir(parents=True, exist_ok=True)
        (partial / "temps" / "c" / "2" / f"1.{'ab' * 16}.partial").write_bytes(b"torn")
        (partial / "zdt-partial.d" / "temps" / f"5.{'cd' * 16}.partial").write_bytes(b"")
    rc, out, err = run_cmd(capsys, "convert", str(src), str(dst), "--abs-error", "0.05", "--resume")
    assert rc == 0, err
    assert store_bytes(dst) == store_bytes(ref)              # nothing of the record is left
    if at in ("last", "finish"):
        assert "(6 units written by the stopped run, checked again)" in out, out
    assert not (tmp_path / "out.zarr.zdt-partial").exists()


def test_a_killed_conversion_into_s3_resumes(local_pair, s3, capsys, tmp_path):
    fs, bucket, options = s3
    src, ref, _ = local_pair
    url = f"s3://{bucket}/out.zarr"
    env_opts = ("--storage-options", options)
    killed_run(str(src), url, "unit:2", tmp_path, *env_opts)
    assert fs.exists(f"{bucket}/out.zarr/zdt-partial.json")
    # until the end the prefix is no zarr store: its root document is held under another name
    assert not fs.exists(f"{bucket}/out.zarr/zarr.json")
    rc, _, err = run_cmd(capsys, "inspect", url, *env_opts)
    assert rc == 1 and f"{url}: no zarr store there" in err, err
    rc, _, err = run_cmd(capsys, "convert", str(src), url, "--abs-error", "0.05", *env_opts)
    assert rc == 1 and "an earlier convert was stopped; finish it with --resume" in err
    rc, _, err = run_cmd(capsys, "convert", str(src), url, "--abs-error", "0.05", "--resume", *env_opts)
    assert rc == 0, err
    assert s3_bytes(fs, f"{bucket}/out.zarr") == store_bytes(ref)


def test_resume_refuses_what_it_cannot_resume(local_pair, capsys, tmp_path):
    import zarr

    src, _, _ = local_pair
    dst = tmp_path / "out.zarr"
    rc, _, err = run_cmd(capsys, "convert", str(src), str(dst), "--abs-error", "0.05", "--resume")
    assert rc == 1 and err.strip() == (f"zdt convert: --resume: nothing to resume at {dst} "
                                       f"(no {dst}.zdt-partial)")
    killed_run(str(src), str(dst), "unit:2", tmp_path)
    partial = tmp_path / "out.zarr.zdt-partial"
    rc, _, err = run_cmd(capsys, "convert", str(src), str(dst), "--abs-error", "0.05")
    assert rc == 1 and err.strip() == (f"zdt convert: {partial} exists: an earlier convert was "
                                       f"stopped; finish it with --resume, or remove it")
    before = store_bytes(partial)
    # a value in a unit already written changes: refused, the partial copy kept as it was. The
    # run writes units on several threads, so which were recorded when it was killed varies:
    # change one the record names (units are the 20x20 chunks of the 60x40 array, in C order)
    recorded = sorted(int(p.name) for p in (partial / "zdt-partial.d" / "temps").iterdir()
                      if p.name.isdigit())
    assert recorded, "the run was killed after unit 2 was recorded"
    row, col = divmod(recorded[0], 2)
    a = zarr.open_array(str(src), path="temps", mode="r+")
    assert a.shape == (60, 40) and a.chunks == (20, 20)
    a[row * 20, col * 20] = 99.0
    rc, _, err = run_cmd(capsys, "convert", str(src), str(dst), "--abs-error", "0.05", "--resume")
    assert rc == 1 and "does not hold what the source encodes to" in err, err
    assert store_bytes(partial) == before
    # the metadata changes: refused before anything is read
    zarr.open_group(str(src), mode="r+").attrs["title"] = "changed"
    rc, _, err = run_cmd(capsys, "convert", str(src), str(dst), "--abs-error", "0.05", "--resume")
    assert rc == 1 and "or it changed since" in err, err
    assert store_bytes(partial) == before


def icechunk_version() -> int:
    import icechunk

    return int(icechunk.__version__.split(".")[0])


def open_icechunk(path: Path):
    import icechunk

    return icechunk.Repository.open(icechunk.local_filesystem_storage(str(path)))


@pytest.mark.parametrize("at", ["survey", "unit:0", "unit:3", "last", "finish"])
def test_a_killed_conversion_into_icechunk_resumes(local_pair, capsys, tmp_path, at):
    """Killed anywhere, a conversion into Icechunk lands nothing on the branch; --resume goes on
    from the scratch branch's last checkpoint (one after every unit here) and lands one commit
    with the bytes of an uninterrupted run. Icechunk 1 cannot amend: it records nothing and
    --resume starts over, saying so."""
    src, ref, _ = local_pair
    url = f"icechunk://{tmp_path / 'repo'}"
    killed_run(str(src), url, at, tmp_path, ZDT_CHECKPOINT_SECONDS="0")
    repo = open_icechunk(tmp_path / "repo")
    assert sorted(repo.list_branches()) == ["main", "main.zdt-partial"]
    assert len(list(repo.ancestry(branch="main"))) == 1 and icechunk_contents(repo) == {}
    rc, _, err = run_cmd(capsys, "convert", str(src), url, "--abs-error", "0.05")
    assert rc == 1 and err.strip() == (f"zdt convert: {url} (branch main.zdt-partial) holds an earlier "
                                       f"convert that was stopped; finish it with --resume, or delete "
                                       f"that branch"), err
    rc, out, err = run_cmd(capsys, "convert", str(src), url, "--abs-error", "0.05", "--resume")
    assert rc == 0, err
    repo = open_icechunk(tmp_path / "repo")
    assert sorted(repo.list_branches()) == ["main"]
    commits = list(repo.ancestry(branch="main"))
    assert len(commits) == 2 and commits[0].message.startswith(f"zdt convert from {src}")
    assert icechunk_contents(repo) == store_bytes(ref)
    # units of /temps recorded (a checkpoint before each unit is started; the run is killed
    # after unit N is written, before the next checkpoint); None: no checkpoint at all
    recorded = {"survey": None, "unit:0": 0, "unit:3": 3, "last": 6, "finish": 6}[at]
    if icechunk_version() < 2 or recorded is None:
        assert "the stopped conversion recorded nothing; converting from the start" in out, out
    elif recorded == 0:
        assert "recorded nothing" not in out and "written by the stopped run" not in out, out
    else:
        assert f"({recorded} units written by the stopped run, checked again)" in out, out


def test_a_conversion_killed_after_it_landed_is_recognised(local_pair, capsys, tmp_path):
    """Killed between moving the branch to the copy and deleting the scratch branch: --resume
    says the conversion finished and deletes the leftover; the branch keeps its one commit."""
    src, ref, _ = local_pair
    url = f"icechunk://{tmp_path / 'repo'}"
    rc, _, err = run_cmd(capsys, "convert", str(src), url, "--abs-error", "0.05", "--quiet")
    assert rc == 0, err
    repo = open_icechunk(tmp_path / "repo")
    landed = repo.lookup_branch("main")
    repo.create_branch("main.zdt-partial", landed)          # what such a kill leaves
    rc, _, err = run_cmd(capsys, "convert", str(src), url, "--abs-error", "0.05", "--resume")
    assert rc == 1 and err.strip() == (f"zdt convert: --resume: {url} (branch main) is at the converted "
                                       f"copy: that conversion finished (its leftover branch "
                                       f"main.zdt-partial is deleted now)"), err
    repo = open_icechunk(tmp_path / "repo")
    assert sorted(repo.list_branches()) == ["main"] and repo.lookup_branch("main") == landed
    assert icechunk_contents(repo) == store_bytes(ref)


def test_an_icechunk_resume_refuses_what_it_cannot_resume(local_pair, capsys, tmp_path):
    import zarr

    src, _, _ = local_pair
    url = f"icechunk://{tmp_path / 'repo'}"
    rc, _, err = run_cmd(capsys, "convert", str(src), url, "--abs-error", "0.05", "--resume")
    assert rc == 1 and err.strip() == (f"zdt convert: --resume: nothing to resume at {url} (branch "
                                       f"main) (no branch main.zdt-partial)"), err
    killed_run(str(src), url, "unit:3", tmp_path, ZDT_CHECKPOINT_SECONDS="0")
    repo = open_icechunk(tmp_path / "repo")
    scratch = repo.lookup_branch("main.zdt-partial")
    if icechunk_version() >= 2:
        # a value in a recorded unit (unit 0: rows 0:20, columns 0:20) changes: refused, the
        # scratch branch kept as it was
        a = zarr.open_array(str(src), path="temps", mode="r+")
        kept = a[0, 0]
        a[0, 0] = 99.0
        rc, _, err = run_cmd(capsys, "convert", str(src), url, "--abs-error", "0.05", "--resume")
        assert rc == 1 and "does not hold what the source encodes to" in err, err
        assert open_icechunk(tmp_path / "repo").lookup_branch("main.zdt-partial") == scratch
        a[0, 0] = kept
        # the source's metadata changes: refused
        zarr.open_group(str(src), mode="r+").attrs["title"] = "changed"
        rc, _, err = run_cmd(capsys, "convert", str(src), url, "--abs-error", "0.05", "--resume")
        assert rc == 1 and "or it changed since" in err, err
        zarr.open_group(str(src), mode="r+").attrs["title"] = "zdt store test"
    # main moves on meanwhile: refused (a checkpoint records where main was)
    session = repo.writable_session("main")
    zarr.open_group(session.store, mode="w", attributes={"someone": "else"})
    session.commit("another writer")
    rc, out, err = run_cmd(capsys, "convert", str(src), url, "--abs-error", "0.05", "--resume")
    assert rc == 1 and err.strip() == (f"zdt convert: --resume: {url} (branch main) moved since the "
                                       f"stopped conversion began: delete the branch main.zdt-partial "
                                       f"and convert again"), err
    assert open_icechunk(tmp_path / "repo").lookup_branch("main.zdt-partial") == scratch


@pytest.mark.slow
def test_convert_on_a_dask_cluster_gives_the_same_bytes(local_pair, s3, capsys, tmp_path, monkeypatch):
    """--scheduler local:2 (worker processes of its own): suggest's plan is the single-process
    one; then, on a cluster already running (its scheduler's address: one start for three
    runs), convert into a directory, into S3 and into Icechunk (a checkpoint after every unit:
    the forks are merged, committed and forked again) writes the bytes of the single-process
    run."""
    import logging

    import icechunk
    from distributed import LocalCluster

    fs, bucket, options = s3
    src, ref, _ = local_pair
    plans = []
    for extra in ([], ["--scheduler", "local:2"]):
        rc, out, err = run_cmd(capsys, "suggest", str(src), "--abs-error", "0.05", "--json", "--quiet", *extra)
        assert rc == 0, err
        plans.append(json.loads(out))
    assert plans[0] == plans[1]          # the survey and measurement on the cluster decide alike
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address=None, silence_logs=logging.ERROR) as cluster:
        dst = tmp_path / "dask.zarr"
        rc, out, err = run_cmd(capsys, "convert", str(src), str(dst), "--abs-error", "0.05",
                               "--scheduler", cluster.scheduler_address, "--quiet")
        assert rc == 0, err
        assert store_bytes(dst) == store_bytes(ref)
        url = f"s3://{bucket}/dask.zarr"
        rc, _, err = run_cmd(capsys, "convert", str(src), url, "--abs-error", "0.05", "--scheduler",
                             cluster.scheduler_address, "--quiet", "--storage-options", options)
        assert rc == 0, err
        assert s3_bytes(fs, f"{bucket}/dask.zarr") == store_bytes(ref)
        monkeypatch.setenv("ZDT_CHECKPOINT_SECONDS", "0")
        rc, _, err = run_cmd(capsys, "convert", str(src), f"icechunk://{tmp_path / 'repo'}", "--abs-error",
                             "0.05", "--scheduler", cluster.scheduler_address, "--quiet")
        repo = icechunk.Repository.open(icechunk.local_filesystem_storage(str(tmp_path / "repo")))
        if int(icechunk.__version__.split(".")[0]) < 2:
            # Icechunk 1 forks only sessions without changes: said so, nothing committed
            assert rc == 1 and "--scheduler into Icechunk needs icechunk >= 2" in err, err
            assert len(list(repo.ancestry(branch="main"))) == 1
            return
        assert rc == 0, err
        repo = icechunk.Repository.open(icechunk.local_filesystem_storage(str(tmp_path / "repo")))
        assert icechunk_contents(repo) == store_bytes(ref)
        assert len(list(repo.ancestry(branch="main"))) == 2 and sorted(repo.list_branches()) == ["main"]


def test_a_scheduler_that_does_not_answer_is_one_line(local_pair, capsys, tmp_path, monkeypatch):
    from zdt.engine import cluster

    assert cluster.CONNECT_TIMEOUT == 10
    monkeypatch.setattr(cluster, "CONNECT_TIMEOUT", 2)     # (the wait itself, shorter)
    src, _, _ = local_pair
    address = f"tcp://127.0.0.1:{free_port()}"
    t0 = time.monotonic()
    rc, _, err = run_cmd(capsys, "convert", str(src), str(tmp_path / "x.zarr"), "--abs-error", "0.05",
                         "--scheduler", address)
    assert rc == 1 and err.strip().startswith(f"zdt convert: --scheduler {address}: no dask scheduler "
                                              f"answered within 2 s"), err
    assert time.monotonic() - t0 < 60
    assert not (tmp_path / "x.zarr").exists() and not (tmp_path / "x.zarr.zdt-partial").exists()
    rc, _, err = run_cmd(capsys, "convert", str(src), str(tmp_path / "y.zarr"), "--abs-error", "0.05",
                         "--scheduler", "local:0")
    assert rc == 2 and "local:N needs a worker count N >= 1" in err
