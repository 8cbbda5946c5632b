"""Faults of real storage, not of a wrapper: a destination on a tmpfs that fills up, a source
on a read-only mount (a read-only destination: tests/command/test_commands.py), and an S3 API server
behind a proxy that throttles (503 SlowDown) and resets connections (tests/flaky_proxy.py). Mounts are made in a
mount namespace of the test's own (`unshare --mount --map-root-user`: no root needed where
user namespaces are allowed), so nothing outlives the test.

What each must show: one line on stderr naming what failed and where, the documented exit
status, nothing left behind (or what the run wrote, complete), the source unchanged; and
through the flaky proxy, the clean run's bytes."""

from __future__ import annotations

import functools
import json
import shlex
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import zarr

from flaky_proxy import FlakyProxy
from store_helpers import (KEY, SECRET, icechunk_contents, run_cmd, s3_bytes, store_bytes,
                           tree_digest)

STORAGE = 3         # zdt.errors: the exit status of a storage failure


@functools.cache
def namespaces() -> str | None:
    """Why this machine allows no mount namespace (None: it does)."""
    try:
        proc = subprocess.run(["unshare", "--mount", "--map-root-user", "sh", "-c",
                               "mount -t tmpfs -o size=64k tmpfs /mnt"],
                              capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return str(exc)
    return None if proc.returncode == 0 else (proc.stderr.strip() or f"exit {proc.returncode}")


def in_namespace(script: str, cwd: Path) -> subprocess.CompletedProcess:
    """A shell script run in a mount namespace of its own ($ZDT runs the installed zdt)."""
    if namespaces() is not None:
        pytest.skip(f"no mount namespace on this machine ({namespaces()}): the tmpfs and "
                    f"read-only mounts need one")
    zdt = f"{shlex.quote(sys.executable)} -m zdt"
    return subprocess.run(["unshare", "--mount", "--map-root-user", "sh", "-c",
                           f"ZDT={shlex.quote(zdt)}\n{script}"],
                          cwd=cwd, capture_output=True, text=True, timeout=600)


@pytest.fixture
def noisy_source(tmp_path) -> Path:
    """A 1000 x 500 float64 field in 125 x 125 chunks: about 0.7 MB once converted at 1e-3."""
    src = tmp_path / "src.zarr"
    a = zarr.create_array(src, shape=(1000, 500), chunks=(125, 125), dtype="float64",
                          fill_value=np.nan)
    a[...] = np.random.default_rng(1).normal(0, 1, a.shape)
    return src


def test_a_disk_that_fills_up_is_one_line_and_leaves_nothing(noisy_source, tmp_path):
    before = tree_digest(noisy_source)
    full = tmp_path / "full"
    full.mkdir()
    proc = in_namespace(f"""
mount -t tmpfs -o size=256k tmpfs {full}
$ZDT convert {noisy_source} {full}/dst.zarr --abs-error 0.001
echo "rc=$?"
ls -A {full}
""", tmp_path)
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith(f"zdt convert: {full}/dst.zarr: no space left on device writing "
                               f"{full}/dst.zarr.zdt-partial/c/"), lines[0]
    assert lines[0].endswith((" MB written)", " KB written)")), lines[0]
    assert proc.stdout.splitlines() == [f"rc={STORAGE}"]        # and the tmpfs is empty again
    assert tree_digest(noisy_source) == before


@pytest.mark.slow
def test_a_source_on_a_read_only_mount_converts_as_any_other(noisy_source, tmp_path):
    """zdt never writes to a source: from a read-only bind mount of it, the bytes of a
    conversion from the writable original. (A read-only destination: test_commands.)"""
    ref = tmp_path / "ref.zarr"
    proc = subprocess.run([sys.executable, "-m", "zdt", "convert", str(noisy_source), str(ref),
                           "--abs-error", "0.001", "--quiet"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    src_ro = tmp_path / "src-ro"
    src_ro.mkdir()
    proc = in_namespace(f"""
mount --bind {noisy_source} {src_ro} && mount -o remount,bind,ro {src_ro} || exit 9
touch {src_ro}/zarr.json 2>/dev/null && echo "the mount is writable"
$ZDT convert {src_ro} {tmp_path}/out.zarr --abs-error 0.001 --quiet
echo "rc=$?"
""", tmp_path)
    assert proc.stdout.splitlines()[-1] == "rc=0", (proc.stdout, proc.stderr)
    assert "the mount is writable" not in proc.stdout
    assert store_bytes(tmp_path / "out.zarr") == store_bytes(ref)


# --- an object store having a bad day ------------------------------------------------------------

@pytest.fixture
def temps(tmp_path) -> tuple[Path, Path]:
    """A small store and its local conversion (the clean run's bytes)."""
    src = tmp_path / "src.zarr"
    rng = np.random.default_rng(5)
    root = zarr.open_group(str(src), mode="w")
    a = root.create_array("temps", shape=(60, 40), chunks=(20, 20), dtype="float64",
                          fill_value=np.nan, dimension_names=["y", "x"])
    a[:] = np.round(rng.normal(15, 8, a.shape), 2)
    ref = tmp_path / "ref.zarr"
    proc = subprocess.run([sys.executable, "-m", "zdt", "convert", str(src), str(ref), "--abs-error",
                           "0.05", "--quiet"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return src, ref


def test_s3_that_throttles_and_resets_gives_the_clean_bytes(temps, s3, s3_endpoint, capsys):
    """Through a proxy answering every 25th request `503 SlowDown` and resetting every 45th
    connection (about 110 requests: 4 throttled, 2 reset): into S3 and back out, the clean run's
    bytes (s3fs and botocore retry both:
    measured here by what the proxy turned away), and every chunk read back through it."""
    fs, bucket, _ = s3
    src, ref = temps
    with FlakyProxy(s3_endpoint, throttle_every=25, reset_every=45) as proxy:
        options = json.dumps({"endpoint_url": proxy.url})
        url = f"s3://{bucket}/out.zarr"
        rc, _, err = run_cmd(capsys, "convert", str(src), url, "--abs-error", "0.05", "--quiet",
                             "--storage-options", options)
        assert rc == 0, err
        # and read back: every chunk read and decoded through the proxy
        rc, out, err = run_cmd(capsys, "inspect", url, "--check", "--storage-options", options)
        assert rc == 0, err
    assert s3_bytes(fs, f"{bucket}/out.zarr") == store_bytes(ref)
    assert proxy.throttled >= 2 and proxy.reset >= 1, (proxy.requests, proxy.throttled, proxy.reset)


def test_icechunk_repository_in_flaky_s3_gives_the_clean_bytes(temps, s3, s3_endpoint, capsys):
    import icechunk

    """Icechunk's own S3 client (Rust) behind the proxy; a conversion into a repository makes
    few requests (about 30), so one in 7 is throttled and one in 10 reset."""
    fs, bucket, _ = s3
    src, ref = temps
    with FlakyProxy(s3_endpoint, throttle_every=7, reset_every=10) as proxy:
        options = json.dumps({"endpoint_url": proxy.url})
        rc, _, err = run_cmd(capsys, "convert", str(src), f"icechunk+s3://{bucket}/repo",
                             "--abs-error", "0.05", "--quiet", "--storage-options", options)
        assert rc == 0, err
    storage = icechunk.s3_storage(bucket=bucket, prefix="repo", endpoint_url=s3_endpoint,
                                  allow_http=True, force_path_style=True, region="us-east-1",
                                  access_key_id=KEY, secret_access_key=SECRET)
    assert icechunk_contents(icechunk.Repository.open(storage)) == store_bytes(ref)
    assert proxy.throttled >= 1 and proxy.reset >= 1, (proxy.requests, proxy.throttled, proxy.reset)
