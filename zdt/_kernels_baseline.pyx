# cython: language_level=3, cdivision=True
"""zdt kernels (cast_value, scale_offset, fused chains of both) for the baseline instruction set: x86-64-v2 on x86-64
(the baseline NumPy requires), the compiler's default elsewhere. Also tells which builds this
CPU runs."""

include "_cast.pxi"
include "_scale_offset.pxi"
include "_chain.pxi"


cdef extern from *:
    """
    static int zdt_cpu_x86_level(void) {
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
    int zdt_cpu_x86_level() noexcept nogil


def supported_builds():
    """The kernel builds this CPU (and OS) can run, baseline first: "avx2" needs x86-64-v3
    (AVX2, FMA, BMI2, F16C), "avx512" x86-64-v4."""
    level = zdt_cpu_x86_level()
    return ["baseline"] + (["avx2"] if level >= 3 else []) + (["avx512"] if level >= 4 else [])
