"""Hand a chunk in the Arrow-style offsets layout (``zdt.vlen_arrow``) to pyarrow without
copying it. Needs pyarrow (``pip install 'zdt[arrow]'``)."""

from __future__ import annotations

import math
import sys

import numpy as np

from zdt.codecs import vlen


def chunk_to_arrow(chunk: object, shape: int | tuple[int, ...], *, offsets: str = "int32",
                   kind: str = "string"):
    """The elements of one encoded chunk (C order) as a pyarrow StringArray / BinaryArray
    (LargeString / LargeBinary for int64 offsets).

    The chunk is validated first (offsets; UTF-8 for strings), then its offsets and data are
    wrapped as Arrow buffers in place: no byte is copied, and the Arrow array keeps the chunk's
    memory alive. `shape` is the chunk's shape (or element count); `kind` is "string" or
    "bytes".
    """
    import pyarrow as pa

    if sys.byteorder != "little":
        raise NotImplementedError("chunk_to_arrow: the layout's offsets are little-endian and "
                                  "pyarrow reads native order; this host is big-endian")
    if kind not in ("string", "bytes"):
        raise ValueError(f"chunk_to_arrow: kind must be 'string' or 'bytes', got {kind!r}")
    if offsets not in vlen.OFFSET_WIDTHS:
        raise ValueError(f"chunk_to_arrow: offsets must be 'int32' or 'int64', got {offsets!r}")
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    width = vlen.OFFSET_WIDTHS[offsets]
    raw = vlen.validate(chunk, shape, utf8=kind == "string", layout=vlen.ARROW, width=width,
                        codec="zdt.vlen_arrow")
    n = math.prod(shape)
    head = (n + 1) * width
    start = (head + 63) // 64 * 64
    types = {("string", 4): pa.string(), ("string", 8): pa.large_string(),
             ("bytes", 4): pa.binary(), ("bytes", 8): pa.large_binary()}
    return pa.Array.from_buffers(types[kind, width], n,
                                 [None, pa.py_buffer(raw[:head]), pa.py_buffer(raw[start:])])


def arrow_to_chunk(array) -> np.ndarray:
    """The Arrow layout of a (large) string / binary pyarrow array without nulls, as a uint8
    array: its offsets rebased to 0, zero padding, and its data."""
    import pyarrow as pa

    t = array.type
    if not (pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_binary(t)
            or pa.types.is_large_binary(t)):
        raise TypeError(f"arrow_to_chunk: expected a (large) string or binary array, got {t}")
    if array.null_count:
        raise ValueError("arrow_to_chunk: the array has nulls; the layout cannot store them")
    large = pa.types.is_large_string(array.type) or pa.types.is_large_binary(array.type)
    width = 8 if large else 4
    n = len(array)
    offsets = np.frombuffer(array.buffers()[1], dtype=f"<i{width}", count=n + 1,
                            offset=array.offset * width)
    data = np.frombuffer(array.buffers()[2], dtype=np.uint8) if array.buffers()[2] else np.zeros(0, np.uint8)
    data = data[offsets[0]:offsets[-1]]
    head = (n + 1) * width
    start = (head + 63) // 64 * 64
    out = np.zeros(start + data.size, dtype=np.uint8)
    out[:head].view(f"<i{width}")[:] = offsets - offsets[0]
    out[start:] = data
    return out
