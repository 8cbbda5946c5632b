"""Type stub of zdt/kernels/_vlen.pyx: variable-length strings and bytes (vlen and Arrow
layouts) to and from NumPy's StringDType and object arrays."""

from enum import IntEnum

import numpy as np
from typing_extensions import Buffer, disjoint_base

class Layout(IntEnum):
    VLEN = 0
    ARROW = 1

@disjoint_base
class StringScratch:
    def trim(self, limit: int) -> None: ...

def validate(buf: Buffer, n: int, layout: int, width: int, utf8: bool, codec: str,
             shape: tuple[int, ...] | None) -> None: ...
def decode_strings(buf: Buffer, n: int, layout: int, width: int, codec: str = "vlen-utf8",
                   shape: tuple[int, ...] | None = None) -> np.ndarray: ...
def decode_objects(buf: Buffer, n: int, layout: int, width: int, utf8: bool,
                   codec: str = "vlen-utf8", shape: tuple[int, ...] | None = None) -> np.ndarray: ...
def encode_strings(arr: np.ndarray, layout: int, width: int, codec: str,
                   shape: tuple[int, ...] | None, scratch: StringScratch) -> np.ndarray: ...
def encode_objects(arr: np.ndarray, layout: int, width: int, utf8: bool, codec: str,
                   shape: tuple[int, ...] | None) -> np.ndarray: ...
