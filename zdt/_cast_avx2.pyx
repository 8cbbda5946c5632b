# cython: language_level=3, cdivision=True
"""cast_value kernels compiled for x86-64-v3 (AVX2, FMA, BMI2)."""

include "_cast_impl.pxi"
