/* The encoder's traversals of one build: included by encode_predict.c once for each
   (element type, recording), with
     ENC(name)   the build's name of a function,
     ENC_T       float or double,
     ENC_REC     1 where stage 3's order (symbols and contexts in visit order) is recorded.
   The visit orders, predictions and contexts are the decoder's (predictors_walk.h); each
   element is quantized as zdt.kernels._predict_quantize's `quantize` does it. */

/* element i predicted p quantized: its symbol (also in w->sym[i]), its predictor value (also
   in *vi), its raw value appended where it is stored exactly */
static ZDT_ALWAYS_INLINE int ENC(quantize)(zdt__ew *w, const ENC_T *x, size_t i, double p,
                                          double *vi, int zb) {
    ENC_T xi = x[i], rr, fill;
    double xd, t, value = 0.0;
    int k = 0;
#if ENC_F32
    fill = w->fill32;
#else
    fill = w->fill64;
#endif
    if (w->has_fill && ENC_SAME(xi, w)) {
        k = 1;
        value = zdt__enc_finite_or_zero(p);
    } else {
        xd = (double)xi;
        t = (xd - p) * w->inv_q;
        if (fabs(t) < 32766.0) {
            int c = (int)(t + (t >= 0 ? 0.5 : -0.5));
            /* (Lorenzo where code 0 is common: code 0 a branch of its own, p + q 0 being
               p + 0, so that the next element's prediction, which takes this one's value,
               waits on no conversion of c; where code 0 is rare the branch mispredicts) */
            if (zb && c == 0)
                rr = (ENC_T)(p + 0.0);
            else
                rr = (ENC_T)(p + w->q * (double)c);
            if ((fabs((double)rr - xd) <= w->limit) & !(w->has_fill & (rr == fill))) {
                k = (int)((((unsigned)c << 1) ^ (c < 0 ? 0xFFFFFFFFu : 0u)) + 2);
                value = (double)rr;
            }
        }
        if (!k) {
            if (ZDT_UNLIKELY(w->nraw == w->raw_cap) && zdt__enc_grow_raw(w, sizeof(ENC_T)) < 0)
                w->nraw--;      /* (no memory: w->oom set, the value dropped) */
            ((ENC_T *)w->raw)[w->nraw++] = xi;
            value = isfinite(xd) ? xd : zdt__enc_finite_or_zero(p);
        }
    }
    w->v[i] = value;
    *vi = value;
    w->sym[i] = (uint16_t)k;
    return k;
}

/* element i, predicted p, quantized, and with stage 3 its class and (symbol, context) next
   in visit order; returns its predictor value */
static ZDT_ALWAYS_INLINE double ENC(visit)(zdt__ew *w, const ENC_T *x, size_t i, double p,
                                          int ctx, int zb) {
    double vi;
    int k = ENC(quantize)(w, x, i, p, &vi, zb);
#if ENC_REC
    w->osym[w->j] = (uint16_t)k;
    w->octx[w->j] = (uint8_t)ctx;
    w->j++;
#else
    (void)ctx;
    (void)k;
#endif
    return vi;
}

/* `count` elements from flat index i in steps of es, each the cubic along stride o whose four
   neighbours all exist: quantized in one loop, then (stage 3) their classes and (symbol,
   context) pairs recorded in a second (one loop doing both measured a quarter slower in the
   old kernels). No element of a span is another's context neighbour (they lie 2 s apart
   along the row, or on a row between rows of earlier levels): neither loop reads what the
   other writes within the span. */
static inline void ENC(span)(zdt__ew *w, const ENC_T *x, int group, size_t i, size_t count,
                             size_t es, size_t o) {
    const double *v = w->v;
    size_t j, b;
    zdt__span_consts c;
    c.q = w->q;
    c.inv_q = w->inv_q;
    c.limit = w->limit;
    c.has_fill = w->has_fill;
    c.fill64 = w->fill64;
    c.fill32 = w->fill32;
    c.fill_bits64 = w->fill_bits64;
    c.fill_bits32 = w->fill_bits32;
    c.isa = w->isa;
    /* (in blocks: a block with an element off the common path is quantized again one by one,
       the rest, and the last few, one by one as well) */
    for (b = 0; b < count; b += ENC_SPAN_BLOCK) {
        const size_t from = i + b * es;
        const size_t len = count - b < ENC_SPAN_BLOCK ? count - b : ENC_SPAN_BLOCK;
        int bad;
        size_t at;
        j = zdt__span_quantize(w->v, x, ENC_F32, w->sym, from, len, es, o, &c, &bad);
        if (bad)
            j = 0;
        for (at = from + j * es; j < len; j++, at += es) {
            double p = zdt__cubic(v, at, o), vi;
            ENC(quantize)(w, x, at, p, &vi, 0);
        }
    }
#if ENC_REC
    {
        const uint16_t *sym = w->sym;
        uint8_t *octx = w->octx;
        uint16_t *osym = w->osym;
        size_t t = w->j;
        j = zdt__span_record(w->isa, sym, osym + t, octx + t, i, count, es, o, group);
        t += j;
        for (i += j * es; j < count; j++, i += es) {
            int k = sym[i];
            osym[t] = (uint16_t)k;
            octx[t] = (uint8_t)ZDT_FINE(group, (ENC_CLS(sym, i - o) << 3) | ENC_CLS(sym, i + o));
            t++;
        }
        w->j = t;
    }
#else
    (void)group;
    (void)i;
#endif
}

static ZDT_ALWAYS_INLINE void ENC(lorenzo_of)(zdt__ew *wp, const ENC_T *x, const zdt__grid *g,
                                             int zb) {
    int count = 0, m, b, r1 = -1, r2 = -1, d;
    int mask[15], add[15];
    size_t off[15], k[4], i = 0;
    zdt__ew w = *wp;
    const double *v = w.v;
    double prev = 0.0;          /* v[i - 1] */
    int last;
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
    /* the first term (mask 1), where there is one, is element i - 1 (the last dimension) */
    last = count > 0 && mask[0] == 1;
    for (d = 3; d >= 0; d--)
        if (g->n[d] > 1) {
            if (r1 < 0)
                r1 = d;
            else if (r2 < 0)
                r2 = d;
        }
    (void)r1;
    (void)r2;
    for (k[0] = 0; k[0] < g->n[0]; k[0]++)
        for (k[1] = 0; k[1] < g->n[1]; k[1]++)
            for (k[2] = 0; k[2] < g->n[2]; k[2]++)
                for (k[3] = 0; k[3] < g->n[3]; k[3]++, i++) {
                    int zero = (k[3] == 0) | (k[2] == 0) << 1 | (k[1] == 0) << 2 |
                               (k[0] == 0) << 3;
                    int t = 0, ctx = 0;
                    double p = 0.0;
                    if (last) {
                        /* (the term one back along the last dimension, element i - 1: the
                           value just given it, not read back from v, where the next element's
                           prediction waited for the store) */
                        p = p + ((zero & 1) ? 0.0 : prev);
                        t = 1;
                    }
                    for (; t < count; t++) {
                        double term = (mask[t] & zero) ? 0.0 : v[i - off[t]];
                        p = add[t] ? p + term : p - term;
                    }
#if ENC_REC
                    {
                        int has_a = r1 >= 0 && k[r1] > 0, has_b = r2 >= 0 && k[r2] > 0;
                        size_t ia = has_a ? i - g->st[r1] : 0, ib = has_b ? i - g->st[r2] : 0;
                        if (!has_a && !has_b) {
                            ctx = ZDT_FINE(0, 0);
                        } else {
                            if (!has_a)
                                ia = ib;
                            if (!has_b)
                                ib = ia;
                            ctx = ZDT_FINE(0, (ENC_CLS(w.sym, ia) << 3) | ENC_CLS(w.sym, ib));
                        }
                    }
#endif
                    prev = ENC(visit)(&w, x, i, p, ctx, zb);
                }
    *wp = w;
}

/* (two builds of Lorenzo: with code 0's branch and without; a test of a flag beside it cost
   the build without the branch a third of its time) */
static void ENC(lorenzo)(zdt__ew *wp, const ENC_T *x, const zdt__grid *g) {
    ENC(lorenzo_of)(wp, x, g, 0);
}
static void ENC(lorenzo_zb)(zdt__ew *wp, const ENC_T *x, const zdt__grid *g) {
    ENC(lorenzo_of)(wp, x, g, 1);
}

/* predictors 2 and 3 over the grid g whose element (0, 0, 0, 0) is at flat index `base` */
static void ENC(interpolation)(zdt__ew *wp, const ENC_T *x, const zdt__grid *g, size_t base,
                               int reverse) {
    size_t s = 1, most = 1, first[4], step[4], k0, k1, k2, k3;
    int d, f, kk, ctx = 0;
    zdt__ew w = *wp;
    const double *v = w.v;
    for (d = 0; d < 4; d++) {
        if (g->n[d] == 0)
            return;
        if (g->n[d] > most)
            most = g->n[d];
    }
    while (s < most - 1)
        s *= 2;
    zdt__enc_level(&w, s);
#if ENC_REC
    ctx = ZDT_FINE(3, 0);
#endif
    ENC(visit)(&w, x, base, 0.0, ctx, 0);
    for (; s >= 1; s /= 2) {
        int group = s == 1 ? 0 : s == 2 ? 1 : s == 4 ? 2 : 3;
        zdt__enc_level(&w, s);
        for (kk = 0; kk < 4; kk++) {
            size_t nd, st, o, kd;
            d = reverse ? 3 - kk : kk;
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
                        kd = d == 0 ? k0 : d == 1 ? k1 : k2;
                        k3 = first[3];
                        if (d != 3 && kd >= 3 * s && kd + 3 * s < nd) {
                            /* (the cubic's four neighbours exist for the whole row) */
                            ENC(span)(&w, x, group, row + k3,
                                      (g->n[3] - k3 + step[3] - 1) / step[3], step[3], o);
                            continue;
                        }
                        if (d == 3 && g->n[3] > 3 * s) {
                            /* along the row: the element at s one by one (below), from 3 s
                               while k3 + 3 s < n3 the cubic's span, the rest one by one */
                            size_t end = g->n[3];
                            if (k3 < 3 * s) {
                                size_t i = row + k3;
                                double b = v[i - o];
                                int ahead = k3 + s < nd;
                                double p = ahead ? (b + v[i + o]) * 0.5 : b;
#if ENC_REC
                                ctx = ZDT_FINE(group, (ENC_CLS(w.sym, i - o) << 3) |
                                                          ENC_CLS(w.sym, ahead ? i + o : i - o));
#endif
                                ENC(visit)(&w, x, i, p, ctx, 0);
                                k3 += step[3];
                            }
                            if (k3 >= 3 * s && k3 + 3 * s < end) {
                                size_t count = (end - 3 * s - 1 - k3) / (2 * s) + 1;
                                ENC(span)(&w, x, group, row + k3, count, 2 * s, s);
                                k3 += count * 2 * s;
                            }
                        }
                        for (; k3 < g->n[3]; k3 += step[3]) {
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
#if ENC_REC
                            ctx = ZDT_FINE(group, (ENC_CLS(w.sym, i - o) << 3) |
                                                      ENC_CLS(w.sym, ahead ? i + o : i - o));
#else
                            (void)group;
#endif
                            ENC(visit)(&w, x, i, p, ctx, 0);
                        }
                    }
        }
    }
    *wp = w;
}

static void ENC(run)(int predictor, zdt__ew *w, const ENC_T *x, const zdt__grid *g) {
    if (predictor == 1) {
        if (w->zero_branch)
            ENC(lorenzo_zb)(w, x, g);
        else
            ENC(lorenzo)(w, x, g);
    } else if (predictor == 4) {
        zdt__grid sub = *g;
        size_t i;
        int r = 0;
        while (r < 4 && g->n[r] == 1)
            r++;
        if (r == 4) {
            ENC(interpolation)(w, x, g, 0, 0);
            return;
        }
        sub.n[r] = 1;
        sub.count = g->count / g->n[r];
        for (i = 0; i < g->n[r]; i++)
            ENC(interpolation)(w, x, &sub, i * g->st[r], 0);
    } else {
        ENC(interpolation)(w, x, g, 0, predictor == 3);
    }
}
