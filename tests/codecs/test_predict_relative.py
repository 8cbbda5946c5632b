"""zdt.predict with a pointwise-relative bound (docs/codecs/predict.md, "Pointwise-relative bounds
(format 2)"): every element within R |x| of its original in exact arithmetic, zeros to zeros of
the same sign, NaN bit for bit, the fill value kept and never decoded to; zdt's chunks decoded
bit-identically by the independent reference (tests/predict_reference.py); corrupt chunks a
CorruptChunkError naming the stream; the codec in zarr arrays and as a numcodecs codec."""

from __future__ import annotations

import math
import struct
from typing import NamedTuple

import numpy as np
import pytest
import zarr
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis_budget import examples
from numcodecs.zstd import Zstd
from zarr.storage import MemoryStore

import predict_reference
from exact import UINT, check_power_of_two, check_relative
from zdt.codecs.predict import PredictConfig
from zdt.codecs.zarr.predict import PredictCodec
from zdt.kernels import _predict_core
from zdt.errors import ConfigError, CorruptChunkError


def relative_field(seed: int, shape: tuple[int, ...], dtype: str, scale: float, spread: float,
                   zeros: float, negative: float, specials: float, fill) -> np.ndarray:
    """A positive field spanning `spread` powers of two around `scale` (smooth, with noise),
    with zeros, negative patches, and NaN / infinities / signed zeros / the fill value."""
    rng = np.random.default_rng(seed)
    grids = np.meshgrid(*[np.arange(n) for n in shape], indexing="ij") if shape else []
    logs = np.zeros(shape)
    for k, g in enumerate(grids):
        logs = logs + spread * np.sin(g / (2 + 3 * k))
    logs = logs + rng.normal(0, 0.05, shape)
    x = scale * np.exp2(logs)
    if x.size:
        x = np.where(rng.random(shape) < zeros, 0.0, x)
        x = np.where(rng.random(shape) < negative, -x, x)
        pick = rng.random(shape) < specials
        choices = np.array([np.nan, np.inf, -np.inf, -0.0, 5e-324, 1e-310,
                            fill if fill is not None else 1.0])
        x = np.where(pick, rng.choice(choices, size=shape), x)
    with np.errstate(over="ignore", under="ignore"):
        return x.astype(dtype)


shapes = st.lists(st.integers(1, 9), min_size=0, max_size=4).map(tuple)


@settings(max_examples=examples(100), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), shape=shapes, dtype=st.sampled_from(["float32", "float64"]),
       scale=st.sampled_from([1e-30, 1e-3, 1.0, 300.0, 1e30]), spread=st.sampled_from([0.0, 0.5, 8.0]),
       zeros=st.sampled_from([0.0, 0.3]), negative=st.sampled_from([0.0, 0.2, 1.0]),
       specials=st.sampled_from([0.0, 0.1]), fill=st.sampled_from([None, 0.0, np.nan, -9999.0, 1.0]),
       R=st.sampled_from([1e-7, 1e-4, 1e-2, 0.3, 2.0]),
       predictor=st.sampled_from(["lorenzo", "interpolation", "interpolation_slices", "auto"]),
       entropy=st.sampled_from(["zstd", "pcodec", "ans", "auto"]))
def test_every_element_within_r_of_its_magnitude_and_the_reference_decodes_the_same_bits(
        seed, shape, dtype, scale, spread, zeros, negative, specials, fill, R, predictor, entropy):
    x = relative_field(seed, shape, dtype, scale, spread, zeros, negative, specials, fill)
    config = PredictConfig.create(rel_error=R, predictor=predictor, entropy=entropy)
    data = config.encode(x, fill)
    assert data[:4] == b"ZPR2"
    y = config.decode(data, x.dtype, x.shape, fill)
    assert y.shape == x.shape and y.dtype == x.dtype
    check_relative(x, y, R, fill)
    ref = predict_reference.decode(data, x.dtype, x.shape, None, None)
    bits = UINT[x.dtype.itemsize]
    assert np.array_equal(ref.view(bits), y.view(bits))


special_floats = st.sampled_from([0.0, -0.0, math.inf, -math.inf, math.nan, -math.nan, 5e-324,
                                  -1e-310, 2.0 ** -1022, 1e-45, 3.5e38, -7.0, 1e300])
element_lists = st.lists(st.one_of(st.floats(allow_nan=True, allow_infinity=True), special_floats),
                         min_size=0, max_size=40)


def as_type(values: list[float], dtype: str) -> np.ndarray:
    with np.errstate(over="ignore", under="ignore"):
        return np.array(values, dtype=np.float64).astype(dtype)


def rounded(y: float, dtype: str) -> float:
    with np.errstate(over="ignore", under="ignore"):
        return float(np.array([y]).astype(dtype)[0])


RELATIVE_HEADER = struct.Struct("<4sBBHdQQ")


def bitmap_frame(bits: np.ndarray) -> bytes:
    """A sign stream or exact map: u64 length, then a zstd frame of the bits (first element
    in the high bit of the first byte); no bits set: length 0 and nothing."""
    bits = np.asarray(bits, bool).reshape(-1)
    if not bits.any():
        return struct.pack("<Q", 0)
    frame = bytes(Zstd().encode(np.packbits(bits).tobytes()))
    return struct.pack("<Q", len(frame)) + frame


def relative_chunk(logs_chunk: bytes, dtype: np.dtype, log_fill: int, b: float,
                   negative: np.ndarray, marked: np.ndarray, exact: np.ndarray,
                   kind: int = 3) -> bytes:
    """A relative chunk (format 2, kind 1 or 3) from its parts, packed by hand: the logarithms'
    chunk, the signs, the exact map (marked: the elements exact beside the NaN logarithms)
    and the exact values (in element order)."""
    exact = np.asarray(exact, dtype=dtype)
    out = RELATIVE_HEADER.pack(b"ZPR2", kind, dtype.itemsize, log_fill, b, exact.size,
                               len(logs_chunk)) + logs_chunk
    out += bitmap_frame(negative) + bitmap_frame(marked)
    if exact.size:
        out += bytes(Zstd().encode(exact.astype(dtype.newbyteorder("<")).tobytes()))
    return out


class Parts(NamedTuple):
    """A relative chunk's parts, read as the spec lays them out."""

    log_fill: int
    b: float
    n_exact: int
    logs: np.ndarray          # the logarithms as the logarithms' chunk decodes (flat)
    negative: np.ndarray      # the sign bits (bool, flat)
    marked: np.ndarray        # the exact map's bits (bool, flat)
    exact: np.ndarray         # the exact values


def parts(data: bytes, dtype: np.dtype, shape: tuple[int, ...]) -> Parts:
    """(Kind 4's sign stream read by the reference's mask decoder and classes.)"""
    magic, kind, size, log_fill, b, n_exact, length = RELATIVE_HEADER.unpack_from(data)
    assert magic == b"ZPR2" and kind in (3, 4) and size == dtype.itemsize
    n = math.prod(shape)
    logs = PredictConfig.create(abs_error=b).decode(
        data[32:32 + length], np.dtype("float64"), shape, [-math.inf, math.nan][log_fill])
    at = 32 + length
    bits = []
    for part in ("signs", "exact map"):
        (k,) = struct.unpack_from("<Q", data, at)
        if part == "signs" and kind == 4:
            assert k > 0
            bits.append(np.array(predict_reference.decode_signs(
                data[at + 8:at + 8 + k], predict_reference.spec_shape(shape),
                logs.reshape(-1).tolist()), bool))
        else:
            raw = bytes(Zstd().decode(data[at + 8:at + 8 + k])) if k else bytes((n + 7) // 8)
            bits.append(np.unpackbits(np.frombuffer(raw, np.uint8), count=n).astype(bool))
        at += 8 + k
    exact = np.frombuffer(bytes(Zstd().decode(data[at:])), dtype.newbyteorder("<")) \
        if n_exact else np.empty(0, dtype)
    return Parts(log_fill, b, n_exact, logs.reshape(-1), bits[0], bits[1], exact)


def would_read(v: float, negative: bool, dtype: str, kind: int = 3) -> float:
    """What the decoder reads for an element that is not exact: 2^v (the reference's, kind 1's
    polynomial or kind 3's table), 0 for -inf, infinity for +inf, rounded to the type, negated
    for a set sign bit."""
    exp2 = predict_reference.spec_exp2 if kind == 1 else predict_reference.table_exp2
    y = 0.0 if v == -math.inf else math.inf if v == math.inf else exp2(v)
    y = rounded(y, dtype)
    return -y if negative else y


@settings(max_examples=examples(100), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), shape=shapes, dtype=st.sampled_from(["float32", "float64"]),
       scale=st.sampled_from([1e-30, 1.0, 1e30, 3e38]), spread=st.sampled_from([0.0, 0.5, 8.0]),
       zeros=st.sampled_from([0.0, 0.3]), negative=st.sampled_from([0.0, 0.2, 1.0]),
       specials=st.sampled_from([0.0, 0.1]), fill=st.sampled_from([None, -7.0, np.nan]),
       R=st.sampled_from([1e-7, 2e-7, 1e-6, 1e-3, 0.3]))
def test_the_encoder_s_logarithms_signs_and_exact_map_are_each_element_s(
        seed, shape, dtype, scale, spread, zeros, negative, specials, fill, R):
    """The parts of the relative chunks the encoder writes, read back element by element:
    the logarithms' chunk decodes NaN for NaN (either sign) and the fill value's bits, -inf
    for a zero, +inf for an infinity, else a finite logarithm; the sign bits are each
    element's (or none at all); n_exact counts the NaN logarithms and the marked elements;
    an element is marked exactly where what the decoder would read from its logarithm (the
    reference's 2^v, rounded to the type, with its sign) is not finite, is zero, is the fill
    value or is not within R |x| in exact arithmetic (the encoder's check: a float64 screen,
    then integers where it cannot settle); the exact values are the elements' own. (float32
    near its largest values, and R near float32's own precision, make elements miss.)"""
    from fractions import Fraction

    x = relative_field(seed, shape, dtype, scale, spread, zeros, negative, specials, fill)
    data = PredictConfig.create(rel_error=R).encode(x, fill)
    assert data[:5] in (b"ZPR2\x03", b"ZPR2\x04")
    p = parts(data, x.dtype, x.shape)
    if p.negative.any():
        # (kind 4 where its sign stream is the shorter: zstd's bitmap against kind 4's stream
        # of the same bits; numcodecs' zstd may frame a few bytes apart from the core's)
        bitmap = Zstd(level=3).encode(np.packbits(p.negative).tobytes())
        coded = _predict_core.signs_encode(p.negative.astype(np.uint8), x.shape, p.logs)
        if abs(len(coded) - len(bitmap)) > 4:
            assert (data[4] == 4) == (len(coded) < len(bitmap)), (len(coded), len(bitmap))
    else:
        assert data[4] == 3
    flat = x.reshape(-1)
    bits = UINT[x.dtype.itemsize]
    fill_bits = None if fill is None else np.asarray(fill, dtype=x.dtype).view(bits)
    nan_log = np.isnan(p.logs)
    if nan_log.all():               # (every value exact, or every element NaN or the fill)
        assert p.n_exact == flat.size and not p.marked.any()
        assert np.array_equal(p.exact.view(bits), flat.view(bits))
        return
    for i, xi in enumerate(flat.tolist()):
        v = float(p.logs[i])
        is_fill = fill_bits is not None and flat.view(bits)[i] == fill_bits
        if math.isnan(xi) or is_fill:
            assert math.isnan(v), i
            continue
        assert not math.isnan(v), i
        if xi == 0:
            assert v == -math.inf, i
        elif math.isinf(xi):
            assert v == math.inf, i
        else:
            assert math.isfinite(v), i
        if p.negative.any():
            assert p.negative[i] == bool(np.signbit(flat[i])), i
        y = would_read(v, bool(p.negative[i]), dtype)
        miss = (xi != 0 and math.isfinite(xi)) and (
            not math.isfinite(y) or y == 0 or (fill is not None and y == float(np.asarray(fill, x.dtype)))
            or abs(Fraction(y) - Fraction(xi)) > Fraction(R) * abs(Fraction(xi)))
        assert bool(p.marked[i]) == miss, (i, xi, y, v)
    assert p.n_exact == int(np.count_nonzero(p.marked | nan_log))
    assert np.array_equal(p.exact.view(bits), flat[p.marked | nan_log].view(bits))
    y = PredictConfig.create(rel_error=R).decode(data, x.dtype, x.shape, fill)
    check_relative(x, y, R, fill)


@settings(max_examples=examples(200), deadline=None)
@given(logs=st.lists(st.one_of(st.floats(-1200, 1200), st.sampled_from([math.inf, -math.inf, math.nan])),
                     min_size=1, max_size=40),
       signs=st.lists(st.booleans(), min_size=40, max_size=40),
       exact_every=st.sampled_from([0, 2, 5]), dtype=st.sampled_from(["float32", "float64"]),
       copies=st.sampled_from([1, 17]), log_fill=st.sampled_from([0, 1]),
       kind=st.sampled_from([1, 3]))
def test_the_decoder_reads_each_element_from_its_logarithm(logs, signs, exact_every, dtype,
                                                           copies, log_fill, kind):
    """A relative chunk packed by hand around a logarithms' chunk of any logarithms (±1200,
    ±inf, NaN; `copies` in a row run past the library's blocks): the C decoder gives each
    element what the decoder's rule gives it one at a time: an exact element (NaN logarithm
    or marked) the next stored value; else the reference's 2^v (the spec's polynomial)
    rounded to the type for a finite v, infinity for +inf, zero for -inf, negated where the
    sign bit is set; with neither signs nor exact map, the same unsigned. A stored value
    short: corrupt. Kind 1 (the chunks zdt wrote first) and kind 3 alike, each with its
    exp2."""
    logs, signs = logs * copies, signs * copies
    n = len(logs)
    dt = np.dtype(dtype)
    v = np.array(logs, dtype=np.float64)
    fill = [-math.inf, math.nan][log_fill]
    config = PredictConfig.create(abs_error=1e-9)
    logs_chunk = config.encode(v, fill)
    decoded = config.decode(logs_chunk, v.dtype, v.shape, fill)       # (within 1e-9 of v)
    negative = np.array(signs[:n], dtype=bool)
    marked = np.zeros(n, bool)
    if exact_every:
        marked[::exact_every] = True
    marked &= ~np.isnan(decoded)
    exact = np.isnan(decoded) | marked
    stored = as_type([1.5 + i for i in range(int(exact.sum()))], dtype)
    data = relative_chunk(logs_chunk, dt, log_fill, 1e-9, negative, marked, stored, kind)
    out = PredictConfig.create(rel_error=1e-3).decode(data, dt, (n,))
    want, j = [], 0
    for i in range(n):
        if exact[i]:
            want.append(float(stored[j]))
            j += 1
        else:
            want.append(would_read(float(decoded[i]), bool(negative[i]), dtype, kind))
    bits = UINT[dt.itemsize]
    assert out.view(bits).tolist() == as_type(want, dtype).view(bits).tolist()
    assert np.array_equal(predict_reference.decode(data, dt, (n,), None, None).view(bits),
                          out.view(bits))
    # (no signs, no exact map: each element unsigned, the NaN logarithms' values stored)
    plain = relative_chunk(logs_chunk, dt, log_fill, 1e-9, np.zeros(n, bool), np.zeros(n, bool),
                           stored[:int(np.isnan(decoded).sum())], kind)
    alone = PredictConfig.create(rel_error=1e-3).decode(plain, dt, (n,))
    finite = ~np.isnan(decoded)
    unsigned = [would_read(float(lg), False, dtype, kind) for lg in decoded[finite].tolist()]
    assert alone[finite].view(bits).tolist() == as_type(unsigned, dtype).view(bits).tolist()
    if exact.any():        # (one stored value short of the exact elements: corrupt)
        short = relative_chunk(logs_chunk, dt, log_fill, 1e-9, negative, marked, stored[:-1], kind)
        short = short[:16] + struct.pack("<Q", int(exact.sum())) + short[24:]
        with pytest.raises(CorruptChunkError) as info:
            PredictConfig.create(rel_error=1e-3).decode(short, dt, (n,))
        assert info.value.part == "exact values"


@settings(max_examples=examples(300), deadline=None)
@given(st.floats(-1100, 1100, allow_nan=False))
def test_the_spec_polynomial_is_within_two_units_of_2_to_the_v(v):
    """The decoder's 2^v (a relative chunk of one element packed by hand, float64, its
    logarithm v as the logarithms' chunk decodes it) is the reference's spec_exp2 (its
    coefficients computed again from ln 2), and against 2**v to 40 digits within 2**-51
    relative while the result is a normal number."""
    config = PredictConfig.create(abs_error=1e-9)
    logs_chunk = config.encode(np.array([v]))
    w = float(config.decode(logs_chunk, np.dtype("f8"), (1,))[0])
    data = relative_chunk(logs_chunk, np.dtype("f8"), 0, 1e-9, np.zeros(1, bool),
                          np.zeros(1, bool), np.empty(0), kind=1)
    got = float(PredictConfig.create(rel_error=1e-3).decode(data, np.dtype("f8"), (1,))[0])
    assert got == predict_reference.spec_exp2(w)
    check_power_of_two(got, w)


def smooth_positive(shape=(60, 80)) -> np.ndarray:
    i, j = np.mgrid[0:shape[0], 0:shape[1]]
    return 1e-3 * np.exp2(4 * np.sin(i / 9) * np.cos(j / 13))


def largest_marked(shape=(60, 80)) -> np.ndarray:
    """float32 values, the first third of the rows float32's largest, (2^24 - k) 2^104 for
    k = 1 .. 31 (the decoded values of some round past the largest float32 to infinity: the
    check marks them exact)."""
    x = smooth_positive(shape).astype("f4")
    top = x[:shape[0] // 3]
    top[...] = np.ldexp(2.0 ** 24 - 1 - np.arange(top.size).reshape(top.shape) % 31, 104)
    return x


def test_elements_the_logarithms_miss_are_stored_exactly():
    """Elements whose logarithms decode to a value not within R (float32's largest values,
    whose 2^v rounds to infinity): the encoder's check marks them exact (their logarithms
    left as they were), and every element keeps R."""
    x = smooth_positive()
    R = 1e-3
    config = PredictConfig.create(rel_error=R)
    assert struct.unpack_from("<Q", config.encode(x), 16)[0] == 0
    x = largest_marked()
    data = config.encode(x)
    n_exact = struct.unpack_from("<Q", data, 16)[0]
    assert 0 < n_exact < x.size
    p = parts(data, x.dtype, x.shape)
    assert p.marked.any() and np.all(x.reshape(-1)[p.marked] >= 2.0 ** 127)
    y = config.decode(data, x.dtype, x.shape)
    check_relative(x, y, R, None)
    assert np.array_equal(y, predict_reference.decode(data, x.dtype, x.shape, None, None))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_the_codec_s_own_fill_is_not_the_logarithms_fill(dtype):
    """A codec with `fill` of its own (-999) on values whose logarithm is -999 exactly
    (+-2**-999, float64) or -100 (2**-100, float32, the fill -100 there): the logarithms' chunk
    keeps its own fill value (-inf / NaN), so those elements are coded as any other (an
    encoder that took the codec's fill for the logarithms' wrote them as fill-value symbols,
    which a decoder reads as zero, and checked them against its own reading)."""
    e = -999 if dtype == "float64" else -100
    x = np.linspace(1, 2, 500).astype(dtype)
    x[[5, 80]] = 2.0 ** e
    x[9] = -(2.0 ** e)
    x[[7, 300]] = 0.0
    x[11] = e                           # (the codec's fill value itself, in the data)
    config = PredictConfig.create(rel_error=1e-3, fill=float(e))
    data = config.encode(x, np.nan)
    y = config.decode(data, x.dtype, x.shape, np.nan)
    check_relative(x, y, 1e-3, float(e))
    assert y[5] == y[80] == 2.0 ** e and y[9] == -(2.0 ** e)
    assert np.array_equal(y, predict_reference.decode(data, x.dtype, x.shape, None, None))


def test_a_bound_too_fine_for_the_logarithms_stores_the_values_exactly_instead():
    """float32 at R = 1e-7: the logarithms' codes overflow and every value would go through a
    float64 raw logarithm; the values exact are smaller, and that is what is written."""
    rng = np.random.default_rng(1)
    x = (1 + rng.random((40, 50))).astype("f4")
    data = PredictConfig.create(rel_error=1e-7).encode(x)
    assert struct.unpack_from("<Q", data, 16)[0] == x.size
    assert len(data) < x.nbytes


def test_a_smooth_field_takes_fewer_bytes_than_bitround_with_zstd():
    from numcodecs import BitRound
    from numcodecs.zstd import Zstd

    x = smooth_positive((200, 200))
    R = 1e-3
    data = PredictConfig.create(rel_error=R).encode(x)
    keepbits = math.ceil(-math.log2(R)) - 1
    recipe = Zstd(level=3).encode(BitRound(keepbits).encode(x))
    assert len(data) < 0.5 * len(recipe), (len(data), len(recipe))


def test_zeros_cost_next_to_nothing_and_signs_only_where_there_are_negatives():
    x = smooth_positive((100, 100))
    x[:, 50:] = 0.0
    data = PredictConfig.create(rel_error=1e-2).encode(x)
    half = PredictConfig.create(rel_error=1e-2).encode(x[:, :50].copy())
    assert len(data) - len(half) < 5000 / 8 / 2      # under half a bit a zero
    head, length = RELATIVE_HEADER, struct.unpack_from("<Q", data, 24)[0]
    assert struct.unpack_from("<Q", data, head.size + length)[0] == 0      # no sign stream
    x[0, 0] = -x[0, 0]
    data = PredictConfig.create(rel_error=1e-2).encode(x)
    assert struct.unpack_from("<Q", data, head.size + length)[0] > 0


def test_a_kind_4_sign_stream_is_checked():
    """Kind 4's signs (a field negative over a region): a t that is not finite, a state below
    2^16, a word fewer (its count and the chunk's lengths kept consistent), a word more than
    the count says, and a flipped word are each a CorruptChunkError naming "signs", or (the
    flipped word, where the stream still ends as it began) a decode whose signs differ; the
    reference decoder reads the chunk as zdt does."""
    x = smooth_positive((40, 50)) - 1.5 * np.median(smooth_positive((40, 50)))
    config = PredictConfig.create(rel_error=1e-3)
    data = config.encode(x)
    assert data[:5] == b"ZPR2\x04" and (x < 0).any() and (x > 0).any()
    y = config.decode(data, x.dtype, x.shape)
    assert np.array_equal(np.signbit(y), np.signbit(x))
    assert np.array_equal(predict_reference.decode_relative(data, x.dtype, x.shape).view("u8"),
                          y.view("u8"))
    length = struct.unpack_from("<Q", data, 24)[0]
    at = 32 + length
    sign_length = struct.unpack_from("<Q", data, at)[0]
    stream = data[at + 8:at + 8 + sign_length]
    t, state, words = struct.unpack_from("<dIQ", stream)
    assert sign_length == 20 + 2 * words and words >= 2

    def with_stream(new: bytes) -> bytes:
        return data[:at] + struct.pack("<Q", len(new)) + new + data[at + 8 + sign_length:]
    cases = {
        "t infinite": (struct.pack("<d", math.inf) + stream[8:],
                       "the sign stream's reference logarithm is inf, not finite"),
        "t NaN": (struct.pack("<d", math.nan) + stream[8:],
                  "the sign stream's reference logarithm is nan, not finite"),
        "state": (stream[:8] + struct.pack("<IQ", 0xFFFF, words) + stream[20:],
                  "the sign stream's state 65535 lies below 2^16"),
        "a word fewer": (stream[:8] + struct.pack("<IQ", state, words - 1) + stream[20:-2],
                         "the sign stream ends before the chunk's 2000 signs"),
        "a word more": (stream + b"\0\0", f"the sign stream's {words} words do not fill its "
                                          f"{sign_length + 2} bytes"),
        "cut in the head": (stream[:15], "the chunk ends inside the sign stream's head"),
    }
    for name, (bad, message) in cases.items():
        with pytest.raises(CorruptChunkError) as info:
            config.decode(with_stream(bad), x.dtype, x.shape)
        assert info.value.part == "signs", (name, info.value)
        assert str(info.value) == f"zdt.predict: {message}", name
    flipped = stream[:20] + bytes([stream[20] ^ 0x40]) + stream[21:]
    try:
        z = config.decode(with_stream(flipped), x.dtype, x.shape)
    except CorruptChunkError as e:
        assert e.part == "signs"
    else:
        assert not np.array_equal(np.signbit(z), np.signbit(x))


def test_corrupt_relative_chunks_name_the_stream():
    # (float32's largest values: they miss, and the chunk has an exact map; with interpolation,
    # where Lorenzo predicts every one)
    x = largest_marked((30, 40))
    x[0, :5] = -x[0, :5]
    x[3, 3] = np.nan
    config = PredictConfig.create(rel_error=1e-3, entropy="zstd", predictor="interpolation")
    data = config.encode(x)
    length = struct.unpack_from("<Q", data, 24)[0]
    signs_at = 32 + length
    sign_length = struct.unpack_from("<Q", data, signs_at)[0]
    assert sign_length > 0
    map_at = signs_at + 8 + sign_length
    map_length = struct.unpack_from("<Q", data, map_at)[0]
    assert map_length > 0
    exact_at = map_at + 8 + map_length
    n_exact = struct.unpack_from("<Q", data, 16)[0]
    stored = bytes(Zstd().decode(data[exact_at:]))

    def with_stored(values: bytes) -> bytes:
        return bytes(Zstd().encode(values))

    cases = {
        "short": (data[:20], "header"),
        "kind": (data[:4] + b"\x02" + data[5:], "header"),
        "element size": (data[:5] + b"\x08" + data[6:], "header"),
        "logarithms' fill": (data[:6] + b"\x02\x00" + data[8:], "header"),
        "b NaN": (data[:8] + struct.pack("<d", math.nan) + data[16:], "header"),
        "b zero": (data[:8] + struct.pack("<d", 0.0) + data[16:], "header"),
        "n_exact too large": (data[:16] + struct.pack("<Q", 10**6) + data[24:], "header"),
        # (n_exact off: the exact values' frame declares another size, checked before any
        # stream is decoded; with a frame of that size, the marks do not add up to it)
        "n_exact off by one": (data[:16] + struct.pack("<Q", n_exact + 1) + data[24:], "exact values"),
        "n_exact and values one more": (data[:16] + struct.pack("<Q", n_exact + 1)
                                        + data[24:exact_at] + with_stored(stored + stored[:4]),
                                        "exact map"),
        "n_exact and values one less": (data[:16] + struct.pack("<Q", n_exact - 1)
                                        + data[24:exact_at] + with_stored(stored[:-4]),
                                        "exact map"),
        "logarithms' length": (data[:24] + struct.pack("<Q", 10**9) + data[32:], "logarithms"),
        "logarithms' chunk": (data[:32] + b"XPR1" + data[36:], "header"),
        "sign length": (data[:signs_at] + struct.pack("<Q", 10**9) + data[signs_at + 8:], "signs"),
        "sign frame": (data[:signs_at + 8] + b"\0\0\0\0" + data[signs_at + 12:], "signs"),
        "map length": (data[:map_at] + struct.pack("<Q", 10**9) + data[map_at + 8:], "exact map"),
        "map frame": (data[:map_at + 8] + b"\0\0\0\0" + data[map_at + 12:], "exact map"),
        "no map": (data[:map_at] + struct.pack("<Q", 0) + data[exact_at:], "exact map"),
        "n_exact less": (data[:16] + struct.pack("<Q", n_exact - 1) + data[24:], "exact values"),
        "exact frame": (data[:exact_at] + b"\0\0\0\0" + data[exact_at + 4:], "exact values"),
        "exact values cut": (data[:exact_at + 3], "exact values"),
        "trailing bytes": (data + b"\0", "exact values"),
    }
    for name, (bad, part) in cases.items():
        with pytest.raises(CorruptChunkError, match="zdt.predict") as info:
            config.decode(bad, x.dtype, x.shape)
        assert info.value.part == part, (name, info.value)
    for cut in range(len(data)):
        with pytest.raises(CorruptChunkError):
            config.decode(data[:cut], x.dtype, x.shape)
    with pytest.raises(CorruptChunkError) as info:
        config.decode(cases["logarithms' fill"][0], x.dtype, x.shape)
    assert str(info.value) == "zdt.predict: the logarithms' fill field is 2, not 0 (-inf) or 1 (NaN)"
    # a chunk without signs and exact map whose one NaN logarithm the header does not count
    # (the decoder's loop for chunks without signs or exact values still counts NaN logarithms)
    # (no element misses: no exact map)
    y = smooth_positive((20, 30))
    y[3, 3] = np.nan
    plain = PredictConfig.create(rel_error=1e-3).encode(y)
    length = struct.unpack_from("<Q", plain, 24)[0]
    assert struct.unpack_from("<QQ", plain, 32 + length) == (0, 0)     # (no signs, no map)
    uncounted = plain[:16] + struct.pack("<Q", 0) + plain[24:32 + length + 16]
    with pytest.raises(CorruptChunkError, match="mark 1 elements exact, the header counts 0") as info:
        config.decode(uncounted, y.dtype, y.shape)
    assert info.value.part == "exact map"


def test_a_masked_field_s_missing_values_are_the_logarithms_fill():
    """More missing values (NaN, stored exactly) than zeros: the logarithms' chunk takes NaN
    as its fill value (masked, no symbols), the zeros' -inf raw; fewer: -inf."""
    i, j = np.mgrid[0:60, 0:80]
    x = 280 + 10 * np.sin(i / 9) * np.cos(j / 11)
    x[(i - 30) ** 2 + (j - 40) ** 2 < 400] = np.nan
    x[0, :5] = 0.0
    config = PredictConfig.create(rel_error=1e-3)
    data = config.encode(x, np.nan)
    assert data[6:8] == b"\x01\x00" and data[32:37] == b"ZPR2\x02"
    y = config.decode(data, x.dtype, x.shape, np.nan)
    check_relative(x, y, 1e-3, None)
    assert np.array_equal(predict_reference.decode(data, x.dtype, x.shape, None, None).view("u8"),
                          y.view("u8"))
    rain = np.where(np.isnan(x), 0.0, x)
    rain[:3, :3] = np.nan
    data = config.encode(rain, np.nan)
    assert data[6:8] == b"\x00\x00"
    check_relative(rain, config.decode(data, rain.dtype, rain.shape, np.nan), 1e-3, None)



def test_the_logarithms_chunk_never_looks_back_at_the_reference_mask():
    """A land mask repeated along time and given as the configuration's reference: the values'
    masks may look back at it, the logarithms' chunk (whose masked elements are the NaN and
    zeros) never does (the spec): its reference field is 0, and the chunk decodes."""
    from zdt.codecs.predict import ReferenceMask

    t, i, j = np.mgrid[0:3, 0:60, 0:80]
    x = 280 + 10 * np.sin(i / 9) * np.cos(j / 11) + t
    land = (i - 30) ** 2 + (j - 40) ** 2 < 400
    x[land] = np.nan
    config = PredictConfig.create(rel_error=1e-3, mask=ReferenceMask.of(land[0]))
    data = config.encode(x, np.nan)
    assert data[32:37] == b"ZPR2\x02" and data[38:40] == b"\x00\x00"
    y = config.decode(data, x.dtype, x.shape, np.nan)
    check_relative(x, y, 1e-3, None)
    assert np.array_equal(predict_reference.decode(data, x.dtype, x.shape, None, None).view("u8"),
                          y.view("u8"))

def test_a_newer_format_is_refused_naming_its_version():
    data = PredictConfig.create(rel_error=1e-3).encode(smooth_positive((4, 5)))
    with pytest.raises(CorruptChunkError, match="format 4, newer than this decoder reads"):
        PredictConfig.create(abs_error=1).decode(b"ZPR4" + data[4:], np.dtype("f8"), (4, 5))
    # a format-2 chunk decodes whatever bound the codec was given (the chunk carries its own);
    # a format-1 chunk needs the absolute bound
    assert PredictConfig.create(abs_error=1).decode(data, np.dtype("f8"), (4, 5)).shape == (4, 5)
    one = PredictConfig.create(abs_error=1).encode(smooth_positive((4, 5)))
    with pytest.raises(CorruptChunkError, match="rel_error"):
        PredictConfig.create(rel_error=1e-3).decode(one, np.dtype("f8"), (4, 5))


def test_config_errors_name_the_key():
    for kwargs, key in [({"rel_error": 0}, "rel_error"), ({"rel_error": -1e-3}, "rel_error"),
                        ({"rel_error": math.inf}, "rel_error"), ({"rel_error": "1e-3"}, "rel_error"),
                        ({"rel_error": 1e-3, "abs_error": 1.0}, "rel_error"), ({}, "abs_error")]:
        with pytest.raises(ConfigError) as info:
            PredictConfig.create(**kwargs)
        assert info.value.config_key == key, kwargs
    with pytest.raises(ConfigError, match="rel_error on integer arrays") as info:
        PredictConfig.create(rel_error=1e-3).encode(np.arange(5, dtype="i2"))
    assert info.value.config_key == "rel_error"
    config = PredictConfig.from_json({"rel_error": 0.01, "predictor": "lorenzo"})
    assert config.to_json() == {"rel_error": 0.01, "predictor": "lorenzo", "level": 3, "entropy": "auto"}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_in_a_zarr_array_with_zeros_negatives_a_fill_value_and_missing_chunks(dtype):
    x = smooth_positive((50, 70)).astype(dtype)
    x[10:20, 10:30] = 0.0
    x[30:, :5] = -x[30:, :5]
    x[1, 1] = -9999.0
    stored: dict = {}
    store = MemoryStore(stored)
    a = zarr.create_array(store, shape=(80, 70), chunks=(32, 32), dtype=dtype, fill_value=-9999.0,
                          serializer=PredictCodec(rel_error=1e-3), compressors=None)
    a[:50] = x
    # (both kinds of sign stream occur: the encoder keeps the smaller, chunk by chunk)
    kinds = {k: v.to_bytes()[:5] for k, v in stored.items() if k.startswith("c/")}
    assert kinds["c/0/0"] == b"ZPR2\x04" and kinds["c/1/0"] == b"ZPR2\x03"
    meta = a.metadata.to_dict()["codecs"][0]
    assert meta == {"name": "zdt.predict", "configuration": {
        "rel_error": 1e-3, "predictor": "auto", "level": 3, "entropy": "auto"}}
    b = zarr.open_array(store, mode="r")
    y = b[...]
    check_relative(x, y[:50], 1e-3, -9999.0)
    assert (y[64:] == -9999.0).all()        # chunks never written: the fill value


def test_numcodecs_face_takes_rel_error():
    import numcodecs

    from zdt.codecs.numcodecs.predict import Predict

    codec = numcodecs.get_codec({"id": "zdt.predict", "rel_error": 1e-2})
    assert isinstance(codec, Predict)
    assert codec.get_config() == {"id": "zdt.predict", "rel_error": 1e-2, "predictor": "auto",
                                  "level": 3, "entropy": "auto"}
    x = smooth_positive((13, 17)).astype("f4")
    x[2, 2] = 0.0
    data = codec.encode(x)
    y = codec.decode(data)
    check_relative(x, y, 1e-2, None)
    ref = predict_reference.decode(data[1 + 16:], x.dtype, x.shape, None, None)
    assert np.array_equal(ref.view("u4"), y.view("u4"))
