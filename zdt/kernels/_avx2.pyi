"""Type stub of this kernel build: the same interface as zdt/kernels/_baseline.pyi."""

from zdt.kernels._baseline import BLOCK_SIZE as BLOCK_SIZE
from zdt.kernels._baseline import bitround_step as bitround_step
from zdt.kernels._baseline import cast_step as cast_step
from zdt.kernels._baseline import fast_flags as fast_flags
from zdt.kernels._baseline import scale_offset_step as scale_offset_step
