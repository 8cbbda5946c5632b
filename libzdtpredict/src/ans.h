/* Entropy stage 3 (docs/codecs/predict.md, "Stage 3"): rANS with two interleaved states and a
   frequency table for each context. ans.c reads the stage's bytes; the per-symbol step is
   inline here, run by the traversals where each element is reconstructed. */
#ifndef ZDT_PREDICT_ANS_H
#define ZDT_PREDICT_ANS_H

#include "internal.h"

#define ZDT_ANS_TOKENS 64
#define ZDT_ANS_FINE 60         /* 4 level groups x 15 pairs of classes */
#define ZDT_ANS_L 65536u
#define ZDT_ANS_ZERO_MIN 3840u  /* a context's token 2 tested first from this frequency (/4096) */
/* Lorenzo rows whose (0, 0) context gives code 0 less than this (/4096) look up each
   symbol's token for every class the one before may have */
#define ZDT_ANS_SPECULATE 2048u

/* the class of a symbol < 16 (symbols >= 16: class 3): 0 code 0; 1 codes -1, 1; 2 codes -3 ..
   3 otherwise; 3 raw values and larger codes; 4 the fill value */
extern const uint8_t zdt__class16[16];
/* zdt__class16 four bits a symbol, symbol 0 lowest (its one definition: ans.c builds the
   table from it) */
#define ZDT_CLASS16_PACKED 0x3333333222211043ull

/* the frequency tables of each model (0 .. 3), and the table of fine context f = 15 g + pair
   in model m (the spec's model map: stage 3's decoder and encoder alike) */
static const int zdt__ans_n_tables[4] = {1, 4, 16, 60};

static inline int zdt__ans_table_of(int m, int f) {
    int g = f / 15, pair = f % 15, hi = 0;
    if (m == 0)
        return 0;
    if (m == 1)
        return g;
    if (m == 2) {
        while ((hi + 1) * (hi + 2) / 2 <= pair)
            hi++;
        return 4 * g + (hi == 0 ? 0 : hi <= 2 ? 1 : hi == 3 ? 2 : 3);
    }
    return f;
}

/* a context's token 2 (code 0): its start and frequency (0: its table has no token 2, or
   is empty) */
typedef struct {
    uint32_t start, freq;
} zdt__zero_entry;

typedef struct {
    int model;
    int n_tables;
    uint8_t *lut;               /* table * 4096 + slot -> token */
    uint32_t *info;             /* table * 64 + token -> freq | start << 16 */
    /* a level group's contexts by the classes a, b of the two neighbours, at [g][a << 3 | b]:
       the table, or -1 for an empty one */
    int16_t ctx[4][40];
    zdt__zero_entry *zero;      /* [g * 40 + c]: the token 2 of each context's table, as ctx */
    uint32_t x0, x1;            /* x0: the next symbol's state (swapped after each) */
    const uint8_t *words;       /* the words, little-endian u16, in the chunk itself */
    uint64_t n_words, pos;
    int err;                    /* 1: the words ran out; 2: a context whose table is empty */
} zdt__ans;

/* reads stage 3's bytes buf[0 .. len): model, tables, states, words; *end: the offset after
   the words. Allocates a->lut and a->info (freed by zdt__ans_free, also on failure). */
int zdt__ans_read(zdt__ans *a, const uint8_t *buf, size_t len, size_t *end,
                  zdt_predict_error *err);
void zdt__ans_free(zdt__ans *a);

static inline int zdt__ans_refill(zdt__ans *a) {
    if (a->x0 < ZDT_ANS_L) {
        if (ZDT_UNLIKELY(a->pos >= a->n_words)) {
            a->err = 1;
            return 0;
        }
        a->x0 = (a->x0 << 16) | zdt__le16(a->words + 2 * a->pos);
        a->pos++;
    }
    return 1;
}

/* zdt__ans_refill for a state and position in the caller's locals */
static ZDT_ALWAYS_INLINE int zdt__ans_refill_with(zdt__ans *a, uint32_t *x, uint64_t *pos) {
    if (*x < ZDT_ANS_L) {
        if (ZDT_UNLIKELY(*pos >= a->n_words)) {
            a->err = 1;
            return 0;
        }
        *x = (*x << 16) | zdt__le16(a->words + 2 * *pos);
        (*pos)++;
    }
    return 1;
}

/* One symbol with state *x and table t, the state not swapped (the caller's two states in
   locals): the symbol, or -1 on a corrupt stream (a->err says why). */
static ZDT_ALWAYS_INLINE int zdt__ans_decode_with(zdt__ans *a, int t, uint32_t *xp,
                                                  uint64_t *posp) {
    uint32_t x = *xp, slot, tok, entry;
    uint64_t pos = *posp;
    int k;
    if (ZDT_UNLIKELY(t < 0)) {
        a->err = 2;
        return -1;
    }
    slot = x & 4095u;
    tok = a->lut[((size_t)t << 12) + slot];
    entry = a->info[(size_t)t * ZDT_ANS_TOKENS + tok];
    x = (entry & 0xFFFFu) * (x >> 12) + slot - (entry >> 16);
    if (!zdt__ans_refill_with(a, &x, &pos))
        return -1;
    k = (int)tok;
    if (ZDT_UNLIKELY(tok >= 16)) {
        uint32_t nbits = (tok - 16) / 4 + 2;
        k = (int)(((4u | ((tok - 16) & 3u)) << nbits) | (x & ((1u << nbits) - 1)));
        x >>= nbits;
        if (!zdt__ans_refill_with(a, &x, &pos))
            return -1;
    }
    *xp = x;
    *posp = pos;
    return k;
}

/* the next symbol, decoded with table t (-1: empty, a corrupt chunk); -1 on a corrupt
   stream (a->err says why) */
static inline int zdt__ans_symbol(zdt__ans *a, int t) {
    uint32_t slot, tok, entry, x;
    int k;
    if (ZDT_UNLIKELY(t < 0)) {
        a->err = 2;
        return -1;
    }
    slot = a->x0 & 4095u;
    tok = a->lut[((size_t)t << 12) + slot];
    entry = a->info[(size_t)t * ZDT_ANS_TOKENS + tok];
    a->x0 = (entry & 0xFFFFu) * (a->x0 >> 12) + slot - (entry >> 16);
    if (!zdt__ans_refill(a))
        return -1;
    k = (int)tok;
    if (tok >= 16) {
        uint32_t nbits = (tok - 16) / 4 + 2;
        k = (int)(((4u | ((tok - 16) & 3u)) << nbits) | (a->x0 & ((1u << nbits) - 1)));
        a->x0 >>= nbits;
        if (!zdt__ans_refill(a))
            return -1;
    }
    x = a->x0;
    a->x0 = a->x1;
    a->x1 = x;
    return k;
}

#endif
