/* The decoder's spans (predictors_walk.h's span, stage 3): a block's elements whose symbols
   are codes below 16, each the cubic of its neighbours plus q c of its symbol, eight at a
   time with AVX-512, four with AVX2 (zdt__span_isa's choice; span_simd.h's cubics: the scalar
   loop's bits). Steps 1 and 2 only, the finest levels' and most of a chunk's elements. */
#include "reconstruct.h"
#include "span_simd.h"

#ifdef ZDT_SPAN_SIMD

/* q c of eight symbols ks[0 .. 8) (2 .. 15): qc[0 .. 8) in lo, qc[8 .. 16) in hi */
AVX512 static inline __m512d qc8(const uint8_t *ks, __m512d lo, __m512d hi) {
    const __m128i k = _mm_loadl_epi64((const __m128i *)(const void *)ks);
    return _mm512_permutex2var_pd(lo, _mm512_cvtepu8_epi64(k), hi);
}

/* eight values r to elements at, at + es, ..: v, and out32 (a float32 chunk: r rounded to
   float32 there, and v that float32) */
AVX512 static inline void put8(double *v, float *out32, size_t at, size_t es, __m512d r) {
    if (out32 != NULL) {
        const __m256 rf = _mm512_cvtpd_ps(r);
        r = _mm512_cvtps_pd(rf);
        if (es == 1)
            _mm256_storeu_ps(out32 + at, rf);
        else
            _mm512_mask_storeu_ps(out32 + at, 0x5555,
                                  _mm512_permutexvar_ps(_mm512_setr_epi32(0, 0, 1, 1, 2, 2, 3, 3,
                                                                          4, 4, 5, 5, 6, 6, 7, 7),
                                                        _mm512_castps256_ps512(rf)));
    }
    if (es == 1)
        _mm512_storeu_pd(v + at, r);
    else
        store8_step2_f64(v + at, r);
}

AVX512 static size_t put_span8(double *v, float *out32, size_t i, size_t count, size_t es,
                               size_t o, const uint8_t *ks, const double *qc) {
    const size_t whole = count & ~(size_t)7;
    const __m512d lo = _mm512_loadu_pd(qc), hi = _mm512_loadu_pd(qc + 8),
                  q0 = _mm512_set1_pd(qc[2]);
    size_t j;
    if (whole == 0)
        return 0;
    if (es == 2 && o == 1) {
        __m512d a = load8_f64(v + i - 3, 2);
        for (j = 0; j < whole; j += 8) {
            const size_t at = i + 2 * j;
            const __m512d p = row8_next(&a, v, at, j + 8 >= whole);
            put8(v, out32, at, 2, _mm512_add_pd(p, ks != NULL ? qc8(ks + j, lo, hi) : q0));
        }
    } else {
        for (j = 0; j < whole; j += 8) {
            const size_t at = i + j * es;
            const __m512d p = cubic8(v, at, es, o);
            put8(v, out32, at, es, _mm512_add_pd(p, ks != NULL ? qc8(ks + j, lo, hi) : q0));
        }
    }
    return whole;
}

/* four values r to elements at, at + es, .. (as put8) */
AVX2 static inline void put4(double *v, float *out32, size_t at, size_t es, __m256d r) {
    if (out32 != NULL) {
        const __m128 rf = _mm256_cvtpd_ps(r);
        r = _mm256_cvtps_pd(rf);
        if (es == 1) {
            _mm_storeu_ps(out32 + at, rf);
        } else {
            float f[4];
            _mm_storeu_ps(f, rf);
            out32[at] = f[0];
            out32[at + es] = f[1];
            out32[at + 2 * es] = f[2];
            out32[at + 3 * es] = f[3];
        }
    }
    store4_f64(v + at, es, r);
}

AVX2 static inline __m256d qc4(const uint8_t *ks, const double *qc) {
    return _mm256_setr_pd(qc[ks[0]], qc[ks[1]], qc[ks[2]], qc[ks[3]]);
}

AVX2 static size_t put_span4(double *v, float *out32, size_t i, size_t count, size_t es,
                             size_t o, const uint8_t *ks, const double *qc) {
    const size_t whole = count & ~(size_t)3;
    const __m256d q0 = _mm256_set1_pd(qc[2]);
    size_t j;
    if (whole == 0)
        return 0;
    if (es == 2 && o == 1) {
        row_t r;
        row_start(&r, v, i);
        for (j = 0; j < whole; j += 4) {
            const size_t at = i + 2 * j;
            const __m256d p = row_next(&r, v, at, j + 4 >= whole);
            put4(v, out32, at, 2, _mm256_add_pd(p, ks != NULL ? qc4(ks + j, qc) : q0));
        }
    } else {
        for (j = 0; j < whole; j += 4) {
            const size_t at = i + j * es;
            const __m256d p = cubic4(v, at, es, o);
            put4(v, out32, at, es, _mm256_add_pd(p, ks != NULL ? qc4(ks + j, qc) : q0));
        }
    }
    return whole;
}
#endif

size_t zdt__span_put(int isa, double *v, float *out32, size_t i, size_t count, size_t es,
                     size_t o, const uint8_t *ks, const double *qc) {
#ifdef ZDT_SPAN_SIMD
    if (es > 2)
        return 0;
    if (isa == 2)
        return put_span8(v, out32, i, count, es, o, ks, qc);
    if (isa == 1)
        return put_span4(v, out32, i, count, es, o, ks, qc);
#else
    (void)isa, (void)v, (void)out32, (void)i, (void)count, (void)es, (void)o, (void)ks, (void)qc;
#endif
    return 0;
}
