/* The mask stream of a masked chunk (docs/codecs/predict.md, "Masked chunks", "A reference
   mask"): one bit per element in flat C order, each decoded with the adaptive probability of
   its context (its neighbours w, n, nw, ne in the last two dimensions, and t, the bit one
   slice back or the reference mask's) from one binary rANS state. */
#include <stdlib.h>

#include "internal.h"

#define MASK_HEAD 12u           /* the state (u32), the number of words (u64) */
#define MASK_CONTEXTS 48
#define ONE 65536u
#define L 65536u

/* the state below 2^16 takes the next word; 0 where none is left */
static int refill(uint32_t *x, uint64_t *pos, uint64_t n_words, const uint8_t *words) {
    if (*pos >= n_words)
        return 0;
    *x = (*x << 16) | zdt__le16(words + 2 * *pos);
    (*pos)++;
    return 1;
}

int zdt__mask_decode(const uint8_t *buf, size_t len, const zdt__grid *g, const uint8_t *reference,
                     uint8_t *bits, size_t *count, const char *part, zdt_predict_error *err) {
    const size_t n0 = g->n[0], n1 = g->n[1], n2 = g->n[2], n3 = g->n[3];
    const size_t s1 = n2 * n3, s0 = n1 * n2 * n3;
    uint32_t p[MASK_CONTEXTS];
    uint32_t x, pc = 32768u;
    uint64_t n_words, pos = 0;
    const uint8_t *words;
    uint8_t *ctx, *row;
    size_t i = 0, k0, k1, k2, k3, set = 0;
    int c, cur = 0;
    if (len < MASK_HEAD)
        return zdt__corrupt(err, part, "the chunk ends inside the mask stream's state");
    x = zdt__le32(buf);
    n_words = zdt__le64(buf + 4);
    if (n_words > (len - MASK_HEAD) / 2)
        return zdt__corrupt(err, part, "%llu mask words run past the chunk's end",
                            (unsigned long long)n_words);
    if (x < L)
        return zdt__corrupt(err, part, "the mask stream's state %lu lies below 2^16",
                            (unsigned long)x);
    if (MASK_HEAD + 2 * n_words != len)
        return zdt__corrupt(err, part, "%zu bytes after the mask stream's words, within its "
                            "length", (size_t)(len - MASK_HEAD - 2 * n_words));
    words = buf + MASK_HEAD;
    /* row[0 .. n3 + 2): the row above with a 0 on either side (all 0 in a slice's first
       row); ctx = row + n3 + 2: each bit's context but for w (the bit before it, added as
       the row goes), made a row at a time without a branch */
    row = (uint8_t *)malloc(2 * n3 + 2);
    if (row == NULL)
        return zdt__nomem(err);
    ctx = row + n3 + 2;
    for (c = 0; c < MASK_CONTEXTS; c++)
        p[c] = 32768u;
    for (k0 = 0; k0 < n0; k0++) {
        for (k1 = 0; k1 < n1; k1++) {
            memset(row, 0, n3 + 2);
            for (k2 = 0; k2 < n2; k2++, i += n3) {
                /* the slice before: along dimension 1 of the grid, else (a first slice) along
                   dimension 0 at the same place of its first slice, else the reference mask */
                const uint8_t *before = k1 > 0 ? bits + i - s1 : k0 > 0 ? bits + i - s0 :
                                        reference != NULL ? reference + k2 * n3 : NULL;
                uint32_t bit = 0;
                for (k3 = 0; k3 < n3; k3++)
                    ctx[k3] = (uint8_t)((row[k3 + 1] << 1) | (row[k3] << 2) | (row[k3 + 2] << 3));
                if (before != NULL)
                    for (k3 = 0; k3 < n3; k3++)
                        ctx[k3] |= (uint8_t)((1 + before[k3]) << 4);
                k3 = 0;
                while (k3 < n3) {
                    uint32_t slot, f;
                    c = (int)(ctx[k3] | bit);
                    if (c != cur) {
                        /* (the context's probability in a register while it repeats) */
                        p[cur] = pc;
                        cur = c;
                        pc = p[c];
                    }
                    bit = zdt__binary_bit(&x, &pc);
                    bits[i + k3] = (uint8_t)bit;
                    set += bit;
                    if (x < L && !refill(&x, &pos, n_words, words))
                        goto ran_out;
                    k3++;
                    /* a run in a context whose probability has settled (a 0 after P < 16, a 1
                       after 2^16 - P < 16: the update leaves P as it is) takes the state's
                       steps alone while the context stays: the same arithmetic, bit for bit */
                    if (!bit && pc < 16) {
                        f = ONE - pc;
                        while (k3 < n3 && ctx[k3] == (uint32_t)cur) {
                            slot = x & 0xFFFFu;
                            if (slot >= f)
                                break;
                            x = f * (x >> 16) + slot;
                            bits[i + k3] = 0;
                            if (x < L && !refill(&x, &pos, n_words, words))
                                goto ran_out;
                            k3++;
                        }
                    } else if (bit && pc > ONE - 16) {
                        f = ONE - pc;
                        while (k3 < n3 && (ctx[k3] | 1u) == (uint32_t)cur) {
                            slot = x & 0xFFFFu;
                            if (slot < f)
                                break;
                            x = pc * (x >> 16) + slot - f;
                            bits[i + k3] = 1;
                            set++;
                            if (x < L && !refill(&x, &pos, n_words, words))
                                goto ran_out;
                            k3++;
                        }
                    }
                }
                memcpy(row + 1, bits + i, n3);
            }
        }
    }
    free(row);
    if (0) {
ran_out:
        free(row);
        return zdt__corrupt(err, part, "the mask stream ends before the chunk's %zu bits",
                            g->count);
    }
    if (pos != n_words || x != L)
        return zdt__corrupt(err, part,
                            "the mask stream does not end where it began (%llu words left, "
                            "state %lu, not 65536)", (unsigned long long)(n_words - pos),
                            (unsigned long)x);
    *count = set;
    return ZDT_PREDICT_OK;
}

int zdt_predict_reference_decode(const void *stream, size_t stream_size, uint64_t rows,
                                 uint64_t cols, uint8_t *bits, zdt_predict_error *err) {
    zdt__grid g;
    uint64_t shape[2];
    size_t count;
    int rc;
    zdt_predict_error local;
    if ((stream == NULL && stream_size) || bits == NULL)
        return zdt__fail(err, ZDT_PREDICT_E_PARAM, "", "NULL stream or bits");
    if (rows < 1 || cols < 1 || rows > (1u << 31) / cols)
        return zdt__fail(err, ZDT_PREDICT_E_PARAM, "",
                         "a reference mask's shape is two extents >= 1, at most 2^31 bits");
    shape[0] = rows;
    shape[1] = cols;
    zdt__grid_of(&g, shape, 2);
    /* (a grid of (1, 1, rows, cols) whatever extents are 1: the reference's own shape) */
    g.n[0] = g.n[1] = 1;
    g.n[2] = (size_t)rows;
    g.n[3] = (size_t)cols;
    g.st[3] = 1;
    g.st[2] = g.n[3];
    g.st[1] = g.st[0] = g.n[2] * g.n[3];
    rc = zdt__mask_decode((const uint8_t *)stream, stream_size, &g, NULL, bits, &count, "mask",
                          &local);
    if (rc != ZDT_PREDICT_OK)
        return zdt__fail(err, ZDT_PREDICT_E_PARAM, "", "the reference mask's stream does not "
                         "decode: %s", local.message + sizeof("zdt.predict: ") - 1);
    return ZDT_PREDICT_OK;
}
