# cython: language_level=3
"""The contract between zdt's Python layer and its kernels, defined once.

* Enums (`cpdef enum`): the C kernels use the constants, Python imports the same definitions
  from `zdt.kernels._types` as IntEnum classes (`zdt.kernels._types.Rounding.TOWARDS_ZERO`). No copies.
* C structs: a number format (`Format`), a scalar_map entry (`MapEntry`), one cast as a loop
  sees it (`CastSpec`), a whole cast (`CastKernel`: the exact path's view plus the fast loops'
  view) and a scale_offset transformation (`ScaleOffsetKernel`).
* Spec objects (`CastKernelSpec`, `ScaleOffsetKernelSpec`, implemented in _types.pyx): built once
  per plan from named Python objects (every field read by name, so adding one cannot shift the
  others) and handed to any kernel build (baseline / AVX2 / AVX-512), which reads the struct
  inside and passes it to the per-block steps `cast_block` / `so_block`.
* Fused dtype lists and the mode tags that specialise the fast loops at compile time.
"""

from libc.stdint cimport (
    int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t,
)

# --- dtype axes -------------------------------------------------------------------------------
# Two copies of each list so a kernel can be fused over (source, destination) independently.

ctypedef fused float_t:
    float
    double

ctypedef fused float2_t:
    float
    double

ctypedef fused int_t:
    int8_t
    uint8_t
    int16_t
    uint16_t
    int32_t
    uint32_t
    int64_t
    uint64_t

ctypedef fused int2_t:
    int8_t
    uint8_t
    int16_t
    uint16_t
    int32_t
    uint32_t
    int64_t
    uint64_t

ctypedef fused num_t:
    int8_t
    uint8_t
    int16_t
    uint16_t
    int32_t
    uint32_t
    int64_t
    uint64_t
    float
    double

ctypedef fused num2_t:
    int8_t
    uint8_t
    int16_t
    uint16_t
    int32_t
    uint32_t
    int64_t
    uint64_t
    float
    double

# storage of a small float format (float16 / bfloat16: two bytes; float8 / 6 / 4: one)
ctypedef fused mini_t:
    uint8_t
    uint16_t

# --- mode axes ----------------------------------------------------------------------------------
# Each mode is an empty struct type. Kernels take a (never dereferenced) pointer to one, so
# `if rmode_t is RNearestEven:` is decided by Cython per specialisation and the C compiler sees
# a loop with the mode folded in. Passing the tag by pointer (not by value) keeps gcc's
# vectoriser happy: an aggregate copy in the loop body blocks vectorisation.

ctypedef struct RNearestEven:
    char _unused
ctypedef struct RTowardsZero:
    char _unused
ctypedef struct RTowardsPositive:
    char _unused
ctypedef struct RTowardsNegative:
    char _unused
ctypedef struct RNearestAway:
    char _unused

ctypedef fused rmode_t:
    RNearestEven
    RTowardsZero
    RTowardsPositive
    RTowardsNegative
    RNearestAway

ctypedef struct OError:
    char _unused
ctypedef struct OClamp:
    char _unused
ctypedef struct OWrap:
    char _unused

ctypedef fused omode_t:
    OError
    OClamp
    OWrap

# --- enums (Python: zdt.kernels._types.<EnumName>) ------------------------------------------------------

cpdef enum Rounding:
    NEAREST_EVEN = 0
    TOWARDS_ZERO = 1
    TOWARDS_POSITIVE = 2
    TOWARDS_NEGATIVE = 3
    NEAREST_AWAY = 4

cpdef enum OutOfRange:
    OOR_ERROR = 0       # out_of_range absent
    OOR_CLAMP = 1
    OOR_WRAP = 2

cpdef enum CastStatus:
    ST_OK = 0
    ST_NAN = 1          # NaN into a format without NaN (integers, float4, ...)
    ST_INF = 2          # +-Infinity into a format without infinities
    ST_RANGE = 3        # finite value outside the target's range, out_of_range not set
    ST_RANGE_WRAP = 4   # out of range under 'wrap' with a float target (decode direction)

cpdef enum ScaleOffsetStatus:
    SO_OK = 0
    SO_SUB = 1          # x - offset is not representable
    SO_MUL = 2          # (x - offset) * scale is not representable
    SO_REM = 3          # x / scale leaves a remainder (integers)
    SO_DIV = 4          # x / scale is not representable
    SO_ADD = 5          # x / scale + offset is not representable

cpdef enum TypeCode:
    # C types the fast loops know; T_NONE: no fast loop (exact path only)
    T_NONE = -1
    T_I8 = 0
    T_U8 = 1
    T_I16 = 2
    T_U16 = 3
    T_I32 = 4
    T_U32 = 5
    T_I64 = 6
    T_U64 = 7
    T_F32 = 8
    T_F64 = 9
    T_MINI = 10         # a small float format (float16, bfloat16, float8/6/4) written by the
                        # small-float loops its MiniFormat parametrises; stored in 1 or 2 bytes

cpdef enum FormatKind:
    FMT_INT = 0
    FMT_FLOAT = 1

cpdef enum NanStyle:
    NAN_NONE = 0        # no NaN (float6, float4, integers)
    NAN_IEEE = 1        # exponent all ones, mantissa != 0
    NAN_ALL_ONES = 2    # exponent and mantissa all ones (float8_e4m3fn style)
    NAN_NEG_ZERO = 3    # the bit pattern of -0 (fnuz types)
    NAN_EXP_ONLY = 4    # all ones (float8_e8m0fnu)

cpdef enum KeyKind:
    KEY_VALUE = 0       # numeric equality (0.0 matches -0.0)
    KEY_ANY_NAN = 1     # "NaN": matches every NaN
    KEY_NAN_BITS = 2    # hex NaN: matches exactly this bit pattern

cpdef enum Widen:
    # how the fast loops read a source that has no loop of its own (each exact)
    WIDEN_NONE = 0
    WIDEN_MINI = 1      # a small float (float16, bfloat16, float8 / 6 / 4) -> float32,
                        # arithmetically, parametrised by its MiniFormat
    WIDEN_INT = 2       # integer -> float64 (for small float targets); a 64-bit value beyond
                        # 2**53 flags its block (float64 would round it before the target does)
    WIDEN_TABLE = 3     # a one-byte format -> float32 through a 256-entry table (float8_e8m0fnu,
                        # and the sub-byte integers going to a small float)
    WIDEN_SUBINT = 4    # int2 / int4 / uint2 / uint4 -> int8 / uint8 (sign / zero extension)

# --- structs -------------------------------------------------------------------------------------

ctypedef struct Format:
    # Every field comes from the format's descriptor, zdt.formats.NumberFormat (fill_format):
    # one table, read by both languages. The kernels derive nothing a field gives.
    int kind            # FormatKind
    int itemsize        # bytes per element in memory
    int bits            # logical width (int4 -> 4, float16 -> 16)
    bint is_signed      # integers: signed; floats: has a sign bit
    # floats only
    int man_bits        # stored fraction bits
    int exp_bits
    int bias
    int max_exp_field   # largest exponent field of a finite value
    uint64_t max_man    # largest fraction field of a finite value at max_exp_field
    int nan_style       # NanStyle: which bit patterns are NaN (float_is_nan, _exact.pxd)
    uint64_t nan_bits   # the canonical NaN ("NaN" in JSON), 0 without NaN
    uint64_t inf_bits   # +Infinity, 0 without infinities
    bint has_inf
    bint has_neg_zero
    bint has_zero
    bint has_subnormal

ctypedef struct MiniFormat:
    # a small float format as the loops read and write it (derived from its Format)
    int itemsize        # 1 or 2 bytes of storage
    int bits            # logical width
    # reading: a normal value's bits shifted into float32 place plus rebias_bits; a subnormal
    # one's mantissa times sub_scale (a float32 normal) unless the exponent ranges coincide
    # (bfloat16: the shift alone is right); NaN where the magnitude bits equal nan_rest and
    # the bits in nan_sign are set (nan_rest 2**bits: no NaN); IEEE-style specials where the
    # magnitude bits reach special_rest (2**bits: none)
    uint32_t rebias_bits
    float sub_scale
    bint sub_by_shift
    uint32_t nan_rest
    uint32_t nan_sign
    uint32_t special_rest
    int man_bits
    int bias
    int emin            # exponent of the smallest normal value, 1 - bias
    int emax            # exponent of the largest finite binade
    double max_finite
    double min_normal
    uint32_t sign_bit
    uint32_t inf_bits   # +Infinity (has_inf)
    uint32_t nan_bits   # the canonical NaN (has_nan)
    uint32_t clamp_bits # what clamp makes of a finite value beyond the range: +Infinity, or
                        # the largest finite value in a format without infinities
    bint has_inf
    bint has_nan
    bint has_neg_zero

ctypedef struct MapEntry:
    int kind            # KeyKind
    uint64_t key_bits   # the key in the source format
    uint64_t out_bits   # the value in the target format

ctypedef struct CastSpec:
    Format src
    Format dst
    int src_code        # TypeCode
    int dst_code
    int rounding        # Rounding
    int out_of_range    # OutOfRange
    const MapEntry* map
    Py_ssize_t map_len
    bint map_blendable  # every key is KEY_VALUE or KEY_ANY_NAN
    bint nan_fold       # float -> int fast loops apply the first "NaN" key themselves
    uint64_t nan_out    # ... and this is its output
    uint64_t safe_lo    # source values in [safe_lo, safe_hi] (bit patterns) are never flagged
    uint64_t safe_hi    # by the fast loop: a flagged block sends only the others to the exact path
    MiniFormat mini     # dst_code == T_MINI: the small float the bit-pattern loops write
    int narrow_bits     # an int8 / uint8 target standing for a sub-byte one: its width (else 0)

ctypedef struct CastKernel:
    CastSpec exact      # the cast as the exact path sees it (the real source and target)
    CastSpec fast       # the same cast as the fast loops see it (after widening)
    bint has_fast       # False: every element takes the exact path
    int widen           # Widen
    int orig_code       # TypeCode of the source before widening (WIDEN_INT reads it)
    MiniFormat src_mini # WIDEN_MINI: the source format
    const float* table  # WIDEN_TABLE: the float32 value of every byte of the source format

ctypedef struct ScaleOffsetKernel:
    int code            # TypeCode of the array's data type (T_MINI: a small float)
    int itemsize
    int int_bits        # a sub-byte integer type (int8 / uint8 code): its width (else 0)
    MiniFormat mini     # T_MINI: the format, read through `widen` / `table`
    int widen           # T_MINI: WIDEN_MINI or WIDEN_TABLE (float8_e8m0fnu)
    const float* table
    bint exact_round    # T_MINI without a MiniFormat (float8_e8m0fnu): results are rounded
    CastSpec rounding   # ... by the exact path, float64 -> the format (nearest-even)
    uint64_t enc_offset # offset as a bit pattern of the type, for encoding
    uint64_t dec_offset # ... for decoding (differs only for a zero float offset: -0.0)
    uint64_t scale


ctypedef struct BitroundKernel:
    # bitround on one data type: floats (float16, bfloat16, float32, float64, and the parts of
    # complex64 / complex128) as their bit patterns, integers (int8 .. uint64, and the int64 of
    # datetime64 / timedelta64) as values
    bint is_float
    int width           # bits of one value (16, 32, 64 for floats; 8 .. 64 for integers)
    bint is_signed      # integers
    int man_bits        # floats: stored mantissa bits
    int keepbits
    int lanes           # values per element (2 for complex)


cdef class CastKernelSpec:
    cdef CastKernel k
    cdef MapEntry* _map         # owned copies of the scalar_map entries
    cdef MapEntry* _fast_map
    cdef float* _table          # owned WIDEN_TABLE table


cdef class ScaleOffsetKernelSpec:
    cdef ScaleOffsetKernel k
    cdef float* _table


cdef class BitroundKernelSpec:
    cdef BitroundKernel k


cdef class FormatRules:
    cdef Format f


cdef void fill_format(Format* f, object fmt) except *
cdef void fill_mini(MiniFormat* m, const Format* f) noexcept
