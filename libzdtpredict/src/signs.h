/* Kind 4's sign stream (docs/codecs/predict.md, "Kind 4's signs"): its sizes, classes and
   contexts, one definition for the decoder (signs.c) and the encoder (signs_encode.c). */
#ifndef ZDT_PREDICT_SIGNS_H
#define ZDT_PREDICT_SIGNS_H

#include <math.h>

#include "internal.h"

#define ZDT_SIGN_TILE 8
#define ZDT_SIGN_CONTEXTS 60    /* 27 tile flags, 9 tile signs, 24 elements' signs */
#define ZDT_SIGN_HEAD 20u       /* t (binary64), the state (u32), the number of words (u64) */

/* the class of logarithm v against t: d = t - v; 2 where d >= 8, 1 where d >= 4, else 0
   (NaN, +inf: 0; -inf, a zero: 2) */
static inline unsigned zdt__sign_class(double t, double v) {
    const double d = t - v;
    return (unsigned)((d >= 4.0) + (d >= 8.0));
}

/* where a tile that starts at `start` ends along an extent */
static inline size_t zdt__tile_end(size_t start, size_t extent) {
    return start + ZDT_SIGN_TILE < extent ? start + ZDT_SIGN_TILE : extent;
}

/* The three kinds of context (the spec's, both coders' one definition). A tile's flag: its
   class, the flags of the tiles above and before it (2: none); flags: the plane's, tcols a row */
static inline unsigned zdt__flag_context(const uint8_t *flags, size_t a, size_t b, size_t tcols,
                                         unsigned tile_class) {
    const unsigned up = a ? flags[(a - 1) * tcols + b] : 2, left = b ? flags[a * tcols + b - 1] : 2;
    return tile_class + 3 * up + 9 * left;
}

/* a tile of one sign, its first element at (r0, c0) of the plane's bits pb: the signs above
   and before that element (2: none) */
static inline unsigned zdt__tile_sign_context(const uint8_t *pb, size_t cols, size_t r0,
                                              size_t c0) {
    const unsigned above = r0 ? pb[(r0 - 1) * cols + c0] : 2, before = c0 ? pb[r0 * cols + c0 - 1] : 2;
    return 27 + above + 3 * before;
}

/* an element (i, j) of a tile of both signs: w, n, nw (0 outside the plane) and its class */
static inline unsigned zdt__element_context(const uint8_t *pb, size_t cols, size_t i, size_t j,
                                            unsigned m) {
    const size_t e = i * cols + j;
    const unsigned w = j ? pb[e - 1] : 0, n = i ? pb[e - cols] : 0,
                   nw = i && j ? pb[e - cols - 1] : 0;
    return 36 + w + 2 * n + 4 * nw + 8 * m;
}

/* element e's logarithm as the decoder reads it: logs[e], or (the encoder's) decoded[e] where
   logs[e] is finite and decoded is not NULL (a non-finite logarithm decodes to itself) */
static inline double zdt__sign_value(const double *logs, const double *decoded, size_t e) {
    const double x = logs[e];
    return decoded != NULL && x - x == 0.0 ? decoded[e] : x;
}

/* a tile's class (rows r0 .. r1 - 1, columns c0 .. c1 - 1 of a plane whose logarithms start
   at logs, decoded alike): the largest of its four corners' classes */
static inline unsigned zdt__corner_class(const double *logs, const double *decoded, size_t cols,
                                         size_t r0, size_t r1, size_t c0, size_t c1, double t) {
    const unsigned a = zdt__sign_class(t, zdt__sign_value(logs, decoded, r0 * cols + c0));
    const unsigned b = zdt__sign_class(t, zdt__sign_value(logs, decoded, r0 * cols + c1 - 1));
    const unsigned c = zdt__sign_class(t, zdt__sign_value(logs, decoded, (r1 - 1) * cols + c0));
    const unsigned d = zdt__sign_class(t, zdt__sign_value(logs, decoded, (r1 - 1) * cols + c1 - 1));
    const unsigned ab = a > b ? a : b, cd = c > d ? c : d;
    return ab > cd ? ab : cd;
}

#endif
