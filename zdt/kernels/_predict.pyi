from typing import NamedTuple

import numpy as np

from zdt.errors import CorruptChunkError
from zdt.kernels._ans import Stream

CODEC: str

class Order(NamedTuple):
    """Stage 3's input: the symbols and their fine contexts in visit order, and the count of
    each (fine context, token)."""

    symbols: np.ndarray
    contexts: np.ndarray
    counts: np.ndarray

class Prediction(NamedTuple):
    """The symbols in flat C order, the raw values in visit order, stage 3's Order (with
    `record`) or None, and the predictor values in flat C order (float64: where an element is
    finite and not the fill value, the value a decoder gives it, bit for bit)."""

    symbols: np.ndarray
    raw: np.ndarray
    order: Order | None
    values: np.ndarray

def corrupt(message: str, part: str) -> CorruptChunkError: ...
def fill_mask(x: np.ndarray, fill: np.ndarray) -> np.ndarray | None: ...
def encode(x: np.ndarray, shape: tuple[int, int, int, int], abs_error: float, predictor: int,
           fill: np.ndarray, record: bool = ..., masked: bool = ..., alpha: float = ...,
           beta: float = ...) -> Prediction: ...
def decode(sym: np.ndarray | None, raw: np.ndarray, out: np.ndarray,
           shape: tuple[int, int, int, int], abs_error: float, predictor: int, fill: np.ndarray,
           stream: Stream | None = ..., mask: np.ndarray | None = ..., alpha: float = ...,
           beta: float = ...) -> int: ...
