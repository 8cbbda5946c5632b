/* Integer arrays (docs/codecs/predict.md, "Integer data types"): the chunk of the values as
   binary64 within W, the largest binary64 below k + 1/2 (k = floor(min(E, 2^51))); each
   finite value rounded to the nearest integer (ties to even) and clamped to the type's range,
   each escaped one (a quiet NaN holding w + 2^32 in its low 33 bits) the integer w. */
#include <math.h>
#include <stdlib.h>

#include "internal.h"

#define ESCAPE 0x7FF8000000000000ull
#define LOW33 0x1FFFFFFFFull

static const char *type_name(uint32_t dtype) {
    static const char *names[] = {"", "float32", "float64", "int8", "uint8", "int16", "uint16",
                                  "int32", "uint32"};
    return dtype <= ZDT_PREDICT_UINT32 ? names[dtype] : "?";
}

int zdt__decode_integers(const zdt__io *io, const uint8_t *buf, size_t len,
                         const zdt_predict_params *p,
                         const zdt__grid *g, void *out, zdt_predict_error *err) {
    const size_t n = g->count;
    double lo, hi, bound, k;
    double *y;
    size_t i;
    int rc;
    switch (p->dtype) {
    case ZDT_PREDICT_INT8: lo = -128.0; hi = 127.0; break;
    case ZDT_PREDICT_UINT8: lo = 0.0; hi = 255.0; break;
    case ZDT_PREDICT_INT16: lo = -32768.0; hi = 32767.0; break;
    case ZDT_PREDICT_UINT16: lo = 0.0; hi = 65535.0; break;
    case ZDT_PREDICT_INT32: lo = -2147483648.0; hi = 2147483647.0; break;
    default: lo = 0.0; hi = 4294967295.0; break;
    }
    k = floor(p->abs_error < 0x1p51 ? p->abs_error : 0x1p51);
    bound = nextafter(k + 0.5, 0.0);
    y = (double *)malloc((n ? n : 1) * sizeof(double));
    if (y == NULL)
        return zdt__nomem(err);
    rc = zdt__decode_floats(io, buf, len, g, 0, bound, p->has_fill, p->fill, p->reference,
                            p->reference_shape, y, err);
    for (i = 0; rc == ZDT_PREDICT_OK && i < n; i++) {
        double v = y[i], r;
        if (isfinite(v)) {
            r = rint(v);
            r = r < lo ? lo : r > hi ? hi : r;
        } else {
            uint64_t bits = zdt__bits_of_f64(v);
            r = (double)(int64_t)(bits & LOW33) - 4294967296.0;
            if ((bits & ~LOW33) != ESCAPE || r < lo || r > hi) {
                rc = zdt__corrupt(err, "raw values", "the exact value of element %zu is %g (bits "
                                  "0x%016llx), which is no %s value", i, v,
                                  (unsigned long long)bits, type_name(p->dtype));
                break;
            }
        }
        switch (p->dtype) {
        case ZDT_PREDICT_INT8: ((int8_t *)out)[i] = (int8_t)r; break;
        case ZDT_PREDICT_UINT8: ((uint8_t *)out)[i] = (uint8_t)r; break;
        case ZDT_PREDICT_INT16: ((int16_t *)out)[i] = (int16_t)r; break;
        case ZDT_PREDICT_UINT16: ((uint16_t *)out)[i] = (uint16_t)r; break;
        case ZDT_PREDICT_INT32: ((int32_t *)out)[i] = (int32_t)r; break;
        default: ((uint32_t *)out)[i] = (uint32_t)r; break;
        }
    }
    free(y);
    return rc;
}
