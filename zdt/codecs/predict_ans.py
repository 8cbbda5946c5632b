"""zdt.predict's entropy stage 3: its symbols coded by zdt's own context-modelled rANS (the
spec's "Stage 3", docs/codecs/predict.md). The kernels (zdt.kernels._predict) code the symbols
and write and read the frequency tables; this module picks the context model, normalises the
tables and lays out the stage's bytes.

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
TOKENS = 64
PAIRS = 15
FINE = 60
SCALE = 12
TOTAL = 1 << SCALE
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
# every model's tables at once: row r of ONE_HOT @ hist is table r - MODEL_ROWS[m] of model m
ONE_HOT = np.concatenate([np.eye(n)[t].T for n, t in zip(N_TABLES, TABLE_OF)])
MODEL_ROWS = np.cumsum([0, *N_TABLES[:-1]])


def _costs(hist: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each model's estimated bits (its coded symbols at its tables' entropy, and its tables),
    and the counts of every model's tables (rows from MODEL_ROWS)."""
    counts = ONE_HOT @ hist.astype(np.float64)      # (exact: counts are far below 2^53)
    n = counts.sum(axis=1)
    bits = n * np.log2(np.maximum(n, 1)) - (counts * np.log2(np.maximum(counts, 1))).sum(axis=1)
    k = np.count_nonzero(counts, axis=1)
    table_bytes = 1 + k + np.where(k > 1, 1.5 * (k - 1), 0)     # (estimated: 1.5 a frequency)
    cost = 8.0 * (1 + np.add.reduceat(table_bytes, MODEL_ROWS)) + np.add.reduceat(bits, MODEL_ROWS)
    return cost, counts


EXTRA_BITS = np.array([0] * 16 + [(t - 16) // 4 + 2 for t in range(16, TOKENS)], dtype=np.float64)


def estimate(hist: np.ndarray) -> float:
    """The bits stage 3 codes symbols in, from the count of each (fine context, token): the
    entropy of the cheapest model's tables, its tables, and the tokens' extra bits."""
    return float(_costs(hist)[0].min() + hist.sum(axis=0) @ EXTRA_BITS)


def pack(vsym: np.ndarray, vctx: np.ndarray, hist: np.ndarray) -> bytes:
    """Stage 3's bytes for the symbols in visit order, their fine contexts and the count of each
    (fine context, token): the model byte, the tables, the final state and word count, the
    words (the raw values follow them)."""
    from zdt.kernels import _predict

    cost, counts = _costs(hist)
    model = int(np.argmin(cost))
    counts = counts[MODEL_ROWS[model]:MODEL_ROWS[model] + N_TABLES[model]].astype(np.int64)
    freq = normalise(counts)
    start = np.zeros_like(freq)
    start[:, 1:] = np.cumsum(freq, axis=1, dtype=np.uint16)[:, :-1]
    table = TABLE_OF[model].astype(np.int16)
    words, states = _predict.ans_encode(vsym, vctx, table, freq, start)
    return (bytes([model]) + _predict.ans_write_tables(freq)
            + STATE_LENGTH.pack(*states, len(words)) + words.astype("<u2").tobytes())


def normalise(c: np.ndarray) -> np.ndarray:
    """Frequencies summing to 2^12, one row a table, with every counted token at least 1 (a row
    without counts: all 0)."""
    c = np.asarray(c, dtype=np.int64).reshape(-1, TOKENS)
    n = c.sum(axis=1, keepdims=True)
    f = np.where(c > 0, np.maximum(1, np.floor(c * (TOTAL / np.maximum(n, 1)) + 0.5)), 0)
    f = f.astype(np.int64)
    f[n[:, 0] == 0] = 0
    diff = np.where(n[:, 0] > 0, TOTAL - f.sum(axis=1), 0)
    top = np.argmax(c, axis=1)          # (the first of the largest counts)
    rows = np.arange(len(c))
    # the largest count absorbs the rounding where it can (nearly always); else the counts
    # from the largest down, none below 1
    easy = f[rows, top] + diff >= 1
    f[rows[easy], top[easy]] += diff[easy]
    for t in rows[~easy]:
        order = np.argsort(-c[t], kind="stable")
        d = int(diff[t])
        i = 0
        while d:
            k = order[i % len(order)]
            if f[t, k] > 1:
                step = min(-d, int(f[t, k]) - 1)
                f[t, k] -= step
                d += step
            i += 1
    return f.astype(np.uint16)


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
