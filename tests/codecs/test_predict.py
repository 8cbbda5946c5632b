"""zdt.predict (docs/codecs/predict.md): every decoded element within E of the original in exact
arithmetic (NaN and infinities and the fill value bit for bit), zdt's chunks decoded
bit-identically by the independent reference (tests/predict_reference.py), corrupt chunks a
ValueError, and the codec in zarr arrays."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import zarr
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis_budget import examples
from zarr.storage import MemoryStore

from numcodecs.zstd import Zstd

import predict_reference
from exact import UINT, check_within
from predict_pack import level_groups, pack_values
from zdt.codecs import predict as predict_codec
from zdt.codecs.predict import HEADER, PREDICTORS, PredictConfig, fill_value
from zdt.codecs.zarr.predict import PredictCodec
from zdt.errors import ConfigError, CorruptChunkError
from zdt.kernels import _predict_core


def field(seed: int, shape: tuple[int, ...], smooth: float, noise: float, specials: float,
          dtype: str, fill: float | None) -> np.ndarray:
    rng = np.random.default_rng(seed)
    grids = np.meshgrid(*[np.arange(n) for n in shape], indexing="ij") if shape else []
    x = np.full(shape, 10.0)
    for k, g in enumerate(grids):
        x = x + smooth * np.sin(g / (3 + 2 * k))
    x = x + rng.normal(0, noise, shape)
    if specials and x.size:
        pick = rng.random(shape) < specials
        choices = np.array([np.nan, np.inf, -np.inf, 1e30, -0.0, fill if fill is not None else 7.0])
        x = np.where(pick, rng.choice(choices, size=shape), x)
    return x.astype(dtype)


shapes = st.lists(st.integers(1, 9), min_size=0, max_size=5).map(tuple)


@settings(max_examples=examples(120), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), shape=shapes, smooth=st.sampled_from([0.0, 1.0, 100.0, 1e6]),
       noise=st.sampled_from([0.0, 1e-3, 0.3, 50.0]), specials=st.sampled_from([0.0, 0.05, 0.5]),
       dtype=st.sampled_from(["float32", "float64"]), fill=st.sampled_from([None, 0.0, np.nan, -9999.0]),
       E=st.sampled_from([1e-6, 0.01, 0.5, 3.0, 1e4]),
       predictor=st.sampled_from(["lorenzo", "interpolation", "interpolation_reversed",
                                  "interpolation_slices", "auto"]),
       entropy=st.sampled_from(["zstd", "pcodec", "pcodec_levels", "ans", "auto"]))
def test_every_element_within_the_bound_and_the_reference_decodes_the_same_bits(
        seed, shape, smooth, noise, specials, dtype, fill, E, predictor, entropy):
    if predictor == "lorenzo" and entropy == "pcodec_levels":
        predictor = "interpolation"         # (Lorenzo has no levels: a ConfigError, tested below)
    x = field(seed, shape, smooth, noise, specials, dtype, fill)
    config = PredictConfig.create(abs_error=E, predictor=predictor, entropy=entropy)
    data = config.encode(x, fill)
    y = config.decode(data, x.dtype, x.shape, fill)
    assert y.shape == x.shape and y.dtype == x.dtype
    check_within(x, y, E, fill)
    ref = predict_reference.decode(data, x.dtype, x.shape, E,
                                   np.nan if fill is None else np.asarray(fill, dtype=x.dtype))
    bits = UINT[x.dtype.itemsize]
    assert np.array_equal(ref.view(bits), y.view(bits))


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), shape=shapes, specials=st.sampled_from([0.0, 0.05, 0.5]),
       dtype=st.sampled_from(["float32", "float64"]), fill=st.sampled_from([None, 0.0, np.nan, -9999.0]),
       E=st.sampled_from([1e-6, 0.01, 0.5, 1e4]),
       predictor=st.sampled_from(["lorenzo", "interpolation", "interpolation_slices", "auto"]))
def test_the_encoder_s_values_are_what_the_decoder_gives_each_finite_element(
        seed, shape, specials, dtype, fill, E, predictor):
    """Codec.encode_floats' second result (what the relative chunks' encoder checks its
    elements against instead of decoding the logarithms' chunk) is, bit for bit, the decoded
    value of every finite element that is not the fill value, masked chunks (half the
    elements the fill value) included; its chunk is encode's."""
    x = field(seed, shape, 100.0, 0.3, specials, dtype, fill)
    config = PredictConfig.create(abs_error=E, predictor=predictor)
    data, values = config.core.encode_floats(x, fill_value(fill, x.dtype))
    assert data == config.encode(x, fill)
    flat = x.reshape(-1)
    y = config.decode(data, x.dtype, x.shape, fill).reshape(-1).astype(np.float64)
    bits = UINT[x.dtype.itemsize]
    at = np.isfinite(flat)
    if fill is not None:
        at &= flat.view(bits) != np.asarray(fill, dtype=x.dtype).view(bits)
    assert values.dtype == np.float64 and values.shape == flat.shape
    assert np.array_equal(values[at].view(np.uint64), y[at].view(np.uint64))


@settings(max_examples=examples(100), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), shape=shapes, smooth=st.sampled_from([0.0, 1.0, 100.0, 1e6]),
       noise=st.sampled_from([0.0, 1e-3, 0.3, 50.0]), specials=st.sampled_from([0.0, 0.05, 0.5]),
       dtype=st.sampled_from(["float32", "float64"]), fill=st.sampled_from([None, 0.0, np.nan, -9999.0]),
       E=st.sampled_from([1e-6, 0.01, 0.5, 3.0, 1e4]),
       predictor=st.sampled_from(["interpolation", "interpolation_reversed", "interpolation_slices"]),
       stage=st.sampled_from([0, 1, 2]),
       alpha=st.one_of(st.just(1.0), st.floats(1.0, 4.0)), beta=st.floats(1.0, 1024.0))
def test_format_3_level_steps_keep_the_bound_and_the_reference_decodes_the_same_bits(
        seed, shape, smooth, noise, specials, dtype, fill, E, predictor, stage, alpha, beta):
    """Format 3 (a step 2E / f_s for each level s) with any alpha and beta the spec allows:
    the library's prediction with those steps (_predict_core.predict), packed by hand with
    stages 0, 1 and 2 (tests/predict_pack.py; stage 3's format-3 chunks are the encoder's,
    below), decodes with every element within E in exact arithmetic, and the independent
    reference decoder (the spec's f_s) gives the same bits."""
    x = field(seed, shape, smooth, noise, specials, dtype, fill)
    config = PredictConfig.create(abs_error=E, predictor=predictor)
    code = PREDICTORS[predictor]
    p = _predict_core.predict(x, x.shape, E, code, fill_value(fill, x.dtype), alpha, beta)
    data = pack_values(p.symbols, p.raw, x.shape, code, stage, steps=(alpha, beta))
    assert data[:4] == b"ZPR3"
    y = config.decode(data, x.dtype, x.shape, fill)
    check_within(x, y, E, fill)
    ref = predict_reference.decode(data, x.dtype, x.shape, E,
                                   np.nan if fill is None else np.asarray(fill, dtype=x.dtype))
    bits = UINT[x.dtype.itemsize]
    assert np.array_equal(ref.view(bits), y.view(bits))
    if alpha == 1.0:        # (every level's step is 2E: format 1's twin decodes the same)
        one = _predict_core.predict(x, x.shape, E, code, fill_value(fill, x.dtype))
        assert np.array_equal(one.symbols, p.symbols)
        twin = pack_values(one.symbols, one.raw, x.shape, code, stage)
        assert np.array_equal(config.decode(twin, x.dtype, x.shape, fill).view(bits), y.view(bits))


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), shape=shapes, smooth=st.sampled_from([0.0, 1.0, 100.0, 1e6]),
       noise=st.sampled_from([0.0, 1e-3, 0.3, 50.0]), specials=st.sampled_from([0.0, 0.05, 0.5]),
       dtype=st.sampled_from(["float32", "float64"]), fill=st.sampled_from([None, 0.0, np.nan, -9999.0]),
       E=st.sampled_from([1e-6, 0.01, 0.5, 3.0, 1e4]))
def test_lorenzo_s_build_for_mostly_code_0_predicts_the_same(seed, shape, smooth, noise, specials,
                                                             dtype, fill, E):
    """The encoder predicts Lorenzo with code 0 on a branch of its own where its samples show
    mostly code 0 (faster there): the same symbols, raw values and predictor values, bit for
    bit, whatever the share of code 0, the fill value and the special values."""
    x = field(seed, shape, smooth, noise, specials, dtype, fill)
    f = fill_value(fill, x.dtype)
    plain = _predict_core.predict(x, x.shape, E, 1, f)
    branch = _predict_core.predict(x, x.shape, E, 1, f, zeros_likely=True)
    assert np.array_equal(plain.symbols, branch.symbols)
    assert np.array_equal(plain.raw.view(UINT[x.dtype.itemsize]), branch.raw.view(UINT[x.dtype.itemsize]))
    assert np.array_equal(plain.values.view(np.uint64), branch.values.view(np.uint64))


def test_a_hand_packed_chunk_is_the_encoder_s_own_where_it_writes_that_form():
    """tests/predict_pack.py against the encoder: with the predictor and stage the encoder
    wrote, the chunk packed by hand from _predict_core.predict is byte for byte the
    encoder's (format 1 and format 3, stages 0, 1 and 2), so the forms packed by hand in
    these tests are the encoder's forms, not a layout of their own."""
    rng = np.random.default_rng(7)
    rough = np.cumsum(rng.normal(0, 1, (24, 31)), axis=1)
    rough[3, 4] = np.inf
    formats = set()
    for x, E in ((rough, 0.01), (smooth_field((12, 60, 70)), 0.05)):
        for entropy, stage in (("zstd", 0), ("pcodec", 1), ("pcodec_levels", 2)):
            data = PredictConfig.create(abs_error=E, predictor="interpolation",
                                        entropy=entropy).encode(x)
            magic, code, _, got_stage, _ = predict_codec.HEADER.unpack_from(data)
            steps = predict_codec.LEVEL_STEPS.unpack_from(data, 16) if magic == b"ZPR3" else None
            p = _predict_core.predict(x, x.shape, E, code, None, *(steps or (1.0, 1.0)))
            assert got_stage == stage
            assert pack_values(p.symbols, p.raw, x.shape, code, stage, steps) == data
            formats.add(magic)
    assert formats == {b"ZPR1", b"ZPR3"}


def smooth_field(shape: tuple[int, ...]) -> np.ndarray:
    grids = np.meshgrid(*[np.arange(n) for n in shape], indexing="ij")
    return 280 + sum(np.sin(g / (20 + 7 * k)) for k, g in enumerate(grids))


def test_format_3_is_written_where_it_pays_and_only_there():
    """A smooth field at a coarse bound (its codes nearly all zero): the encoder keeps format
    3, smaller than the format-1 chunk of the same predictor and stage (packed by hand); at a
    fine bound (codes spread) it writes format 1."""
    x = smooth_field((12, 60, 70))
    config = PredictConfig.create(abs_error=0.05)
    data = config.encode(x)
    assert data[:4] == b"ZPR3"
    check_within(x, config.decode(data, x.dtype, x.shape), 0.05, None)
    fine = PredictConfig.create(abs_error=1e-5).encode(x)
    assert fine[:4] == b"ZPR1"
    check_within(x, PredictConfig.create(abs_error=1e-5).decode(fine, x.dtype, x.shape), 1e-5, None)
    # (stage 0, which can be packed by hand: format 3 against format 1 of the same predictor)
    zstd = PredictConfig.create(abs_error=0.05, entropy="zstd").encode(x)
    assert zstd[:4] == b"ZPR3"
    one = _predict_core.predict(x, x.shape, 0.05, zstd[4], None)
    plain = pack_values(one.symbols, one.raw, x.shape, zstd[4], 0)
    assert len(zstd) < 0.9 * len(plain), (len(zstd), len(plain))


def test_corrupt_format_3_headers_are_corrupt_chunk_errors():
    x = smooth_field((60, 80))
    config = PredictConfig.create(abs_error=0.05, predictor="interpolation", entropy="ans")
    data = config.encode(x)
    assert data[:4] == b"ZPR3" and data[6] == 3     # (stage 3, the steps the encoder chose)
    check_within(x, config.decode(data, x.dtype, x.shape), 0.05, None)
    steps = predict_codec.LEVEL_STEPS
    alpha, beta = steps.unpack_from(data, 16)
    cases = {
        "short": data[:24],
        "alpha below 1": data[:16] + steps.pack(0.5, beta) + data[32:],
        "alpha NaN": data[:16] + steps.pack(math.nan, beta) + data[32:],
        "beta above 1024": data[:16] + steps.pack(alpha, 2048.0) + data[32:],
        "Lorenzo": data[:4] + b"\x01" + data[5:],
    }
    for name, bad in cases.items():
        with pytest.raises(CorruptChunkError, match="zdt.predict") as info:
            config.decode(bad, x.dtype, x.shape)
        assert info.value.part == "header", name
    # the same symbols read with other steps: a valid chunk of other values (no error to
    # raise), each still within its steps of the prediction (stage 0: its symbols do not
    # depend on the steps' contexts)
    p = _predict_core.predict(x, x.shape, 0.05, 2, None, 1.25, 2.0)
    packed = pack_values(p.symbols, p.raw, x.shape, 2, 0, steps=(1.25, 2.0))
    check_within(x, config.decode(packed, x.dtype, x.shape), 0.05, None)
    other = packed[:16] + steps.pack(1.0, 1.0) + packed[32:]
    assert config.decode(other, x.dtype, x.shape).shape == x.shape
    assert config.decode(data[:16] + steps.pack(1.0, 1.0) + data[32:], x.dtype,
                         x.shape).shape == x.shape


def test_smooth_data_is_mostly_zero_codes_and_small():
    """A smooth 2-d field at a coarse bound: interpolation leaves few non-zero codes, and the
    chunk is far smaller than quantizing alone would need (~1 byte per value)."""
    i, j = np.mgrid[0:256, 0:256]
    x = (1000 * np.sin(i / 40) * np.cos(j / 30)).astype("f8")
    config = PredictConfig.create(abs_error=0.5, predictor="interpolation")
    data = config.encode(x)
    check_within(x, config.decode(data, x.dtype, x.shape), 0.5, None)
    assert len(data) < x.size / 4


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_corrupt_and_truncated_chunks_are_corrupt_chunk_errors_naming_the_part(dtype):
    """Each a zdt.errors.CorruptChunkError (a ValueError) whose `part` says where the chunk is
    wrong."""
    rng = np.random.default_rng(3)
    x = np.cumsum(rng.normal(0, 1, (20, 30)), axis=1).astype(dtype)
    x[2, 3] = np.nan
    config = PredictConfig.create(abs_error=0.01, entropy="zstd")
    data = config.encode(x)
    cases = {
        "short": (data[:10], "header"),
        "truncated frame": (data[:len(data) // 2], "zstd frame"),
        "magic": (b"XPR1" + data[4:], "header"),
        "predictor": (data[:4] + b"\x07" + data[5:], "header"),
        "element size": (data[:5] + bytes([12 - x.dtype.itemsize]) + data[6:], "header"),
        "entropy stage": (data[:6] + b"\x02\x00" + data[8:], "symbols"),
        "pcodec stage on zstd data": (data[:6] + b"\x01\x00" + data[8:], "symbols"),
        "n_raw": (data[:8] + (10**9).to_bytes(8, "little") + data[16:], "header"),
        "n_raw off by one": (data[:8] + (int.from_bytes(data[8:16], "little") + 1).to_bytes(8, "little")
                             + data[16:], "zstd frame"),
        "frame magic": (data[:16] + b"\0\0\0\0" + data[20:], "zstd frame"),
        # frame header descriptor 0x00: no content size declared (the spec requires one)
        "frame without its size": (data[:20] + b"\x00\x58" + data[22:], "zstd frame"),
    }
    for name, (bad, part) in cases.items():
        with pytest.raises(CorruptChunkError, match="zdt.predict") as info:
            config.decode(bad, x.dtype, x.shape)
        assert (info.value.codec, info.value.part) == ("zdt.predict", part), name
        assert isinstance(info.value, ValueError)
    with pytest.raises(CorruptChunkError, match="zdt.predict"):
        config.decode(data, x.dtype, (20, 31))      # another shape than the chunk's


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_corrupt_pcodec_chunks_are_value_errors(dtype):
    """Entropy stage 1 (the symbols in pcodec's format): a length past the end, pcodec data
    that does not decode, too few or too many symbols for the shape, a bad raw-value frame."""
    rng = np.random.default_rng(3)
    x = np.cumsum(rng.normal(0, 1, (20, 30)), axis=1).astype(dtype)
    x[2, 3] = np.nan
    config = PredictConfig.create(abs_error=0.01, entropy="pcodec")
    data = config.encode(x)
    assert data[6:8] == b"\x01\x00"
    length = int.from_bytes(data[16:24], "little")
    codes, frame = data[24:24 + length], data[24 + length:]
    from pcodec import ChunkConfig, standalone

    def with_symbols(sym: np.ndarray) -> bytes:
        pco = bytes(standalone.simple_compress(sym.astype(np.uint16), ChunkConfig()))
        return data[:16] + len(pco).to_bytes(8, "little") + pco + frame

    sym = standalone.simple_decompress(codes)
    cases = {
        "length past the end": data[:16] + (len(data)).to_bytes(8, "little") + data[24:],
        "no length": data[:20],
        "pcodec magic": data[:24] + b"xxxx" + data[28:],
        "truncated pcodec": data[:16] + (length // 2).to_bytes(8, "little") + codes[:length // 2] + frame,
        "one symbol short": with_symbols(sym[:-1]),
        "one symbol more": with_symbols(np.append(sym, 2)),
        "raw frame cut": data[:-3],
        "raw frame missing": data[:24 + length],
    }
    for name, bad in cases.items():
        with pytest.raises(ValueError, match="zdt.predict"):
            config.decode(bad, x.dtype, x.shape)
    n = x.size
    exact = {  # the messages themselves, for two of them
        "one symbol short": f"zdt.predict: the pcodec data holds {n - 1} symbols, the chunk's "
                            f"shape calls for {n}",
        "length past the end": f"zdt.predict: the pcodec data's length {len(data)} runs past "
                               f"the chunk's end",
    }
    for name, message in exact.items():
        with pytest.raises(ValueError) as info:
            config.decode(cases[name], x.dtype, x.shape)
        assert str(info.value) == message
    with pytest.raises(ValueError) as info:
        config.decode(data[:6] + b"\x04\x00" + data[8:], x.dtype, x.shape)
    assert str(info.value) == "zdt.predict: unknown entropy stage 4 in the chunk header"
    check_within(x, config.decode(data, x.dtype, x.shape), 0.01, None)


def test_corrupt_level_stage_chunks_are_value_errors():
    """Stage 2 (pcodec by level): a predictor without levels, lengths past the end or cut, a
    group one symbol short, bytes for a group this shape has not."""
    from pcodec import ChunkConfig, standalone

    x = np.cumsum(np.linspace(-1, 1, 600)).reshape(20, 30)
    x[2, 3] = np.nan
    config = PredictConfig.create(abs_error=0.01, predictor="interpolation", entropy="pcodec_levels")
    data = config.encode(x)
    assert data[4] == 2 and data[6:8] == b"\x02\x00"
    check_within(x, config.decode(data, x.dtype, x.shape), 0.01, None)
    groups = level_groups(x.shape, 2)
    at, parts = 16, []
    for where in groups:
        length = int.from_bytes(data[at:at + 8], "little")
        parts.append(data[at + 8:at + 8 + length])
        at += 8 + length
    frame = data[at:]

    def rebuilt(codes: list[bytes]) -> bytes:
        return data[:16] + b"".join(len(c).to_bytes(8, "little") + c for c in codes) + frame

    assert rebuilt(parts) == data
    g0 = standalone.simple_decompress(parts[0])
    short = bytes(standalone.simple_compress(g0[:-1], ChunkConfig()))
    cases = {
        "zdt.predict: entropy stage 2 (by level) with predictor 1, which has no levels":
            data[:4] + b"\x01" + data[5:],
        "zdt.predict: the chunk ends inside level group 0's pcodec length": data[:20],
        f"zdt.predict: the pcodec data's length {len(data)} runs past the chunk's end":
            data[:16] + len(data).to_bytes(8, "little") + data[24:],
        f"zdt.predict: the pcodec data holds {len(groups[0]) - 1} symbols, the chunk's shape "
        f"calls for {len(groups[0])}": rebuilt([short, *parts[1:]]),
    }
    for message, bad in cases.items():
        with pytest.raises(ValueError) as info:
            config.decode(bad, x.dtype, x.shape)
        assert str(info.value) == message
    # a shape with an empty group: (3,) has indices 0 (group 3), 1 (0) and 2 (1)
    y = np.array([1.0, 2.0, 3.5])
    small = config.encode(y)
    assert [len(w) for w in level_groups(y.shape, 2)] == [1, 1, 0, 1]
    empty_at = 16
    for _ in range(2):
        empty_at += 8 + int.from_bytes(small[empty_at:empty_at + 8], "little")
    bad = small[:empty_at] + (5).to_bytes(8, "little") + small[empty_at + 8:]
    with pytest.raises(ValueError) as info:
        config.decode(bad, y.dtype, y.shape)
    assert str(info.value) == ("zdt.predict: level group 2 has no elements in this shape and "
                               "5 bytes of pcodec data")
    with pytest.raises(ConfigError, match="Lorenzo has no levels"):
        PredictConfig.create(abs_error=1, predictor="lorenzo", entropy="pcodec_levels")


def test_levels_beat_one_pcodec_stream_on_a_smooth_field():
    """The finest level of a smooth field is almost all zero codes and the coarse ones spread
    wide: coded apart they take far fewer bytes than coded together."""
    i, j = np.mgrid[0:256, 0:256]
    x = 40 * np.sin(i / 37) * np.cos(j / 23) + 0.5 * np.sin(i / 3 + j / 5)
    sizes = {e: len(PredictConfig.create(abs_error=0.01, predictor="interpolation", entropy=e).encode(x))
             for e in ("pcodec", "pcodec_levels")}
    assert sizes["pcodec_levels"] < 0.9 * sizes["pcodec"], sizes


def test_stage_3_codes_smaller_than_the_other_stages():
    """zdt's own rANS with contexts (level group, the neighbours' codes) against the other
    stages: on a smooth field and on one with a masked region (a masked chunk: the mask coded
    apart whatever the stage, the masked elements without symbols; stage 3 still smaller);
    `auto` writes stage 3."""
    i, j = np.mgrid[0:256, 0:256]
    smooth = 40 * np.sin(i / 37) * np.cos(j / 23) + 0.5 * np.sin(i / 3 + j / 5)
    masked = smooth.copy()
    masked[(i - 100) ** 2 + (j - 140) ** 2 < 70 ** 2] = np.nan
    for x, E, most in ((smooth, 0.01, 1.0), (smooth, 0.1, 0.98), (masked, 0.01, 1.0), (masked, 0.1, 1.0)):
        sizes = {e: len(PredictConfig.create(abs_error=E, entropy=e).encode(x, np.nan))
                 for e in ("zstd", "pcodec", "pcodec_levels", "ans")}
        others = min(sizes["zstd"], sizes["pcodec"], sizes["pcodec_levels"])
        assert sizes["ans"] < most * others, (E, sizes)
        data = PredictConfig.create(abs_error=E).encode(x, np.nan)
        assert predict_reference.values_chunk(data)[6] == 3 and len(data) == sizes["ans"]


def test_auto_also_tries_zstd_where_codes_are_wide():
    """Codes that repeat in long patterns (a record quantized at its source in steps of 28,
    eight times over; a bound of 0.5: every code a multiple of 28) are what zstd finds and
    stage 3, coding each symbol from its context alone, does not; `auto` tries zstd too where
    more than a quarter of the codes are wide, and keeps it."""
    rng = np.random.default_rng(5)
    x = np.tile(28.0 * np.cumsum(rng.integers(-20, 21, 2048)), 8)
    sizes = {e: len(PredictConfig.create(abs_error=0.5, predictor="lorenzo", entropy=e).encode(x))
             for e in ("zstd", "ans", "auto")}
    assert sizes["zstd"] < 0.5 * sizes["ans"] and sizes["auto"] == sizes["zstd"], sizes


def test_corrupt_ans_chunks_are_value_errors():
    """Stage 3: a model, table, state or word count that does not hold, words cut short or
    left over, a context whose table is empty; each a ValueError naming it."""
    x = np.cumsum(np.linspace(-1, 1, 600)).reshape(20, 30)
    x[2, 3] = np.nan
    config = PredictConfig.create(abs_error=0.001, predictor="interpolation", entropy="ans")
    data = config.encode(x)
    assert data[6:8] == b"\x03\x00"
    check_within(x, config.decode(data, x.dtype, x.shape), 0.001, None)
    model = data[16]
    tables, at = [], 17
    for _ in range([1, 4, 16, 60][model]):          # (the spec's table count of each model)
        k = data[at]
        end = at + 1 + k
        for _ in range(max(0, k - 1)):
            while data[end] & 0x80:
                end += 1
            end += 1
        tables.append(data[at:end])
        at = end
    states = data[at:at + 16]
    n_words = int.from_bytes(data[at + 8:at + 16], "little")
    words = data[at + 16:at + 16 + 2 * n_words]
    frame = data[at + 16 + 2 * n_words:]
    assert data == data[:17] + b"".join(tables) + states + words + frame
    used = next(t for t, table in enumerate(tables) if table[0] >= 2)
    cases = {
        "zdt.predict: unknown ANS context model 9": data[:16] + b"\x09" + data[17:],
        "zdt.predict: the chunk ends inside ANS table 0": data[:17],
        f"zdt.predict: {len(data)} ANS words run past the chunk's end":
            data[:at + 8] + len(data).to_bytes(8, "little") + data[at + 16:],
        f"zdt.predict: an ANS state of (0, {int.from_bytes(states[4:8], 'little')}) lies below 2^16":
            data[:at] + b"\0\0\0\0" + data[at + 4:],
        "zdt.predict: the ANS stream ends before the chunk's 600 symbols":
            data[:at + 8] + (0).to_bytes(8, "little") + frame,
        f"zdt.predict: ANS table {used} lists 200 tokens, more than 64":
            data[:17] + b"".join(tables[:used]) + b"\xc8" + data[17 + sum(map(len, tables[:used])) + 1:],
    }
    for message, bad in cases.items():
        with pytest.raises(ValueError) as info:
            config.decode(bad, x.dtype, x.shape)
        assert str(info.value) == message
    # an empty table where the symbols need one; a word dropped from the end
    empty = [b"\x00" if t == used else table for t, table in enumerate(tables)]
    with pytest.raises(ValueError, match="zdt.predict: the ANS stream uses a context whose table is empty"):
        config.decode(data[:17] + b"".join(empty) + states + words + frame, x.dtype, x.shape)
    short = states[:8] + (n_words - 1).to_bytes(8, "little") + words[:-2]
    with pytest.raises(ValueError, match="zdt.predict: the ANS stream"):
        config.decode(data[:17] + b"".join(tables) + short + frame, x.dtype, x.shape)


def test_the_pcodec_stage_codes_smooth_fields_smaller():
    """Where the codes spread wide and peaked (a smooth field with a little noise), pcodec's
    bins code them in fewer bytes than zstd over byte planes; `auto` keeps the smallest (with
    the level stage, which the interpolation predictors have, fewer still)."""
    i, j = np.mgrid[0:200, 0:300]
    x = (100 * np.sin(i / 23) * np.cos(j / 31) + 3 * np.sin(i * j / 500)
         + np.random.default_rng(1).normal(0, 0.01, i.shape))
    sizes = {e: len(PredictConfig.create(abs_error=0.05, entropy=e).encode(x))
             for e in ("zstd", "pcodec", "pcodec_levels", "auto")}
    assert sizes["pcodec"] < 0.95 * sizes["zstd"], sizes
    assert sizes["auto"] == min(sizes.values()) < min(sizes["zstd"], sizes["pcodec"])


@settings(max_examples=examples(200), deadline=None)
@given(st.binary(max_size=200), st.integers(0, 199), st.sampled_from(["zstd", "pcodec", "pcodec_levels", "ans"]))
def test_arbitrary_bytes_never_crash(tail, cut, entropy):
    """Mutated chunks decode or raise ValueError: never a crash or a read out of bounds (the
    sanitizer leg runs this under ASan)."""
    x = np.linspace(0, 10, 60).reshape(6, 10)
    config = PredictConfig.create(abs_error=0.1, entropy=entropy)
    data = bytearray(config.encode(x))
    data[HEADER.size + cut % max(1, len(data) - HEADER.size):] = tail
    try:
        y = config.decode(bytes(data), x.dtype, x.shape)
    except ValueError:
        return
    assert y.shape == x.shape


def test_config_errors_name_the_key():
    for kwargs, key in [({"abs_error": 0}, "abs_error"), ({"abs_error": float("nan")}, "abs_error"),
                        ({"abs_error": True}, "abs_error"), ({"abs_error": 1, "predictor": "x"}, "predictor"),
                        ({"abs_error": 1, "level": 99}, "level"),
                        ({"abs_error": 1, "entropy": "huffman"}, "entropy")]:
        with pytest.raises(ConfigError) as info:
            PredictConfig.create(**kwargs)
        assert info.value.config_key == key
    with pytest.raises(ConfigError) as info:
        PredictConfig.from_json({"predictor": "auto"})
    assert info.value.config_key == "abs_error"
    for dtype in ("i8", "u8", "f2", "c8", "?"):
        with pytest.raises(ConfigError, match=f"float32, float64 or 8- to 32-bit integer arrays, "
                                              f"not {np.dtype(dtype)}") as info:
            PredictConfig.create(abs_error=1).encode(np.arange(5).astype(dtype))
        assert info.value.config_key == "data_type"
    with pytest.raises(ConfigError, match=r"64-bit integers: not yet, float64 holds them exactly "
                                          r"only up to 2\*\*53"):
        PredictConfig.create(abs_error=1).decode(b"", np.dtype("i8"), (0,))


# --- integer arrays (CF-packed data): the values as float64, rounded back -------------------------

INTEGER_TYPES = ["int8", "uint8", "int16", "uint16", "int32", "uint32"]


def integer_field(seed: int, shape: tuple[int, ...], dtype: str, step: int, edges: float) -> np.ndarray:
    """A random walk along the last axis in steps up to `step`, folded into the type's range;
    with `edges`, that share of the elements at the type's minimum or maximum."""
    info = np.iinfo(dtype)
    rng = np.random.default_rng(seed)
    walk = np.cumsum(rng.integers(-step, step + 1, shape), axis=-1) if shape else rng.integers(-9, 9, shape)
    x = info.min + (np.asarray(walk, dtype=np.int64) - info.min) % (int(info.max) - int(info.min) + 1)
    if edges and x.size:
        x = np.where(rng.random(shape) < edges, rng.choice([info.min, info.max], size=shape), x)
    return np.asarray(x).astype(dtype)


@settings(max_examples=examples(100), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), shape=shapes, dtype=st.sampled_from(INTEGER_TYPES),
       step=st.sampled_from([0, 1, 3, 40, 5000]), edges=st.sampled_from([0.0, 0.1]),
       E=st.sampled_from([1e-3, 0.5, 0.999, 1.0, 2.5, 7.0, 1e4, 1e300]),
       fill=st.sampled_from([None, "min", "max", 3]), keep=st.sampled_from([(), ("min",), (4, "max")]),
       predictor=st.sampled_from(["lorenzo", "interpolation", "interpolation_slices", "auto"]),
       entropy=st.sampled_from(["zstd", "ans", "auto"]))
def test_integer_arrays_decode_within_the_whole_steps_of_the_bound(
        seed, shape, dtype, step, edges, E, fill, keep, predictor, entropy):
    """Every element within floor(E) of the original (the original itself for E < 1), the type
    kept, its range never left; the fill value and the values of `keep` exact, and no other
    value decoded to one of them; the reference decodes the same values."""
    import math

    x = integer_field(seed, shape, dtype, step, edges)
    info = np.iinfo(dtype)
    named = {"min": int(info.min), "max": int(info.max)}
    fill_value = None if fill is None else named.get(fill, fill)
    keep = [named.get(v, v) for v in keep]
    config = PredictConfig.create(abs_error=E, predictor=predictor, entropy=entropy, keep=keep)
    data = config.encode(x, fill_value)
    y = config.decode(data, x.dtype, x.shape, fill_value)
    assert y.dtype == x.dtype and y.shape == x.shape
    k = math.floor(E)
    xs, ys = x.reshape(-1).tolist(), y.reshape(-1).tolist()     # (Python integers: exact)
    assert all(abs(b - a) <= k for a, b in zip(xs, ys)), max(abs(b - a) for a, b in zip(xs, ys))
    exact = {*keep, *([] if fill_value is None else [fill_value])}
    assert all((a in exact) == (b in exact) and (a not in exact or a == b) for a, b in zip(xs, ys))
    ref = predict_reference.decode(data, x.dtype, x.shape, E,
                                   np.nan if fill_value is None else fill_value)
    assert np.array_equal(ref, y)


def test_integers_are_coded_as_float64_within_just_under_half_a_step_more_than_the_bound():
    from zdt.codecs.predict import integer_bound

    assert integer_bound(0.3) == np.nextafter(0.5, 0) and integer_bound(1.0) == np.nextafter(1.5, 0)
    assert integer_bound(2.999) == np.nextafter(2.5, 0)
    assert integer_bound(1e300) == np.nextafter(2.0**51 + 0.5, 0)
    x = np.arange(-50, 50, dtype=np.int16).reshape(10, 10)
    data = PredictConfig.create(abs_error=2.5, entropy="zstd").encode(x)
    assert HEADER.unpack_from(data)[2] == 8          # float64 elements
    # the same chunk as the float64 values within that bound
    assert data == PredictConfig.create(abs_error=float(np.nextafter(2.5, 0)), entropy="zstd").encode(
        x.astype(np.float64))


def test_lossless_integers_take_fewer_bytes_than_zstd_on_a_smooth_field():
    """A CF-packed-like int16 field (a smooth surface in steps of 0.01 K), coded exactly."""
    from numcodecs.zstd import Zstd

    i, j = np.mgrid[0:300, 0:400]
    x = np.round(100 * (15 * np.sin(i / 50) * np.cos(j / 70) + 5 * np.sin(i / 13 + j / 17))).astype(np.int16)
    data = PredictConfig.create(abs_error=0.5).encode(x)
    assert np.array_equal(PredictConfig.create(abs_error=0.5).decode(data, x.dtype, x.shape), x)
    assert len(data) < 0.5 * len(Zstd(level=9).encode(x.tobytes()))


def test_values_next_to_a_kept_value_never_decode_to_it():
    """A field that crosses the fill value and a kept sentinel at a coarse bound: many values
    would round onto them; each of those is stored exactly instead (found by decoding, in
    rounds of encodes; after the last round every value within the bound of a kept one)."""
    x = np.tile(np.arange(-60, 60, dtype=np.int16), (50, 1))
    x[::7, ::5] = -7                       # the sentinel, amid values around it
    config = PredictConfig.create(abs_error=9, entropy="ans", keep=[-7])
    y = config.decode(config.encode(x, 0), x.dtype, x.shape, 0)
    assert np.array_equal(y == 0, x == 0) and np.array_equal(y == -7, x == -7)
    assert int(np.abs(y.astype(int) - x).max()) <= 9


def test_keep_is_for_integer_arrays_and_escaped_values_must_be_values_of_the_type():
    from zdt.codecs.numcodecs.predict import Predict

    with pytest.raises(ConfigError, match="keep applies to integer arrays, not float32") as info:
        PredictConfig.create(abs_error=1, keep=[3]).encode(np.zeros(4, np.float32))
    assert info.value.config_key == "keep"
    for keep in ([1.5], "3", [True]):
        with pytest.raises(ConfigError, match="keep must be a list of integers") as info:
            PredictConfig.create(abs_error=1, keep=keep)
        assert info.value.config_key == "keep"
    with pytest.raises(ConfigError, match="keep"):
        Predict.from_config({"id": "zdt.predict", "abs_error": 1, "keep": [3]})
    assert PredictCodec(abs_error=2, keep=[9, -1]).to_dict()["configuration"]["keep"] == [-1, 9]
    assert "keep" not in PredictCodec(abs_error=2).to_dict()["configuration"]
    # an escaped value whose payload is no int8 (300), or a NaN that is no escape (its sign set)
    x = np.array([1, 2, -128, 4], dtype=np.int8)
    config = PredictConfig.create(abs_error=0.5, entropy="zstd", keep=[-128])
    data = config.encode(x)
    from numcodecs.zstd import Zstd

    head, planes = data[:16], bytearray(Zstd().decode(data[16:]))
    for bits, shown in [(0x7FF8_0000_0000_0000 | (300 + 2**32), "0x7ff800010000012c"),
                        (0xFFF8_0000_0000_0000 | (5 + 2**32), "0xfff8000100000005")]:
        planes[-8:] = bits.to_bytes(8, "little")
        with pytest.raises(CorruptChunkError, match=f"element 2 is .*{shown}.*no int8 value") as info:
            config.decode(head + bytes(Zstd().encode(bytes(planes))), x.dtype, x.shape)
        assert info.value.part == "raw values"


@pytest.mark.parametrize("dtype", INTEGER_TYPES)
def test_integer_arrays_in_zarr_with_a_fill_value_and_missing_chunks(dtype):
    info = np.iinfo(dtype)
    x = integer_field(4, (37, 45), dtype, 40, 0.02)
    x[:10, :10] = info.min          # a missing-data sentinel as the fill value
    store = MemoryStore()
    a = zarr.create_array(store, shape=(74, 45), chunks=(37, 45), dtype=dtype, fill_value=int(info.min),
                          serializer=PredictCodec(abs_error=3), compressors=None)
    a[:37] = x
    b = zarr.open_array(store, mode="r")
    y = b[...]
    assert y.dtype == np.dtype(dtype)
    assert int(np.abs(y[:37].astype(np.int64) - x.astype(np.int64)).max()) <= 3
    assert (y[:10, :10] == info.min).all() and (y[37:] == info.min).all()
    assert sorted(store._store_dict) == ["c/0/0", "zarr.json"]


@pytest.mark.parametrize("entropy", ["auto", "ans", "zstd", "pcodec", "pcodec_levels"])
def test_in_a_zarr_array_with_a_fill_value_and_missing_chunks(entropy):
    store = MemoryStore()
    i, j = np.mgrid[0:100, 0:70]
    x = (20 + 5 * np.sin(i / 9) + np.cos(j / 7)).astype("f4")
    x[10:30, 5:25] = -9999.0            # a masked region holding the fill value
    x[50, 50] = np.nan
    a = zarr.create_array(store, shape=x.shape, chunks=(32, 32), dtype="f4", fill_value=-9999.0,
                          serializer=PredictCodec(abs_error=0.05, entropy=entropy), compressors=None)
    a[...] = x
    a[64:, 64:] = -9999.0               # a whole chunk of fill: not written
    x[64:, 64:] = -9999.0
    meta = json.loads(store._store_dict["zarr.json"].to_bytes())
    assert meta["codecs"] == [{"name": "zdt.predict",
                               "configuration": {"abs_error": 0.05, "predictor": "auto", "level": 3,
                                                 "entropy": entropy}}]
    stages = {bytes(predict_reference.values_chunk(v.to_bytes())[6:8]) for k, v in store._store_dict.items() if k.startswith("c/")}
    if entropy != "auto":               # every chunk written with the stage asked for
        assert stages == {{"zstd": b"\x00\x00", "pcodec": b"\x01\x00", "pcodec_levels": b"\x02\x00",
                           "ans": b"\x03\x00"}[entropy]}
    b = zarr.open_array(store, mode="r")
    check_within(x, b[...], 0.05, np.float32(-9999.0))
    with pytest.raises(ValueError, match="8- to 32-bit integer arrays, not int64"):
        zarr.create_array(MemoryStore(), shape=(4,), dtype="i8", serializer=PredictCodec(abs_error=1))
    with pytest.raises(ValueError, match="keep applies to integer arrays, not float32"):
        zarr.create_array(MemoryStore(), shape=(4,), dtype="f4", serializer=PredictCodec(abs_error=1, keep=[0]))


def test_format_3_and_a_reference_mask_in_a_zarr_array(tmp_path):
    """A land-masked smooth field at a coarse bound in a zarr array chunked along time, the
    codec given the land as its reference mask: the chunks are masked chunks whose mask looks
    back at it and whose values are of format 3, and they read back within the bound, the
    land as the fill value, through zarr (a store on disk, opened again)."""
    from zdt.codecs.predict import ReferenceMask

    i, j = np.mgrid[0:90, 0:120]
    land = (np.sin(i / 5) * np.cos(j / 7) + 0.6 * np.sin(i / 3.1 + j / 4.3)) > 0.4
    x = np.stack([280 + np.sin(i / 40 + t) + np.cos(j / 50) for t in range(3)])
    x[:, land] = np.nan
    codec = PredictCodec(abs_error=0.2, mask=ReferenceMask.of(land).to_json())
    a = zarr.create_array(tmp_path / "a.zarr", shape=x.shape, chunks=(1, 90, 120), dtype="f8",
                          fill_value=np.nan, serializer=codec, compressors=None)
    a[...] = x
    chunks = sorted(p for p in (tmp_path / "a.zarr" / "c").rglob("*") if p.is_file())
    assert len(chunks) == 3
    for p in chunks:
        data = p.read_bytes()
        assert data[:7] == b"ZPR2\x02\x08\x01" and predict_reference.values_chunk(data)[:4] == b"ZPR3"
    b = zarr.open_array(tmp_path / "a.zarr", mode="r")
    assert b.metadata.codecs[0].to_dict() == codec.to_dict()
    y = b[...]
    assert np.array_equal(np.isnan(y), np.isnan(x))
    check_within(x, y, 0.2, np.float64(np.nan))


# --- the numcodecs face -------------------------------------------------------------------------

def test_numcodecs_face_is_found_by_id_and_round_trips_its_config():
    import numcodecs

    from zdt.codecs.numcodecs.predict import Predict

    codec = numcodecs.get_codec({"id": "zdt.predict", "abs_error": 0.25, "predictor": "lorenzo"})
    assert isinstance(codec, Predict)
    assert codec.get_config() == {"id": "zdt.predict", "abs_error": 0.25, "predictor": "lorenzo",
                                  "level": 3, "entropy": "auto"}
    with pytest.raises(ConfigError, match="abs_error") as info:
        numcodecs.get_codec({"id": "zdt.predict", "abs_err": 0.25})
    assert info.value.config_key == "abs_err"


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", [(), (7,), (5, 6), (3, 1, 4, 2, 2, 3)])
def test_numcodecs_face_layout_is_shape_then_a_chunk(dtype, shape):
    """The spec's envelope: one byte D, D u64 extents, then a chunk the reference decodes."""
    from zdt.codecs.numcodecs.predict import Predict

    x = field(5, shape, 10.0, 0.1, 0.05, dtype, None)
    codec = Predict(abs_error=0.01)
    data = codec.encode(x)
    assert data[0] == len(shape)
    extents = [int.from_bytes(data[1 + 8 * d:9 + 8 * d], "little") for d in range(len(shape))]
    assert tuple(extents) == shape
    chunk = data[1 + 8 * len(shape):]
    ref = predict_reference.decode(chunk, x.dtype, shape, 0.01, np.nan)
    y = codec.decode(data)
    assert y.shape == shape and y.dtype == x.dtype
    assert np.array_equal(ref.view(UINT[x.dtype.itemsize]), y.view(UINT[x.dtype.itemsize]))
    check_within(x, y, 0.01, None)
    out = np.empty(shape, dtype=dtype)
    assert codec.decode(data, out=out) is out and np.array_equal(out, y, equal_nan=True)


@pytest.mark.parametrize("order", ["C", "F"])
def test_numcodecs_face_as_a_zarr_format_2_compressor(order):
    from zdt.codecs.numcodecs.predict import Predict

    store = MemoryStore()
    i, j = np.mgrid[0:90, 0:70]
    x = (300 + 20 * np.sin(i / 11) * np.cos(j / 8)).astype("f8")
    x[3, 4] = np.nan
    a = zarr.create_array(store, shape=x.shape, chunks=(32, 32), dtype="f8", zarr_format=2,
                          order=order, compressors=Predict(abs_error=0.1), fill_value=np.nan)
    a[...] = x
    meta = json.loads(store._store_dict[".zarray"].to_bytes())
    assert meta["compressor"] == {"id": "zdt.predict", "abs_error": 0.1, "predictor": "auto",
                                  "level": 3, "entropy": "auto"}
    b = zarr.open_array(store, mode="r")
    check_within(x, b[...], 0.1, None)
    assert sum(len(v.to_bytes()) for k, v in store._store_dict.items() if "." not in k) < x.nbytes / 4


def test_numcodecs_face_refuses_what_it_cannot_encode_and_corrupt_buffers():
    from zdt.codecs.numcodecs.predict import Predict

    codec = Predict(abs_error=0.01)
    with pytest.raises(TypeError, match="NumPy array"):
        codec.encode(b"\x00" * 16)
    with pytest.raises(ConfigError, match="takes float32 or float64 arrays, not int16"):
        codec.encode(np.arange(4, dtype="i2"))      # (integers: the zarr v3 codec)
    data = codec.encode(np.linspace(0, 1, 50).reshape(5, 10))
    huge = bytes([2]) + (2**40).to_bytes(8, "little") * 2 + data[17:]
    cases = {
        b"": "zdt.predict: an empty buffer holds no array",
        data[:20]: "zdt.predict: a buffer of 20 bytes ends before its shape and the 16-byte chunk header",
        bytes([200]) + data[1:]: "zdt.predict: the buffer claims 200 dimensions (at most 32)",
        data[:22] + b"\x03" + data[23:]: "zdt.predict: the chunk holds 3-byte elements (4 or 8)",
        # (the C library's cap, checked before anything is allocated: a shape of more than
        # 65,536 elements a byte of the buffer)
        huge: "zdt.predict: the buffer's shape has more elements than 59 bytes can encode (at "
              "most 65,536 a byte)",
    }
    for buf, message in cases.items():
        with pytest.raises(ValueError) as info:
            codec.decode(buf)
        assert str(info.value) == message
    with pytest.raises(ValueError, match="zdt.predict"):
        codec.decode(data[:-5])


def test_auto_takes_the_order_and_the_slices_where_they_pay():
    """A smooth field whose last axis varies faster than its first (which order pays is the
    data's: on the Japanese geoid the reversed one): the reversed order writes fewer bytes
    and `auto` takes it;
    a stack of smooth fields that are unrelated along the first axis (seasons of different
    years): slices, which predict nothing across it."""
    i, j = np.mgrid[0:256, 0:256]
    aniso = 30 * np.cos(i / 200) + 30 * np.sin(j / 20) + 10 * np.sin(i / 150 + j / 15)
    rng = np.random.default_rng(2)
    t, y, x = np.mgrid[0:20, 0:40, 0:50]
    stack = 5000 + 80 * np.sin(y / 9 + rng.normal(0, 3, (20, 1, 1))) * np.cos(x / 11) \
        + rng.normal(0, 40, (20, 1, 1))
    for data, E, want in ((aniso, 0.01, 3), (stack, 1.0, 4)):
        sizes = {name: len(PredictConfig.create(abs_error=E, predictor=name).encode(data))
                 for name in ("lorenzo", "interpolation", "interpolation_reversed", "interpolation_slices")}
        chosen = PredictConfig.create(abs_error=E).encode(data)
        assert chosen[4] == want, (sizes, chosen[4])
        assert len(chosen) == min(sizes.values()) < sizes["interpolation"], sizes
        check_within(data, PredictConfig.create(abs_error=E).decode(chosen, data.dtype, data.shape), E, None)


@pytest.mark.parametrize("shape", [(0,), (0, 5), (3, 0, 2)])
@pytest.mark.parametrize("entropy", ["auto", "ans", "zstd", "pcodec"])
def test_numcodecs_face_round_trips_empty_arrays(shape, entropy):
    from zdt.codecs.numcodecs.predict import Predict

    codec = Predict(abs_error=0.1, entropy=entropy)
    x = np.empty(shape)
    y = codec.decode(codec.encode(x))
    assert y.shape == shape and y.dtype == x.dtype


@pytest.mark.parametrize("entropy, predictor", [
    (e, p) for e in ("ans", "zstd", "pcodec", "pcodec_levels")
    for p in ("interpolation", "lorenzo", "interpolation_slices")
    if not (e == "pcodec_levels" and p == "lorenzo")])      # (Lorenzo has no levels)
def test_a_chunk_of_no_elements_decodes_whatever_its_extents(entropy, predictor):
    """A shape with a zero extent has no elements however long its other extents: decoding
    allocates nothing sized by an extent (stage 2's level groups once made an index per
    position along each dimension: 2**51 of them for a shape the fuzzer gave the numcodecs
    face, MemoryError, and under ASan an abort)."""
    config = PredictConfig.create(abs_error=0.5, predictor=predictor, entropy=entropy)
    chunk = config.encode(np.zeros((0, 5)), np.nan)
    assert config.decode(chunk, np.dtype("float64"), (2 ** 51, 0), np.nan).shape == (2 ** 51, 0)


@pytest.mark.parametrize("entropy", ["ans", "zstd", "pcodec", "pcodec_levels"])
@pytest.mark.parametrize("shape", [(0,), (2, 0)])
def test_a_chunk_of_elements_read_as_a_shape_of_none_is_corrupt(entropy, shape):
    """A 2 x 2 chunk (one value raw: an infinity) decoded as a shape of no elements: a
    CorruptChunkError naming what is left over (the raw value, the ANS stream's words and
    states, the symbols), never an empty array as if nothing were wrong."""
    config = PredictConfig.create(abs_error=0.5, predictor="interpolation", entropy=entropy)
    for x in (np.array([[1.0, np.inf], [3.0, 4.0]]), np.array([[1.0, 2.0], [3.0, 4.0]])):
        with pytest.raises(CorruptChunkError):
            config.decode(config.encode(x, np.nan), x.dtype, shape, np.nan)


def test_numcodecs_face_refuses_huge_extents_and_fill_symbols():
    from zdt.codecs.numcodecs.predict import Predict

    codec = Predict(abs_error=0.1, entropy="pcodec")
    empty = codec.encode(np.empty((0,)))
    chunk = empty[9:]
    bad = bytes([2]) + (0).to_bytes(8, "little") + (2**64 - 1).to_bytes(8, "little") + chunk
    with pytest.raises(ValueError, match="larger than an array can be"):
        codec.decode(bad)
    # a chunk made with a fill value decoded without one: corrupt, a masked chunk and a
    # format-1 chunk with fill-value symbols (symbol 1) alike (a block of fill values: the
    # encoder writes a masked chunk; a few at random: format 1 with their symbols)
    i, j = np.mgrid[0:64, 0:80]
    smooth = np.sin(i / 9) * np.cos(j / 11)
    block = np.where((i < 30) & (j < 40), 5.0, smooth)
    scattered = np.where(np.random.default_rng(2).random(smooth.shape) < 0.01, 5.0, smooth)
    config = PredictConfig.create(abs_error=0.1, entropy="zstd")
    masked, plain = config.encode(block, 5.0), config.encode(scattered, 5.0)
    assert masked[:5] == b"ZPR2\x02" and plain[:4] == b"ZPR1"
    assert (np.frombuffer(bytes(Zstd().decode(plain[16:])), np.uint8)[:smooth.size] == 1).any()
    head = bytes([2]) + (64).to_bytes(8, "little") + (80).to_bytes(8, "little")
    for data, message in ((masked, "a masked chunk, and there is no fill value for its masked elements"),
                          (plain, "the chunk has fill-value symbols, and there is no fill value")):
        with pytest.raises(ValueError) as info:
            codec.decode(head + data)
        assert str(info.value) == f"zdt.predict: {message}"


def test_numcodecs_face_writes_zstd_where_stage_3_packs_past_its_decoders_limit(monkeypatch):
    """The face's decoder takes more than PER_BYTE elements a byte for a corrupt shape; stage 3
    codes one repeated code in a few bytes whatever the size, so the face's encoder writes such
    a buffer with zstd instead (here with the limit lowered, as a constant array of billions of
    elements would meet it), and every buffer it writes decodes."""
    import zdt.codecs.numcodecs.predict as face

    x = np.full((300, 400), 3.0)
    natural = face.Predict(abs_error=0.1).encode(x)
    assert natural[1 + 16 + 6] == 3
    monkeypatch.setattr(face, "PER_BYTE", x.size // len(natural) - 1)
    data = face.Predict(abs_error=0.1).encode(x)
    assert data[1 + 16 + 6] == 0 and x.size <= face.PER_BYTE * len(data)
    assert np.array_equal(face.Predict(abs_error=0.1).decode(data), x)


def sample_starts(n: int) -> list[int]:
    """Where `auto`'s four sample blocks start along an extent n (a side of n / 8 at 1/8, 3/8,
    5/8, 7/8 of the room left), the second extent's turned by one."""
    side = round(n / 8)
    return [int((n - side) * a) for a in (1 / 8, 3 / 8, 5 / 8, 7 / 8)]


@pytest.mark.parametrize("field", ["anisotropic", "isotropic"])
def test_auto_chooses_the_predictor_with_the_fewest_bytes_in_large_chunks(field):
    """In a chunk of 2^16 elements or more, `auto` estimates the predictors on sample blocks
    and predicts the whole chunk only with the best: here the predictor with the fewest
    bytes, and through a zarr array (one chunk) the chunk stored is the one it chose."""
    i, j = np.mgrid[0:512, 0:640]
    aniso = 30 * np.cos(i / 200) + 30 * np.sin(j / 20) + 10 * np.sin(i / 150 + j / 15)
    if field == "isotropic":
        aniso = 30 * np.sin(i / 40) * np.cos(j / 45) + 5 * np.sin(i / 7 + j / 9)
    chosen = PredictConfig.create(abs_error=0.01).encode(aniso)
    sizes = {name: len(PredictConfig.create(abs_error=0.01, predictor=name).encode(aniso))
             for name in ("lorenzo", "interpolation", "interpolation_reversed", "interpolation_slices")}
    best = min(sizes, key=sizes.get)
    assert chosen[4] == PREDICTORS[best] and len(chosen) == sizes[best], sizes
    check_within(aniso, PredictConfig.create(abs_error=0.01).decode(chosen, aniso.dtype, aniso.shape),
                 0.01, None)
    store = MemoryStore()
    a = zarr.create_array(store, shape=aniso.shape, chunks=aniso.shape, dtype="f8",
                          fill_value=np.nan, serializer=PredictCodec(abs_error=0.01),
                          compressors=None)
    a[...] = aniso
    assert bytes(store._store_dict["c/0/0"].to_bytes()) == chosen
    check_within(aniso, zarr.open_array(store, mode="r")[...], 0.01, None)


def test_auto_looks_only_at_its_sample_blocks_in_large_chunks():
    """The blocks `auto` samples (a side of 1/8 of each extent, at 1/8, 3/8, 5/8, 7/8 of the
    room left, the columns' positions turned by one: (1/8, 3/8), (3/8, 5/8), (5/8, 7/8),
    (7/8, 1/8)) hold a field only Lorenzo predicts (g(i) + h(j), g and h noise); everywhere
    else a smooth field interpolation predicts better. The whole chunk is smaller by
    interpolation, yet `auto` with effort "fast" takes Lorenzo, which only the blocks can have
    told it; with the same field planted at the columns not turned (no block sampled there),
    it does not; nor below 2^16 elements, where it predicts the whole chunk. Effort
    "default" sees that Lorenzo's whole chunk costs far more an element than its blocks did,
    predicts the others whole too and takes interpolation either way."""
    rows, cols = 512, 640
    i, j = np.mgrid[0:rows, 0:cols]
    rng = np.random.default_rng(3)
    smooth = 40 * np.sin(i / 37) * np.cos(j / 23)
    lorenzo_only = rng.normal(0, 1, (rows, 1)) + rng.normal(0, 1, (1, cols))
    side = (round(rows / 8), round(cols / 8))
    r0, c0 = sample_starts(rows), sample_starts(cols)

    def planted(turn: int) -> np.ndarray:
        x = smooth.copy()
        for r, c in zip(r0, c0[turn:] + c0[:turn]):
            x[r:r + side[0], c:c + side[1]] = lorenzo_only[r:r + side[0], c:c + side[1]]
        return x

    for turn, sampled in ((1, True), (0, False)):
        x = planted(turn)
        sizes = {name: len(PredictConfig.create(abs_error=0.01, predictor=name).encode(x))
                 for name in ("lorenzo", "interpolation")}
        assert sizes["interpolation"] < 0.8 * sizes["lorenzo"], sizes
        chosen = PredictConfig.create(abs_error=0.01, effort="fast").encode(x)
        assert (chosen[4] == PREDICTORS["lorenzo"]) == sampled, (turn, sizes, chosen[4])
        assert PredictConfig.create(abs_error=0.01).encode(x)[4] != PREDICTORS["lorenzo"]
    small = planted(1)[:200, :300]          # (60,000 elements: no sampling)
    assert PredictConfig.create(abs_error=0.01, effort="fast").encode(small)[4] != \
        PREDICTORS["lorenzo"]


@settings(max_examples=examples(200), deadline=None)
@given(sym=st.lists(st.one_of(st.integers(0, 40), st.integers(4090, 4100), st.integers(0, 65535)),
                    max_size=3000))
def test_order0_bits_is_the_symbols_entropy(sym):
    """_predict_core.order0_bits (`auto`'s estimate: a table below 4096, wide symbols sorted
    and counted, or many of them counted in a table) against n log2 n - sum of c log2 c over each distinct symbol's count, summed
    exactly (math.fsum), within a few units of the last place."""
    from collections import Counter

    counts = Counter(sym)
    n = len(sym)
    want = math.fsum([n * math.log2(n)] + [-c * math.log2(c) for c in counts.values()]) if n else 0.0
    got = _predict_core.order0_bits(np.array(sym, dtype=np.uint16))
    assert abs(got - want) <= 1e-9 * max(1.0, n * math.log2(max(n, 2))), (got, want)


@settings(max_examples=examples(40), deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(4096, 40000),
       zeros=st.sampled_from([0.0, 0.5, 0.95, 1.0]),
       wide=st.sampled_from([0, 1, 30, 1024, 1025, 3000]), pool=st.sampled_from([0, 1, 7]))
def test_order0_bits_counts_long_runs_of_one_symbol_and_wide_ones_among_them(seed, n, zeros,
                                                                            wide, pool):
    """The same on chunks of 4096 symbols and more (counted in four tables), mostly symbol 2
    (code 0) or not, with wide symbols (from 4096) anywhere among them: few (gathered and
    sorted) or many (counted in a table), each distinct or drawn from a pool of a few values."""
    from collections import Counter

    rng = np.random.default_rng(seed)
    sym = np.where(rng.random(n) < zeros, 2, rng.integers(0, 40, n)).astype(np.uint16)
    values = rng.integers(4096, 65536, pool) if pool else None
    sym[rng.integers(0, n, wide)] = (rng.integers(4096, 65536, wide) if values is None
                                     else rng.choice(values, wide))
    counts = Counter(sym.tolist())
    want = math.fsum([n * math.log2(n)] + [-c * math.log2(c) for c in counts.values()])
    got = _predict_core.order0_bits(sym)
    assert abs(got - want) <= 1e-9 * n * math.log2(n), (got, want)


def token_of(k: int) -> int:
    """Stage 3's token of symbol k (the spec: k < 16 itself, else 16 + 4 (bits - 2) + the two
    bits below k's leading one, bits the count below those)."""
    if k < 16:
        return k
    bits = k.bit_length() - 3
    return 16 + 4 * (bits - 2) + ((k >> bits) & 3)


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), shape=st.sampled_from([(40,), (3, 50), (6, 17, 19), (2, 3, 9, 11)]),
       zeros=st.floats(0, 1), wide=st.floats(0, 0.3), fill=st.sampled_from([None, -9999.0]),
       predictor=st.sampled_from(["lorenzo", "interpolation", "interpolation_slices"]))
def test_stage_3_tables_sum_to_4096_with_every_counted_token(seed, shape, zeros, wide, fill,
                                                             predictor):
    """The model and tables the encoder writes, from fields whose codes mix runs of code 0
    with a few wide ones (many tokens counted once or twice beside a few large counts, where
    rounding overshoots): the reference decoder reads them (each table sums to 2^12, each
    listed token a frequency of at least 1) and the tokens of each table are exactly those
    its contexts decode (no table lists a token no symbol of its contexts has); the model
    byte and table count are the spec's."""
    rng = np.random.default_rng(seed)
    steps = np.where(rng.random(shape) < zeros, 0.0, rng.normal(0, 0.05, shape))
    steps = np.where(rng.random(shape) < wide, rng.normal(0, 1e3, shape), steps)
    x = np.cumsum(steps, axis=-1)
    if fill is not None:
        x[rng.random(shape) < 0.1] = fill
    data = PredictConfig.create(abs_error=0.01, predictor=predictor, entropy="ans").encode(x, fill)
    values = predict_reference.values_chunk(data)
    at = 32 if values[:4] == b"ZPR3" else 16
    model = values[at]
    assert values[6] == 3 and model < 4
    seen: dict[int, set[int]] = {}
    symbol = predict_reference.Rans.symbol

    def recording(self, a, b, group):
        k = symbol(self, a, b, group)
        ca = predict_reference.symbol_class(b) if a is None and b is not None else (
            0 if a is None else predict_reference.symbol_class(a))
        cb = predict_reference.symbol_class(b) if b is not None else ca
        lo, hi = min(ca, cb), max(ca, cb)
        table = predict_reference.model_table(self.model, 15 * group + hi * (hi + 1) // 2 + lo)
        seen.setdefault(table, set()).add(token_of(k))
        recording.tables = self.tables
        return k

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(predict_reference.Rans, "symbol", recording)
        y = predict_reference.decode(data, x.dtype, x.shape, 0.01,
                                     np.nan if fill is None else np.asarray(fill))
    check_within(x, y, 0.01, None if fill is None else np.asarray(fill))
    tables = recording.tables
    assert len(tables) == [1, 4, 16, 60][model]
    for t, table in enumerate(tables):
        assert {token for token, _ in table} == seen.get(t, set()), t
        assert sum(f for _, f in table) == (4096 if table else 0)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("entropy", ["ans", "zstd"])
def test_a_fill_of_its_own_is_kept_predicted_around_and_never_decoded_to(dtype, entropy):
    """`fill` (a CF _FillValue the data hold where the zarr fill value is NaN): its elements
    come back bit for bit as fill-value symbols, no other element decodes to it, and masked
    elements cost about what NaN fill values cost."""
    i, j = np.mgrid[0:60, 0:70]
    x = (20 + 5 * np.sin(i / 9) * np.cos(j / 7)).astype(dtype)
    land = (i - 30) ** 2 + (j - 35) ** 2 < 300
    marker = np.asarray(1e20, dtype=dtype)
    x_marked = np.where(land, marker, x)
    config = PredictConfig.create(abs_error=0.01, fill=float(marker), entropy=entropy)
    assert config.to_json()["fill"] == float(marker)
    data = config.encode(x_marked, np.nan)           # (the array's fill value: overridden)
    y = config.decode(data, x.dtype, x.shape, np.nan)
    check_within(x_marked, y, 0.01, marker)
    assert np.array_equal(y == marker, land)
    assert predict_reference.decode(data, x.dtype, x.shape, 0.01, marker).tobytes() == y.tobytes()
    as_nan = PredictConfig.create(abs_error=0.01, entropy=entropy).encode(np.where(land, np.nan, x), np.nan)
    assert len(data) <= len(as_nan) + 16
    # without the override the marker is an outlier stored raw, and its neighbours suffer
    plain = PredictConfig.create(abs_error=0.01, entropy=entropy).encode(x_marked, np.nan)
    assert len(data) < len(plain)
    # a value near the marker is never decoded onto it
    near = x_marked.copy()
    near[0, 0] = np.nextafter(marker, np.inf)
    z = PredictConfig.create(abs_error=1e14, fill=float(marker), entropy=entropy)
    back = z.decode(z.encode(near, np.nan), x.dtype, x.shape, np.nan)
    assert back[0, 0] != marker and np.array_equal(back == marker, land)


def test_fill_config_errors_and_json():
    for bad in (True, "nan", [1.0], {}):
        with pytest.raises(ConfigError) as info:
            PredictConfig.create(abs_error=1, fill=bad)
        assert info.value.config_key == "fill"
    with pytest.raises(ConfigError, match="fill applies to float arrays") as info:
        PredictConfig.create(abs_error=1, fill=3).encode(np.arange(4, dtype="i2"))
    for value, text in ((math.nan, "NaN"), (math.inf, "Infinity"), (-math.inf, "-Infinity"), (-9999, -9999.0)):
        c = PredictConfig.create(abs_error=1, fill=text if isinstance(text, str) else value)
        assert c.to_json()["fill"] == text
        assert PredictConfig.from_json(c.to_json()).to_json() == c.to_json()
    from zdt.codecs.numcodecs.predict import Predict
    with pytest.raises(ConfigError) as info:
        Predict.from_config({"abs_error": 1, "fill": 0.0})
    assert info.value.config_key == "fill"
