"""Arrays written by earlier versions of zdt (tests/fixtures/golden/<version>/, made by
tests/golden.py) read back to what their data was, and this version writes the same bytes as
the newest of them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import zarr
from zarr.storage import LocalStore

from common import same_values
from golden import CASES, GOLDEN, write

VERSIONS = sorted(p for p in GOLDEN.iterdir() if p.is_dir())
WRITTEN = [(v, c) for v in VERSIONS for c in CASES if (v / c.name).is_dir()]


def test_there_are_golden_fixtures_for_every_case():
    assert VERSIONS, f"no golden fixtures in {GOLDEN}"
    assert {c.name for c in CASES} <= {p.name for p in VERSIONS[-1].iterdir() if p.is_dir()}


@pytest.mark.parametrize(("version", "case"), WRITTEN, ids=[f"{v.name}-{c.name}" for v, c in WRITTEN])
def test_arrays_written_by_earlier_versions_read_back(version, case):
    a = zarr.open_array(LocalStore(version / case.name, read_only=True), mode="r")
    got = a[...]
    assert same_values(got, case.expected()), (got, case.expected())


# what zdt decides in an array's metadata (the rest is zarr's, and zarr versions differ in it:
# zarr 3.1 gives a bytes codec behind a cast to one byte the array's byte order, zarr 3.4 none)
ZDT_KEYS = ("data_type", "fill_value", "codecs", "dtype", "filters", "compressor")


def _without_bytes_config(value: object) -> object:
    if isinstance(value, dict):
        if value.get("name") == "bytes":
            return {"name": "bytes"}
        return {k: _without_bytes_config(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_without_bytes_config(v) for v in value]
    return value


def _files(root: Path) -> dict[str, object]:
    """Every file under root: chunks as bytes, metadata as the parts zdt decides."""
    out: dict[str, object] = {}
    for p in sorted(root.rglob("*")):
        if p.is_file():
            rel = p.relative_to(root).as_posix()
            if rel.endswith(("zarr.json", ".zarray")):
                meta = json.loads(p.read_text())
                out[rel] = _without_bytes_config({k: meta[k] for k in ZDT_KEYS if k in meta})
            elif not rel.endswith(".zattrs"):
                out[rel] = p.read_bytes()
    return out


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_this_version_writes_what_the_newest_golden_version_holds(case, tmp_path):
    """A change here is a change of stored format: write a new fixture version and say why."""
    newest = VERSIONS[-1] / case.name
    write(case, LocalStore(tmp_path / case.name))
    assert _files(tmp_path / case.name) == _files(newest)
