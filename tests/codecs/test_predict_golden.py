"""zdt.predict chunks written by earlier versions (tests/fixtures/predict/<format>/, made by
tests/predict_golden.py) decode bit for bit as they did when written, as the independent
reference decoder decodes them, within the bound of their data; and this version's encoder
writes the chunks of the newest version."""

from __future__ import annotations

import json

import numpy as np
import pytest

import predict_reference
from exact import check_relative, check_within
from predict_golden import CASES, GOLDEN, decode, digest, encode, versions, written

VERSIONS = versions()
BY_NAME = {c.name: c for c in CASES}
WRITTEN = [(v, name) for v in VERSIONS
           for name in json.loads((v / "manifest.json").read_text())["cases"]]


def test_there_are_golden_chunks_for_every_case():
    assert VERSIONS, f"no golden chunks in {GOLDEN}"
    assert set(BY_NAME) <= set(written())


@pytest.mark.parametrize(("version", "name"), WRITTEN, ids=[f"{v.name}-{n}" for v, n in WRITTEN])
def test_golden_chunks_decode_as_they_did_and_as_the_reference_decodes_them(version, name):
    entry = json.loads((version / "manifest.json").read_text())["cases"][name]
    case = BY_NAME[name]        # (a case is never dropped: its data and configuration stay here)
    assert entry["config"] == case.config and tuple(entry["shape"]) == case.shape
    data = (version / f"{name}.bin").read_bytes()
    y = decode(case, data)
    assert y.dtype == np.dtype(case.dtype) and y.shape == case.shape
    assert digest(y) == entry["decoded_sha256"]
    chunk = data[1 + 8 * data[0]:] if case.face == "numcodecs" else data
    if name.startswith("levels-"):
        assert values_magic(chunk) == b"ZPR3"
    fill = case.config.get("fill", case.fill)        # (the codec's own fill, if it has one)
    ref = predict_reference.decode(chunk, y.dtype, case.shape, case.config.get("abs_error"),
                                   np.nan if fill is None else np.asarray(fill, dtype=y.dtype),
                                   reference=case.config.get("mask"))
    if name.startswith("reference-mask-"):
        assert chunk[:7] == b"ZPR2\x02" + bytes([chunk[5]]) + b"\x01"
    if y.dtype.kind in "iu":
        assert np.array_equal(ref, y)
        x = case.data(case.dtype).astype(np.int64)
        assert int(np.abs(y.astype(np.int64) - x).max()) <= int(case.config["abs_error"])
        for kept in [fill, *case.config.get("keep", [])]:
            assert np.array_equal(x == kept, y == kept)
        return
    bits = {4: np.uint32, 8: np.uint64}[y.dtype.itemsize]
    assert np.array_equal(ref.view(bits), y.view(bits))
    if "rel_error" in case.config:
        assert chunk[:4] == b"ZPR2"
        check_relative(case.data(case.dtype), y, case.config["rel_error"], fill)
    else:
        check_within(case.data(case.dtype), y, case.config["abs_error"], fill)


def values_magic(chunk: bytes) -> bytes:
    """The magic of the chunk that holds the values' symbols: a relative chunk's logarithms'
    chunk (its length at offset 24, from 32), a masked chunk's values' chunk (after its mask
    stream, whose length is at offset 16, from 24), else the chunk's own."""
    if chunk[:4] == b"ZPR2" and chunk[4] in (1, 3, 4):
        chunk = chunk[32:32 + int.from_bytes(chunk[24:32], "little")]
    if chunk[:5] == b"ZPR2\x02":
        chunk = chunk[24 + int.from_bytes(chunk[16:24], "little"):]
    return chunk[:4]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_this_version_writes_the_chunks_of_the_newest_golden_version(case):
    """A change here is a change of what the encoder writes: write a new fixture version and
    say why (older versions must still decode, above)."""
    assert encode(case) == (written()[case.name] / f"{case.name}.bin").read_bytes()
