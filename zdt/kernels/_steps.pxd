# cython: language_level=3
"""The per-block step: the one interface between the kernels of an element-wise codec and
whatever runs them (a codec on a whole array, a fused chain of codecs in the pipeline).

A step transforms one block of m <= BLOCK elements from `src` to `dst` (which never overlap,
except that `src == dst` exactly is allowed where `in_place` says so) and returns -1, or the
index in the block of the first element it cannot transform with a status code of its kernel
family in *status. `params` points to the kernel's parameters (owned by the spec object the
step holds). A kernel family provides its step with a factory in its .pxi (`cast_step`,
`scale_offset_step`, ...), compiled into every kernel build; `run_steps` (in _steps.pyx,
compiled once) runs any list of steps over strided n-d arrays, block by block.
"""

from libc.stdint cimport uint8_t

ctypedef Py_ssize_t (*block_fn)(const uint8_t* src, uint8_t* dst, Py_ssize_t m,
                                const void* params, int* status) noexcept nogil

ctypedef struct Step:
    block_fn run
    const void* params
    int in_itemsize
    int out_itemsize
    bint in_place           # run(src, dst) with src == dst is allowed
    block_fn run_stream     # NULL, or `run` writing dst with streaming stores (_stream.h): what
                            # run_steps uses as the last step into a destination larger than
                            # the caches


cdef class BlockStep:
    cdef Step step
    cdef readonly object spec       # the kernel spec object that owns `params`
    cdef readonly str build         # the kernel build `run` comes from


cdef BlockStep make_step(block_fn run, const void* params, object spec, int in_itemsize,
                         int out_itemsize, bint in_place, str build, block_fn run_stream=*)
