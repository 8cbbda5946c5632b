"""Getting any NumPy array to the kernels and the result back, for element-wise kernels.

Kernels take flat, native-order, aligned, contiguous buffers. An input may be C- or F-
contiguous (walked in memory order, and the output gets the same order, so shape and element
order are kept), or anything else (copied to C order first); non-native byte order and
unaligned data are converted first. An `out` array that overlaps the input or is unaligned
gets the result through a temporary: kernels may read the source again after writing.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class Walk:
    arr: np.ndarray          # the (possibly converted) input the kernel reads
    order: str               # "C" or "F": the order flat indices follow
    out: np.ndarray          # what the kernel writes
    result: np.ndarray       # what the caller gets (the user's out, or `out`)
    flat_in: np.ndarray      # 1-d views of arr and out in the walk's order
    flat_out: np.ndarray

    def finish(self) -> np.ndarray:
        if self.result is not self.out:
            np.copyto(self.result, self.out)
        return self.result

    def nd_index(self, flat: int) -> tuple[int, ...]:
        """The n-d index of the flat position `flat` of the walk."""
        if not self.arr.ndim:
            return ()
        return tuple(int(i) for i in np.unravel_index(flat, self.arr.shape, order=self.order))

    def value_at(self, flat: int) -> np.generic:
        return self.arr.reshape(-1, order=self.order)[flat]


def prepare(arr: np.ndarray, source: np.dtype, target: np.dtype, out: np.ndarray | None,
            codec: str, in_place_ok: bool = False) -> Walk:
    """`in_place_ok`: the kernel can write into its own input (same type, same buffer)."""
    arr = np.asarray(arr)
    if arr.dtype.kind in "OSUVMmcb?" and arr.dtype.name != source.name or arr.dtype.newbyteorder("=") != source:
        raise TypeError(f"{codec}: expected an array of {source}, got {arr.dtype}")
    if not arr.dtype.isnative:
        arr = arr.astype(arr.dtype.newbyteorder("="))
    if not arr.flags.aligned:
        arr = arr.copy()            # the kernels read elements through typed pointers
    if arr.flags.c_contiguous:
        order = "C"
    elif arr.flags.f_contiguous:
        order = "F"
    else:
        arr = np.ascontiguousarray(arr)
        order = "C"
    result = out
    if out is not None:
        if out.dtype != target or out.shape != arr.shape or not out.flags.writeable:
            raise ValueError(f"{codec}: out must be a writeable {target} array of shape "
                             f"{arr.shape}, got {out.dtype} {out.shape}")
        same_buffer = (in_place_ok and out.__array_interface__["data"][0] == arr.__array_interface__["data"][0]
                       and out.strides == arr.strides)
        if ((np.may_share_memory(arr, out) and not same_buffer) or not out.flags.aligned
                or not out.flags[f"{order}_CONTIGUOUS"]):
            out = None
    if out is None:
        out = np.empty(arr.shape, dtype=target, order=order)
        result = out if result is None else result
    return Walk(arr, order, out, result, arr.reshape(-1, order=order), out.reshape(-1, order=order))
