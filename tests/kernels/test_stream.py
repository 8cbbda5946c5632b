"""The streaming-store loop (zdt/kernels/_stream.h): which casts have it, and that writing with
it gives what the pure-Python reference and the ordinary fast loop give, value for value and
error for error, at every alignment of the destination and across block boundaries."""

from __future__ import annotations

import itertools
import threading

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis_budget import examples

import reference
from strategies import edge_values, elements
from zdt import kernels
from zdt.codecs.cast import CastPlan
from zdt.formats import FORMATS
from zdt.kernels._types import CastStatus

BLOCK = kernels.BLOCK_SIZE
BUILDS = kernels.available()
# the builds compiled with AVX, where _stream.h has its loop (ZDT_HAVE_STREAM)
STREAMING_BUILDS = [b for b in BUILDS if b in ("avx2", "avx512")]
MODES = ["nearest-even", "towards-zero", "towards-positive", "towards-negative"]
STATUS_REASON = {CastStatus.ST_NAN: "nan", CastStatus.ST_INF: "inf", CastStatus.ST_RANGE: "out_of_range"}


def step(build, source="float64", target="int32", **kw):
    with kernels.use(build):
        return CastPlan(FORMATS[source], FORMATS[target], **kw).stage.step()


@pytest.mark.parametrize("build", BUILDS)
def test_which_casts_have_a_streaming_step(build):
    has = build in STREAMING_BUILDS
    for mode in MODES:
        for oor in ("clamp", None):
            for smap in ((), [["NaN", -1]]):
                assert step(build, rounding=mode, out_of_range=oor, scalar_map=smap).streams == has
    # what the loop does not compute: the plain step only
    others = [
        dict(rounding="nearest-away", out_of_range="clamp"),
        dict(out_of_range="wrap"),
        dict(out_of_range="clamp", scalar_map=[[1.5, 7]]),
        dict(out_of_range="clamp", scalar_map=[["NaN", 0], [2.5, 7]]),
        dict(target="int64", out_of_range="clamp"),
        dict(target="uint32", out_of_range="clamp"),
        dict(target="int16", out_of_range="clamp"),
        dict(source="float32", out_of_range="clamp"),
        dict(source="int64", out_of_range="clamp"),
        dict(target="float32"),
    ]
    for kw in others:
        assert not step(build, **kw).streams, kw


def int32_edges() -> np.ndarray:
    """Every rounding case at and around both ends of int32 and at zero."""
    big = [2.0 ** 31, -(2.0 ** 31)]
    around = [v + d for v in big for d in (-1.5, -1.0, -0.5, -0.25, 0.0, 0.25, 0.5, 1.0, 1.5)]
    around += [np.nextafter(v, s) for v in big + [2.0 ** 31 - 1, -(2.0 ** 31) - 1] for s in (-np.inf, np.inf)]
    small = [0.0, -0.0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 0.49999999999999994, 5e-324, -5e-324,
             1e300, -1e300, np.finfo(np.float64).max, -np.finfo(np.float64).max, np.nan]
    return np.array(around + small + [float(v) for v in edge_values(np.dtype("float64"))
                                      if np.isfinite(v)])


def mixed(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(n) * rng.choice([1.0, 1e3, 1e9, 1e12], n)
    ties = rng.random(n) < 0.2
    x[ties] = np.round(x[ties]) + 0.5
    edges = int32_edges()
    where = rng.random(n) < 0.25
    x[where] = rng.choice(edges, where.sum())
    return x


@pytest.mark.parametrize("build", STREAMING_BUILDS)
@pytest.mark.parametrize("oor", ["clamp", None])
@pytest.mark.parametrize("mode", MODES)
def test_streaming_writes_what_the_plain_step_writes(mode, oor, build):
    """Both steps over the same data at every destination alignment (0-7 int32 elements into a
    32-byte line) and lengths that end mid-block; with a folded "NaN" key and without, with NaN
    among the values and without (without the key, NaN fails, and so does a value beyond int32
    under error: the first failure's index, status and value must agree too)."""
    x = mixed(3 * BLOCK + 29, seed=MODES.index(mode) * 2 + (oor is None))
    for smap in ((), [["NaN", -77]]):
        s = step(build, rounding=mode, out_of_range=oor, scalar_map=smap)
        for src, off in itertools.product((x, np.nan_to_num(x, nan=0.5)), range(8)):
            for end in (src.size, off + 8, off + BLOCK + 3):
                a = np.full(src.size, 12345, np.int32)
                b = np.full(src.size, 12345, np.int32)
                ra = kernels.run_steps([s], src[off:end], a[off:end], stream=True)
                rb = kernels.run_steps([s], src[off:end], b[off:end], stream=False)
                assert ra == rb, (off, end, smap)
                if ra[0] < 0:
                    assert np.array_equal(a, b), (off, end, smap)
                else:
                    assert not smap or oor is None    # clamp with the NaN key never fails
                    # before the failing element both wrote the same values
                    assert np.array_equal(a[off:off + ra[0]], b[off:off + ra[0]])


@pytest.mark.parametrize("build", STREAMING_BUILDS)
@settings(max_examples=examples(150), deadline=None)
@given(data=st.data())
def test_streaming_matches_the_reference(build, data):
    """Against the exact pure-Python reference, on hypothesis' float64 values, at a drawn
    alignment (the loop itself runs on each 8-element group from the first 32-byte line)."""
    mode = data.draw(st.sampled_from(MODES))
    oor = data.draw(st.sampled_from(["clamp", None]))
    smap = data.draw(st.sampled_from([(), [["NaN", 3]], [["NaN", -2147483648]]]))
    vals = data.draw(st.lists(st.one_of(elements(np.dtype("float64")),
                                        st.sampled_from(list(int32_edges()))),
                              min_size=1, max_size=60))
    off = data.draw(st.integers(0, 7))
    x = np.zeros(off + len(vals))
    x[off:] = vals
    out = np.zeros(x.size, np.int32)
    got = kernels.run_steps([step(build, rounding=mode, out_of_range=oor, scalar_map=smap)],
                            x[off:], out[off:], stream=True)
    want = reference.cast_array(x[off:], np.dtype("int32"), mode, oor,
                                reference.compile_map([list(p) for p in smap], np.dtype("float64"),
                                                      np.dtype("int32")))
    if isinstance(want, tuple):
        index, reason = want
        assert got[0] == index and STATUS_REASON[got[2]] == reason, (got, want)
    else:
        assert got[0] == -1, (got, x[off:][got[0]])
        assert out[off:].tolist() == want.tolist()


@pytest.mark.parametrize("build", STREAMING_BUILDS)
def test_a_large_output_and_two_threads_writing_halves(build):
    """Outputs of 12 MB and more stream when run_steps decides (stream=None), also when two
    threads write the two halves of one such array (the stores of each are fenced before its
    call returns): the same values as the plain step, and as the exact path."""
    n = 5 * 1024 * 1024                      # 20 MB of int32
    x = np.random.default_rng(5).standard_normal(n) * 3e9
    s = step(build, rounding="towards-negative", out_of_range="clamp")
    auto = np.empty(n, np.int32)
    plain = np.empty(n, np.int32)
    assert kernels.run_steps([s], x, auto)[0] == -1
    assert kernels.run_steps([s], x, plain, stream=False)[0] == -1
    assert np.array_equal(auto, plain)
    want = np.clip(np.floor(x), -2.0 ** 31, 2.0 ** 31 - 1).astype(np.int32)
    assert np.array_equal(auto, want)
    halves = np.zeros(n, np.int32)
    results = []
    threads = [threading.Thread(target=lambda lo, hi: results.append(
        kernels.run_steps([s], x[lo:hi], halves[lo:hi])), args=(lo, hi))
        for lo, hi in ((0, n // 2 + 3), (n // 2 + 3, n))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [r[0] for r in results] == [-1, -1]
    assert np.array_equal(halves, want)


# (oor, scalar_map, a value that fails or needs a flag in some rounding mode)
SPECIALS = [
    ("clamp", (), np.inf), ("clamp", (), -np.inf), ("clamp", (), np.nan), ("clamp", (), 3e12),
    ("clamp", (), -(2.0 ** 31) - 0.5), ("clamp", [["NaN", 5]], np.nan),
    ("clamp", [["NaN", 5]], -np.inf), (None, (), np.nan), (None, (), np.inf),
    (None, (), 2.0 ** 31), (None, (), 2.0 ** 31 - 0.5), (None, (), -(2.0 ** 31) - 0.5),
    (None, (), -(2.0 ** 31) - 1), (None, (), 1e300), (None, [["NaN", -1]], np.nan),
    (None, [["NaN", -1]], -1e10),
]


@pytest.mark.parametrize("build", STREAMING_BUILDS)
@pytest.mark.parametrize("mode", MODES)
def test_the_streaming_loop_itself_flags_what_it_must(mode, build):
    """One special value inside the aligned middle of a block whose other values all cast
    without a flag: nothing else sends that block to the exact path, so the streaming loop's
    own flag decides whether the value fails as the pure-Python reference says (or gets the
    reference's value)."""
    rng = np.random.default_rng(MODES.index(mode))
    clean = rng.uniform(-2e9, 2e9, 3 * BLOCK)
    clean[::7] = np.round(clean[::7]) + 0.5                # ties
    where = BLOCK + 1029                                   # far from the block's ends
    failures = 0
    for oor, smap, value in SPECIALS:
        x = clean.copy()
        x[where] = value
        s = step(build, rounding=mode, out_of_range=oor, scalar_map=smap)
        out = np.zeros(x.size, np.int32)
        got = kernels.run_steps([s], x, out, stream=True)
        want = reference.cast_array(x[where:where + 1], np.dtype("int32"), mode, oor,
                                    reference.compile_map([list(p) for p in smap],
                                                          np.dtype("float64"), np.dtype("int32")))
        if isinstance(want, tuple):
            failures += 1
            assert got[0] == where and STATUS_REASON[got[2]] == want[1], (oor, smap, value, got)
        else:
            assert got[0] == -1, (oor, smap, value, got)
            assert out[where] == want[0], (oor, smap, value)
        plain = np.zeros(x.size, np.int32)
        assert kernels.run_steps([s], x, plain, stream=False) == got
        if got[0] < 0:
            assert np.array_equal(out, plain)
    assert failures >= 9            # NaN, infinities and beyond-range values under error


@pytest.mark.parametrize("build", STREAMING_BUILDS)
def test_streaming_as_the_last_step_of_a_chain(build):
    """[scale_offset float64 encode, cast float64 -> int32]: the cast reads the chain's scratch
    block and the exact path its copy of it; values and failures as without streaming."""
    from zdt.codecs.scale_offset import cached_plan

    with kernels.use(build):
        so = cached_plan("float64", offset=3, scale=2).encode_stage.step()
    x = mixed(3 * BLOCK + 29, seed=11)
    for oor, smap in (("clamp", [["NaN", 9]]), (None, ())):
        chain = [so, step(build, rounding="towards-positive", out_of_range=oor, scalar_map=smap)]
        # as is (under error, a value beyond int32 fails), and within +-1e9 (nothing fails)
        for src, castable in ((x, False), (np.clip(np.nan_to_num(x, nan=1.0), -1e9, 1e9), True)):
            for off in (0, 3):
                a = np.zeros(src.size, np.int32)
                b = np.zeros(src.size, np.int32)
                ra = kernels.run_steps(chain, src[off:], a[off:], stream=True)
                rb = kernels.run_steps(chain, src[off:], b[off:], stream=False)
                assert ra == rb
                if castable:
                    assert ra[0] == -1
                if ra[0] < 0:
                    assert np.array_equal(a, b)


@pytest.mark.parametrize("build", STREAMING_BUILDS)
def test_streaming_into_other_layouts(build):
    """Forced on, a strided or F-ordered destination takes the ordinary loop (only contiguous
    runs stream): the same values as without streaming. A 4-byte destination off a 4-byte
    boundary (a void view of bytes at an odd offset, which NumPy calls aligned) is refused
    before anything is written: no store of either loop may land off its element."""
    s = step(build, rounding="nearest-even", out_of_range="clamp", scalar_map=[["NaN", 0]])
    x = mixed(4 * BLOCK, seed=12).reshape(64, -1)
    want = np.zeros(x.shape, np.int32)
    assert kernels.run_steps([s], x, want, stream=False)[0] == -1
    for dst in (np.zeros(x.shape, np.int32, order="F"), np.zeros((64, 2 * x.shape[1]), np.int32)[:, ::2]):
        assert kernels.run_steps([s], x, dst, stream=True)[0] == -1
        assert np.array_equal(dst, want)
    raw = np.zeros(4 * x.size + 1, np.uint8)
    odd = raw[1:].view("V4").reshape(x.shape)
    assert odd.flags.aligned
    for stream in (True, False):
        with pytest.raises(ValueError, match="aligned to their elements"):
            kernels.run_steps([s], x, odd, stream=stream)
    assert not raw.any()
