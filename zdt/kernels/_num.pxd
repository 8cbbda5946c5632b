# cython: language_level=3
"""Numeric helpers shared by the cast and scale_offset kernels (inline, nogil, compiled into each
kernel build with its instruction set): block size, powers of two, type limits, bit patterns."""

from libc.float cimport DBL_MAX, FLT_MAX
from libc.math cimport fabs, fabsf
from libc.stdint cimport int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t
from libc.string cimport memcpy

from zdt.kernels._types cimport float_t, int_t, num_t

# Elements per block: a block's source (<= 16 KiB), destination and mask stay in L1/L2, and a
# block of temporaries fits on the stack of the per-block steps.
cdef enum:
    BLOCK = 2048


cdef inline float_t pow2(int k, float_t* tag) noexcept nogil:
    """2**k exactly, built from its bit pattern (k within the normal range of float_t)."""
    cdef uint64_t b64
    cdef uint32_t b32
    cdef double d
    cdef float f
    if float_t is double:
        b64 = (<uint64_t>(1023 + k)) << 52
        memcpy(&d, &b64, 8)
        return d
    else:
        b32 = (<uint32_t>(127 + k)) << 23
        memcpy(&f, &b32, 4)
        return f


cdef inline int precision(float_t* tag) noexcept nogil:
    if float_t is double:
        return 53
    return 24


cdef inline float_t max_finite(float_t* tag) noexcept nogil:
    if float_t is double:
        return DBL_MAX
    return FLT_MAX


cdef inline float_t fabs_t(float_t x) noexcept nogil:
    if float_t is double:
        return fabs(x)
    return fabsf(x)


cdef inline int int_bits(int_t* tag) noexcept nogil:
    return sizeof(int_t) * 8


cdef inline bint int_signed(int_t* tag) noexcept nogil:
    return (<int_t>-1) < 0


cdef inline int_t int_max(int_t* tag) noexcept nogil:
    if int_signed(tag):
        return <int_t>(((<uint64_t>1) << (sizeof(int_t) * 8 - 1)) - 1)
    return <int_t>(~(<uint64_t>0))


cdef inline int_t int_min(int_t* tag) noexcept nogil:
    if int_signed(tag):
        return <int_t>((<uint64_t>1) << (sizeof(int_t) * 8 - 1))
    return 0


cdef inline int64_t int_min64(int_t* tag) noexcept nogil:
    return <int64_t>int_min(tag)


cdef inline uint64_t int_max64(int_t* tag) noexcept nogil:
    return <uint64_t>int_max(tag)


cdef inline num_t from_bits(uint64_t bits, num_t* tag) noexcept nogil:
    """The value of type num_t whose bit pattern is the low bits of `bits`."""
    cdef num_t v
    cdef uint8_t b1
    cdef uint16_t b2
    cdef uint32_t b4
    if sizeof(num_t) == 1:
        b1 = <uint8_t>bits
        memcpy(&v, &b1, 1)
    elif sizeof(num_t) == 2:
        b2 = <uint16_t>bits
        memcpy(&v, &b2, 2)
    elif sizeof(num_t) == 4:
        b4 = <uint32_t>bits
        memcpy(&v, &b4, 4)
    else:
        memcpy(&v, &bits, 8)
    return v
