/* The traversals of one build: included by predictors.c once for each (element type, symbol
   source), with
     WALK(name)   the build's name of a function,
     RECONSTRUCT  zdt__reconstruct_f32 or zdt__reconstruct_f64,
     WALK_F32     1 for a float32 chunk,
     WALK_ANS     1 where stage 3 decodes each symbol where its element is visited (else the
                  symbols are read from w->sym). */

/* element i, predicted p, whose stage 3 table is `table` (a: the traversal's own copy of the
   coder, w its own copy of the walk: locals, which no store to the chunk's arrays can alias,
   so the compiler keeps their fields in registers; through the caller's pointers a byte
   store to w->cls made it load them again for every element, 1.7x the time) */
#ifndef ZDT_WALK_BLOCK
#define ZDT_WALK_BLOCK 256      /* a span's symbols decoded ahead of its elements */
#endif

static inline int WALK(visit)(zdt__walk *w, zdt__ans *a, size_t i, double p, int table) {
    int k;
#if WALK_ANS
    if (w->mask != NULL && w->mask[i]) {
        /* a masked element: no symbol, reconstructed as a fill-value symbol is (class 4) */
        w->cls[i] = 4;
        w->nfill++;
        w->v[i] = zdt__finite_or_zero(p);
#if WALK_F32
        w->out32[i] = w->fill32;
#endif
        return 0;
    }
    k = zdt__ans_symbol(a, table);
    if (ZDT_UNLIKELY(k < 0))
        return -1;
    w->cls[i] = k < 16 ? zdt__class16[k] : 3;
#else
    (void)table;
    (void)a;
    k = w->sym[i];
#endif
    return RECONSTRUCT(w, i, p, k);
}

/* Predictor 1 along the rest of a row, n elements from flat index i, where no Lorenzo term
   falls off the grid (p: the `count` terms at offsets `off`, added or taken away as `add`
   says); `boff`: the offset of stage 3's neighbour B (A is the element before). Stage 3, a
   block at a time: its symbols (the context of each waits on the class of the one before:
   code 0's, by the coder's test of token 2 alone, is known early), then its elements (each
   waits on the one before). */
static ZDT_ALWAYS_INLINE int WALK(lorenzo_row)(zdt__walk *w, zdt__ans *a, size_t i, size_t n,
                                               const size_t *off, const int *add, int count,
                                               const int16_t *ctx,
                                               const zdt__zero_entry *zent, size_t boff) {
    const double *v = w->v;
    size_t j, m;
#if WALK_ANS
    uint16_t ks[ZDT_WALK_BLOCK];
    uint8_t *cls = w->cls;
    const uint8_t *words = a->words;
    const uint64_t n_words = a->n_words;
#else
    (void)a;
    (void)ctx;
    (void)zent;
    (void)boff;
#endif
    for (; n; n -= m, i += m) {
        m = n < ZDT_WALK_BLOCK ? n : ZDT_WALK_BLOCK;
#if WALK_ANS
        if (zent[0].freq < ZDT_ANS_SPECULATE) {
            /* (code 0 not most symbols: each symbol's token looked up for every class the
               one before may have, off the chain that class is on, then chosen) */
            const uint8_t *lut = a->lut;
            const uint32_t *info = a->info;
            uint32_t x0 = a->x0, x1 = a->x1, x;
            uint64_t pos = a->pos;
            unsigned prev = cls[i - 1];
            for (j = 0; j < m; j++) {
                size_t e = i + j;
                const unsigned bc = cls[e - boff];
                const uint32_t slot = x0 & 4095u;
                uint64_t toks = 0;
                uint32_t tok, entry;
                unsigned p;
                int table, k;
                for (p = 0; p < 5; p++) {
                    const int tp = ctx[(p << 3) | bc];
                    toks |= (uint64_t)lut[((size_t)(tp < 0 ? 0 : tp) << 12) + slot] << (8 * p);
                }
                tok = (uint32_t)(toks >> (8 * prev)) & 0xFFu;
                table = ctx[(prev << 3) | bc];
                if (ZDT_UNLIKELY(table < 0)) {
                    a->err = 2;
                    return -1;
                }
                entry = info[(size_t)table * ZDT_ANS_TOKENS + tok];
                x0 = (entry & 0xFFFFu) * (x0 >> 12) + slot - (entry >> 16);
                if (!zdt__ans_refill_with(a, &x0, &pos))
                    return -1;
                k = (int)tok;
                if (tok >= 16) {
                    uint32_t nbits = (tok - 16) / 4 + 2;
                    k = (int)(((4u | ((tok - 16) & 3u)) << nbits) | (x0 & ((1u << nbits) - 1)));
                    x0 >>= nbits;
                    if (!zdt__ans_refill_with(a, &x0, &pos))
                        return -1;
                }
                x = x0;
                x0 = x1;
                x1 = x;
                prev = tok < 16 ? (unsigned)(ZDT_CLASS16_PACKED >> (4 * tok)) & 15u : 3u;
                cls[e] = (uint8_t)prev;
                ks[j] = (uint16_t)k;
            }
            a->x0 = x0;
            a->x1 = x1;
            a->pos = pos;
        } else {
            uint32_t x0 = a->x0, x1 = a->x1, x;
            uint64_t pos = a->pos;
            unsigned prev = cls[i - 1];
            for (j = 0; j < m; j++) {
                size_t e = i + j;
                unsigned c = (prev << 3) | cls[e - boff];
                uint32_t d = (x0 & 4095u) - zent[c].start, f = zent[c].freq;
                if (ZDT_LIKELY(d < f)) {
                    x0 = f * (x0 >> 12) + d;
                    if (ZDT_UNLIKELY(x0 < ZDT_ANS_L)) {
                        if (ZDT_UNLIKELY(pos >= n_words)) {
                            a->err = 1;
                            return -1;
                        }
                        x0 = (x0 << 16) | zdt__le16(words + 2 * pos);
                        pos++;
                    }
                    x = x0;
                    x0 = x1;
                    x1 = x;
                    cls[e] = 0;
                    prev = 0;
                    ks[j] = 2;
                } else {
                    int k = zdt__ans_decode_with(a, ctx[c], &x0, &pos);
                    if (ZDT_UNLIKELY(k < 0))
                        return -1;
                    x = x0;
                    x0 = x1;
                    x1 = x;
                    prev = k < 16 ? zdt__class16[k] : 3;
                    cls[e] = (uint8_t)prev;
                    ks[j] = (uint16_t)k;
                }
            }
            a->x0 = x0;
            a->x1 = x1;
            a->pos = pos;
        }
#endif
        {
            /* (the element before, off[0] = 1 back, carried in a register: loaded from
               where it was just stored it would wait on the store) */
            double left = v[i - 1];
            double *vo = w->v;
            for (j = 0; j < m; j++) {
                size_t e = i + j;
                double p = 0.0;
                int t;
#if WALK_ANS
                int k = ks[j];
#else
                int k = w->sym[e];
#endif
                if (count == 3) {
                    /* two real dimensions: the terms of masks 1, 2 (added), 3 (taken away) */
                    p = ((p + left) + v[e - off[1]]) - v[e - off[2]];
                } else {
                    p = p + left;
                    for (t = 1; t < count; t++)
                        p = add[t] ? p + v[e - off[t]] : p - v[e - off[t]];
                }
                if (ZDT_LIKELY((unsigned)(k - 2) < 14u)) {
                    double r = p + w->qc[k];
#if WALK_F32
                    float r32 = (float)r;
                    w->out32[e] = r32;
                    left = (double)r32;
#else
                    left = r;
#endif
                    vo[e] = left;
                } else {
                    if (RECONSTRUCT(w, e, p, k) < 0)
                        return -1;
                    left = v[e];
                }
            }
        }
    }
    return 0;
}

/* Predictor 1, in C order: the sum of the Lorenzo terms, in the order of their bit masks.
   Stage 3: A one step back along the last real dimension, B along the one before it. */
static int WALK(lorenzo)(zdt__walk *wp, const zdt__grid *g) {
    int count = 0, m, b, r1 = -1, r2 = -1, d, rc = 0;
    int mask[15], add[15];
    size_t off[15], k[4], i = 0;
    int16_t ctx[40];
    zdt__zero_entry zent[40];
    zdt__walk w = *wp;
    zdt__ans a;
    const double *v = w.v;
#if WALK_ANS
    a = *wp->ans;
#endif
    for (m = 1; m < 16; m++) {
        int real = 1, bits = 0;
        size_t o = 0;
        for (b = 0; b < 4; b++)
            if (m & (1 << b)) {
                real &= g->n[3 - b] > 1;
                bits++;
                o += g->st[3 - b];
            }
        if (!real)
            continue;
        mask[count] = m;
        off[count] = o;
        add[count] = bits & 1;
        count++;
    }
    for (d = 3; d >= 0; d--)
        if (g->n[d] > 1) {
            if (r1 < 0)
                r1 = d;
            else if (r2 < 0)
                r2 = d;
        }
    (void)r1;
    (void)r2;
#if WALK_ANS
    memcpy(ctx, a.ctx[0], sizeof(ctx));
    memcpy(zent, a.zero, sizeof(zent));
#endif
    for (k[0] = 0; k[0] < g->n[0]; k[0]++)
        for (k[1] = 0; k[1] < g->n[1]; k[1]++)
            for (k[2] = 0; k[2] < g->n[2]; k[2]++) {
                /* the row from k[3] = 1 on: every term on the grid? (then no term is 0) */
                int row_zero = (k[2] == 0) << 1 | (k[1] == 0) << 2 | (k[0] == 0) << 3, t;
                size_t plain = g->n[3], boff = 1;
                for (t = 0; t < count && !(mask[t] & row_zero); t++)
                    ;
#if WALK_ANS
                if (r2 >= 0 && k[r2] > 0)
                    boff = g->st[r2];
                if (w.mask != NULL)
                    t = -1;
#endif
                if (t == count && g->n[3] > 1)
                    plain = 1;
                for (k[3] = 0; k[3] < plain; k[3]++, i++) {
                    int zero = (k[3] == 0) | (k[2] == 0) << 1 | (k[1] == 0) << 2 |
                               (k[0] == 0) << 3;
                    int t, table = 0;
                    double p = 0.0;
                    for (t = 0; t < count; t++) {
                        double term = (mask[t] & zero) ? 0.0 : v[i - off[t]];
                        p = add[t] ? p + term : p - term;
                    }
#if WALK_ANS
                    {
                        int has_a = r1 >= 0 && k[r1] > 0, has_b = r2 >= 0 && k[r2] > 0;
                        size_t ia = has_a ? i - g->st[r1] : 0, ib = has_b ? i - g->st[r2] : 0;
                        if (!has_a && !has_b)
                            table = a.ctx[0][0];
                        else {
                            if (!has_a)
                                ia = ib;
                            if (!has_b)
                                ib = ia;
                            table = a.ctx[0][(w.cls[ia] << 3) | w.cls[ib]];
                        }
                    }
#endif
                    if (WALK(visit)(&w, &a, i, p, table) < 0) {
                        rc = -1;
                        goto done;
                    }
                }
                if (plain < g->n[3]) {
                    if (WALK(lorenzo_row)(&w, &a, i, g->n[3] - 1, off, add, count, ctx, zent,
                                          boff) < 0) {
                        rc = -1;
                        goto done;
                    }
                    i += g->n[3] - 1;
                }
            }
done:
    *wp = w;
#if WALK_ANS
    *wp->ans = a;
#endif
    return rc;
}

#if WALK_F32
#define OUT32 w->out32
#else
#define OUT32 NULL
#endif

#if WALK_ANS
/* element e's value r, a span's element of code below 16: the output (a float32 chunk's
   rounded once, its predictor value that float32) */
static ZDT_ALWAYS_INLINE void WALK(put)(zdt__walk *w, double *vo, size_t e, double r) {
#if WALK_F32
    w->out32[e] = (float)r;
    vo[e] = (double)(float)r;
#else
    (void)w;
    vo[e] = r;
#endif
}
#endif

#if WALK_ANS && !defined(ZDT_WALK_STEP)
/* One symbol of a span, element CP (its class's place) and J (its place in the block), with
   state X (Y, the other state, untouched): token 2 (code 0) from its context's entry alone, no lookup of
   the slot's token on the state's chain; any other token through the coder's whole step, its
   symbol into ks (symbols 3 .. 15) or kept as an exception (raw values, the fill value,
   symbols from 16). CTX: its fine context's index, a << 3 | b. */
#define ZDT_WALK_STEP(X, Y, CP, J, CTX)                                                      \
    do {                                                                                     \
        unsigned c_ = (CTX);                                                                 \
        uint32_t d_ = ((X) & 4095u) - zent[c_].start, f_ = zent[c_].freq;                    \
        if (ZDT_LIKELY(d_ < f_)) {                                                           \
            (X) = f_ * ((X) >> 12) + d_;                                                     \
            if (ZDT_UNLIKELY((X) < ZDT_ANS_L)) {                                             \
                if (ZDT_UNLIKELY(pos >= n_words)) {                                          \
                    a->err = 1;                                                              \
                    return -1;                                                               \
                }                                                                            \
                (X) = ((X) << 16) | zdt__le16(words + 2 * pos);                              \
                pos++;                                                                       \
            }                                                                                \
            *(CP) = 0;                                                                       \
        } else {                                                                             \
            int k_ = zdt__ans_decode_with(a, ctx[c_], &(X), &pos);                           \
            if (ZDT_UNLIKELY(k_ < 0))                                                        \
                return -1;                                                                   \
            *(CP) = k_ < 16 ? zdt__class16[k_] : 3;                                          \
            if ((unsigned)(k_ - 2) < 14u) {                                                  \
                ks[J] = (uint8_t)k_;                                                         \
                coded = 1;                                                                   \
            } else {                                                                         \
                xj[nx] = (uint16_t)(J);                                                      \
                xk[nx++] = (uint16_t)k_;                                                     \
            }                                                                                \
        }                                                                                    \
    } while (0)

/* the context index of the element at CP from its neighbours' classes o before and after */
#define ZDT_WALK_CTX(CP) (((unsigned)(CP)[-(ptrdiff_t)o] << 3) | (CP)[o])

/* along a row at step 1 (es 2, o 1), element e's neighbour after it is the next element's
   before it: the context from b, the class after, and *ca, the class before already shifted */
static ZDT_ALWAYS_INLINE unsigned zdt__row_ctx(unsigned *ca, unsigned b) {
    unsigned c = *ca | b;
    *ca = b << 3;
    return c;
}
#endif

#if WALK_ANS
/* a span block's elements i + j es (j < m) of codes below 16 (ks[j], 2 .. 15; NULL: every
   one code 0), each the cubic along stride o plus q c: the first several at a time
   (zdt__span_put), the rest one by one */
static ZDT_ALWAYS_INLINE void WALK(put_block)(zdt__walk *w, size_t i, size_t m, size_t es,
                                              size_t o, const uint8_t *ks) {
    double *vo = w->v;
    const double *v = w->v, *qc = w->qc;
    size_t j = zdt__span_put(w->isa, vo, OUT32, i, m, es, o, ks, qc), e;
    if (ks == NULL) {
        for (e = i + j * es; j < m; j++, e += es)
            WALK(put)(w, vo, e, zdt__cubic(v, e, o) + qc[2]);
    } else {
        for (e = i + j * es; j < m; j++, e += es)
            WALK(put)(w, vo, e, zdt__cubic(v, e, o) + qc[ks[j]]);
    }
}

/* the deferred blocks from the queue's head whose first element is at most `limit`
   reconstructed, in the order they were decoded: their elements of codes below 16, then
   their exceptions' values again (written when their symbols were decoded) */
static void WALK(flush)(zdt__walk *w, zdt__defer *q, size_t limit) {
    while (q->head < q->n && q->blk[q->head].i <= limit) {
        const zdt__deferred *b = q->blk + q->head++;
        size_t x;
        WALK(put_block)(w, b->i, b->m, b->es, b->o, b->ks_at != SIZE_MAX ? q->ks + b->ks_at : NULL);
        for (x = 0; x < b->nkept; x++) {
            const zdt__kept *k = q->kept + b->kept_at + x;
            w->v[k->e] = k->v;
#if WALK_F32
            w->out32[k->e] = k->f;
#endif
        }
    }
    if (q->head == q->n)
        q->head = q->n = q->nks = q->nkept = 0;
}

/* a span block deferred: its symbols below 16 (ks; NULL: all code 0) queued, its exceptions
   (xj, xk) reconstructed now, in visit order (the raw values are taken in that order), and
   their values kept (the block's reconstruction writes every element) */
static int WALK(defer)(zdt__walk *w, zdt__defer *q, size_t i, size_t m, size_t es, size_t o,
                       const uint8_t *ks, const uint16_t *xj, const uint16_t *xk, size_t nx) {
    zdt__deferred *b;
    size_t x;
    if (q->n == q->cap || (ks != NULL && q->nks + m > q->cap_ks) || q->nkept + nx > q->cap_kept)
        WALK(flush)(w, q, SIZE_MAX);
    b = q->blk + q->n++;
    b->i = i;
    b->m = m;
    b->es = es;
    b->o = o;
    b->ks_at = SIZE_MAX;
    if (ks != NULL) {
        b->ks_at = q->nks;
        memcpy(q->ks + q->nks, ks, m);
        q->nks += m;
    }
    b->kept_at = q->nkept;
    b->nkept = nx;
    for (x = 0; x < nx; x++) {
        const size_t e = i + xj[x] * es;
        zdt__kept *k = q->kept + q->nkept++;
        if (RECONSTRUCT(w, e, zdt__cubic(w->v, e, o), xk[x]) < 0)
            return -1;
        k->e = e;
        k->v = w->v[e];
#if WALK_F32
        k->f = w->out32[e];
#else
        k->f = 0.0f;
#endif
    }
    return 0;
}
#endif

/* `count` elements from flat index i in steps of es, each interpolated along a dimension of
   stride o where the cubic's four neighbours i -+ o, i -+ 3 o all exist (most elements: the
   loop without the bounds tests); `ctx`: the level group's tables by neighbour classes,
   `zent`: their token 2 entries (0: none) */
static ZDT_ALWAYS_INLINE int WALK(span)(zdt__walk *w, zdt__ans *a, const int16_t *ctx,
                                        const zdt__zero_entry *zent, size_t i, size_t count,
                                        size_t es, size_t o) {
    const double *v = w->v;
    size_t j;
#if WALK_ANS
    /* Stage 3, a block at a time: its symbols, then its elements with codes below 16
       (all code 0: q c of code 0 alone), then the elements of its other symbols again
       (the exceptions, in visit order: the raw values are taken in that order). Both
       neighbours of an element lie on coarser lattices than the span's, decoded before
       it, so the symbols' contexts and the predictions wait for nothing of the block. */
    uint16_t xj[ZDT_WALK_BLOCK], xk[ZDT_WALK_BLOCK];
    uint8_t ks[ZDT_WALK_BLOCK];
    uint8_t *cls = w->cls;
    const uint8_t *mask = w->mask;
    const uint8_t *words = a->words;
    const uint64_t n_words = a->n_words;
    if (zent[0].freq == 0) {
        /* (code 0 not nearly every symbol where both neighbours have it: the symbols'
           branches would mispredict; element by element, each its whole step) */
        for (j = 0; j < count; j++, i += es) {
            double p = zdt__cubic(v, i, o);
            if (WALK(visit)(w, a, i, p, ctx[(w->cls[i - o] << 3) | w->cls[i + o]]) < 0)
                return -1;
        }
        return 0;
    }
    while (count) {
        size_t m = count < ZDT_WALK_BLOCK ? count : ZDT_WALK_BLOCK, e = i, nx = 0, x;
        uint32_t x0 = a->x0, x1 = a->x1;
        uint64_t pos = a->pos;
        int coded = 0;          /* any symbol 3 .. 15 in ks */
        memset(ks, 2, m);
        if (mask == NULL) {
            /* (two symbols a step, one of each state; steps 2 and 1 with the stride a
               constant, most of a chunk's symbols: fewer instructions on the coder's
               path) */
            uint8_t *cp = cls + i;
            if (es == 2 && o == 1) {
                unsigned ca = (unsigned)cp[-1] << 3;
                for (j = 0; j + 1 < m; j += 2, cp += 4) {
                    ZDT_WALK_STEP(x0, x1, cp, j, zdt__row_ctx(&ca, cp[1]));
                    ZDT_WALK_STEP(x1, x0, cp + 2, j + 1, zdt__row_ctx(&ca, cp[3]));
                }
            } else if (es == 2) {
                for (j = 0; j + 1 < m; j += 2, cp += 4) {
                    ZDT_WALK_STEP(x0, x1, cp, j, ZDT_WALK_CTX(cp));
                    ZDT_WALK_STEP(x1, x0, cp + 2, j + 1, ZDT_WALK_CTX(cp + 2));
                }
            } else {
                for (j = 0; j + 1 < m; j += 2, cp += 2 * es) {
                    ZDT_WALK_STEP(x0, x1, cp, j, ZDT_WALK_CTX(cp));
                    ZDT_WALK_STEP(x1, x0, cp + es, j + 1, ZDT_WALK_CTX(cp + es));
                }
            }
            if (j < m) {
                uint32_t t;
                ZDT_WALK_STEP(x0, x1, cp, j, ZDT_WALK_CTX(cp));
                t = x0;
                x0 = x1;
                x1 = t;
            }
        } else {
            for (j = 0; j < m; j++, e += es) {
                uint32_t t;
                if (mask[e]) {
                    /* a masked element: no symbol, reconstructed as a fill-value symbol is */
                    cls[e] = 4;
                    xj[nx] = (uint16_t)j;
                    xk[nx++] = 1;
                    continue;
                }
                ZDT_WALK_STEP(x0, x1, cls + e, j, ZDT_WALK_CTX(cls + e));
                t = x0;
                x0 = x1;
                x1 = t;
            }
        }
        a->x0 = x0;
        a->x1 = x1;
        a->pos = pos;
        if (w->defer != NULL && w->defer->on) {
            if (WALK(defer)(w, w->defer, i, m, es, o, coded ? ks : NULL, xj, xk, nx) < 0)
                return -1;
            i += m * es;
            count -= m;
            continue;
        }
        WALK(put_block)(w, i, m, es, o, coded ? ks : NULL);
        for (x = 0; x < nx; x++) {
            e = i + xj[x] * es;
            if (RECONSTRUCT(w, e, zdt__cubic(v, e, o), xk[x]) < 0)
                return -1;
        }
        i += m * es;
        count -= m;
    }
    return 0;
#else
    for (j = 0; j < count; j++, i += es) {
        double p = zdt__cubic(v, i, o);
        (void)ctx;
        (void)zent;
        if (WALK(visit)(w, a, i, p, 0) < 0)
            return -1;
    }
    return 0;
#endif
}

/* Predictors 2 and 3 (`reverse`: at each level the dimensions last to first) over the grid
   g, whose element (0, 0, 0, 0) is at flat index `base` (predictor 4: a slice). */
static int WALK(interpolation)(zdt__walk *wp, const zdt__grid *g, size_t base, int reverse) {
    size_t s = 1, most = 1, first[4], step[4], k0, k1, k2, k3;
    int d, f, kk, table = 0, rc = 0;
#if WALK_ANS
    int last, prev;
#endif
    zdt__walk w = *wp;
    zdt__ans a;
    const double *v = w.v;
#if WALK_ANS
    a = *wp->ans;
#endif
    for (d = 0; d < 4; d++) {
        if (g->n[d] == 0)
            return 0;
        if (g->n[d] > most)
            most = g->n[d];
    }
    while (s < most - 1)
        s *= 2;
    zdt__set_level(&w, s);
#if WALK_ANS
    table = a.ctx[3][0];
#endif
    if (WALK(visit)(&w, &a, base, 0.0, table) < 0) {
        rc = -1;
        goto done;
    }
    for (; s >= 1; s /= 2) {
        int group = s == 1 ? 0 : s == 2 ? 1 : s == 4 ? 2 : 3;
        /* (the level group's tables in an array of their own: a pointer into `a` would
           keep the coder's fields out of registers) */
        int16_t ctx[40];
        zdt__zero_entry zent[40];       /* each context's token 2 */
#if WALK_ANS
        memcpy(ctx, a.ctx[group], sizeof(ctx));
        memcpy(zent, a.zero + 40 * group, sizeof(zent));
#else
        zent[0].start = zent[0].freq = 0;
        ctx[0] = (int16_t)group;
#endif
        zdt__set_level(&w, s);
#if WALK_ANS
        /* the level's last pass and the one before it (passes along a dimension of one
           element are none): the one before defers its span blocks to the last's rows */
        last = prev = -1;
        for (kk = 0; kk < 4; kk++)
            if (s < g->n[reverse ? 3 - kk : kk]) {
                prev = last;
                last = kk;
            }
#endif
        for (kk = 0; kk < 4; kk++) {
            size_t nd, st, o, kd;
            d = reverse ? 3 - kk : kk;
#if WALK_ANS
            if (w.defer != NULL)
                w.defer->on = kk == prev;
#endif
            for (f = 0; f < 4; f++) {
                int rank = reverse ? 3 - f : f;
                if (rank < kk) {
                    first[f] = 0;
                    step[f] = s;
                } else if (f == d) {
                    first[f] = s;
                    step[f] = 2 * s;
                } else {
                    first[f] = 0;
                    step[f] = 2 * s;
                }
            }
            nd = g->n[d];
            st = g->st[d];
            o = s * st;
            if (first[d] >= nd)
                continue;
            for (k0 = first[0]; k0 < g->n[0]; k0 += step[0])
                for (k1 = first[1]; k1 < g->n[1]; k1 += step[1])
                    for (k2 = first[2]; k2 < g->n[2]; k2 += step[2]) {
                        size_t row = base + k0 * g->st[0] + k1 * g->st[1] + k2 * g->st[2];
                        size_t end = g->n[3];
#if WALK_ANS
                        /* (the row's elements read nothing past its end + 3 o) */
                        if (kk == last && w.defer != NULL)
                            WALK(flush)(&w, w.defer, row + end - 1 + 3 * o);
#endif
                        kd = d == 0 ? k0 : d == 1 ? k1 : k2;
                        k3 = first[3];
                        if (d != 3 && kd >= 3 * s && kd + 3 * s < nd) {
                            /* (the cubic's four neighbours exist for the whole row) */
                            if (WALK(span)(&w, &a, ctx, zent, row + k3,
                                           (end - k3 + step[3] - 1) / step[3], step[3], o) < 0) {
                                rc = -1;
                                goto done;
                            }
                            continue;
                        }
                        if (d == 3 && end > 3 * s) {
                            /* along the row: from k3 = 3 s while k3 + 3 s < n3, the cubic's
                               span; the elements before and after it one by one below */
                            size_t count;
                            for (; k3 < 3 * s && k3 < end; k3 += step[3]) {
                                double p, b;
                                size_t i = row + k3;
                                int ahead = k3 + s < nd;
                                b = v[i - o];
                                if (ahead)
                                    p = (b + v[i + o]) * 0.5;
                                else
                                    p = b;
#if WALK_ANS
                                table = ctx[(w.cls[i - o] << 3) | w.cls[ahead ? i + o : i - o]];
#endif
                                if (WALK(visit)(&w, &a, i, p, table) < 0) {
                                    rc = -1;
                                    goto done;
                                }
                            }
                            if (k3 + 3 * s < end) {
                                count = (end - 3 * s - 1 - k3) / (2 * s) + 1;
                                if (WALK(span)(&w, &a, ctx, zent, row + k3, count, 2 * s, s) < 0) {
                                    rc = -1;
                                    goto done;
                                }
                                k3 += count * 2 * s;
                            }
                        }
                        for (; k3 < end; k3 += step[3]) {
                            size_t i = row + k3;
                            double p, b;
                            int ahead;
                            if (d == 3)
                                kd = k3;
                            ahead = kd + s < nd;
                            b = v[i - o];
                            if (ahead) {
                                if (kd >= 3 * s && kd + 3 * s < nd)
                                    p = (9.0 * (b + v[i + o]) - (v[i - 3 * o] + v[i + 3 * o])) *
                                        0.0625;
                                else
                                    p = (b + v[i + o]) * 0.5;
                            } else if (kd >= 3 * s) {
                                p = 1.5 * b - 0.5 * v[i - 3 * o];
                            } else {
                                p = b;
                            }
#if WALK_ANS
                            table = ctx[(w.cls[i - o] << 3) | w.cls[ahead ? i + o : i - o]];
#endif
                            if (WALK(visit)(&w, &a, i, p, table) < 0) {
                                rc = -1;
                                goto done;
                            }
                        }
                    }
        }
#if WALK_ANS
        if (w.defer != NULL) {
            WALK(flush)(&w, w.defer, SIZE_MAX);
            w.defer->on = 0;
        }
#endif
    }
done:
    *wp = w;
#if WALK_ANS
    *wp->ans = a;
#endif
    return rc;
}

/* Predictor 4: each slice along the first real dimension predicted on its own by predictor
   2, slice after slice */
static int WALK(slices)(zdt__walk *w, const zdt__grid *g) {
    zdt__grid sub = *g;
    size_t i;
    int r = 0;
    while (r < 4 && g->n[r] == 1)
        r++;
    if (r == 4)                 /* one element */
        return WALK(interpolation)(w, g, 0, 0);
    sub.n[r] = 1;
    sub.count = g->count / g->n[r];
    for (i = 0; i < g->n[r]; i++)
        if (WALK(interpolation)(w, &sub, i * g->st[r], 0) < 0)
            return -1;
    return 0;
}

static int WALK(run)(int predictor, zdt__walk *w, const zdt__grid *g) {
    if (predictor == 1)
        return WALK(lorenzo)(w, g);
    if (predictor == 4)
        return WALK(slices)(w, g);
    return WALK(interpolation)(w, g, 0, predictor == 3);
}

#undef OUT32
