/* The decoder's pass over a relative chunk's elements, for one element type: included by
   relative.c once for float64 and once for float32, with
     PASS(name)  the build's name of the function,
     T           the element type.

   out[i] = the spec's 2^logs[i] (kind 3's table where `table`, else kind 1's polynomial; from
   the bits: logs.h) rounded to T for a finite logarithm,
   infinity for +inf, zero for -inf, negated where the sign bitmap's bit i is set (neg: NULL
   for none); marks[i] (when marks is not NULL) 1 where the element is exact (the exact
   bitmap's bit i, NULL for none, or a NaN logarithm), else 0. Returns the number of exact
   elements; *far: the finite logarithms whose 2^v is outside the normal range (the caller
   does those again with the scalar exp2). Block by block (a block's bits start at a byte of the
   bitmaps), each loop branch-free: it vectorises; a kind-3 or kind-4 chunk with no exact map
   or exact values goes to powers_plain (relative.c). */
ZDT_CLONES static size_t PASS(powers)(const double *ZDT_RESTRICT logs,
                                      const uint8_t *ZDT_RESTRICT neg,
                                      const uint8_t *ZDT_RESTRICT exact, size_t n,
                                      T *ZDT_RESTRICT out, uint8_t *ZDT_RESTRICT marks,
                                      int table, size_t *ZDT_RESTRICT far) {
    ptrdiff_t i, k, m, nn = (ptrdiff_t)n;
    size_t n_far = 0, n_marks = 0;
    double y[ZDT__LOG_BLOCK];
    uint8_t nb[ZDT__LOG_BLOCK], eb[ZDT__LOG_BLOCK];
    if (table && exact == NULL && marks == NULL)
        /* (no exact map, no exact values: the common chunk) */
        return powers_plain(logs, sizeof(T) == 8 ? (double *)(void *)out : NULL,
                            sizeof(T) == 8 ? NULL : (float *)(void *)out, n, neg, far);
    for (i = 0; i < nn; i += m) {
        m = nn - i < ZDT__LOG_BLOCK ? nn - i : ZDT__LOG_BLOCK;
        if (table) {
            for (k = 0; k < m; k++) {
                double lg = logs[i + k], e, t = zdt__exp2_table_part(lg, &e);
                int near = zdt__exp2_table_near(e);
                n_far += (size_t)((lg - lg == 0) & !near);
                y[k] = t * zdt__pow2i(near ? e : 0.0);
            }
        } else {
            for (k = 0; k < m; k++) {
                double lg = logs[i + k], kk = rint(lg);
                int near = zdt__exp2_near(kk);
                n_far += (size_t)((lg - lg == 0) & !near);
                y[k] = zdt__exp2_poly(lg - kk, C) * zdt__pow2i(near ? kk : 0.0);
            }
        }
        if (neg != NULL)
            for (k = 0; k < m; k++)
                nb[k] = (uint8_t)((neg[(i + k) >> 3] >> (7 - ((i + k) & 7))) & 1);
        else
            memset(nb, 0, sizeof(nb));
        if (exact != NULL)
            for (k = 0; k < m; k++)
                eb[k] = (uint8_t)((exact[(i + k) >> 3] >> (7 - ((i + k) & 7))) & 1);
        else
            memset(eb, 0, sizeof(eb));
        for (k = 0; k < m; k++) {
            double lg = logs[i + k];
            T yt = lg - lg == 0 ? (T)y[k] : (lg == HUGE_VAL ? (T)HUGE_VAL : (T)0);
            uint8_t mark = eb[k] | (uint8_t)(lg != lg);
            out[i + k] = nb[k] ? -yt : yt;
            eb[k] = mark;
            n_marks += mark;
        }
        if (marks != NULL)
            memcpy(marks + i, eb, (size_t)m);
    }
    *far = n_far;
    return n_marks;
}
