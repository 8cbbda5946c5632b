# Fused chains of array -> array codecs: each block of BLOCK elements goes through every step
# (cast_block / so_block, in the order given) while it is in cache, from any strided source
# region into any strided destination region, with no full-size intermediate. Included by each
# kernel build after _cast.pxi and _scale_offset.pxi, whose per-block steps it calls (that is
# the point: the chain copies neither).

from libc.stdint cimport intptr_t

from zdt.kernels._types cimport CastKernelSpec, ScaleOffsetKernelSpec

cdef enum:
    MAX_STEPS = 8
    MAX_DIMS = 32
    STEP_CAST = 0
    STEP_SCALE_OFFSET = 1

ctypedef struct ChainStep:
    int kind                        # STEP_CAST or STEP_SCALE_OFFSET
    const CastKernel* cast
    const ScaleOffsetKernel* so
    bint decode                     # scale_offset's direction
    int out_itemsize


cdef Py_ssize_t chain_block(const uint8_t* src, uint8_t* dst, Py_ssize_t m,
                            const ChainStep* steps, int nsteps, int* status,
                            int* failed) noexcept nogil:
    """One block of m <= BLOCK elements through every step (src and dst do not overlap):
    -1 on success, else the index in the block of the first failing element, with the step
    in *failed and its status in *status."""
    cdef uint64_t a[BLOCK]          # 8 bytes per element: the widest intermediate
    cdef uint64_t b[BLOCK]
    cdef const uint8_t* cur = src
    cdef uint8_t* out
    cdef Py_ssize_t bad
    cdef int s
    for s in range(nsteps):
        out = dst if s == nsteps - 1 else (<uint8_t*>a if s % 2 == 0 else <uint8_t*>b)
        if steps[s].kind == STEP_CAST:
            bad = cast_block(cur, out, m, steps[s].cast, status)
        else:
            bad = so_block(cur, out, m, steps[s].so, steps[s].decode, status)
        if bad >= 0:
            failed[0] = s
            return bad
        cur = out
    return -1


cdef Py_ssize_t chain_run(const uint8_t* src, Py_ssize_t s_inner, int in_isz,
                          uint8_t* dst, Py_ssize_t d_inner, int out_isz, Py_ssize_t n,
                          const ChainStep* steps, int nsteps, int* status,
                          int* failed) noexcept nogil:
    """n elements spaced s_inner / d_inner bytes apart: contiguous runs go straight through,
    strided ones are gathered into / scattered from a block buffer."""
    cdef uint64_t gin[BLOCK]
    cdef uint64_t gout[BLOCK]
    cdef Py_ssize_t start = 0, m, i, bad
    cdef bint cs = s_inner == in_isz, cd = d_inner == out_isz
    cdef const uint8_t* bin_
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
        bad = chain_block(bin_, bout, m, steps, nsteps, status, failed)
        if bad >= 0:
            return start + bad
        if not cd:
            for i in range(m):
                memcpy(dst + (start + i) * d_inner, <uint8_t*>gout + i * out_isz, out_isz)
        start += m
    return -1


def chain(list steps, src, dst):
    """Run `steps` (a list of (CastKernelSpec, None) or (ScaleOffsetKernelSpec, decode)) over
    the NumPy arrays `src` -> `dst` (same shape, native order, any strides; they must not
    overlap; the caller keeps both alive), element by element in C order, without a full-size
    intermediate. Returns (index, step, status): index -1 on success, else the C-order flat
    index (in src's shape) of the first failing element, and which step failed how. The GIL
    is released."""
    cdef ChainStep cs[MAX_STEPS]
    cdef Py_ssize_t shape[MAX_DIMS]
    cdef Py_ssize_t sstr[MAX_DIMS]
    cdef Py_ssize_t dstr[MAX_DIMS]
    cdef Py_ssize_t idx[MAX_DIMS]
    cdef int nsteps = len(steps), ndim, k, status = 0, failed = -1, in_isz, out_isz
    cdef Py_ssize_t total = 1, outer, o, bad = -1, inner
    cdef const uint8_t* sp
    cdef uint8_t* dp
    cdef intptr_t s_addr, d_addr
    cdef CastKernelSpec c
    cdef ScaleOffsetKernelSpec so
    if not 0 < nsteps <= MAX_STEPS:
        raise ValueError(f"a chain has 1 to {MAX_STEPS} steps, got {nsteps}")
    for k in range(nsteps):
        spec, decode = steps[k]
        if isinstance(spec, CastKernelSpec):
            c = spec
            cs[k].kind = STEP_CAST
            cs[k].cast = &c.k
            cs[k].out_itemsize = c.k.exact.dst.itemsize
        else:
            so = spec
            cs[k].kind = STEP_SCALE_OFFSET
            cs[k].so = &so.k
            cs[k].decode = decode
            cs[k].out_itemsize = so.k.itemsize
    in_isz = cs[0].cast.exact.src.itemsize if cs[0].kind == STEP_CAST else cs[0].so.itemsize
    out_isz = cs[nsteps - 1].out_itemsize
    if src.shape != dst.shape or src.dtype.itemsize != in_isz or dst.dtype.itemsize != out_isz:
        raise ValueError("chain: source and destination do not fit the chain")
    ndim = len(src.shape)
    if ndim > MAX_DIMS:
        raise ValueError(f"chain: at most {MAX_DIMS} dimensions")
    for k in range(ndim):
        shape[k] = src.shape[k]
        sstr[k] = src.strides[k]
        dstr[k] = dst.strides[k]
        total *= shape[k]
    if total == 0:
        return -1, -1, 0
    if not dst.flags.writeable:
        raise ValueError("chain: the destination is read-only")
    s_addr = src.__array_interface__["data"][0]
    d_addr = dst.__array_interface__["data"][0]
    if ndim == 0 or (src.flags.c_contiguous and dst.flags.c_contiguous):
        # one run over everything
        ndim = 1
        shape[0] = total
        sstr[0] = in_isz
        dstr[0] = out_isz
    inner = shape[ndim - 1]
    outer = total // inner
    with nogil:
        for k in range(ndim):
            idx[k] = 0
        for o in range(outer):
            sp = <const uint8_t*>s_addr
            dp = <uint8_t*>d_addr
            for k in range(ndim - 1):
                sp += idx[k] * sstr[k]
                dp += idx[k] * dstr[k]
            bad = chain_run(sp, sstr[ndim - 1], in_isz, dp, dstr[ndim - 1], out_isz, inner,
                            cs, nsteps, &status, &failed)
            if bad >= 0:
                bad += o * inner
                break
            k = ndim - 2
            while k >= 0:
                idx[k] += 1
                if idx[k] < shape[k]:
                    break
                idx[k] = 0
                k -= 1
    return bad, failed, status
