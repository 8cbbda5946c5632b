/* Reconstruction (docs/codecs/predict.md, "Reconstruction", "Level steps"): one element from
   its symbol and prediction, and what a traversal carries. Inline: run once per element. */
#ifndef ZDT_PREDICT_RECONSTRUCT_H
#define ZDT_PREDICT_RECONSTRUCT_H

#include <math.h>

#include "ans.h"

/* Stage 3 span blocks whose elements wait to be reconstructed (predictors_walk.h): the blocks
   of the pass before a level's last, each reconstructed when the last pass reaches its rows,
   so that each row's cache lines are read and written once while cached. */
typedef struct {
    size_t i, m, es, o;         /* elements i + j es, j < m, each the cubic along stride o */
    size_t ks_at;               /* their symbols 2 .. 15 at ks + ks_at; SIZE_MAX: all code 0 */
    size_t kept_at, nkept;      /* the exceptions, reconstructed already: their values */
} zdt__deferred;

typedef struct {
    size_t e;
    double v;
    float f;                    /* a float32 chunk's output */
} zdt__kept;

typedef struct {
    zdt__deferred *blk;
    size_t n, head, cap;
    uint8_t *ks;
    size_t nks, cap_ks;
    zdt__kept *kept;
    size_t nkept, cap_kept;
    int on;                     /* the pass being decoded defers its span blocks */
} zdt__defer;

/* What a traversal carries. Predictor values are binary64 (v); a float32 chunk's elements go
   to `out` as they are decoded; a float64 chunk's predictor values are its output itself (out
   == v), and the elements whose value differs from their predictor value (the fill value, a
   non-finite raw value) are written after the traversal (zdt__finish_f64). */
typedef struct {
    double *v;
    float *out32;                /* float32 chunks: the output */
    const uint16_t *sym;        /* stages 0 to 2: each element's symbol (flat C order) */
    uint8_t *cls;               /* stage 3: each visited element's class */
    const uint8_t *mask;        /* stage 3, a masked chunk: 1 where masked (no symbol) */
    zdt__ans *ans;              /* stage 3 */
    const uint8_t *raw;         /* the raw values, little-endian, in visit order */
    size_t *raw_at;             /* float64: the element each raw value went to */
    size_t nraw, nraw_max;
    size_t nfill;               /* fill-value symbols and masked elements */
    float fill32;
    double q0, alpha, beta;     /* 2E and format 3's steps (1, 1: format 1) */
    double q;                   /* the step of the level being decoded */
    double qc[16];              /* q c for the symbols 2 .. 15 */
    int isa;                    /* the spans' vector path (zdt__span_isa) */
    zdt__defer *defer;          /* stage 3, predictors 2 to 4, a large chunk; else NULL */
} zdt__walk;

/* the code of symbol k >= 2: zigzag^-1(k - 2) */
static inline int zdt__code_of(int k) {
    int m = k - 2;
    return (m & 1) == 0 ? (m >> 1) : -((m + 1) >> 1);
}

/* the step of interpolation level s: q0 / f_s, f_1 = 1, f_2s = min(f_s alpha, beta) */
static inline void zdt__set_level(zdt__walk *w, size_t s) {
    double f = 1.0;
    int k;
    while (s > 1) {
        f = f * w->alpha;
        if (f > w->beta)
            f = w->beta;
        s >>= 1;
    }
    w->q = w->q0 / f;
    for (k = 0; k < 16; k++)
        w->qc[k] = k >= 2 ? w->q * (double)zdt__code_of(k) : 0.0;
}

static inline double zdt__finite_or_zero(double p) { return isfinite(p) ? p : 0.0; }

/* element i from symbol k and prediction p; 0, or -1 when the symbols ask for more raw values
   than the chunk holds */
static inline int zdt__reconstruct_f32(zdt__walk *w, size_t i, double p, int k) {
    if (ZDT_LIKELY(k >= 2)) {
        float r = (float)(p + (k < 16 ? w->qc[k] : w->q * (double)zdt__code_of(k)));
        w->out32[i] = r;
        w->v[i] = (double)r;
        return 0;
    }
    if (k == 1) {
        w->nfill++;
        w->out32[i] = w->fill32;
        w->v[i] = zdt__finite_or_zero(p);
        return 0;
    }
    if (w->nraw >= w->nraw_max)
        return -1;
    {
        float r = zdt__load_f32(w->raw + 4 * w->nraw);
        w->nraw++;
        w->out32[i] = r;
        w->v[i] = isfinite(r) ? (double)r : zdt__finite_or_zero(p);
    }
    return 0;
}

static inline int zdt__reconstruct_f64(zdt__walk *w, size_t i, double p, int k) {
    if (ZDT_LIKELY(k >= 2)) {
        w->v[i] = p + (k < 16 ? w->qc[k] : w->q * (double)zdt__code_of(k));
        return 0;
    }
    if (k == 1) {
        w->nfill++;
        w->v[i] = zdt__finite_or_zero(p);
        return 0;
    }
    if (w->nraw >= w->nraw_max)
        return -1;
    {
        double r = zdt__load_f64(w->raw + 8 * w->nraw);
        w->raw_at[w->nraw] = i;
        w->nraw++;
        w->v[i] = isfinite(r) ? r : zdt__finite_or_zero(p);
    }
    return 0;
}

/* (decode_span.c) elements i + j es of a stage 3 span block whose symbols are codes below 16
   (ks[j]: 2 .. 15; NULL: every one code 0), each the cubic along stride o plus qc[ks[j]],
   the first of them several at a time: v (and a float32 chunk's out32, out32 NULL for
   float64) as the scalar loop writes them; returns how many (0 where isa has no such path) */
size_t zdt__span_put(int isa, double *v, float *out32, size_t i, size_t count, size_t es,
                     size_t o, const uint8_t *ks, const double *qc);

/* traverses the chunk in its predictor's order, reconstructing every element: 0, or -1 for
   a corrupt chunk (w->ans->err set by stage 3's stream, else the raw values ran out) */
int zdt__traverse(int predictor, zdt__walk *w, const zdt__grid *g, int is_f32);

#endif
