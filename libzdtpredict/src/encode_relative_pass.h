/* The encoder's whole-chunk passes of a relative chunk, for one element type: included by
   encode_relative.c once for float64 and once for float32, with
     PASS(name)  the build's name of a function,
     T, U        the element type and the unsigned integer of its bits,
     LOW, INF    the bits of the least normal magnitude (as a double: float32's subnormals are
                 normal doubles, so 1 there) and of infinity,
     COPYSIGN    copysign or copysignf. */

static inline int PASS(verdict)(T yt, T x, double r, int has_fill, T fill) {
    double y = (double)yt, xd = (double)x, d = fabs(y - xd), t = r * fabs(xd);
    int bad = !(y - y == 0) | (y == 0) | (has_fill & (yt == fill));
    int sure = (d - d == 0) & (t >= 0x1p-1000) & (d <= t * (1.0 - 0x1p-50));
    return bad ? 2 : (sure ? 0 : 1);
}

ZDT_CLONES static double PASS(logarithms)(const T *ZDT_RESTRICT x, double *ZDT_RESTRICT logs,
                              uint8_t *ZDT_RESTRICT negative, size_t n, U fill_on,
                              U fill_bits, size_t *ZDT_RESTRICT counts,
                              double *ZDT_RESTRICT top) {
    const U sign = (U)1 << (8 * sizeof(U) - 1), inf = (U)(INF), low = (U)(LOW);
    const double nan_log = zdt__f64_of_bits(0x7FF8000000000000ull);
    ptrdiff_t i, k, m, nn = (ptrdiff_t)n;
    size_t n_nan = 0, n_zero = 0, n_odd = 0;
    int64_t most = 0, high = INT64_MIN;
    for (i = 0; i < nn; i += m) {
        const U *ZDT_RESTRICT xb = (const U *)(const void *)(x + i);
        double *ZDT_RESTRICT lb = logs + i;
        U odd = 0, neg = 0;
        /* (the largest logarithm as an ordered integer: a double's bits with the magnitude
           bits flipped where it is negative order as the values do, and an integer maximum
           vectorises where a double's does not) */
        int64_t bmost = 0, bhigh = INT64_MIN;
        m = nn - i < ZDT__LOG_BLOCK ? nn - i : ZDT__LOG_BLOCK;
        for (k = 0; k < m; k++) {
            int e;
            U b = xb[k], mag = b & ~sign;
            double am = fabs((double)x[i + k]), lg;
            int64_t bits;
            odd += (U)(mag < low) | (U)(mag >= inf) | (fill_on & (U)(b == fill_bits));
            neg += b >> (8 * sizeof(U) - 1);
            am = zdt__mantissa(am, &e);
            lg = zdt__log2_of(am, e, ATANH);
            lb[k] = lg;
            memcpy(&bits, &lg, 8);
            bits ^= (bits >> 63) & INT64_MAX;
            bhigh = bits > bhigh ? bits : bhigh;
            lg = fabs(lg);
            memcpy(&bits, &lg, 8);
            bmost = bits > bmost ? bits : bmost;
        }
        n_odd += (size_t)odd;
        if (odd) {
            bmost = 0;
            for (k = 0; k < m; k++) {
                U mag = xb[k] & ~sign;
                if (mag != 0 && mag < low)
                    lb[k] = log2_abs((double)x[i + k]);
            }
            for (k = 0; k < m; k++) {
                U b = xb[k], mag = b & ~sign;
                double lg = lb[k];
                U is_nan = (U)(mag > inf) | (fill_on & (U)(b == fill_bits));
                U is_zero = (U)(mag == 0) & (is_nan ^ 1);
                U is_inf = (U)(mag == inf) & (is_nan ^ 1);
                lg = is_inf ? HUGE_VAL : lg;
                lg = is_zero ? -HUGE_VAL : lg;
                lb[k] = is_nan ? nan_log : lg;
                n_nan += is_nan;
                n_zero += is_zero;
            }
            bhigh = INT64_MIN;
            for (k = 0; k < m; k++) {
                double big = lb[k] - lb[k] == 0 ? fabs(lb[k]) : 0.0;
                const double finite = lb[k] - lb[k] == 0 ? lb[k] : -HUGE_VAL;
                int64_t bits;
                memcpy(&bits, &big, 8);
                bmost = bits > bmost ? bits : bmost;
                memcpy(&bits, &finite, 8);
                bits ^= (bits >> 63) & INT64_MAX;
                bhigh = bits > bhigh ? bits : bhigh;
            }
        }
        most = bmost > most ? bmost : most;
        high = bhigh > high ? bhigh : high;
        if (neg) {
            for (k = 0; k < m; k++)
                negative[i + k] = (uint8_t)(xb[k] >> (8 * sizeof(U) - 1));
        } else {
            memset(negative + i, 0, (size_t)m);
        }
    }
    counts[0] = n_nan;
    counts[1] = n_zero;
    counts[2] = n_odd;
    /* (the ordered integer back to its double; its least, a NaN's, never a finite one's:
       no logarithm finite) */
    if (high == INT64_MIN) {
        *top = -HUGE_VAL;
    } else {
        high ^= (high >> 63) & INT64_MAX;
        memcpy(top, &high, 8);
    }
    return zdt__f64_of_bits((uint64_t)most);
}

ZDT_CLONES static size_t PASS(check)(const T *ZDT_RESTRICT x, const double *ZDT_RESTRICT logs,
                              const double *ZDT_RESTRICT v,
                              const uint8_t *ZDT_RESTRICT exact, size_t n, double r,
                              int has_fill, T fill, int plain,
                              uint8_t *ZDT_RESTRICT verdict) {
    ptrdiff_t i, k, m, nn = (ptrdiff_t)n;
    size_t flagged = 0;
    double y[ZDT__LOG_BLOCK];
    int64_t w[ZDT__LOG_BLOCK], near[ZDT__LOG_BLOCK];
#ifdef ZDT_GATHER8
    const int wide = zdt__has_avx512f();
#endif
    for (i = 0; i < nn; i += m) {
        m = nn - i < ZDT__LOG_BLOCK ? nn - i : ZDT__LOG_BLOCK;
        k = 0;
#ifdef ZDT_GATHER8
        if (wide) {
            k = m & ~(ptrdiff_t)7;
            exp2_block8(v + i, y, near, (size_t)k);
        }
#endif
        for (; k < m; k++) {
            double e, t = zdt__exp2_table_part(v[i + k], &e);
            near[k] = zdt__exp2_table_near(e);
            y[k] = t * zdt__pow2i(near[k] ? e : 0.0);
        }
        if (plain) {
            for (k = 0; k < m; k++) {
                T yt = COPYSIGN((T)y[k], x[i + k]);
                w[k] = near[k] ? (int64_t)PASS(verdict)(yt, x[i + k], r, has_fill, fill) : 3;
            }
            for (k = 0; k < m; k++) {
                verdict[i + k] = (uint8_t)w[k];
                flagged += w[k] != 0;
            }
        } else {
            for (k = 0; k < m; k++) {
                T yt = COPYSIGN((T)y[k], x[i + k]);
                int64_t live = (int64_t)(logs[i + k] - logs[i + k] == 0) &
                               (int64_t)(x[i + k] != 0);
                w[k] = live * (near[k] ? (int64_t)PASS(verdict)(yt, x[i + k], r, has_fill,
                                                             fill) : 3);
            }
            for (k = 0; k < m; k++) {
                uint8_t d = exact[i + k] ? 0 : (uint8_t)w[k];
                verdict[i + k] = d;
                flagged += d != 0;
            }
        }
    }
    return flagged;
}
