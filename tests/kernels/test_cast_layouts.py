"""Memory layouts, block boundaries and the fast/exact split: any input layout gives the same
values in the same places, and the fast loops agree with the exact path on arrays that span
many blocks."""

from __future__ import annotations

import threading
import zlib

import numpy as np
import pytest

import reference
from strategies import ALL_NAMES, edge_values
from zdt import kernels
from zdt.codecs.cast import CastPlan
from zdt.errors import CastError
from zdt.formats import FORMATS

BLOCK = kernels.BLOCK_SIZE
BUILDS = kernels.available()


def plan(source, target, **kw):
    return CastPlan(FORMATS[source], FORMATS[target], **kw)


def mixed_array(dtype, n, seed):
    """n values: mostly random over the type, a fifth of them edge values."""
    rng = np.random.default_rng(seed)
    dtype = np.dtype(dtype)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        arr = rng.integers(int(info.min), int(info.max), n, dtype=dtype, endpoint=True)
        arr[: n // 2] = rng.integers(max(int(info.min), -300), min(int(info.max), 70000), n // 2)
    else:
        with np.errstate(over="ignore"):
            arr = (rng.standard_normal(n) * rng.choice([1, 100, 1e5, 1e10], n)).astype(dtype)
    edges = np.array(edge_values(dtype), dtype=dtype)
    where = rng.random(n) < 0.2
    arr[where] = rng.choice(edges, where.sum())
    return arr


@pytest.mark.parametrize("build", BUILDS)
@pytest.mark.parametrize("target", ALL_NAMES)
@pytest.mark.parametrize("source", ALL_NAMES)
def test_fast_loops_agree_with_exact_path_across_blocks(source, target, build):
    arr = mixed_array(source, 3 * BLOCK + 17, seed=zlib.crc32(f"{source}{target}".encode()))
    rounding_cycle = ["nearest-even", "towards-zero", "towards-positive", "towards-negative", "nearest-away"]
    oors = ["clamp", "wrap"] if np.dtype(target).kind in "iu" else ["clamp"]
    for i, rounding in enumerate(rounding_cycle):
        oor = oors[i % len(oors)]
        pairs = [["NaN", 0]] if np.dtype(source).kind == "f" else []
        p = plan(source, target, rounding=rounding, out_of_range=oor, scalar_map=pairs)
        try:
            with kernels.use(build):
                fast = p.cast(arr)
        except CastError as e:
            # only infinities into integers can fail here (NaN is mapped); both paths agree
            with pytest.raises(CastError) as info:
                p.cast(arr, fast=False)
            assert info.value.index == e.index
            continue
        exact = p.cast(arr, fast=False)
        same = reference.same_bits_or_nan(fast, exact)
        bad = np.flatnonzero(~same)
        assert bad.size == 0, (rounding, oor, arr[bad[:5]], fast[bad[:5]], exact[bad[:5]])


@pytest.mark.parametrize("where", [0, BLOCK - 1, BLOCK, BLOCK + 1, 2 * BLOCK + 5, 3 * BLOCK + 15])
@pytest.mark.parametrize(("build", "fast"), [(lv, True) for lv in BUILDS] + [(BUILDS[0], False)])
def test_first_error_index_across_block_boundaries(where, build, fast):
    arr = np.zeros(3 * BLOCK + 17)
    arr[where] = 1000.0
    arr[-1] = 2000.0
    with pytest.raises(CastError) as info, kernels.use(build):
        plan("float64", "int8").cast(arr, fast=fast)
    assert info.value.index == (where,)
    assert info.value.value == 1000.0


def _layouts(base):
    yield "C", base
    yield "F", np.asfortranarray(base)
    yield "strided", np.repeat(np.repeat(base, 2, axis=0), 3, axis=1)[::2, ::3]
    yield "transposed", base.T.copy().T
    ro = base.copy()
    ro.flags.writeable = False
    yield "read-only", ro
    yield "byteswapped", base.astype(base.dtype.newbyteorder())


@pytest.mark.parametrize("source,target", [("float64", "uint8"), ("int32", "float16"),
                                           ("uint16", "int8"), ("float16", "float64")])
def test_every_layout_gives_the_same_values_in_the_same_places(source, target):
    base = mixed_array(source, 7 * 11, seed=3).reshape(7, 11)
    p = plan(source, target, out_of_range="clamp", scalar_map=[["NaN", 0]] if source.startswith("float") and target.startswith(("int", "uint")) else [])
    expected = p.cast(np.ascontiguousarray(base))
    for name, arr in _layouts(base):
        got = p.cast(arr)
        assert got.shape == arr.shape, name
        assert reference.same_bits_or_nan(got, expected).all(), name
        if name == "F":
            assert got.flags.f_contiguous


def test_f_order_error_index_is_the_true_nd_index():
    arr = np.asfortranarray(np.zeros((4, 5)))
    arr[3, 1] = 999.0
    with pytest.raises(CastError) as info:
        plan("float64", "int8").cast(arr)
    assert info.value.index == (3, 1)


@pytest.mark.parametrize("shape", [(), (0,), (3, 0), (0, 0, 2)])
def test_zero_d_and_empty(shape):
    arr = np.full(shape, 2.5)
    out = plan("float64", "int16").cast(arr)
    assert out.shape == shape and out.dtype == np.int16
    if shape == ():
        assert out[()] == 2


def test_zero_d_error_has_empty_index():
    with pytest.raises(CastError) as info:
        plan("float64", "int8").cast(np.array(np.nan))
    assert info.value.index == ()


def test_wrong_input_dtype_is_rejected():
    with pytest.raises(TypeError, match="expected an array of float64, got float32"):
        plan("float64", "int8").cast(np.zeros(3, np.float32))


def test_out_parameter():
    p = plan("float64", "int16")
    out = np.empty(5, np.int16)
    assert p.cast(np.arange(5.0), out=out) is out
    assert out.tolist() == [0, 1, 2, 3, 4]
    with pytest.raises(ValueError, match="out must be"):
        p.cast(np.arange(5.0), out=np.empty(5, np.int32))
    # an out of another memory order is filled through a temporary
    f_out = np.empty((2, 3), np.int16, order="F")
    assert p.cast(np.arange(6.0).reshape(2, 3), out=f_out) is f_out
    assert f_out.tolist() == [[0, 1, 2], [3, 4, 5]]
    with pytest.raises(ValueError, match="out must be"):
        p.cast(np.arange(6.0), out=np.empty(6, np.int16)[::-1].copy().reshape(2, 3))


def test_out_sharing_memory_with_the_input():
    p = plan("float64", "int64")
    a = np.array([1.5, 1e19, 2.0])
    with pytest.raises(CastError) as info:
        p.cast(a, out=a.view(np.int64))
    assert info.value.index == (1,)
    p2 = plan("float32", "uint32", scalar_map=[["0x7fc00001", 7]])
    b = np.array([0x7FC00001, 0x3F800000], np.uint32).view(np.float32)
    assert p2.cast(b, out=b.view(np.uint32)).tolist() == [7, 1]


def test_unaligned_input_and_output():
    raw = np.zeros(8 * 5 + 1, np.uint8)
    x = np.frombuffer(raw.data, dtype=np.float64, count=5, offset=1)
    assert not x.flags.aligned
    out_raw = np.zeros(4 * 5 + 1, np.uint8)
    out = np.frombuffer(out_raw.data, dtype=np.int32, count=5, offset=1)
    out.flags.writeable = True
    x = x.copy()
    x[:] = [1.5, 2.5, -3.5, 4.0, 5.0]
    unaligned = np.frombuffer(raw.data, dtype=np.float64, count=5, offset=1)
    raw[1:] = x.view(np.uint8)
    assert plan("float64", "int32").cast(unaligned).tolist() == [2, 2, -4, 4, 5]
    plan("float64", "int32").cast(unaligned, out=out)
    assert out.tolist() == [2, 2, -4, 4, 5]


def test_threads_cast_concurrently_with_correct_results():
    p = plan("float64", "uint8", out_of_range="clamp",
             scalar_map=[["NaN", 0], ["Infinity", 255], ["-Infinity", 0]])
    chunks = [mixed_array("float64", 200_000, seed=s) for s in range(4)]
    expected = [p.cast(c) for c in chunks]
    results = [None] * 4

    def work(i):
        for _ in range(5):
            results[i] = p.cast(chunks[i])

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for got, exp in zip(results, expected):
        assert np.array_equal(got, exp)


def test_large_outputs_in_place_and_beside_other_writers():
    """Outputs in an array of 4 MB and more get each 2 MB region touched at its end before it
    is written (an atomic OR with zero, possibly in a byte another thread is writing): in
    place the input still reads right, a strided or offset view gets every value, and threads
    writing adjacent, unaligned parts of one array (as the pipeline does with chunks, large
    ones and small ones, into fresh memory) never disturb each other's bytes."""
    from zdt.codecs.scale_offset import cached_plan as so_plan

    rng = np.random.default_rng(3)
    x = rng.uniform(-1e3, 1e3, 1_500_003)                          # ~12 MB, odd length
    so = so_plan("float64", 5.0, 3.0)
    expected = (x - 5.0) * 3.0
    inplace = x.copy()
    assert so.encode(inplace, out=inplace) is inplace
    assert np.array_equal(inplace, expected)
    shifted = np.empty(x.size + 3)[3:]                            # not 2 MB aligned, odd start
    so.encode(x, out=shifted)
    assert np.array_equal(shifted, expected)
    big = np.empty((3, x.size))
    so.encode(np.broadcast_to(x, (3, x.size)), out=big[::-1])   # negative outer stride
    assert all(np.array_equal(row, expected) for row in big)
    data = rng.uniform(-1e3, 1e3, 5_000_001)
    want = so.encode(data)
    out = np.full(data.size, 77.0)
    cuts = [0, 1_234_567, 2_500_001, 3_700_003, data.size]   # 8-10 MB parts, off 2 MB bounds
    for _ in range(3):
        threads = [threading.Thread(target=so.encode, args=(data[a:b],), kwargs={"out": out[a:b]})
                   for a, b in zip(cuts, cuts[1:])]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert np.array_equal(out, want)
    # small parts (a region holds several, each thread's touch lands in others' parts)
    cuts = list(range(0, data.size, 65_537)) + [data.size]
    parts = list(zip(cuts, cuts[1:]))
    for _ in range(3):
        out = np.empty(data.size)

        def worker(k: int) -> None:
            for a, b in parts[k::4]:
                so.encode(data[a:b], out=out[a:b])

        threads = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert np.array_equal(out, want)


def test_kernel_builds(tmp_path):
    """The best build the CPU runs is active; ZDT_KERNELS caps it; a bad name is an error."""
    import subprocess
    import sys

    assert kernels.build() == kernels.available()[-1]
    assert kernels.available()[0] == "baseline"
    code = "from zdt import kernels; print(kernels.build())"
    # run outside the source tree: `python -c` puts the working directory first on sys.path
    for cap in kernels.available():
        out = subprocess.run([sys.executable, "-c", code], env={"ZDT_KERNELS": cap, "PATH": ""},
                             capture_output=True, text=True, cwd=tmp_path)
        assert out.stdout.strip() == cap, out.stderr
    out = subprocess.run([sys.executable, "-c", code], env={"ZDT_KERNELS": "sse9", "PATH": ""},
                         capture_output=True, text=True, cwd=tmp_path)
    assert out.returncode != 0 and "ZDT_KERNELS='sse9' is not one of baseline, avx2, avx512" in out.stderr
    with pytest.raises(ValueError, match="not available"):
        with kernels.use("avx1024"):
            pass
