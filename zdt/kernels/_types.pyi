"""Type stub of zdt/kernels/_types.pyx (definitions in _types.pxd). Checked against the compiled
module by mypy's stubtest in CI."""

from collections.abc import Iterable
from enum import IntEnum
from typing import Any

from typing_extensions import disjoint_base

class Rounding(IntEnum):
    NEAREST_EVEN = 0
    TOWARDS_ZERO = 1
    TOWARDS_POSITIVE = 2
    TOWARDS_NEGATIVE = 3
    NEAREST_AWAY = 4

class OutOfRange(IntEnum):
    OOR_ERROR = 0
    OOR_CLAMP = 1
    OOR_WRAP = 2

class CastStatus(IntEnum):
    ST_OK = 0
    ST_NAN = 1
    ST_INF = 2
    ST_RANGE = 3
    ST_RANGE_WRAP = 4

class ScaleOffsetStatus(IntEnum):
    SO_OK = 0
    SO_SUB = 1
    SO_MUL = 2
    SO_REM = 3
    SO_DIV = 4
    SO_ADD = 5

class TypeCode(IntEnum):
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
    T_MINI = 10

class FormatKind(IntEnum):
    FMT_INT = 0
    FMT_FLOAT = 1

class NanStyle(IntEnum):
    NAN_NONE = 0
    NAN_IEEE = 1
    NAN_ALL_ONES = 2
    NAN_NEG_ZERO = 3
    NAN_EXP_ONLY = 4

class KeyKind(IntEnum):
    KEY_VALUE = 0
    KEY_ANY_NAN = 1
    KEY_NAN_BITS = 2

class Widen(IntEnum):
    WIDEN_NONE = 0
    WIDEN_MINI = 1
    WIDEN_INT = 2
    WIDEN_TABLE = 3
    WIDEN_SUBINT = 4

@disjoint_base
class FormatRules:
    def __init__(self, fmt: Any) -> None: ...
    def is_nan(self, bits: int) -> bool: ...

@disjoint_base
class CastKernelSpec:
    def __init__(self, *, source: Any, target: Any, rounding: int, out_of_range: int,
                 map_entries: Iterable[Any], fast: Any) -> None: ...
    @property
    def has_fast(self) -> bool: ...
    @property
    def safe_range(self) -> tuple[int, int]: ...

@disjoint_base
class ScaleOffsetKernelSpec:
    def __init__(self, *, fmt: Any, enc_offset: int, dec_offset: int, scale: int) -> None: ...
    @property
    def itemsize(self) -> int: ...

@disjoint_base
class BitroundKernelSpec:
    def __init__(self, *, is_float: bool, width: int, is_signed: bool, man_bits: int, keepbits: int,
                 lanes: int = 1) -> None: ...
    @property
    def itemsize(self) -> int: ...
