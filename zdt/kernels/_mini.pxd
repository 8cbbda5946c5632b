# cython: language_level=3
"""Small float formats (float16, bfloat16, float8 / float6 / float4) as parameters: rounding a
double to a format's precision and assembling its bit pattern, driven by a MiniFormat
(zdt/kernels/_types.pxd). Inline and branch-free, so the loops that use them vectorise; used by
scale_offset on small floats and by the cast kernels' readers."""

from libc.math cimport fabs, rint
from libc.stdint cimport int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t
from libc.string cimport memcpy

from zdt.kernels._num cimport pow2
from zdt.kernels._types cimport MiniFormat, WIDEN_TABLE

cdef extern from *:
    """
    #include "_portable.h"
    #define ZDT_DBL_MAX 1.7976931348623157e308
    typedef uint32_t * ZDT_RESTRICT zdt_u32_out;
    typedef const uint32_t * ZDT_RESTRICT zdt_u32_in;
    """
    double DBL_MAX "ZDT_DBL_MAX"
    # an output that aliases nothing else: without it, a loop inlined into a large function
    # (compiled with -fno-strict-aliasing, as Python extensions are) reloads spilled values
    # after every store and stays scalar
    ctypedef uint32_t* u32_out "zdt_u32_out"
    ctypedef const uint32_t* u32_in "zdt_u32_in"


cdef inline int mini_exponent(double x, const MiniFormat* m) noexcept nogil:
    """The binade of x, limited to [emin, emax + 1]: below emin values are on the subnormal
    grid; capping above keeps the scale finite (anything that high overflows anyway)."""
    cdef uint64_t xb
    cdef int64_t e
    memcpy(&xb, &x, 8)
    e = <int64_t>((xb >> 52) & 0x7FF) - 1023
    e = e if e > m.emin else m.emin
    e = e if e < m.emax + 1 else m.emax + 1
    return <int>e


cdef inline double mini_scale_in(double x, int e, const MiniFormat* m) noexcept nogil:
    """x scaled so that the format's last mantissa bit in binade e is the units digit."""
    return x * pow2(m.man_bits - e, <double*>NULL)


cdef inline double mini_scale_out(double r, int e, const MiniFormat* m) noexcept nogil:
    return r * pow2(e - m.man_bits, <double*>NULL)


cdef inline uint32_t mini_bits(double v, double x, const MiniFormat* m) noexcept nogil:
    """The bit pattern of v, a value of the format (or beyond its range: the caller flags
    that), with x's sign, infinity and NaN (x is the input v was rounded from)."""
    cdef uint64_t vb, xb
    cdef double av = fabs(v)
    cdef double a = fabs(x)
    cdef uint32_t sub, nrm, hb, sign
    memcpy(&vb, &av, 8)
    memcpy(&xb, &x, 8)
    # below the smallest normal: the significand in units of the smallest subnormal
    sub = <uint32_t>(<int32_t>((av if av < m.min_normal else 0.0) * pow2(m.man_bits - m.emin, <double*>NULL)))
    nrm = ((<uint32_t>((vb >> 52) - <uint64_t>(1023 - m.bias))) << m.man_bits) | \
          (<uint32_t>(vb >> (52 - m.man_bits)) & ((1u << m.man_bits) - 1))
    hb = sub if av < m.min_normal else nrm
    hb = m.inf_bits if a > DBL_MAX else hb
    hb = m.nan_bits if x != x else hb
    sign = m.sign_bit if (xb >> 63) else 0
    # formats without -0 (the fnuz ones) give +0 for a negative zero result
    sign = sign if (hb != 0) | m.has_neg_zero else 0
    return sign | hb


cdef inline double mini_round_even(double x, const MiniFormat* m) noexcept nogil:
    """x rounded to the format, nearest-even, +-inf beyond its finite range (also for formats
    without infinities: the caller reports a non-finite result); NaN stays NaN."""
    cdef int e = mini_exponent(x, m)
    cdef double v = mini_scale_out(rint(mini_scale_in(x, e, m)), e, m)
    return (v * 1e300 * 1e300) if fabs(v) > m.max_finite else v


cdef inline uint32_t mini_to_f32(uint32_t x, int bits, int man_bits, uint32_t sign_bit,
                                 uint32_t rebias_bits, float sub_scale, bint sub_by_shift,
                                 uint32_t nan_rest, uint32_t nan_sign,
                                 uint32_t special_rest) noexcept nogil:
    """A small float's bits (high bits already dropped) -> its float32 bits, exactly, with
    integer operations for normal values and an int -> float conversion for subnormal ones
    (no arithmetic on float32 subnormals, which costs a hundred cycles on many CPUs). The
    format comes as scalars (the fields of its MiniFormat): a struct whose address is taken
    could alias the output under -fno-strict-aliasing, and the loop would not vectorise."""
    cdef uint32_t sign = (x & sign_bit) << (32 - bits)
    cdef uint32_t rest = x & (sign_bit - 1)
    cdef uint32_t shifted = rest << (23 - man_bits)
    cdef uint32_t normal = shifted + rebias_bits
    cdef float subf = (<float>(<int32_t>rest)) * sub_scale
    cdef uint32_t sub, b
    memcpy(&sub, &subf, 4)
    # (sub_by_shift ORed in, not tested around: gcc then keeps one loop and vectorises it)
    b = normal if ((rest >> man_bits) != 0) | sub_by_shift else sub
    b = (shifted | 0x7F800000u) if rest >= special_rest else b       # IEEE inf / NaN
    b = 0x7FC00000u if (rest == nan_rest) & ((x & nan_sign) == nan_sign) else (b | sign)
    return b


cdef inline void widen_small_float(const uint8_t* s, float* t, Py_ssize_t n, int widen,
                                   const float* table, const MiniFormat* m) noexcept nogil:
    """A block of a small float format read as float32, exactly and branch-free: WIDEN_MINI
    from the bits (m is the format; unused high bits of a sub-byte format are dropped),
    WIDEN_TABLE through the 256-entry table of a one-byte format."""
    cdef Py_ssize_t i
    cdef const uint16_t* h = <const uint16_t*>s
    cdef u32_out u = <u32_out>t
    if widen == WIDEN_TABLE:
        for i in range(n):
            t[i] = table[s[i]]
        return
    cdef int bits = m.bits, man_bits = m.man_bits
    cdef uint32_t sign_bit = m.sign_bit, rebias_bits = m.rebias_bits
    cdef float sub_scale = 0.0 if m.sub_by_shift else m.sub_scale    # (bfloat16's is subnormal)
    cdef bint sub_by_shift = m.sub_by_shift
    cdef uint32_t nan_rest = m.nan_rest, nan_sign = m.nan_sign, special_rest = m.special_rest
    cdef uint32_t low = (1u << bits) - 1
    if m.itemsize == 2:
        for i in range(n):
            u[i] = mini_to_f32(h[i], bits, man_bits, sign_bit, rebias_bits, sub_scale,
                               sub_by_shift, nan_rest, nan_sign, special_rest)
    else:
        for i in range(n):
            u[i] = mini_to_f32(s[i] & low, bits, man_bits, sign_bit, rebias_bits, sub_scale,
                               sub_by_shift, nan_rest, nan_sign, special_rest)
