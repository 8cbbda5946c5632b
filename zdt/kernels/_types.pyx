# cython: language_level=3
"""Python face of _types.pxd: the enums (as IntEnum classes) and the kernel spec objects.

Compiled once (not per instruction-set build): every kernel build reads the same objects.
Spec objects are immutable after construction and may be shared between threads.
"""

from cpython.mem cimport PyMem_Free, PyMem_Malloc
from libc.stdint cimport uint8_t, uint32_t
from libc.string cimport memcpy

from zdt.kernels._exact cimport convert_element, float_is_nan


cdef void fill_format(Format* f, object fmt) except *:
    """The Format struct from a zdt.formats.NumberFormat, each field by its name."""
    f.kind = fmt.kind
    f.itemsize = fmt.itemsize
    f.bits = fmt.bits
    f.is_signed = fmt.signed
    f.man_bits = fmt.man_bits
    f.exp_bits = fmt.exp_bits
    f.bias = fmt.bias
    f.max_exp_field = fmt.max_exp_field
    f.max_man = fmt.max_man
    f.nan_style = fmt.nan_style
    f.nan_bits = fmt.nan_bits or 0
    f.inf_bits = fmt.inf_bits or 0
    f.has_inf = fmt.has_inf
    f.has_neg_zero = fmt.has_neg_zero
    f.has_zero = fmt.has_zero
    f.has_subnormal = fmt.has_subnormal


cdef class FormatRules:
    """The rules the kernels apply to a format's bit patterns, for Python to ask (so each rule
    is written once, in the kernels). Built from a zdt.formats.NumberFormat."""

    def __init__(self, fmt):
        fill_format(&self.f, fmt)

    def is_nan(self, uint64_t bits):
        """Whether `bits` is a NaN of the format (the unused high bits of a sub-byte format are
        ignored)."""
        if self.f.kind != FMT_FLOAT:
            return False
        return bool(float_is_nan(bits & ((<uint64_t>1 << self.f.bits) - 1) if self.f.bits < 64
                                 else bits, &self.f))


cdef void fill_mini(MiniFormat* m, const Format* f) noexcept:
    """The small-float loops' parameters for a signed float format with subnormals (every small
    float but float8_e8m0fnu)."""
    cdef uint32_t exp_all = (1u << f.exp_bits) - 1
    m.itemsize = f.itemsize
    m.bits = f.bits
    m.man_bits = f.man_bits
    m.bias = f.bias
    m.emin = 1 - f.bias
    m.emax = f.max_exp_field - f.bias
    m.max_finite = (<double>((1u << f.man_bits) | <uint32_t>f.max_man)) * (2.0 ** (m.emax - f.man_bits))
    m.min_normal = 2.0 ** m.emin
    m.sign_bit = 1u << (f.bits - 1)
    m.has_inf = f.has_inf
    m.has_nan = f.nan_style != NAN_NONE
    m.has_neg_zero = f.has_neg_zero
    m.inf_bits = <uint32_t>f.inf_bits
    m.nan_bits = <uint32_t>f.nan_bits
    m.clamp_bits = m.inf_bits if m.has_inf else \
        ((<uint32_t>f.max_exp_field) << f.man_bits) | <uint32_t>f.max_man
    # reading (see MiniFormat)
    m.rebias_bits = (<uint32_t>(127 - f.bias)) << 23
    m.sub_scale = 2.0 ** (m.emin - f.man_bits)
    m.sub_by_shift = f.bias == 127
    m.special_rest = (exp_all << f.man_bits) if f.nan_style == NAN_IEEE else (1u << f.bits)
    m.nan_sign = 0
    if f.nan_style == NAN_ALL_ONES:
        m.nan_rest = m.nan_bits
    elif f.nan_style == NAN_NEG_ZERO:
        m.nan_rest = 0
        m.nan_sign = m.sign_bit
    else:
        m.nan_rest = 1u << f.bits       # none (IEEE NaNs are among the specials)


cdef float* byte_table(object source) except NULL:
    """The float32 value of each of the 256 bytes of a one-byte format, by the exact path
    (unused high bits ignored as the format's rules say). The caller frees it."""
    from zdt.formats import FORMATS

    cdef CastSpec sp
    cdef uint8_t b
    cdef int i, st
    cdef float* table = <float*>PyMem_Malloc(256 * sizeof(float))
    if table == NULL:
        raise MemoryError()
    fill_format(&sp.src, source)
    fill_format(&sp.dst, FORMATS["float32"])
    sp.rounding = NEAREST_EVEN
    sp.out_of_range = OOR_ERROR
    sp.map = NULL
    sp.map_len = 0
    for i in range(256):
        b = <uint8_t>i
        st = convert_element(&b, <uint8_t*>&table[i], &sp)
        if st != ST_OK:
            PyMem_Free(table)
            raise AssertionError(f"{source.name} byte {i} has no float32 value")
    return table


cdef MapEntry* fill_map(CastSpec* sp, object entries_in) except? NULL:
    """Copy scalar_map entries (objects with .kind, .key_bits, .out_bits, first match wins)
    into C memory owned by the caller, and derive how the fast loops may apply them."""
    cdef Py_ssize_t k
    cdef MapEntry* entries = NULL
    entries_in = list(entries_in)
    sp.map_len = len(entries_in)
    sp.map_blendable = True
    sp.nan_fold = False
    sp.nan_out = 0
    sp.map = NULL
    if sp.map_len == 0:
        return NULL
    entries = <MapEntry*>PyMem_Malloc(sp.map_len * sizeof(MapEntry))
    if entries == NULL:
        raise MemoryError()
    for k in range(sp.map_len):
        e = entries_in[k]
        entries[k].kind = e.kind
        entries[k].key_bits = e.key_bits
        entries[k].out_bits = e.out_bits
        if entries[k].kind == KEY_NAN_BITS:
            sp.map_blendable = False
        elif entries[k].kind == KEY_ANY_NAN and not sp.nan_fold:
            # the first "NaN" key wins; float -> int loops apply it inline
            sp.nan_fold = True
            sp.nan_out = entries[k].out_bits
    sp.map = entries
    return entries


cdef class CastKernelSpec:
    """One direction of a cast, as every kernel build reads it.

    `source`, `target`: zdt.formats.NumberFormat. `rounding`, `out_of_range`: Rounding /
    OutOfRange. `map_entries`: scalar_map entries (.kind, .key_bits, .out_bits) in order.
    `fast`: None (exact path only) or a zdt.formats.fast_path.FastView (how the fast loops read and
    write it).
    """

    def __init__(self, *, source, target, int rounding, int out_of_range, map_entries, fast):
        cdef CastSpec* sp = &self.k.exact
        cdef CastSpec* fsp = &self.k.fast
        if self._map != NULL or self._fast_map != NULL or self._table != NULL:
            raise TypeError("CastKernelSpec is immutable")
        fill_format(&sp.src, source)
        fill_format(&sp.dst, target)
        sp.src_code = T_NONE
        sp.dst_code = T_NONE
        sp.rounding = rounding
        sp.out_of_range = out_of_range
        sp.safe_lo = sp.safe_hi = 0
        sp.narrow_bits = 0
        self._map = fill_map(sp, map_entries)
        self.k.has_fast = fast is not None
        self.k.widen = WIDEN_NONE
        self.k.orig_code = T_NONE
        self.k.table = NULL
        fsp[0] = sp[0]
        fsp.map = NULL
        fsp.map_len = 0
        if fast is None:
            return
        self.k.widen = fast.widen
        self.k.orig_code = source.type_code
        if fast.widen == WIDEN_TABLE:
            self._table = byte_table(source)
            self.k.table = self._table
        elif fast.widen == WIDEN_MINI:
            fill_mini(&self.k.src_mini, &sp.src)
        fill_format(&fsp.src, fast.source)
        fsp.src_code = fast.source.type_code
        fsp.dst_code = fast.target_code
        if fsp.dst_code == T_MINI:
            fill_mini(&fsp.mini, &sp.dst)
        fsp.narrow_bits = fast.narrow_bits
        fsp.safe_lo = fast.safe_lo
        fsp.safe_hi = fast.safe_hi
        self._fast_map = fill_map(fsp, fast.map_entries)
        if fast.force_exact_map:
            fsp.map_blendable = False
        # only the float -> integer loops fold NaN, and only when every key can be blended
        fsp.nan_fold = (fsp.nan_fold and fsp.map_blendable
                        and (fsp.src_code == T_F32 or fsp.src_code == T_F64)
                        and T_I8 <= fsp.dst_code <= T_U64)

    def __dealloc__(self):
        PyMem_Free(self._map)
        PyMem_Free(self._fast_map)
        PyMem_Free(self._table)

    @property
    def has_fast(self):
        return bool(self.k.has_fast)

    @property
    def safe_range(self):
        """(lo, hi) bit patterns of the fast source type (meaningful with a fast path)."""
        return self.k.fast.safe_lo, self.k.fast.safe_hi


cdef class ScaleOffsetKernelSpec:
    """scale_offset on one data type: `fmt` (a zdt.formats.NumberFormat with a fast loop: a
    C type, a sub-byte integer or a small float), and the offset (one bit pattern per
    direction) and scale as bit patterns of the type."""

    def __init__(self, *, fmt, uint64_t enc_offset, uint64_t dec_offset, uint64_t scale):
        cdef Format f
        if self._table != NULL:
            raise TypeError("ScaleOffsetKernelSpec is immutable")
        fill_format(&f, fmt)
        self.k.code = fmt.type_code
        self.k.itemsize = f.itemsize
        self.k.int_bits = f.bits if (f.kind == FMT_INT and f.bits < 8 * f.itemsize) else 0
        self.k.widen = WIDEN_NONE
        self.k.table = NULL
        self.k.exact_round = False
        if self.k.code == T_NONE and f.kind == FMT_FLOAT and f.itemsize == 1:
            # float8_e8m0fnu: no MiniFormat, each result rounded by the exact path
            from zdt.formats import FORMATS

            self.k.code = T_MINI
            self.k.exact_round = True
            fill_format(&self.k.rounding.src, FORMATS["float64"])
            self.k.rounding.dst = f
            self.k.rounding.rounding = NEAREST_EVEN
            self.k.rounding.out_of_range = OOR_ERROR
            self.k.rounding.map = NULL
            self.k.rounding.map_len = 0
        elif self.k.code == T_MINI:
            fill_mini(&self.k.mini, &f)
        if self.k.code == T_NONE:
            raise ValueError(f"scale_offset kernels cannot compute in {fmt.name}")
        if self.k.code <= T_U64 and scale == 0:
            # integer division by zero would trap; ScaleOffsetPlan rejects it first
            raise ValueError("scale_offset: scale must not be zero (decoding divides by it)")
        if self.k.exact_round:
            self._table = byte_table(fmt)
            self.k.table = self._table
            self.k.widen = WIDEN_TABLE
        elif self.k.code == T_MINI:
            self.k.widen = WIDEN_MINI
        self.k.enc_offset = enc_offset
        self.k.dec_offset = dec_offset
        self.k.scale = scale

    def __dealloc__(self):
        PyMem_Free(self._table)

    @property
    def itemsize(self):
        return self.k.itemsize


cdef class BitroundKernelSpec:
    """bitround on one data type: `is_float`, `width` (bits per value), `is_signed`,
    `man_bits` (floats), `keepbits` (>= 1, below the type's significant bits: every other
    keepbits is the identity, which needs no kernel) and `lanes` (values per element: 2 for
    complex)."""

    def __init__(self, *, bint is_float, int width, bint is_signed, int man_bits, int keepbits,
                 int lanes=1):
        if width not in (8, 16, 32, 64) or lanes not in (1, 2):
            raise ValueError(f"bitround kernels cannot round {width}-bit values in {lanes} lanes")
        if is_float and (width == 8 or not 0 < keepbits < man_bits):
            raise ValueError("bitround: keepbits must be 1 .. the mantissa bits - 1 here")
        if not is_float and not 0 < keepbits < width:
            raise ValueError("bitround: keepbits must be 1 .. the integer's bits - 1 here")
        self.k.is_float = is_float
        self.k.width = width
        self.k.is_signed = is_signed
        self.k.man_bits = man_bits
        self.k.keepbits = keepbits
        self.k.lanes = lanes

    @property
    def itemsize(self):
        return self.k.width // 8 * self.k.lanes
