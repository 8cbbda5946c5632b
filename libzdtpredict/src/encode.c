/* zdt_predict_encode: a float chunk under an absolute bound (zdt.codecs.predict's
   PredictConfig.encode_floats and _encode_values), writing the bytes zdt's Python encoder
   writes: the predictors `auto` keeps (choose_predictors: four sample blocks, then the whole
   chunk), format 3's trials (level_variants), the masked chunk's formats (mask_formats), the
   entropy stages (_stages), each candidate packed (_pack) and the smallest kept, the first of
   equals, in the Python encoder's order. */
#include <math.h>

#include "encode.h"

#define HEADER 16u
#define MASKED_HEADER 24u
#define SAMPLE_FROM 65536u
#define SAMPLE_BLOCKS 4
#define EARLY_SLACK 1.3
#define SAMPLE_SLACK 1.0
#define ESTIMATE_SLACK 1.1
/* effort "default": stage 3's own estimate on the samples and the whole chunk (the order-0
   estimate misjudged predictors whose gain lies in the contexts), a wider net on the samples,
   and a wider one still where the samples cost few bits an element (there, edges and rare
   codes rank the predictors more than the chunk's structure does) */
#define DEFAULT_SAMPLE_SLACK 1.1
#define FEW_BITS 0.3
#define FEW_BITS_SLACK 1.5
#define DEFAULT_ESTIMATE_SLACK 1.02
/* raw bytes beyond which the estimate packs them */
#define RAW_PACKED 256u
/* the whole chunk's bits an element over its samples' beyond which they did not stand for it */
#define SURPRISE 1.5
#define LEVEL_ZEROS 0.9
#define WIDE_SHARE 0.25
#define ZSTD_ORDER0 0.95
#define FEW_MASKED 64
#define CLUSTERED 0.25
#define SCATTERED 0.75
#define SMALL_CHUNK 4096u
/* the share of code 0 in Lorenzo's sample blocks from which its whole prediction takes code
   0's branch (zdt__predict's zeros_likely; on a 1000 x 1000 chunk: 0.55x the time at 0.94,
   0.82x at 0.64, 1.05-1.15x at 0.57-0.61) */
#define ZERO_BRANCH_SHARE 0.7

static const double STEPS_TRIED[2][2] = {{1.125, 1.5}, {1.25, 2.0}};

/* one encode's configuration and scratch */
typedef struct {
    const zdt__grid *g;
    const void *x;
    int is_f32;
    size_t elem, n;
    double abs_error;
    int predictor, entropy, level, effort;
    int has_fill;
    double fill64;
    float fill32;
    zdt__io io;
    int oom, zerr, perr;
    int steps_decided;          /* effort "fast": format 3's steps chosen on the samples */
    zdt__spare spare;           /* the predictions' arrays, for the next prediction */
    double lorenzo_zeros;       /* the share of code 0 in Lorenzo's sample blocks (0: none) */
} enc_t;

/* the order a form packs with stage 3: the prediction's, or a masked chunk's (no symbol 1) */
typedef struct {
    const uint16_t *osym;
    const uint8_t *octx;
    size_t nord;
    const int64_t *counts;
} order_t;

static void pack(enc_t *e, const zdt__pred *p, const order_t *o, int stage, const uint8_t *mask,
                 const zdt__buf *raw_frame, zdt__buf *out);
static size_t count_zeros(const uint16_t *sym, size_t n);
static void raw_bytes(const enc_t *e, const zdt__pred *p, zdt__buf *out);

static int record_of(const enc_t *e) { return e->entropy == -1 || e->entropy == 3; }  /* auto, ans */

static int predict(enc_t *e, zdt__pred *p, const void *x, const zdt__grid *g, int predictor,
                   double alpha, double beta, int record) {
    int rc = zdt__predict(p, x, g, e->is_f32, e->abs_error, predictor, alpha, beta, e->has_fill,
                          e->fill64, e->fill32, record, e->lorenzo_zeros >= ZERO_BRANCH_SHARE,
                          &e->spare);
    if (rc != ZDT_PREDICT_OK)
        e->oom = 1;
    return rc;
}

/* order0_bits(symbols, raw): the symbols' order-0 entropy, the raw values' bits, plus 1 */
static double estimate(enc_t *e, const zdt__pred *p) {
    return zdt__order0_bits(p->sym, p->n, &e->oom) + 8.0 * (double)(p->nraw * e->elem) + 1.0;
}

/* the raw values' bits: their bytes, or where they are many their zstd frame's (values
   stored raw are often few distinct ones, such as whole numbers finer than the bound) */
static double raw_bits(enc_t *e, const zdt__pred *p) {
    double bits = 8.0 * (double)(p->nraw * e->elem);
    if (p->nraw * e->elem > RAW_PACKED) {
        zdt__buf rawb, frame;
        memset(&rawb, 0, sizeof(rawb));
        memset(&frame, 0, sizeof(frame));
        raw_bytes(e, p, &rawb);
        if (!rawb.oom && zdt__zstd_append(&frame, &e->io, rawb.p, rawb.len, e->level) == 0 &&
            !frame.oom)
            bits = 8.0 * (double)frame.len;
        zdt__buf_free(&rawb);
        zdt__buf_free(&frame);
    }
    return bits;
}

/* the bits stage 3 would take (its model's estimate) plus the raw bytes, where the prediction
   recorded stage 3's order; else the order-0 estimate. With a fill value, the fill symbols'
   token is left out: the masked chunk, tried too, codes none of them. */
static double estimate3(enc_t *e, const zdt__pred *p) {
    int64_t counts[60 * 64];
    int f;
    if (p->counts == NULL)
        return estimate(e, p);
    memcpy(counts, p->counts, sizeof(counts));
    if (e->has_fill)
        for (f = 0; f < 60; f++)
            counts[f * 64 + 1] = 0;
    return zdt__ans_bits(counts) + raw_bits(e, p) + 1.0;
}

/* whether more than WIDE_SHARE of an order's nord codes (their counts) are wide: with entropy
   auto, zstd is then packed beside stage 3 (where zstd_worth) */
static int wide_codes(const int64_t *counts, size_t nord) {
    int64_t wide = 0;
    int f, tok;
    for (f = 0; f < 60; f++)
        for (tok = 16; tok < 64; tok++)
            wide += counts[f * 64 + tok];
    return (double)wide > WIDE_SHARE * (double)nord;
}

/* whether the entropy stages packed include zstd for the plain chunk (effort "default" and
   "max": zstd_worth is then always true) */
static int zstd_tried(const enc_t *e, const zdt__pred *p) {
    return e->entropy == -1 && p->counts != NULL && wide_codes(p->counts, p->nord);
}

/* effort "default": a sample's bits, stage 3's estimate, or where zstd is packed as well the
   smaller of that and zstd's bytes for the sample (zstd finds repeated stretches of codes,
   which no estimate from counts sees) */
static double sample_bits(enc_t *e, const zdt__pred *p) {
    double bits = estimate3(e, p);
    if (zstd_tried(e, p)) {
        zdt__buf b;
        memset(&b, 0, sizeof(b));
        pack(e, p, NULL, 0, NULL, NULL, &b);
        if (!b.oom && !e->zerr && 8.0 * (double)b.len < bits)
            bits = 8.0 * (double)b.len;
        zdt__buf_free(&b);
    }
    return bits;
}

/* `within`: keep[k] where cost[k] <= least * slack (k < count, among those kept already) */
static void within(const double *cost, int *keep, int count, double slack) {
    double least = INFINITY;
    int k;
    for (k = 0; k < count; k++)
        if (keep[k] && cost[k] < least)
            least = cost[k];
    for (k = 0; k < count; k++)
        if (keep[k] && !(cost[k] <= least * slack))
            keep[k] = 0;
}

/* sample_blocks' block k: its grid and elements (a contiguous copy) */
static int sample_block(const enc_t *e, int k, zdt__grid *bg, void **data) {
    const zdt__grid *g = e->g;
    size_t start[4], side[4], dims = 0, d, i0, i1, i2, count = 1, at = 0;
    int r = 0;
    double share, scale, least;
    uint8_t *out;
    const uint8_t *x = (const uint8_t *)e->x;
    for (d = 0; d < 4; d++)
        dims += g->n[d] > 1;
    least = 16384.0 / (double)g->count;
    share = (0.0625 > least ? 0.0625 : least) / 4.0;
    scale = pow(share, 1.0 / (double)(dims > 1 ? dims : 1));
    for (d = 0; d < 4; d++) {
        start[d] = 0;
        side[d] = g->n[d];
        if (g->n[d] > 1) {
            double at_ = (double)(2 * ((k + r) % SAMPLE_BLOCKS) + 1) / (double)(2 * SAMPLE_BLOCKS);
            double want = rint((double)g->n[d] * scale);
            size_t s = want < 8.0 ? 8 : (size_t)want;
            side[d] = s < g->n[d] ? s : g->n[d];
            start[d] = (size_t)((double)(g->n[d] - side[d]) * at_);
            r++;
        }
        count *= side[d];
    }
    out = (uint8_t *)malloc(count * e->elem);
    if (out == NULL)
        return -1;
    for (i0 = 0; i0 < side[0]; i0++)
        for (i1 = 0; i1 < side[1]; i1++)
            for (i2 = 0; i2 < side[2]; i2++) {
                size_t from = (start[0] + i0) * g->st[0] + (start[1] + i1) * g->st[1] +
                              (start[2] + i2) * g->st[2] + start[3];
                memcpy(out + at * e->elem, x + from * e->elem, side[3] * e->elem);
                at += side[3];
            }
    for (d = 0; d < 4; d++)
        bg->n[d] = side[d];
    bg->st[3] = 1;
    for (d = 3; d > 0; d--)
        bg->st[d - 1] = bg->st[d] * bg->n[d];
    bg->count = count;
    *data = out;
    return 0;
}

/* the whole-chunk predictions of names[k] where want[k] and not yet made (done[k]), appended
   to preds from *made; 0, or -1 (every prediction freed) */
static int predict_whole(enc_t *e, const int *names, const int *want, int *done, int count,
                         const int *steps, zdt__pred *preds, int *made) {
    int k;
    for (k = 0; k < count; k++) {
        const int t = steps ? steps[k] : 0;
        if (!want[k] || done[k])
            continue;
        if (predict(e, &preds[*made], e->x, e->g, names[k], t ? STEPS_TRIED[t - 1][0] : 1.0,
                    t ? STEPS_TRIED[t - 1][1] : 1.0, record_of(e)) !=
            ZDT_PREDICT_OK) {
            while (*made > 0)
                zdt__pred_free(&preds[--*made], &e->spare);
            return -1;
        }
        done[k] = 1;
        (*made)++;
    }
    return 0;
}

/* effort "fast": which of format 3's steps each kept predictor with levels is predicted whole
   with (steps[k]: 0, none; t, STEPS_TRIED[t - 1]), decided on the sample blocks by their
   order-0 estimates, so that the chunk is predicted whole once; plain[k][b]: block b's
   estimate without steps where the choice of predictors made it, else negative */
static int fast_steps(enc_t *e, const int *names, const int *keep, int count,
                      double plain[][SAMPLE_BLOCKS], int *steps) {
    int k, b, t;
    for (k = 0; k < count; k++) {
        double cost[3] = {0.0, 0.0, 0.0};
        steps[k] = 0;
        if (!keep[k] || names[k] == 1)
            continue;
        for (b = 0; b < SAMPLE_BLOCKS; b++) {
            zdt__grid bg;
            void *block = NULL;
            if (sample_block(e, b, &bg, &block) < 0) {
                e->oom = 1;
                return -1;
            }
            for (t = 0; t < 3; t++) {
                zdt__pred p;
                if (t == 0 && plain[k][b] >= 0.0) {
                    cost[0] += plain[k][b];
                    continue;
                }
                if (predict(e, &p, block, &bg, names[k], t ? STEPS_TRIED[t - 1][0] : 1.0,
                            t ? STEPS_TRIED[t - 1][1] : 1.0, 0) != ZDT_PREDICT_OK) {
                    free(block);
                    return -1;
                }
                cost[t] += estimate(e, &p);
                zdt__pred_free(&p, &e->spare);
            }
            free(block);
        }
        for (t = 1; t < 3; t++)
            if (cost[t] < cost[steps[k]])
                steps[k] = t;
    }
    return 0;
}

/* choose_predictors: the predictions `auto` (or the one predictor named) packs, in order;
   returns how many (preds[0 .. 4)). Effort "fast": four sample blocks and order-0 estimates.
   "default": the same blocks with stage 3's estimate (where stage 3 is written), raw values
   and zstd's gains estimated by packing them, the predictors near the least in total or in
   any one block predicted whole, and every predictor predicted whole where the best of
   those costs well above what its samples promised (the samples did not stand for the
   chunk); packs those within 2% of the least estimate, and those zstd packs too. "max":
   every predictor whole, every one packed. */
static int choose_predictors(enc_t *e, zdt__pred *preds) {
    int names[4], keep[4], done[4], somewhere[4], steps[4] = {0, 0, 0, 0}, count = 0, k, b;
    int made = 0, real = 0, d, sampled = 0;
    double plain[4][SAMPLE_BLOCKS];
    size_t zeros = 0, lorenzo_seen = 0;
    const int fast = e->effort == ZDT_PREDICT_EFFORT_FAST;
    const int most = e->effort == ZDT_PREDICT_EFFORT_MAX;
    const int rec = record_of(e);
    double cost[4], seen[4], whole[4];
    e->steps_decided = 0;
    if (e->predictor != 0) {
        names[count++] = e->predictor;
    } else {
        for (d = 0; d < 4; d++)
            real += e->g->n[d] > 1;
        if (e->entropy != 2)        /* (stage 2 only with the predictors that have levels) */
            names[count++] = 1;
        names[count++] = 2;
        if (real >= 2) {
            names[count++] = 3;
            names[count++] = 4;
        }
    }
    for (k = 0; k < count; k++) {
        keep[k] = 1;
        done[k] = somewhere[k] = 0;
        cost[k] = seen[k] = 0.0;
        for (b = 0; b < SAMPLE_BLOCKS; b++)
            plain[k][b] = -1.0;
    }
    if (count > 1 && e->n >= SAMPLE_FROM && !most) {
        sampled = 1;
        for (b = 0; b < SAMPLE_BLOCKS; b++) {
            zdt__grid bg;
            void *block = NULL;
            int left = 0;
            double here[4], least_here = INFINITY;
            if (sample_block(e, b, &bg, &block) < 0) {
                e->oom = 1;
                return 0;
            }
            for (k = 0; k < count; k++) {
                zdt__pred p;
                if (!keep[k])
                    continue;
                if (predict(e, &p, block, &bg, names[k], 1.0, 1.0, fast ? 0 : rec) !=
                    ZDT_PREDICT_OK) {
                    free(block);
                    return 0;
                }
                if (names[k] == 1) {
                    zeros += count_zeros(p.sym, p.n);
                    lorenzo_seen += p.n;
                }
                here[k] = fast ? estimate(e, &p) : sample_bits(e, &p);
                if (fast)
                    plain[k][b] = here[k];
                cost[k] += here[k];
                if (here[k] < least_here)
                    least_here = here[k];
                seen[k] += (double)bg.count;
                zdt__pred_free(&p, &e->spare);
            }
            free(block);
            /* (effort "default": a predictor near the best in any one block is kept, the
               chunk's parts may favour different ones; every block sees every predictor) */
            if (!fast) {
                for (k = 0; k < count; k++)
                    if (keep[k] && here[k] <= least_here * DEFAULT_SAMPLE_SLACK)
                        somewhere[k] = 1;
                continue;
            }
            if (b == 0) {
                within(cost, keep, count, EARLY_SLACK);
                for (k = 0; k < count; k++)
                    left += keep[k];
                if (left == 1)
                    break;
            }
        }
        if (fast) {
            within(cost, keep, count, SAMPLE_SLACK);
        } else {
            double few = INFINITY;
            for (k = 0; k < count; k++)
                if (keep[k] && cost[k] / seen[k] < few)
                    few = cost[k] / seen[k];
            within(cost, keep, count, few < FEW_BITS ? FEW_BITS_SLACK : DEFAULT_SAMPLE_SLACK);
            for (k = 0; k < count; k++)
                keep[k] |= somewhere[k];
        }
    }
    if (lorenzo_seen > 0)
        e->lorenzo_zeros = (double)zeros / (double)lorenzo_seen;
    /* (effort "fast" with one predictor named: format 3's step chosen on the samples too,
       the chunk predicted whole once) */
    if (fast && count == 1 && e->n >= SAMPLE_FROM)
        sampled = 1;
    if (fast && sampled) {
        if (fast_steps(e, names, keep, count, plain, steps) < 0)
            return 0;
        e->steps_decided = 1;
    }
    if (predict_whole(e, names, keep, done, count, fast && sampled ? steps : NULL, preds, &made) < 0)
        return 0;
    if (!fast && !most && sampled && rec) {
        /* (the samples' bits per element against the whole chunk's, for the one they chose:
           far more in the whole chunk, and the others are predicted whole as well) */
        double least = INFINITY, promised = 0.0;
        int j = 0;
        for (k = 0; k < count; k++)
            if (done[k]) {
                whole[k] = estimate3(e, &preds[j++]);
                if (whole[k] < least) {
                    least = whole[k];
                    promised = cost[k] / seen[k];
                }
            }
        if (least / (double)e->n > SURPRISE * promised) {
            int all[4] = {1, 1, 1, 1};
            if (predict_whole(e, names, all, done, count, NULL, preds, &made) < 0)
                return 0;
        }
    }
    /* (effort "default" packs each prediction of a chunk too small to sample: cheap, and
       estimates of few symbols rank them poorly) */
    if (made > 1 && !most && (fast || sampled)) {
        int kept[4], j = 0;
        for (k = 0; k < made; k++) {
            cost[k] = fast ? estimate(e, &preds[k]) : estimate3(e, &preds[k]);
            kept[k] = 1;
        }
        within(cost, kept, made, fast ? ESTIMATE_SLACK : DEFAULT_ESTIMATE_SLACK);
        /* (effort "default": a prediction that zstd packs as well is packed, its size beyond
           stage 3's estimate: repeated stretches of codes pack far smaller) */
        if (!fast)
            for (k = 0; k < made; k++)
                kept[k] |= zstd_tried(e, &preds[k]);
        for (k = 0; k < made; k++) {
            if (kept[k])
                preds[j++] = preds[k];
            else
                zdt__pred_free(&preds[k], &e->spare);
        }
        made = j;
    }
    return made;
}

/* how many of sym[0 .. n) are k (counts of 16 bits over blocks of 2^16 - 1: the loop
   vectorises 8 symbols wide) */
static size_t count_of(const uint16_t *sym, size_t n, uint16_t k) {
    size_t i = 0, count = 0;
    while (i < n) {
        const size_t end = n - i > 65535 ? i + 65535 : n;
        uint16_t c = 0;
        for (; i < end; i++)
            c = (uint16_t)(c + (sym[i] == k));
        count += c;
    }
    return count;
}

/* how many of sym[0 .. n) are not 1 (the fill value's) */
static size_t count_not1(const uint16_t *sym, size_t n) { return n - count_of(sym, n, 1); }

/* how many of sym[0 .. n) are 2 (code 0) */
static size_t count_zeros(const uint16_t *sym, size_t n) { return count_of(sym, n, 2); }

/* level_variants: format 3 is tried where at least 90% of the coded symbols are code 0 */
static int level_worth(const zdt__pred *p) {
    size_t coded, zeros;
    if (p->predictor == 1)
        return 0;
    coded = count_not1(p->sym, p->n);
    zeros = count_zeros(p->sym, p->n);
    return coded && !((double)zeros < LEVEL_ZEROS * (double)coded);
}

/* the raw values, little-endian */
static void raw_bytes(const enc_t *e, const zdt__pred *p, zdt__buf *out) {
    size_t i;
    if (zdt__buf_reserve(out, p->nraw * e->elem) < 0)
        return;
    if (e->is_f32) {
        const float *r = (const float *)p->raw;
        for (i = 0; i < p->nraw; i++) {
            uint32_t b;
            memcpy(&b, &r[i], 4);
            zdt__st32(out->p + out->len + 4 * i, b);
        }
    } else {
        const double *r = (const double *)p->raw;
        for (i = 0; i < p->nraw; i++)
            zdt__st64(out->p + out->len + 8 * i, zdt__bits_of_f64(r[i]));
    }
    out->len += p->nraw * e->elem;
}

static void header(const enc_t *e, const zdt__pred *p, int stage, zdt__buf *out) {
    int steps = p->alpha != 1.0 || p->beta != 1.0;
    zdt__buf_put(out, steps ? "ZPR3" : "ZPR1", 4);
    zdt__buf_u8(out, (unsigned)p->predictor);
    zdt__buf_u8(out, (unsigned)e->elem);
    zdt__buf_u16(out, (unsigned)stage);
    zdt__buf_u64(out, p->nraw);
    if (steps) {
        zdt__buf_f64(out, p->alpha);
        zdt__buf_f64(out, p->beta);
    }
}

/* whether zstd is packed for prediction p with wide codes: always, but with effort "fast" on
   a chunk it samples, only where the symbols' order-0 bits are below ZSTD_ORDER0 of stage 3's
   estimate (zstd beat stage 3 where the codes fall on a grid coarser than the bound, data
   quantized at its source: their order-0 entropy then lies well below stage 3's tokens and
   extra bits; on noise it wrote 1-12% more, a fifth of the encode) */
static int zstd_worth(enc_t *e, const zdt__pred *p) {
    if (e->effort != ZDT_PREDICT_EFFORT_FAST || e->n < SAMPLE_FROM)
        return 1;
    return estimate(e, p) < ZSTD_ORDER0 * estimate3(e, p);
}

/* _pack: a format-1 (format-3) chunk of prediction p by `stage`; with mask, a masked chunk's
   values' chunk (the masked elements' symbols left out); raw_frame: the raw values' frame */
static void pack(enc_t *e, const zdt__pred *p, const order_t *o, int stage, const uint8_t *mask,
                 const zdt__buf *raw_frame, zdt__buf *out) {
    header(e, p, stage, out);
    if (stage == 3) {
        zdt__ans_pack(out, o->osym, o->octx, o->nord, o->counts);
        zdt__buf_put(out, raw_frame->p, raw_frame->len);
    } else if (stage == 1 || stage == 2) {
        /* the symbols by the pcodec provider (stage 2: each level group apart), then the raw
           values' frame */
        if (zdt__pcodec_write(out, &e->io, e->g, p->predictor, stage, p->sym, mask) < 0)
            e->perr = 1;
        zdt__buf_put(out, raw_frame->p, raw_frame->len);
    } else {
        zdt__buf content;
        size_t i, m = 0, n = p->n;
        memset(&content, 0, sizeof(content));
        if (zdt__buf_reserve(&content, 2 * n + p->nraw * e->elem) < 0) {
            e->oom = 1;
            return;
        }
        for (i = 0; i < n; i++)
            if (mask == NULL || !mask[i])
                content.p[m++] = (uint8_t)(p->sym[i] & 0xFF);
        for (i = 0; i < n; i++)
            if (mask == NULL || !mask[i])
                content.p[m++] = (uint8_t)(p->sym[i] >> 8);
        content.len = m;
        raw_bytes(e, p, &content);
        if (zdt__zstd_append(out, &e->io, content.p, content.len, e->level) < 0)
            e->zerr = 1;
        zdt__buf_free(&content);
    }
    if (out->oom)
        e->oom = 1;
}

typedef struct {
    zdt__buf bytes;
    int set;
    double *values;             /* the kept prediction's predictor values (when asked) */
} best_t;

static void offer(best_t *best, zdt__buf *cand, zdt__pred *p, int want_values, enc_t *e) {
    zdt__buf t;
    if (best->set && !(cand->len < best->bytes.len))
        return;
    t = best->bytes;
    best->bytes = *cand;
    *cand = t;
    cand->len = 0;
    best->set = 1;
    if (want_values) {
        if (p->v != NULL) {
            /* (the prediction's own values taken, not copied: no fresh pages for them) */
            free(best->values);
            best->values = p->v;
            p->given = p->v;
            p->v = NULL;
        } else if (best->values != p->given) {
            /* (taken by the other form's candidate: a copy) */
            if (best->values == NULL)
                best->values = (double *)malloc((p->n ? p->n : 1) * sizeof(double));
            if (best->values == NULL)
                e->oom = 1;
            else
                memcpy(best->values, p->given, p->n * sizeof(double));
        }
    }
}

/* one prediction (a predictor, or its format-3 variant) packed in each form and stage */
static void pack_forms(enc_t *e, zdt__pred *p, const uint8_t *mask, const zdt__buf *head,
                       const int *forms, int n_forms, best_t *best, int want_values) {
    zdt__buf raw_frame, cand, rawb;
    int64_t *masked_counts = NULL;
    uint16_t *msym = NULL;
    uint8_t *mctx = NULL;
    int f, zstd_ok = -1;        /* zstd_worth(e, p), once a form has wide codes */
    memset(&raw_frame, 0, sizeof(raw_frame));
    memset(&cand, 0, sizeof(cand));
    memset(&rawb, 0, sizeof(rawb));
    if (p->nraw) {
        raw_bytes(e, p, &rawb);
        if (zdt__zstd_append(&raw_frame, &e->io, rawb.p, rawb.len, e->level) < 0)
            e->zerr = 1;
        zdt__buf_free(&rawb);
        if (rawb.oom || raw_frame.oom)
            e->oom = 1;
    }
    for (f = 0; f < n_forms && !e->oom && !e->zerr && !e->perr; f++) {
        int masked = forms[f] == 1, stages[2], n_stages, s;
        order_t o;
        o.osym = p->osym;
        o.octx = p->octx;
        o.nord = p->nord;
        o.counts = p->counts;
        if (masked && p->osym != NULL) {
            /* (without_masked: the order without the fill-value symbols, token 1) */
            size_t j, m = 0;
            if (msym == NULL) {
                msym = (uint16_t *)malloc((p->nord ? p->nord : 1) * sizeof(uint16_t));
                mctx = (uint8_t *)malloc(p->nord ? p->nord : 1);
                masked_counts = (int64_t *)malloc(60 * 64 * sizeof(int64_t));
                if (msym == NULL || mctx == NULL || masked_counts == NULL) {
                    e->oom = 1;
                    break;
                }
                for (j = 0; j < p->nord; j++) {
                    /* (branch-free: written always, kept unless symbol 1) */
                    msym[m] = p->osym[j];
                    mctx[m] = p->octx[j];
                    m += p->osym[j] != 1;
                }
                /* (the order's counts but token 1's: symbol 1 is token 1 alone) */
                memcpy(masked_counts, p->counts, 60 * 64 * sizeof(int64_t));
                for (j = 0; j < 60; j++)
                    masked_counts[j * 64 + 1] = 0;
            } else {
                m = count_not1(p->osym, p->nord);
            }
            o.osym = msym;
            o.octx = mctx;
            o.nord = m;
            o.counts = masked_counts;
        }
        /* (the stages: the one named; with entropy auto, stage 3, and zstd too where wide) */
        n_stages = 1;
        stages[0] = e->entropy;
        if (o.counts != NULL && e->entropy == -1) {
            stages[0] = 3;
            if (wide_codes(o.counts, o.nord)) {
                if (zstd_ok < 0)
                    zstd_ok = zstd_worth(e, p);
                if (zstd_ok)
                    stages[n_stages++] = 0;
            }
        }
        for (s = 0; s < n_stages; s++) {
            cand.len = 0;
            if (masked)
                zdt__buf_put(&cand, head->p, head->len);
            pack(e, p, &o, stages[s], masked ? mask : NULL, &raw_frame, &cand);
            if (cand.oom)
                e->oom = 1;
            if (e->oom || e->zerr || e->perr)
                break;
            offer(&best[forms[f]], &cand, p, want_values, e);
        }
    }
    zdt__buf_free(&raw_frame);
    zdt__buf_free(&cand);
    free(msym);
    free(mctx);
    free(masked_counts);
}

/* effort "default", a chunk large enough to sample: format 3's trials of a prediction p with
   levels, each predicted whole; p and the trials packed where stage 3's estimate is within
   DEFAULT_ESTIMATE_SLACK of the least of the three, or where zstd is packed too (as
   choose_predictors keeps whole predictions); p freed */
static void trials_estimated(enc_t *e, zdt__pred *p, const uint8_t *mask, const zdt__buf *head,
                             const int *forms, int n_forms, best_t *best, int want) {
    zdt__pred v[3];
    double est[3], least;
    int count = 1, t, i;
    v[0] = *p;
    est[0] = estimate3(e, &v[0]);
    for (t = 0; t < 2 && !e->oom; t++) {
        if (predict(e, &v[count], e->x, e->g, p->predictor, STEPS_TRIED[t][0],
                    STEPS_TRIED[t][1], record_of(e)) != ZDT_PREDICT_OK)
            break;
        est[count] = estimate3(e, &v[count]);
        count++;
    }
    least = est[0];
    for (i = 1; i < count; i++)
        if (est[i] < least)
            least = est[i];
    for (i = 0; i < count; i++) {
        if (!e->oom && !e->zerr && !e->perr &&
            (est[i] <= least * DEFAULT_ESTIMATE_SLACK || zstd_tried(e, &v[i])))
            pack_forms(e, &v[i], mask, head, forms, n_forms, best, want);
        zdt__pred_free(&v[i], &e->spare);
    }
}

/* mask_formats: which forms (1 masked, 0 plain) are packed, in the Python encoder's order */
static int mask_formats(size_t stream_bytes, size_t n_masked, size_t n, int *forms) {
    double p = (double)n_masked / (double)n, iid, share;
    if (p >= 1.0) {
        forms[0] = 1;
        return 1;
    }
    forms[0] = 1;
    forms[1] = 0;
    if (n < SMALL_CHUNK)
        return 2;
    iid = (double)n * -(p * log2(p) + (1 - p) * log2(1 - p));
    share = (double)(8 * ((int64_t)stream_bytes - 12)) / iid;
    if (share >= SCATTERED && 2 * n_masked <= n) {
        forms[0] = 0;
        return 1;
    }
    if (share < CLUSTERED && FEW_MASKED * n_masked >= n)
        return 1;
    return 2;
}

/* encode_floats: the chunk of the flat float chunk e->x into out; values (optional): the kept
   prediction's predictor values (float64[n], owned by the caller after) */
static int encode_floats(enc_t *e, const uint8_t *reference, zdt__buf *out, double **values,
                         zdt_predict_error *err) {
    const size_t n = e->n;
    uint8_t *mask = NULL;
    size_t n_masked = 0, i;
    zdt__buf head;
    zdt__pred preds[4];
    best_t best[2];
    int forms[2] = {0, 0}, n_forms = 1, made, k, rc = ZDT_PREDICT_OK, want = values != NULL;
    memset(&head, 0, sizeof(head));
    memset(best, 0, sizeof(best));
    if (e->has_fill && n) {
        mask = (uint8_t *)malloc(n);
        if (mask == NULL)
            return zdt__nomem(err);
        if (e->is_f32) {
            const uint32_t *b = (const uint32_t *)e->x;
            uint32_t f;
            memcpy(&f, &e->fill32, 4);
            for (i = 0; i < n; i++)
                n_masked += mask[i] = b[i] == f;
        } else {
            const uint64_t *b = (const uint64_t *)e->x;
            uint64_t f = zdt__bits_of_f64(e->fill64);
            for (i = 0; i < n; i++)
                n_masked += mask[i] = b[i] == f;
        }
        if (!n_masked) {
            free(mask);
            mask = NULL;
        }
    }
    if (mask != NULL) {
        zdt__buf stream, back;
        int looks = 0;
        memset(&stream, 0, sizeof(stream));
        memset(&back, 0, sizeof(back));
        zdt__mask_encode(&stream, mask, e->g, NULL);
        if (reference != NULL) {
            zdt__mask_encode(&back, mask, e->g, reference);
            if (back.len < stream.len) {
                zdt__buf t = stream;
                stream = back;
                back = t;
                looks = 1;
            }
        }
        n_forms = mask_formats(stream.len, n_masked, n, forms);
        zdt__buf_put(&head, "ZPR2", 4);
        zdt__buf_u8(&head, 2);
        zdt__buf_u8(&head, (unsigned)e->elem);
        zdt__buf_u16(&head, (unsigned)looks);
        zdt__buf_u64(&head, n_masked);
        zdt__buf_u64(&head, stream.len);
        zdt__buf_put(&head, stream.p, stream.len);
        if (stream.oom || back.oom || head.oom)
            e->oom = 1;
        zdt__buf_free(&stream);
        zdt__buf_free(&back);
    }
    made = e->oom ? 0 : choose_predictors(e, preds);
    for (k = 0; k < made; k++) {
        /* format 3's trials (effort "max": wherever the predictor has levels); the default's,
           on a chunk it samples, packed where stage 3 ranks them near (trials_estimated) */
        const int trials = !e->steps_decided && (e->effort == ZDT_PREDICT_EFFORT_MAX
                                                     ? preds[k].predictor != 1
                                                     : level_worth(&preds[k]));
        int t;
        if (trials && e->effort == ZDT_PREDICT_EFFORT_DEFAULT && record_of(e) &&
            e->n >= SAMPLE_FROM && !e->oom && !e->zerr && !e->perr) {
            trials_estimated(e, &preds[k], mask, &head, forms, n_forms, best, want);
            continue;
        }
        if (!e->oom && !e->zerr && !e->perr)
            pack_forms(e, &preds[k], mask, &head, forms, n_forms, best, want);
        /* (its values are a kept candidate's or no longer needed: not held through the
           format-3 trials) */
        zdt__spare_give(&e->spare, preds[k].v, preds[k].n * sizeof(double));
        preds[k].v = NULL;
        if (trials)
            for (t = 0; t < 2 && !e->oom && !e->zerr && !e->perr; t++) {
                zdt__pred v;
                if (predict(e, &v, e->x, e->g, preds[k].predictor, STEPS_TRIED[t][0],
                            STEPS_TRIED[t][1], record_of(e)) != ZDT_PREDICT_OK)
                    break;
                pack_forms(e, &v, mask, &head, forms, n_forms, best, want);
                zdt__pred_free(&v, &e->spare);
            }
        zdt__pred_free(&preds[k], &e->spare);
    }
    if (e->oom)
        rc = zdt__nomem(err);
    else if (e->zerr)
        rc = zdt__fail(err, ZDT_PREDICT_E_PARAM, "", "zstd refused to compress (level %d)",
                       e->level);
    else if (e->perr)
        rc = zdt__fail(err, ZDT_PREDICT_E_PARAM, "", "the pcodec provider refused to compress");
    else {
        /* the masked chunk where it is smaller than format 1's */
        best_t *kept = best[1].set && (!best[0].set || best[1].bytes.len < best[0].bytes.len) ?
                       &best[1] : &best[0];
        zdt__buf_free(out);
        *out = kept->bytes;
        memset(&kept->bytes, 0, sizeof(kept->bytes));
        if (values != NULL) {
            *values = kept->values;
            kept->values = NULL;
        }
    }
    for (k = 0; k < 2; k++) {
        zdt__buf_free(&best[k].bytes);
        zdt__give(&e->spare, best[k].values, n * sizeof(double));
    }
    zdt__buf_free(&head);
    free(mask);
    return rc;
}

/* --- the public entry points ----------------------------------------------------------------- */

static int check_encode(const zdt_predict_params *p, size_t *count, size_t *elem,
                        zdt_predict_error *err) {
    int rc = zdt__check_params(p, count, elem, err);
    if (rc != ZDT_PREDICT_OK)
        return rc;
    if (!(p->rel_error == 0.0 || (p->rel_error > 0.0 && p->rel_error <= DBL_MAX)))
        return zdt__fail(err, ZDT_PREDICT_E_PARAM, "", "rel_error must be finite and > 0 (or 0 "
                         "for a codec with abs_error)");
    if ((p->abs_error > 0.0) == (p->rel_error > 0.0))
        return zdt__fail(err, ZDT_PREDICT_E_PARAM, "", "give one of abs_error and rel_error "
                         "(both together: not yet)");
    if (p->predictor < 0 || p->predictor > 4)
        return zdt__fail(err, ZDT_PREDICT_E_PARAM, "", "predictor must be 0 (auto) or 1 to 4, "
                         "got %d", p->predictor);
    if ((p->entropy == 1 || p->entropy == 2) && p->pcodec == NULL)
        return zdt__fail(err, ZDT_PREDICT_E_UNSUPPORTED, "", "entropy stage %d (%s) needs a "
                         "pcodec provider (params.pcodec)", p->entropy,
                         p->entropy == 1 ? "pcodec" : "pcodec by level");
    if (p->entropy == 2 && p->predictor == 1)
        return zdt__fail(err, ZDT_PREDICT_E_PARAM, "", "entropy 2 (pcodec by level) goes with "
                         "the interpolation predictors (Lorenzo has no levels)");
    if (p->entropy < -1 || p->entropy > 3)
        return zdt__fail(err, ZDT_PREDICT_E_PARAM, "", "entropy must be -1 (auto), 0 (zstd), "
                         "1 (pcodec), 2 (pcodec by level) or 3 (ans), got %d", p->entropy);
    if (p->effort < ZDT_PREDICT_EFFORT_DEFAULT || p->effort > ZDT_PREDICT_EFFORT_MAX)
        return zdt__fail(err, ZDT_PREDICT_E_PARAM, "", "effort must be 0 (default), 1 (fast) or "
                         "2 (max), got %d", p->effort);
    if (p->level < -7 || p->level > 22)
        return zdt__fail(err, ZDT_PREDICT_E_PARAM, "", "level must be an integer from -7 to 22, "
                         "got %d", p->level);
    if (p->n_keep && p->dtype < ZDT_PREDICT_INT8)
        return zdt__fail(err, ZDT_PREDICT_E_PARAM, "", "keep applies to integer arrays");
    if (p->n_keep && p->keep == NULL)
        return zdt__fail(err, ZDT_PREDICT_E_PARAM, "", "keep: %zu values and no array (NULL)",
                         p->n_keep);
    if (p->rel_error > 0.0 && p->dtype >= ZDT_PREDICT_INT8)
        return zdt__fail(err, ZDT_PREDICT_E_PARAM, "", "rel_error on integer arrays: not yet "
                         "(use abs_error)");
    return ZDT_PREDICT_OK;
}

static size_t add_sat(size_t a, size_t b) { return a > SIZE_MAX - b ? SIZE_MAX : a + b; }

/* the largest chunk of n elements of elem bytes any candidate packs to */
static size_t values_bound(size_t n, size_t elem) {
    size_t ans = add_sat(add_sat(32 + 1 + 60 * (1 + 64 + 2 * 63) + 16, 4 * n + 4),
                         zdt_predict_zstd_bound(n * elem));
    size_t zstd = add_sat(32, zdt_predict_zstd_bound(2 * n + n * elem));
    /* stages 1 and 2: four parts of pcodec's standalone format at most (2 bytes a symbol,
       its headers and a page's metadata well within 4 KiB and 1/64 of the symbols) */
    size_t pco = add_sat(add_sat(32 + 4 * (8 + 4096), 2 * n + n / 16), zdt_predict_zstd_bound(n * elem));
    size_t plain = ans > zstd ? ans : zstd;
    plain = plain > pco ? plain : pco;
    return add_sat(plain, MASKED_HEADER + 12 + 2 * (n + 2));
}

size_t zdt_predict_encode_bound(const zdt_predict_params *params) {
    size_t count = 0, elem = 0, b;
    if (check_encode(params, &count, &elem, NULL) != ZDT_PREDICT_OK)
        return 0;
    if (params->dtype >= ZDT_PREDICT_INT8)
        return values_bound(count, 8);
    b = values_bound(count, elem);
    if (params->rel_error > 0.0) {
        /* header, the logarithms' chunk, sign stream, exact map, exact values */
        size_t bitmap = zdt_predict_zstd_bound((count + 7) / 8);
        b = add_sat(add_sat(add_sat(32 + 16, values_bound(count, 8)), 2 * bitmap),
                    zdt_predict_zstd_bound(count * elem));
    }
    return b;
}

int zdt__encode_chunk(const void *src, const zdt_predict_params *p, const zdt__grid *g,
                      int is_f32, double abs_error, int has_fill, double fill, zdt__buf *out,
                      double **values, zdt__spare *pool, zdt_predict_error *err) {
    enc_t e;
    const uint8_t *reference = NULL;
    int rc;
    memset(&e, 0, sizeof(e));
    e.g = g;
    e.x = src;
    e.is_f32 = is_f32;
    e.elem = is_f32 ? 4 : 8;
    e.n = g->count;
    e.abs_error = abs_error;
    e.predictor = p->predictor;
    e.entropy = p->entropy;
    e.level = p->level;
    e.effort = p->effort;
    e.has_fill = has_fill;
    e.fill64 = fill;
    e.fill32 = (float)fill;
    if (p->reference != NULL && p->reference_shape[0] == g->n[2] &&
        p->reference_shape[1] == g->n[3])
        reference = p->reference;
    zdt__io_of(&e.io, p);
    if (pool != NULL)
        e.spare = *pool;
    rc = encode_floats(&e, reference, out, values, err);
    if (pool != NULL)
        *pool = e.spare;
    else
        zdt__spare_free(&e.spare);
    return rc;
}

zdt_predict_workspace *zdt_predict_workspace_new(size_t limit) {
    zdt_predict_workspace *ws = (zdt_predict_workspace *)calloc(1, sizeof(*ws));
    if (ws != NULL)
        ws->limit = limit;
    return ws;
}

void zdt_predict_workspace_free(zdt_predict_workspace *ws) {
    if (ws == NULL)
        return;
    zdt__spare_free(&ws->spare);
    free(ws);
}

int zdt_predict_encode(const void *src, size_t src_size, const zdt_predict_params *params,
                       void *dst, size_t dst_capacity, size_t *written, zdt_predict_error *err) {
    return zdt_predict_encode_with(NULL, src, src_size, params, dst, dst_capacity, written,
                                   err);
}

int zdt_predict_encode_with(zdt_predict_workspace *ws, const void *src, size_t src_size,
                            const zdt_predict_params *params, void *dst, size_t dst_capacity,
                            size_t *written, zdt_predict_error *err) {
    zdt__spare *pool = ws != NULL ? &ws->spare : NULL;
    size_t count = 0, elem = 0;
    zdt__grid g;
    zdt__buf out;
    int rc = check_encode(params, &count, &elem, err);
    if (rc != ZDT_PREDICT_OK)
        return rc;
    if (src_size != count * elem || (count && src == NULL))
        return zdt__fail(err, ZDT_PREDICT_E_PARAM, "", "%zu bytes of input for a chunk of %zu "
                         "bytes", src_size, count * elem);
    if (count && ((uintptr_t)src % elem))
        return zdt__fail(err, ZDT_PREDICT_E_PARAM, "", "the input is not aligned to its "
                         "%zu-byte elements", elem);
    zdt__grid_of(&g, params->shape, params->ndim);
    memset(&out, 0, sizeof(out));
    if (params->dtype >= ZDT_PREDICT_INT8)
        rc = zdt__encode_integers(src, params, &g, &out, pool, err);
    else if (params->rel_error > 0.0)
        rc = zdt__encode_relative(src, params, &g, params->dtype == ZDT_PREDICT_FLOAT32, &out,
                                  pool, err);
    else
        rc = zdt__encode_chunk(src, params, &g, params->dtype == ZDT_PREDICT_FLOAT32,
                               params->abs_error, params->has_fill, params->fill, &out, NULL,
                               pool, err);
    if (pool != NULL)
        zdt__spare_trim(pool, ws->limit);
    if (rc == ZDT_PREDICT_OK) {
        if (written != NULL)
            *written = out.len;
        if (out.len > dst_capacity || (out.len && dst == NULL))
            rc = zdt__fail(err, ZDT_PREDICT_E_DST_SIZE, "", "the chunk takes %zu bytes, the "
                           "output buffer has %zu (zdt_predict_encode_bound gives enough)",
                           out.len, dst_capacity);
        else if (out.len)
            memcpy(dst, out.p, out.len);
    }
    zdt__buf_free(&out);
    return rc;
}
