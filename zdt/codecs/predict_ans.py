"""zdt.predict's entropy stage 3: its symbols coded by zdt's own context-modelled rANS (the
spec's "Stage 3", docs/codecs/predict.md). The kernels (zdt.kernels._predict) code the symbols,
choose the context model and normalise, write and read its frequency tables; this module maps
the fine contexts onto each model's tables and lays out the stage's bytes.

Each symbol is coded with the table of its context: its level group and the classes of its
two context neighbours' symbols (60 fine contexts). A model maps the fine contexts onto its
tables: model 0 one table, 1 one a level group, 2 a level group and 4 neighbour classes, 3
all 60. The encoder takes the model whose tables plus coded symbols come out fewest (estimated
by the symbols' entropy under each table's counts, and the tables' bytes): a small chunk cannot
pay for 60 tables, a large one gains from them.
"""

from __future__ import annotations

import struct
from typing import Any

import numpy as np

CODEC = "zdt.predict"
PAIRS = 15
FINE = 60
MODELS = 4
STATE_LENGTH = struct.Struct("<IIQ")    # the two final states, the number of 16-bit words


def _coarse(pair: int) -> int:
    hi = 0
    while (hi + 1) * (hi + 2) // 2 <= pair:
        hi += 1
    return 0 if hi == 0 else 1 if hi <= 2 else 2 if hi == 3 else 3


def _tables_of(model: int) -> np.ndarray:
    f = np.arange(FINE)
    if model == 0:
        return np.zeros(FINE, dtype=np.int64)
    if model == 1:
        return f // PAIRS
    if model == 2:
        return (f // PAIRS) * 4 + np.array([_coarse(p) for p in f % PAIRS])
    return f


TABLE_OF = tuple(_tables_of(m) for m in range(MODELS))      # fine context -> table, by model
N_TABLES = tuple(int(t.max()) + 1 for t in TABLE_OF)
TABLES = np.stack(TABLE_OF)                 # model, fine context -> table


def estimate(hist: np.ndarray) -> float:
    """The bits stage 3 codes symbols in, from the count of each (fine context, token): the
    entropy of the cheapest model's tables, its tables, and the tokens' extra bits."""
    from zdt.kernels import _predict

    return float(_predict.ans_model(hist, TABLES)[2].min())


def pack(vsym: np.ndarray, vctx: np.ndarray, hist: np.ndarray) -> bytes:
    """Stage 3's bytes for the symbols in visit order, their fine contexts and the count of each
    (fine context, token): the model byte, the tables, the final state and word count, the
    words (the raw values follow them)."""
    from zdt.kernels import _predict

    model, freq, _ = _predict.ans_model(hist, TABLES)
    words, states = _predict.ans_encode(vsym, vctx, TABLE_OF[model].astype(np.int16), freq)
    return (bytes([model]) + _predict.ans_write_tables(freq)
            + STATE_LENGTH.pack(*states, len(words)) + words.astype("<u2").tobytes())


def read(data: Any) -> tuple[tuple, Any]:
    """The kernels' stream (words, states, table of each fine context, lut, info) from
    stage 3's bytes, and what follows the words (the raw values' frame); ValueError naming what
    is wrong with corrupt bytes."""
    from zdt.kernels import _predict

    if len(data) < 1:
        raise ValueError(f"{CODEC}: the chunk ends before its ANS model")
    model = data[0]
    pos = 1
    if model >= MODELS:
        raise ValueError(f"{CODEC}: unknown ANS context model {model}")
    n_tables = N_TABLES[model]
    lut, info, empty, pos = _predict.ans_tables(data, pos, n_tables)
    if len(data) - pos < STATE_LENGTH.size:
        raise ValueError(f"{CODEC}: the chunk ends before its ANS state")
    state0, state1, n_words = STATE_LENGTH.unpack_from(data, pos)
    pos += STATE_LENGTH.size
    if n_words > (len(data) - pos) // 2:
        raise ValueError(f"{CODEC}: {n_words} ANS words run past the chunk's end")
    words = np.frombuffer(bytes(data[pos:pos + 2 * n_words]), dtype="<u2").astype(np.uint16)
    pos += 2 * n_words
    table = np.where(empty[TABLE_OF[model]], -1, TABLE_OF[model]).astype(np.int16)
    return (words, (state0, state1), table, lut, info), data[pos:]
