/* The interpolation predictors' spans (encode_walk.h's span) quantized four elements at a
   time with AVX2 (the loads of steps 1 and 2, the finest levels' and three quarters of a
   chunk's elements, in vectors; those of coarser levels one by one). Each lane does the scalar quantize's operations in its order,
   each rounded on its own (no fused multiply-add): where every element of the span takes
   the common path (the code within range, the reconstruction within the bound, neither the
   element nor its reconstruction the fill value) the values and symbols are the scalar
   loop's. Where one does not, the caller quantizes the span again one by one (its raw values
   then appended in visit order). gcc does not vectorise the scalar loop itself (the strided
   loads, the mixed widths). */
#include <math.h>

#include "encode.h"

#if defined(__GNUC__) && defined(__x86_64__) && !defined(ZDT_PORTABLE) && \
    !defined(ZDT_PREDICT_NO_CLONES)
#include <immintrin.h>

#define AVX2 __attribute__((target("avx2")))

static int has_avx2(void) {
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

AVX2 static inline __m128 load4_f32(const float *a, size_t es) {
    __m128 r;
    if (es == 1)
        return _mm_loadu_ps(a);
    if (es != 2)
        return _mm_setr_ps(a[0], a[es], a[2 * es], a[3 * es]);
    r = _mm_blend_ps(_mm_loadu_ps(a), _mm_loadu_ps(a + 3), 0xA);
    return _mm_shuffle_ps(r, r, _MM_SHUFFLE(3, 1, 2, 0));
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

/* the code of each lane (t within range; others give 0): (int)(t + (t >= 0 ? 0.5 : -0.5)) */
AVX2 static inline __m128i code4(__m256d t, __m256d in) {
    const __m256d tc = _mm256_and_pd(t, in);
    const __m256d half = _mm256_blendv_pd(_mm256_set1_pd(-0.5), _mm256_set1_pd(0.5),
                                          _mm256_cmp_pd(tc, _mm256_setzero_pd(), _CMP_GE_OQ));
    return _mm256_cvttpd_epi32(_mm256_add_pd(tc, half));
}

/* the symbols zigzag(c) + 2 of four codes, in the low four 16-bit lanes */
AVX2 static inline __m128i symbols4(__m128i k) {
    const __m128i z = _mm_xor_si128(_mm_slli_epi32(k, 1), _mm_srai_epi32(k, 31));
    return _mm_packus_epi32(_mm_add_epi32(z, _mm_set1_epi32(2)), _mm_setzero_si128());
}

AVX2 static inline void store4_u16(uint16_t *a, size_t es, __m128i s) {
    if (es == 1) {
        _mm_storel_epi64((__m128i *)(void *)a, s);
    } else {
        a[0] = (uint16_t)_mm_extract_epi16(s, 0);
        a[es] = (uint16_t)_mm_extract_epi16(s, 1);
        a[2 * es] = (uint16_t)_mm_extract_epi16(s, 2);
        a[3 * es] = (uint16_t)_mm_extract_epi16(s, 3);
    }
}

/* what a span's lanes share */
typedef struct {
    __m256d q, inv_q, limit, range, fill, magnitude;
    __m256i fill_bits64;
    __m128 fill32;
    __m128i fill_bits32;
    int has_fill;
} lanes_t;

AVX2 static inline void lanes_of(lanes_t *l, const zdt__span_consts *c) {
    l->q = _mm256_set1_pd(c->q);
    l->inv_q = _mm256_set1_pd(c->inv_q);
    l->limit = _mm256_set1_pd(c->limit);
    l->range = _mm256_set1_pd(32766.0);
    l->fill = _mm256_set1_pd(c->fill64);
    l->magnitude = _mm256_castsi256_pd(_mm256_set1_epi64x(0x7FFFFFFFFFFFFFFFLL));
    l->fill_bits64 = _mm256_set1_epi64x((long long)c->fill_bits64);
    l->fill32 = _mm_set1_ps(c->fill32);
    l->fill_bits32 = _mm_set1_epi32((int)c->fill_bits32);
    l->has_fill = c->has_fill;
}

/* four elements at .. at + 3 es predicted p quantized: values and symbols stored; the lanes
   off the common path as a bit mask */
AVX2 static inline int quantize4(const lanes_t *l, double *v, const void *x, int is_f32,
                                 uint16_t *sym, size_t at, size_t es, __m256d p) {
    __m128 xf = _mm_setzero_ps(), rf = _mm_setzero_ps();
    __m256d xv, t, in, rr, within;
    __m128i k;
    int m;
    if (is_f32) {
        xf = load4_f32((const float *)x + at, es);
        xv = _mm256_cvtps_pd(xf);
    } else {
        xv = load4_f64((const double *)x + at, es);
    }
    t = _mm256_mul_pd(_mm256_sub_pd(xv, p), l->inv_q);
    in = _mm256_cmp_pd(_mm256_and_pd(t, l->magnitude), l->range, _CMP_LT_OQ);
    k = code4(t, in);
    rr = _mm256_add_pd(p, _mm256_mul_pd(l->q, _mm256_cvtepi32_pd(k)));
    if (is_f32) {
        /* (rounded to float32 as the scalar cast rounds it) */
        rf = _mm256_cvtpd_ps(rr);
        rr = _mm256_cvtps_pd(rf);
    }
    within = _mm256_cmp_pd(_mm256_and_pd(_mm256_sub_pd(rr, xv), l->magnitude), l->limit,
                           _CMP_LE_OQ);
    m = _mm256_movemask_pd(_mm256_and_pd(in, within)) ^ 0xF;
    if (l->has_fill) {
        if (is_f32)
            m |= _mm_movemask_ps(_mm_cmpeq_ps(rf, l->fill32)) |
                 _mm_movemask_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(_mm_castps_si128(xf),
                                                                  l->fill_bits32)));
        else
            m |= _mm256_movemask_pd(_mm256_cmp_pd(rr, l->fill, _CMP_EQ_OQ)) |
                 _mm256_movemask_pd(_mm256_castsi256_pd(
                     _mm256_cmpeq_epi64(_mm256_castpd_si256(xv), l->fill_bits64)));
    }
    store4_f64(v + at, es, rr);
    store4_u16(sym + at, es, symbols4(k));
    return m;
}

AVX2 static size_t span4(double *v, const void *x, int is_f32, uint16_t *sym, size_t i,
                         size_t count, size_t es, size_t o, const zdt__span_consts *c, int *bad) {
    const size_t whole = count & ~(size_t)3;
    lanes_t l;
    int off = 0;
    size_t j;
    lanes_of(&l, c);
    if (es == 2 && o == 1) {
        row_t r;
        row_start(&r, v, i);
        for (j = 0; j < whole; j += 4) {
            const size_t at = i + 2 * j;
            off |= quantize4(&l, v, x, is_f32, sym, at, 2, row_next(&r, v, at, j + 4 >= whole));
        }
    } else {
        for (j = 0; j < whole; j += 4) {
            const size_t at = i + j * es;
            off |= quantize4(&l, v, x, is_f32, sym, at, es, cubic4(v, at, es, o));
        }
    }
    *bad = off != 0;
    return whole;
}
/* eight 16-bit lanes a[0], a[es], .. a[7 es] (with es 2, reads a[15] too) */
AVX2 static inline __m128i load8_u16(const uint16_t *a, size_t es) {
    const __m128i evens = _mm_setr_epi8(0, 1, 4, 5, 8, 9, 12, 13, -1, -1, -1, -1, -1, -1, -1, -1);
    if (es == 1)
        return _mm_loadu_si128((const __m128i *)(const void *)a);
    if (es != 2)
        return _mm_setr_epi16((short)a[0], (short)a[es], (short)a[2 * es], (short)a[3 * es],
                              (short)a[4 * es], (short)a[5 * es], (short)a[6 * es],
                              (short)a[7 * es]);
    return _mm_unpacklo_epi64(
        _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(const void *)a), evens),
        _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(const void *)(a + 8)), evens));
}

/* the classes of eight symbols (zdt__class16 of min(k, 15)): 3 for 0, 4 for 1, and for codes
   the count of 2, 4 and 8 below the symbol */
AVX2 static inline __m128i class8(__m128i k) {
    const __m128i c = _mm_min_epu16(k, _mm_set1_epi16(15));
    const __m128i e0 = _mm_cmpeq_epi16(c, _mm_setzero_si128()),
                  e1 = _mm_cmpeq_epi16(c, _mm_set1_epi16(1));
    __m128i r = _mm_sub_epi16(_mm_setzero_si128(), _mm_cmpgt_epi16(c, _mm_set1_epi16(2)));
    r = _mm_sub_epi16(r, _mm_cmpgt_epi16(c, _mm_set1_epi16(4)));
    r = _mm_sub_epi16(r, _mm_cmpgt_epi16(c, _mm_set1_epi16(8)));
    r = _mm_blendv_epi8(r, _mm_set1_epi16(3), e0);
    return _mm_blendv_epi8(r, _mm_set1_epi16(4), e1);
}

AVX2 static size_t record8(const uint16_t *sym, uint16_t *osym, uint8_t *octx, size_t i,
                           size_t count, size_t es, size_t o, int group) {
    /* (with step 2 a group reads one element past its last: only groups with a lane after) */
    const size_t whole = es != 2 ? count & ~(size_t)7 : count > 8 ? (count - 1) & ~(size_t)7 : 0;
    const __m128i base = _mm_set1_epi16((short)(group * 15)), one = _mm_set1_epi16(1);
    size_t j;
    for (j = 0; j < whole; j += 8) {
        const size_t at = i + j * es;
        const __m128i k = load8_u16(sym + at, es);
        const __m128i a = class8(load8_u16(sym + at - o, es)),
                      b = class8(load8_u16(sym + at + o, es));
        const __m128i hi = _mm_max_epi16(a, b), lo = _mm_min_epi16(a, b);
        /* (the pair's index hi (hi + 1) / 2 + lo: zdt__enc_pair) */
        const __m128i pair = _mm_add_epi16(
            _mm_srli_epi16(_mm_mullo_epi16(hi, _mm_add_epi16(hi, one)), 1), lo);
        _mm_storeu_si128((__m128i *)(void *)(osym + j), k);
        _mm_storel_epi64((__m128i *)(void *)(octx + j),
                         _mm_packus_epi16(_mm_add_epi16(base, pair), _mm_setzero_si128()));
    }
    return whole;
}
#endif

size_t zdt__span_record(const uint16_t *sym, uint16_t *osym, uint8_t *octx, size_t i,
                        size_t count, size_t es, size_t o, int group) {
#ifdef AVX2
    if (has_avx2())
        return record8(sym, osym, octx, i, count, es, o, group);
#else
    (void)sym, (void)osym, (void)octx, (void)i, (void)count, (void)es, (void)o, (void)group;
#endif
    return 0;
}

size_t zdt__span_quantize(double *v, const void *x, int is_f32, uint16_t *sym, size_t i,
                          size_t count, size_t es, size_t o, const zdt__span_consts *c,
                          int *bad) {
    *bad = 0;
#ifdef AVX2
    if (has_avx2())
        return span4(v, x, is_f32, sym, i, count, es, o, c, bad);
#else
    (void)v, (void)x, (void)is_f32, (void)sym, (void)i, (void)count, (void)es, (void)o, (void)c;
#endif
    return 0;
}
