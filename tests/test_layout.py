"""The layers of the package hold: what runs without zarr, what runs without numcodecs, a stub
beside every compiled module (CI checks them with mypy's stubtest), the bench scripts
installed with the package."""

from __future__ import annotations

import json
import subprocess
import sys
from importlib.machinery import EXTENSION_SUFFIXES
from pathlib import Path

import pytest

import zdt

PACKAGE = Path(zdt.__file__).parent

# modules that must import without zarr (the numcodecs face and everything under it)
WITHOUT_ZARR = ["zdt", "zdt.kernels", "zdt.formats", "zdt.formats.json_scalar",
                "zdt.formats.fast_path", "zdt.codecs", "zdt.codecs.cast", "zdt.codecs.scale_offset",
                "zdt.codecs.packbits", "zdt.codecs.vlen", "zdt.codecs.arrow",
                "zdt.codecs.fixedscaleoffset", "zdt.codecs.steps", "zdt.codecs.layout",
                "zdt.codecs.config_json", "zdt.codecs.numcodecs", "zdt.errors", "zdt.command"]
# ... and without numcodecs (the kernels and the semantics above them)
WITHOUT_NUMCODECS = ["zdt.kernels", "zdt.formats", "zdt.codecs.cast", "zdt.codecs.scale_offset",
                     "zdt.codecs.steps"]


def importable_without(blocked: str, modules: list[str], tmp_path) -> dict:
    script = (f"import json, importlib, sys\nsys.modules[{blocked!r}] = None\nfailed = {{}}\n"
              f"for m in {modules!r}:\n"
              "    try:\n        importlib.import_module(m)\n"
              "    except ImportError as e:\n        failed[m] = str(e)\n"
              "print(json.dumps(failed))\n")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         cwd=tmp_path, timeout=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_the_numcodecs_face_and_everything_below_it_import_without_zarr(tmp_path):
    assert importable_without("zarr", WITHOUT_ZARR, tmp_path) == {}


def test_the_kernels_and_codec_semantics_import_without_numcodecs(tmp_path):
    assert importable_without("numcodecs", WITHOUT_NUMCODECS, tmp_path) == {}


def test_the_zarr_face_does_need_zarr(tmp_path):
    """(the check above would pass if nothing were blocked)"""
    failed = importable_without("zarr", ["zdt.codecs.zarr", "zdt.pipeline", "zdt.dtypes"], tmp_path)
    assert sorted(failed) == ["zdt.codecs.zarr", "zdt.dtypes", "zdt.pipeline"]


def test_every_compiled_module_has_a_stub():
    compiled = sorted({p.name.split(".")[0] for suffix in EXTENSION_SUFFIXES
                       for p in (PACKAGE / "kernels").glob(f"*{suffix}")})
    assert {"_baseline", "_packbits", "_steps", "_types", "_vlen"} <= set(compiled)
    missing = [m for m in compiled if m != "_cyutility" and not (PACKAGE / "kernels" / f"{m}.pyi").exists()]
    assert missing == []


def test_zdt_bench_finds_its_scripts():
    """Installed, they are the package zdt.bench (bench/ of the repository; CI checks the wheel
    holds them); run from the source tree, the checkout's bench/."""
    from zdt.command.bench import FAMILIES, find_bench_dir

    bench = find_bench_dir(None)
    assert {script for script, _, _ in FAMILIES.values()} <= {p.name for p in bench.glob("bench_*.py")}
    assert (bench / "_common.py").is_file()


@pytest.mark.parametrize("module", ["zdt.codecs.zarr", "zdt.pipeline", "zdt.dtypes"])
def test_zarr_face_modules_register_nothing_on_import(module, tmp_path):
    """(the whole package at once: tests/test_zarr_citizen.py)"""
    script = ("import json, zarr\nfrom zarr.core.dtype import data_type_registry\n"
              "before = dict(data_type_registry.contents)\n"
              f"import {module}\n"
              "print(json.dumps(before == dict(data_type_registry.contents)))\n")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         cwd=tmp_path, timeout=120)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) is True
