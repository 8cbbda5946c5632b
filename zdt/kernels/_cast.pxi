# cast_value kernels: mode-hoisted fast loops, scalar_map blends and the per-block step
# `cast_block` (run over whole arrays and fused chains by run_steps in _steps.pyx). See
# docs/design.md.
#
# Included by each kernel build (_baseline.pyx, _avx2.pyx, _avx512.pyx): one source compiled for
# several instruction sets; zdt/kernels/__init__.py picks the best one the CPU runs.
#
# Each fast loop writes every element and returns whether any element needs the exact path in
# _exact.pxd; only then is the block masked and those elements converted exactly. Loops are
# written so gcc vectorises them: int32 intermediates for targets up to 32 bits, branch-free
# selects, mode tags passed by pointer.
#
# Lane-wide flags: a loop ORs its per-element flags into an accumulator as wide as its vector
# lanes (uint64 for float64 / int64 lanes, uint32 for 32-bit ones). A uint8 accumulator made gcc
# pack every vector of comparison masks down to bytes: float64 -> int32 clamp went 0.33 -> 0.27
# ns an element in cache with AVX-512 (0.60 -> 0.52 with AVX2), and ~8% at memory speed.
#
# Flag conditions: each fast loop's docstring says when it flags an element. The set of source
# values a loop never flags is an interval [safe_lo, safe_hi] around zero; zdt/formats/fast_path.py
# (`safe_range`) computes it exactly for every loop and mode, and tests/kernels/test_safe_range.py runs
# both bounds and the next value beyond each through the loops alone: change a condition here
# and that test tells you which bound in fast_path.py must follow.

from libc.float cimport DBL_MAX, FLT_MAX
from libc.math cimport ceil, ceilf, fabs, fabsf, floor, floorf, rint, rintf, trunc, truncf
from libc.stdint cimport (
    int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t, uintptr_t,
)
from libc.string cimport memcpy

import numpy as np

from zdt.kernels._exact cimport convert_element
from zdt.kernels._num cimport (
    BLOCK, fabs_t, from_bits, int_bits, int_max, int_max64, int_min, int_min64,
    int_signed, max_finite, pow2, precision,
)
from zdt.kernels._types cimport (
    CastKernel, CastKernelSpec, CastSpec, MapEntry,
    float_t, float2_t, int_t, int2_t, num_t, num2_t,
    rmode_t, RNearestEven, RTowardsZero, RTowardsPositive, RTowardsNegative, RNearestAway,
    omode_t, OError, OClamp, OWrap,
    NEAREST_EVEN, TOWARDS_ZERO, TOWARDS_POSITIVE, TOWARDS_NEGATIVE, NEAREST_AWAY,
    OOR_ERROR, OOR_CLAMP, OOR_WRAP,
    KEY_ANY_NAN, KEY_VALUE,
    T_I8, T_U8, T_I16, T_U16, T_I32, T_U32, T_I64, T_U64, T_F32, T_F64, T_MINI,
    ST_OK,
    WIDEN_NONE, WIDEN_INT, WIDEN_MINI, WIDEN_SUBINT, WIDEN_TABLE,
    MiniFormat, mini_t,
)
from zdt.kernels._mini cimport (
    u32_in, u32_out, widen_small_float,
)
from zdt.kernels._steps cimport block_fn, make_step

cdef extern from "_stream.h" nogil:
    # 1 in the builds that have the streaming-store loop (AVX: the avx2 and avx512 builds)
    const int ZDT_HAVE_STREAM
    # float64 -> int32 into a 32-byte-aligned d, n a multiple of 8: f2i's values and flags
    bint zdt_f64_i32_stream(const double* s, int32_t* d, Py_ssize_t n, int mode, int clamp,
                            int fold, int32_t nan_value) noexcept

BLOCK_SIZE = BLOCK



# --- scalar helpers -----------------------------------------------------------------------------

cdef inline float_t round_t(float_t x, rmode_t* rm) noexcept nogil:
    """x rounded to an integer in the mode of the tag; exact in float_t."""
    cdef float_t t
    if rmode_t is RNearestEven:
        if float_t is double:
            return rint(x)
        return rintf(x)
    elif rmode_t is RTowardsZero:
        if float_t is double:
            return trunc(x)
        return truncf(x)
    elif rmode_t is RTowardsPositive:
        if float_t is double:
            return ceil(x)
        return ceilf(x)
    elif rmode_t is RTowardsNegative:
        if float_t is double:
            return floor(x)
        return floorf(x)
    else:
        # half away from zero; x - trunc(x) is exact, so 0.49999999999999994 stays below the tie
        if float_t is double:
            t = trunc(x)
        else:
            t = truncf(x)
        if fabs_t(x - t) >= 0.5:
            t = t + (1 if x > 0 else -1)
        return t


cdef inline int_t float_to_int(float_t c, int_t* tag) noexcept nogil:
    """Convert an integer-valued c inside int_t's range. Through int32 where possible: SSE has
    packed double/float -> int32 conversions but none to int64."""
    if int_t is int64_t:
        return <int64_t>c
    elif int_t is uint64_t:
        return <uint64_t>c
    elif int_t is uint32_t:
        if float_t is double:
            return <uint32_t>(<int32_t>(c - 2147483648.0)) ^ <uint32_t>0x80000000
        return <uint32_t>(<int64_t>c)
    else:
        return <int_t>(<int32_t>c)


cdef inline int32_t wrap_double(double r, int nb) noexcept nogil:
    """r mod 2**nb as a two's complement int32 (finite integer-valued r, nb <= 32).
    m = r - 2**nb * floor(r / 2**nb) lies in [0, 2**nb): exact in double for nb <= 32."""
    cdef double two_n = pow2(nb, <double*>NULL)
    cdef double m = r - two_n * floor(r * pow2(-nb, <double*>NULL))
    m = (m - two_n) if m >= 0.5 * two_n else m
    return <int32_t>m


cdef inline int32_t wrap32(float_t r, int nb) noexcept nogil:
    """As wrap_double; in float arithmetic m is exact only while 2**nb <= 2**24."""
    cdef float two_n, m
    if float_t is double:
        return wrap_double(r, nb)
    else:
        if nb > 24:
            return wrap_double(<double>r, nb)
        two_n = pow2(nb, <float*>NULL)
        m = r - two_n * floorf(r * pow2(-nb, <float*>NULL))
        m = (m - two_n) if m >= 0.5 * two_n else m
        return <int32_t>m


# sign-magnitude steps of a float's bit pattern: +1 = away from zero, -1 = towards zero
cdef inline float_t step_mag(float_t f, int delta) noexcept nogil:
    cdef uint64_t b64
    cdef uint32_t b32
    if float_t is double:
        memcpy(&b64, &f, 8)
        b64 = b64 + <uint64_t><int64_t>delta
        memcpy(&f, &b64, 8)
    else:
        memcpy(&b32, &f, 4)
        b32 = b32 + <uint32_t><int32_t>delta
        memcpy(&f, &b32, 4)
    return f


cdef inline bint sign_of(float_t f) noexcept nogil:
    cdef uint64_t b64
    cdef uint32_t b32
    if float_t is double:
        memcpy(&b64, &f, 8)
        return (b64 >> 63) != 0
    memcpy(&b32, &f, 4)
    return (b32 >> 31) != 0


# --- fast loops ------------------------------------------------------------------------------------

cdef inline int_t f2i_one(float_t x, uint8_t* flag, int_t* tag, rmode_t* rm, omode_t* om) noexcept nogil:
    """One float -> integer element; *flag = 1 when the exact path must decide it: NaN/Inf
    always, out of range in error mode, |r| >= 2**63 under wrap to a 64-bit target. Every
    constant below folds at compile time."""
    cdef int nb = int_bits(tag)
    cdef bint sgn = int_signed(tag)
    cdef float_t* ft = NULL
    cdef float_t lo = -pow2(nb - 1, ft) if sgn else 0
    cdef float_t hi_excl = pow2(nb - sgn, ft)
    cdef float_t half_n = pow2(nb - 1, ft)
    cdef float_t fmax = max_finite(ft)
    # largest float_t <= int max; when int max itself is not a float_t, clamping goes through it
    cdef bint max_exact = (nb - sgn) <= precision(ft)
    cdef float_t hi_c = (hi_excl - 1) if max_exact else (hi_excl - pow2(nb - sgn - precision(ft), ft))
    cdef float_t r = round_t(x, rm)
    cdef float_t c
    cdef int_t v
    cdef uint8_t f
    if omode_t is OError:
        f = not ((r >= lo) & (r < hi_excl))
        c = 0 if f else r
        v = float_to_int(c, tag)
    elif omode_t is OClamp:
        f = not (fabs_t(x) <= fmax)
        c = r if r >= lo else lo          # NaN -> lo (flagged anyway)
        c = c if c <= hi_c else hi_c
        v = float_to_int(c, tag)
        if not max_exact:
            v = int_max(tag) if r >= hi_excl else v
    else:
        f = not (fabs_t(x) <= fmax)
        if nb <= 32:
            v = <int_t>wrap32(0 if f else r, nb)
        else:
            f = f | (not (fabs_t(r) < half_n))
            c = 0 if f else r
            v = <int_t>(<int64_t>c)
    flag[0] = f
    return v


cdef bint f2i(const float_t* s, int_t* d, Py_ssize_t n, const CastSpec* sp,
              rmode_t* rm, omode_t* om) noexcept nogil:
    """float -> integer. With sp.nan_fold, NaN takes the scalar_map's "NaN" value here rather
    than in a later pass (the common NaN -> sentinel case stays one pass)."""
    cdef Py_ssize_t i
    cdef uint8_t f
    cdef uint64_t acc64 = 0        # lane-wide flags (top of file): the one of float_t's width
    cdef uint32_t acc32 = 0
    cdef bint hit
    cdef int_t v, nan_out
    cdef float_t x
    if sp.nan_fold:
        nan_out = from_bits(sp.nan_out, <int_t*>NULL)
        for i in range(n):
            x = s[i]
            v = f2i_one(x, &f, d, rm, om)
            hit = x != x
            d[i] = nan_out if hit else v
            if float_t is double:
                acc64 |= f & (not hit)
            else:
                acc32 |= f & (not hit)
    else:
        for i in range(n):
            d[i] = f2i_one(s[i], &f, d, rm, om)
            if float_t is double:
                acc64 |= f
            else:
                acc32 |= f
    return (acc64 | acc32) != 0


cdef bint i2i(const int_t* s, int2_t* d, Py_ssize_t n, omode_t* om) noexcept nogil:
    """integer -> integer. Flags out-of-range values in error mode only."""
    cdef bint below_possible = int_min64(<int_t*>NULL) < int_min64(<int2_t*>NULL)
    cdef bint above_possible = int_max64(<int_t*>NULL) > int_max64(<int2_t*>NULL)
    cdef int_t lo = <int_t>int_min(<int2_t*>NULL) if below_possible else 0
    cdef int_t hi = <int_t>int_max(<int2_t*>NULL) if above_possible else 0
    cdef int2_t dmin = int_min(<int2_t*>NULL)
    cdef int2_t dmax = int_max(<int2_t*>NULL)
    cdef Py_ssize_t i
    cdef uint64_t acc64 = 0        # lane-wide flags (top of file): the one of int_t's width
    cdef uint32_t acc32 = 0
    cdef uint8_t acc = 0
    cdef bint below, above
    cdef int_t v
    if omode_t is OWrap:
        # C conversion to a narrower integer is two's complement modulo 2**N
        for i in range(n):
            d[i] = <int2_t>s[i]
        return False
    if not (below_possible or above_possible):
        for i in range(n):
            d[i] = <int2_t>s[i]
        return False
    if omode_t is OClamp:
        for i in range(n):
            v = s[i]
            below = below_possible and v < lo
            above = above_possible and v > hi
            d[i] = dmin if below else (dmax if above else <int2_t>v)
        return False
    for i in range(n):
        v = s[i]
        if sizeof(int_t) == 8:
            acc64 |= (below_possible and v < lo) | (above_possible and v > hi)
        elif sizeof(int_t) == 4:
            acc32 |= (below_possible and v < lo) | (above_possible and v > hi)
        else:
            acc |= (below_possible and v < lo) | (above_possible and v > hi)
        d[i] = <int2_t>v
    return (acc64 | acc32 | acc) != 0


cdef inline uint64_t float_as_u64_mod(float_t d) noexcept nogil:
    """The integer value of an integer-valued d in [-2**63, 2**64] modulo 2**64 (callers keep d
    in that range: an out-of-range float -> integer conversion is undefined behaviour)."""
    if d >= 18446744073709551616.0:
        return 0
    if d >= 9223372036854775808.0:
        return <uint64_t>d
    return <uint64_t>(<int64_t>d)


cdef inline float_t int_to_float_directed(int_t v, float_t* tag, rmode_t* rm) noexcept nogil:
    """v rounded to float_t in a mode other than nearest-even: round to nearest in hardware,
    then step one ulp where the mode disagrees. The error v - d is small (< 2 ulp), so it is
    exact as an int64 computed modulo 2**64. Branch-free: the error's sign is random data, and
    a mispredicted branch per element costs 3x."""
    cdef float_t d = <float_t>v
    cdef float_t d2
    cdef uint64_t uv = <uint64_t>v
    cdef int64_t err = <int64_t>(uv - float_as_u64_mod(d))
    cdef int64_t err2, up = 1 if d > 0 else -1     # bit step that moves d towards +inf
    if rmode_t is RTowardsZero:
        # |d| > |v| when the error points back towards zero
        return step_mag(d, -((err != 0) & ((err > 0) != (d > 0))))
    elif rmode_t is RTowardsPositive:
        return step_mag(d, up * (err > 0))
    elif rmode_t is RTowardsNegative:
        return step_mag(d, -up * (err < 0))
    elif rmode_t is RNearestAway:
        # an exact tie went to the even neighbour; take the other one if it is farther from 0
        d2 = step_mag(d, up if err > 0 else -up)
        # d2 < -2**63 only when d = -2**63 = v (err 0, d2 unused): a select keeps the
        # conversion in range without a branch that would stop vectorisation
        err2 = <int64_t>(uv - float_as_u64_mod(d2 if d2 >= <float_t>-9223372036854775808.0
                                                else <float_t>-9223372036854775808.0))
        return d2 if (err != 0) & (err2 == -err) & (fabs_t(d2) > fabs_t(d)) else d
    return d


cdef bint i2f(const int_t* s, float_t* d, Py_ssize_t n, rmode_t* rm) noexcept nogil:
    """integer -> float32/float64: never out of range. Exact pairs and nearest-even use the C
    conversion (correctly rounded); the other modes round with integer arithmetic."""
    cdef float_t* ft = NULL
    cdef bint exact = (int_bits(<int_t*>NULL) - int_signed(<int_t*>NULL)) <= precision(ft)
    cdef Py_ssize_t i
    if exact or rmode_t is RNearestEven:
        for i in range(n):
            d[i] = <float_t>s[i]
    else:
        for i in range(n):
            d[i] = int_to_float_directed(s[i], ft, rm)
    return False


cdef inline float f64_to_f32_one(double x, uint8_t* flag, rmode_t* rm, omode_t* om) noexcept nogil:
    """float64 -> float32: hardware nearest-even, then one ulp where the mode disagrees.
    *flag = 1 for a finite input that overflowed (the exact path decides between the largest
    float, inf and an error)."""
    cdef float r = <float>x
    cdef float r2
    cdef double b, b2, err
    cdef int up            # the bit step that moves r towards +inf: +1, or -1 when r is negative
    cdef int towards_x
    cdef bint finite_in = fabs(x) <= DBL_MAX
    # (the range tests compare float64 values: with fabsf on r, gcc did not vectorise the
    # nearest-away loop, whose other lanes are float64)
    cdef uint8_t f = (not (fabs(<double>r) <= FLT_MAX)) & finite_in
    if rmode_t is RNearestEven:
        if omode_t is OClamp:
            f = 0           # +-inf is the clamped result
    else:
        # branch-free: which way the hardware rounded is random data, so a branch on it
        # mispredicts on every other element (and keeps the loop scalar: 25x nearest-even)
        b = <double>r
        up = 1 - 2 * sign_of(r)
        if rmode_t is RTowardsZero:
            r = step_mag(r, -(fabs(b) > fabs(x)))
        elif rmode_t is RTowardsPositive:
            r = step_mag(r, up * (b < x))
        elif rmode_t is RTowardsNegative:
            r = step_mag(r, -up * (b > x))
        else:
            # nearest-away differs from nearest-even only on an exact tie that went towards
            # zero: r2 is the other neighbour of x
            err = x - b
            towards_x = up * (2 * (err > 0) - 1)
            r2 = step_mag(r, towards_x)
            b2 = <double>r2
            # the step taken or not by arithmetic: a select here was not vectorised
            r = step_mag(r, towards_x * (((b2 - b) == 2 * err) & (fabs(b2) > fabs(b))))
        f = f | ((not (fabs(<double>r) <= FLT_MAX)) & finite_in)
    flag[0] = f
    return r


cdef bint f2f(const float_t* s, float2_t* d, Py_ssize_t n, rmode_t* rm, omode_t* om) noexcept nogil:
    """float32/float64 -> float32/float64. Only float64 -> float32 can round or overflow."""
    cdef Py_ssize_t i
    cdef uint8_t f
    cdef uint64_t acc = 0          # lane-wide flags (top of file)
    if not (float_t is double and float2_t is float):
        for i in range(n):
            d[i] = <float2_t>s[i]     # same type, or float32 -> float64: exact
        return False
    else:
        for i in range(n):
            d[i] = f64_to_f32_one(s[i], &f, rm, om)
            acc |= f
        return acc != 0


# --- small floats (float16, bfloat16, float8 / float6 / float4) ---------------------------------------

cdef inline bint is_f32_upper_half(const MiniFormat* m) noexcept nogil:
    """A 16-bit format that is float32 with the low 16 mantissa bits dropped (bfloat16: same
    exponent field and bias, subnormals included, IEEE infinities and NaN)."""
    return (m.itemsize == 2) & (m.bits == 16) & (m.man_bits == 7) & (m.bias == 127) \
        & m.sub_by_shift & m.has_inf & m.has_nan


cdef bint f32_upper_half_even(const float* s, uint16_t* d, Py_ssize_t n,
                              const MiniFormat* m, bint clamp) noexcept nogil:
    """float32 -> such a format, nearest-even, on the bit pattern: add just under half of the
    dropped part plus its lowest kept bit, keep the upper half. The magnitude never carries
    into the sign (only NaN patterns are that large; they are replaced). NaN becomes the
    canonical NaN with the input's sign; a finite input that rounds to infinity is that
    infinity under clamp, else flagged (the exact path raises)."""
    cdef Py_ssize_t i
    cdef uint32_t acc = 0          # lane-wide flags (top of file)
    cdef uint32_t b, mag, r
    cdef uint32_t nan_bits = m.nan_bits
    cdef uint32_t no_clamp = not clamp
    cdef u32_in u = <u32_in>s
    for i in range(n):
        b = u[i]
        mag = b & 0x7FFFFFFFu
        r = (b + 0x7FFFu + ((b >> 16) & 1u)) >> 16
        acc |= ((r & 0x7FFFu) == 0x7F80u) & (mag < 0x7F800000u) & no_clamp
        d[i] = <uint16_t>(((b >> 16) & 0x8000u) | nan_bits if mag > 0x7F800000u else r)
    return acc != 0


cdef inline bint has_bit_loop(const MiniFormat* m) noexcept nogil:
    """A format f32_to_mini_even handles: half its smallest subnormal is a float32 normal
    (every small float but bfloat16, which has its own loop above, and float8_e8m0fnu, which
    has no fast loop)."""
    return (m.man_bits >= 1) & (m.emin - m.man_bits - 1 >= -126)


cdef bint f32_to_mini_even(const float* s, mini_t* d, Py_ssize_t n,
                           const MiniFormat* m, bint clamp) noexcept nogil:
    """float32 -> a small float format (float16, float8 / float6 / float4), nearest-even, on
    the bit pattern, at the copy floor (computing in float64 and assembling the bits field
    by field, as zdt once did, was 3-4x slower). Normal results: rebias the exponent, add
    just under half of the dropped bits plus the lowest kept one, shift; a carry out of the
    mantissa moves into the exponent, which is the right rounding at the end of each binade.
    Subnormal results: adding `magic`, a power of two whose float32 ulp is the format's
    smallest subnormal, rounds the value to that grid in the hardware's nearest-even mode,
    and the sum's low bits are the result's (up to the smallest normal's pattern when it
    rounds up); inputs below half that subnormal, which round to zero, are replaced by zero
    first, so no float32 subnormal meets the adder. A finite value that rounds beyond the
    largest finite one (`over`: the tie above the largest goes up when the largest's last
    mantissa bit is odd) is, under clamp, the format's infinity, or its largest value where
    it has none (the rule for float targets), and flagged otherwise (the exact path raises);
    an infinity or NaN the format cannot hold is flagged in every mode. NaN becomes the
    canonical NaN, with the input's sign where the format keeps one; a zero result of a
    format without -0 is +0."""
    cdef Py_ssize_t i
    cdef int drop = 23 - m.man_bits
    cdef uint32_t round_bits = (1u << (drop - 1)) - 1
    cdef uint32_t rebias = (<uint32_t>(127 - m.bias)) << 23
    cdef uint32_t min_normal = (<uint32_t>(m.emin + 127)) << 23
    cdef uint32_t tiny_min = (<uint32_t>(m.emin - m.man_bits - 1 + 127)) << 23
    cdef float magic = pow2(m.emin - m.man_bits + 23, <float*>NULL)
    cdef float largest = <float>m.max_finite
    cdef uint32_t magic_bits, largest_bits, over
    # (every field the loop reads is a local: a read through m inside it could alias d)
    cdef int sign_at = m.bits - 1
    cdef uint32_t nan_bits = m.nan_bits
    cdef uint32_t no_nan = not m.has_nan, no_inf = not m.has_inf, neg_zero = m.has_neg_zero
    cdef uint32_t no_clamp = not clamp
    cdef uint32_t acc = 0          # lane-wide flags (top of file)
    cdef uint32_t b, mag, normal, sub, h, sign, tiny_bits, special
    cdef uint32_t beyond
    cdef float tiny
    cdef u32_in u = <u32_in>s
    memcpy(&magic_bits, &magic, 4)
    memcpy(&largest_bits, &largest, 4)
    over = largest_bits + (1u << (drop - 1)) + (1u - ((largest_bits >> drop) & 1u))
    # what a finite value beyond the range becomes under clamp (flagged otherwise)
    beyond = m.clamp_bits
    for i in range(n):
        b = u[i]
        mag = b & 0x7FFFFFFFu
        normal = (mag - rebias + round_bits + ((mag >> drop) & 1u)) >> drop
        tiny_bits = mag if mag >= tiny_min else 0u
        memcpy(&tiny, &tiny_bits, 4)
        tiny = tiny + magic
        memcpy(&sub, &tiny, 4)
        h = (sub - magic_bits) if mag < min_normal else normal
        # beyond the range: NaN's pattern, or `beyond` for a finite value and an infinity
        # alike (where the format has infinities they are the same; where it has none, an
        # infinite input is flagged). Two selects: with one more, gcc left the loop scalar
        special = nan_bits if mag > 0x7F800000u else beyond
        h = special if mag >= over else h
        sign = (b >> 31) << sign_at
        sign = sign if (h != 0) | neg_zero else 0u
        acc |= ((mag >= over) & (mag < 0x7F800000u) & no_clamp) \
            | ((mag == 0x7F800000u) & no_inf) | ((mag > 0x7F800000u) & no_nan)
        d[i] = <mini_t>(sign | h)
    return acc != 0


cdef bint f32_to_mini_mode(const float* s, mini_t* d, Py_ssize_t n, const MiniFormat* m,
                           bint clamp, rmode_t* rm) noexcept nogil:
    """float32 -> a small float format (any with a mantissa bit: float16, bfloat16, float8 /
    float6 / float4) in a directed mode or nearest-away, on the bit pattern, in integers only
    (computing in float64 and assembling the bits field by field, as zdt did before, was
    3-5x slower).

    The float32 significand (its implicit bit set, for a normal input) is shifted right by
    `sh` bits after adding the mode's increment: none towards zero, all ones below the kept
    bits away from zero (towards-positive on a positive value, towards-negative on a negative
    one), half for nearest-away. sh is the bits the format drops: 23 - man_bits for a normal
    result, one more for each binade below the format's smallest normal (subnormal results;
    capped at 31, where every nonzero input is below half the smallest subnormal and only the
    away-from-zero modes give it). The biased exponent above 1 is added back in the exponent
    field, so a carry out of the mantissa is the right rounding at the end of a binade.
    A finite value whose result lies beyond the largest finite pattern is, under clamp, the
    format's infinity, or its largest value where it has none (MiniFormat.clamp_bits: the rule
    for float targets in every mode), and flagged otherwise (the exact path raises); an
    infinity or NaN the format cannot hold is flagged in every mode. NaN becomes the
    canonical NaN, an infinity the format's infinity, a zero result of a format without -0
    is +0."""
    cdef Py_ssize_t i
    cdef int drop = 23 - m.man_bits
    # (every field the loop reads is a local: a read through m inside it could alias d)
    cdef int man_bits = m.man_bits
    cdef int32_t ebias = m.bias - 127
    cdef int sign_at = m.bits - 1
    cdef uint32_t nan_bits = m.nan_bits, inf_bits = m.clamp_bits
    cdef uint32_t no_nan = not m.has_nan, no_inf = not m.has_inf, neg_zero = m.has_neg_zero
    cdef uint32_t no_clamp = not clamp
    cdef uint32_t acc = 0          # lane-wide flags (top of file)
    cdef uint32_t b, mag, sig, neg, inc, h, sign, special, maxb, beyond
    cdef int32_t e, ef, sh
    cdef float largest = <float>m.max_finite
    cdef u32_in u = <u32_in>s
    # the largest finite value's own pattern (exact: no rounding happens)
    memcpy(&b, &largest, 4)
    e = <int32_t>(b >> 23) + ebias
    maxb = (((b & 0x7FFFFFu) | 0x800000u) >> drop) + (<uint32_t>(e - 1) << man_bits)
    for i in range(n):
        b = u[i]
        mag = b & 0x7FFFFFFFu
        neg = b >> 31
        e = <int32_t>(mag >> 23)
        sig = (mag & 0x7FFFFFu) | ((<uint32_t>(e != 0)) << 23)
        ef = (e if e > 1 else 1) + ebias
        sh = drop + (1 - ef if ef < 1 else 0)
        sh = sh if sh < 31 else 31
        if rmode_t is RTowardsZero:
            inc = 0
        elif rmode_t is RTowardsPositive:
            inc = ((1u << sh) - 1u) & (neg - 1u)
        elif rmode_t is RTowardsNegative:
            inc = ((1u << sh) - 1u) & (0u - neg)
        elif rmode_t is RNearestAway:
            inc = 1u << (sh - 1)
        else:
            inc = (1u << (sh - 1)) - 1u + ((sig >> sh) & 1u)
        h = ((sig + inc) >> sh) + (<uint32_t>((ef if ef > 1 else 1) - 1) << man_bits)
        # beyond the largest finite pattern: a finite value past the range, and every
        # infinity and NaN (their exponent is past every format's). Two selects, as in
        # f32_to_mini_even
        beyond = h > maxb
        acc |= (beyond & (mag < 0x7F800000u) & no_clamp) \
            | ((mag == 0x7F800000u) & no_inf) | ((mag > 0x7F800000u) & no_nan)
        special = nan_bits if mag > 0x7F800000u else inf_bits
        h = special if beyond else h
        sign = neg << sign_at
        sign = sign if (h != 0) | neg_zero else 0u
        d[i] = <mini_t>(sign | h)
    return acc != 0


cdef bint f64_to_f32_odd(const double* s, float* t, Py_ssize_t n) noexcept nogil:
    """float64 -> float32 rounded to odd: towards zero, then the last bit set when the value
    was inexact (infinities stay, NaN stays NaN). Rounding that float32 again, nearest-even,
    to a format of at most 22 bits of precision gives the float64's own nearest-even result:
    rounding to odd keeps the side of every midpoint of the coarser format, and the midpoint
    itself, on which a value lies (24 >= 22 + 2 bits, and float32's subnormals are 2**16 times
    finer than any small format's); it keeps a directed mode's result too (a value strictly
    between two of the format's neighbours stays strictly between them). A finite float64
    beyond float32's range becomes float32's largest value, which stands rightly for every
    value below 2**128 (it lies between the same two neighbours of every small format) but
    not for 2**128 and beyond, which overflow bfloat16 where float32's largest, in its top
    binade, rounds towards zero to bfloat16's largest. Returns whether the block holds a
    finite value of 2**128 or more: the caller flags it (such values are rare; one rule for
    every format and mode)."""
    cdef Py_ssize_t i
    cdef double x, b
    cdef float r
    cdef uint32_t rb
    cdef uint64_t acc = 0          # lane-wide flags (top of file)
    cdef double two_128 = pow2(128, <double*>NULL)
    cdef u32_out u = <u32_out>t
    for i in range(n):
        x = s[i]
        r = <float>x
        b = <double>r
        r = step_mag(r, -(fabs(b) > fabs(x)))
        memcpy(&rb, &r, 4)
        u[i] = rb | (b != x)
        acc |= (fabs(x) >= two_128) & (fabs(x) <= DBL_MAX)
    return acc != 0


cdef bint narrow_block(void* d, Py_ssize_t n, int bits, bint is_signed, int oor) noexcept nogil:
    """An int8 / uint8 block standing for a sub-byte integer type: apply its logical width.
    Error mode flags values outside it; clamp clamps to it; wrap reduces modulo 2**bits,
    sign-extended for signed types (zdt's storage rule). Clamp and wrap compose with the int8
    loop's own, since 2**bits divides 256."""
    cdef Py_ssize_t i
    cdef uint8_t acc = 0
    cdef int8_t* sd = <int8_t*>d
    cdef uint8_t* ud = <uint8_t*>d
    cdef int8_t lo = <int8_t>(-(1 << (bits - 1))), hi = <int8_t>((1 << (bits - 1)) - 1)
    cdef uint8_t uhi = <uint8_t>((1 << bits) - 1)
    cdef int sh = 8 - bits
    if is_signed:
        if oor == OOR_CLAMP:
            for i in range(n):
                sd[i] = lo if sd[i] < lo else (hi if sd[i] > hi else sd[i])
        elif oor == OOR_WRAP:
            for i in range(n):
                sd[i] = <int8_t>(<uint8_t>(<uint8_t>sd[i] << sh)) >> sh
        else:
            for i in range(n):
                acc |= (sd[i] < lo) | (sd[i] > hi)
    else:
        if oor == OOR_CLAMP:
            for i in range(n):
                ud[i] = uhi if ud[i] > uhi else ud[i]
        elif oor == OOR_WRAP:
            for i in range(n):
                ud[i] = ud[i] & uhi
        else:
            for i in range(n):
                acc |= ud[i] > uhi
    return acc


# --- reading sources that have no loop of their own (each exact) ------------------------------------

cdef void widen_subint(const uint8_t* s, uint8_t* t, Py_ssize_t n, int bits,
                       bint is_signed) noexcept nogil:
    """int2 / int4 / uint2 / uint4 (value in the low bits) -> int8 / uint8."""
    cdef Py_ssize_t i
    cdef int sh = 8 - bits
    cdef uint8_t mask = <uint8_t>((1 << bits) - 1)
    if is_signed:
        for i in range(n):
            t[i] = <uint8_t>((<int8_t>(<uint8_t>(s[i] << sh))) >> sh)
    else:
        for i in range(n):
            t[i] = s[i] & mask


cdef void subint_to_float(const uint8_t* s, float* t, Py_ssize_t n, int bits,
                          bint is_signed) noexcept nogil:
    """int2 / int4 / uint2 / uint4 -> float32 in one pass (exact: the whole cast)."""
    cdef Py_ssize_t i
    cdef int sh = 8 - bits
    cdef uint8_t mask = <uint8_t>((1 << bits) - 1)
    if is_signed:
        for i in range(n):
            t[i] = <float>(<int8_t>(<uint8_t>(s[i] << sh)) >> sh)
    else:
        for i in range(n):
            t[i] = <float>(s[i] & mask)


cdef bint widen_int(const int_t* s, double* t, Py_ssize_t n) noexcept nogil:
    """Integers to float64; True if some 64-bit value is at least 2**53 in magnitude (float64
    may have rounded it: the exact path must round it once, to the target)."""
    cdef Py_ssize_t i
    cdef uint64_t acc = 0          # lane-wide flags (top of file)
    cdef double v
    for i in range(n):
        v = <double>s[i]
        t[i] = v
        if sizeof(int_t) == 8:
            acc |= fabs(v) >= 9007199254740992.0
    return acc != 0


cdef bint widen_int_code(const void* s, int code, double* t, Py_ssize_t n) noexcept nogil:
    if code == T_I8:
        return widen_int(<const int8_t*>s, t, n)
    elif code == T_U8:
        return widen_int(<const uint8_t*>s, t, n)
    elif code == T_I16:
        return widen_int(<const int16_t*>s, t, n)
    elif code == T_U16:
        return widen_int(<const uint16_t*>s, t, n)
    elif code == T_I32:
        return widen_int(<const int32_t*>s, t, n)
    elif code == T_U32:
        return widen_int(<const uint32_t*>s, t, n)
    elif code == T_I64:
        return widen_int(<const int64_t*>s, t, n)
    return widen_int(<const uint64_t*>s, t, n)


# --- mode dispatch (runtime enum -> tag types) -----------------------------------------------------

cdef inline bint f2i_o(const float_t* s, int_t* d, Py_ssize_t n, const CastSpec* sp,
                       rmode_t* rm) noexcept nogil:
    if sp.out_of_range == OOR_CLAMP:
        return f2i(s, d, n, sp, rm, <OClamp*>NULL)
    elif sp.out_of_range == OOR_WRAP:
        return f2i(s, d, n, sp, rm, <OWrap*>NULL)
    return f2i(s, d, n, sp, rm, <OError*>NULL)


cdef bint f2i_modes(const float_t* s, int_t* d, Py_ssize_t n, const CastSpec* sp) noexcept nogil:
    if sp.rounding == TOWARDS_ZERO:
        return f2i_o(s, d, n, sp, <RTowardsZero*>NULL)
    elif sp.rounding == TOWARDS_POSITIVE:
        return f2i_o(s, d, n, sp, <RTowardsPositive*>NULL)
    elif sp.rounding == TOWARDS_NEGATIVE:
        return f2i_o(s, d, n, sp, <RTowardsNegative*>NULL)
    elif sp.rounding == NEAREST_AWAY:
        return f2i_o(s, d, n, sp, <RNearestAway*>NULL)
    return f2i_o(s, d, n, sp, <RNearestEven*>NULL)


cdef bint i2i_modes(const int_t* s, int2_t* d, Py_ssize_t n, int oor) noexcept nogil:
    if oor == OOR_CLAMP:
        return i2i(s, d, n, <OClamp*>NULL)
    elif oor == OOR_WRAP:
        return i2i(s, d, n, <OWrap*>NULL)
    return i2i(s, d, n, <OError*>NULL)


cdef bint i2f_modes(const int_t* s, float_t* d, Py_ssize_t n, int rounding) noexcept nogil:
    if rounding == TOWARDS_ZERO:
        return i2f(s, d, n, <RTowardsZero*>NULL)
    elif rounding == TOWARDS_POSITIVE:
        return i2f(s, d, n, <RTowardsPositive*>NULL)
    elif rounding == TOWARDS_NEGATIVE:
        return i2f(s, d, n, <RTowardsNegative*>NULL)
    elif rounding == NEAREST_AWAY:
        return i2f(s, d, n, <RNearestAway*>NULL)
    return i2f(s, d, n, <RNearestEven*>NULL)


cdef inline bint f2f_o(const float_t* s, float2_t* d, Py_ssize_t n, rmode_t* rm,
                       int oor) noexcept nogil:
    # 'wrap' with a float target only reaches here when decoding; it is an error there
    if oor == OOR_CLAMP:
        return f2f(s, d, n, rm, <OClamp*>NULL)
    return f2f(s, d, n, rm, <OError*>NULL)


cdef bint f2f_modes(const float_t* s, float2_t* d, Py_ssize_t n, int rounding,
                    int oor) noexcept nogil:
    if rounding == TOWARDS_ZERO:
        return f2f_o(s, d, n, <RTowardsZero*>NULL, oor)
    elif rounding == TOWARDS_POSITIVE:
        return f2f_o(s, d, n, <RTowardsPositive*>NULL, oor)
    elif rounding == TOWARDS_NEGATIVE:
        return f2f_o(s, d, n, <RTowardsNegative*>NULL, oor)
    elif rounding == NEAREST_AWAY:
        return f2f_o(s, d, n, <RNearestAway*>NULL, oor)
    return f2f_o(s, d, n, <RNearestEven*>NULL, oor)


# --- scalar_map inside a block ---------------------------------------------------------------------

cdef void map_apply(const num_t* s, num2_t* d, Py_ssize_t n, const CastSpec* sp) noexcept nogil:
    """Write the scalar_map's value and "NaN" keys as selects, last entry first so the first
    occurrence wins (a "NaN" key the fast loop applied itself, nan_fold, is skipped)."""
    cdef Py_ssize_t i, j
    cdef num_t kv
    cdef num2_t ov
    cdef const MapEntry* e
    for j in range(sp.map_len - 1, -1, -1):
        e = &sp.map[j]
        ov = from_bits(e.out_bits, <num2_t*>NULL)
        if e.kind == KEY_ANY_NAN:
            if not sp.nan_fold:
                for i in range(n):
                    d[i] = ov if s[i] != s[i] else d[i]
        else:
            kv = from_bits(e.key_bits, <num_t*>NULL)
            for i in range(n):
                d[i] = ov if s[i] == kv else d[i]


cdef void map_unmark(const num_t* s, Py_ssize_t n, uint8_t* mask, const CastSpec* sp) noexcept nogil:
    """A mapped element is final (mappings do not chain): take it off the exact path."""
    cdef Py_ssize_t i, j
    cdef num_t kv
    for j in range(sp.map_len):
        if sp.map[j].kind == KEY_ANY_NAN:
            for i in range(n):
                mask[i] = mask[i] & (s[i] == s[i])
        else:
            kv = from_bits(sp.map[j].key_bits, <num_t*>NULL)
            for i in range(n):
                mask[i] = mask[i] & (s[i] != kv)


cdef void map_mark(const num_t* s, Py_ssize_t n, uint8_t* mask, const CastSpec* sp) noexcept nogil:
    """For maps with bit-exact NaN keys: every candidate key match takes the exact path."""
    cdef Py_ssize_t i, j
    cdef num_t kv
    for j in range(sp.map_len):
        if sp.map[j].kind == KEY_VALUE:
            kv = from_bits(sp.map[j].key_bits, <num_t*>NULL)
            for i in range(n):
                mask[i] = mask[i] | (s[i] == kv)
        else:
            for i in range(n):
                mask[i] = mask[i] | (s[i] != s[i])


cdef bint mark_block(const num_t* s, Py_ssize_t n, uint8_t* mask, const CastSpec* sp) noexcept nogil:
    """Mask of a block the fast loop flagged: every element outside the plan's safe range
    [safe_lo, safe_hi] (the range where the fast loop is right; NaN is outside), adjusted for
    the scalar_map. Generic over the source type only, so no per-mode copy of the fast loops
    is needed to say which elements they were unsure of."""
    cdef num_t lo = from_bits(sp.safe_lo, <num_t*>NULL)
    cdef num_t hi = from_bits(sp.safe_hi, <num_t*>NULL)
    cdef Py_ssize_t i
    cdef uint8_t acc = 0
    for i in range(n):
        mask[i] = not ((s[i] >= lo) & (s[i] <= hi))
    if sp.map_len:
        if sp.map_blendable:
            map_unmark(s, n, mask, sp)
        else:
            map_mark(s, n, mask, sp)
    for i in range(n):
        acc |= mask[i]
    return acc


# --- dispatch over (source, destination) C types --------------------------------------------------

cdef inline bint finish_map(const num_t* s, num2_t* d, Py_ssize_t n, const CastSpec* sp,
                            bint flagged) noexcept nogil:
    """After a fast loop: write the scalar_map's values; returns whether some element may need
    the exact path."""
    if sp.map_len == 0:
        return flagged
    if not sp.map_blendable:
        return True     # bit-exact NaN keys (or inexact widened keys): map_mark finds candidates
    map_apply(s, d, n, sp)
    return flagged


cdef bint fast_pair(const num_t* s, num2_t* d, Py_ssize_t n, const CastSpec* sp) noexcept nogil:
    """One block through the fast loop of its path, then the scalar_map's values."""
    cdef bint flagged
    if num_t is float or num_t is double:
        if num2_t is float or num2_t is double:
            flagged = f2f_modes(s, d, n, sp.rounding, sp.out_of_range)
        else:
            flagged = f2i_modes(s, d, n, sp)
    else:
        if num2_t is float or num2_t is double:
            flagged = i2f_modes(s, d, n, sp.rounding)
        else:
            flagged = i2i_modes(s, d, n, sp.out_of_range)
    return finish_map(s, d, n, sp, flagged)


cdef bint f32_to_mini(const float* s, mini_t* d, Py_ssize_t n, const CastSpec* sp) noexcept nogil:
    """float32 -> the small float of the plan, by the bit-pattern loop for its mode: nearest-even
    has loops of its own (f32_upper_half_even for bfloat16, f32_to_mini_even for the others),
    40% faster than f32_to_mini_mode's; every other mode (and nearest-even into a format
    neither handles: none today) goes to f32_to_mini_mode."""
    cdef bint clamp = sp.out_of_range == OOR_CLAMP
    cdef int rounding = sp.rounding
    if rounding == NEAREST_EVEN:
        if mini_t is uint16_t:
            if is_f32_upper_half(&sp.mini):
                return f32_upper_half_even(s, d, n, &sp.mini, clamp)
        if has_bit_loop(&sp.mini):
            return f32_to_mini_even(s, d, n, &sp.mini, clamp)
    if rounding == TOWARDS_ZERO:
        return f32_to_mini_mode(s, d, n, &sp.mini, clamp, <RTowardsZero*>NULL)
    elif rounding == TOWARDS_POSITIVE:
        return f32_to_mini_mode(s, d, n, &sp.mini, clamp, <RTowardsPositive*>NULL)
    elif rounding == TOWARDS_NEGATIVE:
        return f32_to_mini_mode(s, d, n, &sp.mini, clamp, <RTowardsNegative*>NULL)
    elif rounding == NEAREST_AWAY:
        return f32_to_mini_mode(s, d, n, &sp.mini, clamp, <RNearestAway*>NULL)
    return f32_to_mini_mode(s, d, n, &sp.mini, clamp, <RNearestEven*>NULL)


cdef bint fast_mini(const float_t* s, void* d, Py_ssize_t n, const CastSpec* sp) noexcept nogil:
    """float32/float64 -> a small float (integers arrive widened to float64). The bit-pattern
    loops read float32: a float64 block is rounded to odd into one first (f64_to_f32_odd),
    which keeps every mode's result and flags exact, and flags a value of 2**128 or more."""
    cdef float odd[BLOCK]
    cdef const float* f32
    cdef bint flagged = False
    if float_t is float:
        f32 = s
    else:
        flagged = f64_to_f32_odd(s, odd, n)
        f32 = odd
    if sp.mini.itemsize == 2:
        flagged |= f32_to_mini(f32, <uint16_t*>d, n, sp)
        return finish_map(s, <uint16_t*>d, n, sp, flagged)
    flagged |= f32_to_mini(f32, <uint8_t*>d, n, sp)
    return finish_map(s, <uint8_t*>d, n, sp, flagged)


cdef bint fast_src(const num_t* s, void* d, Py_ssize_t n, const CastSpec* sp) noexcept nogil:
    cdef int c = sp.dst_code
    if c == T_I8:
        return fast_pair(s, <int8_t*>d, n, sp)
    elif c == T_U8:
        return fast_pair(s, <uint8_t*>d, n, sp)
    elif c == T_I16:
        return fast_pair(s, <int16_t*>d, n, sp)
    elif c == T_U16:
        return fast_pair(s, <uint16_t*>d, n, sp)
    elif c == T_I32:
        return fast_pair(s, <int32_t*>d, n, sp)
    elif c == T_U32:
        return fast_pair(s, <uint32_t*>d, n, sp)
    elif c == T_I64:
        return fast_pair(s, <int64_t*>d, n, sp)
    elif c == T_U64:
        return fast_pair(s, <uint64_t*>d, n, sp)
    elif c == T_F32:
        return fast_pair(s, <float*>d, n, sp)
    return fast_pair(s, <double*>d, n, sp)


cdef bint by_source(const num_t* s, void* d, Py_ssize_t n, uint8_t* mask,
                    const CastSpec* sp) noexcept nogil:
    """For a block whose (fast) source type is num_t: the fast loop into d, or, with a mask,
    the mask pass (which elements the exact path must redo)."""
    if mask != NULL:
        return mark_block(s, n, mask, sp)
    if num_t is float or num_t is double:
        if sp.dst_code == T_MINI:
            return fast_mini(s, d, n, sp)
    return fast_src(s, d, n, sp)


cdef bint source_dispatch(const void* s, void* d, Py_ssize_t n, uint8_t* mask,
                          const CastSpec* sp) noexcept nogil:
    cdef int c = sp.src_code
    if c == T_I8:
        return by_source(<const int8_t*>s, d, n, mask, sp)
    elif c == T_U8:
        return by_source(<const uint8_t*>s, d, n, mask, sp)
    elif c == T_I16:
        return by_source(<const int16_t*>s, d, n, mask, sp)
    elif c == T_U16:
        return by_source(<const uint16_t*>s, d, n, mask, sp)
    elif c == T_I32:
        return by_source(<const int32_t*>s, d, n, mask, sp)
    elif c == T_U32:
        return by_source(<const uint32_t*>s, d, n, mask, sp)
    elif c == T_I64:
        return by_source(<const int64_t*>s, d, n, mask, sp)
    elif c == T_U64:
        return by_source(<const uint64_t*>s, d, n, mask, sp)
    elif c == T_F32:
        return by_source(<const float*>s, d, n, mask, sp)
    return by_source(<const double*>s, d, n, mask, sp)


cdef inline bint fast_block(const void* s, void* d, Py_ssize_t n, const CastSpec* sp) noexcept nogil:
    return source_dispatch(s, d, n, NULL, sp)


cdef inline bint mark(const void* s, Py_ssize_t n, uint8_t* mask, const CastSpec* sp) noexcept nogil:
    return source_dispatch(s, NULL, n, mask, sp)


# --- the per-block step ---------------------------------------------------------------------------------

cdef Py_ssize_t fix_masked(const uint8_t* s, uint8_t* d, Py_ssize_t n, const uint8_t* mask,
                           const CastSpec* sp, int* status) noexcept nogil:
    """Exact path for the masked elements of one block; the first failure stops it."""
    cdef Py_ssize_t i = 0, j
    cdef uint64_t word
    cdef int st
    cdef int ssz = sp.src.itemsize, dsz = sp.dst.itemsize
    while i < n:
        if i + 8 <= n:
            memcpy(&word, mask + i, 8)
            if word == 0:
                i += 8
                continue
        j = i + 8 if i + 8 <= n else n
        while i < j:
            if mask[i]:
                st = convert_element(s + i * ssz, d + i * dsz, sp)
                if st != ST_OK:
                    status[0] = st
                    return i
            i += 1
    return -1


cdef Py_ssize_t cast_block_exact(const uint8_t* src, uint8_t* dst, Py_ssize_t m,
                                 const CastKernel* k, int* status) noexcept nogil:
    """Every element of the block through the exact path (tests compare it with the fast one)."""
    cdef Py_ssize_t i
    cdef int st
    cdef int ssz = k.exact.src.itemsize, dsz = k.exact.dst.itemsize
    for i in range(m):
        st = convert_element(src + i * ssz, dst + i * dsz, &k.exact)
        if st != ST_OK:
            status[0] = st
            return i
    return -1


cdef Py_ssize_t cast_block(const uint8_t* src, uint8_t* dst, Py_ssize_t m, const CastKernel* k,
                           int* status) noexcept nogil:
    """Cast one block of m <= BLOCK elements (src and dst do not overlap): -1 on success, else
    the index in the block of the first failing element, with *status its CastStatus (what
    was written to dst before it is unspecified)."""
    cdef uint8_t mask[BLOCK]
    cdef uint8_t btmp[BLOCK]
    cdef float ftmp[BLOCK]
    cdef double dtmp[BLOCK]
    cdef const void* fs = src
    cdef bint flagged = False
    if not k.has_fast:
        return cast_block_exact(src, dst, m, k, status)
    if k.widen == WIDEN_MINI or k.widen == WIDEN_TABLE:
        if k.fast.dst_code == T_F32 and k.fast.map_len == 0:
            # to float32 itself: the widening is the whole (exact) cast
            widen_small_float(src, <float*>dst, m, k.widen, k.table, &k.src_mini)
            return -1
        widen_small_float(src, ftmp, m, k.widen, k.table, &k.src_mini)
        fs = ftmp
    elif k.widen == WIDEN_SUBINT:
        if k.fast.dst_code == T_F32 and k.fast.map_len == 0:
            subint_to_float(src, <float*>dst, m, k.exact.src.bits, k.exact.src.is_signed)
            return -1
        widen_subint(src, btmp, m, k.exact.src.bits, k.exact.src.is_signed)
        fs = btmp
    elif k.widen == WIDEN_INT:
        flagged = widen_int_code(src, k.orig_code, dtmp, m)
        fs = dtmp
    flagged = fast_block(fs, dst, m, &k.fast) | flagged
    if k.fast.narrow_bits:
        flagged = narrow_block(dst, m, k.fast.narrow_bits, k.exact.dst.is_signed,
                               k.fast.out_of_range) | flagged
    if flagged:
        # some element may need the exact path: mask the candidates (the block is in cache)
        # and let the exact path decide each of them from the original bits
        if mark(fs, m, mask, &k.fast):
            return fix_masked(src, dst, m, mask, &k.exact, status)
    return -1


cdef bint can_stream(const CastKernel* k) noexcept nogil:
    """Whether _stream.h's loop computes this cast's fast loop: float64 -> int32, any rounding
    but nearest-away, out_of_range clamp or error, no scalar_map beyond a folded "NaN" key."""
    cdef const CastSpec* sp = &k.fast
    return (ZDT_HAVE_STREAM != 0 and k.has_fast and k.widen == WIDEN_NONE
            and sp.src_code == T_F64 and sp.dst_code == T_I32 and sp.narrow_bits == 0
            and sp.rounding != NEAREST_AWAY
            and (sp.out_of_range == OOR_CLAMP or sp.out_of_range == OOR_ERROR)
            and (sp.map_len == 0 or (sp.map_len == 1 and sp.nan_fold)))


cdef Py_ssize_t cast_block_stream(const uint8_t* src, uint8_t* dst, Py_ssize_t m,
                                  const CastKernel* k, int* status) noexcept nogil:
    """cast_block for a cast can_stream accepts, writing with streaming stores: the block's
    32-byte-aligned middle through _stream.h's loop, its ends through the fast loop, then the
    exact path as in cast_block (same values, same flagged elements)."""
    cdef uint8_t mask[BLOCK]
    cdef const CastSpec* sp = &k.fast
    cdef Py_ssize_t head = ((-<uintptr_t>dst) & 31) >> 2    # int32 elements to a 32-byte line
    cdef Py_ssize_t body, done
    cdef bint flagged = False
    # (dst is on an int32 boundary: run_steps refuses destinations whose elements are not, so
    # the head reaches a 32-byte line, where the streaming stores must be)
    if head > m:
        head = m
    body = (m - head) & ~(<Py_ssize_t>7)
    done = head + body
    if head:
        flagged = fast_block(src, dst, head, sp)
    if body:
        flagged = zdt_f64_i32_stream(<const double*>src + head, <int32_t*>dst + head, body,
                                     sp.rounding, sp.out_of_range == OOR_CLAMP, sp.nan_fold,
                                     from_bits(sp.nan_out, <int32_t*>NULL)) | flagged
    if done < m:
        flagged = fast_block(src + done * 8, dst + done * 4, m - done, sp) | flagged
    if flagged:
        if mark(src, m, mask, sp):
            return fix_masked(src, dst, m, mask, &k.exact, status)
    return -1


# --- the step (see _steps.pxd) ------------------------------------------------------------------------

cdef Py_ssize_t cast_step_fn(const uint8_t* src, uint8_t* dst, Py_ssize_t m, const void* params,
                             int* status) noexcept nogil:
    return cast_block(src, dst, m, <const CastKernel*>params, status)


cdef Py_ssize_t cast_exact_step_fn(const uint8_t* src, uint8_t* dst, Py_ssize_t m,
                                   const void* params, int* status) noexcept nogil:
    return cast_block_exact(src, dst, m, <const CastKernel*>params, status)


cdef Py_ssize_t cast_stream_step_fn(const uint8_t* src, uint8_t* dst, Py_ssize_t m,
                                    const void* params, int* status) noexcept nogil:
    return cast_block_stream(src, dst, m, <const CastKernel*>params, status)


def cast_step(CastKernelSpec spec not None, bint exact=False):
    """The cast as a step of this build (status codes: CastStatus). `exact=True` sends every
    element through the exact path (tests compare the two). The step has a streaming variant
    (run_steps' choice) where can_stream says so."""
    cdef block_fn stream_fn = NULL
    if exact or not spec.k.has_fast:
        return make_step(cast_exact_step_fn, &spec.k, spec, spec.k.exact.src.itemsize,
                         spec.k.exact.dst.itemsize, False, BUILD)
    if can_stream(&spec.k):
        stream_fn = cast_stream_step_fn
    return make_step(cast_step_fn, &spec.k, spec, spec.k.exact.src.itemsize,
                     spec.k.exact.dst.itemsize, False, BUILD, stream_fn)


def fast_flags(CastKernelSpec spec not None, values):
    """Test hook: for each value (an array of the fast loops' source type, i.e. after any
    widening), whether the fast step of `spec` flags it when it is alone in a block: the
    loop, the sub-byte narrowing, and the flag widening a 64-bit integer raises (a float64
    value of 2**53 or more)."""
    cdef const uint8_t[::1] sv = np.ascontiguousarray(values).reshape(-1).view(np.uint8)
    cdef uint8_t out_bytes[8]
    cdef Py_ssize_t i, n
    cdef int ssz = spec.k.fast.src.itemsize
    cdef const CastKernel* k = &spec.k
    cdef double x
    cdef bint flag
    if not k.has_fast:
        raise ValueError("this cast has no fast loop")
    if sv.shape[0] % ssz:
        raise ValueError("values are not of the fast loop's source type")
    n = sv.shape[0] // ssz
    flags = np.zeros(n, dtype=bool)
    for i in range(n):
        flag = fast_block(&sv[i * ssz], out_bytes, 1, &k.fast)
        if k.fast.narrow_bits:
            flag = narrow_block(out_bytes, 1, k.fast.narrow_bits, k.exact.dst.is_signed,
                                k.fast.out_of_range) | flag
        if k.widen == WIDEN_INT and (k.orig_code == T_I64 or k.orig_code == T_U64):
            memcpy(&x, &sv[i * ssz], 8)
            flag = flag | (fabs(x) >= 9007199254740992.0)
        flags[i] = flag
    return flags
