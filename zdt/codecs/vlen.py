"""Variable-length strings and bytes above the kernels (zdt/kernels/_vlen.pyx).

Two chunk layouts:

* ``vlen``: numcodecs' and zarr-python's vlen-utf8 / vlen-bytes, byte for byte:
  u32le count, then per element u32le length and the bytes.
* ``arrow``: the strings ZEP's offsets layout: n + 1 little-endian offsets (int32 or int64)
  starting at 0, non-decreasing, the last equal to the data length; zero padding to a multiple
  of 64 bytes; then the concatenated data, no trailing padding. An empty chunk is one 0 offset
  padded to 64 bytes.

Strings decode straight into NumPy's StringDType and encode straight from it; object arrays of
str / np.str_ (bytes for the bytes kind) are accepted on encode and produced on request.
Elements are always in C order whatever the memory layout. A missing value (StringDType
na_object, None) is an error: neither layout can store one, and it never silently becomes "".
"""

from __future__ import annotations

import math
import threading

import numpy as np

from zdt.kernels import _vlen

VLEN, ARROW = _vlen.Layout.VLEN, _vlen.Layout.ARROW
OFFSET_WIDTHS = {"int32": 4, "int64": 8}


# Each thread keeps the scratch memory encode_strings copies a chunk's strings into (its pages
# stay mapped between chunks), up to this many bytes.
SCRATCH_KEEP_BYTES = 64 << 20
_local = threading.local()


def _scratch() -> _vlen.StringScratch:
    scratch = getattr(_local, "scratch", None)
    if scratch is None:
        scratch = _local.scratch = _vlen.StringScratch()
    return scratch


def _count(shape: tuple[int, ...]) -> int:
    if any(int(d) < 0 for d in shape):
        raise ValueError(f"chunk shape {tuple(shape)} has a negative extent")
    return math.prod(shape)


def encode(arr: np.ndarray, *, utf8: bool, layout: int = VLEN, width: int = 4,
           codec: str = "vlen-utf8") -> np.ndarray:
    """One chunk (any shape and layout) -> its encoded bytes as a uint8 array."""
    arr = np.asarray(arr)
    shape = arr.shape
    if arr.dtype.kind == "U":
        arr = arr.astype(np.dtypes.StringDType())
    elif arr.dtype.kind == "S" and not utf8:
        arr = arr.astype(object)
    flat = np.ascontiguousarray(arr).reshape(-1)           # elements in C order
    if isinstance(flat.dtype, np.dtypes.StringDType):
        if not utf8:
            raise TypeError(f"{codec}: expected bytes (an object array of bytes), got strings")
        scratch = _scratch()
        try:
            return _vlen.encode_strings(flat, layout, width, codec, shape, scratch)
        finally:
            scratch.trim(SCRATCH_KEEP_BYTES)
    if flat.dtype == object:
        return _vlen.encode_objects(flat, layout, width, utf8, codec, shape)
    raise TypeError(f"{codec}: expected a StringDType or object array, got {arr.dtype}")


def validate(buf: object, shape: tuple[int, ...], *, utf8: bool, layout: int = VLEN,
             width: int = 4, codec: str = "vlen-utf8") -> np.ndarray:
    """Check one encoded chunk against the chunk shape; ValueError naming the problem."""
    raw = np.frombuffer(buf, dtype=np.uint8) if not isinstance(buf, np.ndarray) else buf
    raw = np.ascontiguousarray(raw).reshape(-1).view(np.uint8)
    _vlen.validate(raw, _count(shape), layout, width, utf8, codec, tuple(shape))
    return raw


def decode(buf: object, shape: tuple[int, ...], *, utf8: bool, layout: int = VLEN,
           width: int = 4, codec: str = "vlen-utf8", dtype: np.dtype | None = None) -> np.ndarray:
    """One encoded chunk -> an array of `shape`: StringDType for strings unless `dtype` is
    object; object arrays of bytes for the bytes kind."""
    n = _count(shape)
    # the structure (count, lengths / offsets, trailing bytes) is checked before anything is
    # read; UTF-8 is checked string by string as the result is built
    raw = validate(buf, shape, utf8=False, layout=layout, width=width, codec=codec)
    if utf8 and (dtype is None or isinstance(np.dtype(dtype), np.dtypes.StringDType)):
        out = _vlen.decode_strings(raw, n, layout, width, codec, tuple(shape))
        if dtype is not None and np.dtype(dtype) != out.dtype:
            out = out.astype(dtype)
    else:
        out = _vlen.decode_objects(raw, n, layout, width, utf8, codec, tuple(shape))
    return out.reshape(shape)
