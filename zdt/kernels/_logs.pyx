# cython: language_level=3, cdivision=True
"""The logarithms and powers of two of zdt.predict's pointwise-relative chunks
(docs/codecs/predict.md, "Pointwise-relative bounds (format 2)"), and the float64 screen of
the encoder's check of every element, nogil, one pass each. -ffp-contract=off (setup.py): each
product and sum rounded on its own, as the spec's exp2 requires, and the same bits from every
compiler.

* `exp2`: the decoder's 2**v, the spec's polynomial to the bit;
* `log2`: the encoder's log2 (any log2 conforms; this one gives the same bits on every platform,
  so golden chunks are written the same everywhere): a = m 2**e, m in [sqrt(1/2), sqrt(2)),
  s = (m - 1) / (m + 1), ln m = 2 s (1 + s**2/3 + ... + s**22/23);
* `screen`: which decoded elements are surely within R |x| (a margin of 2**-50 over the two
  roundings of |y - x| and R |x|), surely wrong (not finite, or zero), or left to exact
  arithmetic.
"""

from libc.math cimport fabs, frexp, isfinite, ldexp, rint, sqrt
from libc.stdint cimport uint8_t

cdef extern from *:
    """
    #include <stdint.h>
    #include <string.h>
    /* 2**k for a whole k in [-1020, 1020], built from its bits: k + 2**52 + 1023 is exact and
       holds k + 1023 in its low bits, which shifted into the exponent field give 2**k (no libm
       call, so the loops around it vectorise) */
    static inline double zdt_pow2i(double k) {
        double d = k + 4503599627371519.0;
        uint64_t b;
        memcpy(&b, &d, 8);
        b <<= 52;
        memcpy(&d, &b, 8);
        return d;
    }
    /* a positive normal a as m 2**e, m in [1/2, 1) (frexp's answer, from the bits) */
    static inline double zdt_mantissa(double a, int* e) {
        uint64_t b;
        memcpy(&b, &a, 8);
        *e = (int)((b >> 52) & 0x7FF) - 1022;
        b = (b & 0x800FFFFFFFFFFFFFULL) | 0x3FE0000000000000ULL;
        memcpy(&a, &b, 8);
        return a;
    }
    """
    double pow2i "zdt_pow2i"(double k) nogil
    double mantissa "zdt_mantissa"(double a, int* e) nogil

# 2**f for |f| <= 1/2: the binary64 values nearest (ln 2)**i / i!, i = 0 .. 13
EXP2 = tuple(float.fromhex(h) for h in (
    "0x1.0000000000000p+0", "0x1.62e42fefa39efp-1", "0x1.ebfbdff82c58fp-3",
    "0x1.c6b08d704a0c0p-5", "0x1.3b2ab6fba4e77p-7", "0x1.5d87fe78a6731p-10",
    "0x1.430912f86c787p-13", "0x1.ffcbfc588b0c7p-17", "0x1.62c0223a5c824p-20",
    "0x1.b5253d395e7c4p-24", "0x1.e4cf5158b8ecap-28", "0x1.e8cac7351bb25p-32",
    "0x1.c3bd650fc2986p-36", "0x1.816193166d0f9p-40"))
SCALE_LIMIT = 1200      # |k| beyond this gives 0 or infinity all the same
cdef double LIMIT = SCALE_LIMIT

cdef double C[14]
for _i in range(14):
    C[_i] = EXP2[_i]
cdef double ATANH[11]   # 1 / (2 i + 1), i = 1 .. 11
for _i in range(11):
    ATANH[_i] = 1.0 / (2 * _i + 3)
cdef double TWO_OVER_LN2 = 2.0 / 0.6931471805599453
cdef double SQRT_HALF = sqrt(0.5)
cdef double MARGIN = 1.0 - 2.0 ** -50
cdef double TINY = 2.0 ** -1000


cdef inline double exp2_poly(double f) noexcept nogil:
    """2**f for |f| <= 1/2: Horner's rule over EXP2 (p = p * f, then p = p + c, each rounded)."""
    cdef double p = C[13]
    cdef int j
    for j in range(12, -1, -1):
        p = p * f
        p = p + C[j]
    return p


def exp2(const double[::1] v, double[::1] out) -> None:
    """out[i] = 2**v[i] for finite v[i] (callers pass only finite values): k = rint(v) (ties
    to even), f = v - k, Horner's rule over EXP2 in f (p = p * f, then p = p + c, each
    rounded), ldexp(p, k) (one rounding)."""
    cdef Py_ssize_t i, n = v.shape[0]
    cdef double k, p
    if out.shape[0] != n:
        raise ValueError(f"exp2: {n} values, {out.shape[0]} places")
    cdef Py_ssize_t far = 0
    cdef bint near
    with nogil:
        for i in range(n):
            k = rint(v[i])
            p = exp2_poly(v[i] - k)
            # (p * 2**k is exact where the result is a normal number: |k| <= 1020; the others
            # are done again below with ldexp, which rounds a subnormal result once)
            near = -1020.0 <= k <= 1020.0
            far += not near
            out[i] = p * pow2i(k if near else 0.0)
        if far:
            for i in range(n):
                k = rint(v[i])
                if -1020.0 <= k <= 1020.0:
                    continue
                p = exp2_poly(v[i] - k)
                if k > LIMIT:
                    k = LIMIT
                elif k < -LIMIT:
                    k = -LIMIT
                out[i] = ldexp(p, <int>k)


def log2(const double[::1] a, double[::1] out) -> None:
    """out[i] = log2 a[i] for positive finite a[i], within a few units of its last place (for
    zero, infinities and NaN some value without meaning: callers replace it)."""
    cdef Py_ssize_t i, n = a.shape[0], tiny = 0
    cdef int e
    cdef double m
    if out.shape[0] != n:
        raise ValueError(f"log2: {n} values, {out.shape[0]} places")
    with nogil:
        for i in range(n):
            # (a normal a from its bits, no libm call: the loop vectorises; a subnormal one,
            # whose bits are no m 2**e, is done again below with frexp)
            tiny += a[i] < 2.2250738585072014e-308
            m = mantissa(a[i], &e)          # (e is set here: not in the call that reads it)
            out[i] = log2_of(m, e)
        if tiny:
            for i in range(n):
                if a[i] < 2.2250738585072014e-308:
                    m = frexp(a[i], &e)
                    out[i] = log2_of(m, e)


cdef inline double log2_of(double m, int e) noexcept nogil:
    """log2 (m 2**e) for m in [1/2, 1): m moved into [sqrt(1/2), sqrt(2)), then the series."""
    cdef bint low = m < SQRT_HALF
    cdef double s, s2, p
    cdef int j
    m = 2 * m if low else m
    e = e - 1 if low else e
    s = (m - 1) / (m + 1)
    s2 = s * s
    p = ATANH[10]
    for j in range(9, -1, -1):
        p = p * s2 + ATANH[j]
    return e + s * (p * s2 + 1.0) * TWO_OVER_LN2


def screen(const double[::1] x, const double[::1] y, double rel_error, uint8_t[::1] out) -> int:
    """out[i]: 0 when y[i] is surely within rel_error |x[i]|, 2 when it is not finite or zero
    (x is finite and non-zero), 1 when exact arithmetic must decide; returns how many are 1."""
    cdef Py_ssize_t i, n = x.shape[0], unsure = 0
    cdef double d, t
    if y.shape[0] != n or out.shape[0] != n:
        raise ValueError(f"screen: {n} values, {y.shape[0]} decoded, {out.shape[0]} places")
    with nogil:
        for i in range(n):
            if not isfinite(y[i]) or y[i] == 0:
                out[i] = 2
                continue
            d = fabs(y[i] - x[i])
            t = rel_error * fabs(x[i])
            if isfinite(d) and t >= TINY and d <= t * MARGIN:
                out[i] = 0
            else:
                out[i] = 1
                unsure += 1
    return unsure
