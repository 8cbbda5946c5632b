"""Masked float fields as xarray writes them from netCDF: the missing values as the CF
_FillValue in the data (1e20 for many ocean models, netCDF's default fill 9.97e36 for others),
the zarr fill value NaN. With the default readers the engine keeps them bit for bit and pays
for them no more than a recipe pays for NaN: a quantization whose float32 arithmetic the
sentinel would overflow goes through float64, and a sentinel mapped to a NaN pattern gets one
pcodec codes as cheaply as the canonical NaN."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import xarray as xr
import zarr
from numcodecs import BitRound, FixedScaleOffset, PCodec

import zdt
from exact import exact_error


def masked_field() -> tuple[np.ndarray, np.ndarray]:
    t, i, j = np.mgrid[0:6, 0:90, 0:120]
    sst = (285 + 15 * np.sin(i / 25 + t / 5) * np.cos(j / 19)).astype("float32")
    land = np.broadcast_to(((i - 45) ** 2 / 400 + (j - 60) ** 2 / 900 < 1) | (j < 8), sst.shape)
    return sst, land


def write(path, sst, land, marker):
    xr.Dataset({"sst": (("t", "y", "x"), np.where(land, np.nan, sst))}).to_zarr(
        path, encoding={"sst": {"_FillValue": np.float32(marker), "chunks": (6, 90, 120)}},
        zarr_format=3, consolidated=False)
    stored = zarr.open_array(path / "sst", mode="r")[...]
    assert np.isnan(zarr.open_array(path / "sst", mode="r").fill_value)
    assert np.array_equal(stored == np.float32(marker), land)


def chunk_bytes(root) -> int:
    return sum(p.stat().st_size for p in (root / "sst").rglob("*") if p.is_file() and p.name != "zarr.json")


@pytest.mark.parametrize("marker", [9.969209968386869e36, 1e20])
def test_an_absolute_bound_quantizes_through_float64_where_the_sentinel_would_overflow(tmp_path, marker):
    sst, land = masked_field()
    src, out = tmp_path / "src.zarr", tmp_path / "out.zarr"
    write(src, sst, land, marker)
    E = 0.01
    zdt.convert(src, out, abs_error=E)
    doc = json.loads((out / "sst" / "zarr.json").read_text())
    names = [c["name"] for c in doc["codecs"]]
    assert "scale_offset" in names, names
    y = zarr.open_array(out / "sst", mode="r")[...]
    assert np.array_equal(y == np.float32(marker), land)
    assert exact_error(np.where(land, np.nan, sst), np.where(land, np.nan, y), False) <= E
    assert np.array_equal(np.isnan(xr.open_zarr(out, consolidated=False).sst.values), land)
    # the recipe on the NaN field: FixedScaleOffset's integers, step 2E, NaN one more code
    x = np.where(land, np.nan, sst).astype("float64")
    lo = math.floor(np.nanmin(x))
    codes = np.where(np.isnan(x), 2 ** 16 - 1, np.rint((x - lo) / (2 * E))).astype("uint16")
    recipe = len(PCodec(level=8).encode(codes))
    assert chunk_bytes(out) <= 1.02 * recipe, (chunk_bytes(out), recipe)


def test_a_relative_bound_maps_the_sentinel_to_a_nan_pcodec_codes_cheaply(tmp_path):
    sst, land = masked_field()
    src, out = tmp_path / "src.zarr", tmp_path / "out.zarr"
    write(src, sst, land, 1e20)
    R = 1e-4
    zdt.convert(src, out, rel_error=R)
    y = zarr.open_array(out / "sst", mode="r")[...]
    assert np.array_equal(y == np.float32(1e20), land)
    assert exact_error(np.where(land, np.nan, sst), np.where(land, np.nan, y), True) <= R
    keepbits = math.ceil(-math.log2(R)) - 1
    rounded = np.frombuffer(BitRound(keepbits).encode(np.where(land, np.nan, sst)), dtype="float32")
    recipe = len(PCodec(level=8).encode(rounded.copy()))
    assert chunk_bytes(out) <= 1.01 * recipe, (chunk_bytes(out), recipe)


@pytest.mark.parametrize("fmt, man_bits", [("float32", 23), ("float64", 52), ("float16", 10)])
def test_the_nan_patterns_sentinels_get_survive_a_bitround_and_cost_pcodec_nothing_extra(fmt, man_bits):
    """The spare NaN patterns a sentinel is mapped to have their low bits clear: numcodecs'
    BitRound (which rounds a NaN's payload too) keeps the first at every keepbits and the
    second from 2 on, and pcodec codes a bitrounded field holding them in no more bytes than
    with the canonical NaN (a pattern with its lowest bit set cost a fifth more)."""
    from zdt.engine.candidates import _spare_nans

    uint = {"float32": np.uint32, "float64": np.uint64, "float16": np.uint16}[fmt]
    patterns = [int(p, 16) for p in _spare_nans(fmt, 2)]
    for k, bits in enumerate(patterns):
        for keepbits in range(1 + k, man_bits):
            value = np.array([bits], dtype=uint).view(fmt)
            back = np.frombuffer(BitRound(keepbits).encode(value), dtype=fmt)
            assert back.view(uint)[0] == bits, (hex(bits), keepbits)
    if fmt != "float16":        # (pcodec takes 32- and 64-bit floats)
        sst, land = masked_field()
        x = np.frombuffer(BitRound(9).encode(np.where(land, np.nan, sst).astype(fmt)), dtype=fmt).copy()
        canonical = len(PCodec(level=8).encode(x))
        x.view(uint)[np.isnan(x)] = patterns[0]
        assert len(PCodec(level=8).encode(x)) <= canonical * 1.001


def test_the_recipe_s_step_of_exactly_2e_is_measured_through_float64_too(tmp_path):
    """Behind the cast to float64 the engine offers the one-line recipe's step, exactly 2E,
    as it does in float32 arithmetic, proven only by measurement (the way back to float32 may
    round a value at E from its code past E): ORCA2's temperature at 0.01 degC wrote 16,446
    bytes without it, the recipe 16,267 (pcodec's bytes move with the codes' offset). Where
    it is chosen, every value reads back within E."""
    from zdt.engine import candidates as cand
    from zdt.engine.bounds import Bound
    from zdt.engine.survey import survey

    sst, land = masked_field()
    marker = np.float32(9.969209968386869e36)
    x = np.where(land, marker, sst - 285)           # (anomalies: float32 rounds finer there)
    s = survey(lambda r: x[r], [slice(None)], x.dtype, sentinels=(float(marker),),
               grid_digits=cand.GRID_DIGITS)
    ctx = cand.Context(x.dtype, s, Bound("abs", 0.01), (float(marker),), None, 3,
                       masking=(float(marker),), fill_value=np.nan)
    exact = [e for e in cand.candidates(ctx) if e.label.startswith("cast_value float64 + ")
             and "step 0.02: step 2E exactly (measured)" in e.label]
    assert exact and not any(e.proven for e in exact), [e.label for e in cand.candidates(ctx)]
    assert {e.filters[1]["configuration"]["scale"] for e in exact} == {50.0}
    src, out = tmp_path / "src.zarr", tmp_path / "out.zarr"
    write(src, sst - 285, land, float(marker))
    zdt.convert(src, out, abs_error=0.01)
    y = zarr.open_array(out / "sst", mode="r")[...]
    assert np.array_equal(y == marker, land)
    assert exact_error(np.where(land, np.nan, sst - 285), np.where(land, np.nan, y), False) <= 0.01
