/* A chunk's prediction (zdt.kernels._predict.encode): each element visited in its
   predictor's order, predicted from the predictor values of elements visited before, and
   quantized (the spec's informative "Encoding"): symbol 1 for the fill value (bit for bit),
   zigzag(c) + 2 for the code c = round((x - p) / q) where its reconstruction lies within
   E (1 - 2^-40) of x and is not the fill value, else 0 and x stored raw. */
#include <math.h>

#include "ans.h"
#include "encode.h"

typedef struct {
    double *v;
    uint16_t *sym;
    uint16_t *osym;
    uint8_t *octx;
    size_t j;
    void *raw;
    size_t nraw, raw_cap;       /* raw grows as values are stored (most chunks store few) */
    int oom;
    double q0, q, inv_q, limit, alpha, beta;
    int has_fill;
    double fill64;
    float fill32;
    uint64_t fill_bits64;
    uint32_t fill_bits32;
    int isa;                    /* the spans' vector path (zdt__span_isa) */
    int zero_branch;            /* Lorenzo: code 0 quantized by a branch of its own */
} zdt__ew;

/* the pair of two neighbour classes a, b (0 .. 4) at [a << 3 | b]: hi (hi + 1) / 2 + lo */
static const uint8_t zdt__enc_pair[40] = {
    0, 1, 3, 6, 10, 0, 0, 0,  1, 2, 4, 7, 11, 0, 0, 0,  3, 4, 5, 8, 12, 0, 0, 0,
    6, 7, 8, 9, 13, 0, 0, 0,  10, 11, 12, 13, 14, 0, 0, 0};
/* the class of element i whose symbol is in sym (its contexts' part) */
#define ENC_CLS(sym, i) zdt__class16[(sym)[i] < 16 ? (sym)[i] : 15]
/* the fine context of level group g and neighbour classes at [a << 3 | b] */
#define ZDT_FINE(g, ab) ((g) * 15 + zdt__enc_pair[(ab)])

static inline double zdt__enc_finite_or_zero(double p) { return isfinite(p) ? p : 0.0; }

/* the step of interpolation level s (_predict.set_level: only with both steps other than 1) */
static inline void zdt__enc_level(zdt__ew *w, size_t s) {
    if (w->alpha != 1.0 && w->beta != 1.0) {
        double f = 1.0;
        while (s > 1) {
            f = f * w->alpha;
            if (f > w->beta)
                f = w->beta;
            s >>= 1;
        }
        w->q = w->q0 / f;
        w->inv_q = 1.0 / w->q;
    }
}

/* room for more raw values (doubling); -1 with w->oom set (then w->raw keeps a spare slot
   the caller overwrites, so the traversal goes on without a branch of its own) */
static int zdt__enc_grow_raw(zdt__ew *w, size_t elem) {
    size_t cap = 2 * w->raw_cap;
    void *p = w->oom ? NULL : realloc(w->raw, cap * elem);
    if (p == NULL) {
        w->oom = 1;
        return -1;
    }
    w->raw = p;
    w->raw_cap = cap;
    return 0;
}

static inline int same_f32(float a, const zdt__ew *w) {
    uint32_t b;
    memcpy(&b, &a, 4);
    return b == w->fill_bits32;
}
static inline int same_f64(double a, const zdt__ew *w) {
    uint64_t b;
    memcpy(&b, &a, 8);
    return b == w->fill_bits64;
}

/* a span's elements quantized in blocks of this many (encode_walk.h's span) */
#define ENC_SPAN_BLOCK 64

#define ENC_T float
#define ENC_F32 1
#define ENC_SAME same_f32
#define ENC(name) enc_##name##_f32
#define ENC_REC 0
#include "encode_walk.h"
#undef ENC
#undef ENC_REC
#define ENC(name) enc_##name##_f32_rec
#define ENC_REC 1
#include "encode_walk.h"
#undef ENC
#undef ENC_REC
#undef ENC_T
#undef ENC_F32

#define ENC_T double
#define ENC_F32 0
#undef ENC_SAME
#define ENC_SAME same_f64
#define ENC(name) enc_##name##_f64
#define ENC_REC 0
#include "encode_walk.h"
#undef ENC
#undef ENC_REC
#define ENC(name) enc_##name##_f64_rec
#define ENC_REC 1
#include "encode_walk.h"
#undef ENC
#undef ENC_REC
#undef ENC_T
#undef ENC_F32

/* the smallest block s keeps of at least `bytes`, or -1 */
static int smallest(const zdt__spare *s, size_t bytes) {
    int k, best = -1;
    for (k = 0; k < ZDT_SPARE; k++)
        if (s->p[k] != NULL && s->cap[k] >= bytes && (best < 0 || s->cap[k] < s->cap[best]))
            best = k;
    return best;
}

void *zdt__spare_take(zdt__spare *s, size_t bytes) {
    int best;
    void *p;
    if (bytes == 0)
        bytes = 1;
    best = smallest(s, bytes);
    if (best < 0)
        return zdt__alloc_large(bytes);
    p = s->p[best];
    s->p[best] = NULL;
    return p;
}

void zdt__spare_give(zdt__spare *s, void *p, size_t bytes) {
    int k, least;
    if (p == NULL)
        return;
    for (k = 0; k < ZDT_SPARE; k++) {
        if (s->p[k] == NULL) {
            s->p[k] = p;
            s->cap[k] = bytes;
            return;
        }
    }
    least = smallest(s, 0);
    if (s->cap[least] < bytes) {
        free(s->p[least]);
        s->p[least] = p;
        s->cap[least] = bytes;
    } else {
        free(p);
    }
}

void zdt__spare_free(zdt__spare *s) {
    int k;
    for (k = 0; k < ZDT_SPARE; k++)
        free(s->p[k]);
    memset(s, 0, sizeof(*s));
}

void zdt__spare_trim(zdt__spare *s, size_t limit) {
    size_t total = 0;
    int k;
    for (k = 0; k < ZDT_SPARE; k++)
        total += s->p[k] != NULL ? s->cap[k] : 0;
    while (total > limit) {
        int least = smallest(s, 0);
        total -= s->cap[least];
        free(s->p[least]);
        s->p[least] = NULL;
        s->cap[least] = 0;
    }
}

void *zdt__take(zdt__spare *s, size_t bytes) {
    return s != NULL ? zdt__spare_take(s, bytes) : zdt__alloc_large(bytes ? bytes : 1);
}

void zdt__give(zdt__spare *s, void *p, size_t bytes) {
    if (s != NULL)
        zdt__spare_give(s, p, bytes ? bytes : 1);
    else
        free(p);
}

/* the bytes of a prediction's symbol arrays, one block: sym, then with stage 3's order osym
   and octx (one block of 5 bytes an element is large enough for huge pages) */
static size_t symbol_bytes(size_t n, int record) {
    return n * (record ? 2 * sizeof(uint16_t) + 1 : sizeof(uint16_t));
}

void zdt__pred_free(zdt__pred *p, zdt__spare *spare) {
    zdt__give(spare, p->sym, symbol_bytes(p->n, p->osym != NULL));
    zdt__give(spare, p->v, p->n * sizeof(double));
    free(p->raw);
    free(p->counts);
    memset(p, 0, sizeof(*p));
}

int zdt__predict(zdt__pred *out, const void *x, const zdt__grid *g, int is_f32,
                 double abs_error, int predictor, double alpha, double beta, int has_fill,
                 double fill64, float fill32, int record, int zeros_likely,
                 zdt__spare *spare) {
    const size_t n = g->count, elem = is_f32 ? 4 : 8;
    zdt__ew w;
    memset(out, 0, sizeof(*out));
    memset(&w, 0, sizeof(w));
    out->predictor = predictor;
    out->alpha = alpha;
    out->beta = beta;
    out->n = n;
    out->sym = (uint16_t *)zdt__take(spare, symbol_bytes(n, record));
    out->v = (double *)zdt__take(spare, n * sizeof(double));
    /* (the raw values start small: most chunks store few, and a buffer of n elements
       reserved the heap's top for nothing) */
    w.raw_cap = n < 1024 ? (n ? n : 1) : 1024;
    out->raw = malloc(w.raw_cap * elem);
    if (record) {
        if (out->sym != NULL) {
            out->osym = out->sym + n;
            out->octx = (uint8_t *)(out->osym + n);
        }
        out->counts = (int64_t *)malloc(60 * 64 * sizeof(int64_t));
    }
    if (out->sym == NULL || out->v == NULL || out->raw == NULL ||
        (record && (out->osym == NULL || out->octx == NULL ||
                    out->counts == NULL))) {
        zdt__pred_free(out, spare);
        return ZDT_PREDICT_E_NOMEM;
    }
    w.v = out->v;
    w.sym = out->sym;
    w.osym = out->osym;
    w.octx = out->octx;
    w.raw = out->raw;
    w.q0 = w.q = 2.0 * abs_error;
    w.inv_q = 1.0 / w.q;
    w.limit = abs_error * (1.0 - 0x1p-40);
    w.alpha = alpha;
    w.beta = beta;
    w.has_fill = has_fill;
    w.fill64 = fill64;
    w.fill32 = fill32;
    w.fill_bits64 = zdt__bits_of_f64(fill64);
    w.isa = zdt__span_isa();
    w.zero_branch = predictor == 1 && zeros_likely;
    memcpy(&w.fill_bits32, &fill32, 4);
    if (n) {
        if (is_f32) {
            if (record)
                enc_run_f32_rec(predictor, &w, (const float *)x, g);
            else
                enc_run_f32(predictor, &w, (const float *)x, g);
        } else {
            if (record)
                enc_run_f64_rec(predictor, &w, (const double *)x, g);
            else
                enc_run_f64(predictor, &w, (const double *)x, g);
        }
    }
    out->raw = w.raw;
    out->nraw = w.nraw;
    if (w.oom) {
        zdt__pred_free(out, spare);
        return ZDT_PREDICT_E_NOMEM;
    }
    if (record) {
        out->nord = w.j;
        zdt__histogram(out->osym, out->octx, out->nord, out->counts);
    }
    return ZDT_PREDICT_OK;
}
