/* The interpolation predictors' spans (encode_walk.h's span) quantized eight elements at a
   time with AVX-512, four with AVX2 (zdt__span_isa: the widest the CPU has). Steps 1 and 2,
   the finest levels' and most of a chunk's elements, load in vectors; coarser steps one
   element at a time. Each lane does the scalar quantize's operations in its order, each
   rounded on its own (no fused multiply-add): where every element of a block takes the
   common path (the code within range, the reconstruction within the bound, neither the
   element nor its reconstruction the fill value) the values and symbols are the scalar
   loop's; where one does not, the caller quantizes the block again one by one (its raw
   values then appended in visit order). gcc does not vectorise the scalar loop itself (the
   strided loads, the mixed widths). Stage 3's order of a span is recorded eight at a time. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "encode.h"
#include "span_simd.h"

#ifdef ZDT_SPAN_SIMD

AVX2 static inline __m128 load4_f32(const float *a, size_t es) {
    __m128 r;
    if (es == 1)
        return _mm_loadu_ps(a);
    if (es != 2)
        return _mm_setr_ps(a[0], a[es], a[2 * es], a[3 * es]);
    r = _mm_blend_ps(_mm_loadu_ps(a), _mm_loadu_ps(a + 3), 0xA);
    return _mm_shuffle_ps(r, r, _MM_SHUFFLE(3, 1, 2, 0));
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
    if (whole == 0)
        return 0;
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

/* --- eight at a time with AVX-512 (F, VL, BW, DQ): the same lanes, twice as many ---------- */

AVX512 static inline __m256 load8_f32(const float *a, size_t es) {
    if (es == 1)
        return _mm256_loadu_ps(a);
    if (es == 2)
        return _mm256_permutex2var_ps(_mm256_loadu_ps(a),
                                      _mm256_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14),
                                      _mm256_maskz_loadu_ps(0x7F, a + 8));
    return _mm256_setr_ps(a[0], a[es], a[2 * es], a[3 * es], a[4 * es], a[5 * es], a[6 * es],
                          a[7 * es]);
}

/* eight elements at .. at + 7 es predicted p quantized, values and symbols stored; the lanes
   off the common path as a bit mask */
AVX512 static inline unsigned quantize8(const zdt__span_consts *c, double *v, const void *x,
                                        int is_f32, uint16_t *sym, size_t at, size_t es,
                                        __m512d p) {
    __m256 xf = _mm256_setzero_ps(), rf = _mm256_setzero_ps();
    __m512d xv, t, tc, rr;
    __m256i k, z;
    __m128i s16;
    __mmask8 in, within;
    unsigned m;
    if (is_f32) {
        xf = load8_f32((const float *)x + at, es);
        xv = _mm512_cvtps_pd(xf);
    } else {
        xv = load8_f64((const double *)x + at, es);
    }
    t = _mm512_mul_pd(_mm512_sub_pd(xv, p), _mm512_set1_pd(c->inv_q));
    in = _mm512_cmp_pd_mask(_mm512_abs_pd(t), _mm512_set1_pd(32766.0), _CMP_LT_OQ);
    /* (int)(t + (t >= 0 ? 0.5 : -0.5)) where t is within range, 0 elsewhere */
    tc = _mm512_maskz_mov_pd(in, t);
    k = _mm512_cvttpd_epi32(_mm512_add_pd(
        tc, _mm512_mask_blend_pd(_mm512_cmp_pd_mask(tc, _mm512_setzero_pd(), _CMP_GE_OQ),
                                 _mm512_set1_pd(-0.5), _mm512_set1_pd(0.5))));
    rr = _mm512_add_pd(p, _mm512_mul_pd(_mm512_set1_pd(c->q), _mm512_cvtepi32_pd(k)));
    if (is_f32) {
        /* (rounded to float32 as the scalar cast rounds it) */
        rf = _mm512_cvtpd_ps(rr);
        rr = _mm512_cvtps_pd(rf);
    }
    within = _mm512_cmp_pd_mask(_mm512_abs_pd(_mm512_sub_pd(rr, xv)), _mm512_set1_pd(c->limit),
                                _CMP_LE_OQ);
    m = (unsigned)(uint8_t)~(in & within);
    if (c->has_fill) {
        if (is_f32)
            m |= (unsigned)_mm256_cmp_ps_mask(rf, _mm256_set1_ps(c->fill32), _CMP_EQ_OQ) |
                 (unsigned)_mm256_cmpeq_epi32_mask(_mm256_castps_si256(xf),
                                                   _mm256_set1_epi32((int)c->fill_bits32));
        else
            m |= (unsigned)_mm512_cmp_pd_mask(rr, _mm512_set1_pd(c->fill64), _CMP_EQ_OQ) |
                 (unsigned)_mm512_cmpeq_epi64_mask(_mm512_castpd_si512(xv),
                                                   _mm512_set1_epi64((long long)c->fill_bits64));
    }
    /* the symbols zigzag(c) + 2 */
    z = _mm256_xor_si256(_mm256_slli_epi32(k, 1), _mm256_srai_epi32(k, 31));
    s16 = _mm256_cvtepi32_epi16(_mm256_add_epi32(z, _mm256_set1_epi32(2)));
    if (es == 1) {
        _mm512_storeu_pd(v + at, rr);
        _mm_storeu_si128((__m128i *)(void *)(sym + at), s16);
    } else if (es == 2) {
        /* (each lane to every other place, the places between left as they are) */
        store8_step2_f64(v + at, rr);
        _mm256_mask_storeu_epi16(sym + at, 0x5555, _mm256_cvtepu16_epi32(s16));
    } else {
        double r8[8];
        uint16_t s8[8];
        int L;
        _mm512_storeu_pd(r8, rr);
        _mm_storeu_si128((__m128i *)(void *)s8, s16);
        for (L = 0; L < 8; L++) {
            v[at + L * es] = r8[L];
            sym[at + L * es] = s8[L];
        }
    }
    return m;
}

AVX512 static size_t span8(double *v, const void *x, int is_f32, uint16_t *sym, size_t i,
                           size_t count, size_t es, size_t o, const zdt__span_consts *c,
                           int *bad) {
    const size_t whole = count & ~(size_t)7;
    unsigned off = 0;
    size_t j;
    if (whole == 0)
        return 0;
    if (es == 2 && o == 1) {
        __m512d a = load8_f64(v + i - 3, 2);
        for (j = 0; j < whole; j += 8) {
            const size_t at = i + 2 * j;
            off |= quantize8(c, v, x, is_f32, sym, at, 2, row8_next(&a, v, at, j + 8 >= whole));
        }
    } else {
        for (j = 0; j < whole; j += 8) {
            const size_t at = i + j * es;
            off |= quantize8(c, v, x, is_f32, sym, at, es, cubic8(v, at, es, o));
        }
    }
    *bad = off != 0;
    return whole;
}
#endif

int zdt__span_isa(void) {
    const char *want = getenv("ZDT_PREDICT_SIMD");
#ifdef ZDT_SPAN_SIMD
    const int most = has_avx512() ? 2 : has_avx2() ? 1 : 0;
#else
    const int most = 0;
#endif
    if (want != NULL && strcmp(want, "none") == 0)
        return 0;
    if (want != NULL && strcmp(want, "avx2") == 0)
        return most < 1 ? most : 1;
    return most;
}

size_t zdt__span_record(int isa, const uint16_t *sym, uint16_t *osym, uint8_t *octx, size_t i,
                        size_t count, size_t es, size_t o, int group) {
#ifdef ZDT_SPAN_SIMD
    if (isa >= 1)
        return record8(sym, osym, octx, i, count, es, o, group);
#else
    (void)isa, (void)sym, (void)osym, (void)octx, (void)i, (void)count, (void)es, (void)o;
    (void)group;
#endif
    return 0;
}

size_t zdt__span_quantize(double *v, const void *x, int is_f32, uint16_t *sym, size_t i,
                          size_t count, size_t es, size_t o, const zdt__span_consts *c,
                          int *bad) {
    *bad = 0;
#ifdef ZDT_SPAN_SIMD
    if (c->isa == 2)
        return span8(v, x, is_f32, sym, i, count, es, o, c, bad);
    if (c->isa == 1)
        return span4(v, x, is_f32, sym, i, count, es, o, c, bad);
#else
    (void)v, (void)x, (void)is_f32, (void)sym, (void)i, (void)count, (void)es, (void)o, (void)c;
#endif
    return 0;
}
