# cython: language_level=3, cdivision=True
"""zdt's element-wise kernels compiled for x86-64-v3 (AVX2, FMA, BMI2, F16C): the steps of cast_value
(_cast.pxi), scale_offset (_scale_offset.pxi) and bitround (_bitround.pxi). One source, three builds; zdt.kernels loads
the best one the CPU runs."""

cdef str BUILD = "avx2"

include "_cast.pxi"
include "_scale_offset.pxi"
include "_bitround.pxi"
