/* A pointwise-relative chunk (format 2, kind 3: kind 1's layout, 2^v by a table; kind 4 where
   its signs cost less by their tiles and contexts than as a zstd frame): the
   logarithms (zdt's own log2, the same bits on every platform), their bound b (log_bound),
   the logarithms' chunk (encode_floats, which also gives what it decodes each element to),
   every element checked against R |x| as the decoder will compute it (a float64 screen, then
   exact integer arithmetic where the screen cannot settle it), the signs, the exact map and
   values; and every value stored exactly where that is smaller. */
#include <math.h>

#include "encode.h"
#include "logs.h"

#define HEAD 32u

/* 1 / (2 i + 3), i = 0 .. 10: log2's series (1/3, 1/5, ..., 1/23) */
static const double ATANH[11] = {1.0 / 3, 1.0 / 5, 1.0 / 7, 1.0 / 9, 1.0 / 11, 1.0 / 13,
                                 1.0 / 15, 1.0 / 17, 1.0 / 19, 1.0 / 21, 1.0 / 23};

/* log2 |a| for a finite non-zero a: m and e from the bits for a normal a (frexp's answer),
   from frexp below the normal range */
static double log2_abs(double a) {
    uint64_t b = zdt__bits_of_f64(a) & 0x7FFFFFFFFFFFFFFFull;
    int e;
    double m;
    if (b < 0x0010000000000000ull) {
        m = frexp(fabs(a), &e);
        return zdt__log2_of(m, e, ATANH);
    }
    e = (int)(b >> 52) - 1022;
    m = zdt__f64_of_bits((b & 0x000FFFFFFFFFFFFFull) | 0x3FE0000000000000ull);
    return zdt__log2_of(m, e, ATANH);
}

/* --- the whole-chunk passes (encode_relative_pass.h) ----------------------------------------

   logarithms: logs[i] = log2 |x[i]| (log2_abs), NaN for a NaN and for the fill value (fill_on,
   fill_bits), -inf for a zero, +inf for an infinity; negative[i] the sign bit; counts[0] the
   NaN logarithms, counts[1] the zeros, counts[2] the odd elements (zero, below the normal
   range, infinite, NaN, the fill value); returns the largest |logs[i]| over the finite ones,
   *top the largest finite logs[i] (-inf where none is).
   Block by block: each block's logarithms from the bits in one loop that vectorises (no libm
   call, no branch), with a count of its odd and negative elements; only a block with an odd
   element takes the specials' loops, only one with a negative element the signs' loop.

   verdict: the screen of y, x's decoded value: 2 where y is not finite, zero or the fill
   value; else 0 where y is surely within r |x| (a margin of 2^-50 over the roundings of
   |y - x| and r |x|), 1 where exact arithmetic must decide.

   check: y = 2^v[i] from the bits (kind 3's 2^v where 2^m is a normal number), rounded to T,
   negated where x[i] is negative; verdict[i] 0 where the element needs no check (exact
   already, its logarithm not finite, x zero), else its verdict, or 3 where 2^v is not done
   from the bits (the caller does those with table_exp2); returns how many verdicts are not 0.
   `plain`: every logarithm finite, no x zero, none exact (the chunk had no odd element):
   neither logs nor exact is read. In blocks: the powers in a loop of their own, the verdicts
   in one of 64-bit values, then narrowed to bytes with the exact marks (one loop doing it all
   vectorised narrower). */

#ifdef ZDT_GATHER8
/* check's powers for v[0 .. n) (n a multiple of 8): y[k] and near[k] as its scalar loop */
__attribute__((target("avx512f"))) static void exp2_block8(const double *v, double *y,
                                                           int64_t *near, size_t n) {
    size_t i;
    for (i = 0; i < n; i += 8) {
        __mmask8 ok;
        _mm512_storeu_pd(y + i, zdt__table_exp2_8(_mm512_loadu_pd(v + i), &ok));
        _mm512_storeu_si512((void *)(near + i), _mm512_maskz_set1_epi64(ok, 1));
    }
}
#endif

#define PASS(name) name##_f64
#define T double
#define U uint64_t
#define LOW 0x0010000000000000ull
#define INF 0x7FF0000000000000ull
#define COPYSIGN copysign
#include "encode_relative_pass.h"
#undef PASS
#undef T
#undef U
#undef LOW
#undef INF
#undef COPYSIGN

#define PASS(name) name##_f32
#define T float
#define U uint32_t
#define LOW 1u
#define INF 0x7F800000u
#define COPYSIGN copysignf
#include "encode_relative_pass.h"
#undef PASS
#undef T
#undef U
#undef LOW
#undef INF
#undef COPYSIGN

/* --- exact arithmetic: |y - x| > r |x| for finite non-zero x, y of one sign and r > 0 ----- */

#define LIMBS 136               /* 4352 bits: every such value scaled to an integer */

static void split(double d, uint64_t *m, int *e) {
    int ex;
    double f = frexp(fabs(d), &ex);
    *m = (uint64_t)ldexp(f, 53);
    *e = ex - 53;
}

/* b = (hi 2^64 + lo) 2^s */
static void big_set(uint32_t *b, uint64_t hi, uint64_t lo, unsigned s) {
    uint32_t v[4];
    unsigned q = s / 32, r = s % 32, k;
    v[0] = (uint32_t)lo;
    v[1] = (uint32_t)(lo >> 32);
    v[2] = (uint32_t)hi;
    v[3] = (uint32_t)(hi >> 32);
    memset(b, 0, LIMBS * sizeof(uint32_t));
    for (k = 0; k < 4; k++) {
        uint64_t part = (uint64_t)v[k] << r;
        if (q + k < LIMBS)
            b[q + k] |= (uint32_t)part;
        if (q + k + 1 < LIMBS)
            b[q + k + 1] |= (uint32_t)(part >> 32);
    }
}

static int big_cmp(const uint32_t *a, const uint32_t *b) {
    int k;
    for (k = LIMBS - 1; k >= 0; k--)
        if (a[k] != b[k])
            return a[k] < b[k] ? -1 : 1;
    return 0;
}

/* a -= b (a >= b) */
static void big_sub(uint32_t *a, const uint32_t *b) {
    uint64_t borrow = 0;
    int k;
    for (k = 0; k < LIMBS; k++) {
        uint64_t d = (uint64_t)a[k] - b[k] - borrow;
        a[k] = (uint32_t)d;
        borrow = (d >> 32) & 1;
    }
}

static int misses_exactly(double x, double y, double r) {
    uint32_t ax[LIMBS], by[LIMBS], rx[LIMBS];
    uint64_t mx, my, mr, a0, a1, b0, b1, p00, mid, lo, hi;
    int ex, ey, er, e0;
    split(x, &mx, &ex);
    split(y, &my, &ey);
    split(r, &mr, &er);
    /* r |x| = mr mx 2^(er + ex): a 106-bit product */
    a0 = mx & 0xFFFFFFFFu;
    a1 = mx >> 32;
    b0 = mr & 0xFFFFFFFFu;
    b1 = mr >> 32;
    p00 = a0 * b0;
    mid = a0 * b1 + a1 * b0;
    lo = p00 + (mid << 32);
    hi = a1 * b1 + (mid >> 32) + (lo < p00);
    e0 = ex < ey ? ex : ey;
    if (er + ex < e0)
        e0 = er + ex;
    big_set(ax, 0, mx, (unsigned)(ex - e0));
    big_set(by, 0, my, (unsigned)(ey - e0));
    big_set(rx, hi, lo, (unsigned)(er + ex - e0));
    if (big_cmp(by, ax) >= 0)
        big_sub(by, ax);
    else {
        big_sub(ax, by);
        memcpy(by, ax, sizeof(ax));
    }
    return big_cmp(by, rx) > 0;
}

/* --- the chunk ------------------------------------------------------------------------------ */

/* the sign stream of kind 3 (a zstd frame of the bitmap) and of kind 4 (signs_encode), the
   smaller into *part; returns the kind (3 or 4), -1 where zstd failed */
static int signs(const zdt_predict_params *p, const zdt__io *cctx, const zdt__grid *g,
                 const double *logs, const double *decoded, double t, const uint8_t *negative,
                 uint8_t *scratch, zdt__buf *part) {
    zdt__buf coded;
    int rc;
    zdt__bitmap_pack(negative, g->count, scratch);
    rc = zdt__zstd_append(part, cctx, scratch, (g->count + 7) / 8, p->level);
    memset(&coded, 0, sizeof(coded));
    zdt__signs_encode(&coded, negative, g, logs, decoded, t);
    if (coded.oom)
        part->oom = 1;
    if (rc == 0 && !coded.oom && coded.len < part->len) {
        const zdt__buf zstd_frame = *part;
        *part = coded;
        coded = zstd_frame;
        rc = 4;
    } else {
        rc = rc == 0 ? 3 : -1;
    }
    zdt__buf_free(&coded);
    return rc;
}

/* _pack: head, the logarithms' chunk, signs, exact map, exact values; `logs` and `decoded`:
   every logarithm, and as the decoder reads the finite ones (decoded NULL: the logarithms
   themselves), `nan_logs`: whether any logarithm is NaN, t: kind 4's reference (the sign
   stream's classes); work: n + ceil(n / 8) bytes of scratch */
static int pack(const zdt_predict_params *p, const zdt__io *cctx, const void *x, int is_f32,
                const zdt__grid *g, double b, int log_fill, const zdt__buf *chunk,
                const double *logs, int nan_logs, const double *decoded, double t,
                const uint8_t *negative, const uint8_t *exact, uint8_t *work, zdt__buf *out) {
    const size_t n = g->count;
    const size_t elem = is_f32 ? 4 : 8, bytes = (n + 7) / 8;
    size_t i, n_exact = 0, at;
    int needed = 0, marked = 0, rc = 0;
    uint8_t *bits = work, *scratch = work + n;
    int kind = 3;
    zdt__buf part, sign;
    memset(&part, 0, sizeof(part));
    memset(&sign, 0, sizeof(sign));
    /* (branch-free: these loops vectorise) */
    for (i = 0; i < n; i++) {
        needed |= negative[i] > exact[i];
        n_exact += exact[i] != 0;
    }
    if (nan_logs) {
        for (i = 0; i < n; i++) {
            bits[i] = (uint8_t)((exact[i] != 0) & !(logs[i] != logs[i]));
            marked |= bits[i];
        }
    } else {
        for (i = 0; i < n; i++) {
            bits[i] = (uint8_t)(exact[i] != 0);
            marked |= bits[i];
        }
    }
    if (needed) {
        kind = signs(p, cctx, g, logs, decoded, t, negative, scratch, &sign);
        if (kind < 0) {
            rc = -1;
            kind = 3;
        }
    }
    zdt__buf_put(out, "ZPR2", 4);
    zdt__buf_u8(out, (unsigned)kind);
    zdt__buf_u8(out, (unsigned)elem);
    zdt__buf_u16(out, (unsigned)log_fill);
    zdt__buf_f64(out, b);
    zdt__buf_u64(out, n_exact);
    zdt__buf_u64(out, chunk->len);
    zdt__buf_put(out, chunk->p, chunk->len);
    zdt__buf_u64(out, sign.len);
    zdt__buf_put(out, sign.p, sign.len);
    if (sign.oom)
        out->oom = 1;
    zdt__buf_free(&sign);
    if (marked) {
        zdt__bitmap_pack(bits, n, scratch);
        rc |= zdt__zstd_append(&part, cctx, scratch, bytes, p->level);
    }
    zdt__buf_u64(out, part.len);
    zdt__buf_put(out, part.p, part.len);
    part.len = 0;
    if (n_exact && zdt__buf_reserve(&part, n_exact * elem) == 0) {
        for (i = 0, at = 0; i < n; i++)
            if (exact[i]) {
                if (is_f32) {
                    uint32_t v;
                    memcpy(&v, (const float *)x + i, 4);
                    zdt__st32(part.p + at, v);
                } else {
                    zdt__st64(part.p + at, zdt__bits_of_f64(((const double *)x)[i]));
                }
                at += elem;
            }
        part.len = at;
        {
            zdt__buf frame;
            memset(&frame, 0, sizeof(frame));
            rc |= zdt__zstd_append(&frame, cctx, part.p, part.len, p->level);
            zdt__buf_put(out, frame.p, frame.len);
            if (frame.oom)
                out->oom = 1;
            zdt__buf_free(&frame);
        }
    }
    if (part.oom)
        out->oom = 1;
    zdt__buf_free(&part);
    return rc;
}

int zdt__encode_relative(const void *src, const zdt_predict_params *p, const zdt__grid *g,
                         int is_f32, zdt__buf *out, zdt__spare *pool, zdt_predict_error *err) {
    const size_t n = g->count, elem = is_f32 ? 4 : 8, block = 4 * n + (n + 7) / 8 + 1;
    const double R = p->rel_error, nan = zdt__f64_of_bits(0x7FF8000000000000ull);
    double *logs = NULL, *decoded = NULL, largest = 0.0, final, slack, r, b, fillv = 0.0;
    double top = -HUGE_VAL;     /* the largest finite logarithm: kind 4's t */
    uint8_t *bytes = NULL, *negative, *exact, *verdict, *work;
    size_t i, n_nan = 0, n_zero = 0, n_odd = 0, flagged;
    int has_fill = 0, log_fill, rc = ZDT_PREDICT_OK, plain;
    uint64_t fill_bits = 0;
    float fill32 = 0.0f;
    zdt__buf chunk, every, echunk;
    zdt__io io, *cctx = &io;
    memset(&chunk, 0, sizeof(chunk));
    memset(&every, 0, sizeof(every));
    memset(&echunk, 0, sizeof(echunk));
    zdt__io_of(&io, p);
    logs = (double *)zdt__take(pool, n * sizeof(double));
    /* the byte arrays in one block: past 4 MiB (a million elements) it takes huge pages, a
       few page faults where four blocks of their own took one for each 4 KiB */
    bytes = (uint8_t *)zdt__take(pool, block);
    if (logs == NULL || bytes == NULL) {
        rc = zdt__nomem(err);
        goto done;
    }
    negative = bytes;
    exact = bytes + n;
    verdict = bytes + 2 * n;
    work = bytes + 3 * n;
    memset(exact, 0, n);
    /* the fill value, where it is finite and not zero (zeros, infinities come back exactly) */
    if (p->has_fill) {
        if (is_f32) {
            uint32_t fb;
            fill32 = (float)p->fill;
            memcpy(&fb, &fill32, 4);
            fill_bits = fb;
            has_fill = isfinite(fill32) && fill32 != 0.0f;
            fillv = fill32;
        } else {
            fillv = p->fill;
            fill_bits = zdt__bits_of_f64(p->fill);
            has_fill = isfinite(p->fill) && p->fill != 0.0;
        }
    }
    /* the logarithms, signs and counts */
    if (n) {
        size_t counts[3];
        if (is_f32) {
            uint32_t fb32 = (uint32_t)fill_bits;
            largest = logarithms_f32((const float *)src, logs, negative, n, has_fill ? 1u : 0u,
                                     fb32, counts, &top);
        } else {
            largest = logarithms_f64((const double *)src, logs, negative, n,
                                     has_fill ? (uint64_t)1 : 0, fill_bits, counts, &top);
        }
        n_nan = counts[0];
        n_zero = counts[1];
        n_odd = counts[2];
    }
    if (n_nan)
        for (i = 0; i < n; i++)
            exact[i] = isnan(logs[i]) != 0;
    /* log_bound */
    final = is_f32 ? 0x1p-24 : 0x1p-53;
    slack = final + 0x1p-50 + 4 * largest * 0x1p-52;
    r = R - slack * (1 + R);
    if (R / 2 > r)
        r = R / 2;
    b = log1p(r) / log(2.0) * (1 - 0x1p-40);
    log_fill = n_nan > n_zero;
    {
        zdt_predict_params inner = *p;
        inner.abs_error = b;
        inner.rel_error = 0.0;
        /* (the logarithms' chunk never looks back at the reference mask: the spec) */
        inner.reference = NULL;
        rc = zdt__encode_chunk(logs, &inner, g, 0, b, n_nan || n_zero, log_fill ? nan : -HUGE_VAL,
                               &chunk, &decoded, pool, err);
        if (rc != ZDT_PREDICT_OK)
            goto done;
    }
    /* every element checked against what it decodes to (a screen, then exactly): the
       screen for every element in a pass of its own, then one at a time the few it leaves */
    plain = !n_odd;
    flagged = !n ? 0 : is_f32 ? check_f32((const float *)src, logs, decoded, exact, n, R,
                                          has_fill, fill32, plain, verdict)
                              : check_f64((const double *)src, logs, decoded, exact, n, R,
                                          has_fill, fillv, plain, verdict);
    for (i = 0; flagged && i < n; i++) {
        double xd, y;
        int v = verdict[i];
        if (!v)
            continue;
        flagged--;
        xd = is_f32 ? (double)((const float *)src)[i] : ((const double *)src)[i];
        if (v == 3) {
            /* (2^m outside the normal range: table_exp2's ldexp) */
            y = zdt__table_exp2(decoded[i]);
            if (is_f32) {
                float yt = (float)y, xf = ((const float *)src)[i];
                v = verdict_f32(xd < 0 ? -yt : yt, xf, R, has_fill, fill32);
            } else {
                v = verdict_f64(xd < 0 ? -y : y, xd, R, has_fill, fillv);
            }
        }
        if (v == 2)
            exact[i] = 1;
        else if (v == 1) {
            y = zdt__table_exp2(decoded[i]);
            if (is_f32) {
                float yt = (float)y;
                y = xd < 0 ? -yt : yt;
            } else {
                y = xd < 0 ? -y : y;
            }
            if (misses_exactly(xd, y, R))
                exact[i] = 1;
        }
    }
    rc = pack(p, cctx, src, is_f32, g, b, log_fill, &chunk, logs, n_nan != 0, decoded,
              top - top == 0.0 ? top : 0.0, negative, exact, work, out);
    if (rc == 0 && !out->oom && out->len > n * elem / 2) {
        /* every value stored exactly: the logarithms all NaN, the chunk's fill value */
        zdt_predict_params inner = *p;
        for (i = 0; i < n; i++) {
            logs[i] = nan;
            exact[i] = 1;
        }
        inner.abs_error = b;
        inner.rel_error = 0.0;
        inner.reference = NULL;
        rc = zdt__encode_chunk(logs, &inner, g, 0, b, 1, nan, &echunk, NULL, pool, err);
        if (rc != ZDT_PREDICT_OK)
            goto done;
        rc = pack(p, cctx, src, is_f32, g, b, 1, &echunk, logs, 1, NULL, 0.0, negative, exact,
                  work, &every);
        if (rc == 0 && !every.oom && every.len < out->len) {
            zdt__buf t = *out;
            *out = every;
            every = t;
        }
    }
    if (rc != 0 && rc != ZDT_PREDICT_OK)
        rc = zdt__fail(err, ZDT_PREDICT_E_PARAM, "", "zstd refused to compress (level %d)",
                       p->level);
    else if (out->oom || every.oom)
        rc = zdt__nomem(err);
done:
    zdt__give(pool, logs, n * sizeof(double));
    zdt__give(pool, decoded, n * sizeof(double));
    zdt__give(pool, bytes, block);
    zdt__buf_free(&chunk);
    zdt__buf_free(&every);
    zdt__buf_free(&echunk);
    return rc;
}
