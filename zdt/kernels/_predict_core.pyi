from typing import NamedTuple

import numpy as np
from typing_extensions import disjoint_base

from zdt.errors import CorruptChunkError

CODEC: str
VERSION: str
DTYPES: dict[str, int]
BY_CODE: dict[int, np.dtype]
PCODEC_LEVEL: int
WORKSPACE_LIMIT: int

class MaskStream(NamedTuple):
    """A decoded mask stream: its bits (uint8, 1: masked) and how many are set."""

    bits: np.ndarray
    n_masked: int

class Prediction(NamedTuple):
    """A prediction: each element's symbol (flat C order), the raw values (visit order, the
    chunk's type) and each element's predictor value (float64, flat C order)."""

    symbols: np.ndarray
    raw: np.ndarray
    values: np.ndarray

@disjoint_base
class Codec:
    def __init__(self, abs_error: float, rel_error: float, predictor: int, entropy: int,
                 level: int, keep: tuple[int, ...] | list[int] = ...,
                 reference: np.ndarray | None = ...,
                 reference_shape: tuple[int, int] = ..., effort: int = ...) -> None: ...
    def encode(self, arr: np.ndarray, fill: float | None = ...) -> bytes: ...
    def encode_floats(self, arr: np.ndarray,
                      fill: float | None = ...) -> tuple[bytes, np.ndarray]: ...
    def decode(self, data: object, out: np.ndarray, fill: float | None = ...) -> None: ...
    def decode_numcodecs(self, data: object) -> np.ndarray: ...

def corrupt(message: str, part: str) -> CorruptChunkError: ...
def pcodec_module() -> object | None: ...
def signs_encode(negative: np.ndarray, shape: tuple[int, ...], logs: np.ndarray) -> bytes: ...
def mask_encode(bits: np.ndarray, shape: tuple[int, ...],
                reference: np.ndarray | None = ...) -> bytes: ...
def mask_decode(data: object, shape: tuple[int, ...],
                reference: np.ndarray | None = ...) -> MaskStream: ...
def reference_decode(stream: object, rows: int, cols: int) -> np.ndarray: ...
def order0_bits(sym: np.ndarray) -> float: ...
def predict(x: np.ndarray, shape: tuple[int, ...], abs_error: float, predictor: int,
            fill: float | None = ..., alpha: float = ..., beta: float = ...,
            zeros_likely: bool = ...) -> Prediction: ...
