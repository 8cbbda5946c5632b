/* A chunk of format 1 or 3 (docs/codecs/predict.md, "Chunk layout", "Level steps"), alone or
   as a masked chunk's values' chunk, and the masked chunk around it ("Masked chunks"). Every
   header field, table and length is checked before the scratch buffers are allocated and the
   traversal starts. */
#include <math.h>
#include <stdlib.h>

#include "reconstruct.h"

#define HEADER 16u
#define STEPS 16u               /* format 3: alpha, beta */
#define MASKED_HEADER 24u

static const char *magic_text(const uint8_t *b, char *text) {
    int i;
    for (i = 0; i < 4; i++)
        text[i] = (b[i] >= 0x20 && b[i] < 0x7F) ? (char)b[i] : '?';
    text[4] = '\0';
    return text;
}

/* the scratch buffers of one decode, freed together */
typedef struct {
    uint8_t *payload;
    uint16_t *sym;
    double *v;
    uint8_t *cls;
    size_t *raw_at;
    zdt__ans ans;
} scratch;

static int release(scratch *s, int rc) {
    free(s->payload);
    free(s->sym);
    free(s->v);
    free(s->cls);
    free(s->raw_at);
    zdt__ans_free(&s->ans);
    return rc;
}

int zdt__decode_values(const uint8_t *buf, size_t len, const zdt__values *vc, void *out,
                       zdt_predict_error *err) {
    const zdt__grid *g = vc->g;
    const size_t n = g->count, elem = vc->is_f32 ? 4 : 8;
    const size_t n_sym = vc->mask != NULL ? n - vc->n_masked : n;
    const char *what = vc->mask != NULL ? "values chunk" : "chunk";
    char text[5];
    int predictor, stage, rc, format3;
    uint64_t n_raw64;
    size_t n_raw, start = HEADER, raw_bytes, i;
    double alpha = 1.0, beta = 1.0;
    const uint8_t *raw = NULL;
    scratch s;
    zdt__walk w;
    memset(&s, 0, sizeof(s));
    if (len < HEADER)
        return zdt__corrupt(err, "header", "a %s of %zu bytes is shorter than its 16-byte header",
                            what, len);
    format3 = memcmp(buf, "ZPR3", 4) == 0;
    if (!format3 && memcmp(buf, "ZPR1", 4) != 0) {
        if (vc->mask != NULL)
            return zdt__corrupt(err, "header", "the masked chunk's values chunk starts with "
                                "'%s', not 'ZPR1' or 'ZPR3'", magic_text(buf, text));
        if (memcmp(buf, "ZPR", 3) == 0 && buf[3] >= '4' && buf[3] <= '9')
            return zdt__fail(err, ZDT_PREDICT_E_FORMAT_TOO_NEW, "header",
                             "the chunk is of format %c, newer than this decoder reads (formats "
                             "1 to 3): a newer zdt reads it", buf[3]);
        return zdt__corrupt(err, "header", "the chunk starts with '%s', not 'ZPR1'",
                            magic_text(buf, text));
    }
    predictor = buf[4];
    stage = zdt__le16(buf + 6);
    n_raw64 = zdt__le64(buf + 8);
    if (format3) {
        if (len < HEADER + STEPS)
            return zdt__corrupt(err, "header", "a format-3 chunk of %zu bytes is shorter than "
                                "its 32-byte header", len);
        alpha = zdt__load_f64(buf + HEADER);
        beta = zdt__load_f64(buf + HEADER + 8);
        start += STEPS;
        if (!(alpha >= 1.0 && alpha <= 1024.0 && beta >= 1.0 && beta <= 1024.0))
            return zdt__corrupt(err, "header", "the levels' steps alpha %.17g and beta %.17g are "
                                "not both within [1, 1024]", alpha, beta);
        if (predictor < 2 || predictor > 4)
            return zdt__corrupt(err, "header", "a format-3 chunk (a step for each level) with "
                                "predictor %d, which has no levels", predictor);
    }
    if (vc->abs_error == 0.0)
        return zdt__corrupt(err, "header", "a format-1 chunk (an absolute bound) in an array "
                            "whose codec has rel_error: its bound is not known");
    if (predictor < 1 || predictor > 4)
        return zdt__corrupt(err, "header", "unknown predictor %d in the chunk header", predictor);
    if (buf[5] != elem)
        return zdt__corrupt(err, "header", "the chunk holds %d-byte elements, the array %s",
                            buf[5], vc->is_f32 ? "float32" : "float64");
    if (stage > 3)
        return zdt__corrupt(err, "header", "unknown entropy stage %d in the chunk header", stage);
    if (n_raw64 > n)
        return zdt__corrupt(err, "header", "the chunk claims %llu exact values for %zu elements",
                            (unsigned long long)n_raw64, n);
    if (stage == 2 && predictor == 1)
        return zdt__corrupt(err, "header", "entropy stage 2 (by level) with predictor 1, which "
                            "has no levels");
    n_raw = (size_t)n_raw64;
    raw_bytes = n_raw * elem;
    if (stage != 0) {
        size_t end = 0;
        if (stage == 3) {
            rc = zdt__ans_read(&s.ans, buf + start, len - start, &end, err);
        } else {
            /* stages 1 and 2: the pcodec provider's symbols, decoded here (their parts are
               pcodec's to check) */
            s.sym = (uint16_t *)malloc((n ? n : 1) * sizeof(uint16_t));
            if (s.sym == NULL)
                return zdt__nomem(err);
            rc = zdt__pcodec_read(vc->io, buf + start, len - start, g, predictor, stage,
                                  vc->mask, s.sym, &end, err);
        }
        if (rc != ZDT_PREDICT_OK)
            return release(&s, rc);
        start += end;
        if (n_raw)
            rc = zdt__frame_check(buf + start, len - start, raw_bytes, "zstd frame", "", err);
        else if (len > start)
            rc = zdt__corrupt(err, "raw values", "%zu bytes after the symbols of a chunk without "
                              "exact values", len - start);
        if (rc != ZDT_PREDICT_OK)
            return release(&s, rc);
        if (n == 0 && stage != 3)
            return release(&s, ZDT_PREDICT_OK);
        if (n == 0) {
            if (s.ans.n_words || s.ans.x0 != ZDT_ANS_L || s.ans.x1 != ZDT_ANS_L)
                return release(&s, zdt__corrupt(err, "ANS stream", "the ANS stream does not end "
                                                "where it began for a chunk of no elements"));
            return release(&s, ZDT_PREDICT_OK);
        }
    } else {
        rc = zdt__frame_check(buf + start, len - start, 2 * n_sym + raw_bytes, "zstd frame", "",
                              err);
        if (rc != ZDT_PREDICT_OK)
            return rc;
        if (n == 0)
            return ZDT_PREDICT_OK;
    }

    /* every length agrees: the scratch buffers, the frame's content, the traversal */
    if (stage == 0 || n_raw) {
        size_t content = stage == 0 ? 2 * n_sym + raw_bytes : raw_bytes;
        s.payload = (uint8_t *)malloc(content ? content : 1);
        if (s.payload == NULL)
            return release(&s, zdt__nomem(err));
        rc = zdt__frame_decode(vc->io, buf + start, len - start, s.payload, content, "zstd frame", "",
                               err);
        if (rc != ZDT_PREDICT_OK)
            return release(&s, rc);
        raw = stage == 0 ? s.payload + 2 * n_sym : s.payload;
    }
    memset(&w, 0, sizeof(w));
    if (stage == 0) {
        const uint8_t *lo = s.payload, *hi = s.payload + n_sym;
        size_t j = 0;
        s.sym = (uint16_t *)malloc(n * sizeof(uint16_t));
        if (s.sym == NULL)
            return release(&s, zdt__nomem(err));
        /* (a masked chunk: the unmasked elements' symbols in flat C order, 1 for the masked) */
        for (i = 0; i < n; i++) {
            if (vc->mask != NULL && vc->mask[i]) {
                s.sym[i] = 1;
                continue;
            }
            s.sym[i] = (uint16_t)(lo[j] | (hi[j] << 8));
            j++;
        }
        w.sym = s.sym;
    } else if (stage != 3) {
        w.sym = s.sym;
    } else {
        s.cls = (uint8_t *)malloc(n);
        if (s.cls == NULL)
            return release(&s, zdt__nomem(err));
        w.cls = s.cls;
        w.mask = vc->mask;
        w.ans = &s.ans;
    }
    if (vc->is_f32) {
        s.v = (double *)malloc(n * sizeof(double));
        if (s.v == NULL)
            return release(&s, zdt__nomem(err));
        w.v = s.v;
        w.out32 = (float *)out;
        w.fill32 = (float)vc->fill;
    } else {
        w.v = (double *)out;
        s.raw_at = (size_t *)malloc((n_raw ? n_raw : 1) * sizeof(size_t));
        if (s.raw_at == NULL)
            return release(&s, zdt__nomem(err));
        w.raw_at = s.raw_at;
    }
    w.raw = raw;
    w.nraw_max = n_raw;
    w.q0 = 2.0 * vc->abs_error;
    w.isa = zdt__span_isa();
    w.alpha = alpha;
    w.beta = beta;
    zdt__set_level(&w, 1);
    rc = zdt__traverse(predictor, &w, g, vc->is_f32);
    if (stage == 3 && s.ans.err == 1)
        return release(&s, zdt__corrupt(err, "ANS stream", "the ANS stream ends before the "
                                        "chunk's %zu symbols", n_sym));
    if (stage == 3 && s.ans.err)
        return release(&s, zdt__corrupt(err, "ANS stream", "the ANS stream uses a context whose "
                                        "table is empty"));
    if (rc < 0 || w.nraw != n_raw)
        return release(&s, zdt__corrupt(err, "raw values", "the symbols use %s%zu raw values, "
                                        "the chunk holds %zu", rc < 0 ? "more than " : "",
                                        w.nraw, n_raw));
    if (stage == 3 && (s.ans.pos != s.ans.n_words || s.ans.x0 != ZDT_ANS_L ||
                       s.ans.x1 != ZDT_ANS_L))
        return release(&s, zdt__corrupt(err, "ANS stream", "the ANS stream does not end where it "
                                        "began (%llu words left, states %lu and %lu, not 65536)",
                                        (unsigned long long)(s.ans.n_words - s.ans.pos),
                                        (unsigned long)s.ans.x0, (unsigned long)s.ans.x1));
    if (vc->mask != NULL && w.nfill != vc->n_masked)
        return release(&s, zdt__corrupt(err, "symbols", "%zu unmasked elements have the "
                                        "fill-value symbol, which is the masked elements' alone",
                                        w.nfill - vc->n_masked));
    if (!vc->has_fill && w.nfill)
        return release(&s, zdt__corrupt(err, "symbols", "the chunk has fill-value symbols, and "
                                        "there is no fill value"));
    if (!vc->is_f32) {
        /* float64: the elements whose value is not their predictor value */
        double *o = (double *)out;
        if (w.nfill) {
            if (stage != 3) {
                for (i = 0; i < n; i++)
                    if (s.sym[i] == 1)
                        o[i] = vc->fill;
            } else {
                for (i = 0; i < n; i++)
                    if (s.cls[i] == 4)
                        o[i] = vc->fill;
            }
        }
        for (i = 0; i < n_raw; i++) {
            double r = zdt__load_f64(raw + 8 * i);
            if (!isfinite(r))
                o[s.raw_at[i]] = r;
        }
    }
    return release(&s, ZDT_PREDICT_OK);
}

int zdt__decode_floats(const zdt__io *io, const uint8_t *buf, size_t len, const zdt__grid *g,
                       int is_f32,
                       double abs_error, int has_fill, double fill, const uint8_t *reference,
                       const uint64_t *reference_shape, void *out, zdt_predict_error *err) {
    zdt__values vc;
    uint8_t *mask;
    uint64_t n_masked, length;
    size_t count = 0;
    int looks, rc;
    vc.g = g;
    vc.is_f32 = is_f32;
    vc.abs_error = abs_error;
    vc.has_fill = has_fill;
    vc.fill = fill;
    vc.mask = NULL;
    vc.n_masked = 0;
    vc.io = io;
    if (!(len >= 5 && memcmp(buf, "ZPR2", 4) == 0 && buf[4] == 2))
        return zdt__decode_values(buf, len, &vc, out, err);
    /* a masked chunk: its header, the mask stream, then the values' chunk */
    if (len < MASKED_HEADER)
        return zdt__corrupt(err, "header", "a masked chunk of %zu bytes is shorter than its "
                            "24-byte header", len);
    if (buf[5] != (is_f32 ? 4 : 8))
        return zdt__corrupt(err, "header", "the chunk holds %d-byte elements, the array %s",
                            buf[5], is_f32 ? "float32" : "float64");
    looks = zdt__le16(buf + 6);
    n_masked = zdt__le64(buf + 8);
    length = zdt__le64(buf + 16);
    if (looks > 1)
        return zdt__corrupt(err, "header", "the masked chunk's reference field is %d, not 0 or 1",
                            looks);
    if (looks && (reference == NULL || reference_shape[0] != g->n[2] ||
                  reference_shape[1] != g->n[3]))
        return zdt__corrupt(err, "header", "the chunk's mask looks back at a reference mask of "
                            "%zu x %zu, and the codec has %s", g->n[2], g->n[3],
                            reference == NULL ? "none" : "one of another shape");
    if (n_masked < 1 || n_masked > g->count)
        return zdt__corrupt(err, "header", "the chunk claims %llu masked elements of %zu",
                            (unsigned long long)n_masked, g->count);
    if (!has_fill)
        return zdt__corrupt(err, "mask", "a masked chunk, and there is no fill value for its "
                            "masked elements");
    if (length > len - MASKED_HEADER)
        return zdt__corrupt(err, "mask", "the mask stream's length %llu runs past the chunk's "
                            "end", (unsigned long long)length);
    mask = (uint8_t *)malloc(g->count);
    if (mask == NULL)
        return zdt__nomem(err);
    rc = zdt__mask_decode(buf + MASKED_HEADER, (size_t)length, g, looks ? reference : NULL, mask,
                          &count, "mask", err);
    if (rc == ZDT_PREDICT_OK && count != n_masked)
        rc = zdt__corrupt(err, "mask", "the mask has %zu masked elements, the header says %llu",
                          count, (unsigned long long)n_masked);
    if (rc == ZDT_PREDICT_OK) {
        vc.mask = mask;
        vc.n_masked = (size_t)n_masked;
        rc = zdt__decode_values(buf + MASKED_HEADER + length, len - MASKED_HEADER - (size_t)length,
                                &vc, out, err);
    }
    free(mask);
    return rc;
}
