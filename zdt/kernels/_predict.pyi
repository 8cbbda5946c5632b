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
    """The symbols in flat C order, the raw values in visit order, and stage 3's Order (with
    `record`) or None."""

    symbols: np.ndarray
    raw: np.ndarray
    order: Order | None

def corrupt(message: str, part: str) -> CorruptChunkError: ...
def encode(x: np.ndarray, shape: tuple[int, int, int, int], abs_error: float, predictor: int,
           fill: np.ndarray, record: bool = ..., masked: bool = ...) -> Prediction: ...
def decode(sym: np.ndarray | None, raw: np.ndarray, out: np.ndarray,
           shape: tuple[int, int, int, int], abs_error: float, predictor: int, fill: np.ndarray,
           stream: Stream | None = ..., mask: np.ndarray | None = ...) -> int: ...
