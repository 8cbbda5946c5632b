/* The relative chunks' powers of two and logarithms (docs/codecs/predict.md,
   "Pointwise-relative bounds (format 2)") as pieces that vectorise: no libm call, no branch
   on an element's value, the exponent from the bits. Each element's operations are the
   spec's (exp2) or zdt's log2, in their order, each rounded on its own (-ffp-contract=off):
   the same bits as the scalar zdt__spec_exp2 below and log2_abs of encode_relative.c, which
   the passes fall back on for the few elements these do not cover (a result outside the
   normal range, a subnormal input). */
#ifndef ZDT_PREDICT_LOGS_H
#define ZDT_PREDICT_LOGS_H

#include <math.h>

#include "internal.h"

/* the binary64 values nearest (ln 2)^i / i!, i = 0 .. 13 */
#define ZDT__EXP2_C                                                                         \
    {0x1.0000000000000p+0, 0x1.62e42fefa39efp-1, 0x1.ebfbdff82c58fp-3, 0x1.c6b08d704a0c0p-5, \
     0x1.3b2ab6fba4e77p-7, 0x1.5d87fe78a6731p-10, 0x1.430912f86c787p-13,                     \
     0x1.ffcbfc588b0c7p-17, 0x1.62c0223a5c824p-20, 0x1.b5253d395e7c4p-24,                   \
     0x1.e4cf5158b8ecap-28, 0x1.e8cac7351bb25p-32, 0x1.c3bd650fc2986p-36,                   \
     0x1.816193166d0f9p-40}

/* the block of the passes: small enough for their scratch to stay in L1 */
#define ZDT__LOG_BLOCK 256

/* 2^k for a whole k in [-1020, 1020] from its bits: k + 2^52 + 1023 is exact and holds
   k + 1023 in its low bits, shifted into the exponent field */
static inline double zdt__pow2i(double k) {
    double d = k + 4503599627371519.0;
    uint64_t b;
    memcpy(&b, &d, 8);
    b <<= 52;
    memcpy(&d, &b, 8);
    return d;
}

/* 2^f for |f| <= 1/2: Horner's rule (p = p f, then p = p + c, each rounded) */
static inline double zdt__exp2_poly(double f, const double *ZDT_RESTRICT c) {
    double p = c[13];
    int j;
    for (j = 12; j >= 0; j--) {
        p = p * f;
        p = p + c[j];
    }
    return p;
}

/* whether 2^v for k = rint(v) is p 2^k from the bits (a normal result), not ldexp */
static inline int zdt__exp2_near(double k) { return -1020.0 <= k && k <= 1020.0; }

/* 2^v for a finite v, as the spec computes it: k = v rounded to an integer (ties to even),
   f = v - k, Horner's rule over the spec's 14 coefficients, p 2^k rounded once (exact for a
   normal result, built from its bits); the decoder's and the encoder's check alike
   (relative.c, encode_relative.c), for the elements the passes leave to it */
static inline double zdt__spec_exp2(double v) {
    static const double c[14] = ZDT__EXP2_C;
    double k = rint(v), p = zdt__exp2_poly(v - k, c);
    if (zdt__exp2_near(k))
        return p * zdt__pow2i(k);
    if (k > 1200.0)
        k = 1200.0;
    if (k < -1200.0)
        k = -1200.0;
    return ldexp(p, (int)k);
}

/* a positive normal a as m 2^e, m in [1/2, 1) (frexp's answer, from the bits) */
static inline double zdt__mantissa(double a, int *e) {
    uint64_t b;
    memcpy(&b, &a, 8);
    *e = (int)((b >> 52) & 0x7FF) - 1022;
    b = (b & 0x800FFFFFFFFFFFFFull) | 0x3FE0000000000000ull;
    memcpy(&a, &b, 8);
    return a;
}

/* zdt's log2 of m 2^e, m in [1/2, 1): m moved into [sqrt(1/2), sqrt(2)), s = (m - 1) / (m + 1),
   e + s (1 + s2 (a[0] + s2 (a[1] + ...))) 2 / ln 2 (a: 1/3, 1/5, ..., 1/23) */
static inline double zdt__log2_of(double m, int e, const double *ZDT_RESTRICT a) {
    const double two_over_ln2 = 2.0 / 0.6931471805599453;
    const double sqrt_half = 0.70710678118654757;   /* sqrt(0.5), correctly rounded */
    double s, s2, p;
    int j, low = m < sqrt_half;
    m = low ? 2 * m : m;
    e = low ? e - 1 : e;
    s = (m - 1) / (m + 1);
    s2 = s * s;
    p = a[10];
    for (j = 9; j >= 0; j--)
        p = p * s2 + a[j];
    return (double)e + (s * (p * s2 + 1.0)) * two_over_ln2;
}

#endif
