/* The library's default zstd provider: libzstd (built with ZDT_PREDICT_LIBZSTD; CMake always
   defines it). Stateless: a context for each call, as numcodecs' Zstd does, so the frames are
   the ones zdt's Python encoder writes (the same zstd version: the same bytes). */
#include "internal.h"

#ifdef ZDT_PREDICT_LIBZSTD
#include <stdio.h>
#include <zstd.h>

static int compress(void *opaque, const void *src, size_t src_size, int level, void *dst,
                    size_t dst_capacity, size_t *written) {
    ZSTD_CCtx *c = ZSTD_createCCtx();
    size_t got;
    (void)opaque;
    if (c == NULL)
        return -1;
    /* numcodecs' Zstd(level).encode: a fresh context's parameters, the level, no checksum */
    if (ZSTD_isError(ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, level)) ||
        ZSTD_isError(ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, 0))) {
        ZSTD_freeCCtx(c);
        return -1;
    }
    got = ZSTD_compress2(c, dst, dst_capacity, src, src_size);
    ZSTD_freeCCtx(c);
    if (ZSTD_isError(got))
        return -1;
    *written = got;
    return 0;
}

static int decompress(void *opaque, const void *src, size_t src_size, void *dst, size_t dst_size,
                      char *why, size_t why_size) {
    uint8_t none = 0;
    ZSTD_DCtx *d = ZSTD_createDCtx();
    size_t got;
    (void)opaque;
    if (d == NULL) {
        snprintf(why, why_size, "no memory for a zstd context");
        return -1;
    }
    got = ZSTD_decompressDCtx(d, dst_size ? dst : &none, dst_size, src, src_size);
    ZSTD_freeDCtx(d);
    if (ZSTD_isError(got)) {
        snprintf(why, why_size, "%s", ZSTD_getErrorName(got));
        return -1;
    }
    if (got != dst_size) {
        snprintf(why, why_size, "it decodes to %zu bytes", got);
        return -1;
    }
    return 0;
}

static const zdt_predict_zstd LIBZSTD = {sizeof(zdt_predict_zstd), NULL, compress, decompress};

const zdt_predict_zstd *zdt__zstd_default(void) { return &LIBZSTD; }
#else
const zdt_predict_zstd *zdt__zstd_default(void) { return NULL; }
#endif
