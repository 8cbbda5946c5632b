# cython: language_level=3
"""Small float formats (float16, bfloat16, float8 / float6 / float4) as parameters: rounding a
double to a format's precision and assembling its bit pattern, driven by a MiniFormat
(zdt/_types.pxd). Inline and branch-free, so the loops that use them vectorise; shared by the
cast kernels (f2mini) and scale_offset."""

from libc.math cimport fabs, rint
from libc.stdint cimport int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t
from libc.string cimport memcpy

from zdt._num cimport half_to_float, pow2
from zdt._types cimport MiniFormat, WIDEN_BF16, WIDEN_HALF

cdef extern from *:
    """
    #define ZDT_DBL_MAX 1.7976931348623157e308
    """
    double DBL_MAX "ZDT_DBL_MAX"


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


cdef inline bint mini_unsure(double v, double x, const MiniFormat* m) noexcept nogil:
    """Whether the exact path must decide: a finite x beyond the format's range after
    rounding, an infinity into a format without one, NaN into a format without NaN."""
    cdef double a = fabs(x)
    cdef bint finite = a <= DBL_MAX
    return ((not (fabs(v) <= m.max_finite)) & finite) | \
           ((a > DBL_MAX) & (not m.has_inf)) | ((x != x) & (not m.has_nan))


cdef inline double mini_round_even(double x, const MiniFormat* m) noexcept nogil:
    """x rounded to the format, nearest-even, +-inf beyond its finite range (also for formats
    without infinities: the caller reports a non-finite result); NaN stays NaN."""
    cdef int e = mini_exponent(x, m)
    cdef double v = mini_scale_out(rint(mini_scale_in(x, e, m)), e, m)
    return (v * 1e300 * 1e300) if fabs(v) > m.max_finite else v


cdef inline void widen_small_float(const uint8_t* s, float* t, Py_ssize_t n, int widen,
                                   const float* table) noexcept nogil:
    """A block of a small float format read as float32, exactly: float16 arithmetically,
    bfloat16 as the high half of a float32, a one-byte format through its 256-entry table."""
    cdef Py_ssize_t i
    cdef const uint16_t* h = <const uint16_t*>s
    cdef uint32_t* u = <uint32_t*>t
    if widen == WIDEN_HALF:
        for i in range(n):
            t[i] = half_to_float(h[i])
    elif widen == WIDEN_BF16:
        for i in range(n):
            u[i] = (<uint32_t>h[i]) << 16
    else:
        for i in range(n):
            t[i] = table[s[i]]
