# scale_offset kernels: encode out = (x - offset) * scale, decode out = x / scale + offset, in the
# array's own data type, checked; the per-block step `so_block` (run by run_steps in _steps.pyx).
# Included by each kernel build next to _cast.pxi (independent of it: shared helpers come from
# _num.pxd and _mini.pxd).
#
# Integers: every intermediate and final value must be representable, and decode division must
# be exact. 8- and 16-bit types compute in 32 bits, 32-bit types in 64 bits, and range-check
# (branch-free, vectorises); 64-bit types use the compilers' overflow builtins in one checked
# pass; sub-byte types (int4, ...) are checked element by element against their logical range.
# Floats: IEEE arithmetic in the type; small formats (float16, bfloat16, float8/6/4) compute
# each operation in float64 and round it to the format (exact for + - * where the operands fit,
# and double rounding is innocuous for all four since 53 >= 2p + 2 for every p <= 11). A finite
# input whose result is not finite (or, in a format without infinities, beyond its range) is an
# error; NaN and infinities propagate.
#
# Fast loops only report whether a block holds a failing element; then the block is walked with
# the per-element checked functions to find the first one and what overflowed.

from libc.float cimport DBL_MAX
from libc.math cimport fabs, rint, rintf
from libc.stdint cimport (
    int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t,
)
from libc.string cimport memcpy

from zdt.kernels._exact cimport convert_element
from zdt.kernels._mini cimport mini_bits, mini_round_even, widen_small_float
from zdt.kernels._num cimport (
    BLOCK, fabs_t, from_bits, int_max64, int_min, int_min64, int_signed, max_finite, pow2,
)
from zdt.kernels._types cimport (
    MiniFormat, ScaleOffsetKernel, ScaleOffsetKernelSpec, float_t, int_t, mini_t,
    SO_OK, SO_SUB, SO_MUL, SO_REM, SO_DIV, SO_ADD, ST_OK,
    T_I8, T_U8, T_I16, T_U16, T_I32, T_U32, T_I64, T_U64, T_F32, T_F64, T_MINI,
)

from zdt.kernels._steps cimport make_step
from zdt.kernels._portable cimport (
    zdt_add_i64, zdt_add_u64, zdt_mul_i64, zdt_mul_u64, zdt_sub_i64, zdt_sub_u64,
)


# --- one element, checked (the slow path that names what failed) ----------------------------------

cdef inline int so_int_encode(int_t x, int_t o, int_t s, int_t* out) noexcept nogil:
    cdef int64_t t, p
    cdef uint64_t tu, pu
    if int_t is int64_t:
        if zdt_sub_i64(x, o, &t):
            return SO_SUB
        if zdt_mul_i64(t, s, &p):
            return SO_MUL
        out[0] = p
    elif int_t is uint64_t:
        if zdt_sub_u64(x, o, &tu):
            return SO_SUB
        if zdt_mul_u64(tu, s, &pu):
            return SO_MUL
        out[0] = pu
    elif int_t is uint32_t:
        t = <int64_t>x - <int64_t>o
        if t < 0 or t > 4294967295LL:
            return SO_SUB
        pu = <uint64_t>t * <uint64_t>s
        if pu > 4294967295ULL:
            return SO_MUL
        out[0] = <uint32_t>pu
    else:
        t = <int64_t>x - <int64_t>o
        if t < int_min64(out) or t > <int64_t>int_max64(out):
            return SO_SUB
        p = t * <int64_t>s
        if p < int_min64(out) or p > <int64_t>int_max64(out):
            return SO_MUL
        out[0] = <int_t>p
    return SO_OK


cdef inline int so_int_decode(int_t x, int_t o, int_t s, int_t* out) noexcept nogil:
    cdef int_t q
    cdef int64_t r
    cdef uint64_t ru
    if int_signed(out) and s == <int_t>-1 and x == int_min(out):
        return SO_DIV                       # -MIN does not fit
    if x % s != 0:
        return SO_REM
    q = <int_t>(x / s)
    if int_t is int64_t:
        if zdt_add_i64(q, o, &r):
            return SO_ADD
        out[0] = r
    elif int_t is uint64_t:
        if zdt_add_u64(q, o, &ru):
            return SO_ADD
        out[0] = ru
    else:
        r = <int64_t>q + <int64_t>o
        if r < int_min64(out) or r > <int64_t>int_max64(out):
            return SO_ADD
        out[0] = <int_t>r
    return SO_OK


# --- fast loops (block-level flag only) ------------------------------------------------------------
# Integers up to 32 bits compute in a wider "lane" type: int32 for 8/16-bit types (twice the
# vector lanes of int64), int64 for 32-bit types. |x - o| < 2**(2w) and |s| < 2**w for a w-bit
# type, so (x - o) * s fits the lane except for the widest unsigned type of each lane (uint16:
# up to 65535**2, uint32: up to (2**32-1)**2), which multiplies unsigned after clamping x - o at 0.
#
# Decoding divides by multiplying with the reciprocal (float for the int32 lane, double for
# int64) and rounding to the nearest integer q, then checks q * scale == x exactly in integers.
# When scale divides x the rounded product is the quotient: the product's relative error is below
# 2**-23 (float, |x| < 2**16) or 2**-52 (double, |x| < 2**32), under 1/2 in absolute terms. When it
# does not, no q passes the check. A multiply vectorises at several times the throughput of a
# divide. |q * s| <= |x| + |s| fits the lane.

ctypedef fused lane_t:
    int32_t
    int64_t


cdef bint so_lane_loop(const int_t* src, int_t* dst, Py_ssize_t n, int_t o, int_t s,
                       bint decode, lane_t* lane) noexcept nogil:
    """Whole block; True if some element fails (the caller finds which with the checked
    per-element functions)."""
    cdef Py_ssize_t i
    cdef lane_t acc = 0            # flags as wide as the lanes (see _cast.pxi: lane-wide flags)
    cdef lane_t lo = <lane_t>int_min64(dst), hi = <lane_t>int_max64(dst)
    cdef lane_t t, p, q, sl = <lane_t>s, ol = <lane_t>o
    cdef uint64_t pu64
    cdef uint32_t pu32
    cdef double rd = 1.0 / <double>s
    cdef float rf = <float>rd
    if decode:
        if s == 1:
            for i in range(n):
                p = <lane_t>src[i] + ol
                acc |= (p < lo) | (p > hi)
                dst[i] = <int_t>p
        else:
            for i in range(n):
                if lane_t is int64_t:
                    q = <lane_t>rint(<double>src[i] * rd)
                else:
                    q = <lane_t>rintf(<float>src[i] * rf)
                p = q + ol
                # the quotient itself must fit too (MIN / -1)
                acc |= (q * sl != <lane_t>src[i]) | (q < lo) | (q > hi) | (p < lo) | (p > hi)
                dst[i] = <int_t>p
    elif int_t is uint16_t or int_t is uint32_t:
        for i in range(n):
            t = <lane_t>src[i] - ol
            if lane_t is int64_t:
                pu64 = <uint64_t>(t if t >= 0 else 0) * <uint64_t>s
                acc |= (t < 0) | (pu64 > <uint64_t>hi)
                dst[i] = <int_t>pu64
            else:
                pu32 = <uint32_t>(t if t >= 0 else 0) * <uint32_t>s
                acc |= (t < 0) | (pu32 > <uint32_t>hi)
                dst[i] = <int_t>pu32
    else:
        for i in range(n):
            t = <lane_t>src[i] - ol
            p = t * sl
            acc |= (t < lo) | (t > hi) | (p < lo) | (p > hi)
            dst[i] = <int_t>p
    return acc != 0


cdef bint so_float_loop(const float_t* src, float_t* dst, Py_ssize_t n, float_t o, float_t s,
                        bint decode) noexcept nogil:
    cdef Py_ssize_t i
    cdef uint64_t acc64 = 0        # flags as wide as the lanes (see _cast.pxi: lane-wide flags)
    cdef uint32_t acc32 = 0
    cdef float_t x, r
    cdef float_t fmax = max_finite(<float_t*>NULL)
    if decode:
        for i in range(n):
            x = src[i]
            r = x / s + o
            if float_t is double:
                acc64 |= (fabs_t(x) <= fmax) & (not (fabs_t(r) <= fmax))
            else:
                acc32 |= (fabs_t(x) <= fmax) & (not (fabs_t(r) <= fmax))
            dst[i] = r
    else:
        for i in range(n):
            x = src[i]
            r = (x - o) * s
            if float_t is double:
                acc64 |= (fabs_t(x) <= fmax) & (not (fabs_t(r) <= fmax))
            else:
                acc32 |= (fabs_t(x) <= fmax) & (not (fabs_t(r) <= fmax))
            dst[i] = r
    return (acc64 | acc32) != 0


cdef bint so_mini_loop(const float* w, mini_t* dst, Py_ssize_t n, double o, double s,
                       bint decode, const MiniFormat* m) noexcept nogil:
    """A small float format (its block already read as float32, exactly): each operation in
    float64, rounded to the format (nearest-even; innocuous double rounding, 53 >= 2p + 2)."""
    cdef Py_ssize_t i
    cdef uint64_t acc = 0          # flags as wide as the (float64) lanes
    cdef double x, r
    cdef MiniFormat f = m[0]        # a local copy: the loop then provably reloads nothing
    for i in range(n):
        x = <double>w[i]
        if decode:
            r = mini_round_even(mini_round_even(x / s, &f) + o, &f)
        else:
            r = mini_round_even(mini_round_even(x - o, &f) * s, &f)
        acc |= (fabs(x) <= DBL_MAX) & (not (fabs(r) <= DBL_MAX))
        dst[i] = <mini_t>mini_bits(r, r, &f)
    return acc != 0


# --- first failure in a flagged block ---------------------------------------------------------------

cdef Py_ssize_t so_int_first(const int_t* src, Py_ssize_t n, int_t o, int_t s,
                             bint decode, int* status) noexcept nogil:
    cdef Py_ssize_t i
    cdef int st
    cdef int_t v
    for i in range(n):
        st = so_int_decode(src[i], o, s, &v) if decode else so_int_encode(src[i], o, s, &v)
        if st != SO_OK:
            status[0] = st
            return i
    return -1


cdef Py_ssize_t so_float_first(const float_t* src, Py_ssize_t n, float_t o, float_t s,
                               bint decode, int* status) noexcept nogil:
    """The first element whose finite value gives a non-finite result, and in which operation;
    the same arithmetic as so_float_loop, one operation at a time."""
    cdef Py_ssize_t i
    cdef float_t x, t
    cdef float_t fmax = max_finite(<float_t*>NULL)
    for i in range(n):
        x = src[i]
        if not (fabs_t(x) <= fmax):
            continue
        if decode:
            t = x / s
            if not (fabs_t(t) <= fmax):
                status[0] = SO_DIV
                return i
            t = t + o
            if not (fabs_t(t) <= fmax):
                status[0] = SO_ADD
                return i
        else:
            t = x - o
            if not (fabs_t(t) <= fmax):
                status[0] = SO_SUB
                return i
            t = t * s
            if not (fabs_t(t) <= fmax):
                status[0] = SO_MUL
                return i
    return -1


cdef Py_ssize_t so_mini_first(const float* w, Py_ssize_t n, double o, double s, bint decode,
                              const MiniFormat* m, int* status) noexcept nogil:
    """As so_float_first for a small float format (each operation rounded, as so_mini_loop)."""
    cdef Py_ssize_t i
    cdef double x, t
    for i in range(n):
        x = <double>w[i]
        if not (fabs(x) <= DBL_MAX):
            continue
        t = mini_round_even(x / s, m) if decode else mini_round_even(x - o, m)
        if not (fabs(t) <= DBL_MAX):
            status[0] = SO_DIV if decode else SO_SUB
            return i
        t = mini_round_even(t + o, m) if decode else mini_round_even(t * s, m)
        if not (fabs(t) <= DBL_MAX):
            status[0] = SO_ADD if decode else SO_MUL
            return i
    return -1


cdef Py_ssize_t so_subint(const uint8_t* src, uint8_t* dst, Py_ssize_t n, int64_t o, int64_t s,
                          int bits, bint is_signed, bint decode, int* status) noexcept nogil:
    """A sub-byte integer type (int2, int4, uint2, uint4, one per byte, value in the low bits):
    every step checked against its logical range, written as zdt stores it (sign-extended /
    zero high bits). Slow and simple: these values are tiny."""
    cdef Py_ssize_t i
    cdef int sh = 64 - bits
    cdef int64_t lo = -(1LL << (bits - 1)) if is_signed else 0
    cdef int64_t hi = (1LL << (bits - 1)) - 1 if is_signed else (1LL << bits) - 1
    cdef int64_t x, t, q
    cdef uint8_t out
    for i in range(n):
        x = <int64_t>((<uint64_t>src[i]) << sh)
        x = (x >> sh) if is_signed else <int64_t>((<uint64_t>x) >> sh)
        if decode:
            if x % s != 0:
                status[0] = SO_REM
                return i
            q = x / s
            if q < lo or q > hi:
                status[0] = SO_DIV
                return i
            t = q + o
            if t < lo or t > hi:
                status[0] = SO_ADD
                return i
        else:
            t = x - o
            if t < lo or t > hi:
                status[0] = SO_SUB
                return i
            t = t * s
            if t < lo or t > hi:
                status[0] = SO_MUL
                return i
        out = <uint8_t>t
        dst[i] = out if is_signed else (out & <uint8_t>((1 << bits) - 1))
    return -1


# --- the per-block step ----------------------------------------------------------------------------------
# A block may be transformed in place (src == dst): its inputs are saved first, the failure
# search reads them, and on failure they are put back so the error shows the input.

cdef Py_ssize_t so_block_int(const int_t* src, int_t* dst, Py_ssize_t m, int_t o,
                             int_t s, bint decode, int* status) noexcept nogil:
    cdef int_t saved[BLOCK]
    cdef const int_t* blk = src
    cdef bint in_place = <const void*>src == <const void*>dst
    cdef bint flagged
    cdef Py_ssize_t i, bad
    cdef int st
    cdef int_t v
    if int_t is int64_t or int_t is uint64_t:
        # no wider lane: the checked per-element functions are the loop (an element is written
        # only once it passed, so in place the failing element is still the input)
        for i in range(m):
            st = so_int_decode(src[i], o, s, &v) if decode else so_int_encode(src[i], o, s, &v)
            if st != SO_OK:
                status[0] = st
                return i
            dst[i] = v
        return -1
    if in_place:
        memcpy(saved, src, m * sizeof(int_t))
        blk = saved
    if int_t is int32_t or int_t is uint32_t:
        flagged = so_lane_loop(blk, dst, m, o, s, decode, <int64_t*>NULL)
    else:
        flagged = so_lane_loop(blk, dst, m, o, s, decode, <int32_t*>NULL)
    if flagged:
        bad = so_int_first(blk, m, o, s, decode, status)
        if bad >= 0:
            if in_place:
                memcpy(dst, saved, m * sizeof(int_t))
            return bad
    return -1


cdef Py_ssize_t so_block_float(const float_t* src, float_t* dst, Py_ssize_t m, float_t o,
                               float_t s, bint decode, int* status) noexcept nogil:
    cdef float_t saved[BLOCK]
    cdef const float_t* blk = src
    cdef bint in_place = src == dst
    cdef Py_ssize_t bad
    if in_place:
        memcpy(saved, src, m * sizeof(float_t))
        blk = saved
    if so_float_loop(blk, dst, m, o, s, decode):
        bad = so_float_first(blk, m, o, s, decode, status)
        if bad >= 0:
            if in_place:
                memcpy(dst, saved, m * sizeof(float_t))
            return bad
    return -1


cdef inline bint exact_round(double x, double* r, uint8_t* bits, const ScaleOffsetKernel* k) noexcept nogil:
    """x rounded by the exact path to the format (float8_e8m0fnu), its value in *r and bit
    pattern in *bits; False when the format has no value for it (zero, negative, beyond)."""
    cdef uint8_t b
    if convert_element(<const uint8_t*>&x, &b, &k.rounding) != ST_OK:
        return False
    bits[0] = b
    r[0] = <double>k.table[b]
    return True


cdef Py_ssize_t so_block_exact(const float* w, uint8_t* dst, Py_ssize_t m, double o, double s,
                               bint decode, const ScaleOffsetKernel* k, int* status) noexcept nogil:
    """A one-byte format without a MiniFormat (float8_e8m0fnu): each operation in float64,
    rounded to the format by the exact path; an operation whose result the format cannot hold
    or that gives NaN fails (a NaN element propagates)."""
    cdef Py_ssize_t i
    cdef double x, t
    cdef uint8_t b
    for i in range(m):
        x = <double>w[i]
        if x != x:
            dst[i] = <uint8_t>((1 << k.rounding.dst.bits) - 1)      # its NaN: all ones
            continue
        # x is finite here (the format has no infinities): a NaN step result (a NaN offset
        # or scale) is a finite value become non-finite, an error as in every float type
        if not exact_round(x / s if decode else x - o, &t, &b, k) or t != t:
            status[0] = SO_DIV if decode else SO_SUB
            return i
        if not exact_round(t + o if decode else t * s, &t, &b, k) or t != t:
            status[0] = SO_ADD if decode else SO_MUL
            return i
        dst[i] = b
    return -1


cdef Py_ssize_t so_block_mini(const uint8_t* src, uint8_t* dst, Py_ssize_t m, double o,
                              double s, bint decode, const ScaleOffsetKernel* k,
                              int* status) noexcept nogil:
    """A small float format: the block is read into float32 first (that copy is also what
    the failure search reads, so in place needs no other saving)."""
    cdef float w[BLOCK]
    cdef uint8_t saved[2 * BLOCK]
    cdef bint in_place = src == dst
    cdef bint flagged
    cdef Py_ssize_t bad
    if in_place:
        memcpy(saved, src, m * k.itemsize)
    widen_small_float(src, w, m, k.widen, k.table, &k.mini)
    if k.exact_round:
        bad = so_block_exact(w, dst, m, o, s, decode, k, status)
        if bad >= 0 and in_place:
            memcpy(dst, saved, m * k.itemsize)
        return bad
    if k.itemsize == 2:
        flagged = so_mini_loop(w, <uint16_t*>dst, m, o, s, decode, &k.mini)
    else:
        flagged = so_mini_loop(w, dst, m, o, s, decode, &k.mini)
    if flagged:
        bad = so_mini_first(w, m, o, s, decode, &k.mini, status)
        if bad >= 0:
            if in_place:
                memcpy(dst, saved, m * k.itemsize)
            return bad
    return -1


cdef Py_ssize_t so_block(const uint8_t* src, uint8_t* dst, Py_ssize_t m,
                         const ScaleOffsetKernel* k, bint decode, int* status) noexcept nogil:
    """scale_offset on one block of m <= BLOCK elements (src == dst allowed; other overlaps
    not): -1 on success, else the index in the block of the first failing element, with
    *status its ScaleOffsetStatus. The step any driver chains."""
    cdef uint64_t ob = k.dec_offset if decode else k.enc_offset
    cdef uint64_t sb = k.scale
    cdef int c = k.code
    cdef int sh
    cdef float wo, ws
    cdef uint8_t ob8, sb8
    if k.int_bits:
        sh = 64 - k.int_bits
        if c == T_I8:
            return so_subint(src, dst, m, <int64_t>(ob << sh) >> sh, <int64_t>(sb << sh) >> sh,
                             k.int_bits, True, decode, status)
        return so_subint(src, dst, m, <int64_t>(ob & ((1ULL << k.int_bits) - 1)),
                         <int64_t>(sb & ((1ULL << k.int_bits) - 1)), k.int_bits, False, decode,
                         status)
    if c == T_MINI:
        ob8 = <uint8_t>ob
        sb8 = <uint8_t>sb
        if k.itemsize == 2:
            widen_small_float(<const uint8_t*>&ob, &wo, 1, k.widen, k.table, &k.mini)
            widen_small_float(<const uint8_t*>&sb, &ws, 1, k.widen, k.table, &k.mini)
        else:
            widen_small_float(&ob8, &wo, 1, k.widen, k.table, &k.mini)
            widen_small_float(&sb8, &ws, 1, k.widen, k.table, &k.mini)
        return so_block_mini(src, dst, m, wo, ws, decode, k, status)
    if c == T_I8:
        return so_block_int(<const int8_t*>src, <int8_t*>dst, m, from_bits(ob, <int8_t*>NULL), from_bits(sb, <int8_t*>NULL), decode, status)
    elif c == T_U8:
        return so_block_int(<const uint8_t*>src, <uint8_t*>dst, m, from_bits(ob, <uint8_t*>NULL), from_bits(sb, <uint8_t*>NULL), decode, status)
    elif c == T_I16:
        return so_block_int(<const int16_t*>src, <int16_t*>dst, m, from_bits(ob, <int16_t*>NULL), from_bits(sb, <int16_t*>NULL), decode, status)
    elif c == T_U16:
        return so_block_int(<const uint16_t*>src, <uint16_t*>dst, m, from_bits(ob, <uint16_t*>NULL), from_bits(sb, <uint16_t*>NULL), decode, status)
    elif c == T_I32:
        return so_block_int(<const int32_t*>src, <int32_t*>dst, m, from_bits(ob, <int32_t*>NULL), from_bits(sb, <int32_t*>NULL), decode, status)
    elif c == T_U32:
        return so_block_int(<const uint32_t*>src, <uint32_t*>dst, m, from_bits(ob, <uint32_t*>NULL), from_bits(sb, <uint32_t*>NULL), decode, status)
    elif c == T_I64:
        return so_block_int(<const int64_t*>src, <int64_t*>dst, m, from_bits(ob, <int64_t*>NULL), from_bits(sb, <int64_t*>NULL), decode, status)
    elif c == T_U64:
        return so_block_int(<const uint64_t*>src, <uint64_t*>dst, m, from_bits(ob, <uint64_t*>NULL), from_bits(sb, <uint64_t*>NULL), decode, status)
    elif c == T_F32:
        return so_block_float(<const float*>src, <float*>dst, m, from_bits(ob, <float*>NULL), from_bits(sb, <float*>NULL), decode, status)
    return so_block_float(<const double*>src, <double*>dst, m, from_bits(ob, <double*>NULL), from_bits(sb, <double*>NULL), decode, status)


# --- the steps (see _steps.pxd) -----------------------------------------------------------------------

cdef Py_ssize_t so_encode_fn(const uint8_t* src, uint8_t* dst, Py_ssize_t m, const void* params,
                             int* status) noexcept nogil:
    return so_block(src, dst, m, <const ScaleOffsetKernel*>params, False, status)


cdef Py_ssize_t so_decode_fn(const uint8_t* src, uint8_t* dst, Py_ssize_t m, const void* params,
                             int* status) noexcept nogil:
    return so_block(src, dst, m, <const ScaleOffsetKernel*>params, True, status)


def scale_offset_step(ScaleOffsetKernelSpec spec not None, bint decode):
    """scale_offset in one direction as a step of this build (status codes:
    ScaleOffsetStatus); it may run in place."""
    return make_step(so_decode_fn if decode else so_encode_fn, &spec.k, spec, spec.k.itemsize,
                     spec.k.itemsize, True, BUILD)
