# cython: language_level=3
"""Exact conversion of one element between any two number formats (the slow path).

Every element the fast loops cannot prove right, and every element of a format with no C type,
comes through `convert_element`. The value is decoded from its bit pattern into
`Num = (class, sign, magnitude, exponent)` with value = (-1)^sign * magnitude * 2^exponent,
rounded with integer arithmetic in the requested mode, range-checked and encoded into the
target's bit pattern. No floating-point arithmetic, so no dependence on the FP environment.

Everything here is `noexcept nogil` and reports failure through a `Status` code.
"""

from libc.stdint cimport int64_t, uint8_t, uint16_t, uint32_t, uint64_t
from libc.string cimport memcpy

from zdt.kernels._types cimport (
    CastSpec, Format, MapEntry,
    FMT_INT, FMT_FLOAT,
    NAN_NONE, NAN_IEEE, NAN_ALL_ONES, NAN_NEG_ZERO, NAN_EXP_ONLY,
    KEY_VALUE, KEY_ANY_NAN, KEY_NAN_BITS,
    NEAREST_EVEN, TOWARDS_ZERO, TOWARDS_POSITIVE, TOWARDS_NEGATIVE, NEAREST_AWAY,
    OOR_ERROR, OOR_CLAMP, OOR_WRAP,
    ST_OK, ST_NAN, ST_INF, ST_RANGE, ST_RANGE_WRAP,
)

from zdt.kernels._portable cimport zdt_clz64


cdef enum NumClass:
    NUM_FINITE = 0
    NUM_INF = 1
    NUM_NAN = 2

ctypedef struct Num:
    int cls
    bint neg
    uint64_t mag
    int exp


cdef inline uint64_t low_mask(int nbits) noexcept nogil:
    return (<uint64_t>0xFFFFFFFFFFFFFFFF) if nbits >= 64 else ((<uint64_t>1 << nbits) - 1)


cdef inline uint64_t load_bits(const uint8_t* p, int itemsize) noexcept nogil:
    """The element at p as an unsigned integer of its own width (native byte order)."""
    cdef uint16_t u16
    cdef uint32_t u32
    cdef uint64_t u64
    if itemsize == 1:
        return p[0]
    elif itemsize == 2:
        memcpy(&u16, p, 2)
        return u16
    elif itemsize == 4:
        memcpy(&u32, p, 4)
        return u32
    memcpy(&u64, p, 8)
    return u64


cdef inline void store_bits(uint8_t* p, int itemsize, uint64_t bits) noexcept nogil:
    cdef uint16_t u16
    cdef uint32_t u32
    if itemsize == 1:
        p[0] = <uint8_t>bits
    elif itemsize == 2:
        u16 = <uint16_t>bits
        memcpy(p, &u16, 2)
    elif itemsize == 4:
        u32 = <uint32_t>bits
        memcpy(p, &u32, 4)
    else:
        memcpy(p, &bits, 8)


cdef inline uint64_t sign_bit(const Format* f) noexcept nogil:
    return (<uint64_t>1 << (f.bits - 1)) if f.is_signed else 0


cdef inline bint float_is_nan(uint64_t raw, const Format* f) noexcept nogil:
    cdef uint64_t e_all = low_mask(f.exp_bits)
    cdef uint64_t e = (raw >> f.man_bits) & e_all
    cdef uint64_t m = raw & low_mask(f.man_bits)
    if f.nan_style == NAN_IEEE:
        return e == e_all and m != 0
    elif f.nan_style == NAN_ALL_ONES:
        return e == e_all and m == low_mask(f.man_bits)
    elif f.nan_style == NAN_NEG_ZERO:
        return raw == sign_bit(f)
    elif f.nan_style == NAN_EXP_ONLY:
        return raw == low_mask(f.bits)
    return False


cdef inline bint float_is_zero(uint64_t raw, const Format* f) noexcept nogil:
    if not f.has_zero:
        return False
    if f.nan_style == NAN_NEG_ZERO:
        return raw == 0
    return (raw & ~sign_bit(f) & low_mask(f.bits)) == 0


cdef inline Num decode(uint64_t raw, const Format* f) noexcept nogil:
    cdef Num r
    cdef int64_t v
    cdef uint64_t e, m
    r.cls = NUM_FINITE
    r.neg = False
    r.exp = 0
    if f.kind == FMT_INT:
        if f.is_signed:
            # sign-extend from the logical width (int4 in a byte: the low 4 bits decide)
            v = <int64_t>(raw << (64 - f.bits)) >> (64 - f.bits)
            if v < 0:
                r.neg = True
                r.mag = (<uint64_t>(-(v + 1))) + 1
            else:
                r.mag = <uint64_t>v
        else:
            r.mag = raw & low_mask(f.bits)
        return r
    r.neg = f.is_signed and ((raw >> (f.bits - 1)) & 1)
    if float_is_nan(raw, f):
        r.cls = NUM_NAN
        r.mag = 0
        return r
    if f.has_inf and (raw & ~sign_bit(f) & low_mask(f.bits)) == f.inf_bits:
        r.cls = NUM_INF
        r.mag = 0
        return r
    e = (raw >> f.man_bits) & low_mask(f.exp_bits)
    m = raw & low_mask(f.man_bits)
    if e == 0 and f.has_subnormal:
        r.mag = m
        r.exp = 1 - f.bias - f.man_bits
    else:
        r.mag = m | (<uint64_t>1 << f.man_bits)
        r.exp = <int>e - f.bias - f.man_bits
    return r


cdef inline uint64_t round_shift(uint64_t mag, int shift, bint neg, int rounding) noexcept nogil:
    """mag / 2**shift rounded to an integer in `rounding` (shift > 0; the sign only steers
    the directed modes). Exact: integer arithmetic only."""
    cdef uint64_t q, rem, half
    cdef int above_half   # -1 below half, 0 exactly half, 1 above half
    if shift >= 64:
        q = 0
        rem = mag
        if shift > 64:
            above_half = -1          # mag < 2**64 <= half
        else:
            half = <uint64_t>1 << 63
            above_half = (rem > half) - (rem < half)
    else:
        q = mag >> shift
        rem = mag & ((<uint64_t>1 << shift) - 1)
        half = <uint64_t>1 << (shift - 1)
        above_half = (rem > half) - (rem < half)
    if rem == 0 or rounding == TOWARDS_ZERO:
        return q
    if rounding == TOWARDS_POSITIVE:
        return q + (not neg)
    if rounding == TOWARDS_NEGATIVE:
        return q + neg
    if rounding == NEAREST_AWAY:
        return q + (above_half >= 0)
    if above_half > 0 or (above_half == 0 and (q & 1) != 0):
        return q + 1
    return q


cdef inline bint is_tie(uint64_t mag, int shift) noexcept nogil:
    """Whether mag / 2**shift (shift > 0) lies exactly halfway between two integers."""
    if shift > 64:
        return False
    if shift == 64:
        return mag == (<uint64_t>1 << 63)
    return (mag & ((<uint64_t>1 << shift) - 1)) == (<uint64_t>1 << (shift - 1))


cdef inline int encode_int(Num x, const Format* f, int rounding, int oor, uint64_t* out) noexcept nogil:
    cdef uint64_t q = 0, low = 0, v, max_pos, max_neg_mag
    cdef bint big = False
    cdef int n = f.bits
    if x.cls == NUM_NAN:
        return ST_NAN
    if x.cls == NUM_INF:
        return ST_INF
    if x.mag == 0:
        q = 0
    elif x.exp >= 0:
        if x.exp >= 64:
            big = True
            low = 0
        elif x.exp > 0 and (x.mag >> (64 - x.exp)) != 0:
            big = True
            low = x.mag << x.exp
        else:
            q = x.mag << x.exp
    else:
        q = round_shift(x.mag, -x.exp, x.neg, rounding)
    if f.is_signed:
        max_pos = (<uint64_t>1 << (n - 1)) - 1
        max_neg_mag = <uint64_t>1 << (n - 1)
    else:
        max_pos = low_mask(n)
        max_neg_mag = 0
    if not big and q <= (max_neg_mag if x.neg else max_pos):
        v = (~q + 1) if x.neg else q
    elif oor == OOR_CLAMP:
        v = (~max_neg_mag + 1) if x.neg else max_pos
    elif oor == OOR_WRAP:
        v = low if big else q
        if x.neg:
            v = ~v + 1
        v &= low_mask(n)
        if f.is_signed and n < 64 and (v >> (n - 1)) & 1:
            v |= ~low_mask(n)   # sign-extend so the stored byte(s) hold the two's complement
    else:
        return ST_RANGE
    out[0] = v & low_mask(8 * f.itemsize)
    return ST_OK


cdef inline uint64_t float_nan_bits(const Format* f, bint neg) noexcept nogil:
    """The NaN a NaN input becomes: the canonical one, keeping its sign where a NaN can have
    one (IEEE-style and all-ones NaNs)."""
    if neg and (f.nan_style == NAN_IEEE or f.nan_style == NAN_ALL_ONES):
        return f.nan_bits | sign_bit(f)
    return f.nan_bits


cdef inline uint64_t float_max_bits(const Format* f) noexcept nogil:
    return (<uint64_t>f.max_exp_field << f.man_bits) | f.max_man


cdef inline uint64_t float_min_bits(const Format* f) noexcept nogil:
    """Smallest positive value (for formats without zero, where it is what clamp gives)."""
    return 1 if f.has_subnormal else 0


cdef inline int encode_float(Num x, const Format* f, int rounding, int oor, uint64_t* out) noexcept nogil:
    cdef uint64_t sgn = sign_bit(f) if x.neg else 0
    cdef uint64_t m, mf
    cdef int p = f.man_bits + 1
    cdef int emin = 1 - f.bias
    cdef int big_e, qe, shift, ef
    cdef bint overflow
    if x.cls == NUM_NAN:
        if f.nan_style == NAN_NONE:
            return ST_NAN
        out[0] = float_nan_bits(f, x.neg)
        return ST_OK
    if x.cls == NUM_INF:
        if not f.has_inf:
            return ST_INF
        out[0] = sgn | f.inf_bits
        return ST_OK
    if x.neg and not f.is_signed and x.mag != 0:
        # a negative value in a format without a sign (float8_e8m0fnu): below the range
        if oor == OOR_CLAMP:
            out[0] = float_min_bits(f)
            return ST_OK
        return ST_RANGE_WRAP if oor == OOR_WRAP else ST_RANGE
    if x.mag == 0:
        if not f.has_zero:
            if oor == OOR_CLAMP:
                out[0] = float_min_bits(f)
                return ST_OK
            return ST_RANGE_WRAP if oor == OOR_WRAP else ST_RANGE
        out[0] = sgn if f.has_neg_zero else 0
        return ST_OK
    big_e = x.exp + (63 - zdt_clz64(x.mag))           # floor(log2 |x|)
    if not f.has_subnormal:
        emin = -f.bias                                  # exponent field 0 is a normal number
    qe = (big_e if big_e > emin else emin) - f.man_bits  # exponent of the last kept bit
    shift = qe - x.exp
    if shift <= 0:
        m = x.mag << (-shift)
    elif f.man_bits == 0 and rounding == NEAREST_EVEN and is_tie(x.mag, shift):
        # no mantissa bits (float8_e8m0fnu): a tie goes to the even exponent field, not to
        # an even significand (every significand is 1)
        m = 1
        if ((qe + f.bias) & 1) != 0:
            m = 2
    else:
        m = round_shift(x.mag, shift, x.neg, rounding)
    if (m >> p) != 0:                                   # rounded up to the next binade
        m >>= 1
        qe += 1
    if m == 0:                                          # underflow: signed zero
        if not f.has_zero:
            # no zero to round to: the smallest value, or out of range without clamp
            if oor == OOR_CLAMP:
                out[0] = float_min_bits(f)
                return ST_OK
            return ST_RANGE_WRAP if oor == OOR_WRAP else ST_RANGE
        out[0] = sgn if f.has_neg_zero else 0
        return ST_OK
    if (m >> f.man_bits) == 0:                          # subnormal: exponent field 0
        ef = 0
        mf = m
    else:
        ef = qe + f.man_bits + f.bias
        mf = m & low_mask(f.man_bits)
    if not f.has_subnormal and ef < 0:
        if oor == OOR_CLAMP:
            out[0] = float_min_bits(f)
            return ST_OK
        return ST_RANGE_WRAP if oor == OOR_WRAP else ST_RANGE
    overflow = ef > f.max_exp_field or (ef == f.max_exp_field and mf > f.max_man)
    if overflow:
        if oor == OOR_CLAMP:
            if f.has_inf:
                out[0] = sgn | f.inf_bits
            else:
                out[0] = sgn | float_max_bits(f)
            return ST_OK
        return ST_RANGE_WRAP if oor == OOR_WRAP else ST_RANGE
    out[0] = sgn | (<uint64_t>ef << f.man_bits) | mf
    return ST_OK


cdef inline bint key_matches(uint64_t raw, const MapEntry* k, const Format* f) noexcept nogil:
    """Whether the element (its bit pattern) matches a key, comparing the format's logical
    bits only (the unused high bits of a sub-byte format may be anything)."""
    cdef uint64_t bits = raw & low_mask(f.bits)
    if k.kind == KEY_NAN_BITS:
        return bits == (k.key_bits & low_mask(f.bits))
    if k.kind == KEY_ANY_NAN:
        return f.kind == FMT_FLOAT and float_is_nan(raw, f)
    if bits == (k.key_bits & low_mask(f.bits)):
        return True
    # numeric equality: +0.0 and -0.0 are the same value
    return f.kind == FMT_FLOAT and float_is_zero(raw, f) and float_is_zero(k.key_bits, f)


cdef inline int convert_element(const uint8_t* s, uint8_t* d, const CastSpec* sp) noexcept nogil:
    """scalar_map first, else exact conversion with rounding then out_of_range."""
    cdef uint64_t raw = load_bits(s, sp.src.itemsize)
    cdef uint64_t out = 0
    cdef Py_ssize_t j
    cdef int st
    cdef Num x
    for j in range(sp.map_len):
        if key_matches(raw, &sp.map[j], &sp.src):
            store_bits(d, sp.dst.itemsize, sp.map[j].out_bits)
            return ST_OK
    x = decode(raw, &sp.src)
    if sp.dst.kind == FMT_INT:
        st = encode_int(x, &sp.dst, sp.rounding, sp.out_of_range, &out)
    else:
        st = encode_float(x, &sp.dst, sp.rounding, sp.out_of_range, &out)
    if st == ST_OK:
        store_bits(d, sp.dst.itemsize, out)
    return st
