# cython: language_level=3
"""What C leaves to the compiler, declared once (implemented in _portable.h, with a plain-C or
MSVC fallback for each gcc/clang builtin; ZDT_PORTABLE=1 at build time forces the fallbacks)."""

from libc.stdint cimport int64_t, uint8_t, uint64_t


cdef extern from "_portable.h" nogil:
    # nonzero on overflow; *r gets the wrapped result either way
    bint zdt_add_i64(int64_t a, int64_t b, int64_t* r) noexcept
    bint zdt_sub_i64(int64_t a, int64_t b, int64_t* r) noexcept
    bint zdt_mul_i64(int64_t a, int64_t b, int64_t* r) noexcept
    bint zdt_add_u64(uint64_t a, uint64_t b, uint64_t* r) noexcept
    bint zdt_sub_u64(uint64_t a, uint64_t b, uint64_t* r) noexcept
    bint zdt_mul_u64(uint64_t a, uint64_t b, uint64_t* r) noexcept
    int zdt_clz64(uint64_t x) noexcept
    # stores *p's own value atomically (a page-fault hint; a no-op without atomics)
    void zdt_touch(uint8_t* p) noexcept
    # 4: x86-64-v4, 3: x86-64-v3, 2: anything else
    int zdt_cpu_x86_level() noexcept
    # 1 when this build uses the fallbacks (ZDT_PORTABLE, or a compiler without the builtins)
    int zdt_portable_build() noexcept
