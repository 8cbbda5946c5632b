/* Writing into fresh memory: why zdt's kernels touch each 2 MB region at its end first.
 *
 *   cc -O2 -march=native -o /tmp/fresh_memory bench/fresh_memory.c && /tmp/fresh_memory
 *
 * A kernel that returns a new array writes into memory nobody has touched: each first store
 * into a 2 MB region takes a page fault in which Linux clears a whole huge page (NumPy asks
 * for huge pages on large arrays, as numpy_like() does here). The clearing runs towards the
 * faulting address, so where the first store lands decides what is left in cache and in
 * which order the kernel walks the page. This program times one pass of a simple element-wise
 * kernel (d = (s + 10) * 0.1 over float64) three ways, into fresh memory and again into the
 * same, now mapped, memory:
 *
 *   memcpy                         the floor for a call that returns a new array
 *   forward                        the plain loop: each region's first store is its start
 *   forward, region end first      the same loop, but before entering a 2 MB region it stores
 *                                  to that region's last byte (what zdt/kernels/_steps.pyx does)
 *
 * On the development machine (2 cores, glibc 2.36, Linux THP "madvise"): forward ~12 ms into
 * fresh memory, region end first 7.9-8.4 ms, memcpy 8.6 ms; all three ~equal once mapped.
 * Also tried and slower: non-temporal stores, rep movsb through a block buffer, touching a
 * region's 4 KB pages in descending order, walking the whole array backwards.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#define N 10000000
#define REGION (2u << 20)

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

/* as NumPy's allocator: malloc, then huge pages asked for on the aligned part */
static double *numpy_like(void) {
    double *p = malloc((size_t)N * 8);
    uintptr_t a = ((uintptr_t)p + REGION - 1) & ~(uintptr_t)(REGION - 1);
    madvise((void *)a, (size_t)N * 8 - (a - (uintptr_t)p), MADV_HUGEPAGE);
    return p;
}

__attribute__((noinline)) static void compute(const double *s, double *d, size_t n) {
    for (size_t i = 0; i < n; i++) d[i] = (s[i] + 10.0) * 0.1;
}

static void region_end_first(const double *s, double *d, size_t n) {
    uintptr_t base = (uintptr_t)d;
    size_t i = 0;
    while (i < n) {
        uintptr_t region_end = ((base + i * 8) | (REGION - 1)) + 1;
        size_t stop = (region_end - base) / 8;
        if (stop > n) stop = n;
        ((volatile double *)d)[stop - 1] = 0;      /* the fault happens here */
        compute(s + i, d + i, stop - i);
        i = stop;
    }
}

int main(void) {
    double *x = malloc((size_t)N * 8);
    for (size_t i = 0; i < N; i++) x[i] = i * 0.5;
    const char *names[] = {"memcpy", "forward", "forward, region end first"};
    for (int mode = 0; mode < 3; mode++) {
        double fresh = 1e9, mapped = 1e9;
        for (int r = 0; r < 9; r++) {
            double *d = numpy_like();
            for (int pass = 0; pass < 2; pass++) {
                double t0 = now();
                if (mode == 0) memcpy(d, x, (size_t)N * 8);
                else if (mode == 1) compute(x, d, N);
                else region_end_first(x, d, N);
                double t = now() - t0;
                if (pass == 0) { if (t < fresh) fresh = t; }
                else if (t < mapped) mapped = t;
            }
            free(d);
        }
        printf("%-28s fresh %6.2f ms   mapped %6.2f ms\n", names[mode], fresh * 1e3, mapped * 1e3);
    }
    free(x);
    return 0;
}
