"""zdt.predict's masked chunks (format 2, kind 2; docs/codecs/predict.md, "Masked chunks"): the
mask stream against the independent reference decoder, masked chunks of every predictor and
stage, what a repeated mask costs, and corrupt masked chunks as errors naming the part."""

from __future__ import annotations

import math
import struct

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis_budget import examples

import predict_reference
from exact import check_within
from predict_pack import masked, pack_values
from zdt.codecs.predict import (MASKED_HEADER, PREDICTORS, PredictConfig, ReferenceMask,
                                fill_value, grid4)
from zdt.errors import ConfigError, CorruptChunkError
from zdt.kernels import _predict_core

FILL = -9999.0


def land(shape: tuple[int, ...], seed: int, density: float, repeat: bool) -> np.ndarray:
    """A mask of `shape`: blobs over the last two axes (repeated along the others when
    `repeat`), or independent bits of the given density."""
    rng = np.random.default_rng(seed)
    if not repeat or len(shape) < 2:
        return rng.random(shape) < density
    ny, nx = shape[-2:]
    y, x = np.mgrid[0:ny, 0:nx]
    m = np.zeros((ny, nx), dtype=bool)
    for _ in range(3):
        cy, cx, r = rng.uniform(0, ny), rng.uniform(0, nx), rng.uniform(0, max(ny, nx) * density + 1)
        m |= (y - cy) ** 2 + (x - cx) ** 2 < r * r
    return np.broadcast_to(m, shape).copy()


shapes = st.lists(st.integers(1, 9), min_size=0, max_size=5).map(tuple)


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(shape=shapes, seed=st.integers(0, 2**32 - 1), density=st.sampled_from([0.0, 0.05, 0.5, 0.97, 1.0]),
       repeat=st.booleans())
def test_the_mask_stream_decodes_as_the_reference_decodes_it(shape, seed, density, repeat):
    """The library's mask stream (_predict_core.mask_encode / mask_decode) against the spec's
    reference decoder; a stream is exactly its bytes (one more: part "mask")."""
    mask = land(shape, seed, density, repeat).reshape(-1).view(np.uint8)
    stream = _predict_core.mask_encode(mask, shape)
    got, count = _predict_core.mask_decode(stream, shape)
    assert np.array_equal(got, mask) and count == int(mask.sum())
    ref = predict_reference.decode_mask(stream, predict_reference.spec_shape(shape))
    assert ref == [bool(b) for b in mask]
    with pytest.raises(CorruptChunkError) as info:
        _predict_core.mask_decode(stream + b"tail", shape)
    assert info.value.part == "mask"


@settings(max_examples=examples(100), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(shape=shapes, seed=st.integers(0, 2**32 - 1), density=st.sampled_from([0.05, 0.5, 0.97]),
       repeat=st.booleans(), same=st.booleans())
def test_a_mask_stream_looking_back_at_a_reference_decodes_as_the_reference_decoder(
        shape, seed, density, repeat, same):
    """The first slice looking back at a reference mask of the grid's last two extents (the
    chunk's own first slice, or another mask): the library and the spec's reference decoder."""
    grid = grid4(shape)
    if not math.prod(shape):
        return
    mask = land(shape, seed, density, repeat).reshape(-1).view(np.uint8)
    rows, cols = grid[2:]
    ref = (mask[:rows * cols] if same else
           land((rows, cols), seed + 1, density, False).reshape(-1).view(np.uint8)).copy()
    stream = _predict_core.mask_encode(mask, shape, ref)
    got, count = _predict_core.mask_decode(stream, shape, ref)
    assert np.array_equal(got, mask) and count == int(mask.sum())
    bits = [bool(b) for b in ref]
    expected = predict_reference.decode_mask(
        stream, predict_reference.spec_shape(shape), [bits[r * cols:(r + 1) * cols] for r in range(rows)])
    assert expected == [bool(b) for b in mask]


def test_a_reference_mask_makes_a_repeated_mask_cost_next_to_nothing_in_every_chunk():
    """Chunks of one time step each, the land mask the same in every one: with the reference
    (the mask itself) each chunk's mask stream is a few bytes, without it the whole mask; the
    encoder keeps the smaller, and a chunk whose mask differs a little still decodes."""
    i, j = np.mgrid[0:90, 0:120]
    one = (np.sin(i / 5) * np.cos(j / 7) + 0.6 * np.sin(i / 3.1 + j / 4.3)) > 0.4   # (islands)
    x = (280 + np.sin(i / 9) + np.cos(j / 11))[None].repeat(3, axis=0)
    x[:, one] = np.nan
    x[2, 40:44, 10:14] = np.nan                     # (a gap of its own in the last step)
    reference = ReferenceMask.of(one)
    plain = PredictConfig.create(abs_error=0.01)
    looking = PredictConfig.create(abs_error=0.01, mask=reference.to_json())
    for t in range(3):
        a, b = plain.encode(x[t:t + 1], np.nan), looking.encode(x[t:t + 1], np.nan)
        stream_a = int.from_bytes(a[16:24], "little")
        stream_b = int.from_bytes(b[16:24], "little")
        assert a[6] == 0 and b[6] == 1 and stream_b < 60 < 250 < stream_a, (stream_a, stream_b)
        y = looking.decode(b, x.dtype, (1, 90, 120), np.nan)
        assert np.array_equal(np.isnan(y), np.isnan(x[t:t + 1]))
        check_within(x[t:t + 1], y, 0.01, np.asarray(np.nan))
        ref = predict_reference.decode(b, x.dtype, (1, 90, 120), 0.01, np.asarray(np.nan),
                                       reference=looking.to_json()["mask"])
        assert np.array_equal(ref.view(np.uint64), y.view(np.uint64))
    # a chunk of another shape than the reference's: no look back
    other = looking.encode(x[:, :60, :100], np.nan)
    assert other[6] == 0


def test_reference_mask_config_errors_and_corrupt_reference_fields():
    one = land((20, 30), 2, 0.3, True)
    reference = ReferenceMask.of(one)
    doc = reference.to_json()
    assert ReferenceMask.from_json(doc) == reference
    config = PredictConfig.create(abs_error=0.1, mask=doc)
    assert PredictConfig.from_json(config.to_json()) == config
    assert np.array_equal(config.mask.bits, one.reshape(-1).view(np.uint8))
    bad = [{"shape": [20, 30]}, {"shape": [20], "stream": doc["stream"]},
           {"shape": [0, 30], "stream": doc["stream"]}, {"shape": [20, 30], "stream": 5},
           {"shape": [20, 30], "stream": "not base64!"},
           {"shape": [20, 31], "stream": doc["stream"]}, [20, 30], "mask"]
    for value in bad:
        with pytest.raises(ConfigError) as info:
            PredictConfig.create(abs_error=0.1, mask=value)
        assert info.value.config_key == "mask", value
    x = np.where(one, np.nan, 1.0 + np.arange(600).reshape(20, 30) / 600)[None].repeat(2, axis=0)
    data = config.encode(x, np.nan)
    assert data[6] == 1
    cases = {
        "no reference": (PredictConfig.create(abs_error=0.1), data),
        "another shape": (PredictConfig.create(abs_error=0.1, mask=ReferenceMask.of(one[:, :29]).to_json()), data),
        "field 2": (config, data[:6] + b"\x02\x00" + data[8:]),
    }
    for label, (codec, chunk) in cases.items():
        with pytest.raises(CorruptChunkError) as info:
            codec.decode(chunk, x.dtype, x.shape, np.nan)
        assert info.value.part == "header", label
    # the numcodecs face takes no reference (its chunks have no fill value, so no mask)
    from zdt.codecs.numcodecs.predict import Predict
    with pytest.raises(ConfigError):
        Predict.from_config({"id": "zdt.predict", "abs_error": 0.1, "mask": doc})


def test_a_mask_repeated_along_the_first_axis_costs_next_to_nothing_after_the_first_slice():
    one = land((1, 90, 120), 4, 0.3, True)
    stream_one = _predict_core.mask_encode(one.reshape(-1).view(np.uint8), one.shape)
    many = np.broadcast_to(one, (40, 90, 120)).copy()
    stream_many = _predict_core.mask_encode(many.reshape(-1).view(np.uint8), many.shape)
    # 39 more slices of 10,800 bits: under 0.002 bits each
    assert len(stream_many) - len(stream_one) < 39 * 10_800 * 0.002 / 8, (len(stream_one), len(stream_many))


def masked_field(shape, seed, density, repeat, fill, dtype, first=None):
    rng = np.random.default_rng(seed)
    grids = np.meshgrid(*[np.arange(n) for n in shape], indexing="ij")
    x = 10.0 + sum(np.sin(g / (2 + k)) for k, g in enumerate(grids)) + rng.normal(0, 0.01, shape)
    mask = land(shape, seed, density, repeat)
    mask.reshape(-1)[:first or max(1, -(-x.size // 64))] = True
    x[mask] = fill
    return x.astype(dtype), mask


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(shape=st.sampled_from([(7,), (9, 13), (4, 9, 11), (2, 3, 5, 7), (2, 2, 3, 4, 5)]),
       seed=st.integers(0, 2**32 - 1), density=st.sampled_from([0.1, 0.5, 1.0]), repeat=st.booleans(),
       fill=st.sampled_from([FILL, np.nan, 0.0]), dtype=st.sampled_from(["float32", "float64"]),
       E=st.sampled_from([1e-4, 0.05, 2.0]),
       predictor=st.sampled_from(["lorenzo", "interpolation", "interpolation_reversed",
                                  "interpolation_slices"]),
       stage=st.sampled_from([0, 1, 2, 3]))
def test_masked_chunks_keep_the_bound_and_decode_as_the_reference_decodes_them(
        shape, seed, density, repeat, fill, dtype, E, predictor, stage):
    """A masked chunk of every predictor and stage: stages 0 to 2 packed by hand from the
    library's prediction (tests/predict_pack.py: whichever form the encoder would keep),
    stage 3 the encoder's chunk (masked where it keeps the masked form)."""
    if predictor == "lorenzo" and stage == 2:
        predictor = "interpolation"
    x, mask = masked_field(shape, seed, density, repeat, fill, dtype)
    entropy = ["zstd", "pcodec", "pcodec_levels", "ans"][stage]
    config = PredictConfig.create(abs_error=E, predictor=predictor, entropy=entropy)
    if stage == 3:
        data = config.encode(x, fill)
        if data[:5] != b"ZPR2\x02":         # (format 1 smaller: its fill-value symbols)
            check_masked_chunk(config, data, x, fill, E)
            return
    else:
        data = hand_masked(x, mask, fill, E, PREDICTORS[predictor], stage)
    assert data[:5] == b"ZPR2\x02"
    check_masked_chunk(config, data, x, fill, E)


def hand_masked(x: np.ndarray, mask: np.ndarray, fill: float, E: float, code: int, stage: int,
                steps: tuple[float, float] | None = None) -> bytes:
    """The masked chunk of x (its fill values where mask is set) packed by hand (stages 0, 1,
    2) from the library's prediction: the mask stream, then the values' chunk without the
    masked elements' symbols."""
    marks = mask.reshape(-1).view(np.uint8)
    p = _predict_core.predict(x, x.shape, E, code, fill_value(fill, x.dtype), *(steps or (1.0, 1.0)))
    assert np.array_equal(p.symbols == 1, mask.reshape(-1))
    values = pack_values(p.symbols, p.raw, x.shape, code, stage, steps, marks)
    return masked(values, _predict_core.mask_encode(marks, x.shape), int(marks.sum()),
                  x.dtype.itemsize)


def check_masked_chunk(config: PredictConfig, data: bytes, x: np.ndarray, fill: float,
                       E: float) -> None:
    """The masked chunk `data` of `x` decodes within E, its fill values exactly where x has
    them, and as the reference decoder decodes it, bit for bit."""
    y = config.decode(data, x.dtype, x.shape, fill)
    check_within(x, y, E, np.asarray(fill, dtype=x.dtype))
    bits = np.dtype(f"u{x.dtype.itemsize}")
    fill_bits = np.asarray(fill, dtype=x.dtype).view(bits)
    assert np.array_equal(y.view(bits) == fill_bits, x.view(bits) == fill_bits)
    ref = predict_reference.decode(data, x.dtype, x.shape, E, np.asarray(fill, dtype=x.dtype))
    assert np.array_equal(ref.view(bits), y.view(bits))


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(shape=st.sampled_from([(9, 13), (4, 9, 11), (2, 3, 5, 7)]), seed=st.integers(0, 2**32 - 1),
       density=st.sampled_from([0.1, 0.5]), repeat=st.booleans(),
       fill=st.sampled_from([FILL, np.nan]), dtype=st.sampled_from(["float32", "float64"]),
       E=st.sampled_from([1e-4, 0.05, 2.0]),
       predictor=st.sampled_from(["interpolation", "interpolation_reversed", "interpolation_slices"]),
       stage=st.sampled_from([0, 1, 2]),
       alpha=st.floats(1.0, 3.0), beta=st.floats(1.0, 64.0))
def test_masked_chunks_with_format_3_values_keep_the_bound_and_decode_as_the_reference(
        shape, seed, density, repeat, fill, dtype, E, predictor, stage, alpha, beta):
    """A masked chunk whose values' chunk is of format 3 (a step for each level), built from
    its parts (stages 0 to 2; stage 3's: the encoder's, test_format_3_and_a_reference_mask_in
    _a_zarr_array): within E, the mask kept, and the reference decoder's bits."""
    x, mask = masked_field(shape, seed, density, repeat, fill, dtype, first=1)
    config = PredictConfig.create(abs_error=E, predictor=predictor)
    data = hand_masked(x, mask, fill, E, PREDICTORS[predictor], stage, (alpha, beta))
    assert predict_reference.values_chunk(data)[:4] == b"ZPR3"
    check_masked_chunk(config, data, x, fill, E)


def test_a_mask_repeated_along_time_in_a_4d_chunk_costs_next_to_nothing_after_the_first_step():
    """(time, depth, y, x): each depth level looks back one level, and the first level one time
    step (the spec's t): 12 time steps cost little more than one."""
    one = land((1, 6, 40, 50), 7, 0.3, True)
    one[0, 3:] |= land((1, 3, 40, 50), 8, 0.2, True)[0]     # (deeper levels: more land)
    size = {}
    for steps in (1, 12):
        m = np.broadcast_to(one, (steps, 6, 40, 50)).copy()
        size[steps] = len(_predict_core.mask_encode(m.reshape(-1).view(np.uint8), m.shape))
    # (11 more steps of 12,000 bits: under 0.005 bits each; along dimension 1 alone, 11x)
    assert size[12] - size[1] < 11 * 6 * 2000 * 0.005 / 8, size


def field_with_land(shape=(12, 60, 80)) -> np.ndarray:
    t, i, j = np.mgrid[0:shape[0], 0:shape[1], 0:shape[2]]
    x = 290 + 8 * np.sin(i / 11 + t / 5) * np.cos(j / 13) + 0.02 * np.sin(i * 3.1 + j * 1.7)
    x[land(shape, 2, 0.25, True)] = np.nan
    return x


def plain_twin(data: bytes, x: np.ndarray, fill: float, E: float) -> bytes:
    """The format-1 (format-3) stage-0 chunk of the prediction whose masked chunk `data` is
    (its predictor and steps), packed by hand: what the encoder wrote without the mask."""
    values = predict_reference.values_chunk(data)
    steps = struct.unpack_from("<dd", values, 16) if values[:4] == b"ZPR3" else None
    p = _predict_core.predict(x, x.shape, E, values[4], fill_value(fill, x.dtype),
                              *(steps or (1.0, 1.0)))
    return pack_values(p.symbols, p.raw, x.shape, values[4], 0, steps)


def test_a_masked_chunk_is_smaller_than_format_1_where_a_mask_repeats():
    """The masked chunk the encoder writes (stage 0) against the format-1 chunk of the same
    prediction and stage, packed by hand."""
    x = field_with_land()
    config = PredictConfig.create(abs_error=0.05, entropy="zstd")
    data = config.encode(x, np.nan)
    plain = plain_twin(data, x, np.nan, 0.05)
    assert data[:5] == b"ZPR2\x02" and plain[:3] == b"ZPR"
    assert len(data) < 0.9 * len(plain), (len(data), len(plain))
    check_masked_chunk(config, data, x, np.nan, 0.05)


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(shape=shapes, seed=st.integers(0, 2**32 - 1), density=st.sampled_from([0.01, 0.3, 0.97, 1.0]),
       repeat=st.booleans(), predictor=st.sampled_from(sorted(PREDICTORS)),
       dtype=st.sampled_from(["float32", "float64"]))
def test_a_masked_chunk_packs_the_unmasked_prediction_without_its_fill_symbols(
        shape, seed, density, repeat, predictor, dtype):
    """One prediction under both forms: its fill-value symbols (symbol 1) are exactly the
    masked elements; stage 3 packs a masked chunk's symbols without them (its order and
    contexts the prediction's, the fill-value symbols left out), and the reference decoder,
    which decodes no symbol for a masked element, reads the chunk the encoder writes."""
    rng = np.random.default_rng(seed)
    x = np.cumsum(rng.normal(size=shape or (1,)), axis=-1).astype(dtype)
    mask = land(x.shape, seed, density, repeat)
    x[mask] = FILL
    p = _predict_core.predict(x, x.shape, 0.01, PREDICTORS[predictor], FILL)
    assert np.array_equal(p.symbols == 1, mask.reshape(-1))
    config = PredictConfig.create(abs_error=0.01, predictor=predictor, entropy="ans")
    check_masked_chunk(config, config.encode(x, FILL), x, FILL, 0.01)
    if mask.any():      # (the same symbols packed by hand as a masked chunk, stage 0)
        hand = hand_masked(x, mask, FILL, 0.01, PREDICTORS[predictor], 0)
        check_masked_chunk(config, hand, x, FILL, 0.01)


def smooth_field(shape=(300, 400)) -> np.ndarray:
    i, j = np.mgrid[0:shape[0], 0:shape[1]]
    return 280 + 10 * np.sin(i / 50) * np.cos(j / 70) + 0.3 * np.sin(i / 8) * np.cos(j / 6)


def both_forms(data: bytes, x: np.ndarray, mask: np.ndarray, E: float) -> tuple[int, int]:
    """The lengths of the masked chunk and the format-1 (format-3) chunk of the prediction
    the encoder kept for `data` (its predictor and steps), both packed by hand with stage 2
    (pcodec by level, which codes the forms alike; stage 3 is the encoder's alone)."""
    values = predict_reference.values_chunk(data)
    steps = struct.unpack_from("<dd", values, 16) if values[:4] == b"ZPR3" else None
    p = _predict_core.predict(x, x.shape, E, values[4], np.nan, *(steps or (1.0, 1.0)))
    plain = pack_values(p.symbols, p.raw, x.shape, values[4], 2, steps)
    masked_ = hand_masked(x, mask, np.nan, E, values[4], 2, steps)
    check_masked_chunk(PredictConfig.create(abs_error=E), masked_, x, np.nan, E)
    return len(masked_), len(plain)


@pytest.mark.parametrize("share", [0.005, 0.02, 0.1])
def test_gaps_at_random_are_written_in_format_1_which_is_smaller_there(share):
    """Gaps at random (the mask stream near the entropy of independent bits): format 1's
    fill-value symbols cost less than the mask stream; what encode writes is format 1 (or
    its format-3 twin with level steps: not a masked chunk), and of the same prediction
    and stage the masked chunk is the larger."""
    x = smooth_field()
    m = np.random.default_rng(4).random(x.shape) < share
    x[m] = np.nan
    config = PredictConfig.create(abs_error=0.01)
    data = config.encode(x, np.nan)
    assert data[:4] in (b"ZPR1", b"ZPR3")
    masked_, plain = both_forms(data, x, m, 0.01)
    assert plain < masked_, (plain, masked_)
    y = config.decode(data, x.dtype, x.shape, np.nan)
    assert np.array_equal(np.isnan(y), m)
    check_within(x, y, 0.01, np.asarray(np.nan))


@pytest.mark.parametrize("gaps", ["scan lines", "land", "an edge"])
def test_gaps_in_shapes_are_written_as_masked_chunks_which_are_smaller_there(gaps):
    """Gaps in shapes (scan lines every 97 rows, land, a sensor's edge): the mask stream
    codes the shapes for next to nothing; encode writes the masked chunk, and of the same
    prediction and stage format 1 is the larger (a few masked elements as well as many)."""
    x = smooth_field()
    m = np.zeros(x.shape, dtype=bool)
    if gaps == "scan lines":
        m[::97] = True                              # (4 rows: 1% of the elements)
    elif gaps == "land":
        m = land(x.shape, 3, 0.2, True)
    else:
        m[:, :40] = True
    x[m] = np.nan
    config = PredictConfig.create(abs_error=0.01)
    data = config.encode(x, np.nan)
    assert data[:5] == b"ZPR2\x02"
    masked_, plain = both_forms(data, x, m, 0.01)
    assert masked_ < plain, (masked_, plain)
    assert np.array_equal(np.isnan(config.decode(data, x.dtype, x.shape, np.nan)), m)


def test_few_masked_elements_keep_the_smaller_of_both_formats():
    x = field_with_land((4, 60, 80))
    x[np.isnan(x)] = 1.0            # (no mask at all but one element)
    x[0, 0, 0] = np.nan
    config = PredictConfig.create(abs_error=0.05, entropy="zstd")
    data = config.encode(x, np.nan)
    # (one masked element: the mask stream's fixed cost loses; format 1 of the same
    # prediction, as packed by hand)
    assert data[:4] in (b"ZPR1", b"ZPR3")
    steps = struct.unpack_from("<dd", data, 16) if data[:4] == b"ZPR3" else None
    p = _predict_core.predict(x, x.shape, 0.05, data[4], np.nan, *(steps or (1.0, 1.0)))
    assert data == pack_values(p.symbols, p.raw, x.shape, data[4], 0, steps)
    assert PredictConfig.create(abs_error=0.05).encode(x, np.nan)[:4] in (b"ZPR1", b"ZPR3")


def test_integer_and_relative_chunks_take_the_mask_too():
    i, j = np.mgrid[0:40, 0:50]
    ints = (100 * np.sin(i / 7) * np.cos(j / 9)).astype("i2")
    ints[(i - 20) ** 2 + (j - 25) ** 2 < 150] = -32768
    config = PredictConfig.create(abs_error=1.5)
    data = config.encode(ints, -32768)
    assert data[:5] == b"ZPR2\x02"
    y = config.decode(data, ints.dtype, ints.shape, -32768)
    assert np.array_equal(y == -32768, ints == -32768)
    assert int(np.abs(y.astype(int) - ints.astype(int)).max()) <= 1
    assert np.array_equal(predict_reference.decode(data, ints.dtype, ints.shape, 1.5, -32768), y)
    # precipitation-like: zeros are the logarithms' fill value -inf, masked in their chunk
    rain = np.where((i * 7 + j * 3) % 11 < 6, 0.0, np.exp(np.sin(i / 5) + np.cos(j / 6)))
    rel = PredictConfig.create(rel_error=1e-3)
    data = rel.encode(rain)
    length = struct.unpack_from("<Q", data, 24)[0]
    assert data[:5] == b"ZPR2\x03" and data[32:37] == b"ZPR2\x02" and 32 + length <= len(data)
    y = rel.decode(data, rain.dtype, rain.shape)
    assert np.array_equal(y == 0, rain == 0)
    assert np.array_equal(predict_reference.decode(data, rain.dtype, rain.shape, None, None), y)


def masked_chunk() -> tuple[PredictConfig, np.ndarray, bytes]:
    x = field_with_land((3, 20, 30))
    config = PredictConfig.create(abs_error=0.05, entropy="ans")
    data = config.encode(x, np.nan)
    assert data[:5] == b"ZPR2\x02"
    return config, x, data


def test_corrupt_masked_chunks_are_errors_naming_the_part():
    config, x, data = masked_chunk()
    _, _, size, _, n_masked, length = MASKED_HEADER.unpack_from(data)
    n = x.size
    stream = data[24:24 + length]
    values = data[24 + length:]

    def head(**changes) -> bytes:
        fields = {"size": size, "reserved": 0, "n_masked": n_masked, "length": length, **changes}
        return MASKED_HEADER.pack(b"ZPR2", 2, fields["size"], fields["reserved"],
                                  fields["n_masked"], fields["length"])
    words = struct.unpack_from("<Q", stream, 4)[0]
    cases = {
        "short": (data[:20], "header", "a masked chunk of 20 bytes is shorter than its 24-byte header"),
        "element size": (head(size=4) + data[24:], "header", "the chunk holds 4-byte elements, the array float64"),
        "reference field": (head(reserved=3) + data[24:], "header",
                            "the masked chunk's reference field is 3, not 0 or 1"),
        "reference without one": (head(reserved=1) + data[24:], "header",
                                  "the chunk's mask looks back at a reference mask of 20 x 30, "
                                  "and the codec has none"),
        "none masked": (head(n_masked=0) + data[24:], "header", f"the chunk claims 0 masked elements of {n}"),
        "too many masked": (head(n_masked=n + 1) + data[24:], "header",
                            f"the chunk claims {n + 1} masked elements of {n}"),
        "count": (head(n_masked=n_masked - 1) + data[24:], "mask",
                  f"the mask has {n_masked} masked elements, the header says {n_masked - 1}"),
        "length past the end": (head(length=len(data)) + data[24:], "mask",
                                f"the mask stream's length {len(data)} runs past the chunk's end"),
        "words past the length": (head(length=length - 2) + data[24:], "mask",
                                  f"{words} mask words run past the chunk's end"),
        "state below 2^16": (data[:24] + struct.pack("<I", 5) + data[28:], "mask",
                             "the mask stream's state 5 lies below 2^16"),
        "no state": (head(length=3) + stream[:3] + values, "mask",
                     "the chunk ends inside the mask stream's state"),
        "values chunk's magic": (data[:24 + length] + b"XPR1" + values[4:], "header",
                                 "the masked chunk's values chunk starts with 'XPR1', not 'ZPR1' or 'ZPR3'"),
    }
    for label, (bad, part, message) in cases.items():
        with pytest.raises(CorruptChunkError) as info:
            config.decode(bad, x.dtype, x.shape, np.nan)
        assert info.value.part == part, label
        assert str(info.value) == f"zdt.predict: {message}", label
    # a flipped word: the stream does not end where it began, or decodes another mask
    flipped = bytearray(data)
    flipped[24 + 12] ^= 0x40
    with pytest.raises(CorruptChunkError) as info:
        config.decode(bytes(flipped), x.dtype, x.shape, np.nan)
    assert info.value.part in ("mask", "ANS stream", "raw values")
    # no fill value to decode the masked elements to
    with pytest.raises(CorruptChunkError, match="a masked chunk, and there is no fill value"):
        config.decode(data, x.dtype, x.shape, None)
    # an unmasked element with the fill-value symbol (symbol 1 is the masked elements' alone):
    # the symbols of a chunk whose NaN all have symbol 1, packed under a mask one element short
    flat = x.reshape(-1)
    fewer = np.isnan(flat).view(np.uint8).copy()
    fewer[int(np.flatnonzero(fewer)[0])] = 0
    p = _predict_core.predict(x, x.shape, 0.05, 2, np.nan)
    values = pack_values(p.symbols, p.raw, x.shape, 2, 0, mask=fewer)
    stream = _predict_core.mask_encode(fewer, x.shape)
    bad = masked(values, stream, int(fewer.sum()), 8)
    with pytest.raises(CorruptChunkError) as info:
        config.decode(bad, x.dtype, x.shape, np.nan)
    assert info.value.part == "symbols"
    assert str(info.value) == ("zdt.predict: 1 unmasked elements have the fill-value symbol, "
                               "which is the masked elements' alone")
    with pytest.raises(AssertionError, match="a fill-value symbol outside the mask"):
        predict_reference.decode(bad, x.dtype, x.shape, 0.05, np.nan)
    # a relative chunk (kind 1, 3 or 4) in an integer array: refused; kind 5: unknown
    for kind in (b"\x01", b"\x03", b"\x04"):
        with pytest.raises(CorruptChunkError, match="integer arrays take format 1 and masked chunks only"):
            PredictConfig.create(abs_error=1).decode(b"ZPR2" + kind + data[5:], np.dtype("i2"),
                                                     x.shape, 0)
    with pytest.raises(CorruptChunkError, match="unknown format-2 chunk kind 5") as info:
        config.decode(b"ZPR2\x05" + data[5:], x.dtype, x.shape, np.nan)
    assert info.value.part == "header"


def test_a_truncated_mask_stream_names_the_mask():
    config, x, data = masked_chunk()
    length = MASKED_HEADER.unpack_from(data)[5]
    words = struct.unpack_from("<Q", data, 28)[0]
    # (fewer words than the bits need: the word count and the length cut alike)
    cut = 2 * (words // 2)
    bad = (MASKED_HEADER.pack(b"ZPR2", 2, 8, 0, MASKED_HEADER.unpack_from(data)[4], length - cut)
           + data[24:28] + struct.pack("<Q", words - words // 2) + data[36:24 + length - cut]
           + data[24 + length:])
    with pytest.raises(CorruptChunkError) as info:
        config.decode(bad, x.dtype, x.shape, np.nan)
    assert info.value.part == "mask"
    assert "the mask stream ends before the chunk's" in str(info.value) or \
        "does not end where it began" in str(info.value)


def test_a_relative_chunk_inside_a_relative_chunk_is_corrupt():
    """The logarithms' chunk is a format-1 or a masked chunk: a relative one there would nest
    without end (a deep nest was a RecursionError)."""
    rel = PredictConfig.create(rel_error=1e-3)
    x = np.linspace(1, 2, 12).reshape(3, 4)
    data = rel.encode(x)
    head = data[:24]
    nested = head + struct.pack("<Q", len(data)) + data + struct.pack("<QQ", 0, 0)
    for kind in (1, 3):         # (the chunks zdt wrote first, and those it writes)
        bad = nested[:32 + 4] + bytes([kind]) + nested[32 + 5:]
        with pytest.raises(CorruptChunkError) as info:
            rel.decode(bad, x.dtype, x.shape)
        assert info.value.part == "logarithms"
        assert f"a format-2 chunk of kind {kind}, not a format-1 or a masked chunk" in str(info.value)


@settings(max_examples=examples(200), deadline=None)
@given(n=st.integers(0, 1100), at=st.lists(st.integers(0, 1099), max_size=6),
       dtype=st.sampled_from(["float32", "float64"]),
       fill=st.sampled_from([None, math.nan, -math.nan, -9999.0, 0.0, -0.0]),
       seed=st.integers(0, 2**16))
def test_the_mask_of_a_chunk_is_each_element_equal_to_the_fill_value_bit_for_bit(n, at, dtype,
                                                                                  fill, seed):
    """The elements the library takes as the fill value (the prediction's fill-value
    symbols, a masked chunk's mask) against the rule one element at a time: those whose bits
    are the fill value's (NaN of another sign or payload, or -0.0 for 0.0, is not it); no
    masked chunk where none is; fill values placed anywhere in chunks of up to 1,100
    elements; each comes back as the fill value, bit for bit."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=n).astype(dtype)
    others = np.array([np.nan, -np.nan, 0.0, -0.0, -9999.0], dtype=dtype)
    for k in at:
        if k < n:
            x[k] = others[k % len(others)]
    bits = np.dtype(f"u{x.dtype.itemsize}")
    f = None if fill is None else np.array([fill], dtype=dtype)
    want = np.zeros(n, bool) if f is None else x.view(bits) == f.view(bits)[0]
    p = _predict_core.predict(x, x.shape, 0.01, 1, None if f is None else fill_value(f[0], x.dtype))
    assert np.array_equal(p.symbols == 1, want)
    config = PredictConfig.create(abs_error=0.01)
    data = config.encode(x, None if f is None else f[0])
    assert (data[:5] == b"ZPR2\x02") <= bool(want.any())
    if data[:5] == b"ZPR2\x02":
        n_masked, length = struct.unpack_from("<QQ", data, 8)
        got = _predict_core.mask_decode(data[24:24 + length], x.shape)
        assert n_masked == got.n_masked == int(want.sum()) and np.array_equal(got.bits, want)
    y = config.decode(data, x.dtype, x.shape, None if f is None else f[0])
    assert (y.view(bits)[want] == (f.view(bits)[0] if f is not None else 0)).all()
