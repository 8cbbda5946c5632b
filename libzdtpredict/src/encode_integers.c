/* An integer array's chunk (docs/codecs/predict.md, "Integer data types"), as
   PredictConfig._encode_integers writes it: the values as float64 within W (the largest
   binary64 below k + 1/2, k = floor(min(E, 2^51))); the values of `keep` escaped (a quiet NaN
   holding w + 2^32); where another element would decode to a kept value or the fill value, it
   is escaped too and the chunk encoded again, until none does (after 4 rounds every value
   within k of a kept one, which settles it). */
#include <math.h>

#include "encode.h"

#define ESCAPE 0x7FF8000000000000ull
#define ROUNDS 4

static int64_t element(const void *x, uint32_t dtype, size_t i) {
    switch (dtype) {
    case ZDT_PREDICT_INT8: return ((const int8_t *)x)[i];
    case ZDT_PREDICT_UINT8: return ((const uint8_t *)x)[i];
    case ZDT_PREDICT_INT16: return ((const int16_t *)x)[i];
    case ZDT_PREDICT_UINT16: return ((const uint16_t *)x)[i];
    case ZDT_PREDICT_INT32: return ((const int32_t *)x)[i];
    default: return ((const uint32_t *)x)[i];
    }
}

static int in(int64_t v, const int64_t *set, size_t n) {
    size_t i;
    for (i = 0; i < n; i++)
        if (set[i] == v)
            return 1;
    return 0;
}

int zdt__encode_integers(const void *src, const zdt_predict_params *p, const zdt__grid *g,
                         zdt__buf *out, zdt__spare *pool, zdt_predict_error *err) {
    const size_t n = g->count;
    size_t i, n_kept = 0, k_elem;
    int64_t *kept = NULL, *xi = NULL, lo = INT64_MAX, hi = INT64_MIN, fill = 0;
    uint8_t *is_kept = NULL, *escaped = NULL;
    double *xf = NULL, k, bound;
    void *y = NULL;
    int at_risk = 0, rounds, rc = ZDT_PREDICT_OK, others = 0;
    zdt_predict_params inner = *p;
    zdt__io io;
    zdt__io_of(&io, p);
    switch (p->dtype) {
    case ZDT_PREDICT_INT8: case ZDT_PREDICT_UINT8: k_elem = 1; break;
    case ZDT_PREDICT_INT16: case ZDT_PREDICT_UINT16: k_elem = 2; break;
    default: k_elem = 4; break;
    }
    kept = (int64_t *)malloc((p->n_keep + 1) * sizeof(int64_t));
    xi = (int64_t *)zdt__take(pool, n * sizeof(int64_t));
    is_kept = (uint8_t *)malloc(n ? n : 1);
    escaped = (uint8_t *)malloc(n ? n : 1);
    xf = (double *)zdt__take(pool, n * sizeof(double));
    y = malloc((n ? n : 1) * k_elem);
    if (kept == NULL || xi == NULL || is_kept == NULL || escaped == NULL || xf == NULL ||
        y == NULL) {
        rc = zdt__nomem(err);
        goto done;
    }
    for (i = 0; i < p->n_keep; i++)
        kept[n_kept++] = p->keep[i];
    if (p->has_fill) {
        fill = (int64_t)p->fill;
        kept[n_kept++] = fill;
    }
    k = floor(p->abs_error < 0x1p51 ? p->abs_error : 0x1p51);
    bound = nextafter(k + 0.5, 0.0);
    for (i = 0; i < n; i++) {
        xi[i] = element(src, p->dtype, i);
        is_kept[i] = (uint8_t)in(xi[i], kept, n_kept);
        escaped[i] = (uint8_t)(in(xi[i], p->keep, p->n_keep) && !(p->has_fill && xi[i] == fill));
        if (!is_kept[i]) {
            others = 1;
            lo = xi[i] < lo ? xi[i] : lo;
            hi = xi[i] > hi ? xi[i] : hi;
        }
    }
    /* (only a kept value within k of another value can be decoded to) */
    for (i = 0; others && i < n_kept; i++)
        at_risk |= (double)kept[i] >= (double)lo - k && (double)kept[i] <= (double)hi + k;
    inner.dtype = ZDT_PREDICT_FLOAT64;
    inner.abs_error = bound;
    for (rounds = 1;; rounds++) {
        int wrong = 0;
        for (i = 0; i < n; i++)
            xf[i] = escaped[i] ? zdt__f64_of_bits((uint64_t)(xi[i] + 4294967296ll) | ESCAPE)
                               : (double)xi[i];
        rc = zdt__encode_chunk(xf, &inner, g, 0, bound, p->has_fill, (double)fill, out, NULL,
                               pool, err);
        if (rc != ZDT_PREDICT_OK || !at_risk)
            goto done;
        rc = zdt__decode_integers(&io, out->p, out->len, p, g, y, err);
        if (rc != ZDT_PREDICT_OK)
            goto done;
        for (i = 0; i < n; i++)
            if (!is_kept[i] && in(element(y, p->dtype, i), kept, n_kept)) {
                escaped[i] = 1;
                wrong = 1;
            }
        if (!wrong)
            goto done;
        if (rounds == ROUNDS) {
            size_t j;
            for (i = 0; i < n; i++)
                for (j = 0; j < n_kept && !is_kept[i]; j++)
                    if ((double)llabs(xi[i] - kept[j]) <= k)
                        escaped[i] = 1;
            at_risk = 0;
        }
    }
done:
    free(kept);
    zdt__give(pool, xi, n * sizeof(int64_t));
    free(is_kept);
    free(escaped);
    zdt__give(pool, xf, n * sizeof(double));
    free(y);
    return rc;
}
