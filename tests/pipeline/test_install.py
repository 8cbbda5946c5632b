"""`pip install zdt` with no extras, and `pip install zdt zarr`: every subcommand of the `zdt`
command works or says in one line what to install, never a traceback.

This installs the wheel named by ZDT_WHEEL into fresh virtual environments (CI's wheel leg
builds one and sets it); without ZDT_WHEEL there is no wheel to install and the tests skip."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

WHEEL = os.environ.get("ZDT_WHEEL")
pytestmark = pytest.mark.skipif(not WHEEL, reason="set ZDT_WHEEL to a built zdt wheel (CI's "
                                                  "wheel leg does)")


@pytest.fixture(scope="module", params=["zdt", "zdt zarr"])
def venv(request, tmp_path_factory):
    """A fresh venv with the wheel and what the param names (zarr: the newest zarr, without
    zdt's zarr extra: no tqdm)."""
    where = tmp_path_factory.mktemp(request.param.replace(" ", "-"))
    extra = ["zarr>=3.1"] if "zarr" in request.param else []
    # (CI names uv, which resolves the same indexes as pip in a fraction of its time; then the
    # venv needs no pip of its own)
    uv = os.environ.get("ZDT_UV")
    subprocess.run([sys.executable, "-m", "venv", *(["--without-pip"] if uv else []), str(where)],
                   check=True, timeout=300)
    installer = [uv, "pip", "install", "--python", str(where / "bin" / "python")] if uv else \
        [str(where / "bin" / "pip"), "install"]
    subprocess.run([*installer, "-q", WHEEL, *extra], check=True, timeout=900)
    return where, request.param


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    """A small zarr v3 store written by this process's zarr."""
    import zarr

    root = tmp_path_factory.mktemp("store") / "src.zarr"
    a = zarr.create_array(root, shape=(1000,), chunks=(250,), dtype="float64")
    a[:] = np.linspace(0, 50, 1000)
    return root


COMMANDS = [
    ["--help"],
    ["inspect", "{src}"],
    ["suggest", "{src}", "--abs-error", "0.1"],
    ["convert", "{src}", "{tmp}/out.zarr", "--abs-error", "0.1"],
    ["convert", "{src}", "s3://bucket/out.zarr", "--abs-error", "0.1"],
    ["demo", "--tiles", "0"],
    ["bench", "--only", "cast", "--bench-dir", "{tmp}/no-such-dir", "--out", "{tmp}/bench"],
]


@pytest.mark.parametrize("argv", COMMANDS, ids=lambda a: " ".join(a[:2]))
def test_every_subcommand_works_or_names_what_to_install(venv, store, argv, tmp_path):
    where, installed = venv
    args = [a.format(src=store, tmp=tmp_path) for a in argv]
    out = subprocess.run([str(where / "bin" / "zdt"), *args], capture_output=True, text=True,
                         timeout=600, cwd=tmp_path)
    assert "Traceback" not in out.stderr, out.stderr
    if out.returncode != 0:
        lines = out.stderr.strip().splitlines()
        assert len(lines) == 1, out.stderr
        assert lines[0].startswith(f"zdt {argv[0]}: ")
    if installed == "zdt" and argv[0] in ("inspect", "suggest", "convert", "demo"):
        assert out.returncode == 1 and "pip install 'zdt[" in out.stderr, out.stderr
    if installed == "zdt zarr" and argv[0] in ("inspect", "suggest", "convert") and not any("s3://" in a for a in args):
        assert out.returncode == 0, out.stderr       # no tqdm: no bars, the job done
    if installed == "zdt zarr" and "s3://" in " ".join(args):
        assert out.returncode == 1 and "pip install 'zdt[stores]'" in out.stderr, out.stderr
    if argv[0] == "demo" and installed == "zdt zarr":
        assert out.returncode == 1 and "pip install 'zdt[demo]'" in out.stderr
