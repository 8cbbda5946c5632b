/* The relative chunks' powers of two and logarithms (docs/codecs/predict.md,
   "Pointwise-relative bounds (format 2)") as pieces that vectorise: no libm call, no branch
   on an element's value, the exponent from the bits. Each element's operations are the
   spec's (exp2: kind 1's 14-term polynomial, kind 3's table and 6-term polynomial) or zdt's
   log2, in their order, each rounded on its own (-ffp-contract=off): the same bits as the
   scalar zdt__spec_exp2 / zdt__table_exp2 below and log2_abs of encode_relative.c, which the
   passes fall back on for the few elements these do not cover (a result outside the normal
   range, a subnormal input). */
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

/* kind 3: T[j], the binary64 values nearest 2^(j/64), j = 0 .. 63 */
#define ZDT__EXP2_T                                                                         \
    {0x1.0000000000000p+0, 0x1.02c9a3e778061p+0, 0x1.059b0d3158574p+0, 0x1.0874518759bc8p+0, \
     0x1.0b5586cf9890fp+0, 0x1.0e3ec32d3d1a2p+0, 0x1.11301d0125b51p+0, 0x1.1429aaea92de0p+0, \
     0x1.172b83c7d517bp+0, 0x1.1a35beb6fcb75p+0, 0x1.1d4873168b9aap+0, 0x1.2063b88628cd6p+0, \
     0x1.2387a6e756238p+0, 0x1.26b4565e27cddp+0, 0x1.29e9df51fdee1p+0, 0x1.2d285a6e4030bp+0, \
     0x1.306fe0a31b715p+0, 0x1.33c08b26416ffp+0, 0x1.371a7373aa9cbp+0, 0x1.3a7db34e59ff7p+0, \
     0x1.3dea64c123422p+0, 0x1.4160a21f72e2ap+0, 0x1.44e086061892dp+0, 0x1.486a2b5c13cd0p+0, \
     0x1.4bfdad5362a27p+0, 0x1.4f9b2769d2ca7p+0, 0x1.5342b569d4f82p+0, 0x1.56f4736b527dap+0, \
     0x1.5ab07dd485429p+0, 0x1.5e76f15ad2148p+0, 0x1.6247eb03a5585p+0, 0x1.6623882552225p+0, \
     0x1.6a09e667f3bcdp+0, 0x1.6dfb23c651a2fp+0, 0x1.71f75e8ec5f74p+0, 0x1.75feb564267c9p+0, \
     0x1.7a11473eb0187p+0, 0x1.7e2f336cf4e62p+0, 0x1.82589994cce13p+0, 0x1.868d99b4492edp+0, \
     0x1.8ace5422aa0dbp+0, 0x1.8f1ae99157736p+0, 0x1.93737b0cdc5e5p+0, 0x1.97d829fde4e50p+0, \
     0x1.9c49182a3f090p+0, 0x1.a0c667b5de565p+0, 0x1.a5503b23e255dp+0, 0x1.a9e6b5579fdbfp+0, \
     0x1.ae89f995ad3adp+0, 0x1.b33a2b84f15fbp+0, 0x1.b7f76f2fb5e47p+0, 0x1.bcc1e904bc1d2p+0, \
     0x1.c199bdd85529cp+0, 0x1.c67f12e57d14bp+0, 0x1.cb720dcef9069p+0, 0x1.d072d4a07897cp+0, \
     0x1.d5818dcfba487p+0, 0x1.da9e603db3285p+0, 0x1.dfc97337b9b5fp+0, 0x1.e502ee78b3ff6p+0, \
     0x1.ea4afa2a490dap+0, 0x1.efa1bee615a27p+0, 0x1.f50765b6e4540p+0, 0x1.fa7c1819e90d8p+0}

/* kind 3: the binary64 values nearest (ln 2)^i / i!, i = 0 .. 5 (kind 1's first six) */
#define ZDT__EXP2_D                                                                         \
    {0x1.0000000000000p+0, 0x1.62e42fefa39efp-1, 0x1.ebfbdff82c58fp-3, 0x1.c6b08d704a0c0p-5, \
     0x1.3b2ab6fba4e77p-7, 0x1.5d87fe78a6731p-10}

extern const double zdt__exp2_t[64];
extern const double zdt__exp2_d[6];

/* 2^k for a whole k in [-1022, 1023] from its bits: k + 2^52 + 1023 is exact and holds
   k + 1023 in its low bits, shifted into the exponent field */
static inline double zdt__pow2i(double k) {
    double d = k + 4503599627371519.0;
    uint64_t b;
    memcpy(&b, &d, 8);
    b <<= 52;
    memcpy(&d, &b, 8);
    return d;
}

/* kind 3 for |c| <= 1100 (v clamped): k = rint(64 c) as 64 c + 1.5 2^52 - 1.5 2^52 (the sum
   rounds 64 c to an integer, ties to even), whose bits' low six are j = k mod 64 (2^51 is a
   multiple of 64), m = floor(k / 64), r = c - k / 64 (exact: Sterbenz), p the degree-5
   polynomial at r; returns T[j] p (rounded) and *m. Beyond 1100, and for NaN, the result is
   of no use but *m is not in [-1022, 1023] (or NaN): the passes leave those to
   zdt__table_exp2, which clamps. Doubles and bits only, no branch: it vectorises. */
static inline double zdt__exp2_table_part(double c, double *m) {
    const double shift = 0x1.8p52;
    double t, kd, r, p;
    uint64_t kb;
    t = c * 64.0 + shift;
    kd = t - shift;
    r = c - kd * 0x1p-6;
    memcpy(&kb, &t, 8);
    p = zdt__exp2_d[5];
    p = p * r + zdt__exp2_d[4];
    p = p * r + zdt__exp2_d[3];
    p = p * r + zdt__exp2_d[2];
    p = p * r + zdt__exp2_d[1];
    p = p * r + zdt__exp2_d[0];
    *m = floor(kd * 0x1p-6);
    return zdt__exp2_t[kb & 63] * p;
}

/* whether T[j] p 2^m is T[j] p times 2^m built from the bits (zdt__pow2i; 2^m a normal
   number: the one rounding of that product is scaleB's) */
static inline int zdt__exp2_table_near(double m) { return (-1022.0 <= m) & (m <= 1023.0); }

/* Kind 3's 2^v eight at a time with AVX-512, T[j] read by the CPU's gather: gcc's generic
   tuning reads a table element by element in its clones, most of the time of a loop of
   2^v. Each lane's operations are zdt__exp2_table_part's and zdt__pow2i's, in their order,
   each rounded on its own (no fused multiply-add): the same bits as the scalar loops, which
   the callers run where the CPU has no AVX-512 and for the last n mod 8 elements. */
#if defined(__GNUC__) && defined(__x86_64__) && !defined(ZDT_PORTABLE) && \
    !defined(ZDT_PREDICT_NO_CLONES)
#define ZDT_GATHER8 1
#include <immintrin.h>

static inline int zdt__has_avx512f(void) {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f");
}

/* t * 2^(near ? m : 0) of zdt__exp2_table_part(lg) for 8 lanes; *near: the lanes where 2^m is
   a normal number (zdt__exp2_table_near) */
__attribute__((target("avx512f"))) static inline __m512d zdt__table_exp2_8(__m512d lg,
                                                                          __mmask8 *near) {
    const __m512d shift = _mm512_set1_pd(0x1.8p52), inv64 = _mm512_set1_pd(0x1p-6);
    const __m512d t = _mm512_add_pd(_mm512_mul_pd(lg, _mm512_set1_pd(64.0)), shift);
    const __m512d kd = _mm512_sub_pd(t, shift);
    const __m512d r = _mm512_sub_pd(lg, _mm512_mul_pd(kd, inv64));
    const __m512i j = _mm512_and_si512(_mm512_castpd_si512(t), _mm512_set1_epi64(63));
    __m512d p = _mm512_set1_pd(zdt__exp2_d[5]), m, e;
    int q;
    for (q = 4; q >= 0; q--)
        p = _mm512_add_pd(_mm512_mul_pd(p, r), _mm512_set1_pd(zdt__exp2_d[q]));
    m = _mm512_roundscale_pd(_mm512_mul_pd(kd, inv64), _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
    *near = _mm512_cmp_pd_mask(_mm512_set1_pd(-1022.0), m, _CMP_LE_OQ) &
            _mm512_cmp_pd_mask(m, _mm512_set1_pd(1023.0), _CMP_LE_OQ);
    e = _mm512_mask_blend_pd(*near, _mm512_setzero_pd(), m);
    e = _mm512_castsi512_pd(_mm512_slli_epi64(
        _mm512_castpd_si512(_mm512_add_pd(e, _mm512_set1_pd(4503599627371519.0))), 52));
    return _mm512_mul_pd(_mm512_mul_pd(_mm512_i64gather_pd(j, zdt__exp2_t, 8), p), e);
}
#endif

/* kind 3's 2^v for a finite v, as the spec computes it: T[j] p scaled by 2^m, rounded once
   (ldexp where 2^m is not a normal number) */
static inline double zdt__table_exp2(double v) {
    double m, y;
    v = v < -1100.0 ? -1100.0 : v;
    v = v > 1100.0 ? 1100.0 : v;
    y = zdt__exp2_table_part(v, &m);
    if (zdt__exp2_table_near(m))
        return y * zdt__pow2i(m);
    return ldexp(y, (int)m);
}

/* the block of the passes: small enough for their scratch to stay in L1 */
#define ZDT__LOG_BLOCK 256

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
