"""kernels.run_steps, the one runner under every element-wise codec and the pipeline's fused
chains: what it accepts and refuses (shapes, item sizes, byte order, alignment, read-only and
overlapping destinations), checked against NumPy's own view of the same arrays, and its
values on strided n-d views against a slow element-by-element reference."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from zdt import kernels
from zdt.codecs.cast import CastPlan
from zdt.codecs.scale_offset import cached_plan
from zdt.formats import FORMATS


def f64_to_i32():
    return CastPlan(FORMATS["float64"], FORMATS["int32"], out_of_range="clamp").stage.step()


def scale_offset_f64(decode: bool = False):
    plan = cached_plan("float64", offset=3, scale=2)
    return (plan.decode_stage if decode else plan.encode_stage).step()


def expected_i32(values: np.ndarray) -> np.ndarray:
    """float64 -> int32, nearest-even, clamped: one element at a time in Python."""
    lo, hi = -2 ** 31, 2 ** 31 - 1
    return np.array([min(hi, max(lo, round(float(v)))) for v in values.reshape(-1)],
                    dtype=np.int32).reshape(values.shape)


def test_a_contiguous_run_and_its_result():
    src = np.array([0.5, 1.5, -2.5, 3e10, -3e10, 7.25])
    dst = np.zeros(6, dtype=np.int32)
    assert kernels.run_steps([f64_to_i32()], src, dst) == (-1, -1, 0, b"")
    assert dst.tolist() == expected_i32(src).tolist()


@pytest.mark.parametrize("src,dst,what", [
    (np.zeros(5), np.zeros(6, np.int32), "do not fit"),                      # shapes
    (np.zeros((2, 3)), np.zeros((3, 2), np.int32), "do not fit"),
    (np.zeros(6), np.zeros((6, 1), np.int32), "do not fit"),                 # ndim
    (np.zeros(6, np.float32), np.zeros(6, np.int32), "do not fit"),          # source item size
    (np.zeros(6), np.zeros(6, np.int64), "do not fit"),                      # destination item size
    (np.zeros(6, ">f8"), np.zeros(6, np.int32), "native-order"),
    (np.zeros(6), np.zeros(6, ">i4"), "native-order"),
    (np.zeros(7).view(np.uint8)[4:52].view(np.float64), np.zeros(6, np.int32), "aligned"),
])
def test_arrays_that_do_not_fit_the_steps_are_refused(src, dst, what):
    before = dst.copy()
    with pytest.raises(ValueError, match=what):
        kernels.run_steps([f64_to_i32()], src, dst)
    assert np.array_equal(dst, before)


def test_an_unaligned_destination_is_refused():
    raw = np.zeros(4 * 6 + 1, dtype=np.uint8)
    dst = raw[1:].view(np.int32)
    assert not dst.flags.aligned
    with pytest.raises(ValueError, match="aligned"):
        kernels.run_steps([f64_to_i32()], np.zeros(6), dst)


def test_elements_off_their_size_are_refused_whatever_the_dtype_says():
    """A void or bytes type is aligned for NumPy at any address; the kernels store whole
    elements, so its data and strides must be multiples of the element size (up to 8)."""
    raw = np.zeros(8 * 6 + 8, dtype=np.uint8)
    cases = [(np.zeros(6), raw[1:25].view("V4")),                      # destination at +1
             (raw[4:52].view("V8"), np.zeros(6, np.int32)),             # source at +4
             (np.zeros(6), raw[:30].view("V1").reshape(6, 5)[:, :4].view("V4").reshape(6))]  # stride 5
    for src, dst in cases:
        assert src.flags.aligned and dst.flags.aligned
        with pytest.raises(ValueError, match="aligned to their elements"):
            kernels.run_steps([f64_to_i32()], src, dst)
    assert not raw.any()
    fine = np.zeros(6 * 4, np.uint8).view("V4")      # a void type on its boundary is accepted
    assert kernels.run_steps([f64_to_i32()], np.arange(6.0), fine)[0] == -1
    assert np.frombuffer(fine.tobytes(), np.int32).tolist() == list(range(6))


def test_a_read_only_destination_is_refused():
    dst = np.zeros(6, np.int32)
    dst.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        kernels.run_steps([f64_to_i32()], np.ones(6), dst)
    assert not dst.any()


@pytest.mark.parametrize("src", [[1.0, 2.0], (1.0, 2.0), memoryview(np.ones(2))])
def test_anything_but_an_ndarray_is_a_type_error(src):
    with pytest.raises(TypeError):
        kernels.run_steps([f64_to_i32()], src, np.zeros(2, np.int32))
    with pytest.raises(TypeError):
        kernels.run_steps([f64_to_i32()], np.ones(2), None)


def test_step_lists_that_do_not_chain_are_refused():
    with pytest.raises(ValueError, match="1 to 8 steps"):
        kernels.run_steps([], np.ones(2), np.zeros(2))
    with pytest.raises(ValueError, match="step 1 reads 8-byte elements, step 0 writes 4-byte"):
        kernels.run_steps([f64_to_i32(), scale_offset_f64()], np.ones(2), np.zeros(2))


def test_the_very_same_memory_only_for_a_step_that_works_in_place_or_a_chain():
    x = np.arange(10.0)
    kernels.run_steps([scale_offset_f64()], x, x)                 # (x - 3) * 2, in place
    assert x.tolist() == [(v - 3) * 2 for v in range(10)]
    kernels.run_steps([scale_offset_f64(True), scale_offset_f64()], x, x)
    assert x.tolist() == [(v - 3) * 2 for v in range(10)]
    y = np.arange(8, dtype=np.int32)
    step = CastPlan(FORMATS["int32"], FORMATS["float32"]).stage.step()
    with pytest.raises(ValueError, match="cannot write over its own input"):
        kernels.run_steps([step], y, y.view(np.float32))
    assert y.tolist() == list(range(8))


# Two views of one buffer (any offsets, steps including negative ones, lengths): run_steps
# refuses them exactly when NumPy says they may share memory (its bounds test), unless they
# are the very same memory with the same strides.
@st.composite
def two_views(draw):
    buf = np.arange(64.0)
    n = draw(st.integers(1, 12))

    def view():
        step = draw(st.sampled_from([-3, -2, -1, 1, 2, 3]))
        span = (n - 1) * abs(step)
        start = draw(st.integers(0, 63 - span))
        return buf[start + span::step][:n] if step < 0 else buf[start::step][:n]
    a = view()
    return a, (a if draw(st.booleans()) else view())


@given(two_views())
def test_overlap_is_refused_exactly_when_numpy_sees_shared_memory(pair):
    src, other = pair
    same = (src.__array_interface__["data"][0] == other.__array_interface__["data"][0]
            and src.strides == other.strides)
    shared = np.may_share_memory(src, other)
    expected = (src - 3) * 2
    try:
        kernels.run_steps([scale_offset_f64()], src, other)
    except ValueError as e:
        assert "overlap" in str(e) and shared and not same
    else:
        assert same or not shared
        assert np.array_equal(other, expected)


@given(st.data())
def test_strided_nd_views_give_the_reference_values_in_place(data):
    ndim = data.draw(st.integers(0, 4))
    shape = tuple(data.draw(st.lists(st.integers(1, 5), min_size=ndim, max_size=ndim)))
    steps_ = tuple(data.draw(st.sampled_from([-2, -1, 1, 2])) for _ in shape)
    big = np.random.default_rng(data.draw(st.integers(0, 99))).normal(0, 1e9, [2 * s for s in shape])
    out_big = np.full([3 * s for s in shape], -7, dtype=np.int32)
    if ndim:
        src = big[tuple(slice(None, None, k) for k in steps_)][tuple(slice(0, s) for s in shape)]
        dst = out_big[tuple(slice(1, None, 3) for _ in shape)][tuple(slice(0, s) for s in shape)]
    else:                                                       # 0-d arrays (indexing gives scalars)
        src, dst = big, out_big
    if data.draw(st.booleans()) and ndim > 1:
        dst = np.full(shape[::-1], -7, dtype=np.int32).T        # F-ordered destination
    before = out_big.copy()
    assert kernels.run_steps([f64_to_i32()], src, dst)[0] == -1
    assert np.array_equal(dst, expected_i32(src))
    if ndim and dst.base is out_big:
        touched = np.zeros(out_big.shape, bool)
        touched[tuple(slice(1, None, 3) for _ in shape)][tuple(slice(0, s) for s in shape)] = True
        assert np.array_equal(out_big[~touched], before[~touched])    # nothing else written


def test_a_failing_element_is_named_by_its_c_order_index_in_the_source():
    src = np.zeros((3, 4))
    src[2, 1] = np.nan                                      # NaN has no int32 value
    step = CastPlan(FORMATS["float64"], FORMATS["int32"]).stage.step()
    index, k, status, raw = kernels.run_steps([step], src.T.copy().T, np.zeros((3, 4), np.int32))
    assert (index, k) == (2 * 4 + 1, 0) and status != 0
    assert np.isnan(np.frombuffer(raw, np.float64)[0])
