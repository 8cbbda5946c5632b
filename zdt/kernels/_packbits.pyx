# cython: language_level=3, cdivision=True
"""The packbits bit stream (zarr-extensions codecs/packbits), both ways, nogil.

Each component (an element, or the real / imaginary part of a complex one) is read as its
N-bit little-endian value; its bits first_bit .. first_bit + b - 1 are appended to the stream;
stream bit j is bit (j mod 8), counted from the least significant, of byte j // 8 (as zarrs
writes it: the spec does not say). The stream is padded with zero bits to whole bytes.
Decoding puts the b bits back at first_bit and sign-extends (signed integers) or zero-extends
(everything else) to the component's storage, so sub-byte integers come back sign-extended in
their byte, zdt's storage rule.

Components are 1, 2, 4 or 8 bytes in native order; this module handles little-endian hosts
only (zdt.codecs.packbits refuses big-endian ones before calling it).
"""

from libc.stdint cimport int64_t, uint8_t, uint16_t, uint32_t, uint64_t
from libc.string cimport memcpy, memset

from zdt.errors import CorruptChunkError


cdef inline uint64_t load_comp(const uint8_t* p, int nbytes) noexcept nogil:
    cdef uint64_t v = 0
    memcpy(&v, p, nbytes)            # little-endian host: the low bytes of v
    return v


cdef inline void store_comp(uint8_t* p, int nbytes, uint64_t v) noexcept nogil:
    memcpy(p, &v, nbytes)


cdef inline uint64_t low_mask(int b) noexcept nogil:
    return (<uint64_t>0xFFFFFFFFFFFFFFFF) if b >= 64 else ((<uint64_t>1 << b) - 1)


cdef void pack_generic(const uint8_t* src, Py_ssize_t ncomp, int nbytes, int first_bit, int b,
                       uint8_t* out) noexcept nogil:
    """Any width: a 64-bit accumulator holding fewer than 8 pending bits between components;
    a component wider than 56 bits is appended in two halves."""
    cdef Py_ssize_t i, o = 0
    cdef uint64_t acc = 0, v, part
    cdef int nacc = 0, left, take
    cdef uint64_t mask = low_mask(b)
    for i in range(ncomp):
        v = (load_comp(src + i * nbytes, nbytes) >> first_bit) & mask
        left = b
        while left > 0:
            take = left if left <= 32 else 32
            part = v & low_mask(take)
            v = v >> take if take < 64 else 0
            acc |= part << nacc
            nacc += take
            left -= take
            while nacc >= 8:
                out[o] = <uint8_t>acc
                o += 1
                acc >>= 8
                nacc -= 8
    if nacc:
        out[o] = <uint8_t>acc


cdef void pack_narrow(const uint8_t* src, Py_ssize_t n, int b, uint8_t* out) noexcept nogil:
    """One-byte components of 1, 2 or 4 bits from bit 0 (bool, int2 / int4, float4, ...):
    8 // b components per output byte."""
    cdef Py_ssize_t j, full, i
    cdef int per = 8 // b, k
    cdef uint8_t mask = <uint8_t>((1 << b) - 1), byte
    full = n // per
    if b == 4:
        for j in range(full):
            out[j] = (src[2 * j] & 0x0F) | <uint8_t>((src[2 * j + 1] & 0x0F) << 4)
    else:
        for j in range(full):
            byte = 0
            for k in range(per):
                byte |= <uint8_t>((src[j * per + k] & mask) << (k * b))
            out[j] = byte
    if full * per < n:
        byte = 0
        k = 0
        for i in range(full * per, n):
            byte |= <uint8_t>((src[i] & mask) << (k * b))
            k += 1
        out[full] = byte


cdef void unpack_generic(const uint8_t* data, Py_ssize_t ncomp, int nbytes, int first_bit,
                         int b, int sign_bit, uint8_t* out) noexcept nogil:
    """The b bits of each component back at first_bit; sign-extended from sign_bit (-1: zero
    extension)."""
    cdef Py_ssize_t i, pos = 0
    cdef uint64_t acc = 0, v, part
    cdef int nacc = 0, got, take, sh
    for i in range(ncomp):
        v = 0
        got = 0
        while got < b:
            take = b - got if b - got <= 32 else 32
            while nacc < take:
                acc |= (<uint64_t>data[pos]) << nacc
                pos += 1
                nacc += 8
            part = acc & low_mask(take)
            acc >>= take
            nacc -= take
            v |= part << got
            got += take
        v = v << first_bit
        if sign_bit >= 0:
            sh = 63 - sign_bit
            v = <uint64_t>((<int64_t>(v << sh)) >> sh)
        store_comp(out + i * nbytes, nbytes, v)


cdef void unpack_narrow(const uint8_t* data, Py_ssize_t n, int b, bint signed,
                        uint8_t* out) noexcept nogil:
    """Inverse of pack_narrow, byte by byte, sign-extending signed values to the byte."""
    cdef Py_ssize_t j, i, full
    cdef int per = 8 // b, sh = 8 - b, k
    cdef uint8_t mask = <uint8_t>((1 << b) - 1), byte, v
    full = n // per
    if b == 4:
        if signed:
            for j in range(full):
                byte = data[j]
                out[2 * j] = <uint8_t>((<signed char>(<uint8_t>(byte << 4))) >> 4)
                out[2 * j + 1] = <uint8_t>((<signed char>byte) >> 4)
        else:
            for j in range(full):
                byte = data[j]
                out[2 * j] = byte & 0x0F
                out[2 * j + 1] = byte >> 4
    else:
        for j in range(full):
            byte = data[j]
            for k in range(per):
                v = (byte >> (k * b)) & mask
                if signed:
                    v = <uint8_t>((<signed char>(<uint8_t>(v << sh))) >> sh)
                out[j * per + k] = v
    for i in range(full * per, n):
        v = <uint8_t>((data[i // per] >> ((i % per) * b)) & mask)
        if signed:
            v = <uint8_t>((<signed char>(<uint8_t>(v << sh))) >> sh)
        out[i] = v


def packed_size(Py_ssize_t ncomp, int b):
    """Bytes of the stream (without a padding byte) and the number of zero bits padding it."""
    cdef Py_ssize_t bits = ncomp * b
    return (bits + 7) // 8, (8 - bits % 8) % 8


def pack(src, Py_ssize_t ncomp, int nbytes, int first_bit, int b, int padding):
    """The stream of `ncomp` components (src: their bytes, native order), as a uint8 array;
    `padding`: 0 none, 1 a first byte, 2 a last byte holding the number of padding bits."""
    import numpy as np

    cdef const uint8_t[::1] sv = src
    cdef Py_ssize_t size, pad, start
    cdef uint8_t[::1] ov
    if sv.shape[0] != ncomp * nbytes:
        raise ValueError("packbits: the array's bytes do not match its element count")
    size, pad = packed_size(ncomp, b)
    out = np.zeros(size + (1 if padding else 0), dtype=np.uint8)
    ov = out
    start = 1 if padding == 1 else 0
    if padding == 1:
        ov[0] = <uint8_t>pad
    elif padding == 2:
        ov[size] = <uint8_t>pad
    if ncomp == 0:
        return out
    with nogil:
        if nbytes == 1 and first_bit == 0 and (b == 1 or b == 2 or b == 4):
            pack_narrow(&sv[0], ncomp, b, &ov[start])
        elif first_bit == 0 and b == 8 * nbytes:
            memcpy(&ov[start], &sv[0], ncomp * nbytes)       # whole little-endian values
        else:
            pack_generic(&sv[0], ncomp, nbytes, first_bit, b, &ov[start])
    return out


def unpack(buf, Py_ssize_t ncomp, int nbytes, int first_bit, int b, int sign_bit, int padding,
           out, str codec="packbits"):
    """Decode a stream into `out` (a uint8 view of ncomp components). Checks the length, the
    padding byte and the unused bits first: a corrupt chunk is a ValueError naming what is
    wrong, never a read past the buffer."""
    cdef const uint8_t[::1] bv = buf
    cdef uint8_t[::1] ov = out
    cdef Py_ssize_t size, pad, expected, start
    cdef const uint8_t* data
    size, pad = packed_size(ncomp, b)
    expected = size + (1 if padding else 0)
    if bv.shape[0] != expected:
        raise CorruptChunkError(
            f"{codec}: corrupt chunk: {bv.shape[0]} bytes, but {ncomp} components of {b} bits "
            f"take {size}" + (" plus the padding byte" if padding else "")
            + (" (trailing bytes)" if bv.shape[0] > expected else " (truncated)"),
            codec=codec, part="length")
    if ov.shape[0] != ncomp * nbytes:
        raise ValueError("packbits: the output does not match the element count")
    start = 1 if padding == 1 else 0
    if padding:
        stored = bv[0] if padding == 1 else bv[size]
        if stored != pad:
            where = "first" if padding == 1 else "last"
            raise CorruptChunkError(f"{codec}: corrupt chunk: the padding byte ({where} byte) says "
                                    f"{stored} padding bits, but {ncomp} components of {b} bits "
                                    f"leave {pad}", codec=codec, part="padding byte")
    if pad and bv[start + size - 1] >> (8 - pad):
        raise CorruptChunkError(f"{codec}: corrupt chunk: the {pad} padding bits at the end of "
                                f"the stream are not zero", codec=codec, part="padding bits")
    if ncomp == 0:
        return out
    data = &bv[start]
    with nogil:
        if nbytes == 1 and first_bit == 0 and (b == 1 or b == 2 or b == 4):
            unpack_narrow(data, ncomp, b, sign_bit >= 0, &ov[0])
        elif first_bit == 0 and b == 8 * nbytes:
            memcpy(&ov[0], data, ncomp * nbytes)
        else:
            unpack_generic(data, ncomp, nbytes, first_bit, b, sign_bit, &ov[0])
    return out
