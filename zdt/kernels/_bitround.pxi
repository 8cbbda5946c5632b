# bitround kernels (zarr-extensions codecs/bitround, rulings in docs/spec-rulings.md): keep
# `keepbits` significant bits of each value, rounding the dropped ones to nearest with ties to
# even; the per-block step `bitround_step`. Included by each kernel build.
#
# Floats are rounded as their bit patterns (the BitInformation / numcodecs BitRound algorithm:
# add half a unit minus one plus the last kept bit, clear the dropped bits); a carry may step
# into the exponent. NaN and +-Infinity are left as they are, and a finite value whose carry
# would reach the infinity pattern is rounded toward zero instead (numcodecs 0.17 turns some
# NaNs and float32's largest value into +-Infinity; zdt does not).
#
# Integers are rounded as their two's complement bit patterns, counted from the most
# significant set bit (for a negative value that is the sign bit), as zarrs does; a carry out
# of the type's bits, or from a non-negative value into the sign bit, would overflow the type:
# such a value is rounded toward zero (its dropped bits cleared) instead.

from libc.stdint cimport int64_t, uint8_t, uint16_t, uint32_t, uint64_t

from zdt.kernels._portable cimport zdt_clz64
from zdt.kernels._steps cimport make_step
from zdt.kernels._types cimport BitroundKernel, BitroundKernelSpec

ctypedef fused ubits_t:
    uint8_t
    uint16_t
    uint32_t
    uint64_t


cdef void bitround_float(const ubits_t* s, ubits_t* d, Py_ssize_t n, int man_bits,
                         int keepbits) noexcept nogil:
    """Bit patterns of a float with `man_bits` stored mantissa bits, 0 < keepbits < man_bits.
    Branch-free (selects), so the compiler vectorises it."""
    cdef int m = man_bits - keepbits
    cdef ubits_t one = 1
    cdef ubits_t mask = ~((one << m) - one)
    cdef ubits_t half_minus_one = (one << (m - 1)) - one
    cdef ubits_t sign = one << (sizeof(ubits_t) * 8 - 1)
    cdef ubits_t exp_field = (~sign) & ~((one << man_bits) - one)
    cdef ubits_t u, r
    cdef Py_ssize_t i
    for i in range(n):
        u = s[i]
        r = (u + ((u >> m) & one) + half_minus_one) & mask
        # a finite value whose rounding reached the exponent's all-ones pattern: toward zero
        r = (u & mask) if (r & exp_field) == exp_field else r
        # NaN and +-Infinity (exponent all ones) as they are
        d[i] = u if (u & exp_field) == exp_field else r


cdef void bitround_int(const ubits_t* s, ubits_t* d, Py_ssize_t n, int keepbits,
                       bint is_signed) noexcept nogil:
    """Two's complement bit patterns of an integer, 0 < keepbits < its bits."""
    cdef int w = sizeof(ubits_t) * 8
    cdef uint64_t sign = (<uint64_t>1) << (w - 1)
    cdef uint64_t u, r, cleared, low
    cdef int msb, drop
    cdef Py_ssize_t i
    for i in range(n):
        u = s[i]
        if u == 0:
            d[i] = 0
            continue
        msb = 63 - zdt_clz64(u)
        drop = msb + 1 - keepbits
        if drop <= 0:
            d[i] = <ubits_t>u
            continue
        low = ((<uint64_t>1) << drop) - 1
        cleared = u & ~low
        r = u + ((u >> drop) & 1) + (low >> 1)
        if w < 64 and (r >> w) != 0:
            r = cleared                           # carried out of the type's bits
        elif w == 64 and r < u:
            r = cleared                           # (64 bits: the carry wrapped)
        elif is_signed and (u & sign) == 0 and (r & sign) != 0:
            r = cleared                           # a non-negative value carried into the sign
        else:
            r = r & ~low
        d[i] = <ubits_t>r


cdef Py_ssize_t bitround_fn(const uint8_t* src, uint8_t* dst, Py_ssize_t m, const void* params,
                            int* status) noexcept nogil:
    cdef const BitroundKernel* k = <const BitroundKernel*>params
    cdef Py_ssize_t n = m * k.lanes
    if k.is_float:
        if k.width == 16:
            bitround_float(<const uint16_t*>src, <uint16_t*>dst, n, k.man_bits, k.keepbits)
        elif k.width == 32:
            bitround_float(<const uint32_t*>src, <uint32_t*>dst, n, k.man_bits, k.keepbits)
        else:
            bitround_float(<const uint64_t*>src, <uint64_t*>dst, n, k.man_bits, k.keepbits)
    elif k.width == 8:
        bitround_int(<const uint8_t*>src, <uint8_t*>dst, n, k.keepbits, k.is_signed)
    elif k.width == 16:
        bitround_int(<const uint16_t*>src, <uint16_t*>dst, n, k.keepbits, k.is_signed)
    elif k.width == 32:
        bitround_int(<const uint32_t*>src, <uint32_t*>dst, n, k.keepbits, k.is_signed)
    else:
        bitround_int(<const uint64_t*>src, <uint64_t*>dst, n, k.keepbits, k.is_signed)
    return -1


def bitround_step(BitroundKernelSpec spec not None):
    """bitround as a step of this build (it never fails; it may run in place)."""
    return make_step(bitround_fn, &spec.k, spec, spec.itemsize, spec.itemsize, True, BUILD)
