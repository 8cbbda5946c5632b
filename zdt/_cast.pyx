# cython: language_level=3, cdivision=True
"""cast_value kernels: mode-hoisted fast loops, scalar_map blends and the block driver.

See docs/design.md. Each fast loop writes every element and a mask byte per element that it
could not prove right; `run_cast` sends the masked elements through the exact path in
`_exact.pxd`. Loops are written so gcc vectorises them at x86-64-v2: int32 intermediates for
targets up to 32 bits, branch-free selects, tags passed by pointer.
"""

from cpython.mem cimport PyMem_Free, PyMem_Malloc
from libc.math cimport ceil, ceilf, fabs, fabsf, floor, floorf, rint, rintf, trunc, truncf
from libc.stdint cimport (
    int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t,
)
from libc.string cimport memcpy, memset

from zdt._exact cimport convert_element, zdt_clz64
from zdt._types cimport (
    CastSpec, Format, MapEntry,
    float_t, float2_t, int_t, int2_t, num_t, num2_t,
    rmode_t, RNearestEven, RTowardsZero, RTowardsPositive, RTowardsNegative, RNearestAway,
    omode_t, OError, OClamp, OWrap,
    NEAREST_EVEN, TOWARDS_ZERO, TOWARDS_POSITIVE, TOWARDS_NEGATIVE, NEAREST_AWAY,
    OOR_ERROR, OOR_CLAMP, OOR_WRAP,
    KEY_VALUE, KEY_ANY_NAN, KEY_NAN_BITS,
    T_NONE, T_I8, T_U8, T_I16, T_U16, T_I32, T_U32, T_I64, T_U64, T_F32, T_F64,
    ST_OK,
)

# Elements per block: source (<= 16 KiB), destination and mask stay in L1/L2.
cdef enum:
    BLOCK = 2048
BLOCK_SIZE = BLOCK


# --- scalar helpers -----------------------------------------------------------------------------

cdef inline float_t pow2(int k, float_t* tag) noexcept nogil:
    """2**k exactly, built from its bit pattern (k within the normal range of float_t)."""
    cdef uint64_t b64
    cdef uint32_t b32
    cdef double d
    cdef float f
    if float_t is double:
        b64 = (<uint64_t>(1023 + k)) << 52
        memcpy(&d, &b64, 8)
        return d
    else:
        b32 = (<uint32_t>(127 + k)) << 23
        memcpy(&f, &b32, 4)
        return f


cdef inline int precision(float_t* tag) noexcept nogil:
    if float_t is double:
        return 53
    return 24


cdef inline float_t max_finite(float_t* tag) noexcept nogil:
    if float_t is double:
        return 1.7976931348623157e308
    return 3.4028234663852886e38


cdef inline float_t fabs_t(float_t x) noexcept nogil:
    if float_t is double:
        return fabs(x)
    return fabsf(x)


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


cdef inline int int_bits(int_t* tag) noexcept nogil:
    return sizeof(int_t) * 8


cdef inline bint int_signed(int_t* tag) noexcept nogil:
    return (<int_t>-1) < 0


cdef inline int_t int_max(int_t* tag) noexcept nogil:
    if int_signed(tag):
        return <int_t>(((<uint64_t>1) << (sizeof(int_t) * 8 - 1)) - 1)
    return <int_t>(~(<uint64_t>0))


cdef inline int_t int_min(int_t* tag) noexcept nogil:
    if int_signed(tag):
        return <int_t>((<uint64_t>1) << (sizeof(int_t) * 8 - 1))
    return 0


cdef inline int64_t int_min64(int_t* tag) noexcept nogil:
    return <int64_t>int_min(tag)


cdef inline uint64_t int_max64(int_t* tag) noexcept nogil:
    return <uint64_t>int_max(tag)


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

cdef bint f2i(const float_t* s, int_t* d, Py_ssize_t n, uint8_t* mask,
              rmode_t* rm, omode_t* om) noexcept nogil:
    """float -> integer. Masks: NaN/Inf always; out of range in error mode; |r| >= 2**63 under
    wrap to a 64-bit target."""
    cdef int nb = int_bits(d)
    cdef bint sgn = int_signed(d)
    cdef float_t* ft = NULL
    cdef float_t lo = -pow2(nb - 1, ft) if sgn else 0
    cdef float_t hi_excl = pow2(nb - sgn, ft)
    cdef float_t half_n = pow2(nb - 1, ft)
    cdef float_t fmax = max_finite(ft)
    # largest float_t <= int max; when int max itself is not a float_t, clamping goes through it
    cdef bint max_exact = (nb - sgn) <= precision(ft)
    cdef float_t hi_c = (hi_excl - 1) if max_exact else (hi_excl - pow2(nb - sgn - precision(ft), ft))
    cdef int_t dmax = int_max(d)
    cdef Py_ssize_t i
    cdef uint8_t acc = 0, f
    cdef float_t x, r, c
    cdef int_t v
    for i in range(n):
        x = s[i]
        r = round_t(x, rm)
        if omode_t is OError:
            f = not ((r >= lo) & (r < hi_excl))
            c = 0 if f else r
            d[i] = float_to_int(c, d)
        elif omode_t is OClamp:
            f = not (fabs_t(x) <= fmax)
            c = r if r >= lo else lo          # NaN -> lo (masked anyway)
            c = c if c <= hi_c else hi_c
            v = float_to_int(c, d)
            if not max_exact:
                v = dmax if r >= hi_excl else v
            d[i] = v
        else:
            f = not (fabs_t(x) <= fmax)
            if nb <= 32:
                d[i] = <int_t>wrap32(0 if f else r, nb)
            else:
                f = f | (not (fabs_t(r) < half_n))
                c = 0 if f else r
                d[i] = <int_t>(<int64_t>c)
        mask[i] = f
        acc |= f
    return acc


cdef bint i2i(const int_t* s, int2_t* d, Py_ssize_t n, uint8_t* mask, omode_t* om) noexcept nogil:
    """integer -> integer. Masks out-of-range values in error mode only."""
    cdef bint below_possible = int_min64(<int_t*>NULL) < int_min64(<int2_t*>NULL)
    cdef bint above_possible = int_max64(<int_t*>NULL) > int_max64(<int2_t*>NULL)
    cdef int_t lo = <int_t>int_min(<int2_t*>NULL) if below_possible else 0
    cdef int_t hi = <int_t>int_max(<int2_t*>NULL) if above_possible else 0
    cdef int2_t dmin = int_min(<int2_t*>NULL)
    cdef int2_t dmax = int_max(<int2_t*>NULL)
    cdef Py_ssize_t i
    cdef uint8_t acc = 0, f
    cdef bint below, above
    cdef int_t v
    if omode_t is OWrap:
        # C conversion to a narrower integer type is two's complement modulo 2**N
        for i in range(n):
            d[i] = <int2_t>s[i]
        return False
    if not (below_possible or above_possible):
        for i in range(n):
            d[i] = <int2_t>s[i]
        return False
    for i in range(n):
        v = s[i]
        below = below_possible and v < lo
        above = above_possible and v > hi
        if omode_t is OError:
            f = below | above
            d[i] = <int2_t>v
            mask[i] = f
            acc |= f
        else:
            d[i] = dmin if below else (dmax if above else <int2_t>v)
    return acc


cdef inline uint64_t float_as_u64_mod(float_t d) noexcept nogil:
    """The integer value of an integer-valued d in [-2**63, 2**64] modulo 2**64."""
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
        err2 = <int64_t>(uv - float_as_u64_mod(d2))
        return d2 if (err != 0) & (err2 == -err) & (fabs_t(d2) > fabs_t(d)) else d
    return d


cdef bint i2f(const int_t* s, float_t* d, Py_ssize_t n, uint8_t* mask, rmode_t* rm) noexcept nogil:
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


cdef bint f2f(const float_t* s, float2_t* d, Py_ssize_t n, uint8_t* mask,
              rmode_t* rm, omode_t* om) noexcept nogil:
    """float32/float64 -> float32/float64. Only float64 -> float32 can round or overflow; it
    rounds in hardware (nearest-even) then steps one ulp where the mode disagrees. Masks finite
    inputs that overflowed (the exact path decides between the largest float, inf and an error)."""
    cdef Py_ssize_t i
    cdef uint8_t acc = 0, f
    cdef double x, b, b2, err
    cdef float r, r2
    cdef bint adj
    if (float_t is float and float2_t is float) or (float_t is double and float2_t is double):
        for i in range(n):
            d[i] = <float2_t>s[i]
        return False
    elif float_t is float and float2_t is double:
        for i in range(n):
            d[i] = <double>s[i]
        return False
    else:
        for i in range(n):
            x = s[i]
            r = <float>x
            f = (not (fabsf(r) <= 3.4028234663852886e38)) & (fabs(x) <= 1.7976931348623157e308)
            if rmode_t is RNearestEven:
                if omode_t is OClamp:
                    f = 0           # +-inf is the clamped result
            else:
                b = <double>r
                if rmode_t is RTowardsZero:
                    r = step_mag(r, -1) if fabs(b) > fabs(x) else r
                elif rmode_t is RTowardsPositive:
                    r = step_mag(r, -1 if sign_of(r) else 1) if b < x else r
                elif rmode_t is RTowardsNegative:
                    r = step_mag(r, 1 if sign_of(r) else -1) if b > x else r
                else:
                    # nearest-away differs from nearest-even only on an exact tie that went
                    # towards zero: r2 is the other neighbour of x
                    err = x - b
                    r2 = step_mag(r, (-1 if sign_of(r) else 1) if err > 0 else (1 if sign_of(r) else -1))
                    b2 = <double>r2
                    adj = ((b2 - b) == 2 * err) & (fabs(b2) > fabs(b))
                    r = r2 if adj else r
                f = f | ((not (fabsf(r) <= 3.4028234663852886e38)) & (fabs(x) <= 1.7976931348623157e308))
            d[i] = r
            mask[i] = f
            acc |= f
        return acc


# --- mode dispatch (runtime enum -> tag types) -----------------------------------------------------

cdef inline bint f2i_o(const float_t* s, int_t* d, Py_ssize_t n, uint8_t* mask,
                       rmode_t* rm, int oor) noexcept nogil:
    if oor == OOR_CLAMP:
        return f2i(s, d, n, mask, rm, <OClamp*>NULL)
    elif oor == OOR_WRAP:
        return f2i(s, d, n, mask, rm, <OWrap*>NULL)
    return f2i(s, d, n, mask, rm, <OError*>NULL)


cdef bint f2i_modes(const float_t* s, int_t* d, Py_ssize_t n, uint8_t* mask,
                    int rounding, int oor) noexcept nogil:
    if rounding == TOWARDS_ZERO:
        return f2i_o(s, d, n, mask, <RTowardsZero*>NULL, oor)
    elif rounding == TOWARDS_POSITIVE:
        return f2i_o(s, d, n, mask, <RTowardsPositive*>NULL, oor)
    elif rounding == TOWARDS_NEGATIVE:
        return f2i_o(s, d, n, mask, <RTowardsNegative*>NULL, oor)
    elif rounding == NEAREST_AWAY:
        return f2i_o(s, d, n, mask, <RNearestAway*>NULL, oor)
    return f2i_o(s, d, n, mask, <RNearestEven*>NULL, oor)


cdef bint i2i_modes(const int_t* s, int2_t* d, Py_ssize_t n, uint8_t* mask, int oor) noexcept nogil:
    if oor == OOR_CLAMP:
        return i2i(s, d, n, mask, <OClamp*>NULL)
    elif oor == OOR_WRAP:
        return i2i(s, d, n, mask, <OWrap*>NULL)
    return i2i(s, d, n, mask, <OError*>NULL)


cdef bint i2f_modes(const int_t* s, float_t* d, Py_ssize_t n, uint8_t* mask, int rounding) noexcept nogil:
    if rounding == TOWARDS_ZERO:
        return i2f(s, d, n, mask, <RTowardsZero*>NULL)
    elif rounding == TOWARDS_POSITIVE:
        return i2f(s, d, n, mask, <RTowardsPositive*>NULL)
    elif rounding == TOWARDS_NEGATIVE:
        return i2f(s, d, n, mask, <RTowardsNegative*>NULL)
    elif rounding == NEAREST_AWAY:
        return i2f(s, d, n, mask, <RNearestAway*>NULL)
    return i2f(s, d, n, mask, <RNearestEven*>NULL)


cdef inline bint f2f_o(const float_t* s, float2_t* d, Py_ssize_t n, uint8_t* mask,
                       rmode_t* rm, int oor) noexcept nogil:
    # 'wrap' with a float target only reaches here when decoding; it is an error there
    if oor == OOR_CLAMP:
        return f2f(s, d, n, mask, rm, <OClamp*>NULL)
    return f2f(s, d, n, mask, rm, <OError*>NULL)


cdef bint f2f_modes(const float_t* s, float2_t* d, Py_ssize_t n, uint8_t* mask,
                    int rounding, int oor) noexcept nogil:
    if rounding == TOWARDS_ZERO:
        return f2f_o(s, d, n, mask, <RTowardsZero*>NULL, oor)
    elif rounding == TOWARDS_POSITIVE:
        return f2f_o(s, d, n, mask, <RTowardsPositive*>NULL, oor)
    elif rounding == TOWARDS_NEGATIVE:
        return f2f_o(s, d, n, mask, <RTowardsNegative*>NULL, oor)
    elif rounding == NEAREST_AWAY:
        return f2f_o(s, d, n, mask, <RNearestAway*>NULL, oor)
    return f2f_o(s, d, n, mask, <RNearestEven*>NULL, oor)


# --- scalar_map inside a block ---------------------------------------------------------------------

cdef inline num_t from_bits(uint64_t bits, num_t* tag) noexcept nogil:
    cdef num_t v
    cdef uint8_t b1
    cdef uint16_t b2
    cdef uint32_t b4
    if sizeof(num_t) == 1:
        b1 = <uint8_t>bits
        memcpy(&v, &b1, 1)
    elif sizeof(num_t) == 2:
        b2 = <uint16_t>bits
        memcpy(&v, &b2, 2)
    elif sizeof(num_t) == 4:
        b4 = <uint32_t>bits
        memcpy(&v, &b4, 4)
    else:
        memcpy(&v, &bits, 8)
    return v


cdef bint map_blend(const num_t* s, num2_t* d, Py_ssize_t n, uint8_t* mask,
                    const MapEntry* entries, Py_ssize_t k) noexcept nogil:
    """Apply value and "NaN" keys as selects, last entry first so the first occurrence wins;
    a hit is final (mappings do not chain), so its mask byte is cleared."""
    cdef Py_ssize_t i, j
    cdef num_t kv
    cdef num2_t ov
    cdef bint hit
    cdef uint8_t acc = 0
    for j in range(k - 1, -1, -1):
        ov = from_bits(entries[j].out_bits, <num2_t*>NULL)
        if entries[j].kind == KEY_ANY_NAN:
            for i in range(n):
                hit = s[i] != s[i]
                d[i] = ov if hit else d[i]
                mask[i] = mask[i] & (not hit)
        else:
            kv = from_bits(entries[j].key_bits, <num_t*>NULL)
            for i in range(n):
                hit = s[i] == kv
                d[i] = ov if hit else d[i]
                mask[i] = mask[i] & (not hit)
    for i in range(n):
        acc |= mask[i]
    return acc


cdef bint map_mark(const num_t* s, Py_ssize_t n, uint8_t* mask,
                   const MapEntry* entries, Py_ssize_t k) noexcept nogil:
    """For maps with bit-exact NaN keys: mark every candidate for the exact path instead."""
    cdef Py_ssize_t i, j
    cdef num_t kv
    cdef uint8_t acc = 0
    for j in range(k):
        if entries[j].kind == KEY_VALUE:
            kv = from_bits(entries[j].key_bits, <num_t*>NULL)
            for i in range(n):
                mask[i] = mask[i] | (s[i] == kv)
        else:
            for i in range(n):
                mask[i] = mask[i] | (s[i] != s[i])
    for i in range(n):
        acc |= mask[i]
    return acc


# --- dispatch over (source, destination) C types --------------------------------------------------

cdef bint fast_pair(const num_t* s, num2_t* d, Py_ssize_t n, uint8_t* mask,
                    const CastSpec* sp) noexcept nogil:
    cdef bint any_masked
    cdef bint writes_mask = True
    if num_t is float or num_t is double:
        if num2_t is float or num2_t is double:
            any_masked = f2f_modes(s, d, n, mask, sp.rounding, sp.out_of_range)
            writes_mask = (num_t is double) and (num2_t is float)
        else:
            any_masked = f2i_modes(s, d, n, mask, sp.rounding, sp.out_of_range)
    else:
        if num2_t is float or num2_t is double:
            any_masked = i2f_modes(s, d, n, mask, sp.rounding)
            writes_mask = False
        else:
            any_masked = i2i_modes(s, d, n, mask, sp.out_of_range)
            # only error mode on a narrowing pair writes the mask
            writes_mask = sp.out_of_range == OOR_ERROR and (
                int_min64(<num_t*>NULL) < int_min64(<num2_t*>NULL)
                or int_max64(<num_t*>NULL) > int_max64(<num2_t*>NULL))
    if sp.map_len == 0:
        return any_masked
    if not writes_mask:
        memset(mask, 0, n)
    if sp.map_blendable:
        return map_blend(s, d, n, mask, sp.map, sp.map_len)
    return map_mark(s, n, mask, sp.map, sp.map_len)


cdef bint fast_src(const num_t* s, void* d, Py_ssize_t n, uint8_t* mask,
                   const CastSpec* sp) noexcept nogil:
    cdef int c = sp.dst_code
    if c == T_I8:
        return fast_pair(s, <int8_t*>d, n, mask, sp)
    elif c == T_U8:
        return fast_pair(s, <uint8_t*>d, n, mask, sp)
    elif c == T_I16:
        return fast_pair(s, <int16_t*>d, n, mask, sp)
    elif c == T_U16:
        return fast_pair(s, <uint16_t*>d, n, mask, sp)
    elif c == T_I32:
        return fast_pair(s, <int32_t*>d, n, mask, sp)
    elif c == T_U32:
        return fast_pair(s, <uint32_t*>d, n, mask, sp)
    elif c == T_I64:
        return fast_pair(s, <int64_t*>d, n, mask, sp)
    elif c == T_U64:
        return fast_pair(s, <uint64_t*>d, n, mask, sp)
    elif c == T_F32:
        return fast_pair(s, <float*>d, n, mask, sp)
    return fast_pair(s, <double*>d, n, mask, sp)


cdef bint fast_block(const void* s, void* d, Py_ssize_t n, uint8_t* mask,
                     const CastSpec* sp) noexcept nogil:
    cdef int c = sp.src_code
    if c == T_I8:
        return fast_src(<const int8_t*>s, d, n, mask, sp)
    elif c == T_U8:
        return fast_src(<const uint8_t*>s, d, n, mask, sp)
    elif c == T_I16:
        return fast_src(<const int16_t*>s, d, n, mask, sp)
    elif c == T_U16:
        return fast_src(<const uint16_t*>s, d, n, mask, sp)
    elif c == T_I32:
        return fast_src(<const int32_t*>s, d, n, mask, sp)
    elif c == T_U32:
        return fast_src(<const uint32_t*>s, d, n, mask, sp)
    elif c == T_I64:
        return fast_src(<const int64_t*>s, d, n, mask, sp)
    elif c == T_U64:
        return fast_src(<const uint64_t*>s, d, n, mask, sp)
    elif c == T_F32:
        return fast_src(<const float*>s, d, n, mask, sp)
    return fast_src(<const double*>s, d, n, mask, sp)


# --- driver ----------------------------------------------------------------------------------------

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


cdef Py_ssize_t run_cast(const uint8_t* src, uint8_t* dst, Py_ssize_t n,
                         const CastSpec* sp, int* status) noexcept nogil:
    """Cast n elements; -1 on success, else the index of the first failing element."""
    cdef uint8_t mask[BLOCK]
    cdef Py_ssize_t start, m, i, bad
    cdef int ssz = sp.src.itemsize, dsz = sp.dst.itemsize
    cdef int st
    status[0] = ST_OK
    if sp.use_fast and sp.src_code != T_NONE and sp.dst_code != T_NONE:
        start = 0
        while start < n:
            m = n - start if n - start < BLOCK else BLOCK
            if fast_block(src + start * ssz, dst + start * dsz, m, mask, sp):
                bad = fix_masked(src + start * ssz, dst + start * dsz, m, mask, sp, status)
                if bad >= 0:
                    return start + bad
            start += m
        return -1
    for i in range(n):
        st = convert_element(src + i * ssz, dst + i * dsz, sp)
        if st != ST_OK:
            status[0] = st
            return i
    return -1


# --- Python entry ----------------------------------------------------------------------------------

cdef void fill_format(Format* f, tuple t) except *:
    (f.kind, f.itemsize, f.bits, f.is_signed, f.man_bits, f.exp_bits, f.bias,
     f.max_exp_field, f.max_man, f.nan_style, f.has_inf, f.has_neg_zero, f.has_zero,
     f.has_subnormal) = t


def cast_flat(src, dst, tuple src_format, tuple dst_format, int src_code, int dst_code,
              int rounding, int out_of_range, list map_entries, bint use_fast=True):
    """Cast the 1-d native-order uint8 view `src` into `dst` (both contiguous, same element
    count). `map_entries` is a list of (kind, key_bits, out_bits). Returns (index, status):
    index -1 on success, else the first failing element. The GIL is released throughout."""
    cdef const uint8_t[::1] sv = src
    cdef uint8_t[::1] dv = dst
    cdef CastSpec sp
    cdef MapEntry* entries = NULL
    cdef Py_ssize_t n, k, idx
    cdef int status = ST_OK
    fill_format(&sp.src, src_format)
    fill_format(&sp.dst, dst_format)
    if sv.shape[0] % sp.src.itemsize or dv.shape[0] % sp.dst.itemsize:
        raise ValueError("buffer size is not a multiple of the item size")
    n = sv.shape[0] // sp.src.itemsize
    if dv.shape[0] // sp.dst.itemsize != n:
        raise ValueError(f"source has {n} elements, destination {dv.shape[0] // sp.dst.itemsize}")
    if n == 0:
        return -1, ST_OK
    sp.src_code = src_code
    sp.dst_code = dst_code
    sp.rounding = rounding
    sp.out_of_range = out_of_range
    sp.use_fast = use_fast
    sp.map_len = len(map_entries)
    sp.map_blendable = True
    if sp.map_len:
        entries = <MapEntry*>PyMem_Malloc(sp.map_len * sizeof(MapEntry))
        if entries == NULL:
            raise MemoryError()
    try:
        for k in range(sp.map_len):
            entries[k].kind, entries[k].key_bits, entries[k].out_bits = map_entries[k]
            if entries[k].kind == KEY_NAN_BITS:
                sp.map_blendable = False
        sp.map = entries
        with nogil:
            idx = run_cast(&sv[0], &dv[0], n, &sp, &status)
    finally:
        PyMem_Free(entries)
    return idx, status
