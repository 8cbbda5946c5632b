/* Stage 3's encoder (docs/codecs/predict.md, "Stage 3"), as zdt.kernels._ans writes it: the
   (context, token) counts, the model choice from them, each table's frequencies normalised to
   2^12, the rANS coder (two interleaved states, coded last to first), the tables' bytes. Also
   _ans.order0_bits, auto's estimate. */
#include <math.h>
#include <stdlib.h>

#include "ans.h"
#include "encode.h"

#define TOKENS 64
#define FINE 60
#define MODELS 4
#define M_TOTAL 4096

/* the token of symbol s, its extra bits' count and value */
static inline int token_of(uint32_t s, int *nbits, uint32_t *bits) {
    int e = 0;
    if (s < 16) {
        *nbits = 0;
        *bits = 0;
        return (int)s;
    }
#if defined(__GNUC__)
    e = 31 - __builtin_clz(s);
#else
    while ((s >> (e + 1)) != 0)
        e++;
#endif
    *nbits = e - 2;
    *bits = s & ((1u << (e - 2)) - 1);
    return 16 + (e - 4) * 4 + (int)((s >> (e - 2)) & 3);
}

static inline size_t cell(const uint16_t *osym, const uint8_t *octx, size_t j) {
    uint32_t s = osym[j], bits;
    int nbits;
    return (size_t)octx[j] * TOKENS + (size_t)(s < 16 ? (int)s : token_of(s, &nbits, &bits));
}

void zdt__histogram(const uint16_t *osym, const uint8_t *octx, size_t n, int64_t *counts) {
    /* four counts, element j in count j % 4: a run of one (context, token) then increments
       four counters in turn, not one counter four times over (each increment waited for the
       last). Counts of 32 bits (the four tables in 60 KiB, not 120), added up every 2^31
       elements. */
    uint32_t *part = (uint32_t *)malloc(4 * FINE * TOKENS * sizeof(uint32_t));
    uint32_t *p0, *p1, *p2, *p3;
    size_t j = 0, t;
    memset(counts, 0, FINE * TOKENS * sizeof(int64_t));
    if (part == NULL) {
        /* (no memory for the split: one count) */
        for (j = 0; j < n; j++)
            counts[cell(osym, octx, j)]++;
        return;
    }
    p0 = part;
    p1 = p0 + FINE * TOKENS;
    p2 = p1 + FINE * TOKENS;
    p3 = p2 + FINE * TOKENS;
    while (j < n) {
        const size_t end = n - j > ((size_t)1 << 31) ? j + ((size_t)1 << 31) : n;
        memset(part, 0, 4 * FINE * TOKENS * sizeof(uint32_t));
        for (; j + 4 <= end; j += 4) {
            p0[cell(osym, octx, j)]++;
            p1[cell(osym, octx, j + 1)]++;
            p2[cell(osym, octx, j + 2)]++;
            p3[cell(osym, octx, j + 3)]++;
        }
        for (; j < end; j++)
            p0[cell(osym, octx, j)]++;
        for (t = 0; t < FINE * TOKENS; t++)
            counts[t] += (int64_t)p0[t] + p1[t] + p2[t] + p3[t];
    }
    free(part);
}

/* numpy's pairwise summation (its add.reduce over a contiguous float64 array) */
static double pairwise(const double *a, size_t n) {
    size_t i, j;
    if (n < 8) {
        double res = 0.0;
        for (i = 0; i < n; i++)
            res += a[i];
        return res;
    }
    if (n <= 128) {
        double r[8], res;
        for (j = 0; j < 8; j++)
            r[j] = a[j];
        for (i = 8; i < n - (n % 8); i += 8)
            for (j = 0; j < 8; j++)
                r[j] += a[i + j];
        res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        for (; i < n; i++)
            res += a[i];
        return res;
    } else {
        size_t n2 = n / 2;
        n2 -= n2 % 8;
        return pairwise(a, n2) + pairwise(a + n2, n - n2);
    }
}

/* the counts of the symbols below 4096 into small (zeroed), returns how many are not, the
   first `cap` of which go to ws: four tables, element j in table j % 4, then added up (a run
   of one symbol, code 0 at a coarse bound, incremented one counter after the other, each
   increment waiting for the last); a group of four with a wide symbol counted one by one */
static size_t small_counts(const uint16_t *sym, size_t n, uint32_t *small, uint16_t *ws,
                           size_t cap) {
    uint32_t *part = n >= 4096 ? (uint32_t *)calloc(3 * 4096, sizeof(uint32_t)) : NULL;
    size_t i = 0, wide = 0, t;
    if (part != NULL) {
        uint32_t *p[4];
        p[0] = small;
        p[1] = part;
        p[2] = part + 4096;
        p[3] = part + 2 * 4096;
        for (; i + 4 <= n; i += 4) {
            const unsigned a = sym[i], b = sym[i + 1], c = sym[i + 2], d = sym[i + 3];
            if (ZDT_UNLIKELY((a | b | c | d) >= 4096)) {
                for (t = 0; t < 4; t++) {
                    if (sym[i + t] < 4096) {
                        p[t][sym[i + t]]++;
                    } else {
                        if (wide < cap)
                            ws[wide] = sym[i + t];
                        wide++;
                    }
                }
                continue;
            }
            small[a]++;
            p[1][b]++;
            p[2][c]++;
            p[3][d]++;
        }
        for (t = 0; t < 4096; t++)
            small[t] += p[1][t] + p[2][t] + p[3][t];
        free(part);
    }
    for (; i < n; i++) {
        if (sym[i] < 4096) {
            small[sym[i]]++;
        } else {
            if (wide < cap)
                ws[wide] = sym[i];
            wide++;
        }
    }
    return wide;
}

static int by_value(const void *a, const void *b) {
    const uint16_t x = *(const uint16_t *)a, y = *(const uint16_t *)b;
    return (x > y) - (x < y);
}

/* c log2 c of each distinct wide symbol's count c, in increasing symbol order, into terms;
   returns how many. ws: the wide symbols when they are all there (`few`), else the table of
   the span they take */
static size_t wide_terms(const uint16_t *sym, size_t n, uint16_t *ws, size_t wide, int few,
                         double *terms, int *oom) {
    size_t runs = 0, i, j, span;
    unsigned lo = 65535, hi = 4096;
    uint32_t *big;
    if (few) {
        qsort(ws, wide, sizeof(uint16_t), by_value);
        for (i = 0; i < wide; i = j) {
            double c;
            for (j = i + 1; j < wide && ws[j] == ws[i]; j++)
                ;
            c = (double)(j - i);
            terms[runs++] = c * log2(c);
        }
        return runs;
    }
    for (i = 0; i < n; i++) {
        const unsigned s = sym[i], w = s >= 4096;
        lo = w && s < lo ? s : lo;
        hi = w && s > hi ? s : hi;
    }
    span = hi - lo + 1;
    big = (uint32_t *)calloc(span, sizeof(uint32_t));
    if (big == NULL) {
        *oom = 1;
        return 0;
    }
    for (i = 0; i < n; i++)
        if (sym[i] >= 4096)
            big[sym[i] - lo]++;
    for (i = 0; i < span; i++)
        if (big[i]) {
            double c = big[i];
            terms[runs++] = c * log2(c);
        }
    free(big);
    return runs;
}

/* the few wide symbols a chunk's estimate gathers and sorts (more: counted in a table) */
#define FEW_WIDE 1024

double zdt__order0_bits(const uint16_t *sym, size_t n, int *oom) {
    uint32_t small[4096];
    uint16_t ws[FEW_WIDE];
    size_t i, wide;
    double bits = 0.0;
    if (n == 0)
        return 0.0;
    memset(small, 0, sizeof(small));
    wide = small_counts(sym, n, small, ws, FEW_WIDE);
    for (i = 0; i < 4096; i++)
        if (small[i]) {
            double c = small[i];
            bits -= c * log2(c);
        }
    if (wide) {
        /* (np.unique's counts in increasing symbol order, summed as numpy sums; numpy's own
           log2 may differ from libm's in the last bit, on this estimate of rare wide codes) */
        double *terms = (double *)malloc((wide < 61440 ? wide : 61440) * sizeof(double));
        size_t runs;
        if (terms == NULL) {
            *oom = 1;
            return -1.0;
        }
        runs = wide_terms(sym, n, ws, wide, wide <= FEW_WIDE, terms, oom);
        if (*oom) {
            free(terms);
            return -1.0;
        }
        bits -= pairwise(terms, runs);
        free(terms);
    }
    return bits + (double)n * log2((double)n);
}

/* frequencies summing to 2^12 for the counts c[64], every counted token at least 1 */
static void normalise(const int64_t *c, uint16_t *f) {
    int64_t n = 0, diff, step;
    int64_t g[TOKENS];
    int order[TOKENS];
    int tok, top = 0, i, k, t;
    for (tok = 0; tok < TOKENS; tok++) {
        n += c[tok];
        if (c[tok] > c[top])
            top = tok;
    }
    if (n == 0) {
        for (tok = 0; tok < TOKENS; tok++)
            f[tok] = 0;
        return;
    }
    diff = M_TOTAL;
    for (tok = 0; tok < TOKENS; tok++) {
        g[tok] = 0;
        if (c[tok] > 0) {
            g[tok] = (int64_t)floor((double)c[tok] * ((double)M_TOTAL / (double)n) + 0.5);
            if (g[tok] < 1)
                g[tok] = 1;
        }
        diff -= g[tok];
    }
    if (g[top] + diff >= 1) {
        g[top] += diff;
    } else {
        for (i = 0; i < TOKENS; i++) {
            k = i;
            while (k > 0 && c[order[k - 1]] < c[i]) {
                order[k] = order[k - 1];
                k--;
            }
            order[k] = i;
        }
        i = 0;
        while (diff) {
            t = order[i % TOKENS];
            if (g[t] > 1) {
                step = -diff < g[t] - 1 ? -diff : g[t] - 1;
                g[t] -= step;
                diff += step;
            }
            i++;
        }
    }
    for (tok = 0; tok < TOKENS; tok++)
        f[tok] = (uint16_t)g[tok];
}

static int model_counts(const int64_t *hist, int m, int64_t (*counts)[TOKENS]) {
    int f, tok, n_tables = zdt__ans_n_tables[m];
    for (f = 0; f < n_tables; f++)
        for (tok = 0; tok < TOKENS; tok++)
            counts[f][tok] = 0;
    for (f = 0; f < FINE; f++)
        for (tok = 0; tok < TOKENS; tok++)
            counts[zdt__ans_table_of(m, f)][tok] += hist[f * TOKENS + tok];
    return n_tables;
}

/* each model's estimated bits (its tables' bytes, the tokens at their tables' entropy, the
   extra bits); the index of the least (the first of equals) */
static int model_costs(const int64_t *hist, double *cost) {
    int m, t, tok, c, best = 0, n_tables;
    int64_t n;
    double bits, table_bytes, s, extra = 0.0;
    int64_t counts[FINE][TOKENS];
    for (t = 0; t < FINE; t++)
        for (tok = 16; tok < TOKENS; tok++)
            extra += (double)hist[t * TOKENS + tok] * ((tok - 16) / 4 + 2);
    for (m = 0; m < MODELS; m++) {
        n_tables = model_counts(hist, m, counts);
        bits = 0.0;
        table_bytes = 0.0;
        for (t = 0; t < n_tables; t++) {
            n = 0;
            s = 0.0;
            c = 0;
            for (tok = 0; tok < TOKENS; tok++)
                if (counts[t][tok] > 0) {
                    n += counts[t][tok];
                    s += (double)counts[t][tok] * log2((double)counts[t][tok]);
                    c++;
                }
            if (n)
                bits += (double)n * log2((double)n) - s;
            table_bytes += 1 + c + (c > 1 ? 1.5 * (c - 1) : 0.0);
        }
        cost[m] = 8.0 * (1 + table_bytes) + bits + extra;
        if (cost[m] < cost[best])
            best = m;
    }
    return best;
}

double zdt__ans_bits(const int64_t *counts) {
    double cost[MODELS];
    return cost[model_costs(counts, cost)];
}

/* _ans.model: the model of least estimated bits (the first of equals), its tables */
static int choose_model(const int64_t *hist, uint16_t (*freq)[TOKENS], double *bits) {
    int t, best, n_tables;
    double cost[MODELS];
    int64_t counts[FINE][TOKENS];
    best = model_costs(hist, cost);
    *bits = cost[best];
    n_tables = model_counts(hist, best, counts);
    for (t = 0; t < n_tables; t++)
        normalise(counts[t], freq[t]);
    return best;
}

/* a token of a table, as the coder uses it: x's next value is x + start + q (2^12 - freq) for
   q = floor(x / freq), which is (q << 12) + x % freq + start */
typedef struct {
    uint64_t rcp;               /* ceil(2^44 / freq) */
    uint32_t xmax;              /* (freq << 20) - 1: a larger x puts out a word first */
    uint16_t cmpl;              /* 2^12 - freq */
    uint16_t start;
} sym_t;

/* the token's step on a state already brought below 2^20 freq: x becomes
   ((x div freq) << 12) + x mod freq + start. floor(x / freq) = (x ceil(2^44 / freq)) >> 44,
   exactly for x < 2^20 freq and freq <= 2^12 (the rounding error x (ceil - 2^44 / freq) /
   2^44 stays below 1 / freq) */
static inline uint32_t step(uint32_t x, const sym_t *s) {
    const uint32_t q = (uint32_t)(((uint64_t)x * s->rcp) >> 44);
    return x + s->start + q * s->cmpl;
}

/* symbol k onto state x with the table tab (its extra bits first); its words (0, 1 or 2)
   appended at *w, in the order put out (the stream holds them last first) */
static inline uint32_t put(uint32_t x, uint32_t k, const sym_t *tab, uint16_t **w) {
    const sym_t *s = tab + k;
    if (ZDT_UNLIKELY(k >= 16)) {
        int nbits;
        uint32_t bits;
        s = tab + token_of(k, &nbits, &bits);
        if (x >= (1u << (32 - nbits))) {
            *(*w)++ = (uint16_t)(x & 0xFFFF);
            x >>= 16;
        }
        x = (x << nbits) | bits;
    }
    if (x > s->xmax) {
        *(*w)++ = (uint16_t)(x & 0xFFFF);
        x >>= 16;
    }
    return step(x, s);
}

/* x's low word put out where `need` (stored either way, *w moved only then), x less it */
static inline uint32_t put_word_if(uint32_t x, uint32_t need, uint16_t **w) {
    **w = (uint16_t)(x & 0xFFFF);
    *w += need;
    return need ? x >> 16 : x;
}

/* put without a branch on the symbol or the state, the same arithmetic: where a chunk's
   symbols take a bit or more each, whether one has extra bits and whether the state puts out
   a word are coin tosses that mispredict (a word is stored either way, the pointer moved only
   where it counts: the room holds two words a symbol); where most are code 0, put's
   branches predict and take less */

static inline uint32_t put_flat(uint32_t x, uint32_t k, const sym_t *tab, uint16_t **w) {
#if defined(__GNUC__)
    const uint32_t e = 31 - (uint32_t)__builtin_clz(k | 16u);
    const uint32_t wide = k >= 16, nbits = wide ? e - 2 : 0;
    const uint32_t tok = wide ? 16 + (e - 4) * 4 + ((k >> (e - 2)) & 3) : k;
    const uint32_t bits = k & ((1u << nbits) - 1u);
#else
    int nb;
    uint32_t bits;
    const uint32_t tok = (uint32_t)token_of(k, &nb, &bits), nbits = (uint32_t)nb;
#endif
    const sym_t *s = tab + tok;
    x = put_word_if(x, (uint64_t)x >= ((uint64_t)1 << (32 - nbits)), w);
    x = (x << nbits) | bits;
    return step(put_word_if(x, x > s->xmax, w), s);
}

/* symbols lo .. hi - 1 coded last to first, the j-th on state xs[j % 2], each with its
   context's table; their words appended at w (at most two a symbol): returns the end. (A
   function of its own: in zdt__ans_pack's body the loop's pointers lived on the stack.) */
static ZDT_ALWAYS_INLINE uint16_t *code_with(const uint16_t *sym, const uint8_t *ctx, size_t lo,
                                            size_t hi, const sym_t *const *by_ctx, uint16_t *w,
                                            uint32_t *xs, int flat) {
    uint32_t x0 = xs[0], x1 = xs[1];
    size_t j = hi;              /* the next symbol: j - 1 */
    if (j > lo && (j - 1) % 2 == 1) {
        j--;
        x1 = (flat ? put_flat : put)(x1, sym[j], by_ctx[ctx[j]], &w);
    }
    for (; j - lo >= 2; j -= 2) {
        x0 = (flat ? put_flat : put)(x0, sym[j - 1], by_ctx[ctx[j - 1]], &w);
        x1 = (flat ? put_flat : put)(x1, sym[j - 2], by_ctx[ctx[j - 2]], &w);
    }
    if (j > lo)
        x0 = (flat ? put_flat : put)(x0, sym[j - 1], by_ctx[ctx[j - 1]], &w);
    xs[0] = x0;
    xs[1] = x1;
    return w;
}

static ZDT_NOINLINE uint16_t *code(const uint16_t *sym, const uint8_t *ctx, size_t lo, size_t hi,
                                   const sym_t *const *by_ctx, uint16_t *w, uint32_t *xs) {
    return code_with(sym, ctx, lo, hi, by_ctx, w, xs, 0);
}

static ZDT_NOINLINE uint16_t *code_flat(const uint16_t *sym, const uint8_t *ctx, size_t lo,
                                        size_t hi, const sym_t *const *by_ctx, uint16_t *w,
                                        uint32_t *xs) {
    return code_with(sym, ctx, lo, hi, by_ctx, w, xs, 1);
}

#define CODE_BLOCK 65536u       /* symbols coded between checks of the words' room */

void zdt__ans_pack(zdt__buf *out, const uint16_t *osym, const uint8_t *octx, size_t n,
                   const int64_t *counts) {
    uint16_t freq[FINE][TOKENS];
    sym_t *tabs;
    const sym_t *by_ctx[FINE];
    uint16_t *w;
    size_t cap = 2 * (n < CODE_BLOCK ? n : CODE_BLOCK) + 2, used = 0, hi, lo, j, at;
    uint32_t xs[2] = {ZDT_ANS_L, ZDT_ANS_L};
    double est_bits;
    int best, n_tables, t, tok, k, last;
    uint8_t *o;
    best = choose_model(counts, freq, &est_bits);
    n_tables = zdt__ans_n_tables[best];
    tabs = (sym_t *)calloc((size_t)n_tables * TOKENS, sizeof(sym_t));
    w = (uint16_t *)malloc(cap * sizeof(uint16_t));
    if (tabs == NULL || w == NULL || zdt__buf_reserve(out, 1 + (size_t)n_tables * (1 + 3 * TOKENS)
                                                      + 16) < 0) {
        free(tabs);
        free(w);
        out->oom = 1;
        return;
    }
    for (t = 0; t < n_tables; t++) {
        uint32_t start = 0;
        for (tok = 0; tok < TOKENS; tok++)
            if (freq[t][tok]) {
                sym_t *sy = &tabs[t * TOKENS + tok];
                sy->rcp = ((1ull << 44) + freq[t][tok] - 1) / freq[t][tok];
                sy->xmax = (uint32_t)(((uint64_t)freq[t][tok] << 20) - 1);
                sy->cmpl = (uint16_t)(M_TOTAL - freq[t][tok]);
                sy->start = (uint16_t)start;
                start += freq[t][tok];
            }
    }
    for (t = 0; t < FINE; t++)
        by_ctx[t] = tabs + TOKENS * zdt__ans_table_of(best, t);
    /* the words in the order put out, in a buffer that grows: a block's symbols put out two
       words each at most (not 2n + 2 words for the whole chunk, most of them never used) */
    for (hi = n; hi > 0; hi = lo) {
        lo = hi > CODE_BLOCK ? hi - CODE_BLOCK : 0;
        if (cap - used < 2 * (hi - lo) + 2) {
            uint16_t *more;
            cap = 2 * cap > used + 2 * (hi - lo) + 2 ? 2 * cap : used + 2 * (hi - lo) + 2;
            more = (uint16_t *)realloc(w, cap * sizeof(uint16_t));
            if (more == NULL) {
                free(tabs);
                free(w);
                out->oom = 1;
                return;
            }
            w = more;
        }
        /* (a bit a symbol or more: put_flat, whose branches would mispredict; measured
           crossing at about 1.1 bits) */
        used = (size_t)((est_bits >= (double)n ? code_flat : code)(osym, octx, lo, hi, by_ctx,
                                                                   w + used, xs) - w);
    }
    /* the model byte and the tables */
    o = out->p + out->len;
    at = 0;
    o[at++] = (uint8_t)best;
    for (t = 0; t < n_tables; t++) {
        k = 0;
        last = -1;
        for (tok = 0; tok < TOKENS; tok++)
            if (freq[t][tok]) {
                k++;
                last = tok;
            }
        o[at++] = (uint8_t)k;
        for (tok = 0; tok < TOKENS; tok++)
            if (freq[t][tok])
                o[at++] = (uint8_t)tok;
        for (tok = 0; tok < last; tok++) {
            uint16_t fq = freq[t][tok];
            if (fq == 0)
                continue;
            if (fq < 0x80) {
                o[at++] = (uint8_t)fq;
            } else {
                o[at++] = (uint8_t)((fq & 0x7F) | 0x80);
                o[at++] = (uint8_t)(fq >> 7);
            }
        }
    }
    out->len += at;
    zdt__buf_u32(out, xs[0]);
    zdt__buf_u32(out, xs[1]);
    zdt__buf_u64(out, (uint64_t)used);
    if (zdt__buf_reserve(out, 2 * used) == 0) {
        /* (the last word put out first) */
        o = out->p + out->len;
        for (j = 0; j < used; j++)
            zdt__st16(o + 2 * j, w[used - 1 - j]);
        out->len += 2 * used;
    }
    free(tabs);
    free(w);
}
