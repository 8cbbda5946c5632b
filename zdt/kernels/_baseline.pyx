# cython: language_level=3, cdivision=True
"""zdt's element-wise kernels for the baseline instruction set (x86-64-v2 on x86-64, the
baseline NumPy requires; the compiler's default elsewhere): the steps of cast_value
(_cast.pxi), scale_offset (_scale_offset.pxi) and bitround (_bitround.pxi). One source, three builds; zdt.kernels loads
the best one the CPU runs. This build also tells which builds the CPU runs."""

cdef str BUILD = "baseline"

include "_cast.pxi"
include "_scale_offset.pxi"
include "_bitround.pxi"



from zdt.kernels._portable cimport zdt_cpu_x86_level, zdt_portable_build


def supported_builds():
    """The kernel builds this CPU (and OS) can run, baseline first: "avx2" needs x86-64-v3
    (AVX2, FMA, BMI2, F16C), "avx512" x86-64-v4."""
    level = zdt_cpu_x86_level()
    return ["baseline"] + (["avx2"] if level >= 3 else []) + (["avx512"] if level >= 4 else [])


def portable_build():
    """True when this build uses the portable fallbacks of zdt/kernels/_portable.h (ZDT_PORTABLE=1 at
    build time, or a compiler without gcc's builtins) instead of gcc/clang builtins."""
    return bool(zdt_portable_build())
