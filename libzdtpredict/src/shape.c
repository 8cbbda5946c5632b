/* Shapes: the caller's parameters checked, the spec's four-dimensional grid, the numcodecs
   face's buffer header (docs/codecs/predict.md, "numcodecs face"). */
#include "internal.h"

/* the most elements a byte of a numcodecs-face buffer may stand for (zstd packs at most about
   16,000 two-byte symbols in a byte, pcodec about 26,000; the encoder writes stage 0 where
   stage 3 would pack more): a corrupt shape beyond it is refused before any allocation */
#define PER_BYTE 65536u
/* internal sizes reach 2 n + 8 n_raw bytes (n_raw <= n) and 8 n for the predictor values */
#define MOST_ELEMENTS (SIZE_MAX / 16)

static size_t element_size(uint32_t dtype) {
    switch (dtype) {
    case ZDT_PREDICT_FLOAT32: case ZDT_PREDICT_INT32: case ZDT_PREDICT_UINT32: return 4;
    case ZDT_PREDICT_FLOAT64: return 8;
    case ZDT_PREDICT_INT8: case ZDT_PREDICT_UINT8: return 1;
    case ZDT_PREDICT_INT16: case ZDT_PREDICT_UINT16: return 2;
    default: return 0;
    }
}

void zdt__grid_of(zdt__grid *g, const uint64_t *shape, uint32_t ndim) {
    size_t dims[ZDT_PREDICT_MAX_DIMS];
    size_t k = 0, d, count = 1;
    for (d = 0; d < ndim; d++) {
        count *= (size_t)shape[d];
        if (shape[d] != 1)
            dims[k++] = (size_t)shape[d];
    }
    while (k > 4) {         /* the leading two merged (C order) */
        dims[0] *= dims[1];
        memmove(&dims[1], &dims[2], (k - 2) * sizeof(size_t));
        k--;
    }
    for (d = 0; d < 4; d++)
        g->n[d] = d < 4 - k ? 1 : dims[d - (4 - k)];
    g->st[3] = 1;
    for (d = 3; d > 0; d--)
        g->st[d - 1] = g->st[d] * g->n[d];
    g->count = count;
}

int zdt__check_params(const zdt_predict_params *p, size_t *count, size_t *elem,
                      zdt_predict_error *err) {
    uint64_t n = 1;
    uint32_t d;
    int zero = 0;
    if (p == NULL)
        return zdt__fail(err, ZDT_PREDICT_E_PARAM, "", "no parameters (NULL)");
    if (p->struct_size < sizeof(zdt_predict_params))
        return zdt__fail(err, ZDT_PREDICT_E_PARAM, "",
                         "params.struct_size is %u, this library's parameters take %u bytes "
                         "(initialise them with zdt_predict_params_init)",
                         (unsigned)p->struct_size, (unsigned)sizeof(zdt_predict_params));
    *elem = element_size(p->dtype);
    if (*elem == 0)
        return zdt__fail(err, ZDT_PREDICT_E_PARAM, "", "unknown data type code %u",
                         (unsigned)p->dtype);
    if (p->ndim > ZDT_PREDICT_MAX_DIMS)
        return zdt__fail(err, ZDT_PREDICT_E_PARAM, "", "%u dimensions (at most %d)",
                         (unsigned)p->ndim, ZDT_PREDICT_MAX_DIMS);
    for (d = 0; d < p->ndim; d++)
        zero |= p->shape[d] == 0;
    for (d = 0; d < p->ndim && !zero; d++) {
        if (p->shape[d] > MOST_ELEMENTS || n > MOST_ELEMENTS / p->shape[d])
            return zdt__fail(err, ZDT_PREDICT_E_PARAM, "",
                             "a chunk shape of more than %zu elements", (size_t)MOST_ELEMENTS);
        n *= p->shape[d];
    }
    *count = zero ? 0 : (size_t)n;
    if (!(p->abs_error == 0.0 || (p->abs_error > 0.0 && p->abs_error <= DBL_MAX)))
        return zdt__fail(err, ZDT_PREDICT_E_PARAM, "",
                         "abs_error must be finite and > 0 (or 0 for a codec with rel_error)");
    if (p->dtype >= ZDT_PREDICT_INT8 && p->abs_error == 0.0)
        return zdt__fail(err, ZDT_PREDICT_E_PARAM, "",
                         "integer arrays take abs_error (rel_error: not yet)");
    if (p->reference != NULL && (p->reference_shape[0] < 1 || p->reference_shape[1] < 1 ||
                                 p->reference_shape[0] > (1u << 31) / p->reference_shape[1]))
        return zdt__fail(err, ZDT_PREDICT_E_PARAM, "",
                         "a reference mask's shape is two extents >= 1, at most 2^31 bits");
    return ZDT_PREDICT_OK;
}

int zdt_predict_decoded_size(const zdt_predict_params *params, size_t *bytes,
                             zdt_predict_error *err) {
    size_t count = 0, elem = 0;
    int rc = zdt__check_params(params, &count, &elem, err);
    if (rc == ZDT_PREDICT_OK && bytes != NULL)
        *bytes = count * elem;
    return rc;
}

int zdt_predict_numcodecs_header(const void *src, size_t src_size, zdt_predict_params *params,
                                 size_t *chunk_offset, zdt_predict_error *err) {
    const uint8_t *b = (const uint8_t *)src;
    size_t ndim, start, d, size;
    uint64_t count = 1, cap;
    int zero = 0;
    if (params == NULL || chunk_offset == NULL || (src == NULL && src_size))
        return zdt__fail(err, ZDT_PREDICT_E_PARAM, "", "NULL parameters or buffer");
    if (src_size < 1)
        return zdt__corrupt(err, "shape", "an empty buffer holds no array");
    ndim = b[0];
    if (ndim > ZDT_PREDICT_MAX_DIMS)
        return zdt__corrupt(err, "shape", "the buffer claims %zu dimensions (at most %d)", ndim,
                            ZDT_PREDICT_MAX_DIMS);
    start = 1 + 8 * ndim;
    if (src_size < start + 16)
        return zdt__corrupt(err, "shape",
                            "a buffer of %zu bytes ends before its shape and the 16-byte chunk "
                            "header", src_size);
    size = b[start + 5];
    if (size != 4 && size != 8)
        return zdt__corrupt(err, "header", "the chunk holds %zu-byte elements (4 or 8)", size);
    for (d = 0; d < ndim; d++)
        zero |= zdt__le64(b + 1 + 8 * d) == 0;
    cap = src_size > UINT64_MAX / PER_BYTE ? UINT64_MAX : (uint64_t)src_size * PER_BYTE;
    for (d = 0; d < ndim && !zero; d++) {
        uint64_t e = zdt__le64(b + 1 + 8 * d);
        if (count > cap / e)
            return zdt__corrupt(err, "shape",
                                "the buffer's shape has more elements than %zu bytes can encode "
                                "(at most 65,536 a byte)", src_size);
        count *= e;
    }
    params->dtype = size == 4 ? ZDT_PREDICT_FLOAT32 : ZDT_PREDICT_FLOAT64;
    params->ndim = (uint32_t)ndim;
    for (d = 0; d < ndim; d++)
        params->shape[d] = zdt__le64(b + 1 + 8 * d);
    *chunk_offset = start;
    return ZDT_PREDICT_OK;
}
