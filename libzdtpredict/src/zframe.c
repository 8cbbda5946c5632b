/* The zstd frames of a chunk (RFC 8878): stage 0's symbols and raw values, the raw values of
   stages 1 to 3, a relative chunk's bitmaps and exact values. Each is one frame that declares
   its content size and runs to the end of its part; the size is checked against what the
   header and shape call for before anything is allocated for it. */
#include <zstd.h>

#include "internal.h"

int zdt__frame_check(const uint8_t *buf, size_t len, size_t expected, const char *part,
                     const char *what, zdt_predict_error *err) {
    unsigned long long declared;
    size_t frame;
    if (len < 5 || zdt__le32(buf) != 0xFD2FB528u)
        return zdt__corrupt(err, part, "%sthe payload is not a zstd frame", what);
    declared = ZSTD_getFrameContentSize(buf, len);
    if (declared == ZSTD_CONTENTSIZE_UNKNOWN)
        return zdt__corrupt(err, part, "%sthe zstd frame does not declare its content size",
                            what);
    if (declared == ZSTD_CONTENTSIZE_ERROR)
        return zdt__corrupt(err, part, "%sthe zstd frame header is corrupt or truncated", what);
    if (declared != (unsigned long long)expected)
        return zdt__corrupt(err, part,
                            "%sthe zstd frame declares %llu bytes of content, the header and "
                            "shape call for %zu", what, declared, expected);
    frame = ZSTD_findFrameCompressedSize(buf, len);
    if (ZSTD_isError(frame))
        return zdt__corrupt(err, part, "%sthe zstd frame is truncated or corrupt (%s)", what,
                            ZSTD_getErrorName(frame));
    if (frame != len)
        return zdt__corrupt(err, part, "%s%zu bytes after the zstd frame", what, len - frame);
    return ZDT_PREDICT_OK;
}

int zdt__frame_decode(const uint8_t *buf, size_t len, uint8_t *out, size_t expected,
                      const char *part, const char *what, zdt_predict_error *err) {
    size_t got;
    uint8_t none = 0;
    ZSTD_DCtx *dctx;
    int rc = zdt__frame_check(buf, len, expected, part, what, err);
    if (rc != ZDT_PREDICT_OK)
        return rc;
    dctx = ZSTD_createDCtx();
    if (dctx == NULL)
        return zdt__nomem(err);
    got = ZSTD_decompressDCtx(dctx, expected ? out : &none, expected, buf, len);
    ZSTD_freeDCtx(dctx);
    if (ZSTD_isError(got))
        return zdt__corrupt(err, part,
                            "%sthe zstd frame does not decode into the %zu bytes the header and "
                            "shape call for (%s)", what, expected, ZSTD_getErrorName(got));
    if (got != expected)
        return zdt__corrupt(err, part,
                            "%sthe zstd frame decodes to %zu bytes, the header and shape call "
                            "for %zu", what, got, expected);
    return ZDT_PREDICT_OK;
}

/* --- encoding -------------------------------------------------------------------------------- */

#include "encode.h"

int zdt__zstd_append(zdt__buf *out, void *cctx, const void *src, size_t len, int level) {
    ZSTD_CCtx *c = (ZSTD_CCtx *)cctx;
    size_t bound = ZSTD_compressBound(len), got;
    uint8_t none = 0;
    if (zdt__buf_reserve(out, bound) < 0)
        return 0;
    /* numcodecs' Zstd(level).encode: a fresh context's parameters, the level, no checksum */
    ZSTD_CCtx_reset(c, ZSTD_reset_session_and_parameters);
    if (ZSTD_isError(ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, level)) ||
        ZSTD_isError(ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, 0)))
        return -1;
    got = ZSTD_compress2(c, out->p + out->len, bound, len ? src : &none, len);
    if (ZSTD_isError(got))
        return -1;
    out->len += got;
    return 0;
}
