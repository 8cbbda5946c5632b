/* The mask stream's encoder (docs/codecs/predict.md, "Masked chunks", "A reference mask"), as
   zdt.kernels._ans.mask_encode writes it: each bit's adaptive probability first to last, then
   the bits coded last to first from x = 2^16. */
#include "encode.h"

#define MASK_CONTEXTS 48
#define ONE 65536u

/* bits[0 .. n), each coded with the probability of a 1 pr[i] (16 bits, as the decoder held
   it): the state, the number of words and the words (a mask stream's layout) appended to out */
void zdt__binary_code(zdt__buf *out, const uint8_t *bits, const uint16_t *pr, size_t n) {
    const size_t cap = n + 2;
    uint32_t x = 65536u;
    size_t i, top = cap;
    uint16_t *w = (uint16_t *)malloc(cap * sizeof(uint16_t));
    if (w == NULL) {
        out->oom = 1;
        return;
    }
    /* x = (x / f) 2^16 + x % f + start, each bit last to first. The division was the loop's
       dependency chain: the quotient from m = floor(2^32 / f) instead, computed off the chain;
       (x m) >> 32 is x / f or one less (m <= 2^32 / f < m + 1 and x < 2^32), the remainder
       then says which: the same quotient and remainder exactly. m is the double quotient
       truncated: that is within 2^-24 of 2^32 / f, whose fraction is 0 or at least 1 / f >=
       2^-16 from 1, so it never rounds up to the next integer. (f stays within
       [15, 2^16 - 15], as the probabilities do. An m for x / f exactly, floor(2^48 / f) + 1,
       measured slower: more work off the chain.) */
    for (i = n; i-- > 0;) {
        const uint32_t q = pr[i], one = 0u - (uint32_t)(bits[i] != 0);
        const uint32_t f = (q & one) | ((ONE - q) & ~one), start = (ONE - q) & one;
        const uint64_t m = (uint64_t)(int64_t)(4294967296.0 / (double)f);
        uint32_t d, r, y;
        if ((uint64_t)x >= ((uint64_t)f << 16)) {
            w[--top] = (uint16_t)(x & 0xFFFF);
            x >>= 16;
        }
        d = (uint32_t)(((uint64_t)x * m) >> 32);
        r = x - d * f;
        y = (d << 16) + r + start;
        /* (r >= f: the quotient is d + 1, the remainder r - f) */
        x = r >= f ? y + (ONE - f) : y;
    }
    zdt__buf_u32(out, x);
    zdt__buf_u64(out, (uint64_t)(cap - top));
    if (zdt__buf_reserve(out, 2 * (cap - top)) == 0) {
        uint8_t *o = out->p + out->len;
        for (i = top; i < cap; i++)
            zdt__st16(o + 2 * (i - top), w[i]);
        out->len += 2 * (cap - top);
    }
    free(w);
}

void zdt__mask_encode(zdt__buf *out, const uint8_t *bits, const zdt__grid *g,
                      const uint8_t *reference) {
    const size_t n0 = g->n[0], n1 = g->n[1], n2 = g->n[2], n3 = g->n[3];
    const size_t n = g->count, s1 = n2 * n3, s0 = n1 * n2 * n3;
    uint32_t p[MASK_CONTEXTS];
    uint32_t pc = 32768u;
    uint16_t *pr;
    uint8_t *row;
    size_t i = 0, k0, k1, k2, k3;
    int c, cur = 0;
    if (n == 0) {
        zdt__buf_u32(out, 65536u);
        zdt__buf_u64(out, 0);
        return;
    }
    pr = (uint16_t *)malloc(n * sizeof(uint16_t));
    row = (uint8_t *)malloc(2 * n3 + 2);
    if (pr == NULL || row == NULL) {
        free(pr);
        free(row);
        out->oom = 1;
        return;
    }
    for (c = 0; c < MASK_CONTEXTS; c++)
        p[c] = 32768u;
    for (k0 = 0; k0 < n0; k0++)
        for (k1 = 0; k1 < n1; k1++) {
            /* row[0 .. n3 + 2): the row above with a 0 on either side (all 0 in a slice's
               first row); row[n3 + 2 ..]: each bit's context but for w */
            uint8_t *ctx = row + n3 + 2;
            memset(row, 0, n3 + 2);
            for (k2 = 0; k2 < n2; k2++, i += n3) {
                const uint8_t *before = k1 > 0 ? bits + i - s1 : k0 > 0 ? bits + i - s0 :
                                        reference != NULL ? reference + k2 * n3 : NULL;
                uint32_t bit = 0;
                for (k3 = 0; k3 < n3; k3++)
                    ctx[k3] = (uint8_t)((row[k3 + 1] << 1) | (row[k3] << 2) | (row[k3 + 2] << 3));
                if (before != NULL)
                    for (k3 = 0; k3 < n3; k3++)
                        ctx[k3] |= (uint8_t)((1 + before[k3]) << 4);
                for (k3 = 0; k3 < n3; k3++) {
                    c = (int)(ctx[k3] | bit);
                    if (c != cur) {
                        /* (the context's probability in a register while it repeats, as
                           the decoder: through p[c] each bit waited for the last's store) */
                        p[cur] = pc;
                        cur = c;
                        pc = p[c];
                    }
                    bit = bits[i + k3];
                    pr[i + k3] = (uint16_t)pc;
                    pc = zdt__binary_adapt(pc, bit);
                }
                memcpy(row + 1, bits + i, n3);
            }
        }
    zdt__binary_code(out, bits, pr, n);
    free(pr);
    free(row);
}
