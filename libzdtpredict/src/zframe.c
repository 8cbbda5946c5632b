/* The zstd frames of a chunk (RFC 8878): stage 0's symbols and raw values, the raw values of
   stages 1 to 3, a relative chunk's bitmaps and exact values. Each is one frame that declares
   its content size and runs to the end of its part. The library reads the frame's header and
   walks its blocks itself (no zstd call), so the size is checked against what the header and
   shape call for before anything is allocated for it; the provider (zdt_predict_zstd: libzstd
   by default, zstd_libzstd.c) only compresses and decompresses. */
#include <stdio.h>

#include "encode.h"

#define ZSTD_MAGIC 0xFD2FB528u

size_t zdt_predict_zstd_bound(size_t n) {
    /* ZSTD_COMPRESSBOUND (zstd.h, 1.5): n + n / 256, plus a margin below 128 KiB */
    size_t margin = n < ((size_t)128 << 10) ? (((size_t)128 << 10) - n) >> 11 : 0;
    size_t b = n + (n >> 8);
    if (b < n || b + margin < b)
        return SIZE_MAX;
    return b + margin;
}

void zdt__io_of(zdt__io *io, const zdt_predict_params *p) {
    io->zstd = p->zstd != NULL ? p->zstd : zdt__zstd_default();
    io->pcodec = p->pcodec;
}

int zdt__frame_check(const uint8_t *buf, size_t len, size_t expected, const char *part,
                     const char *what, zdt_predict_error *err) {
    unsigned fhd, fcs_flag, single, dict_flag, checksum;
    size_t at, fcs_size, last = 0;
    uint64_t declared;
    static const size_t DICT[4] = {0, 1, 2, 4};
    if (len < 5 || zdt__le32(buf) != ZSTD_MAGIC)
        return zdt__corrupt(err, part, "%sthe payload is not a zstd frame", what);
    fhd = buf[4];
    fcs_flag = fhd >> 6;
    single = (fhd >> 5) & 1;
    checksum = (fhd >> 2) & 1;
    dict_flag = fhd & 3;
    if (fhd & 0x08)
        return zdt__corrupt(err, part, "%sthe zstd frame header sets its reserved bit", what);
    fcs_size = fcs_flag == 0 ? (single ? 1 : 0) : (size_t)1 << fcs_flag;
    if (fcs_size == 0)
        return zdt__corrupt(err, part, "%sthe zstd frame does not declare its content size",
                            what);
    at = 5 + (single ? 0 : 1) + DICT[dict_flag];
    if (len < at + fcs_size)
        return zdt__corrupt(err, part, "%sthe zstd frame header is truncated", what);
    switch (fcs_size) {
    case 1: declared = buf[at]; break;
    case 2: declared = (uint64_t)zdt__le16(buf + at) + 256; break;
    case 4: declared = zdt__le32(buf + at); break;
    default: declared = zdt__le64(buf + at); break;
    }
    if (declared != (uint64_t)expected)
        return zdt__corrupt(err, part,
                            "%sthe zstd frame declares %llu bytes of content, the header and "
                            "shape call for %zu", what, (unsigned long long)declared, expected);
    /* the blocks, to the last one, and the checksum after it */
    at += fcs_size;
    while (!last) {
        uint32_t bh;
        size_t size;
        if (len - at < 3)
            return zdt__corrupt(err, part, "%sthe zstd frame is truncated or corrupt (Src size "
                                "is incorrect)", what);
        bh = (uint32_t)buf[at] | ((uint32_t)buf[at + 1] << 8) | ((uint32_t)buf[at + 2] << 16);
        at += 3;
        last = bh & 1;
        size = (bh >> 1 & 3) == 1 ? 1 : (size_t)(bh >> 3);
        if ((bh >> 1 & 3) == 3)
            return zdt__corrupt(err, part, "%sthe zstd frame is truncated or corrupt (Corrupted "
                                "block detected)", what);
        if (size > len - at)
            return zdt__corrupt(err, part, "%sthe zstd frame is truncated or corrupt (Src size "
                                "is incorrect)", what);
        at += size;
    }
    if (checksum) {
        if (len - at < 4)
            return zdt__corrupt(err, part, "%sthe zstd frame is truncated or corrupt (Src size "
                                "is incorrect)", what);
        at += 4;
    }
    if (at != len)
        return zdt__corrupt(err, part, "%s%zu bytes after the zstd frame", what, len - at);
    return ZDT_PREDICT_OK;
}

int zdt__frame_decode(const zdt__io *io, const uint8_t *buf, size_t len, uint8_t *out,
                      size_t expected, const char *part, const char *what,
                      zdt_predict_error *err) {
    char why[160];
    int rc = zdt__frame_check(buf, len, expected, part, what, err);
    if (rc != ZDT_PREDICT_OK)
        return rc;
    if (io->zstd == NULL || io->zstd->decompress == NULL)
        return zdt__fail(err, ZDT_PREDICT_E_UNSUPPORTED, part, "%sa zstd frame, and the library "
                         "was built without libzstd and given no zstd provider", what);
    why[0] = '\0';
    if (io->zstd->decompress(io->zstd->opaque, buf, len, out, expected, why, sizeof(why)) != 0)
        return zdt__corrupt(err, part,
                            "%sthe zstd frame does not decode into the %zu bytes the header and "
                            "shape call for (%s)", what, expected, why[0] ? why : "zstd error");
    return ZDT_PREDICT_OK;
}

/* --- encoding -------------------------------------------------------------------------------- */

int zdt__zstd_append(zdt__buf *out, const zdt__io *io, const void *src, size_t len, int level) {
    size_t bound = zdt_predict_zstd_bound(len), got = 0;
    uint8_t none = 0;
    if (io->zstd == NULL || io->zstd->compress == NULL)
        return -1;
    if (zdt__buf_reserve(out, bound) < 0)
        return 0;
    if (io->zstd->compress(io->zstd->opaque, len ? src : &none, len, level, out->p + out->len,
                           bound, &got) != 0 || got > bound)
        return -1;
    out->len += got;
    return 0;
}
