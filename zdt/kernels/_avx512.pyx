# cython: language_level=3, cdivision=True
"""zdt kernels (cast_value, scale_offset, fused chains of both) compiled for x86-64-v4 (AVX-512)."""

include "_cast.pxi"
include "_scale_offset.pxi"
include "_chain.pxi"
