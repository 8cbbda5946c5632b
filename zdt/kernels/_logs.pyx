# cython: language_level=3, cdivision=True
"""The logarithms and powers of two of zdt.predict's pointwise-relative chunks
(docs/codecs/predict.md, "Pointwise-relative bounds (format 2)"), and the encoder's check of
every element, nogil. -ffp-contract=off (setup.py): each
product and sum rounded on its own, as the spec's exp2 requires, and the same bits from every
compiler.

* `exp2`: the decoder's 2**v, the spec's polynomial to the bit;
* `log2`: the encoder's log2 (any log2 conforms; this one gives the same bits on every platform,
  so golden chunks are written the same everywhere): a = m 2**e, m in [sqrt(1/2), sqrt(2)),
  s = (m - 1) / (m + 1), ln m = 2 s (1 + s**2/3 + ... + s**22/23);
* the relative chunks' passes over whole chunks, each what zdt.codecs.predict_relative would
  otherwise do in a dozen NumPy passes: `logarithms` (the encoder's logarithms, signs and
  counts), `check` (the decoder's value of each element from the logarithms as decoded,
  screened against R |x|: surely within it (a margin of 2**-50 over the two roundings of
  |y - x| and R |x|), surely wrong (not finite, zero, the fill value), or left to exact
  arithmetic), `powers` and `fill_exact` (the decoder's elements).

The whole-array loops are C (below), branch-free so that they vectorise, and compiled for
AVX2 and AVX-512 as well (ifunc clones, where gcc / clang make them): each element of exp2 and
log2 is a chain of dependent products and sums, so wider vectors carry more elements through
one chain's latency (exp2 of 1M values: 4.8 ms at SSE widths, 1.0 ms with the clones here).
"""

from libc.math cimport INFINITY, fabs, frexp, isfinite, ldexp, rint, sqrt
from libc.stdint cimport uint8_t, uint32_t, uint64_t
from libc.string cimport memcpy

import numpy as np

ctypedef fused real:        # a chunk's element type
    float
    double

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
    #include <math.h>
    /* ZDT_RESTRICT, and ZDT_CLONES for the whole-array passes: each element is a chain of
       dependent products and sums (Horner's rule), so wider vectors carry more elements
       through one chain's latency; the same IEEE operations in the same order in every clone
       (-ffp-contract=off: no fused multiply-add), so the same bits. */
    #include "_portable.h"
    /* 2**f for |f| <= 1/2: Horner's rule over c[0..13] (p = p * f, then p = p + c, each
       rounded) */
    static inline double zdt_exp2_poly(double f, const double* ZDT_RESTRICT c) {
        double p = c[13];
        int j;
        for (j = 12; j >= 0; j--) {
            p = p * f;
            p = p + c[j];
        }
        return p;
    }
    /* whether 2**v for k = rint(v) is done from the bits (a normal result), not with ldexp */
    static inline int zdt_exp2_near(double k) { return -1020.0 <= k && k <= 1020.0; }
    /* 2**v as the spec computes it where zdt_exp2_near(rint(v)) (else some value: the caller
       does those again with ldexp) */
    static inline double zdt_exp2_normal(double v, const double* ZDT_RESTRICT c) {
        double k = rint(v);
        return zdt_exp2_poly(v - k, c) * zdt_pow2i(zdt_exp2_near(k) ? k : 0.0);
    }
    /* log2 (m 2**e) for m in [1/2, 1): m moved into [sqrt(1/2), sqrt(2)),
       s = (m - 1) / (m + 1), e + s (1 + s2 (a[0] + s2 (a[1] + ...))) t (a: 1/3, 1/5, ...,
       t: 2 / ln 2) */
    static inline double zdt_log2_of(double m, int e, const double* ZDT_RESTRICT a,
                                     double two_over_ln2, double sqrt_half) {
        int j, low = m < sqrt_half;
        double s, s2, p;
        m = low ? 2 * m : m;
        e = low ? e - 1 : e;
        s = (m - 1) / (m + 1);
        s2 = s * s;
        p = a[10];
        for (j = 9; j >= 0; j--)
            p = p * s2 + a[j];
        return (double)e + (s * (p * s2 + 1.0)) * two_over_ln2;
    }
    /* out[i] = 2**v[i] (zdt_exp2_normal); returns how many finite v[i] are not near (the
       caller does those again) */
    ZDT_CLONES static Py_ssize_t zdt_exp2_pass(const double* ZDT_RESTRICT v,
                                               double* ZDT_RESTRICT out, Py_ssize_t n,
                                               const double* ZDT_RESTRICT c) {
        Py_ssize_t i, far = 0;
        for (i = 0; i < n; i++) {
            double k = rint(v[i]);
            far += !zdt_exp2_near(k) && k - k == 0;
            out[i] = zdt_exp2_normal(v[i], c);
        }
        return far;
    }
    /* out[i] = log2 |x[i]| for normal x[i] (|x| = m 2**e from the bits, zdt_log2_of);
       returns how many are below the normal range (zero, subnormal: the caller does those
       again) */
    #define ZDT_LOG2_PASS(NAME, T) \
    ZDT_CLONES static Py_ssize_t NAME(const T* ZDT_RESTRICT x, double* ZDT_RESTRICT out, \
                                      Py_ssize_t n, const double* ZDT_RESTRICT a, \
                                      double two_over_ln2, double sqrt_half) { \
        Py_ssize_t i, tiny = 0; \
        int e; \
        for (i = 0; i < n; i++) { \
            double m = fabs((double)x[i]); \
            tiny += m < 2.2250738585072014e-308; \
            m = zdt_mantissa(m, &e); \
            out[i] = zdt_log2_of(m, e, a, two_over_ln2, sqrt_half); \
        } \
        return tiny; \
    }
    ZDT_LOG2_PASS(zdt_log2_pass_f64, double)
    /* the encoder's first pass over a chunk, block by block: logs[i] = log2 |x[i]|
       (zdt_log2_of; frexp's m and e for a subnormal x), NaN (np.nan's bits) for NaN and for
       the fill value (`fill_bits`, with has_fill), -inf for a zero, +inf for an infinity;
       negative[i] the sign bit; counts[0] NaN logarithms, counts[1] zeros, counts[2] the odd
       elements (below); returns the
       largest |logs[i]| over the finite ones (as integers, the bits of non-negative doubles
       order as their values do: an integer maximum vectorises, a float one would not). Each
       block's logarithms are made with a count of its odd elements (zero, subnormal, infinite,
       NaN, the fill value) and of its negative ones in one loop that vectorises (branch-free,
       from the bits: no libm call); only a block with an odd element takes the specials'
       loops, and only one with a negative element the signs' loop (three passes over the
       chunk took 2.4 ms per million float64, this one 1.5) */
    #define ZDT_LOGARITHMS_PASS(NAME, T, U) \
    ZDT_CLONES static double NAME(const T* ZDT_RESTRICT x, double* ZDT_RESTRICT logs, \
                                  uint8_t* ZDT_RESTRICT negative, Py_ssize_t n, \
                                  const double* ZDT_RESTRICT a, double two_over_ln2, \
                                  double sqrt_half, int has_fill, U fill_bits, \
                                  Py_ssize_t* ZDT_RESTRICT counts) { \
        const U sign = (U)1 << (8 * sizeof(U) - 1); \
        const U inf = sizeof(U) == 8 ? (U)0x7FF0000000000000ULL : (U)0x7F800000U; \
        /* (below the normal range as a double: float32's subnormals are normal doubles) */ \
        const U low = sizeof(U) == 8 ? (U)0x0010000000000000ULL : (U)1; \
        const U fill_on = has_fill ? 1 : 0; \
        Py_ssize_t i, k, m, n_nan = 0, n_zero = 0, n_odd = 0; \
        int64_t most = 0; \
        double nan_log, out; \
        uint64_t nan_bits = 0x7FF8000000000000ULL; \
        memcpy(&nan_log, &nan_bits, 8); \
        for (i = 0; i < n; i += m) { \
            const U* ZDT_RESTRICT xb = (const U*)(x + i); \
            double* ZDT_RESTRICT lb = logs + i; \
            U odd = 0, neg = 0; \
            int64_t bmost = 0; \
            m = n - i < 256 ? n - i : 256; \
            for (k = 0; k < m; k++) { \
                int e; \
                U b = xb[k], mag = b & ~sign; \
                double am = fabs((double)x[i + k]), lg; \
                int64_t bits; \
                odd += (U)(mag < low) | (U)(mag >= inf) | (fill_on & (U)(b == fill_bits)); \
                neg += b >> (8 * sizeof(U) - 1); \
                am = zdt_mantissa(am, &e); \
                lg = zdt_log2_of(am, e, a, two_over_ln2, sqrt_half); \
                lb[k] = lg; \
                lg = fabs(lg); \
                memcpy(&bits, &lg, 8); \
                bmost = bits > bmost ? bits : bmost; \
            } \
            n_odd += (Py_ssize_t)odd; \
            if (odd) { \
                bmost = 0; \
                for (k = 0; k < m; k++) { \
                    U mag = xb[k] & ~sign; \
                    if (mag != 0 && mag < low) { \
                        int e; \
                        double am = frexp(fabs((double)x[i + k]), &e); \
                        lb[k] = zdt_log2_of(am, e, a, two_over_ln2, sqrt_half); \
                    } \
                } \
                for (k = 0; k < m; k++) { \
                    U b = xb[k], mag = b & ~sign; \
                    double lg = lb[k]; \
                    U is_nan = (U)(mag > inf) | (fill_on & (U)(b == fill_bits)); \
                    U is_zero = (U)(mag == 0) & (is_nan ^ 1); \
                    U is_inf = (U)(mag == inf); \
                    lg = is_inf ? HUGE_VAL : lg; \
                    lg = is_zero ? -HUGE_VAL : lg; \
                    lb[k] = is_nan ? nan_log : lg; \
                    n_nan += is_nan; \
                    n_zero += is_zero; \
                } \
                for (k = 0; k < m; k++) { \
                    double big = lb[k] - lb[k] == 0 ? fabs(lb[k]) : 0.0; \
                    int64_t bits; \
                    memcpy(&bits, &big, 8); \
                    bmost = bits > bmost ? bits : bmost; \
                } \
            } \
            most = bmost > most ? bmost : most; \
            if (neg) { \
                for (k = 0; k < m; k++) \
                    negative[i + k] = (uint8_t)(xb[k] >> (8 * sizeof(U) - 1)); \
            } else { \
                memset(negative + i, 0, (size_t)m); \
            } \
        } \
        counts[0] = n_nan; \
        counts[1] = n_zero; \
        counts[2] = n_odd; \
        memcpy(&out, &most, 8); \
        return out; \
    }
    ZDT_LOGARITHMS_PASS(zdt_logarithms_pass_f64, double, uint64_t)
    ZDT_LOGARITHMS_PASS(zdt_logarithms_pass_f32, float, uint32_t)
    /* the verdict on y (T), x's decoded value: 2 where y is not finite, zero or the fill
       value, else 0 where y is surely within r |x| (a margin over the roundings of |y - x|
       and r |x|), 1 where exact arithmetic must decide */
    #define ZDT_VERDICT(NAME, T) \
    static inline int NAME(T yt, T x, double r, int has_fill, T fill, double tiny, \
                           double margin) { \
        double y = (double)yt, xd = (double)x, d = fabs(y - xd), t = r * fabs(xd); \
        int bad = !(y - y == 0) | (y == 0) | (has_fill & (yt == fill)); \
        int sure = (d - d == 0) & (t >= tiny) & (d <= t * margin); \
        return bad ? 2 : (sure ? 0 : 1); \
    }
    ZDT_VERDICT(zdt_verdict_f64, double)
    ZDT_VERDICT(zdt_verdict_f32, float)
    /* the encoder's check: y = 2**v[i] (zdt_exp2_normal), rounded to T, negated where x[i]
       is negative; verdict[i] 0 where the element needs no check (exact already, its
       logarithm not finite, x zero), else its VERDICT, or 3 where 2**v is not done from the
       bits (the caller does those again with ldexp); returns how many verdicts are not 0.
       `plain`: every logarithm finite, no x zero, none exact (the chunk had no odd element):
       the loop reads neither. Branch-free: it vectorises. */
    #define ZDT_CHECK_PASS(NAME, T, COPYSIGN, VERDICT) \
    ZDT_CLONES static Py_ssize_t NAME(const T* ZDT_RESTRICT x, const double* ZDT_RESTRICT logs, \
                                      const double* ZDT_RESTRICT v, \
                                      const uint8_t* ZDT_RESTRICT exact, Py_ssize_t n, \
                                      const double* ZDT_RESTRICT c, double r, int has_fill, \
                                      T fill, double tiny, double margin, int plain, \
                                      uint8_t* ZDT_RESTRICT verdict) { \
        Py_ssize_t i, k, m, flagged = 0; \
        double y[256]; \
        int64_t w[256], near[256]; \
        /* (in blocks: the powers in a loop of their own, the verdicts in one of 64-bit \
           values only, then narrowed to bytes with the exact marks; one loop doing it all \
           vectorised narrower, its registers spilled, and measured slower) */ \
        for (i = 0; i < n; i += m) { \
            m = n - i < 256 ? n - i : 256; \
            for (k = 0; k < m; k++) { \
                double kk = rint(v[i + k]); \
                near[k] = zdt_exp2_near(kk); \
                y[k] = zdt_exp2_poly(v[i + k] - kk, c) * zdt_pow2i(near[k] ? kk : 0.0); \
            } \
            if (plain) { \
                for (k = 0; k < m; k++) { \
                    T yt = COPYSIGN((T)y[k], x[i + k]);   /* (2**v >= 0) */ \
                    w[k] = near[k] ? (int64_t)VERDICT(yt, x[i + k], r, has_fill, fill, tiny, \
                                                      margin) : 3; \
                } \
                for (k = 0; k < m; k++) { \
                    verdict[i + k] = (uint8_t)w[k]; \
                    flagged += w[k] != 0; \
                } \
            } else { \
                for (k = 0; k < m; k++) { \
                    T yt = COPYSIGN((T)y[k], x[i + k]); \
                    int64_t live = (int64_t)(logs[i + k] - logs[i + k] == 0) \
                                   & (int64_t)(x[i + k] != 0); \
                    w[k] = live * (near[k] ? (int64_t)VERDICT(yt, x[i + k], r, has_fill, fill, \
                                                              tiny, margin) : 3); \
                } \
                for (k = 0; k < m; k++) { \
                    uint8_t d = exact[i + k] ? 0 : (uint8_t)w[k]; \
                    verdict[i + k] = d; \
                    flagged += d != 0; \
                } \
            } \
        } \
        return flagged; \
    }
    ZDT_CHECK_PASS(zdt_check_pass_f64, double, copysign, zdt_verdict_f64)
    ZDT_CHECK_PASS(zdt_check_pass_f32, float, copysignf, zdt_verdict_f32)
    /* the decoder's elements but the exact ones: 2**logs[i] (zdt_exp2_normal) rounded to T
       for a finite logarithm, infinity for +inf, zero otherwise, negated where negative[i];
       exact[i] set where the logarithm is NaN (those are exact), counts[1] the exact marks
       then; counts[0] how many finite logarithms are not near (the caller does those again
       with ldexp). `plain` (a chunk without signs, exact map or exact values): negative and
       exact are neither read nor written, counts[1] the NaN logarithms (branch-free: it
       vectorises) */
    #define ZDT_VALUES_PASS(NAME, T) \
    ZDT_CLONES static void NAME(const double* ZDT_RESTRICT logs, \
                                const uint8_t* ZDT_RESTRICT negative, \
                                uint8_t* ZDT_RESTRICT exact, Py_ssize_t n, \
                                const double* ZDT_RESTRICT c, T* ZDT_RESTRICT out, \
                                int plain, Py_ssize_t* ZDT_RESTRICT counts) { \
        Py_ssize_t i, k, m, far = 0, marks = 0; \
        double y[256]; \
        for (i = 0; i < n; i += m) {   /* (in blocks, as ZDT_CHECK_PASS) */ \
            m = n - i < 256 ? n - i : 256; \
            for (k = 0; k < m; k++) {   /* (for every lg: it vectorises) */ \
                double lg = logs[i + k], kk = rint(lg); \
                int near = zdt_exp2_near(kk); \
                far += (lg - lg == 0) & !near; \
                y[k] = zdt_exp2_poly(lg - kk, c) * zdt_pow2i(near ? kk : 0.0); \
            } \
            if (plain) { \
                for (k = 0; k < m; k++) { \
                    double lg = logs[i + k]; \
                    out[i + k] = lg - lg == 0 ? (T)y[k] : (lg == HUGE_VAL ? (T)HUGE_VAL : (T)0); \
                    marks += lg != lg; \
                } \
            } else { \
                for (k = 0; k < m; k++) { \
                    double lg = logs[i + k]; \
                    int finite = lg - lg == 0; \
                    uint8_t mark = exact[i + k] | (uint8_t)(lg != lg); \
                    T yt = finite ? (T)y[k] : (lg == HUGE_VAL ? (T)HUGE_VAL : (T)0); \
                    out[i + k] = negative[i + k] ? -yt : yt; \
                    exact[i + k] = mark; \
                    marks += mark != 0; \
                } \
            } \
        } \
        counts[0] = far; \
        counts[1] = marks; \
    }
    ZDT_VALUES_PASS(zdt_values_pass_f64, double)
    ZDT_VALUES_PASS(zdt_values_pass_f32, float)
    """
    double exp2_poly "zdt_exp2_poly"(double f, const double* c) nogil
    bint exp2_near "zdt_exp2_near"(double k) nogil
    double log2_of "zdt_log2_of"(double m, int e, const double* a, double two_over_ln2,
                                 double sqrt_half) nogil
    int verdict_f64 "zdt_verdict_f64"(double yt, double x, double r, int has_fill, double fill,
                                      double tiny, double margin) nogil
    int verdict_f32 "zdt_verdict_f32"(float yt, float x, double r, int has_fill, float fill,
                                      double tiny, double margin) nogil
    Py_ssize_t exp2_pass "zdt_exp2_pass"(const double* v, double* out, Py_ssize_t n,
                                         const double* c) nogil
    Py_ssize_t log2_pass_f64 "zdt_log2_pass_f64"(const double* x, double* out, Py_ssize_t n,
                                                 const double* a, double two_over_ln2,
                                                 double sqrt_half) nogil
    double logarithms_pass_f64 "zdt_logarithms_pass_f64"(const double* x, double* logs,
                                                         uint8_t* negative, Py_ssize_t n,
                                                         const double* a, double two_over_ln2,
                                                         double sqrt_half, int has_fill,
                                                         uint64_t fill_bits,
                                                         Py_ssize_t* counts) nogil
    double logarithms_pass_f32 "zdt_logarithms_pass_f32"(const float* x, double* logs,
                                                         uint8_t* negative, Py_ssize_t n,
                                                         const double* a, double two_over_ln2,
                                                         double sqrt_half, int has_fill,
                                                         uint32_t fill_bits,
                                                         Py_ssize_t* counts) nogil
    void values_pass_f64 "zdt_values_pass_f64"(const double* logs, const uint8_t* negative,
                                               uint8_t* exact, Py_ssize_t n, const double* c,
                                               double* out, int plain, Py_ssize_t* counts) nogil
    void values_pass_f32 "zdt_values_pass_f32"(const double* logs, const uint8_t* negative,
                                               uint8_t* exact, Py_ssize_t n, const double* c,
                                               float* out, int plain, Py_ssize_t* counts) nogil
    Py_ssize_t check_pass_f64 "zdt_check_pass_f64"(const double* x, const double* logs,
                                                   const double* v, const uint8_t* exact,
                                                   Py_ssize_t n, const double* c, double r,
                                                   int has_fill, double fill, double tiny,
                                                   double margin, int plain,
                                                   uint8_t* verdict) nogil
    Py_ssize_t check_pass_f32 "zdt_check_pass_f32"(const float* x, const double* logs,
                                                   const double* v, const uint8_t* exact,
                                                   Py_ssize_t n, const double* c, double r,
                                                   int has_fill, float fill, double tiny,
                                                   double margin, int plain,
                                                   uint8_t* verdict) nogil

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


cdef inline double exp2_far(double v) noexcept nogil:
    """2**v where rint(v) is outside [-1020, 1020]: ldexp of the polynomial, k clamped."""
    cdef double k = rint(v)
    cdef double p = exp2_poly(v - k, C)
    if k > LIMIT:
        k = LIMIT
    elif k < -LIMIT:
        k = -LIMIT
    return ldexp(p, <int>k)


cdef void exp2_all(const double* v, double* out, Py_ssize_t n) noexcept nogil:
    """out[i] = 2**v[i] (as `exp2`) for finite v[i] (some value without meaning for the others):
    a first pass that vectorises (zdt_exp2_pass) and a second for the few results outside the
    normal range."""
    cdef Py_ssize_t i
    cdef double k
    # (p * 2**k is exact where the result is a normal number: |k| <= 1020; the others are done
    # again below with ldexp, which rounds a subnormal result once)
    if exp2_pass(v, out, n, C):
        for i in range(n):
            k = rint(v[i])
            if not exp2_near(k) and k - k == 0:     # (k - k: NaN for a non-finite v)
                out[i] = exp2_far(v[i])


def exp2(const double[::1] v, double[::1] out) -> None:
    """out[i] = 2**v[i] for finite v[i] (callers pass only finite values): k = rint(v) (ties
    to even), f = v - k, Horner's rule over EXP2 in f (p = p * f, then p = p + c, each
    rounded), ldexp(p, k) (one rounding)."""
    cdef Py_ssize_t n = v.shape[0]
    if out.shape[0] != n:
        raise ValueError(f"exp2: {n} values, {out.shape[0]} places")
    if n:
        with nogil:
            exp2_all(&v[0], &out[0], n)


def log2(const double[::1] a, double[::1] out) -> None:
    """out[i] = log2 a[i] for positive finite a[i], within a few units of its last place (for
    zero, infinities and NaN some value without meaning: callers replace it)."""
    cdef Py_ssize_t n = a.shape[0]
    if out.shape[0] != n:
        raise ValueError(f"log2: {n} values, {out.shape[0]} places")
    if n == 0:
        return
    with nogil:
        # (a normal a from its bits, no libm call: the loop vectorises; a subnormal one, whose
        # bits are no m 2**e, is done again below with frexp)
        if log2_pass_f64(&a[0], &out[0], n, ATANH, TWO_OVER_LN2, SQRT_HALF):
            redo_tiny(&a[0], &out[0], n)


cdef void redo_tiny(const real* x, double* out, Py_ssize_t n) noexcept nogil:
    """out[i] = log2 |x[i]| where |x[i]| is below the normal range, whose bits are no m 2**e:
    m and e from frexp (zeros get some value: callers replace it)."""
    cdef Py_ssize_t i
    cdef int e
    cdef double m
    for i in range(n):
        if fabs(<double>x[i]) < 2.2250738585072014e-308:
            m = frexp(fabs(<double>x[i]), &e)
            out[i] = log2_of(m, e, ATANH, TWO_OVER_LN2, SQRT_HALF)


cdef inline Py_ssize_t next_set(const uint8_t* marks, Py_ssize_t i, Py_ssize_t n) noexcept nogil:
    """The first index from i on whose mark is not 0 (n if none), eight marks at a time while
    they are all 0, as nearly all are."""
    cdef uint64_t eight
    while i + 8 <= n:
        memcpy(&eight, &marks[i], 8)
        if eight:
            break
        i += 8
    while i < n and marks[i] == 0:
        i += 1
    return i


def logarithms(const real[::1] x, double[::1] logs, uint8_t[::1] negative, const real[::1] fill):
    """A relative chunk's logarithms: logs[i] = log2 |x[i]| (`log2`) for finite non-zero x[i],
    -inf for a zero, +inf for an infinity, NaN (np.nan's bits) for NaN and for the fill value
    (`fill`: one element compared bit for bit, or empty for none); negative[i] = the sign bit
    of x[i]. Returns (the largest |log2 x| over the finite logarithms, the number of NaN
    logarithms, the number of zeros, the number of odd elements: zero, subnormal, infinite,
    NaN or the fill value; where there is none, every logarithm is finite and no element
    zero)."""
    cdef Py_ssize_t n = x.shape[0], tiny = 0
    cdef Py_ssize_t counts[3]
    cdef bint has_fill = fill.shape[0] > 0
    cdef real f = fill[0] if has_fill else 0
    cdef uint32_t bits32 = 0
    cdef uint64_t bits64 = 0
    cdef double largest = 0.0
    if logs.shape[0] != n or negative.shape[0] != n:
        raise ValueError(f"logarithms: {n} values, {logs.shape[0]} logarithms, "
                         f"{negative.shape[0]} signs")
    if n == 0:
        return 0.0, 0, 0, 0
    with nogil:
        # (one pass, block by block, from the bits: vectorised)
        if real is float:
            memcpy(&bits32, &f, 4)
            largest = logarithms_pass_f32(&x[0], &logs[0], &negative[0], n, ATANH, TWO_OVER_LN2,
                                          SQRT_HALF, has_fill, bits32, counts)
        else:
            memcpy(&bits64, &f, 8)
            largest = logarithms_pass_f64(&x[0], &logs[0], &negative[0], n, ATANH, TWO_OVER_LN2,
                                          SQRT_HALF, has_fill, bits64, counts)
    return largest, counts[0], counts[1], counts[2]


def check(const real[::1] x, const double[::1] logs, const double[::1] v, uint8_t[::1] exact,
          double rel_error, const real[::1] fill, bint plain=False):
    """The encoder's check of a relative chunk: for each finite non-zero x[i] not yet exact
    (logs[i] finite, exact[i] 0), the decoder's element y (the spec's 2**v[i], v[i] its
    logarithm as decoded, rounded to the chunk's type, negated where x[i] is negative) screened
    in float64: a y not finite or zero, or equal to the fill value (`fill`: one element, or
    empty), sets exact[i]. Returns the indices (int64) the screen leaves to exact arithmetic.
    `plain`: the caller knows every logs[i] finite, no x[i] zero and no exact[i] set (then
    neither is read)."""
    cdef Py_ssize_t i, n = x.shape[0], unsure = 0, flagged = 0
    cdef bint has_fill = fill.shape[0] > 0
    cdef real f = fill[0] if has_fill else 0
    if logs.shape[0] != n or v.shape[0] != n or exact.shape[0] != n:
        raise ValueError(f"check: {n} values, {logs.shape[0]} logarithms, {v.shape[0]} "
                         f"decoded, {exact.shape[0]} places")
    out = np.empty(n, dtype=np.int64)
    if n == 0:
        return out
    verdicts = np.empty(n, dtype=np.uint8)
    cdef long long[::1] at = out
    cdef uint8_t[::1] verdict = verdicts
    cdef real yt
    with nogil:
        if real is float:
            flagged = check_pass_f32(&x[0], &logs[0], &v[0], &exact[0], n, C, rel_error,
                                     has_fill, f, TINY, MARGIN, plain, &verdict[0])
        else:
            flagged = check_pass_f64(&x[0], &logs[0], &v[0], &exact[0], n, C, rel_error,
                                     has_fill, f, TINY, MARGIN, plain, &verdict[0])
        i = next_set(&verdict[0], 0, n) if flagged else n
        while i < n:
            if verdict[i] == 3:         # (2**v outside the normal range: ldexp, as `exp2`)
                yt = <real>exp2_far(v[i])
                yt = -yt if x[i] < 0 else yt
                if real is float:
                    verdict[i] = verdict_f32(yt, x[i], rel_error, has_fill, f, TINY, MARGIN)
                else:
                    verdict[i] = verdict_f64(yt, x[i], rel_error, has_fill, f, TINY, MARGIN)
            if verdict[i] == 2:
                exact[i] = 1
            elif verdict[i] == 1:
                at[unsure] = i
                unsure += 1
            i = next_set(&verdict[0], i + 1, n)
    return out[:unsure]


def powers(const double[::1] logs, const uint8_t[::1] negative, uint8_t[::1] exact,
           real[::1] out):
    """A relative chunk's elements but the exact ones: the spec's 2**logs[i] rounded to the
    chunk's type for a finite logarithm, infinity for +inf, zero otherwise, negated where
    negative[i]; exact[i] set where logs[i] is NaN (those elements are exact as well). Returns
    the number of exact elements (`fill_exact` then puts their stored values in). `negative`
    and `exact` both None: a chunk without signs and exact map (no element negative, none
    exact); the number returned is then that of the NaN logarithms."""
    cdef Py_ssize_t i, n = logs.shape[0]
    cdef Py_ssize_t counts[2]
    cdef real yt
    cdef double k
    cdef bint plain = negative is None and exact is None
    if not plain and (negative is None or exact is None):
        raise ValueError("powers: signs and exact marks both given or both None")
    if not plain and (negative.shape[0] != n or exact.shape[0] != n):
        raise ValueError(f"powers: {n} logarithms, {negative.shape[0]} signs, "
                         f"{exact.shape[0]} exact marks")
    if out.shape[0] != n:
        raise ValueError(f"powers: {n} logarithms, {out.shape[0]} places")
    if n == 0:
        return 0
    cdef const uint8_t* neg = NULL
    cdef uint8_t* marks = NULL
    if not plain:
        neg = &negative[0]
        marks = &exact[0]
    with nogil:
        if real is float:
            values_pass_f32(&logs[0], neg, marks, n, C, &out[0], plain, counts)
        else:
            values_pass_f64(&logs[0], neg, marks, n, C, &out[0], plain, counts)
        if counts[0]:
            for i in range(n):
                k = rint(logs[i])
                if isfinite(k) and not exp2_near(k):
                    yt = <real>exp2_far(logs[i])
                    out[i] = -yt if not plain and neg[i] else yt
    return counts[1]


def fill_exact(const uint8_t[::1] exact, const real[::1] stored, real[::1] out) -> None:
    """out[i] = the next stored value where exact[i]; ValueError unless `stored` holds one
    value per exact element (checked before any is read past)."""
    cdef Py_ssize_t i, j = 0, n = exact.shape[0]
    cdef bint short = False
    if out.shape[0] != n:
        raise ValueError(f"fill_exact: {n} exact marks, {out.shape[0]} places")
    with nogil:
        i = next_set(&exact[0], 0, n) if n else 0
        while i < n:
            if j == stored.shape[0]:
                short = True
                break
            out[i] = stored[j]
            j += 1
            i = next_set(&exact[0], i + 1, n)
    if short or j != stored.shape[0]:
        raise ValueError(f"fill_exact: {stored.shape[0]} stored values for the exact elements")
