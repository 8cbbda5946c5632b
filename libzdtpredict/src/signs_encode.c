/* Kind 4's sign stream's encoder (docs/codecs/predict.md, "Kind 4's signs"): the bits in the
   decoder's order (signs.c: planes, tiles of 8 x 8, a flag, then one sign or a sign each),
   each with its context's adaptive probability, then coded last to first. */
#include <math.h>

#include "encode.h"
#include "signs.h"

typedef struct {
    uint8_t *bits;
    uint16_t *pr;
    size_t n, cap;
    int oom;
    uint16_t p[ZDT_SIGN_CONTEXTS];
} sequence;

static void put(sequence *q, unsigned c, int bit) {
    const uint32_t pc = q->p[c];
    if (q->n == q->cap) {
        size_t cap = 2 * q->cap;
        uint8_t *bits = (uint8_t *)realloc(q->bits, cap);
        uint16_t *pr;
        if (bits != NULL)
            q->bits = bits;
        pr = bits == NULL ? NULL : (uint16_t *)realloc(q->pr, cap * sizeof(uint16_t));
        if (pr == NULL) {
            q->oom = 1;
            return;
        }
        q->pr = pr;
        q->cap = cap;
    }
    q->bits[q->n] = (uint8_t)bit;
    q->pr[q->n++] = (uint16_t)pc;
    q->p[c] = (uint16_t)zdt__binary_adapt(pc, (uint32_t)bit);
}

/* whether a tile's h x w signs (row stride cols) are all `first` */
static int uniform(const uint8_t *pb, size_t cols, size_t h, size_t w, uint8_t first) {
    size_t r, c;
    if (w == ZDT_SIGN_TILE) {
        const uint64_t eight = first ? 0x0101010101010101ull : 0;
        uint64_t other = 0;
        for (r = 0; r < h; r++) {
            uint64_t row;
            memcpy(&row, pb + r * cols, 8);
            other |= row ^ eight;
        }
        return other == 0;
    }
    for (r = 0; r < h; r++)
        for (c = 0; c < w; c++)
            if (pb[r * cols + c] != first)
                return 0;
    return 1;
}

void zdt__signs_encode(zdt__buf *out, const uint8_t *negative, const zdt__grid *g,
                       const double *logs, const double *decoded, double t) {
    const size_t rows = g->n[2], cols = g->n[3], plane = rows * cols, n = g->count;
    const size_t trows = (rows + ZDT_SIGN_TILE - 1) / ZDT_SIGN_TILE;
    const size_t tcols = (cols + ZDT_SIGN_TILE - 1) / ZDT_SIGN_TILE;
    sequence q;
    uint8_t *flags;
    size_t i, s, a, b;
    q.n = 0;
    q.oom = 0;
    q.cap = 2 * trows * tcols + n / 16 + 16;
    q.bits = (uint8_t *)malloc(q.cap);
    q.pr = (uint16_t *)malloc(q.cap * sizeof(uint16_t));
    flags = (uint8_t *)malloc(trows * tcols + 1);
    if (flags == NULL || q.bits == NULL || q.pr == NULL) {
        out->oom = 1;
        goto done;
    }
    for (i = 0; i < ZDT_SIGN_CONTEXTS; i++)
        q.p[i] = 32768u;
    for (s = 0; s < n && !q.oom; s += plane) {
        const uint8_t *pb = negative + s;
        const double *pl = logs + s, *pd = decoded != NULL ? decoded + s : NULL;
        for (a = 0; a < trows; a++) {
            const size_t r0 = a * ZDT_SIGN_TILE, r1 = zdt__tile_end(r0, rows);
            for (b = 0; b < tcols; b++) {
                const size_t c0 = b * ZDT_SIGN_TILE, c1 = zdt__tile_end(c0, cols);
                const size_t at = s + r0 * cols + c0;
                const uint8_t first = negative[at];
                const int same = uniform(negative + at, cols, r1 - r0, c1 - c0, first);
                size_t r, c;
                put(&q, zdt__flag_context(flags, a, b, tcols,
                                          zdt__corner_class(pl, pd, cols, r0, r1, c0, c1, t)),
                    same);
                flags[a * tcols + b] = (uint8_t)same;
                if (same) {
                    put(&q, zdt__tile_sign_context(pb, cols, r0, c0), first);
                    continue;
                }
                for (r = r0; r < r1; r++)
                    for (c = c0; c < c1; c++) {
                        const size_t e = r * cols + c;
                        const double y = zdt__sign_value(pl, pd, e);
                        put(&q, zdt__element_context(pb, cols, r, c, zdt__sign_class(t, y)), pb[e]);
                    }
            }
        }
    }
    if (q.oom) {
        out->oom = 1;
        goto done;
    }
    zdt__buf_f64(out, t);
    zdt__binary_code(out, q.bits, q.pr, q.n);
done:
    free(flags);
    free(q.bits);
    free(q.pr);
}
