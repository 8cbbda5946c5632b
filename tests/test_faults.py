"""Faults of a conversion on real storage: a damaged source chunk is one line that names the
array, the chunk's key, the codecs and the reason, from the command and the Python API alike;
the source is never touched and nothing complete-looking is left behind."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pytest
import zarr

import zdt
from zdt.command import main
from zdt.errors import InputError


def tree_digest(root: Path) -> str:
    h = hashlib.sha256()
    for p in sorted(root.rglob("*")):
        h.update(str(p.relative_to(root)).encode())
        if p.is_file():
            h.update(p.read_bytes())
    return h.hexdigest()


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


def test_a_damaged_chunk_of_a_sharded_array_names_the_shard(tmp_path):
    src = tmp_path / "sharded.zarr"
    a = zarr.create_array(src, shape=(40, 40), chunks=(10, 10), shards=(20, 20), dtype="f4",
                          compressors=zarr.codecs.ZstdCodec(level=1))
    a[...] = np.arange(1600, dtype="f4").reshape(40, 40)
    shard = src / "c" / "1" / "0"
    data = bytearray(shard.read_bytes())
    data[-40:] = b"\xff" * 40                # the shard index, overwritten
    shard.write_bytes(bytes(data))
    with pytest.raises(InputError, match=r"^cannot decode / chunk c/1/0 \(sharding_indexed\): "):
        zdt.suggest(str(src), abs_error=0.5)
