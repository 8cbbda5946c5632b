# cython: language_level=3, cdivision=True
"""zdt kernels (cast_value, scale_offset) compiled for x86-64-v2 (the baseline NumPy requires)."""

include "_cast.pxi"
include "_scale_offset.pxi"


cdef extern from *:
    """
    static int zdt_cpu_level(void) {
    #if (defined(__GNUC__) || defined(__clang__)) && (defined(__x86_64__) || defined(__i386__))
        __builtin_cpu_init();
        if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw")
                && __builtin_cpu_supports("avx512cd") && __builtin_cpu_supports("avx512dq")
                && __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx2")
                && __builtin_cpu_supports("fma") && __builtin_cpu_supports("bmi2"))
            return 4;
        if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")
                && __builtin_cpu_supports("bmi2") && __builtin_cpu_supports("f16c"))
            return 3;
    #endif
        return 2;
    }
    """
    int zdt_cpu_level() noexcept nogil


def cpu_level():
    """x86-64 micro-architecture level this CPU (and OS) supports: 2, 3 or 4 (2 elsewhere)."""
    return zdt_cpu_level()
