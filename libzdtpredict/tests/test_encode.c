/* Round trip of the C encoder: random fields (smooth with noise, steps, noise; NaN holes, a
   masked region of a fill value, infinities, zeros, subnormals; 0 to 4 dimensions; float32,
   float64 and integer arrays; every predictor and auto, stages auto, ans and zstd; absolute,
   relative and integer bounds from 1e-6 to 1e-1 of the range) encoded, decoded by the C
   decoder, and every element checked against its bound in exact integer arithmetic: |y - x| <=
   E, |y - x| <= R |x|, NaN and the fill value bit for bit, infinities and zeros (with their
   sign, relative) as themselves; integers within floor(E), escaped and kept ones exact.
   Also: the encode bound holds, and too small an output buffer is refused with the size;
   zdt_predict_encode_with writes the same chunk through two workspaces kept over all the
   cases (one that keeps everything, one that keeps at most 64 KiB: its arrays are reused,
   trimmed and made again across sizes, types and bounds); the decoder's vector path (the
   widest the CPU has, or ZDT_PREDICT_SIMD's) gives the bits of its scalar one.

       test_encode [cases] [seed]          (default 400 cases, seed 57) */
#define _POSIX_C_SOURCE 200112L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "zdt_predict.h"

static uint64_t state = 57;
static uint64_t next(void) {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
}
static double uniform(void) { return (double)(next() >> 11) * 0x1p-53; }
static size_t below(size_t n) { return (size_t)(next() % n); }
static double normal(void) {
    double u = uniform() + 1e-300, v = uniform();
    return sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v);
}

/* --- exact arithmetic on binary64 values: sums and products as big integers ---------------- */

#define LIMBS 140
typedef struct {
    uint32_t w[LIMBS];
} big;

/* |d| = m 2^e, m < 2^53 */
static void split(double d, uint64_t *m, int *e) {
    int ex;
    double f = frexp(fabs(d), &ex);
    *m = (uint64_t)ldexp(f, 53);
    *e = ex - 53;
}
static void big_shifted(big *b, uint64_t hi, uint64_t lo, int s) {
    uint32_t v[4] = {(uint32_t)lo, (uint32_t)(lo >> 32), (uint32_t)hi, (uint32_t)(hi >> 32)};
    int q = s / 32, r = s % 32, k;
    memset(b, 0, sizeof(*b));
    for (k = 0; k < 4; k++) {
        uint64_t part = (uint64_t)v[k] << r;
        b->w[q + k] |= (uint32_t)part;
        if (q + k + 1 < LIMBS)
            b->w[q + k + 1] |= (uint32_t)(part >> 32);
    }
}
static int big_cmp(const big *a, const big *b) {
    int k;
    for (k = LIMBS - 1; k >= 0; k--)
        if (a->w[k] != b->w[k])
            return a->w[k] < b->w[k] ? -1 : 1;
    return 0;
}
static void big_add(big *a, const big *b) {
    uint64_t c = 0;
    int k;
    for (k = 0; k < LIMBS; k++) {
        c += (uint64_t)a->w[k] + b->w[k];
        a->w[k] = (uint32_t)c;
        c >>= 32;
    }
}
static void big_sub(big *a, const big *b) {      /* a >= b */
    uint64_t borrow = 0;
    int k;
    for (k = 0; k < LIMBS; k++) {
        uint64_t d = (uint64_t)a->w[k] - b->w[k] - borrow;
        a->w[k] = (uint32_t)d;
        borrow = (d >> 32) & 1;
    }
}

/* whether |y - x| <= r |x| (relative) or <= r, exactly, for finite x, y and r >= 0 */
static int within(double x, double y, double r, int relative) {
    uint64_t mx = 0, my = 0, mr = 0, a0, a1, b0, b1, p00, mid, lo, hi;
    int ex = 0, ey = 0, er = 0, e0, eb;
    big bx, by, bound;
    if (x == y)
        return 1;
    if (r == 0.0)
        return 0;
    if (x != 0.0)
        split(x, &mx, &ex);
    if (y != 0.0)
        split(y, &my, &ey);
    split(r, &mr, &er);
    if (relative) {
        if (x == 0.0)
            return 0;
        a0 = mx & 0xFFFFFFFFu, a1 = mx >> 32, b0 = mr & 0xFFFFFFFFu, b1 = mr >> 32;
        p00 = a0 * b0;
        mid = a0 * b1 + a1 * b0;
        lo = p00 + (mid << 32);
        hi = a1 * b1 + (mid >> 32) + (lo < p00);
        eb = er + ex;
    } else {
        hi = 0;
        lo = mr;
        eb = er;
    }
    e0 = eb;
    if (x != 0.0 && ex < e0)
        e0 = ex;
    if (y != 0.0 && ey < e0)
        e0 = ey;
    big_shifted(&bx, 0, mx, x != 0.0 ? ex - e0 : 0);
    big_shifted(&by, 0, my, y != 0.0 ? ey - e0 : 0);
    big_shifted(&bound, hi, lo, eb - e0);
    if ((x < 0) != (y < 0) && x != 0.0 && y != 0.0) {
        big_add(&by, &bx);
    } else if (big_cmp(&by, &bx) >= 0) {
        big_sub(&by, &bx);
    } else {
        big_sub(&bx, &by);
        by = bx;
    }
    return big_cmp(&by, &bound) <= 0;
}

/* --- fields -------------------------------------------------------------------------------- */

static const uint32_t INTS[] = {ZDT_PREDICT_INT8, ZDT_PREDICT_UINT8, ZDT_PREDICT_INT16,
                                ZDT_PREDICT_UINT16, ZDT_PREDICT_INT32, ZDT_PREDICT_UINT32};
static const double INT_LO[] = {-128, 0, -32768, 0, -2147483648.0, 0};
static const double INT_HI[] = {127, 255, 32767, 65535, 2147483647.0, 4294967295.0};
static const size_t INT_SIZE[] = {1, 1, 2, 2, 4, 4};

static void put_int(void *x, int t, size_t i, int64_t v) {
    switch (t) {
    case 0: ((int8_t *)x)[i] = (int8_t)v; break;
    case 1: ((uint8_t *)x)[i] = (uint8_t)v; break;
    case 2: ((int16_t *)x)[i] = (int16_t)v; break;
    case 3: ((uint16_t *)x)[i] = (uint16_t)v; break;
    case 4: ((int32_t *)x)[i] = (int32_t)v; break;
    default: ((uint32_t *)x)[i] = (uint32_t)v; break;
    }
}
static int64_t get_int(const void *x, int t, size_t i) {
    switch (t) {
    case 0: return ((const int8_t *)x)[i];
    case 1: return ((const uint8_t *)x)[i];
    case 2: return ((const int16_t *)x)[i];
    case 3: return ((const uint16_t *)x)[i];
    case 4: return ((const int32_t *)x)[i];
    default: return ((const uint32_t *)x)[i];
    }
}

/* whether the chunk decodes to the same bytes with ZDT_PREDICT_SIMD=none (elements one by
   one) as y, which the environment's path decoded */
static int same_as_scalar(const uint8_t *chunk, size_t len, const zdt_predict_params *p,
                          const void *y, size_t bytes) {
    const char *was = getenv("ZDT_PREDICT_SIMD");
    char keep[32];
    void *z = malloc(bytes ? bytes : 1);
    int same;
    zdt_predict_error err;
    if (was != NULL)
        snprintf(keep, sizeof(keep), "%s", was);
    setenv("ZDT_PREDICT_SIMD", "none", 1);
    same = z != NULL && zdt_predict_decode(chunk, len, p, z, bytes, &err) == ZDT_PREDICT_OK &&
           memcmp(z, y, bytes) == 0;
    if (was != NULL)
        setenv("ZDT_PREDICT_SIMD", keep, 1);
    else
        unsetenv("ZDT_PREDICT_SIMD");
    free(z);
    return same;
}

static int same64(double a, double b) { return memcmp(&a, &b, 8) == 0; }
static int same32(float a, float b) { return memcmp(&a, &b, 4) == 0; }

int main(int argc, char **argv) {
    int cases = argc > 1 ? atoi(argv[1]) : 400, c, failed = 0, checked_elements = 0;
    size_t total = 0, bytes_total = 0;
    zdt_predict_workspace *ws[2];
    ws[0] = zdt_predict_workspace_new((size_t)-1);
    ws[1] = zdt_predict_workspace_new((size_t)64 << 10);
    if (ws[0] == NULL || ws[1] == NULL) {
        printf("no memory for the workspaces\n");
        return 1;
    }
    if (argc > 2)
        state = (uint64_t)strtoull(argv[2], NULL, 10) * 0x9E3779B97F4A7C15ull + 1;
    for (c = 0; c < cases; c++) {
        zdt_predict_params p;
        zdt_predict_error err;
        size_t n = 1, i, bound, written = 0, elem, size;
        int d, kind = (int)below(10), is_int = kind == 0, relative = !is_int && kind <= 3;
        int it = (int)below(6), is_f32 = (int)below(2), rc;
        double *field, lo = INFINITY, hi = -INFINITY, scale, freq[4];
        void *x, *y;
        uint8_t *out;
        int64_t keep[1];
        zdt_predict_params_init(&p);
        p.ndim = (uint32_t)below(5);
        for (d = 0; d < (int)p.ndim; d++) {
            static const size_t ext[] = {1, 2, 3, 5, 8, 13, 17, 30, 64};
            p.shape[d] = ext[below(9)];
            n *= (size_t)p.shape[d];
        }
        if (below(12) == 0) {           /* auto's sample blocks */
            p.ndim = 2;
            p.shape[0] = 260;
            p.shape[1] = 270;
            n = 260 * 270;
        }
        while (n > 60000) {
            for (d = 0; d < (int)p.ndim; d++)
                if (p.shape[d] > 8) {
                    n /= (size_t)p.shape[d];
                    p.shape[d] /= 2;
                    n *= (size_t)p.shape[d];
                    break;
                }
        }
        field = (double *)malloc((n ? n : 1) * sizeof(double));
        scale = pow(10.0, -3 + 7 * uniform());
        for (d = 0; d < 4; d++)
            freq[d] = 0.02 + 0.3 * uniform();
        {
            int shape_kind = (int)below(4);     /* smooth+noise, steps, smooth, noise */
            double noise = pow(10.0, -4 + 4 * uniform()), step = pow(10.0, -2 + 3 * uniform());
            double offset = below(3) == 0 ? pow(10.0, -2 + 5 * uniform()) : 0.0;
            for (i = 0; i < n; i++) {
                size_t r = i;
                double v = 0.0;
                for (d = (int)p.ndim - 1; d >= 0; d--) {
                    v += sin((double)(r % p.shape[d]) * freq[d % 4] + d);
                    r /= p.shape[d];
                }
                if (shape_kind == 0)
                    v += noise * normal();
                else if (shape_kind == 1)
                    v = floor(v / step) * step;
                else if (shape_kind == 3)
                    v = normal();
                field[i] = v * scale + offset;
            }
        }
        p.predictor = (int)below(5);
        p.entropy = below(3) == 0 ? ZDT_PREDICT_ENTROPY_ZSTD : below(2) ? ZDT_PREDICT_ENTROPY_AUTO
                                                                         : ZDT_PREDICT_ENTROPY_ANS;
        p.level = below(4) == 0 ? -7 + (int)below(11) : 3;
        if (is_int) {
            p.dtype = INTS[it];
            elem = INT_SIZE[it];
        } else {
            p.dtype = is_f32 ? ZDT_PREDICT_FLOAT32 : ZDT_PREDICT_FLOAT64;
            elem = is_f32 ? 4 : 8;
        }
        x = malloc((n ? n : 1) * elem);
        y = malloc((n ? n : 1) * elem);
        if (is_int) {
            double span = INT_HI[it] - INT_LO[it];
            for (i = 0; i < n; i++) {
                double v = field[i] / (fabs(scale) * 3 + 1e-300) * span * 0.4 +
                           (INT_LO[it] + INT_HI[it]) / 2;
                v = rint(v < INT_LO[it] ? INT_LO[it] : v > INT_HI[it] ? INT_HI[it] : v);
                put_int(x, it, i, (int64_t)v);
            }
            p.abs_error = below(2) ? 0.5 : pow(10.0, 3 * uniform());
            if (n && below(3) == 0) {
                p.has_fill = 1;
                p.fill = below(2) ? INT_LO[it] : INT_HI[it];
                for (i = 0; i < n / 10 + 1; i++)
                    put_int(x, it, below(n), (int64_t)p.fill);
            }
            if (n && below(3) == 0) {
                keep[0] = get_int(x, it, below(n));
                if (!(p.has_fill && keep[0] == (int64_t)p.fill)) {
                    p.keep = keep;
                    p.n_keep = 1;
                }
            }
        } else {
            for (i = 0; i < n; i++) {
                if (is_f32)
                    ((float *)x)[i] = (float)field[i];
                else
                    ((double *)x)[i] = field[i];
            }
            if (n && below(3) == 0) {       /* a fill value: NaN holes or a -9999 region */
                p.has_fill = 1;
                p.fill = below(2) ? NAN : -9999.0;
                if (below(2)) {
                    size_t at = below(n), len = below(n - at) + 1;
                    for (i = at; i < at + len; i++)
                        if (is_f32) ((float *)x)[i] = (float)p.fill;
                        else ((double *)x)[i] = p.fill;
                } else {
                    for (i = 0; i < n / 20 + 1; i++)
                        if (is_f32) ((float *)x)[below(n)] = (float)p.fill;
                        else ((double *)x)[below(n)] = p.fill;
                }
            }
            if (n && below(4) == 0) {       /* values stored raw */
                static const double odd[] = {NAN, INFINITY, -INFINITY, 0.0, -0.0, 1e-310, 1e30};
                for (i = 0; i < 3; i++) {
                    double v = odd[below(7)];
                    if (is_f32) ((float *)x)[below(n)] = (float)v;
                    else ((double *)x)[below(n)] = v;
                }
            }
            for (i = 0; i < n; i++) {
                double v = is_f32 ? (double)((float *)x)[i] : ((double *)x)[i];
                if (isfinite(v) && v != -9999.0) {
                    lo = v < lo ? v : lo;
                    hi = v > hi ? v : hi;
                }
            }
            if (relative)
                p.rel_error = pow(10.0, -6 + 5 * uniform());
            else
                p.abs_error = (hi > lo ? hi - lo : 1.0) * pow(10.0, -6 + 5 * uniform());
        }
        bound = zdt_predict_encode_bound(&p);
        out = (uint8_t *)malloc(bound ? bound : 1);
        rc = zdt_predict_encode(x, n * elem, &p, out, bound, &written, &err);
        if (rc != ZDT_PREDICT_OK) {
            printf("case %d: encode failed: %s\n", c, err.message);
            failed++;
            goto next_case;
        }
        if (written && zdt_predict_encode(x, n * elem, &p, out, written - 1, &size, &err) !=
                           ZDT_PREDICT_E_DST_SIZE) {
            printf("case %d: a buffer one byte short is not refused\n", c);
            failed++;
        }
        for (d = 0; d < 2; d++) {
            uint8_t *again = (uint8_t *)malloc(bound ? bound : 1);
            size_t again_len = 0;
            if (again == NULL ||
                zdt_predict_encode_with(ws[d], x, n * elem, &p, again, bound, &again_len,
                                        &err) != ZDT_PREDICT_OK ||
                again_len != written || memcmp(again, out, written) != 0) {
                printf("case %d: workspace %d gives another chunk (%zu bytes, not %zu)\n", c,
                       d, again_len, written);
                failed++;
            }
            free(again);
        }
        rc = zdt_predict_decode(out, written, &p, y, n * elem, &err);
        if (rc != ZDT_PREDICT_OK) {
            printf("case %d: decode failed: %s (part %s)\n", c, err.message, err.part);
            failed++;
            goto next_case;
        }
        if (!same_as_scalar(out, written, &p, y, n * elem)) {
            printf("case %d: the scalar decoder gives other bits\n", c);
            failed++;
        }
        total += n;
        bytes_total += written;
        for (i = 0; i < n; i++) {
            int ok;
            if (is_int) {
                int64_t a = get_int(x, it, i), b = get_int(y, it, i);
                double k = floor(p.abs_error < 0x1p51 ? p.abs_error : 0x1p51);
                int exact = (p.has_fill && a == (int64_t)p.fill) || (p.n_keep && a == keep[0]);
                ok = exact ? a == b : (double)llabs(a - b) <= k &&
                     !(p.n_keep && b == keep[0]) && !(p.has_fill && b == (int64_t)p.fill);
            } else {
                double a = is_f32 ? (double)((float *)x)[i] : ((double *)x)[i];
                double b = is_f32 ? (double)((float *)y)[i] : ((double *)y)[i];
                int fill_here = p.has_fill && (is_f32 ? same32(((float *)x)[i], (float)p.fill)
                                                      : same64(a, p.fill));
                if (fill_here || isnan(a) || isinf(a) || (relative && a == 0.0))
                    ok = is_f32 ? same32(((float *)x)[i], ((float *)y)[i]) : same64(a, b);
                else
                    ok = isfinite(b) && within(a, b, relative ? p.rel_error : p.abs_error,
                                               relative) &&
                         !(p.has_fill && (is_f32 ? ((float *)y)[i] == (float)p.fill
                                                 : b == p.fill));
            }
            if (!ok) {
                printf("case %d: element %zu of %zu out of its bound (dtype %u, %s %.17g, "
                       "predictor %d, entropy %d)\n", c, i, n, (unsigned)p.dtype,
                       relative ? "rel" : "abs", relative ? p.rel_error : p.abs_error,
                       p.predictor, p.entropy);
                failed++;
                break;
            }
            checked_elements++;
        }
next_case:
        free(field);
        free(x);
        free(y);
        free(out);
    }
    zdt_predict_workspace_free(ws[0]);
    zdt_predict_workspace_free(ws[1]);
    zdt_predict_workspace_free(NULL);
    printf("%d fields encoded and decoded, %zu elements checked within their bounds (%zu bytes "
           "written): %d failed\n", cases, total, bytes_total, failed);
    return failed ? 1 : 0;
}
