"""zdt's numcodecs codecs under zarr-python 2 (.ci/run: a venv of its own with zarr 2.18, numcodecs
and zdt's wheel installed without its zarr extra). Run with tests/ on sys.path (golden.py,
reference.py): format 2 arrays written by zarr 3 + zdt (the golden fixtures) read back, zarr 2
writes the very same chunks, and the codecs work as plain numcodecs codecs."""

from __future__ import annotations

import json

import numcodecs
import numpy as np
import pytest
import zarr

from golden import CASES, GOLDEN

V2_CASES = [c for c in CASES if c.create.get("zarr_format") == 2]
NEWEST = sorted(p for p in GOLDEN.iterdir() if p.is_dir())[-1]


def test_this_is_zarr_2_and_zdt_requires_no_zarr():
    from importlib.metadata import requires

    assert zarr.__version__.startswith("2.")
    needs_zarr = [r for r in requires("zdt") if r.startswith("zarr")]
    assert needs_zarr and all("extra ==" in r for r in needs_zarr)        # only its zarr extra


@pytest.mark.parametrize("case", V2_CASES, ids=[c.name for c in V2_CASES])
def test_zarr_2_reads_format_2_arrays_zarr_3_wrote_with_zdt_filters(case):
    a = zarr.open_array(str(NEWEST / case.name), mode="r")
    assert [f.codec_id for f in a.filters] == [f["id"] for f in case.create["filters"]]
    assert type(a.filters[0]).__module__.startswith("zdt.codecs.numcodecs")   # by entry point
    expected = case.expected()
    np.testing.assert_array_equal(a[:], expected)


@pytest.mark.parametrize("case", V2_CASES, ids=[c.name for c in V2_CASES])
def test_zarr_2_writes_the_same_chunks(case, tmp_path):
    data = case.data()
    a = zarr.open_array(str(tmp_path / "a"), mode="w", shape=data.shape,
                        chunks=case.create["chunks"], dtype=data.dtype,
                        fill_value=case.create["fill_value"], compressor=None,
                        filters=[numcodecs.get_codec(f) for f in case.create["filters"]])
    a[:] = data
    meta = json.loads((tmp_path / "a" / ".zarray").read_text())
    golden = json.loads((NEWEST / case.name / ".zarray").read_text())
    assert meta["filters"] == golden["filters"] and meta["dtype"] == golden["dtype"]
    chunks = sorted(p.name for p in (NEWEST / case.name).iterdir() if not p.name.startswith("."))
    assert chunks == sorted(p.name for p in (tmp_path / "a").iterdir() if not p.name.startswith("."))
    for name in chunks:
        assert (tmp_path / "a" / name).read_bytes() == (NEWEST / case.name / name).read_bytes()
    np.testing.assert_array_equal(zarr.open_array(str(tmp_path / "a"), mode="r")[:], case.expected())


def test_the_codecs_as_numcodecs_codecs():
    cast = numcodecs.get_codec({"id": "cast_value", "dtype": "<f4", "data_type": "int16",
                                "rounding": "towards-zero", "out_of_range": "clamp"})
    so = numcodecs.get_codec({"id": "scale_offset", "dtype": "<f4", "offset": 1, "scale": 100})
    x = np.array([1.0, 1.015, 400.0, -1e9], dtype=np.float32)
    enc = cast.encode(so.encode(x))
    assert enc.dtype == np.dtype("<i2") and enc.tolist() == [0, 1, 32767, -32768]
    back = so.decode(cast.decode(enc))
    assert back.dtype == np.float32 and back.tolist() == [1.0, 1.0099999904632568, 328.6700134277344,
                                                        -326.67999267578125]
    with pytest.raises(ValueError, match="cannot encode element"):
        numcodecs.get_codec({"id": "cast_value", "dtype": "<f8", "data_type": "uint8"}).encode(
            np.array([300.0]))


def test_the_zarr_face_says_it_needs_zarr_3():
    with pytest.raises(ImportError):
        import zdt.codecs.zarr  # noqa: F401
    from zdt.command import main

    assert main(["inspect", "."]) == 1
