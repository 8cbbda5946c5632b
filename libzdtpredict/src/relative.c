/* Pointwise-relative chunks (docs/codecs/predict.md, "Pointwise-relative bounds (format 2)"):
   the base-2 logarithms of the magnitudes as a float64 chunk, a sign bitmap, a map of the
   elements stored exactly, the exact values; each element 2^v by the spec's 14-term
   polynomial (kind 1) or its table of 2^(j/64) and 6-term polynomial (kind 3, and kind 4,
   whose sign stream is coded in tiles: signs.c). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "internal.h"
#include "logs.h"

#define HEAD 32u

static const double C[14] = ZDT__EXP2_C;
const double zdt__exp2_t[64] = ZDT__EXP2_T;
const double zdt__exp2_d[6] = ZDT__EXP2_D;

#ifdef ZDT_GATHER8
/* a byte of a bitmap (first element highest) as a mask of its eight elements (first lowest) */
static inline unsigned reversed8(unsigned b) {
    return (unsigned)((((b * 0x80200802ull) & 0x0884422110ull) * 0x0101010101ull >> 32) & 0xFFu);
}

/* logs[0 .. n) (n a multiple of 8) to 2^v into out64 or out32 (the other NULL; out64 may be
   logs), as powers_plain's scalar loop: +inf to infinity, -inf to zero, negated where neg's
   bit is set (neg: NULL for none), a finite v whose 2^m is not a normal number counted in
   *far and left for the caller. Returns the NaN logarithms. */
__attribute__((target("avx512f"))) static size_t powers8(const double *logs, double *out64,
                                                         float *out32, size_t n,
                                                         const uint8_t *neg, size_t *far) {
    const __m512d zero = _mm512_setzero_pd(), inf = _mm512_set1_pd(HUGE_VAL);
    const __m512i sign = _mm512_set1_epi64((long long)0x8000000000000000ull);
    size_t i, n_far = 0, n_nan = 0;
    for (i = 0; i < n; i += 8) {
        __m512d lg = _mm512_loadu_pd(logs + i), y, out;
        __mmask8 near, finite, nan, pinf;
        y = zdt__table_exp2_8(lg, &near);
        finite = _mm512_cmp_pd_mask(_mm512_sub_pd(lg, lg), zero, _CMP_EQ_OQ);
        nan = _mm512_cmp_pd_mask(lg, lg, _CMP_UNORD_Q);
        pinf = _mm512_cmp_pd_mask(lg, inf, _CMP_EQ_OQ);
        out = _mm512_mask_blend_pd(finite, _mm512_mask_blend_pd(pinf, zero, inf), y);
        if (neg != NULL) {
            /* (the sign bit flipped, so that a zero becomes -0) */
            const __mmask8 minus = (__mmask8)reversed8(neg[i >> 3]);
            __m512i bits = _mm512_castpd_si512(out);
            out = _mm512_castsi512_pd(_mm512_mask_xor_epi64(bits, minus, bits, sign));
        }
        n_far += (size_t)__builtin_popcount((unsigned)(finite & (__mmask8)~near));
        n_nan += (size_t)__builtin_popcount((unsigned)nan);
        if (out64 != NULL)
            _mm512_storeu_pd(out64 + i, out);
        else
            _mm256_storeu_ps(out32 + i, _mm512_cvtpd_ps(out));
    }
    *far = n_far;
    return n_nan;
}
#endif

static int bit(const uint8_t *bits, size_t i) {
    return bits != NULL && (bits[i >> 3] >> (7 - (i & 7)) & 1);
}

/* kinds 3 and 4, a chunk without exact map or exact values: 2^logs[i] into out64 (which may
   be logs itself: the logarithms decoded into the output, no buffer of their own to fill and
   read) or out32 (the other NULL); infinity for +inf, zero for -inf where 2^m is a normal
   number, else left for table_exp2 (*far counts those); negated where neg's bit is set (neg:
   NULL for none). Returns the NaN logarithms (each a corrupt chunk's here). */
ZDT_CLONES static size_t powers_plain(const double *logs, double *out64, float *out32, size_t n,
                                      const uint8_t *neg, size_t *far) {
    size_t i = 0, n_far = 0, n_nan = 0;
#ifdef ZDT_GATHER8
    if (zdt__has_avx512f()) {
        i = n & ~(size_t)7;
        n_nan = powers8(logs, out64, out32, i, neg, &n_far);
    }
#endif
    for (; i < n; i++) {
        double lg = logs[i], e, t = zdt__exp2_table_part(lg, &e);
        int near = zdt__exp2_table_near(e), finite = lg - lg == 0;
        double p = t * zdt__pow2i(near ? e : 0.0);
        n_far += (size_t)(finite & !near);
        n_nan += (size_t)(lg != lg);
        p = finite ? p : (lg == HUGE_VAL ? HUGE_VAL : 0.0);
        p = bit(neg, i) ? -p : p;
        if (out64 != NULL)
            out64[i] = p;
        else
            out32[i] = (float)p;
    }
    *far = n_far;
    return n_nan;
}

#define PASS(name) name##_f64
#define T double
#include "relative_pass.h"
#undef PASS
#undef T
#define PASS(name) name##_f32
#define T float
#include "relative_pass.h"
#undef PASS
#undef T

/* a length-prefixed bitmap stream at buf[*at]: checks it (its length, and where `framed` its
   frame declaring ceil(n / 8) bytes); *frame, *frame_len: the stream (length 0: none) */
static int bitmap_check(const uint8_t *buf, size_t len, size_t *at, size_t n, const char *part,
                        int framed, const char **frame, size_t *frame_len,
                        zdt_predict_error *err) {
    uint64_t length;
    char what[48];
    if (len - *at < 8)
        return zdt__corrupt(err, part, "the chunk ends before its %s stream's length", part);
    length = zdt__le64(buf + *at);
    *at += 8;
    if (length > len - *at)
        return zdt__corrupt(err, part, "the %s stream of %llu bytes runs past the chunk's end",
                            part, (unsigned long long)length);
    *frame = (const char *)(buf + *at);
    *frame_len = (size_t)length;
    *at += (size_t)length;
    if (!length || !framed)
        return ZDT_PREDICT_OK;
    snprintf(what, sizeof(what), "the %s stream: ", part);
    return zdt__frame_check((const uint8_t *)*frame, *frame_len, (n + 7) / 8, part, what, err);
}

static int bitmap_decode(const zdt__io *io, const char *frame, size_t frame_len, size_t n, const char *part,
                         uint8_t **bits, zdt_predict_error *err) {
    char what[48];
    size_t bytes = (n + 7) / 8;
    *bits = NULL;
    if (!frame_len)
        return ZDT_PREDICT_OK;
    *bits = (uint8_t *)malloc(bytes ? bytes : 1);
    if (*bits == NULL)
        return zdt__nomem(err);
    snprintf(what, sizeof(what), "the %s stream: ", part);
    return zdt__frame_decode(io, (const uint8_t *)frame, frame_len, *bits, bytes, part, what, err);
}

/* the sign bitmap *bits (NULL: no sign stream), as bitmap_decode's: kind 4's stream decoded
   with the logarithms (work: n bytes of scratch, or NULL for a buffer of its own), else the
   zstd frame */
static int sign_bitmap(const zdt__io *io, int kind, const char *stream, size_t length,
                       const zdt__grid *g, const double *logs, uint8_t *work, uint8_t **bits,
                       zdt_predict_error *err) {
    const size_t n = g->count;
    uint8_t *own = NULL;
    int rc;
    if (kind != 4 || !length)
        return bitmap_decode(io, stream, length, n, "signs", bits, err);
    *bits = NULL;
    if (work == NULL && (work = own = (uint8_t *)malloc(n)) == NULL)
        return zdt__nomem(err);
    rc = zdt__signs_decode((const uint8_t *)stream, length, g, logs, work, err);
    if (rc == ZDT_PREDICT_OK && (*bits = (uint8_t *)malloc((n + 7) / 8 + 1)) == NULL)
        rc = zdt__nomem(err);
    if (rc == ZDT_PREDICT_OK)
        zdt__bitmap_pack(work, n, *bits);
    free(own);
    return rc;
}

int zdt__decode_relative(const zdt__io *io, const uint8_t *buf, size_t len, const zdt__grid *g,
                         int is_f32, void *out, zdt_predict_error *err) {
    const size_t n = g->count, elem = is_f32 ? 4 : 8;
    const double nan = zdt__f64_of_bits(0x7FF8000000000000ull);
    int kind, log_fill, rc;
    double b;
    uint64_t n_exact, length;
    size_t at, sign_len, map_len, marks = 0, used = 0, i;
    const char *sign_frame, *map_frame;
    const uint8_t *inner, *rest;
    double *logs = NULL;
    uint8_t *negative = NULL, *exact = NULL, *stored = NULL, *where = NULL;
    if (len < HEAD)
        return zdt__corrupt(err, "header", "a format-2 chunk of %zu bytes is shorter than its "
                            "32-byte header", len);
    kind = buf[4];
    log_fill = zdt__le16(buf + 6);
    b = zdt__load_f64(buf + 8);
    n_exact = zdt__le64(buf + 16);
    length = zdt__le64(buf + 24);
    if (kind != 1 && kind != 3 && kind != 4)
        return zdt__corrupt(err, "header", "unknown format-2 chunk kind %d (1, 3, 4: pointwise "
                            "relative, 2: masked)", kind);
    if (buf[5] != elem)
        return zdt__corrupt(err, "header", "the chunk holds %d-byte elements, the array %s",
                            buf[5], is_f32 ? "float32" : "float64");
    if (log_fill > 1)
        return zdt__corrupt(err, "header", "the logarithms' fill field is %d, not 0 (-inf) or 1 "
                            "(NaN)", log_fill);
    if (!(b > 0.0 && b <= DBL_MAX))
        return zdt__corrupt(err, "header", "the logarithms' bound is %.17g, not a finite number "
                            "> 0", b);
    if (n_exact > n)
        return zdt__corrupt(err, "header", "the chunk claims %llu exact values for %zu elements",
                            (unsigned long long)n_exact, n);
    if (length > len - HEAD)
        return zdt__corrupt(err, "logarithms", "the logarithms' chunk of %llu bytes runs past "
                            "the chunk's end", (unsigned long long)length);
    inner = buf + HEAD;
    if (length >= 4 && memcmp(inner, "ZPR2", 4) == 0 && !(length >= 5 && inner[4] == 2))
        /* (a format-1, format-3 or masked chunk only: a relative one would nest) */
        return zdt__corrupt(err, "logarithms", "the logarithms' chunk is a format-2 chunk of "
                            "kind %d, not a format-1 or a masked chunk",
                            length >= 5 ? inner[4] : -1);
    at = HEAD + (size_t)length;
    rc = bitmap_check(buf, len, &at, n, "signs", kind != 4, &sign_frame, &sign_len, err);
    if (rc == ZDT_PREDICT_OK)
        rc = bitmap_check(buf, len, &at, n, "exact map", 1, &map_frame, &map_len, err);
    if (rc != ZDT_PREDICT_OK)
        return rc;
    rest = buf + at;
    if (!n_exact && len > at)
        return zdt__corrupt(err, "exact values", "%zu bytes after the streams of a chunk without "
                            "exact values", len - at);
    if (n_exact) {
        rc = zdt__frame_check(rest, len - at, (size_t)n_exact * elem, "exact values",
                              "the exact values: ", err);
        if (rc != ZDT_PREDICT_OK)
            return rc;
    }

    /* every length agrees: the logarithms, the bitmaps, the exact values */
    if (kind != 1 && !is_f32 && !map_len && !n_exact && n) {
        /* (the logarithms decoded into the output, their powers in place) */
        size_t far = 0;
        rc = zdt__decode_floats(io, inner, (size_t)length, g, 0, b, 1, log_fill ? nan : -HUGE_VAL,
                                NULL, NULL, out, err);
        if (rc == ZDT_PREDICT_OK)
            rc = sign_bitmap(io, kind, sign_frame, sign_len, g, (const double *)out, NULL,
                             &negative, err);
        if (rc != ZDT_PREDICT_OK) {
            free(negative);
            return rc;
        }
        marks = powers_plain((double *)out, (double *)out, NULL, n, negative, &far);
        if (marks)
            rc = zdt__corrupt(err, "exact map", "the logarithms and the exact map mark %zu "
                              "elements exact, the header counts 0 exact values", marks);
        if (!far || rc != ZDT_PREDICT_OK) {
            free(negative);
            return rc;
        }
        /* (values beyond 2^-1022 or 2^1023, rare: their logarithms decoded again) */
        logs = (double *)malloc(n * sizeof(double));
        if (logs == NULL) {
            free(negative);
            return zdt__nomem(err);
        }
        rc = zdt__decode_floats(io, inner, (size_t)length, g, 0, b, 1,
                                log_fill ? nan : -HUGE_VAL, NULL, NULL, logs, err);
        for (i = 0; rc == ZDT_PREDICT_OK && i < n; i++) {
            double v = logs[i], e = 0.0;
            if (isfinite(v) && (zdt__exp2_table_part(v, &e), !zdt__exp2_table_near(e))) {
                const double y = zdt__table_exp2(v);
                ((double *)out)[i] = bit(negative, i) ? -y : y;
            }
        }
        free(logs);
        free(negative);
        return rc;
    }
    logs = (double *)malloc((n ? n : 1) * sizeof(double));
    if (logs == NULL)
        return zdt__nomem(err);
    rc = zdt__decode_floats(io, inner, (size_t)length, g, 0, b, 1, log_fill ? nan : -HUGE_VAL,
                            NULL, NULL, logs, err);
    if (rc == ZDT_PREDICT_OK)
        /* (the output, which the powers fill later, as the signs' scratch) */
        rc = sign_bitmap(io, kind, sign_frame, sign_len, g, logs, (uint8_t *)out, &negative,
                         err);
    if (rc == ZDT_PREDICT_OK)
        rc = bitmap_decode(io, map_frame, map_len, n, "exact map", &exact, err);
    if (rc == ZDT_PREDICT_OK && n_exact) {
        where = (uint8_t *)malloc(n);
        if (where == NULL)
            rc = zdt__nomem(err);
    }
    if (rc == ZDT_PREDICT_OK && n) {
        /* every element from its logarithm (the exact ones overwritten below) */
        size_t far = 0;
        const int table = kind != 1;
        marks = is_f32 ? powers_f32(logs, negative, exact, n, (float *)out, where, table, &far)
                       : powers_f64(logs, negative, exact, n, (double *)out, where, table, &far);
        for (i = 0; far && i < n; i++) {
            double v = logs[i];
            double e = 0.0;
            int near = !isfinite(v) ||
                       (table ? (zdt__exp2_table_part(v, &e), zdt__exp2_table_near(e))
                              : zdt__exp2_near(rint(v)));
            if (!near) {
                double y = table ? zdt__table_exp2(v) : zdt__spec_exp2(v);
                far--;
                if (is_f32) {
                    float yt = (float)y;
                    ((float *)out)[i] = bit(negative, i) ? -yt : yt;
                } else {
                    ((double *)out)[i] = bit(negative, i) ? -y : y;
                }
            }
        }
        if (marks != n_exact)
            rc = zdt__corrupt(err, "exact map", "the logarithms and the exact map mark %zu "
                              "elements exact, the header counts %llu exact values", marks,
                              (unsigned long long)n_exact);
    }
    if (rc == ZDT_PREDICT_OK && n_exact) {
        stored = (uint8_t *)malloc((size_t)n_exact * elem);
        if (stored == NULL)
            rc = zdt__nomem(err);
        else
            rc = zdt__frame_decode(io, rest, len - at, stored, (size_t)n_exact * elem,
                                   "exact values", "the exact values: ", err);
    }
    if (rc == ZDT_PREDICT_OK && n_exact) {
        /* the exact elements: the stored values in order (eight marks at a time while they
           are all 0, as nearly all are) */
        for (i = 0; i < n && used < n_exact; i++) {
            uint64_t eight;
            if (i + 8 <= n) {
                memcpy(&eight, where + i, 8);
                if (!eight) {
                    i += 7;
                    continue;
                }
            }
            if (!where[i])
                continue;
            if (is_f32)
                ((float *)out)[i] = zdt__load_f32(stored + 4 * used);
            else
                ((double *)out)[i] = zdt__load_f64(stored + 8 * used);
            used++;
        }
    }
    free(logs);
    free(negative);
    free(exact);
    free(stored);
    free(where);
    return rc;
}
