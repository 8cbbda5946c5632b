/* The relative chunks' 2^v alone: kind 1's 14-term polynomial against kind 3's table of
 * 2^(j/64) and 6 terms (docs/codecs/predict.md), each as the library's passes compute it
 * (libzdtpredict/src/logs.h), over a block of 256 logarithms in L1, thread CPU time, min of 7
 * rounds, the two alternating. Build it for each target the library's clones cover:
 *
 *   for a in x86-64-v2 x86-64-v3 x86-64-v4; do
 *     cc -O3 -std=c99 -fno-fast-math -fno-trapping-math -ffp-contract=off -march=$a \
 *        -DZDT_PREDICT_NO_CLONES -Ilibzdtpredict/include -Ilibzdtpredict/src \
 *        -o /tmp/bench_exp2 bench/bench_exp2.c -lm && /tmp/bench_exp2; done
 *
 * (add -mtune-ctrl=use_gather,use_gather_2parts,use_gather_4parts to see the table read by
 * the CPU's gather: gcc's generic tuning reads it element by element.) */
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "internal.h"
#include "logs.h"

const double zdt__exp2_t[64] = ZDT__EXP2_T;
const double zdt__exp2_d[6] = ZDT__EXP2_D;
static const double C[14] = ZDT__EXP2_C;

__attribute__((noinline)) static void kind1(const double *ZDT_RESTRICT v,
                                            double *ZDT_RESTRICT y, ptrdiff_t n) {
    ptrdiff_t k;
    for (k = 0; k < n; k++) {
        double kk = rint(v[k]);
        int near = zdt__exp2_near(kk);
        y[k] = zdt__exp2_poly(v[k] - kk, C) * zdt__pow2i(near ? kk : 0.0);
    }
}

__attribute__((noinline)) static void kind3(const double *ZDT_RESTRICT v,
                                            double *ZDT_RESTRICT y, ptrdiff_t n) {
    ptrdiff_t k;
    for (k = 0; k < n; k++) {
        double e, t = zdt__exp2_table_part(v[k], &e);
        int near = zdt__exp2_table_near(e);
        y[k] = t * zdt__pow2i(near ? e : 0.0);
    }
}

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int main(void) {
    enum { N = 256, REPS = 40000 };
    static double v[N], y[N];
    double best[2] = {1e9, 1e9}, sink = 0.0;
    int i, r, round;
    for (i = 0; i < N; i++)
        v[i] = i * 0.37 - 40.0;
    for (round = 0; round < 7; round++) {
        double t0 = now(), t1, t2;
        for (r = 0; r < REPS; r++) {
            kind1(v, y, N);
            sink += y[r & (N - 1)];
        }
        t1 = now();
        for (r = 0; r < REPS; r++) {
            kind3(v, y, N);
            sink += y[r & (N - 1)];
        }
        t2 = now();
        best[0] = t1 - t0 < best[0] ? t1 - t0 : best[0];
        best[1] = t2 - t1 < best[1] ? t2 - t1 : best[1];
    }
    printf("2^v, ns per element in L1: kind 1 %.3f, kind 3 %.3f (%g)\n",
           best[0] / ((double)N * REPS) * 1e9, best[1] / ((double)N * REPS) * 1e9, sink);
    return 0;
}
