/* What the library's files share: errors, little-endian loads, the chunk's grid. Nothing here
   is exported (names start with zdt__). */
#ifndef ZDT_PREDICT_INTERNAL_H
#define ZDT_PREDICT_INTERNAL_H

#include <float.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "zdt_predict.h"

/* each binary64 operation rounded on its own (no x87 excess precision): the spec's bits */
#if !defined(FLT_EVAL_METHOD) || FLT_EVAL_METHOD != 0
#error "zdt_predict needs FLT_EVAL_METHOD == 0 (SSE2 or another IEEE double unit, no x87)"

#endif

#if defined(__GNUC__)
#define ZDT_PRINTF(f, a) __attribute__((format(printf, f, a)))
#define ZDT_LIKELY(x) __builtin_expect(!!(x), 1)
#define ZDT_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define ZDT_NOINLINE __attribute__((noinline))
#define ZDT_ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define ZDT_NOINLINE
#define ZDT_ALWAYS_INLINE inline
#define ZDT_PRINTF(f, a)
#define ZDT_LIKELY(x) (x)
#define ZDT_UNLIKELY(x) (x)
#endif

#if defined(__GNUC__) || defined(__clang__)
#define ZDT_RESTRICT __restrict__
#elif defined(_MSC_VER)
#define ZDT_RESTRICT __restrict
#else
#define ZDT_RESTRICT
#endif

/* A whole-array loop compiled for AVX-512 and AVX2 as well, the one run chosen when the
   library loads (ifunc: gcc / clang on x86-64 ELF with glibc; elsewhere, or with
   ZDT_PORTABLE, the baseline build only). The same C in each clone, and -ffp-contract=off
   keeps each element's operations as written (no fused multiply-add), so every clone gives
   the same bits: the width of the vectors changes, not the arithmetic. */
#if defined(__GNUC__) && defined(__x86_64__) && defined(__ELF__) && defined(__GLIBC__) && \
    !defined(ZDT_PORTABLE) && !defined(ZDT_PREDICT_NO_CLONES)
#define ZDT_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define ZDT_CLONES
#endif

/* --- errors (error.c) -------------------------------------------------------------------- */

/* fills *err (may be NULL) and returns status; `part` "" for errors that are not a chunk's */
int zdt__fail(zdt_predict_error *err, int status, const char *part, const char *fmt, ...)
    ZDT_PRINTF(4, 5);
#define zdt__corrupt(err, part, ...) zdt__fail((err), ZDT_PREDICT_E_CORRUPT, (part), __VA_ARGS__)
#define zdt__nomem(err) zdt__fail((err), ZDT_PREDICT_E_NOMEM, "", \
                                  "no memory for the decoder's scratch buffers")

/* (encode_span.c) the widest vector path the CPU has for the interpolation predictors' spans,
   encoding and decoding: 2 AVX-512, 1 AVX2, 0 none (elements one by one); the environment's
   ZDT_PREDICT_SIMD ("avx2", "none") narrows it (the tests compare every path's chunks and
   decodes) */
int zdt__span_isa(void);

/* --- little-endian loads (any host byte order, any alignment) ---------------------------- */

static inline uint16_t zdt__le16(const uint8_t *p) {
    return (uint16_t)(p[0] | (p[1] << 8));
}
static inline uint32_t zdt__le32(const uint8_t *p) {
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}
static inline uint64_t zdt__le64(const uint8_t *p) {
    return (uint64_t)zdt__le32(p) | ((uint64_t)zdt__le32(p + 4) << 32);
}
/* the interpolation predictors' cubic from the neighbours at distances o and 3 o of index i:
   (9 (v[i - o] + v[i + o]) - (v[i - 3 o] + v[i + 3 o])) / 16, in the spec's order */
static ZDT_ALWAYS_INLINE double zdt__cubic(const double *v, size_t i, size_t o) {
    return (9.0 * (v[i - o] + v[i + o]) - (v[i - 3 * o] + v[i + 3 * o])) * 0.0625;
}

static inline double zdt__f64_of_bits(uint64_t b) {
    double d;
    memcpy(&d, &b, 8);
    return d;
}
static inline uint64_t zdt__bits_of_f64(double d) {
    uint64_t b;
    memcpy(&b, &d, 8);
    return b;
}
static inline float zdt__f32_of_bits(uint32_t b) {
    float f;
    memcpy(&f, &b, 4);
    return f;
}
static inline double zdt__load_f64(const uint8_t *p) { return zdt__f64_of_bits(zdt__le64(p)); }
static inline float zdt__load_f32(const uint8_t *p) { return zdt__f32_of_bits(zdt__le32(p)); }

/* --- the chunk's grid (shape.c) ---------------------------------------------------------- */

/* The spec's shape as the kernels see it: extents of 1 dropped, leading dimensions merged
   down to four, then padded with leading extents of 1 to four (a padded dimension's index is
   always 0: it has no Lorenzo terms, no interpolation points, no mask neighbours). */
typedef struct {
    size_t n[4];
    size_t st[4];       /* C-order strides in elements */
    size_t count;       /* the number of elements */
} zdt__grid;

/* the grid of a C-order shape whose element count is known to fit in size_t */
void zdt__grid_of(zdt__grid *g, const uint64_t *shape, uint32_t ndim);

/* the parameters checked; *count the elements, *elem the decoded element size */
int zdt__check_params(const zdt_predict_params *p, size_t *count, size_t *elem,
                      zdt_predict_error *err);

/* --- the providers (zframe.c, zstd_libzstd.c) --------------------------------------------- */

typedef struct {
    const zdt_predict_zstd *zstd;       /* the caller's, else libzstd's, else NULL */
    const zdt_predict_pcodec *pcodec;   /* NULL: stages 1 and 2 unsupported */
} zdt__io;

void zdt__io_of(zdt__io *io, const zdt_predict_params *p);
/* libzstd's provider (NULL when built without ZDT_PREDICT_LIBZSTD) */
const zdt_predict_zstd *zdt__zstd_default(void);

/* --- the values' chunk (values.c): format 1 or 3, alone or in a masked chunk -------------- */

typedef struct {
    const zdt__grid *g;
    int is_f32;             /* the chunk's element type: float32, else float64 */
    double abs_error;       /* E (> 0) */
    int has_fill;
    double fill;            /* as binary64 (rounded to float32 for a float32 chunk) */
    const uint8_t *mask;    /* a masked chunk's mask (1: masked), else NULL */
    size_t n_masked;
    const zdt__io *io;
} zdt__values;

/* decodes the values' chunk buf[0 .. len) into out (float[n] or double[n]) */
int zdt__decode_values(const uint8_t *buf, size_t len, const zdt__values *vc, void *out,
                       zdt_predict_error *err);

/* a float chunk of format 1, 2 (kind 2: masked) or 3 with this fill value and reference
   mask (NULL: none), and decodes it; format 2 kind 1 is the caller's */
int zdt__decode_floats(const zdt__io *io, const uint8_t *buf, size_t len, const zdt__grid *g,
                       int is_f32,
                       double abs_error, int has_fill, double fill, const uint8_t *reference,
                       const uint64_t *reference_shape, void *out, zdt_predict_error *err);

/* --- the zstd frames (zframe.c) ---------------------------------------------------------- */

/* checks that buf[0 .. len) is one zstd frame to its end declaring `expected` bytes of
   content (before anything is allocated for them) */
int zdt__frame_check(const uint8_t *buf, size_t len, size_t expected, const char *part,
                     const char *what, zdt_predict_error *err);
/* decodes such a frame (checked first) into out[expected] */
int zdt__frame_decode(const zdt__io *io, const uint8_t *buf, size_t len, uint8_t *out,
                      size_t expected, const char *part, const char *what,
                      zdt_predict_error *err);

/* --- the mask stream (mask.c) ------------------------------------------------------------ */

/* The mask stream's binary adaptive rANS (also kind 4's sign stream): a bit of probability p
   of a 1 (16 bits) taken from state x (refilled by the caller), and p's update after a bit */
static inline uint32_t zdt__binary_adapt(uint32_t p, uint32_t bit) {
    return bit ? p + ((65536u - p) >> 4) : p - (p >> 4);
}

static ZDT_ALWAYS_INLINE uint32_t zdt__binary_bit(uint32_t *x, uint32_t *p) {
    const uint32_t f = 65536u - *p, slot = *x & 0xFFFFu, bit = slot >= f;
    *x = bit ? *p * (*x >> 16) + slot - f : f * (*x >> 16) + slot;
    *p = zdt__binary_adapt(*p, bit);
    return bit;
}

/* bytes bits[0 .. n) (0: clear) as a bitmap out[ceil(n / 8)], the first bit of each byte
   highest (without a branch: it vectorises) */
static inline void zdt__bitmap_pack(const uint8_t *bits, size_t n, uint8_t *out) {
    size_t i, k;
    for (i = 0; i + 8 <= n; i += 8) {
        unsigned b = 0;
        for (k = 0; k < 8; k++)
            b |= (unsigned)(bits[i + k] != 0) << (7 - k);
        out[i >> 3] = (uint8_t)b;
    }
    if (i < n) {
        unsigned b = 0;
        for (k = 0; i + k < n; k++)
            b |= (unsigned)(bits[i + k] != 0) << (7 - k);
        out[i >> 3] = (uint8_t)b;
    }
}

/* decodes a mask stream (exactly `len` bytes) over the 4-d grid into bits[g->count] (0 or
   1); `reference`: g->n[2] x g->n[3] bits the first slice looks back at, or NULL; *count: the
   set bits. Errors: part `part`. */
int zdt__mask_decode(const uint8_t *buf, size_t len, const zdt__grid *g, const uint8_t *reference,
                     uint8_t *bits, size_t *count, const char *part, zdt_predict_error *err);

/* --- kind 4's sign stream (signs.c; signs.h) ---------------------------------------------- */

/* decodes a sign stream (exactly `len` bytes) over the grid into bits[g->count] (1: negative)
   with the decoded logarithms. Errors: part "signs". */
int zdt__signs_decode(const uint8_t *buf, size_t len, const zdt__grid *g, const double *logs,
                      uint8_t *bits, zdt_predict_error *err);

/* --- format 2, kind 1 (relative.c) and integer arrays (integers.c) ------------------------ */

int zdt__decode_relative(const zdt__io *io, const uint8_t *buf, size_t len, const zdt__grid *g,
                         int is_f32, void *out, zdt_predict_error *err);
int zdt__decode_integers(const zdt__io *io, const uint8_t *buf, size_t len,
                         const zdt_predict_params *p,
                         const zdt__grid *g, void *out, zdt_predict_error *err);

/* --- stage 2's level groups (levels.c) ------------------------------------------------------ */

/* each element's level group 0 .. 3 (flat C order) for predictor (4: not along the first real
   dimension, along which it slices) */
void zdt__level_groups(const zdt__grid *g, int predictor, uint8_t *group);

/* --- stages 1 and 2: the pcodec provider's parts (pcodec.c) ---------------------------------- */

/* the symbols of a stage 1 or 2 chunk at buf[0 .. len) into sym[g->count] (flat C order; a
   masked element, mask[i] 1, gets symbol 1); *end: where the parts end */
int zdt__pcodec_read(const zdt__io *io, const uint8_t *buf, size_t len, const zdt__grid *g,
                     int predictor, int stage, const uint8_t *mask, uint16_t *sym, size_t *end,
                     zdt_predict_error *err);

#endif
