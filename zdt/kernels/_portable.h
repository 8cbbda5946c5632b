/* zdt/kernels/_portable.h: the few things C leaves to the compiler, each with a portable fallback.
 *
 *   checked 64-bit add / sub / mul   gcc/clang __builtin_*_overflow, else plain C
 *   count leading zeros (64-bit)     gcc/clang __builtin_clzll, else plain C
 *   x86 CPU feature level            gcc __builtin_cpu_supports, else CPUID + XGETBV
 *                                    (MSVC __cpuidex / _xgetbv, gcc/clang <cpuid.h> / asm;
 *                                    clang 14 has no "f16c" for __builtin_cpu_supports)
 *   restrict                         __restrict__ (gcc/clang), __restrict (MSVC), nothing
 *   AVX2 / AVX-512 clones            gcc/clang target_clones on x86-64 ELF with glibc (ifunc),
 *                                    else nothing (the baseline build only)
 *   touch a byte (atomic OR 0)       gcc/clang __atomic_fetch_or, MSVC _InterlockedOr8, else
 *                                    nothing (a page-fault ordering hint, never needed)
 *
 * Building with ZDT_PORTABLE=1 (setup.py turns it into -DZDT_PORTABLE) forces every fallback
 * with gcc or clang too: CI builds and tests that way once, so the code MSVC compiles is code
 * the test suite has run. The fallbacks store the wrapped result and return nonzero on
 * overflow, exactly as the builtins do.
 */
#ifndef ZDT_PORTABLE_H
#define ZDT_PORTABLE_H

#include <stdint.h>

#if (defined(__GNUC__) || defined(__clang__)) && !defined(ZDT_PORTABLE)
#define ZDT_BUILTINS 1
#else
#define ZDT_BUILTINS 0
#endif

/* the CPU-feature builtins: gcc's only (clang's lacks features the v3 check needs) */
#if defined(__GNUC__) && !defined(__clang__) && !defined(ZDT_PORTABLE)
#define ZDT_CPU_BUILTINS 1
#else
#define ZDT_CPU_BUILTINS 0
#endif

#if defined(__GNUC__) || defined(__clang__)
#define ZDT_RESTRICT __restrict__
#elif defined(_MSC_VER)
#define ZDT_RESTRICT __restrict
#else
#define ZDT_RESTRICT
#endif

/* A whole-array loop compiled for AVX-512 and AVX2 as well, the one run chosen when the module
   loads (ifunc); the same C in each clone, so IEEE results are the same bits where the loop
   keeps -ffp-contract=off's order. */
#if defined(__GNUC__) && defined(__x86_64__) && defined(__ELF__) && defined(__GLIBC__) \
    && !defined(ZDT_PORTABLE)
#define ZDT_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define ZDT_CLONES
#endif

/* ---------------------------------------------------------------- checked arithmetic */

#if ZDT_BUILTINS
#define zdt_add_i64(a, b, r) __builtin_add_overflow((int64_t)(a), (int64_t)(b), (int64_t *)(r))
#define zdt_sub_i64(a, b, r) __builtin_sub_overflow((int64_t)(a), (int64_t)(b), (int64_t *)(r))
#define zdt_mul_i64(a, b, r) __builtin_mul_overflow((int64_t)(a), (int64_t)(b), (int64_t *)(r))
#define zdt_add_u64(a, b, r) __builtin_add_overflow((uint64_t)(a), (uint64_t)(b), (uint64_t *)(r))
#define zdt_sub_u64(a, b, r) __builtin_sub_overflow((uint64_t)(a), (uint64_t)(b), (uint64_t *)(r))
#define zdt_mul_u64(a, b, r) __builtin_mul_overflow((uint64_t)(a), (uint64_t)(b), (uint64_t *)(r))
#else
/* Two's complement wrap through uint64_t (well defined), overflow from the signs. */
static inline int zdt_add_i64(int64_t a, int64_t b, int64_t *r) {
    int64_t s = (int64_t)((uint64_t)a + (uint64_t)b);
    *r = s;
    return (a >= 0) == (b >= 0) && (s >= 0) != (a >= 0);
}
static inline int zdt_sub_i64(int64_t a, int64_t b, int64_t *r) {
    int64_t s = (int64_t)((uint64_t)a - (uint64_t)b);
    *r = s;
    return (a >= 0) != (b >= 0) && (s >= 0) != (a >= 0);
}
static inline int zdt_mul_i64(int64_t a, int64_t b, int64_t *r) {
    int64_t p = (int64_t)((uint64_t)a * (uint64_t)b);
    *r = p;
    if (a == 0 || b == 0) return 0;
    if (a == -1) return b == INT64_MIN;
    if (b == -1) return a == INT64_MIN;
    /* exact iff dividing back gives a: a wrapped product is off by a multiple of 2**64 */
    return p / b != a;
}
static inline int zdt_add_u64(uint64_t a, uint64_t b, uint64_t *r) {
    *r = a + b;
    return *r < a;
}
static inline int zdt_sub_u64(uint64_t a, uint64_t b, uint64_t *r) {
    *r = a - b;
    return a < b;
}
static inline int zdt_mul_u64(uint64_t a, uint64_t b, uint64_t *r) {
    *r = a * b;
    return a != 0 && *r / a != b;
}
#endif

/* ---------------------------------------------------------------- count leading zeros */

static inline int zdt_clz64(uint64_t x) {
#if ZDT_BUILTINS
    return x ? __builtin_clzll(x) : 64;
#else
    int n = 0;
    if (!x) return 64;
    if (!(x >> 32)) { n += 32; x <<= 32; }
    if (!(x >> 48)) { n += 16; x <<= 16; }
    if (!(x >> 56)) { n += 8; x <<= 8; }
    if (!(x >> 60)) { n += 4; x <<= 4; }
    if (!(x >> 62)) { n += 2; x <<= 2; }
    if (!(x >> 63)) { n += 1; }
    return n;
#endif
}

/* ---------------------------------------------------------------- touching a byte */

/* Writes to *p without changing it, atomically: another thread storing to the same byte at
 * the same moment keeps its value (a plain read-modify-write could put the old one back).
 * Used to take a page fault at a chosen address (zdt/kernels/_steps.pyx, REGION). */
#if ZDT_BUILTINS
static inline void zdt_touch(uint8_t *p) { (void)__atomic_fetch_or(p, (uint8_t)0, __ATOMIC_RELAXED); }
#define ZDT_CAN_TOUCH 1
#elif defined(_MSC_VER)
#include <intrin.h>
static inline void zdt_touch(uint8_t *p) { (void)_InterlockedOr8((volatile char *)p, 0); }
#define ZDT_CAN_TOUCH 1
#else
static inline void zdt_touch(uint8_t *p) { (void)p; }
#define ZDT_CAN_TOUCH 0
#endif

/* ---------------------------------------------------------------- x86 feature level */

#if defined(__x86_64__) || defined(_M_X64) || defined(__i386__) || defined(_M_IX86)
#define ZDT_X86 1
#else
#define ZDT_X86 0
#endif

#if ZDT_X86 && !ZDT_CPU_BUILTINS
#if defined(_MSC_VER)
#include <intrin.h>
static inline void zdt_cpuid(int leaf, int sub, unsigned r[4]) {
    int t[4];
    __cpuidex(t, leaf, sub);
    r[0] = (unsigned)t[0]; r[1] = (unsigned)t[1]; r[2] = (unsigned)t[2]; r[3] = (unsigned)t[3];
}
static inline unsigned long long zdt_xgetbv0(void) { return _xgetbv(0); }
#else
#include <cpuid.h>
static inline void zdt_cpuid(int leaf, int sub, unsigned r[4]) {
    __cpuid_count(leaf, sub, r[0], r[1], r[2], r[3]);
}
static inline unsigned long long zdt_xgetbv0(void) {
    unsigned lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return ((unsigned long long)hi << 32) | lo;
}
#endif
#define ZDT_BIT(v, n) (((v) >> (n)) & 1u)
/* x86-64-v3 / v4 as the builds need them, from CPUID leaves 1 and 7 and the OS's XCR0 */
static inline int zdt_cpu_level_cpuid(void) {
    unsigned r[4], max_leaf, ecx1, ebx7;
    unsigned long long xcr0;
    zdt_cpuid(0, 0, r);
    max_leaf = r[0];
    if (max_leaf < 7) return 2;
    zdt_cpuid(1, 0, r);
    ecx1 = r[2];
    /* OSXSAVE (27), AVX (28): the OS saves YMM state only if it says so in XCR0 */
    if (!ZDT_BIT(ecx1, 27) || !ZDT_BIT(ecx1, 28)) return 2;
    xcr0 = zdt_xgetbv0();
    if ((xcr0 & 0x6) != 0x6) return 2;
    zdt_cpuid(7, 0, r);
    ebx7 = r[1];
    /* v3: FMA (ecx1 12), F16C (ecx1 29), AVX2 (ebx7 5), BMI2 (ebx7 8) */
    if (!(ZDT_BIT(ecx1, 12) && ZDT_BIT(ecx1, 29) && ZDT_BIT(ebx7, 5) && ZDT_BIT(ebx7, 8))) return 2;
    /* v4: AVX512F (16), DQ (17), CD (28), BW (30), VL (31), and opmask/ZMM state in XCR0 */
    if (ZDT_BIT(ebx7, 16) && ZDT_BIT(ebx7, 17) && ZDT_BIT(ebx7, 28) && ZDT_BIT(ebx7, 30)
            && ZDT_BIT(ebx7, 31) && (xcr0 & 0xe6) == 0xe6)
        return 4;
    return 3;
}
#endif

/* 4: x86-64-v4 (AVX-512), 3: x86-64-v3 (AVX2), 2: anything else (the baseline build only) */
static inline int zdt_cpu_x86_level(void) {
#if ZDT_X86 && ZDT_CPU_BUILTINS
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw")
            && __builtin_cpu_supports("avx512cd") && __builtin_cpu_supports("avx512dq")
            && __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx2")
            && __builtin_cpu_supports("fma") && __builtin_cpu_supports("bmi2"))
        return 4;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")
            && __builtin_cpu_supports("bmi2") && __builtin_cpu_supports("f16c"))
        return 3;
    return 2;
#elif ZDT_X86
    return zdt_cpu_level_cpuid();
#else
    return 2;
#endif
}

/* which implementation this build compiled in (tests check the forced-portable build) */
static inline int zdt_portable_build(void) { return !ZDT_BUILTINS; }

#endif
