/* Kind 4's sign stream (docs/codecs/predict.md, "Kind 4's signs"): each plane of the grid in
   tiles of 8 x 8, a tile's signs one bit when they are all equal, else a bit each, every bit
   by the adaptive probability of its context (the mask stream's binary rANS), the contexts
   told how small the elements' magnitudes are by their decoded logarithms. Tiles keep the
   coded bits few: a sign's region costs its edges. */
#include <math.h>
#include <stdlib.h>

#include "signs.h"

#define L 65536u

typedef struct {
    uint32_t x;
    uint64_t pos, n_words;
    const uint8_t *words;
    uint16_t p[ZDT_SIGN_CONTEXTS];
} coder;

/* the next bit of context c; -1 where the words ran out */
static ZDT_ALWAYS_INLINE int next_bit(coder *k, unsigned c) {
    uint32_t pc = k->p[c];
    const int bit = (int)zdt__binary_bit(&k->x, &pc);
    k->p[c] = (uint16_t)pc;
    if (k->x < L) {
        if (k->pos >= k->n_words)
            return -1;
        k->x = (k->x << 16) | zdt__le16(k->words + 2 * k->pos);
        k->pos++;
    }
    return bit;
}

int zdt__signs_decode(const uint8_t *buf, size_t len, const zdt__grid *g, const double *logs,
                      uint8_t *bits, zdt_predict_error *err) {
    const size_t rows = g->n[2], cols = g->n[3], plane = rows * cols, n = g->count;
    const size_t trows = (rows + ZDT_SIGN_TILE - 1) / ZDT_SIGN_TILE;
    const size_t tcols = (cols + ZDT_SIGN_TILE - 1) / ZDT_SIGN_TILE;
    coder k;
    double t;
    uint8_t *flags;
    size_t s, a, b, c;
    if (len < ZDT_SIGN_HEAD)
        return zdt__corrupt(err, "signs", "the chunk ends inside the sign stream's head");
    t = zdt__load_f64(buf);
    k.x = zdt__le32(buf + 8);
    k.n_words = zdt__le64(buf + 12);
    if (!(t - t == 0.0))
        return zdt__corrupt(err, "signs", "the sign stream's reference logarithm is %g, not "
                            "finite", t);
    if (k.n_words > (len - ZDT_SIGN_HEAD) / 2 || ZDT_SIGN_HEAD + 2 * k.n_words != len)
        return zdt__corrupt(err, "signs", "the sign stream's %llu words do not fill its %zu "
                            "bytes", (unsigned long long)k.n_words, len);
    if (k.x < L)
        return zdt__corrupt(err, "signs", "the sign stream's state %lu lies below 2^16",
                            (unsigned long)k.x);
    k.words = buf + ZDT_SIGN_HEAD;
    k.pos = 0;
    for (c = 0; c < ZDT_SIGN_CONTEXTS; c++)
        k.p[c] = 32768u;
    flags = (uint8_t *)malloc(trows * tcols + 1);
    if (flags == NULL)
        return zdt__nomem(err);
    for (s = 0; s < n; s += plane) {
        uint8_t *pb = bits + s;
        const double *pv = logs + s;
        for (a = 0; a < trows; a++) {
            const size_t r0 = a * ZDT_SIGN_TILE, r1 = zdt__tile_end(r0, rows);
            for (b = 0; b < tcols; b++) {
                const size_t c0 = b * ZDT_SIGN_TILE, c1 = zdt__tile_end(c0, cols);
                size_t i, j;
                int u, bit;
                u = next_bit(&k, zdt__flag_context(flags, a, b, tcols,
                                                   zdt__corner_class(pv, NULL, cols, r0, r1, c0,
                                                                     c1, t)));
                if (u < 0)
                    goto ran_out;
                flags[a * tcols + b] = (uint8_t)u;
                if (u) {
                    bit = next_bit(&k, zdt__tile_sign_context(pb, cols, r0, c0));
                    if (bit < 0)
                        goto ran_out;
                    if (c1 - c0 == ZDT_SIGN_TILE) {
                        const uint64_t eight = bit ? 0x0101010101010101ull : 0;
                        for (i = r0; i < r1; i++)
                            memcpy(pb + i * cols + c0, &eight, 8);
                    } else {
                        for (i = r0; i < r1; i++)
                            memset(pb + i * cols + c0, bit, c1 - c0);
                    }
                    continue;
                }
                for (i = r0; i < r1; i++)
                    for (j = c0; j < c1; j++) {
                        const size_t e = i * cols + j;
                        bit = next_bit(&k, zdt__element_context(pb, cols, i, j,
                                                                zdt__sign_class(t, pv[e])));
                        if (bit < 0)
                            goto ran_out;
                        pb[e] = (uint8_t)bit;
                    }
            }
        }
    }
    free(flags);
    if (k.pos != k.n_words || k.x != L)
        return zdt__corrupt(err, "signs", "the sign stream does not end where it began (%llu "
                            "words left, state %lu, not 65536)",
                            (unsigned long long)(k.n_words - k.pos), (unsigned long)k.x);
    return ZDT_PREDICT_OK;
ran_out:
    free(flags);
    return zdt__corrupt(err, "signs", "the sign stream ends before the chunk's %zu signs", n);
}
