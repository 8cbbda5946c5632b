"""zdt.predict's `effort` (how hard `predictor="auto"` looks for the smallest chunk): the key's
checks on every face, each value's chunks decoding within the bound, and auto's choice on real
fields against the chunks each fixed predictor writes."""

from __future__ import annotations

import os

import numpy as np
import pytest

from exact import check_within
from zdt.codecs.numcodecs.predict import Predict
from zdt.codecs.predict import PREDICTORS, PredictConfig
from zdt.codecs.zarr.predict import PredictCodec
from zdt.errors import ConfigError
from zdt.kernels import _predict_core

EFFORTS = ("fast", "default", "max")


def fixed_sizes(x: np.ndarray, E: float, fill: object = None) -> dict[str, int]:
    """The bytes of the chunk each fixed predictor writes (the last two only for two or more
    dimensions of extent > 1, as auto tries them)."""
    names = list(PREDICTORS)
    if sum(n > 1 for n in x.shape) < 2:
        names = names[:2]
    return {n: len(PredictConfig.create(abs_error=E, predictor=n).encode(x, fill)) for n in names}


@pytest.mark.parametrize("bad", ["slow", "Fast", "", 1, None, True, ["max"]])
def test_a_bad_effort_is_an_error_naming_the_key(bad):
    with pytest.raises(ConfigError, match="effort must be one of fast, default, max") as info:
        PredictConfig.create(abs_error=0.1, effort=bad)
    assert info.value.config_key == "effort"
    with pytest.raises(ConfigError, match="effort"):
        PredictConfig.from_json({"abs_error": 0.1, "effort": bad})
    with pytest.raises(ConfigError, match="effort"):
        PredictCodec.from_dict({"name": "zdt.predict",
                                "configuration": {"abs_error": 0.1, "effort": bad}})
    with pytest.raises(ConfigError, match="effort"):
        Predict.from_config({"id": "zdt.predict", "abs_error": 0.1, "effort": bad})


def test_effort_is_written_only_when_not_the_default_and_reads_back_on_each_face():
    assert "effort" not in PredictConfig.create(abs_error=0.1).to_json()
    assert "effort" not in PredictConfig.create(abs_error=0.1, effort="default").to_json()
    assert PredictConfig.from_json({"abs_error": 0.1}).effort == "default"
    for effort in ("fast", "max"):
        config = PredictConfig.create(abs_error=0.1, effort=effort)
        assert config.to_json()["effort"] == effort
        assert PredictConfig.from_json(config.to_json()) == config
        codec = PredictCodec(abs_error=0.1, effort=effort)
        assert codec.to_dict()["configuration"]["effort"] == effort
        assert PredictCodec.from_dict(codec.to_dict()).config == config
        face = Predict(abs_error=0.1, effort=effort)
        assert face.get_config()["effort"] == effort
        assert Predict.from_config(face.get_config()).config == config


def test_the_library_refuses_an_effort_code_it_does_not_know():
    codec = _predict_core.Codec(0.1, 0.0, 0, -1, 3, effort=3)
    with pytest.raises(ValueError, match="effort must be 0 .default., 1 .fast. or 2 .max., got 3"):
        codec.encode(np.zeros((4, 4)))


def fields() -> list[tuple[str, np.ndarray, object]]:
    rng = np.random.default_rng(58)
    i, j = np.mgrid[0:300, 0:400]
    smooth = 30 * np.sin(i / 41) * np.cos(j / 29) + rng.normal(0, 0.02, (300, 400))
    gappy = smooth.astype(np.float32)
    gappy[rng.random(gappy.shape) < 0.1] = np.nan
    cube = np.cumsum(rng.normal(0, 1, (20, 30, 140)), axis=2)
    masked = smooth.copy()
    masked[100:180, 50:300] = -9999.0
    return [("smooth", smooth, None), ("float32 with NaN", gappy, None), ("random walks", cube, None),
            ("fill value held", masked, -9999.0), ("1-d", smooth[7], None)]


@pytest.mark.parametrize("effort", EFFORTS)
@pytest.mark.parametrize("fraction", [1e-2, 1e-4])
def test_each_effort_writes_chunks_that_decode_within_the_bound(effort, fraction):
    for name, x, fill in fields():
        span = float(np.nanmax(x[x != -9999.0]) - np.nanmin(x[x != -9999.0]))
        E = span * fraction
        config = PredictConfig.create(abs_error=E, effort=effort)
        data = config.encode(x, fill)
        y = config.decode(data, x.dtype, x.shape, fill)
        check_within(x, y, E, np.nan if fill is None else np.asarray(fill, dtype=x.dtype))
        if effort == "max":
            # (every predictor whole, with every stage and format each fixed one tries)
            assert len(data) <= min(fixed_sizes(x, E, fill).values()), name


@pytest.mark.parametrize("effort", EFFORTS)
def test_each_effort_codes_relative_and_integer_chunks_within_their_bounds(effort):
    rng = np.random.default_rng(5)
    x = np.exp(np.cumsum(rng.normal(0, 0.01, (200, 400)), axis=1)) * rng.choice([-1, 1], (200, 1))
    config = PredictConfig.create(rel_error=1e-3, effort=effort)
    y = config.decode(config.encode(x), x.dtype, x.shape)
    assert np.all(np.abs(y - x) <= 1e-3 * np.abs(x))
    k = np.cumsum(rng.integers(-3, 4, (300, 300)), axis=0).astype(np.int16)
    config = PredictConfig.create(abs_error=2, effort=effort)
    got = config.decode(config.encode(k), k.dtype, k.shape)
    assert int(np.abs(got.astype(np.int64) - k).max()) <= 2


def iris_field(name: str, var: str) -> np.ndarray:
    netCDF4 = pytest.importorskip("netCDF4")
    iris_sample_data = pytest.importorskip("iris_sample_data")
    path = os.path.join(os.path.dirname(iris_sample_data.__file__), "sample_data", name)
    with netCDF4.Dataset(path) as ds:
        v = ds.variables[var]
        return np.ma.filled(v[...].astype(v.dtype), np.nan)


@pytest.mark.parametrize(("name", "var", "fraction"), [
    # (the samples rank Lorenzo first; interpolation with the dimensions reversed writes 0.18x
    # its bytes)
    ("NEMO/nemo_1m_20150101-20150201_grid-T.nc", "bounds_lat", 1e-2),
    # (the samples' blocks are 9 x 12 in the horizontal: interpolation by slices wins whole)
    ("A1B_north_america.nc", "air_temperature", 1e-2),
    ("NEMO/nemo_1m_20150101-20150201_grid-T.nc", "nav_lon", 1e-3),
    ("ostia_monthly.nc", "surface_temperature", 1e-3),
])
def test_auto_writes_within_5_percent_of_the_best_fixed_predictor_on_real_fields(name, var,
                                                                                 fraction):
    x = iris_field(name, var)
    finite = x[np.isfinite(x)]
    E = float(finite.max() - finite.min()) * fraction
    sizes = fixed_sizes(x, E)
    data = PredictConfig.create(abs_error=E).encode(x)
    assert len(data) <= 1.05 * min(sizes.values()), (len(data), sizes)
    y = PredictConfig.create(abs_error=E).decode(data, x.dtype, x.shape)
    check_within(x, y, E, np.nan)


def test_the_chunks_of_effort_fast_and_of_each_fixed_predictor_are_the_ones_auto_chose_before():
    """Effort "fast" is auto's earlier search: on this field it keeps what its samples show,
    Lorenzo, though the whole chunk by the reversed interpolation is five times smaller; the
    default looks further and writes that."""
    x = iris_field("NEMO/nemo_1m_20150101-20150201_grid-T.nc", "bounds_lat")
    finite = x[np.isfinite(x)]
    E = float(finite.max() - finite.min()) * 1e-2
    sizes = fixed_sizes(x, E)
    fast = PredictConfig.create(abs_error=E, effort="fast").encode(x)
    assert fast[4] == PREDICTORS["lorenzo"] and len(fast) == sizes["lorenzo"]
    assert sizes["interpolation_reversed"] < 0.25 * sizes["lorenzo"], sizes
    default = PredictConfig.create(abs_error=E).encode(x)
    assert len(default) == min(sizes.values())


@pytest.mark.parametrize("fraction", [1e-2, 1e-3])
def test_fast_chooses_format_3_on_the_samples(fraction):
    # a smooth field at a coarse bound, where format 3's level steps win: "fast" picks its step
    # on the sample blocks and predicts the chunk once, and still writes format 3
    i, j = np.mgrid[0:512, 0:512]
    x = 1000 * np.sin(i / 90) * np.cos(j / 60) + np.random.default_rng(0).normal(0, 0.03, (512, 512))
    E = fraction * float(x.max() - x.min())
    fast = PredictConfig.create(abs_error=E, effort="fast")
    chunk = fast.encode(x, None)
    assert bytes(chunk[:4]) == b"ZPR3"
    assert len(chunk) <= 1.05 * len(PredictConfig.create(abs_error=E, effort="max").encode(x, None))
    check_within(x, fast.decode(chunk, x.dtype, x.shape, None), E, None)


def test_fast_with_a_named_predictor_chooses_format_3_on_the_samples_as_auto_does():
    # with the predictor named, "fast" still picks format 3's step on the sample blocks and
    # predicts the chunk once: the chunk auto's "fast" writes where its samples keep that
    # predictor; here the blocks' step is not the whole chunk's best, which the default
    # effort finds by packing format 1 and both steps whole
    i, j = np.mgrid[0:512, 0:512]
    x = 1000 * np.sin(i / 90) * np.cos(j / 60) + np.random.default_rng(0).normal(0, 0.03, (512, 512))
    E = 1e-3 * float(x.max() - x.min())
    name = "interpolation_reversed"
    named = PredictConfig.create(abs_error=E, effort="fast", predictor=name).encode(x, None)
    by_auto = PredictConfig.create(abs_error=E, effort="fast").encode(x, None)
    assert by_auto[4] == PREDICTORS[name]
    assert bytes(named) == bytes(by_auto)
    default = PredictConfig.create(abs_error=E, predictor=name).encode(x, None)
    assert len(default) < len(named) <= 1.05 * len(default)
    check_within(x, PredictConfig.create(abs_error=E).decode(named, x.dtype, x.shape, None), E, None)


@pytest.mark.parametrize("fraction", [1e-2, 1e-3])
@pytest.mark.parametrize("name", ["interpolation", "interpolation_reversed"])
def test_default_packs_the_format_3_trials_stage_3_estimates_near_the_least(name, fraction):
    # a sampled chunk whose codes are mostly 0: the default effort predicts format 3's two
    # steps whole but packs only those whose stage-3 estimate is within 2% of the least;
    # "max" packs all three, and both keep the smallest, so the chunks are the same
    i, j = np.mgrid[0:400, 0:400]
    rng = np.random.default_rng(3)
    x = 700 * np.sin(i / 70 + 0.3) * np.cos(j / 45) + 20 * np.sin(i / 11 + j / 13) + rng.normal(0, 0.05, (400, 400))
    E = fraction * float(x.max() - x.min())
    default = PredictConfig.create(abs_error=E, predictor=name).encode(x, None)
    most = PredictConfig.create(abs_error=E, predictor=name, effort="max").encode(x, None)
    assert bytes(default[:4]) == b"ZPR3"
    assert bytes(default) == bytes(most)
    check_within(x, PredictConfig.create(abs_error=E).decode(default, x.dtype, x.shape, None), E, None)


def test_fast_packs_zstd_where_the_codes_fall_on_the_sources_grid():
    # matplotlib's Jacksboro DEM (whole metres) at 1e-4 of its range: the codes fall on a grid
    # coarser than the bound and zstd's chunk is 9% smaller than stage 3's. "fast" skips zstd
    # only where the symbols' order-0 entropy is not well below stage 3's estimate, so it
    # still writes zstd's chunk here, the one "max" keeps
    from matplotlib import cbook

    x = np.load(cbook.get_sample_data("jacksboro_fault_dem.npz", asfileobj=False))["elevation"]
    x = x.astype(np.float64)
    E = 1e-4 * float(x.max() - x.min())
    fast = PredictConfig.create(abs_error=E, effort="fast").encode(x, None)
    by_ans = PredictConfig.create(abs_error=E, effort="fast", entropy="ans").encode(x, None)
    assert fast[6] == 0 and by_ans[6] == 3
    assert len(fast) < 0.95 * len(by_ans)
    assert bytes(fast) == bytes(PredictConfig.create(abs_error=E, effort="max").encode(x, None))
    check_within(x, PredictConfig.create(abs_error=E).decode(fast, x.dtype, x.shape, None), E, None)
