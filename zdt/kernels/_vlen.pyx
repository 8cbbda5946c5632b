# cython: language_level=3, cdivision=True, freethreading_compatible=True
"""Variable-length strings and bytes: the vlen-utf8 / vlen-bytes chunk layout and the
Arrow-style offsets layout, to and from NumPy StringDType and object arrays.

vlen layout:   u32le n | n x (u32le length | bytes)
arrow layout:  (n + 1) offsets (int32le or int64le, first 0, non-decreasing, last = data
               length) | zero padding to a multiple of 64 bytes | data (no trailing padding)

Decoding first validates the chunk's structure in a nogil pass (count against the chunk shape,
every length / offset against the buffer, no trailing bytes, zero padding) and only then builds
the result, checking each string's UTF-8 just before it is packed (its bytes are in cache
then). A corrupt chunk is a ValueError naming what and where, never an out-of-bounds read.
StringDType arrays are read and written through NumPy's string C API (NpyString_load /
NpyString_pack) under the array's allocator lock, without a Python object per element; the
lock is never held while calling into Python.

The only module built against NumPy's headers: keeping the StringDType C API here keeps every
other extension independent of NumPy's ABI.
"""

import numpy as np

from zdt.errors import CorruptChunkError

cimport numpy as cnp
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_Check, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from cpython.ref cimport Py_INCREF, Py_XDECREF, PyObject
from cpython.unicode cimport PyUnicode_Check
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libc.stdlib cimport free, malloc
from libc.string cimport memcpy, memset

cnp.import_array()

cdef extern from "numpy/ndarraytypes.h":
    ctypedef struct npy_string_allocator:
        pass
    ctypedef struct npy_packed_static_string:
        pass
    ctypedef struct npy_static_string:
        size_t size
        const char* buf
    ctypedef struct PyArray_StringDTypeObject:
        PyObject* na_object

# numpy's own declarations lack nogil
cdef extern from "numpy/arrayobject.h" nogil:
    npy_string_allocator* NpyString_acquire_allocator(const PyArray_StringDTypeObject*)
    void NpyString_release_allocator(npy_string_allocator*)
    int NpyString_load(npy_string_allocator*, const npy_packed_static_string*, npy_static_string*)
    int NpyString_pack(npy_string_allocator*, npy_packed_static_string*, const char*, size_t)

cdef extern from "Python.h":
    const char* PyUnicode_AsUTF8AndSize(object, Py_ssize_t*) except NULL
    object PyUnicode_DecodeUTF8(const char*, Py_ssize_t, const char*)
    object PyUnicode_New(Py_ssize_t, Py_UCS4)
    void* PyUnicode_DATA(object)


cdef inline bint is_ascii(const uint8_t* s, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t i = 0
    cdef uint64_t w, acc = 0
    while i + 8 <= n:
        memcpy(&w, s + i, 8)
        acc |= w
        i += 8
    while i < n:
        acc |= s[i]
        i += 1
    return (acc & 0x8080808080808080ULL) == 0


cdef inline object ascii_str(const uint8_t* s, Py_ssize_t n):
    """A compact ASCII str filled directly: what the UTF-8 decoder would build, minus its work."""
    cdef object obj = PyUnicode_New(n, 127)
    memcpy(PyUnicode_DATA(obj), s, n)
    return obj

cpdef enum Layout:
    VLEN = 0
    ARROW = 1

cdef enum Problem:
    OK = 0
    TRUNCATED_HEADER = 1     # fewer than 4 bytes (vlen) / than the offsets (arrow)
    COUNT_MISMATCH = 2       # header count != elements of the chunk
    LENGTH_PAST_END = 3      # element's length runs past the buffer
    TRAILING = 4             # bytes after the last element
    BAD_UTF8 = 5             # element is not valid UTF-8
    FIRST_OFFSET = 6         # arrow: first offset is not 0
    DECREASING = 7           # arrow: offset smaller than the previous one
    LAST_OFFSET = 8          # arrow: last offset != data length
    PADDING = 9              # arrow: padding bytes not zero
    NO_LENGTH = 10           # vlen: the chunk ends where an element's length should be

# the part of the chunk each problem is in (CorruptChunkError.part)
_PARTS = {TRUNCATED_HEADER: "header", COUNT_MISMATCH: "header", LENGTH_PAST_END: "lengths",
          TRAILING: "data", BAD_UTF8: "data", FIRST_OFFSET: "offsets", DECREASING: "offsets",
          LAST_OFFSET: "offsets", PADDING: "padding", NO_LENGTH: "lengths"}
_PROBLEMS = {
    TRUNCATED_HEADER: "the chunk is shorter than its header",
    COUNT_MISMATCH: "the chunk holds {value} elements but its shape needs {n}",
    LENGTH_PAST_END: "element {index}: its length {value} runs past the end of the chunk",
    TRAILING: "{value} bytes follow the last element",
    BAD_UTF8: "element {index} is not valid UTF-8 (byte {value} of it)",
    FIRST_OFFSET: "the first offset is {value}, not 0",
    DECREASING: "offset number {offset} ({value}) is smaller than the one before it",
    LAST_OFFSET: "the last offset ({value}) is not the length of the data",
    PADDING: "padding byte {value} after the offsets is not zero",
    NO_LENGTH: "element {index}: the chunk ends before its length",
}


# --- UTF-8 ----------------------------------------------------------------------------------------

cdef extern from *:
    """
    /* mask of the first k (0..7) bytes, in memory order, of a 64-bit word loaded with memcpy */
    static inline uint64_t zdt_first_bytes_mask(int k) {
    #if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
        return k ? ~((((uint64_t)1) << (8 * (8 - k))) - 1) : 0;
    #else
        return (((uint64_t)1) << (8 * k)) - 1;
    #endif
    }
    """
    uint64_t zdt_first_bytes_mask(int k) noexcept nogil


cdef inline Py_ssize_t utf8_error(const uint8_t* s, Py_ssize_t n, Py_ssize_t avail) noexcept nogil:
    """-1 if s[:n] is valid UTF-8 (RFC 3629: no overlongs, no surrogates, <= U+10FFFF), else
    the offset of the first byte of the first invalid sequence. `avail` (>= n) bytes may be
    read from s: the all-ASCII test (almost every string) is then whole 64-bit words, the last
    one masked, with no per-byte branches."""
    cdef Py_ssize_t i = 0
    cdef uint64_t w
    cdef uint8_t c, c1
    while i + 8 <= n:
        memcpy(&w, s + i, 8)
        if (w & 0x8080808080808080ULL) != 0:
            break
        i += 8
    if i + 8 > n and avail - i >= 8:
        memcpy(&w, s + i, 8)
        if (w & 0x8080808080808080ULL & zdt_first_bytes_mask(<int>(n - i))) == 0:
            return -1
    while i < n:
        if i + 8 <= n:
            memcpy(&w, s + i, 8)
            if (w & 0x8080808080808080ULL) == 0:
                i += 8
                continue
        c = s[i]
        if c < 0x80:
            i += 1
        elif c < 0xC2:
            return i
        elif c < 0xE0:
            if i + 1 >= n or (s[i + 1] & 0xC0) != 0x80:
                return i
            i += 2
        elif c < 0xF0:
            if i + 2 >= n:
                return i
            c1 = s[i + 1]
            if (c1 & 0xC0) != 0x80 or (s[i + 2] & 0xC0) != 0x80:
                return i
            if (c == 0xE0 and c1 < 0xA0) or (c == 0xED and c1 >= 0xA0):
                return i      # overlong, or a UTF-16 surrogate
            i += 3
        elif c < 0xF5:
            if i + 3 >= n:
                return i
            c1 = s[i + 1]
            if ((c1 & 0xC0) != 0x80 or (s[i + 2] & 0xC0) != 0x80
                    or (s[i + 3] & 0xC0) != 0x80):
                return i
            if (c == 0xF0 and c1 < 0x90) or (c == 0xF4 and c1 >= 0x90):
                return i      # overlong, or beyond U+10FFFF
            i += 4
        else:
            return i
    return -1


# --- little-endian integers -----------------------------------------------------------------------

cdef inline uint32_t load_u32(const uint8_t* p) noexcept nogil:
    return (<uint32_t>p[0]) | (<uint32_t>p[1] << 8) | (<uint32_t>p[2] << 16) | (<uint32_t>p[3] << 24)


cdef inline void store_u32(uint8_t* p, uint32_t v) noexcept nogil:
    p[0] = v & 0xFF
    p[1] = (v >> 8) & 0xFF
    p[2] = (v >> 16) & 0xFF
    p[3] = (v >> 24) & 0xFF


cdef inline int64_t load_offset(const uint8_t* p, int width) noexcept nogil:
    cdef uint64_t v = load_u32(p)
    if width == 8:
        v |= (<uint64_t>load_u32(p + 4)) << 32
        return <int64_t>v
    return <int64_t>(<int32_t>(<uint32_t>v))


cdef inline void store_offset(uint8_t* p, int width, int64_t v) noexcept nogil:
    store_u32(p, <uint32_t>(<uint64_t>v & 0xFFFFFFFFULL))
    if width == 8:
        store_u32(p + 4, <uint32_t>(<uint64_t>v >> 32))


cdef inline Py_ssize_t padded(Py_ssize_t x) noexcept nogil:
    return (x + 63) // 64 * 64


# --- validation (nogil) ---------------------------------------------------------------------------

ctypedef struct Found:
    int problem
    Py_ssize_t index
    int64_t value


cdef int validate_vlen(const uint8_t* b, Py_ssize_t size, Py_ssize_t n, bint utf8,
                       Found* f) noexcept nogil:
    cdef Py_ssize_t pos = 4, i, bad
    cdef uint32_t length
    if size < 4 or n < 0:
        f.problem = TRUNCATED_HEADER
        return 1
    if <Py_ssize_t>load_u32(b) != n:
        f.problem = COUNT_MISMATCH
        f.value = load_u32(b)
        return 1
    for i in range(n):
        if size - pos < 4:
            f.problem = NO_LENGTH
            f.index = i
            return 1
        length = load_u32(b + pos)
        pos += 4
        if <uint64_t>length > <uint64_t>(size - pos):
            f.problem = LENGTH_PAST_END
            f.index = i
            f.value = length
            return 1
        if utf8:
            bad = utf8_error(b + pos, length, size - pos)
            if bad >= 0:
                f.problem = BAD_UTF8
                f.index = i
                f.value = bad
                return 1
        pos += length
    if pos != size:
        f.problem = TRAILING
        f.value = size - pos
        return 1
    return 0


cdef int validate_arrow(const uint8_t* b, Py_ssize_t size, Py_ssize_t n, int width, bint utf8,
                        Found* f) noexcept nogil:
    """Every offset is checked before any data byte is read."""
    cdef Py_ssize_t head, start, i, bad
    cdef int64_t prev = 0, cur, data_len
    if n < 0 or n >= size // width:          # the offsets alone need (n + 1) * width bytes
        f.problem = TRUNCATED_HEADER
        return 1
    head = (n + 1) * width
    start = padded(head)
    if size < start:
        f.problem = TRUNCATED_HEADER
        return 1
    data_len = size - start
    cur = load_offset(b, width)
    if cur != 0:
        f.problem = FIRST_OFFSET
        f.value = cur
        return 1
    for i in range(1, n + 1):
        cur = load_offset(b + i * width, width)
        if cur < prev:
            f.problem = DECREASING
            f.index = i
            f.value = cur
            return 1
        if cur > data_len:
            f.problem = LENGTH_PAST_END
            f.index = i - 1
            f.value = cur - prev
            return 1
        prev = cur
    if prev != data_len:
        f.problem = LAST_OFFSET        # the loop above caught offsets past the end
        f.value = prev
        return 1
    for i in range(head, start):
        if b[i] != 0:
            f.problem = PADDING
            f.value = i - head
            return 1
    if utf8:
        prev = 0
        for i in range(n):
            cur = load_offset(b + (i + 1) * width, width)
            bad = utf8_error(b + start + prev, cur - prev, size - start - prev)
            if bad >= 0:
                f.problem = BAD_UTF8
                f.index = i
                f.value = bad
                return 1
            prev = cur
    return 0


cdef tuple nd_index(Py_ssize_t i, tuple shape):
    """Element i (C order) of a chunk of `shape` as an n-d index; (i,) when no shape is known."""
    if shape is None:
        return (i,)
    return tuple(int(j) for j in np.unravel_index(i, shape)) if shape else ()


cdef raise_found(Found* f, Py_ssize_t n, str codec, tuple shape):
    # header problems (an offset beyond the elements) keep the offset's flat position
    index = nd_index(f.index, shape) if 0 <= f.index < n else (f.index,)
    msg = _PROBLEMS[f.problem].format(index=index, value=f.value, n=n, offset=f.index)
    raise CorruptChunkError(f"{codec}: corrupt chunk: {msg}", codec=codec, part=_PARTS[f.problem])


def validate(buf, Py_ssize_t n, int layout, int width, bint utf8, str codec, tuple shape):
    """Check a chunk; ValueError naming the problem and where, else None."""
    cdef const uint8_t[::1] b = buf
    cdef Found f
    cdef int bad
    cdef const uint8_t* p = &b[0] if b.shape[0] else <const uint8_t*>""
    f.problem = OK
    f.index = 0
    f.value = 0
    with nogil:
        if layout == VLEN:
            bad = validate_vlen(p, b.shape[0], n, utf8, &f)
        else:
            bad = validate_arrow(p, b.shape[0], n, width, utf8, &f)
    if bad:
        raise_found(&f, n, codec, shape)


# --- spans of a validated chunk -------------------------------------------------------------------

cdef inline bint span(const uint8_t* b, Py_ssize_t size, Py_ssize_t i, int layout, int width,
                      Py_ssize_t* pos, const uint8_t** start, Py_ssize_t* length) noexcept nogil:
    """Element i's bytes (vlen: walks `pos` forward; call with i = 0, 1, ...). The chunk was
    validated, but the caller's buffer may be mutable and change between the passes: every span
    is checked against the buffer again (False: it no longer fits)."""
    cdef int64_t o0, o1
    cdef uint32_t len32
    if layout == VLEN:
        if size - pos[0] < 4:
            return False
        len32 = load_u32(b + pos[0])
        if <uint64_t>len32 > <uint64_t>(size - pos[0] - 4):
            return False
        length[0] = len32
        start[0] = b + pos[0] + 4
        pos[0] += 4 + len32
    else:
        o0 = load_offset(b + i * width, width)
        o1 = load_offset(b + (i + 1) * width, width)
        if o0 < 0 or o1 < o0 or o1 > size - pos[0]:
            return False
        start[0] = b + pos[0] + o0         # pos = start of the data region
        length[0] = o1 - o0
    return True


def decode_strings(buf, Py_ssize_t n, int layout, int width, str codec="vlen-utf8",
                   tuple shape=None):
    """A chunk validated for its structure -> 1-d StringDType array (no Python object per
    element). UTF-8 is checked here, string by string, just before each is packed (its bytes
    are in cache then): one pass over the data instead of two."""
    cdef const uint8_t[::1] b = buf
    cdef cnp.ndarray out = np.empty(n, dtype=np.dtypes.StringDType())
    cdef PyArray_StringDTypeObject* descr = <PyArray_StringDTypeObject*>cnp.PyArray_DESCR(out)
    cdef char* base = cnp.PyArray_BYTES(out)
    cdef Py_ssize_t stride = cnp.PyArray_STRIDES(out)[0] if n else 0
    cdef Py_ssize_t i, pos, length, size = b.shape[0], bad_at = -1, bad_byte = 0
    cdef const uint8_t* start
    cdef const uint8_t* p = &b[0] if b.shape[0] else <const uint8_t*>""
    cdef int rc = 0
    cdef bint changed = False
    cdef npy_string_allocator* alloc
    if n == 0:
        return out
    pos = 4 if layout == VLEN else padded((n + 1) * width)
    with nogil:
        alloc = NpyString_acquire_allocator(descr)
        for i in range(n):
            if not span(p, size, i, layout, width, &pos, &start, &length):
                changed = True
                break
            bad_byte = utf8_error(start, length, size - (start - p))
            if bad_byte >= 0:
                bad_at = i
                break
            rc = NpyString_pack(alloc, <npy_packed_static_string*>(base + i * stride),
                                <const char*>start, <size_t>length)
            if rc < 0:
                break
        NpyString_release_allocator(alloc)
    if changed:
        raise ValueError(f"{codec}: the chunk's buffer changed while it was being decoded")
    if bad_at >= 0:
        raise CorruptChunkError(f"{codec}: corrupt chunk: element {nd_index(bad_at, shape)} is not "
                                f"valid UTF-8 (byte {bad_byte} of it)", codec=codec, part="data")
    if rc < 0:
        raise MemoryError("packing a string into StringDType failed")
    return out


def decode_objects(buf, Py_ssize_t n, int layout, int width, bint utf8, str codec="vlen-utf8",
                   tuple shape=None):
    """A chunk validated for its structure -> 1-d object array of str (utf8) or bytes. UTF-8 is
    checked here, by the str construction itself (ASCII strings are built directly)."""
    cdef const uint8_t[::1] b = buf
    cdef cnp.ndarray out = np.empty(n, dtype=object)
    cdef PyObject** items = <PyObject**>cnp.PyArray_DATA(out)
    cdef Py_ssize_t i, pos, length
    cdef const uint8_t* start
    cdef const uint8_t* p = &b[0] if b.shape[0] else <const uint8_t*>""
    cdef object obj
    if n == 0:
        return out
    pos = 4 if layout == VLEN else padded((n + 1) * width)
    for i in range(n):
        if not span(p, b.shape[0], i, layout, width, &pos, &start, &length):
            raise ValueError(f"{codec}: the chunk's buffer changed while it was being decoded")
        if utf8:
            if is_ascii(start, length):
                obj = ascii_str(start, length)
            else:
                try:
                    obj = PyUnicode_DecodeUTF8(<const char*>start, length, NULL)
                except UnicodeDecodeError as e:
                    raise CorruptChunkError(f"{codec}: corrupt chunk: element {nd_index(i, shape)} "
                                            f"is not valid UTF-8 (byte {e.start} of it)",
                                            codec=codec, part="data") from None
        else:
            obj = PyBytes_FromStringAndSize(<const char*>start, length)
        Py_INCREF(obj)
        Py_XDECREF(items[i])             # np.empty(object) holds None
        items[i] = <PyObject*>obj
    return out


# --- encoding -------------------------------------------------------------------------------------

cdef object missing_error(Py_ssize_t index, str codec, tuple shape):
    return ValueError(f"{codec}: element {nd_index(index, shape)} is a missing value; {codec} has "
                      f"no way to store one (a missing value never becomes '')")


cdef object new_chunk(Py_ssize_t size):
    return np.empty(size, dtype=np.uint8)


cdef Py_ssize_t layout_size(Py_ssize_t n, int64_t total, int layout, int width) except -1:
    if layout == VLEN:
        return 4 + 4 * n + total
    return padded((n + 1) * width) + total


def _check_limits(Py_ssize_t n, int64_t total, int64_t longest, int layout, int width, str codec):
    if layout == VLEN:
        if n > 4294967295:
            raise ValueError(f"{codec}: {n} elements do not fit the 32-bit element count")
        if longest > 0xFFFFFFFF:
            raise ValueError(f"{codec}: an element of {longest} bytes does not fit a 32-bit length")
    elif width == 4 and total > 0x7FFFFFFF:
        raise ValueError(f"{codec}: the chunk holds {total} bytes of data, more than int32 offsets "
                         f"can address; configure {{\"offsets\": \"int64\"}}")


cdef void write_header(uint8_t* o, Py_ssize_t n, int layout, int width) noexcept nogil:
    cdef Py_ssize_t head
    if layout == VLEN:
        store_u32(o, <uint32_t>n)
    else:
        head = (n + 1) * width
        memset(o + head, 0, padded(head) - head)
        store_offset(o, width, 0)


cdef inline bint write_item(uint8_t* o, Py_ssize_t out_size, Py_ssize_t i, Py_ssize_t n,
                            int layout, int width, Py_ssize_t* pos, int64_t* acc, const char* s,
                            Py_ssize_t length) noexcept nogil:
    """Append element i; False (nothing written) if it no longer fits the chunk sized by the
    first pass: the array changed between the passes (another thread wrote to it)."""
    if layout == VLEN:
        if length > out_size - pos[0] - 4:
            return False
        store_u32(o + pos[0], <uint32_t>length)
        if length:      # an empty string's pointer may be NULL (memcpy from NULL is UB)
            memcpy(o + pos[0] + 4, s, length)
        pos[0] += 4 + length
    else:
        if length > out_size - pos[0] - acc[0]:
            return False
        if length:
            memcpy(o + pos[0] + acc[0], s, length)
        acc[0] += length
        store_offset(o + (i + 1) * width, width, acc[0])
    return True


cdef inline bint filled(Py_ssize_t out_size, int layout, Py_ssize_t pos, int64_t acc) noexcept nogil:
    return (pos if layout == VLEN else pos + acc) == out_size


_CHANGED = "the array changed while it was being encoded (is another thread writing to it?)"


cdef class StringScratch:
    """One thread's working memory for encode_strings: the bytes and end offsets of a chunk's
    strings, copied out under the array's allocator lock in one pass. It is kept between
    calls (vlen.py holds one per thread), so its pages are already mapped and the lock is held
    only for reading the strings, not for page faults; vlen.encode lets it go after use when it
    holds more than vlen.SCRATCH_KEEP_BYTES."""

    cdef char* data
    cdef Py_ssize_t data_cap
    cdef int64_t* ends
    cdef Py_ssize_t ends_cap

    def __dealloc__(self):
        free(self.data)
        free(self.ends)

    cdef int reserve(self, Py_ssize_t data_bytes, Py_ssize_t n) except -1:
        """Room for data_bytes bytes and n end offsets; fresh memory is touched here, outside
        any lock."""
        cdef void* p
        if data_bytes > self.data_cap:
            free(self.data)
            self.data = NULL
            self.data_cap = 0
            p = malloc(data_bytes)
            if p == NULL:
                raise MemoryError()
            with nogil:
                memset(p, 0, data_bytes)
            self.data = <char*>p
            self.data_cap = data_bytes
        if n > self.ends_cap:
            free(self.ends)
            self.ends = NULL
            self.ends_cap = 0
            p = malloc(n * sizeof(int64_t))
            if p == NULL:
                raise MemoryError()
            self.ends = <int64_t*>p
            self.ends_cap = n
        return 0

    def trim(self, Py_ssize_t limit):
        """Let go of the memory when it holds more than `limit` bytes."""
        if self.data_cap + self.ends_cap * <Py_ssize_t>sizeof(int64_t) > limit:
            free(self.data)
            free(self.ends)
            self.data = NULL
            self.ends = NULL
            self.data_cap = self.ends_cap = 0


cdef int copy_out(const char* base, Py_ssize_t stride, Py_ssize_t n, npy_string_allocator* alloc,
                  bint has_na, StringScratch sc, Py_ssize_t* bad, int64_t* total,
                  int64_t* longest) noexcept nogil:
    """Under the allocator lock: every element's bytes into sc.data (as far as they fit) and
    its end offset into sc.ends. Returns NpyString_load's failing code with *bad its element,
    else 0; *total is the bytes needed even when they did not fit, *longest the longest."""
    cdef npy_static_string s
    cdef Py_ssize_t i
    cdef int rc
    cdef int64_t pos = 0, most = 0
    for i in range(n):
        rc = NpyString_load(alloc, <const npy_packed_static_string*>(base + i * stride), &s)
        if rc < 0 or (rc == 1 and has_na):
            bad[0] = i
            return -1 if rc < 0 else 1
        # without an na_object a null string *is* "" (size 0)
        # (an empty string may have a NULL buf, and the scratch a NULL data: memcpy of 0 bytes
        # from or to NULL is undefined behaviour even so)
        if rc == 0 and s.size != 0 and pos + <int64_t>s.size <= sc.data_cap:
            memcpy(sc.data + pos, s.buf, s.size)
        if rc == 0:
            pos += s.size
            most = <int64_t>s.size if <int64_t>s.size > most else most
        sc.ends[i] = pos
    total[0] = pos
    longest[0] = most
    return 0


cdef void build_chunk(uint8_t* o, Py_ssize_t out_size, Py_ssize_t n, int layout, int width,
                      StringScratch sc) noexcept nogil:
    """The chunk from a filled scratch (out_size = layout_size of it): no lock needed."""
    cdef Py_ssize_t i, pos
    cdef int64_t prev = 0, length
    cdef const char* src
    write_header(o, n, layout, width)
    if layout != VLEN:
        for i in range(n):
            store_offset(o + (i + 1) * width, width, sc.ends[i])
        if n and sc.ends[n - 1]:      # (all empty: sc.data may be NULL, and memcpy(_, NULL, 0) is UB)
            memcpy(o + padded((n + 1) * width), sc.data, sc.ends[n - 1])
        return
    pos = 4
    for i in range(n):
        length = sc.ends[i] - prev
        src = sc.data + prev
        store_u32(o + pos, <uint32_t>length)
        if length <= 16 and pos + 20 <= out_size and prev + 16 <= sc.data_cap:
            # short strings (most of them): one fixed 16-byte move; the bytes past the
            # string are overwritten by the next element or lie inside the chunk's tail
            memcpy(o + pos + 4, src, 16)
        elif length:
            memcpy(o + pos + 4, src, length)
        pos += 4 + length
        prev = sc.ends[i]


def encode_strings(cnp.ndarray arr, int layout, int width, str codec, tuple shape,
                   StringScratch scratch not None):
    """1-d C-contiguous StringDType array -> chunk (uint8 array).

    The array's allocator lock (shared by every view of the array, so by every chunk of it) is
    held for one pass that copies the strings into the thread's scratch; the chunk is then
    built from the scratch without the lock, so threads encoding chunks of one array overlap
    all but that pass. One pass under one lock also sees one state of an array another thread
    is writing to."""
    cdef Py_ssize_t n = arr.shape[0], bad = -1
    cdef PyArray_StringDTypeObject* descr = <PyArray_StringDTypeObject*>cnp.PyArray_DESCR(arr)
    cdef const char* base = cnp.PyArray_BYTES(arr)
    cdef Py_ssize_t stride = cnp.PyArray_STRIDES(arr)[0] if n else 0
    cdef bint has_na = descr.na_object != NULL
    cdef npy_string_allocator* alloc
    cdef int rc = 0
    cdef int64_t total = 0, longest = 0, acc = 0
    cdef cnp.ndarray out
    scratch.reserve(0, n)
    with nogil:
        alloc = NpyString_acquire_allocator(descr)
        rc = copy_out(base, stride, n, alloc, has_na, scratch, &bad, &total, &longest)
        NpyString_release_allocator(alloc)
    if rc == 0 and total > scratch.data_cap:
        # the strings did not fit: a scratch of the right size, and the pass again
        scratch.reserve(total + total // 4, n)      # room for chunks a little bigger too
        with nogil:
            alloc = NpyString_acquire_allocator(descr)
            rc = copy_out(base, stride, n, alloc, has_na, scratch, &bad, &acc, &longest)
            NpyString_release_allocator(alloc)
        if rc == 0 and acc != total:
            raise RuntimeError(f"{codec}: {_CHANGED}")
    if rc < 0:
        raise MemoryError("reading a StringDType element failed")
    if rc > 0:
        raise missing_error(bad, codec, shape)
    _check_limits(n, total, longest, layout, width, codec)
    out = new_chunk(layout_size(n, total, layout, width))
    with nogil:
        build_chunk(<uint8_t*>cnp.PyArray_DATA(out), out.shape[0], n, layout, width, scratch)
    return out


def encode_objects(cnp.ndarray arr, int layout, int width, bint utf8, str codec, tuple shape):
    """1-d object array of str (utf8) or bytes -> chunk. None is a missing value: an error."""
    cdef Py_ssize_t n = arr.shape[0], i, pos, length
    cdef PyObject** items = <PyObject**>cnp.PyArray_DATA(arr)
    cdef object item
    cdef int64_t total = 0, longest = 0, acc = 0
    cdef const char* s
    cdef cnp.ndarray out
    cdef uint8_t* o
    cdef Py_ssize_t out_size
    for i in range(n):
        item = <object>items[i]
        if utf8 and PyUnicode_Check(item):
            try:
                PyUnicode_AsUTF8AndSize(item, &length)   # caches the UTF-8 form in the str
            except UnicodeEncodeError as e:
                raise ValueError(f"{codec}: element {nd_index(i, shape)} cannot be encoded as UTF-8 "
                                 f"({e.reason})") from None
        elif not utf8 and PyBytes_Check(item):
            length = PyBytes_GET_SIZE(item)
        elif item is None:
            raise missing_error(i, codec, shape)
        else:
            raise TypeError(f"{codec}: element {nd_index(i, shape)} is a {type(item).__name__}, expected "
                            f"{'str' if utf8 else 'bytes'}")
        total += length
        if length > longest:
            longest = length
    _check_limits(n, total, longest, layout, width, codec)
    out_size = layout_size(n, total, layout, width)
    out = new_chunk(out_size)
    o = <uint8_t*>cnp.PyArray_DATA(out)
    pos = 4 if layout == VLEN else padded((n + 1) * width)
    write_header(o, n, layout, width)
    for i in range(n):
        item = <object>items[i]
        if utf8 and PyUnicode_Check(item):
            s = PyUnicode_AsUTF8AndSize(item, &length)      # cached: no second encoding
        elif not utf8 and PyBytes_Check(item):
            s = PyBytes_AS_STRING(item)
            length = PyBytes_GET_SIZE(item)
        else:
            raise RuntimeError(f"{codec}: {_CHANGED}")
        if not write_item(o, out_size, i, n, layout, width, &pos, &acc, s, length):
            raise RuntimeError(f"{codec}: {_CHANGED}")
    if not filled(out_size, layout, pos, acc):
        raise RuntimeError(f"{codec}: {_CHANGED}")
    return out
