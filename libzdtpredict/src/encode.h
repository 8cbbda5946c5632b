/* What the encoder's files share (nothing exported; names start with zdt__). The encoder
   writes exactly the bytes zdt's Python encoder (zdt.codecs.predict, zdt.kernels._predict,
   _ans) writes for the same input and configuration: the same traversals and quantizer, the
   same choices (auto's sampling, format 3's trials, mask formats, stage 3's model) in the same
   order of floating-point operations. */
#ifndef ZDT_PREDICT_ENCODE_H
#define ZDT_PREDICT_ENCODE_H

#include <stdlib.h>

#include "internal.h"

/* --- a growable byte buffer ---------------------------------------------------------------- */

typedef struct {
    uint8_t *p;
    size_t len, cap;
    int oom;                    /* an allocation failed: the contents are incomplete */
} zdt__buf;

void zdt__buf_free(zdt__buf *b);
/* malloc(bytes) (1 byte for 0), where the system has them with transparent huge pages asked
   for a large array (Linux: madvise) */
void *zdt__alloc_large(size_t bytes);
/* room for `more` bytes after len (0, or -1 with b->oom set) */
int zdt__buf_reserve(zdt__buf *b, size_t more);
void zdt__buf_put(zdt__buf *b, const void *src, size_t len);
void zdt__buf_u8(zdt__buf *b, unsigned v);
void zdt__buf_u16(zdt__buf *b, unsigned v);
void zdt__buf_u32(zdt__buf *b, uint32_t v);
void zdt__buf_u64(zdt__buf *b, uint64_t v);
void zdt__buf_f64(zdt__buf *b, double v);

static inline void zdt__st16(uint8_t *p, unsigned v) {
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}
static inline void zdt__st32(uint8_t *p, uint32_t v) {
    zdt__st16(p, v & 0xFFFFu);
    zdt__st16(p + 2, v >> 16);
}
static inline void zdt__st64(uint8_t *p, uint64_t v) {
    zdt__st32(p, (uint32_t)v);
    zdt__st32(p + 4, (uint32_t)(v >> 32));
}

/* --- a prediction (zdt.kernels._predict.encode) ------------------------------------------- */

typedef struct {
    int predictor;              /* 1 .. 4 */
    double alpha, beta;         /* format 3's steps (1, 1: format 1) */
    size_t n;
    uint16_t *sym;              /* each element's symbol, flat C order */
    double *v;                  /* each element's predictor value (NULL once given away) */
    const double *given;        /* v where a kept candidate took it (encode.c's offer) */
    void *raw;                  /* the raw values (float or double, native), visit order */
    size_t nraw;
    /* stage 3 (recorded): the symbols and their fine contexts in visit order, the count of
       each (fine context, token) */
    uint16_t *osym;
    uint8_t *octx;
    size_t nord;
    int64_t *counts;            /* [60 * 64] */
} zdt__pred;

/* Buffers of one encode's predictions kept for its next: a whole-chunk prediction's arrays
   (13 bytes an element) from fresh pages cost a page fault every 4 KiB and the pages'
   zeroing, as much as the prediction itself (encode.c: one for each zdt__encode_chunk) */
#define ZDT_SPARE 8
typedef struct {
    void *p[ZDT_SPARE];
    size_t cap[ZDT_SPARE];
} zdt__spare;

/* a block of at least `bytes` from s (the smallest that is), else a new one (NULL: no memory) */
void *zdt__spare_take(zdt__spare *s, size_t bytes);
/* p (`bytes` long, or NULL) kept in s, or freed where s keeps larger ones */
void zdt__spare_give(zdt__spare *s, void *p, size_t bytes);
void zdt__spare_free(zdt__spare *s);
/* blocks freed, smallest first, until s keeps at most `limit` bytes */
void zdt__spare_trim(zdt__spare *s, size_t limit);
/* zdt__spare_take / zdt__spare_give where s may be NULL (then malloc / free) */
void *zdt__take(zdt__spare *s, size_t bytes);
void zdt__give(zdt__spare *s, void *p, size_t bytes);

/* zdt_predict_workspace: an encode's blocks kept for the next call (zdt_predict.h) */
struct zdt_predict_workspace {
    zdt__spare spare;
    size_t limit;
};

/* p's arrays to spare (NULL: freed) */
void zdt__pred_free(zdt__pred *p, zdt__spare *spare);

/* predicts the flat chunk x (float[n] or double[n]) over the grid g with `predictor`, format
   3's steps (1, 1: none), q0 = 2E, the fill value (has_fill; fill64 / fill32 in the chunk's
   type); `record`: stage 3's order; `zeros_likely`: most codes are expected to be 0 (Lorenzo
   then quantizes code 0 by a branch of its own: faster there, slower where the branch
   mispredicts); its arrays from spare (NULL: malloc). ZDT_PREDICT_OK or ZDT_PREDICT_E_NOMEM. */
int zdt__predict(zdt__pred *out, const void *x, const zdt__grid *g, int is_f32,
                 double abs_error, int predictor, double alpha, double beta, int has_fill,
                 double fill64, float fill32, int record, int zeros_likely,
                 zdt__spare *spare);

/* the constants of a span's quantization (its level's q and 1 / q) */
typedef struct {
    double q, inv_q, limit;
    int has_fill;
    double fill64;
    float fill32;
    uint64_t fill_bits64;
    uint32_t fill_bits32;
    int isa;                    /* zdt__span_isa's */
} zdt__span_consts;

/* (encode_span.c) the first elements of a span quantized, several at a time: elements
   i + j es, each predicted by the cubic along stride o (a multiple of 4 or 8 of them, 0 where
   c->isa has no such path); *bad where one of them did not take the common path
   (then their values and symbols are not the scalar quantize's) */
size_t zdt__span_quantize(double *v, const void *x, int is_f32, uint16_t *sym, size_t i,
                          size_t count, size_t es, size_t o, const zdt__span_consts *c,
                          int *bad);

/* (encode_span.c) stage 3's order of a span's elements i + j es (their neighbours along
   stride o, level group `group`): symbols to osym[j], fine contexts to octx[j], for the first
   of them several at a time (how many: 0 where isa has no such path) */
size_t zdt__span_record(int isa, const uint16_t *sym, uint16_t *osym, uint8_t *octx, size_t i,
                        size_t count, size_t es, size_t o, int group);

/* --- stage 3 (ans_encode.c) ---------------------------------------------------------------- */

/* the count of each (fine context, token), counts[60 * 64] */
void zdt__histogram(const uint16_t *osym, const uint8_t *octx, size_t n, int64_t *counts);
/* _ans.order0_bits: the bits sym[n] takes at its order-0 entropy; -1 with no memory */
double zdt__order0_bits(const uint16_t *sym, size_t n, int *oom);
/* the bits stage 3 takes for these counts, as its model choice estimates them (tables,
   tokens at their tables' entropy, extra bits) */
double zdt__ans_bits(const int64_t *counts);
/* stage 3's bytes (model, tables, states, word count, words) appended to out */
void zdt__ans_pack(zdt__buf *out, const uint16_t *osym, const uint8_t *octx, size_t n,
                   const int64_t *counts);

/* --- the mask stream (mask_encode.c) ------------------------------------------------------- */

void zdt__mask_encode(zdt__buf *out, const uint8_t *bits, const zdt__grid *g,
                      const uint8_t *reference);
/* bits[0 .. n) coded last to first with pr[i], each one's probability of a 1 (the decoder's,
   first to last): a mask stream's state, word count and words, appended to out */
void zdt__binary_code(zdt__buf *out, const uint8_t *bits, const uint16_t *pr, size_t n);
/* kind 4's sign stream of negative[0 .. g->count) (1: negative) with the logarithms as the
   decoder reads them (`logs`; the encoder's `decoded` where logs[i] is finite, when not
   NULL) and t, the classes' reference (finite; zdt: the largest logarithm), appended to out */
void zdt__signs_encode(zdt__buf *out, const uint8_t *negative, const zdt__grid *g,
                       const double *logs, const double *decoded, double t);

/* --- zstd (zframe.c) ----------------------------------------------------------------------- */

/* one zstd frame of src[0 .. len) at `level` appended to out, as numcodecs' Zstd(level).encode
   writes it (ZSTD_compress2, the content size declared, no checksum); -1 on a zstd error */
int zdt__zstd_append(zdt__buf *out, const zdt__io *io, const void *src, size_t len, int level);

/* --- stages 1 and 2 (pcodec.c) ------------------------------------------------------------ */

/* the symbols' parts (flat sym[g->count], the masked elements' left out) appended to out; -1
   when the provider fails (out->oom on no memory) */
int zdt__pcodec_write(zdt__buf *out, const zdt__io *io, const zdt__grid *g, int predictor,
                      int stage, const uint16_t *sym, const uint8_t *mask);

#endif

/* --- the encoder's parts (encode.c, encode_relative.c, encode_integers.c) ------------------ */

/* a float chunk under the absolute bound abs_error (format 1, 3 or a masked chunk) into out;
   values (optional): what the kept chunk decodes its elements to (float64[n], a block for
   pool); pool: where the large blocks come from and go back to (NULL: malloc and free) */
int zdt__encode_chunk(const void *src, const zdt_predict_params *p, const zdt__grid *g,
                      int is_f32, double abs_error, int has_fill, double fill, zdt__buf *out,
                      double **values, zdt__spare *pool, zdt_predict_error *err);
int zdt__encode_relative(const void *src, const zdt_predict_params *p, const zdt__grid *g,
                         int is_f32, zdt__buf *out, zdt__spare *pool, zdt_predict_error *err);
int zdt__encode_integers(const void *src, const zdt_predict_params *p, const zdt__grid *g,
                         zdt__buf *out, zdt__spare *pool, zdt_predict_error *err);
