/* zdt_predict_decode: the parameters checked, then the chunk by its magic (docs/codecs/
   predict.md): format 2 kind 1 (relative) here, integer arrays through their float64 chunk,
   float arrays' chunks of format 1, 3 or 2 kind 2 (masked). */
#include "internal.h"

int zdt_predict_decode(const void *src, size_t src_size, const zdt_predict_params *params,
                       void *dst, size_t dst_size, zdt_predict_error *err) {
    const uint8_t *buf = (const uint8_t *)src;
    size_t count = 0, elem = 0;
    zdt__grid g;
    zdt__io io;
    int rc = zdt__check_params(params, &count, &elem, err), is_int;
    if (rc != ZDT_PREDICT_OK)
        return rc;
    if (src == NULL && src_size)
        return zdt__fail(err, ZDT_PREDICT_E_PARAM, "", "no chunk (NULL) of %zu bytes", src_size);
    if (dst_size < count * elem || (count && dst == NULL))
        return zdt__fail(err, ZDT_PREDICT_E_DST_SIZE, "",
                         "an output buffer of %zu bytes for a chunk of %zu bytes", dst_size,
                         count * elem);
    if (dst != NULL && (uintptr_t)dst % elem)
        return zdt__fail(err, ZDT_PREDICT_E_DST_SIZE, "",
                         "the output buffer is not aligned to its %zu-byte elements", elem);
    if (buf == NULL)
        buf = (const uint8_t *)"";
    zdt__grid_of(&g, params->shape, params->ndim);
    zdt__io_of(&io, params);
    is_int = params->dtype >= ZDT_PREDICT_INT8;
    if (src_size >= 4 && memcmp(buf, "ZPR2", 4) == 0 && !(src_size > 4 && buf[4] == 2)) {
        if (is_int)
            return zdt__corrupt(err, "header", "a format-2 chunk (a relative bound) in an integer "
                                "array: integer arrays take format 1 and masked chunks only");
        return zdt__decode_relative(&io, buf, src_size, &g, params->dtype == ZDT_PREDICT_FLOAT32, dst,
                                    err);
    }
    if (is_int)
        return zdt__decode_integers(&io, buf, src_size, params, &g, dst, err);
    return zdt__decode_floats(&io, buf, src_size, &g, params->dtype == ZDT_PREDICT_FLOAT32,
                              params->abs_error, params->has_fill, params->fill,
                              params->reference, params->reference_shape, dst, err);
}
