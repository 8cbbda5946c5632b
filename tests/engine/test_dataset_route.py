"""The Python API on lazily opened Datasets (``xr.open_zarr``): each chunk of the store read
once per pass, not once per region; the same plan and bytes as the command on the store; the
values within the bound element by element; a progress bar by default on a terminal only.
Real data: iris-sample-data's OSTIA SST analysis (K, land masked), written to zarr by xarray
with one time step per chunk, as a model's output often is."""

from __future__ import annotations

import os
from collections import Counter

import numpy as np
import pytest
import xarray as xr
import zarr

import zdt
from zdt.command import main

iris_sample_data = pytest.importorskip("iris_sample_data")
OSTIA = os.path.join(os.path.dirname(iris_sample_data.__file__), "sample_data", "ostia_monthly.nc")


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    out = str(tmp_path_factory.mktemp("ostia") / "ostia.zarr")
    with xr.open_dataset(OSTIA) as ds:
        ds.to_zarr(out, zarr_format=3, consolidated=False, mode="w",
                   encoding={"surface_temperature": {"chunks": (1, 18, 432)}})
    return out


class CountingStore(zarr.storage.WrapperStore):
    """A local store that counts the reads of each chunk key (every get is real)."""

    def __init__(self, store):
        super().__init__(store)
        self.reads = Counter()

    async def get(self, key, prototype, byte_range=None):
        if "/c/" in key:
            self.reads[key] += 1
        return await self._store.get(key, prototype, byte_range)


def test_encoding_on_open_zarr_reads_each_chunk_once(store):
    counting = CountingStore(zarr.storage.LocalStore(store, read_only=True))
    ds = xr.open_zarr(counting, consolidated=False)
    enc = zdt.encoding(ds, abs_error=0.01, progress=False)
    assert enc["surface_temperature"]["filters"]            # (encoded)
    sst = {k: n for k, n in counting.reads.items() if k.startswith("surface_temperature/")}
    assert len(sst) == 54                   # every chunk of the 54 time steps read...
    # ...once by the survey, which also counts the plain write's bytes (before: every unit read
    # the whole array, 54 x 54 reads, and a second pass read it all again); zdt.predict's
    # reference reads the first time step once more
    assert sum(sst.values()) <= 54 + 1, sorted(sst.values())[-3:]


def test_convert_of_a_dataset_writes_what_the_command_writes(store, tmp_path, capsys):
    ds = xr.open_zarr(store, consolidated=False)
    report = zdt.convert(ds, str(tmp_path / "api.zarr"), abs_error=0.01, progress=False)
    assert main(["convert", store, str(tmp_path / "cmd.zarr"), "--abs-error", "0.01", "--quiet"]) == 0
    capsys.readouterr()
    api = zarr.open_group(str(tmp_path / "api.zarr"), mode="r")
    cmd = zarr.open_group(str(tmp_path / "cmd.zarr"), mode="r")
    assert sorted(api.array_keys()) == sorted(cmd.array_keys())
    for name in api.array_keys():
        assert api[name].metadata.to_dict()["codecs"] == cmd[name].metadata.to_dict()["codecs"], name
        assert np.array_equal(api[name][...], cmd[name][...], equal_nan=True), name
    sst = report["/surface_temperature"]
    assert sst.action == "encode" and sst.error <= 0.01
    assert sst.bytes_after < sst.bytes_before / 2
    # the values as xarray decodes them, element by element, within the bound; land stays NaN
    a = xr.open_dataset(OSTIA)["surface_temperature"].values
    b = xr.open_zarr(str(tmp_path / "api.zarr"), consolidated=False)["surface_temperature"].values
    assert np.array_equal(np.isnan(a), np.isnan(b)) and np.isnan(a).any()
    assert np.nanmax(np.abs(a.astype(np.float64) - b)) <= 0.01


def test_suggest_on_a_dataset_and_on_its_store_agree(store):
    on_store = zdt.suggest(store, abs_error=0.01, progress=False)
    on_dataset = zdt.suggest(xr.open_zarr(store, consolidated=False), abs_error=0.01,
                             progress=False)
    for d in on_store.decisions:
        other = on_dataset[d.path]
        assert (other.action, other.codecs) == (d.action, d.codecs), d.path
    assert on_dataset["/surface_temperature"].measured["bytes_now"] == \
        on_store["/surface_temperature"].measured["bytes_now"]


def test_a_numpy_backed_dataset_is_read_as_a_plain_write_chunks_it(tmp_path):
    with xr.open_dataset(OSTIA) as lazy:
        ds = lazy.load()
    enc = zdt.encoding(ds, abs_error=0.01, progress=False)
    ds.to_zarr(str(tmp_path / "direct.zarr"), zarr_format=3, consolidated=False, encoding=enc)
    back = xr.open_zarr(str(tmp_path / "direct.zarr"), consolidated=False)["surface_temperature"]
    a = ds["surface_temperature"].values
    assert np.nanmax(np.abs(a.astype(np.float64) - back.values)) <= 0.01


def test_progress_bars_by_default_on_a_terminal_only(store, capsys):
    ds = xr.open_zarr(store, consolidated=False)
    zdt.suggest(ds, include=["/surface_temperature"], abs_error=0.01, progress=True)
    err = capsys.readouterr().err
    assert "scan /surface_temperature" in err and "measure /surface_temperature" in err
    for quiet in (False, None):         # (None: stderr here is no terminal, as in a log)
        zdt.encoding(ds, include=["/surface_temperature"], abs_error=0.01, progress=quiet)
        assert capsys.readouterr().err == ""
    seen = []
    zdt.suggest(ds, abs_error=0.01, progress=lambda label, total: seen.append((label, total)) or
                (lambda n: None))
    assert ("scan /surface_temperature", 54) in seen
    with pytest.raises(zdt.errors.UsageError, match=r"^progress='yes': give None"):
        zdt.suggest(ds, abs_error=0.01, progress="yes")
