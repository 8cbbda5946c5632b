# cython: language_level=3
"""Running per-block steps (see _steps.pxd): any list of them over any strided n-d source and
destination, block by block, with no full-size intermediate. Compiled once: the steps carry
the function of the kernel build that made them."""

from libc.stdint cimport intptr_t, uint8_t, uint64_t
from libc.string cimport memcpy

from zdt.kernels._num cimport BLOCK
from zdt.kernels._portable cimport zdt_touch

cimport numpy as cnp

cnp.import_array()

cdef enum:
    MAX_STEPS = 8
    MAX_DIMS = 32
    LARGE_OUTPUT = 4 * 1024 * 1024
    REGION = 2 * 1024 * 1024
    STREAM_OUTPUT = 12 * 1024 * 1024

# Writing a large output into freshly allocated memory (what a codec returns) costs page faults:
# the kernel clears each 2 MB huge page (NumPy asks for them) on its first touch. A forward
# loop whose first store into each 2 MB region is that region's *last* byte runs ~1.5x faster
# than one that faults at the region's start, as fast as memcpy (docs/design.md, "Fresh
# memory"; bench/fresh_memory.c); on memory already mapped the touch costs one store per 2 MB.
# "Large" is the size of the array that owns the destination's memory, so a chunk decoded into
# its region of a large output touches too, and the byte touched may lie outside this call's
# range (a neighbouring chunk's, written by another thread): the touch is an atomic OR with
# zero, which never changes a byte or loses a concurrent store, and never leaves the owner.
#
# A step may also have a variant that writes with streaming stores (Step.run_stream, see
# _stream.h), which skip reading each destination line before writing it. run_steps uses it as
# the last step of a chain into a contiguous destination whose owning memory (as for the
# touch) is at least STREAM_OUTPUT bytes: data that size has mostly left the caches by the
# time the call returns anyway, while a smaller output (a pipeline chunk its compressor reads
# next) is worth keeping in cache. `python bench/bench_cast.py --stream` measures both sides:
# here (32 MB L3), streaming / ordinary for a cast followed by a read of its output was
# 1.45-1.50 at 1 MB, 1.12-1.21 at 7.6 MB, 0.89-0.93 from 15 MB; the cast alone 0.77-0.83 from
# 15 MB.


cdef intptr_t _owner_end(cnp.ndarray dst, intptr_t d_addr, Py_ssize_t nbytes,
                        Py_ssize_t* owner_bytes):
    """The end of the memory dst lies in, when that memory is large (see REGION), else 0: the
    end of the contiguous array that owns dst's memory, or dst's own end; its size in
    *owner_bytes (0 when not large)."""
    cdef object base = cnp.get_array_base(dst)
    cdef cnp.ndarray owner
    owner_bytes[0] = 0
    if isinstance(base, cnp.ndarray):
        owner = <cnp.ndarray>base
        if (cnp.PyArray_NBYTES(owner) >= LARGE_OUTPUT
                and (cnp.PyArray_IS_C_CONTIGUOUS(owner) or cnp.PyArray_IS_F_CONTIGUOUS(owner))):
            owner_bytes[0] = cnp.PyArray_NBYTES(owner)
            return <intptr_t>cnp.PyArray_DATA(owner) + owner_bytes[0]
    if nbytes >= LARGE_OUTPUT and cnp.PyArray_IS_C_CONTIGUOUS(dst):
        owner_bytes[0] = nbytes
        return d_addr + nbytes
    return 0


cdef class BlockStep:
    """One kernel step, ready to run (made by a kernel build's step factory)."""

    def __init__(self):
        raise TypeError("BlockStep objects come from a kernel build's step factories")

    @property
    def in_itemsize(self):
        return self.step.in_itemsize

    @property
    def out_itemsize(self):
        return self.step.out_itemsize

    @property
    def in_place(self):
        return bool(self.step.in_place)

    @property
    def streams(self):
        """Whether the step has a variant writing with streaming stores (see _stream.h)."""
        return self.step.run_stream != NULL


cdef BlockStep make_step(block_fn run, const void* params, object spec, int in_itemsize,
                         int out_itemsize, bint in_place, str build, block_fn run_stream=NULL):
    cdef BlockStep s = BlockStep.__new__(BlockStep)
    s.step.run = run
    s.step.run_stream = run_stream
    s.step.params = params
    s.step.in_itemsize = in_itemsize
    s.step.out_itemsize = out_itemsize
    s.step.in_place = in_place
    s.spec = spec
    s.build = build
    return s


cdef Py_ssize_t chain_block(const uint8_t* src, uint8_t* dst, Py_ssize_t m,
                            const Step* steps, int nsteps, uint8_t* a, uint8_t* b,
                            int* status, int* failed, const uint8_t** failed_in) noexcept nogil:
    """One block through every step, intermediates alternating between the scratch blocks a
    and b: -1, or the index of the first failing element (its step in *failed, that step's
    input block in *failed_in)."""
    cdef const uint8_t* cur = src
    cdef uint8_t* out
    cdef Py_ssize_t bad
    cdef int s
    for s in range(nsteps):
        out = dst if s == nsteps - 1 else (a if s % 2 == 0 else b)
        bad = steps[s].run(cur, out, m, steps[s].params, status)
        if bad >= 0:
            failed[0] = s
            failed_in[0] = cur
            return bad
        cur = out
    return -1


cdef Py_ssize_t chain_run(const uint8_t* src, Py_ssize_t s_inner, int in_isz,
                          uint8_t* dst, Py_ssize_t d_inner, int out_isz, Py_ssize_t n,
                          const Step* steps, int nsteps, int* status, int* failed,
                          uint8_t* failed_value, intptr_t touch_end) noexcept nogil:
    """n elements spaced s_inner / d_inner bytes apart: contiguous runs go straight through,
    strided ones are gathered into / scattered from a block buffer. On a failure the failing
    element's input to its step is copied to failed_value (8 bytes). With touch_end (the end
    of the memory dst lies in; 0: no touching), each 2 MB region of a contiguous destination
    is first touched at its end (see REGION)."""
    cdef uint64_t a[BLOCK]           # 8 bytes per element: the widest intermediate
    cdef uint64_t b[BLOCK]
    cdef uint64_t gin[BLOCK]
    cdef uint64_t gout[BLOCK]
    cdef Py_ssize_t start = 0, m, i, bad
    cdef bint cs = s_inner == in_isz, cd = d_inner == out_isz
    cdef bint touch = touch_end != 0 and cd
    cdef intptr_t touched = <intptr_t>dst, block_end
    cdef const uint8_t* bin_
    cdef const uint8_t* where = NULL
    cdef uint8_t* bout
    while start < n:
        m = n - start if n - start < BLOCK else BLOCK
        if cs:
            bin_ = src + start * in_isz
        else:
            for i in range(m):
                memcpy(<uint8_t*>gin + i * in_isz, src + (start + i) * s_inner, in_isz)
            bin_ = <const uint8_t*>gin
        bout = dst + start * out_isz if cd else <uint8_t*>gout
        block_end = <intptr_t>(bout + m * out_isz)
        if touch and block_end > touched:
            # the 2 MB region of the block's last byte, touched at its end (or the owner's)
            touched = ((block_end - 1) | (REGION - 1)) + 1
            if touched > touch_end:
                touched = touch_end
            zdt_touch(<uint8_t*>(touched - 1))
        bad = chain_block(bin_, bout, m, steps, nsteps, <uint8_t*>a, <uint8_t*>b, status,
                          failed, &where)
        if bad >= 0:
            memcpy(failed_value, where + bad * steps[failed[0]].in_itemsize,
                   steps[failed[0]].in_itemsize)
            return start + bad
        if not cd:
            for i in range(m):
                memcpy(dst + (start + i) * d_inner, <uint8_t*>gout + i * out_isz, out_isz)
        start += m
    return -1


def run_steps(steps, cnp.ndarray src not None, cnp.ndarray dst not None, stream=None):
    """Run `steps` (BlockStep objects, in order) over the NumPy arrays src -> dst: the same
    shape, native byte order, aligned, any strides; they must not overlap, except that the
    two may be the very same memory (same address and strides) when there are several steps
    or the one step works in place. Elements go in C order; no full-size intermediate exists.
    The GIL is released.

    Returns (index, step, status, value): index -1 on success; else the C-order flat index
    (in src's shape) of the first failing element, the position of the failing step in
    `steps`, its status code, and the element's input to that step as bytes (its value at
    that stage).

    stream: None (the default) lets the size of dst's memory decide whether the last step
    writes with streaming stores (see STREAM_OUTPUT); True / False force it either way (tests
    and benchmarks). The values written are the same."""
    # The arrays are read through NumPy's C API: this call's own cost (not the elements') was
    # 3.8 us through Python attributes (__array_interface__, flags, np.may_share_memory), which
    # counts at chunks of 64K elements; 0.2 us here.
    cdef Step cs[MAX_STEPS]
    cdef Py_ssize_t shape[MAX_DIMS]
    cdef Py_ssize_t sstr[MAX_DIMS]
    cdef Py_ssize_t dstr[MAX_DIMS]
    cdef uint64_t failed_value = 0
    cdef int nsteps = _load_steps(steps, cs), ndim, k, status = 0, failed = -1
    cdef int in_isz = cs[0].in_itemsize, out_isz = cs[nsteps - 1].out_itemsize
    cdef Py_ssize_t total = 1, bad
    cdef intptr_t s_addr, d_addr, touch_end
    cdef Py_ssize_t owner_bytes = 0
    cdef bint same
    _check_pair(src, dst, in_isz, out_isz)
    ndim = cnp.PyArray_NDIM(src)
    for k in range(ndim):
        shape[k] = cnp.PyArray_DIM(src, k)
        sstr[k] = cnp.PyArray_STRIDE(src, k)
        dstr[k] = cnp.PyArray_STRIDE(dst, k)
        total *= shape[k]
    if total == 0:
        return -1, -1, 0, b""
    s_addr = <intptr_t>cnp.PyArray_DATA(src)
    d_addr = <intptr_t>cnp.PyArray_DATA(dst)
    same = (s_addr == d_addr
            and cnp.PyArray_CompareLists(cnp.PyArray_STRIDES(src), cnp.PyArray_STRIDES(dst), ndim))
    if same and nsteps == 1 and not cs[0].in_place:
        raise ValueError("run_steps: this step cannot write over its own input")
    if not same and _extents_meet(s_addr, shape, sstr, in_isz, d_addr, dstr, out_isz, ndim):
        raise ValueError("run_steps: source and destination overlap")
    if ndim == 0 or (cnp.PyArray_IS_C_CONTIGUOUS(src) and cnp.PyArray_IS_C_CONTIGUOUS(dst)):
        ndim = 1                    # one run over everything
        shape[0] = total
        sstr[0] = in_isz
        dstr[0] = out_isz
    touch_end = _owner_end(dst, d_addr, total * out_isz, &owner_bytes)
    # the last step's streaming variant replaces it in this call's copy of the steps, where the
    # destination's runs are contiguous (a strided one goes through a block buffer that is
    # read right back: no place for streaming stores)
    if ((owner_bytes >= STREAM_OUTPUT if stream is None else bool(stream))
            and dstr[ndim - 1] == out_isz and cs[nsteps - 1].run_stream != NULL):
        cs[nsteps - 1].run = cs[nsteps - 1].run_stream
    with nogil:
        bad = _run_all(s_addr, d_addr, ndim, shape, sstr, dstr, in_isz, out_isz, cs, nsteps,
                       &status, &failed, <uint8_t*>&failed_value, touch_end)
    if bad < 0:
        return -1, -1, 0, b""
    return bad, failed, status, (<char*>&failed_value)[:cs[failed].in_itemsize]


cdef int _load_steps(steps, Step* cs) except -1:
    """The BlockSteps' Step structs into cs (their count returned), each step reading the
    elements the one before writes."""
    cdef int nsteps = len(steps), k
    cdef BlockStep step
    if not 0 < nsteps <= MAX_STEPS:
        raise ValueError(f"run_steps: 1 to {MAX_STEPS} steps, got {nsteps}")
    for k in range(nsteps):
        step = steps[k]
        cs[k] = step.step
        if k and cs[k].in_itemsize != cs[k - 1].out_itemsize:
            raise ValueError(f"run_steps: step {k} reads {cs[k].in_itemsize}-byte elements, "
                             f"step {k - 1} writes {cs[k - 1].out_itemsize}-byte ones")
    return nsteps


cdef int _check_pair(cnp.ndarray src, cnp.ndarray dst, int in_isz, int out_isz) except -1:
    """Refuse a source and destination the steps cannot run over (shape, element sizes, byte
    order, alignment, a read-only destination, too many dimensions)."""
    cdef int ndim = cnp.PyArray_NDIM(src)
    if (ndim != cnp.PyArray_NDIM(dst)
            or not cnp.PyArray_CompareLists(cnp.PyArray_DIMS(src), cnp.PyArray_DIMS(dst), ndim)
            or cnp.PyArray_ITEMSIZE(src) != in_isz or cnp.PyArray_ITEMSIZE(dst) != out_isz):
        raise ValueError(f"run_steps: a {src.dtype} {(<object>src).shape} source and a "
                         f"{dst.dtype} {(<object>dst).shape} destination do not fit steps of "
                         f"{in_isz} -> {out_isz} bytes per element")
    if not (cnp.PyArray_ISNOTSWAPPED(src) and cnp.PyArray_ISNOTSWAPPED(dst)
            and cnp.PyArray_ISALIGNED(src) and cnp.PyArray_ISALIGNED(dst)):
        raise ValueError("run_steps: source and destination must be native-order and aligned")
    # NumPy's aligned flag follows the dtype's alignment, 1 for a void or bytes type of any
    # size: the kernels store whole int32 / float64 elements, so each element must sit on a
    # multiple of its size (up to 8) whatever the dtype says
    if not (_elements_aligned(src, in_isz) and _elements_aligned(dst, out_isz)):
        raise ValueError(f"run_steps: source and destination must be aligned to their elements "
                         f"({in_isz} and {out_isz} bytes; a {src.dtype} source and a {dst.dtype} "
                         f"destination at byte offsets {(<intptr_t>cnp.PyArray_DATA(src)) % 8} "
                         f"and {(<intptr_t>cnp.PyArray_DATA(dst)) % 8} mod 8, or strides off "
                         f"that size)")
    if not cnp.PyArray_ISWRITEABLE(dst):
        raise ValueError("run_steps: the destination is read-only")
    if ndim > MAX_DIMS:
        raise ValueError(f"run_steps: at most {MAX_DIMS} dimensions")
    return 0


cdef Py_ssize_t _run_all(intptr_t s_addr, intptr_t d_addr, int ndim, const Py_ssize_t* shape,
                         const Py_ssize_t* sstr, const Py_ssize_t* dstr, int in_isz, int out_isz,
                         Step* cs, int nsteps, int* status, int* failed, uint8_t* failed_value,
                         intptr_t touch_end) noexcept nogil:
    """Every run along the last dimension, in C order: the C-order index of the first failing
    element, or -1."""
    cdef Py_ssize_t idx[MAX_DIMS]
    cdef Py_ssize_t inner = shape[ndim - 1], outer = 1, o, bad
    cdef const uint8_t* sp
    cdef uint8_t* dp
    cdef int k
    for k in range(ndim - 1):
        outer *= shape[k]
    for k in range(ndim):
        idx[k] = 0
    for o in range(outer):
        sp = <const uint8_t*>s_addr
        dp = <uint8_t*>d_addr
        for k in range(ndim - 1):
            sp += idx[k] * sstr[k]
            dp += idx[k] * dstr[k]
        bad = chain_run(sp, sstr[ndim - 1], in_isz, dp, dstr[ndim - 1], out_isz, inner,
                        cs, nsteps, status, failed, failed_value, touch_end)
        if bad >= 0:
            return bad + o * inner
        k = ndim - 2
        while k >= 0:
            idx[k] += 1
            if idx[k] < shape[k]:
                break
            idx[k] = 0
            k -= 1
    return -1


cdef bint _elements_aligned(cnp.ndarray a, int itemsize):
    """Whether a's data and every stride (of a dimension longer than 1) are multiples of the
    largest power of two dividing itemsize, at most 8."""
    cdef intptr_t align = 1
    cdef int k
    while align < 8 and itemsize % (align * 2) == 0:
        align *= 2
    if (<intptr_t>cnp.PyArray_DATA(a)) % align:
        return False
    for k in range(cnp.PyArray_NDIM(a)):
        if cnp.PyArray_DIM(a, k) > 1 and cnp.PyArray_STRIDE(a, k) % align:
            return False
    return True


cdef void _extent(intptr_t addr, const Py_ssize_t* shape, const Py_ssize_t* strides,
                  int itemsize, int ndim, intptr_t* lo, intptr_t* hi) noexcept:
    """The lowest byte an array of at least one element spans, and one past its highest."""
    cdef int k
    lo[0], hi[0] = addr, addr + itemsize
    for k in range(ndim):
        if strides[k] < 0:
            lo[0] += (shape[k] - 1) * strides[k]
        else:
            hi[0] += (shape[k] - 1) * strides[k]


cdef bint _extents_meet(intptr_t s_addr, const Py_ssize_t* shape, const Py_ssize_t* sstr,
                       int in_isz, intptr_t d_addr, const Py_ssize_t* dstr, int out_isz,
                       int ndim) noexcept:
    """Whether the byte ranges src and dst span meet: NumPy's may_share_memory test (bounds
    only), for arrays of at least one element."""
    cdef intptr_t s_lo, s_hi, d_lo, d_hi
    _extent(s_addr, shape, sstr, in_isz, ndim, &s_lo, &s_hi)
    _extent(d_addr, shape, dstr, out_isz, ndim, &d_lo, &d_hi)
    return s_lo < d_hi and d_lo < s_hi
