/* Entropy stages 1 and 2 (docs/codecs/predict.md): the symbols in pcodec's standalone format,
   behind a u64 length; stage 2 one such part for each of the four level groups (a group
   without elements: length 0 and nothing after it). A masked chunk codes only its unmasked
   elements' symbols. pcodec itself is the caller's provider (zdt_predict_pcodec); this file
   frames and orders the symbols. */
#include <stdlib.h>

#include "encode.h"

#define GROUPS 4

static int no_provider(zdt_predict_error *err, int stage) {
    return zdt__fail(err, ZDT_PREDICT_E_UNSUPPORTED, "symbols",
                     "the chunk's symbols are coded by entropy stage %d (%s), which this "
                     "library does not decode without a pcodec provider (zdt's Python decoder "
                     "does, with the pcodec package)", stage,
                     stage == 1 ? "pcodec" : "pcodec by level");
}

/* n symbols from a length-prefixed pcodec part at buf[*at] into out[n] */
static int read_part(const zdt_predict_pcodec *pc, const uint8_t *buf, size_t len, size_t *at,
                     uint16_t *out, size_t n, zdt_predict_error *err) {
    uint64_t length;
    char why[200];
    int rc;
    if (len - *at < 8)
        return zdt__corrupt(err, "symbols", "the chunk ends inside its pcodec length");
    length = zdt__le64(buf + *at);
    if (length > len - *at - 8)
        return zdt__corrupt(err, "symbols", "the pcodec data's length %llu runs past the "
                            "chunk's end", (unsigned long long)length);
    why[0] = '\0';
    rc = pc->decompress(pc->opaque, buf + *at + 8, (size_t)length, out, n, why, sizeof(why));
    if (rc != ZDT_PREDICT_OK)
        return zdt__fail(err, rc < 0 ? rc : ZDT_PREDICT_E_CORRUPT, "symbols", "%s",
                         why[0] ? why : "the pcodec symbols do not decode");
    *at += 8 + (size_t)length;
    return ZDT_PREDICT_OK;
}

int zdt__pcodec_read(const zdt__io *io, const uint8_t *buf, size_t len, const zdt__grid *g,
                     int predictor, int stage, const uint8_t *mask, uint16_t *sym, size_t *end,
                     zdt_predict_error *err) {
    const size_t n = g->count;
    size_t at = 0, i, counts[GROUPS] = {0, 0, 0, 0};
    uint16_t *part = NULL;
    uint8_t *group = NULL;
    int rc = ZDT_PREDICT_OK, k;
    if (io->pcodec == NULL || io->pcodec->decompress == NULL)
        return no_provider(err, stage);
    part = (uint16_t *)malloc((n ? n : 1) * sizeof(uint16_t));
    if (part == NULL)
        return zdt__nomem(err);
    if (stage == 1) {
        size_t m = 0, j = 0;
        for (i = 0; i < n; i++)
            m += mask == NULL || !mask[i];
        rc = read_part(io->pcodec, buf, len, &at, part, m, err);
        for (i = 0; rc == ZDT_PREDICT_OK && i < n; i++)
            sym[i] = mask != NULL && mask[i] ? 1 : part[j++];
    } else {
        group = (uint8_t *)malloc(n ? n : 1);
        if (group == NULL) {
            free(part);
            return zdt__nomem(err);
        }
        zdt__level_groups(g, predictor, group);
        for (i = 0; i < n; i++) {
            if (mask != NULL && mask[i]) {
                sym[i] = 1;
                group[i] = GROUPS;      /* (no symbol) */
            } else {
                counts[group[i]]++;
            }
        }
        for (k = 0; k < GROUPS && rc == ZDT_PREDICT_OK; k++) {
            size_t j = 0;
            if (len - at < 8) {
                rc = zdt__corrupt(err, "symbols", "the chunk ends inside level group %d's pcodec "
                                  "length", k);
                break;
            }
            if (!counts[k]) {
                uint64_t length = zdt__le64(buf + at);
                if (length)
                    rc = zdt__corrupt(err, "symbols", "level group %d has no elements in this "
                                      "shape and %llu bytes of pcodec data", k,
                                      (unsigned long long)length);
                at += 8;
                continue;
            }
            rc = read_part(io->pcodec, buf, len, &at, part, counts[k], err);
            for (i = 0; rc == ZDT_PREDICT_OK && i < n; i++)
                if (group[i] == k)
                    sym[i] = part[j++];
        }
    }
    free(part);
    free(group);
    *end = at;
    return rc;
}

/* --- encoding -------------------------------------------------------------------------------- */

static int write_part(zdt__buf *out, const zdt_predict_pcodec *pc, const uint16_t *sym,
                      size_t n) {
    const void *codes = NULL;
    size_t size = 0;
    if (pc->compress(pc->opaque, sym, n, &codes, &size) != 0)
        return -1;
    zdt__buf_u64(out, size);
    zdt__buf_put(out, codes, size);
    return 0;
}

int zdt__pcodec_write(zdt__buf *out, const zdt__io *io, const zdt__grid *g, int predictor,
                      int stage, const uint16_t *sym, const uint8_t *mask) {
    const size_t n = g->count;
    uint16_t *part;
    uint8_t *group = NULL;
    size_t i, m = 0;
    int k, rc = 0;
    if (io->pcodec == NULL || io->pcodec->compress == NULL)
        return -1;
    part = (uint16_t *)malloc((n ? n : 1) * sizeof(uint16_t));
    if (part == NULL) {
        out->oom = 1;
        return 0;
    }
    if (stage == 1) {
        for (i = 0; i < n; i++)
            if (mask == NULL || !mask[i])
                part[m++] = sym[i];
        rc = write_part(out, io->pcodec, part, m);
    } else {
        group = (uint8_t *)malloc(n ? n : 1);
        if (group == NULL) {
            free(part);
            out->oom = 1;
            return 0;
        }
        zdt__level_groups(g, predictor, group);
        for (k = 0; k < GROUPS && rc == 0; k++) {
            m = 0;
            for (i = 0; i < n; i++)
                if (group[i] == k && (mask == NULL || !mask[i]))
                    part[m++] = sym[i];
            if (m)
                rc = write_part(out, io->pcodec, part, m);
            else
                zdt__buf_u64(out, 0);
        }
    }
    free(part);
    free(group);
    return rc;
}
