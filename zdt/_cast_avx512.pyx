# cython: language_level=3, cdivision=True
"""cast_value kernels compiled for x86-64-v4 (AVX-512 F/BW/CD/DQ/VL)."""

include "_cast_impl.pxi"
