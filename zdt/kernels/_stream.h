/* zdt/kernels/_stream.h: float64 -> int32 with streaming (non-temporal) stores, for outputs far larger
 * than the caches.
 *
 * A store to a line not in cache first reads the line (read for ownership); a streaming store
 * does not, and does not keep the line in cache either. For a cast that reads 8 bytes and
 * writes 4 per element into an output of tens of MB, that read is a third of the traffic:
 * 10M float64 -> int32 under clamp, 4.1-4.3 ms with ordinary stores, 2.8-2.9 with these
 * (docs/design.md, "Memory bandwidth"). gcc never emits them from a vectorised C loop, so this
 * one loop is written with intrinsics. `run_steps` picks it only for the last step of a chain
 * writing a contiguous destination whose memory is at least STREAM_OUTPUT (_steps.pyx):
 * anything smaller is read again soon (a pipeline chunk by its compressor) and must stay in
 * cache.
 *
 * The loop computes exactly what the fast loop f2i (_cast.pxi) computes for float64 -> int32
 * in the four rounding modes an SSE4.1 rounding immediate expresses, under out_of_range clamp
 * or error, with a "NaN" key folded in (CastSpec.nan_fold): the same values and the same
 * flags, so the exact path runs on the same elements (tests/kernels/test_stream.py compares the two).
 *
 *   clamp   flag !(|x| <= DBL_MAX) (NaN, infinities); write min(max(round(x), -2**31), 2**31-1)
 *   error   flag !(-2**31 <= round(x) < 2**31); write round(x), or 0 where flagged
 *   fold    NaN writes nan_out and is not flagged
 *
 * Nearest-even is the rounding immediate's, where f2i's rint follows the current rounding mode
 * (the same unless something in the process changed that mode, which zdt never does).
 *
 * Only in builds with AVX (the avx2 and avx512 kernel builds): ZDT_HAVE_STREAM says which.
 * d must be 32-byte aligned and n a multiple of 8 (the caller does the ends with f2i). An
 * sfence at the end orders these stores before any later ordinary store to the same lines
 * (the exact path's, or another thread's read after this call returns).
 */
#ifndef ZDT_STREAM_H
#define ZDT_STREAM_H

#include <float.h>
#include <stddef.h>
#include <stdint.h>

#if defined(__AVX__) && (defined(__x86_64__) || defined(_M_X64))
#include <immintrin.h>

#define ZDT_HAVE_STREAM 1

#if defined(__GNUC__) || defined(__clang__)
#define ZDT_ALWAYS_INLINE static inline __attribute__((always_inline))
#else
#define ZDT_ALWAYS_INLINE static __forceinline
#endif

/* mode: 0 nearest-even, 1 towards-zero, 2 towards-positive, 3 towards-negative (zdt's
 * Rounding numbers); every branch has its immediate as a literal, and after inlining with a
 * constant mode only one remains */
#define ZDT_ROUND_PD(x, mode)                                                       \
    ((mode) == 0 ? _mm256_round_pd((x), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC) \
   : (mode) == 1 ? _mm256_round_pd((x), _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC)        \
   : (mode) == 2 ? _mm256_round_pd((x), _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC)     \
                 : _mm256_round_pd((x), _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC))

/* four elements: the values to convert (integral, in int32's range) and the flag lanes */
ZDT_ALWAYS_INLINE __m256d zdt_f64_i32_four(__m256d x, int mode, int clamp, int fold,
                                           __m256d nan_out, __m256d *bad)
{
    const __m256d lo = _mm256_set1_pd(-2147483648.0);
    const __m256d hi = _mm256_set1_pd(2147483647.0);
    const __m256d hi_excl = _mm256_set1_pd(2147483648.0);
    const __m256d dmax = _mm256_set1_pd(DBL_MAX);
    const __m256d magnitude = _mm256_castsi256_pd(_mm256_set1_epi64x(0x7fffffffffffffffLL));
    __m256d r = ZDT_ROUND_PD(x, mode);
    __m256d f, c;
    if (clamp) {
        f = _mm256_cmp_pd(_mm256_and_pd(x, magnitude), dmax, _CMP_NLE_UQ);
        c = _mm256_min_pd(_mm256_max_pd(r, lo), hi);    /* NaN -> lo (max returns its 2nd) */
    } else {
        f = _mm256_or_pd(_mm256_cmp_pd(r, lo, _CMP_NGE_UQ), _mm256_cmp_pd(r, hi_excl, _CMP_NLT_UQ));
        c = _mm256_andnot_pd(f, r);
    }
    if (fold) {
        __m256d hit = _mm256_cmp_pd(x, x, _CMP_UNORD_Q);
        c = _mm256_blendv_pd(c, nan_out, hit);
        f = _mm256_andnot_pd(hit, f);
    }
    *bad = _mm256_or_pd(*bad, f);
    return c;
}

ZDT_ALWAYS_INLINE int zdt_f64_i32_body(const double *s, int32_t *d, ptrdiff_t n, int mode,
                                       int clamp, int fold, int32_t nan_value)
{
    const __m256d nan_out = _mm256_set1_pd((double)nan_value);
    __m256d bad = _mm256_setzero_pd();
    ptrdiff_t i;
    for (i = 0; i < n; i += 8) {
        __m256d c0 = zdt_f64_i32_four(_mm256_loadu_pd(s + i), mode, clamp, fold, nan_out, &bad);
        __m256d c1 = zdt_f64_i32_four(_mm256_loadu_pd(s + i + 4), mode, clamp, fold, nan_out, &bad);
        /* (_mm256_set_m128i would do, but gcc < 8 lacks it) */
        __m256i v = _mm256_insertf128_si256(_mm256_castsi128_si256(_mm256_cvtpd_epi32(c0)),
                                            _mm256_cvtpd_epi32(c1), 1);
        _mm256_stream_si256((__m256i *)(d + i), v);
    }
    _mm_sfence();
    return _mm256_movemask_pd(bad) != 0;
}

#define ZDT_F64_I32_CASE(mode)                                                     \
    case mode:                                                                     \
        if (clamp)                                                                 \
            return fold ? zdt_f64_i32_body(s, d, n, mode, 1, 1, nan_value)         \
                        : zdt_f64_i32_body(s, d, n, mode, 1, 0, 0);                \
        return fold ? zdt_f64_i32_body(s, d, n, mode, 0, 1, nan_value)             \
                    : zdt_f64_i32_body(s, d, n, mode, 0, 0, 0);

/* nonzero when some element needs the exact path (as f2i's return) */
static int zdt_f64_i32_stream(const double *s, int32_t *d, ptrdiff_t n, int mode, int clamp,
                              int fold, int32_t nan_value)
{
    switch (mode) {
        ZDT_F64_I32_CASE(0)
        ZDT_F64_I32_CASE(1)
        ZDT_F64_I32_CASE(2)
        default: break;
    }
    if (clamp)
        return fold ? zdt_f64_i32_body(s, d, n, 3, 1, 1, nan_value)
                    : zdt_f64_i32_body(s, d, n, 3, 1, 0, 0);
    return fold ? zdt_f64_i32_body(s, d, n, 3, 0, 1, nan_value)
                : zdt_f64_i32_body(s, d, n, 3, 0, 0, 0);
}

#else

#define ZDT_HAVE_STREAM 0

static int zdt_f64_i32_stream(const double *s, int32_t *d, ptrdiff_t n, int mode, int clamp,
                              int fold, int32_t nan_value)
{
    (void)s; (void)d; (void)n; (void)mode; (void)clamp; (void)fold; (void)nan_value;
    return 1;   /* never called: cast_step offers no streaming step without ZDT_HAVE_STREAM */
}

#endif
#endif
