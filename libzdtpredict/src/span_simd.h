/* The interpolation predictors' cubic several lanes at a time, shared by the encoder's spans
   (encode_span.c) and the decoder's (decode_span.c): neighbours loaded at steps 1 and 2, and
   along a row read once and shifted into place. Each lane does zdt__cubic's operations in its
   order, each rounded on its own (the build's -ffp-contract=off): the scalar loop's bits.
   ZDT_SPAN_SIMD is defined where these exist (gcc or clang on x86-64, not a portable build);
   elsewhere the spans run one element at a time. */
#ifndef ZDT_PREDICT_SPAN_SIMD_H
#define ZDT_PREDICT_SPAN_SIMD_H

#include "internal.h"

#if defined(__GNUC__) && defined(__x86_64__) && !defined(ZDT_PORTABLE) && \
    !defined(ZDT_PREDICT_NO_CLONES)
#include <immintrin.h>

#define ZDT_SPAN_SIMD 1

#define AVX2 __attribute__((target("avx2")))

static inline int has_avx2(void) {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2");
}

/* a[0], a[es], a[2 es], a[3 es], reading no element past a[3 es] */
AVX2 static inline __m256d load4_f64(const double *a, size_t es) {
    if (es == 1)
        return _mm256_loadu_pd(a);
    /* a0 a1 a2 a3 and a3 a4 a5 a6 -> a0 a4 a2 a6 -> a0 a2 a4 a6 */
    if (es == 2)
        return _mm256_permute4x64_pd(
            _mm256_blend_pd(_mm256_loadu_pd(a), _mm256_loadu_pd(a + 3), 0xA), 0xD8);
    return _mm256_setr_pd(a[0], a[es], a[2 * es], a[3 * es]);
}

/* the cubic of zdt__cubic for lanes at, at + es, .. */
AVX2 static inline __m256d cubic4(const double *v, size_t at, size_t es, size_t o) {
    const __m256d near = _mm256_add_pd(load4_f64(v + at - o, es), load4_f64(v + at + o, es));
    const __m256d far = _mm256_add_pd(load4_f64(v + at - 3 * o, es),
                                      load4_f64(v + at + 3 * o, es));
    return _mm256_mul_pd(_mm256_sub_pd(_mm256_mul_pd(_mm256_set1_pd(9.0), near), far),
                         _mm256_set1_pd(0.0625));
}

/* a[0], a[2], a[4] and a[4] again, reading no element past a[4] (the last block's right
   neighbours along a row: a[6] may lie past the chunk) */
AVX2 static inline __m256d load3_f64(const double *a) {
    return _mm256_permute4x64_pd(_mm256_blend_pd(_mm256_loadu_pd(a), _mm256_loadu_pd(a + 1), 0x8),
                                 0xF8);
}

/* the cubics of a row's lanes at step 2 along the row (es 2, o 1): the neighbours are every
   other element, each block of them read once and shifted into place (loads that overlap
   the odd elements just stored would wait for those stores). Start with row_start at the
   span's first element, then row_next for each four lanes (`last`: no four after them). */
typedef struct {
    __m256d a;          /* the neighbours at at - 3, at - 1, at + 1, at + 3 */
} row_t;

AVX2 static inline void row_start(row_t *r, const double *v, size_t i) {
    r->a = load4_f64(v + i - 3, 2);
}

AVX2 static inline __m256d row_next(row_t *r, const double *v, size_t at, int last) {
    const __m256d b = last ? load3_f64(v + at + 5) : load4_f64(v + at + 5, 2);
    const __m256d a = r->a, ab = _mm256_permute2f128_pd(a, b, 0x21);
    const __m256d near = _mm256_add_pd(_mm256_shuffle_pd(a, ab, 0x5), ab);
    const __m256d far = _mm256_add_pd(a, _mm256_shuffle_pd(ab, b, 0x5));
    r->a = b;
    return _mm256_mul_pd(_mm256_sub_pd(_mm256_mul_pd(_mm256_set1_pd(9.0), near), far),
                         _mm256_set1_pd(0.0625));
}

/* r's lanes to a[0], a[es], a[2 es], a[3 es] */
AVX2 static inline void store4_f64(double *a, size_t es, __m256d r) {
    if (es == 1) {
        _mm256_storeu_pd(a, r);
    } else {
        const __m128d lo = _mm256_castpd256_pd128(r), hi = _mm256_extractf128_pd(r, 1);
        _mm_storel_pd(a, lo);
        _mm_storeh_pd(a + es, lo);
        _mm_storel_pd(a + 2 * es, hi);
        _mm_storeh_pd(a + 3 * es, hi);
    }
}

#define AVX512 __attribute__((target("avx512f,avx512vl,avx512bw,avx512dq")))

static inline int has_avx512(void) {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
           __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq");
}

/* a[0], a[es], .. a[7 es], reading no element past a[7 es] */
AVX512 static inline __m512d load8_f64(const double *a, size_t es) {
    if (es == 1)
        return _mm512_loadu_pd(a);
    if (es == 2)
        return _mm512_permutex2var_pd(_mm512_loadu_pd(a),
                                      _mm512_setr_epi64(0, 2, 4, 6, 8, 10, 12, 14),
                                      _mm512_maskz_loadu_pd(0x7F, a + 8));
    return _mm512_setr_pd(a[0], a[es], a[2 * es], a[3 * es], a[4 * es], a[5 * es], a[6 * es],
                          a[7 * es]);
}

AVX512 static inline __m512d cubic8_of(__m512d m3, __m512d m1, __m512d p1, __m512d p3) {
    return _mm512_mul_pd(_mm512_sub_pd(_mm512_mul_pd(_mm512_set1_pd(9.0), _mm512_add_pd(m1, p1)),
                                       _mm512_add_pd(m3, p3)),
                         _mm512_set1_pd(0.0625));
}

AVX512 static inline __m512d cubic8(const double *v, size_t at, size_t es, size_t o) {
    return cubic8_of(load8_f64(v + at - 3 * o, es), load8_f64(v + at - o, es),
                     load8_f64(v + at + o, es), load8_f64(v + at + 3 * o, es));
}

/* the cubics of a row's lanes at step 2 along the row, eight at a time (as row_next): a holds
   the neighbours at - 3 .. at + 11 of eight lanes (start: load8_f64(v + i - 3, 2)), the next
   eight are read once; `last`: no eight after these (only b's first three are read: nothing
   past at + 17) */
AVX512 static inline __m512d row8_next(__m512d *a, const double *v, size_t at, int last) {
    const __m512i i1 = _mm512_setr_epi64(1, 2, 3, 4, 5, 6, 7, 8),
                  i2 = _mm512_setr_epi64(2, 3, 4, 5, 6, 7, 8, 9),
                  i3 = _mm512_setr_epi64(3, 4, 5, 6, 7, 8, 9, 10),
                  evens = _mm512_setr_epi64(0, 2, 4, 6, 8, 10, 12, 14);
    const __m512d b = !last ? load8_f64(v + at + 13, 2)
                            : _mm512_permutexvar_pd(evens, _mm512_maskz_loadu_pd(0x1F, v + at + 13));
    const __m512d p = cubic8_of(*a, _mm512_permutex2var_pd(*a, i1, b),
                                _mm512_permutex2var_pd(*a, i2, b),
                                _mm512_permutex2var_pd(*a, i3, b));
    *a = b;
    return p;
}

/* r's eight lanes to a[0], a[2], .. a[14], the places between left as they are */
AVX512 static inline void store8_step2_f64(double *a, __m512d r) {
    _mm512_mask_storeu_pd(a, 0x55, _mm512_permutexvar_pd(_mm512_setr_epi64(0, 0, 1, 1, 2, 2, 3, 3), r));
    _mm512_mask_storeu_pd(a + 8, 0x55,
                          _mm512_permutexvar_pd(_mm512_setr_epi64(4, 4, 5, 5, 6, 6, 7, 7), r));
}
#endif

#endif
