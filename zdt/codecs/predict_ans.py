"""zdt.predict's entropy stage 3: its symbols coded by zdt's own context-modelled rANS (the
spec's "Stage 3", docs/codecs/predict.md). The kernels (zdt.kernels._predict) code the symbols;
this module picks the context model, normalises and writes the frequency tables, and reads
them back.

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


def pack(vsym: np.ndarray, vctx: np.ndarray) -> bytes:
    """Stage 3's bytes for the symbols in visit order and their fine contexts: the model byte,
    the tables, the final state and word count, the words (the raw values follow them)."""
    from zdt.kernels import _predict

    hist = _predict.ans_histogram(vsym, vctx)
    best: tuple[float, int, np.ndarray] | None = None
    for model in range(MODELS):
        counts = np.zeros((N_TABLES[model], TOKENS), dtype=np.int64)
        np.add.at(counts, TABLE_OF[model], hist)
        cost = 8.0 * (1 + sum(_table_bytes(c) for c in counts)) + sum(map(_bits, counts))
        if best is None or cost < best[0]:
            best = (cost, model, counts)
    assert best is not None
    _, model, counts = best
    freq = np.zeros((len(counts), TOKENS), dtype=np.uint16)
    head = bytearray([model])
    for t, c in enumerate(counts):
        freq[t] = normalise(c)
        head += write_table(freq[t])
    start = np.zeros_like(freq)
    start[:, 1:] = np.cumsum(freq, axis=1, dtype=np.uint16)[:, :-1]
    table = TABLE_OF[model].astype(np.int16)
    words, states = _predict.ans_encode(vsym, vctx, table, freq, start)
    return bytes(head) + STATE_LENGTH.pack(*states, len(words)) + words.astype("<u2").tobytes()


def _bits(c: np.ndarray) -> float:
    c = c[c > 0].astype(np.float64)
    n = c.sum()
    return float(n * np.log2(n) - (c * np.log2(c)).sum()) if n else 0.0


def _table_bytes(c: np.ndarray) -> float:
    k = int(np.count_nonzero(c))
    return 1 + k + (1.5 * (k - 1) if k > 1 else 0)


def normalise(c: np.ndarray) -> np.ndarray:
    """Frequencies summing to 2^12 with every counted token at least 1 (all 0 for no counts)."""
    n = int(c.sum())
    if n == 0:
        return np.zeros(TOKENS, dtype=np.uint16)
    f = np.where(c > 0, np.maximum(1, np.floor(c * (TOTAL / n) + 0.5)), 0).astype(np.int64)
    order = np.argsort(-c, kind="stable")
    diff = TOTAL - int(f.sum())
    i = 0
    while diff:     # (the largest counts absorb the rounding, none below 1)
        t = order[i % len(order)]
        if diff > 0:
            f[t] += diff
            diff = 0
        elif f[t] > 1:
            step = min(-diff, int(f[t]) - 1)
            f[t] -= step
            diff += step
        i += 1
    return f.astype(np.uint16)


def write_table(freq: np.ndarray) -> bytes:
    tokens = np.flatnonzero(freq)
    out = bytearray([len(tokens)]) + bytes(tokens.astype(np.uint8))
    for t in tokens[:-1] if len(tokens) > 1 else ():
        out += leb128(int(freq[t]))
    return bytes(out)


def leb128(v: int) -> bytes:
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        out.append(b | (0x80 if v else 0))
        if not v:
            return bytes(out)


def read(data: Any) -> tuple[tuple, Any]:
    """The kernels' stream (words, states, table of each fine context, lut, info) from
    stage 3's bytes, and what follows the words (the raw values' frame); ValueError naming what
    is wrong with corrupt bytes."""
    if len(data) < 1:
        raise ValueError(f"{CODEC}: the chunk ends before its ANS model")
    model = data[0]
    pos = 1
    if model >= MODELS:
        raise ValueError(f"{CODEC}: unknown ANS context model {model}")
    n_tables = N_TABLES[model]
    freq = np.zeros((n_tables, TOKENS), dtype=np.uint16)
    empty = np.zeros(n_tables, dtype=bool)
    for t in range(n_tables):
        if pos >= len(data):
            raise ValueError(f"{CODEC}: the chunk ends inside ANS table {t}")
        k = data[pos]
        pos += 1
        if k > TOKENS:
            raise ValueError(f"{CODEC}: ANS table {t} lists {k} tokens, more than {TOKENS}")
        if pos + k > len(data):
            raise ValueError(f"{CODEC}: the chunk ends inside ANS table {t}")
        tokens = np.frombuffer(bytes(data[pos:pos + k]), dtype=np.uint8).astype(np.int64)
        pos += k
        if k and (tokens[-1] >= TOKENS or np.any(np.diff(tokens) <= 0)):
            raise ValueError(f"{CODEC}: ANS table {t}'s tokens are not increasing below {TOKENS}")
        total = 0
        for token in tokens[:-1]:
            v, pos = read_leb128(data, pos, t)
            if not 1 <= v < TOTAL:
                raise ValueError(f"{CODEC}: ANS table {t} gives token {token} frequency {v}")
            freq[t, token] = v
            total += v
        if k:
            if total >= TOTAL:
                raise ValueError(f"{CODEC}: ANS table {t}'s frequencies sum past {TOTAL}")
            freq[t, tokens[-1]] = TOTAL - total
        empty[t] = k == 0
    if len(data) - pos < STATE_LENGTH.size:
        raise ValueError(f"{CODEC}: the chunk ends before its ANS state")
    state0, state1, n_words = STATE_LENGTH.unpack_from(data, pos)
    pos += STATE_LENGTH.size
    if n_words > (len(data) - pos) // 2:
        raise ValueError(f"{CODEC}: {n_words} ANS words run past the chunk's end")
    words = np.frombuffer(bytes(data[pos:pos + 2 * n_words]), dtype="<u2").astype(np.uint16)
    pos += 2 * n_words
    lut = np.zeros((n_tables, TOTAL), dtype=np.uint8)
    for t in range(n_tables):
        if not empty[t]:
            lut[t] = np.repeat(np.arange(TOKENS, dtype=np.uint8), freq[t])
    start = np.zeros(freq.shape, dtype=np.uint32)
    start[:, 1:] = np.cumsum(freq, axis=1, dtype=np.uint32)[:, :-1]
    info = freq.astype(np.uint32) | (start << 16)
    table = np.where(empty[TABLE_OF[model]], -1, TABLE_OF[model]).astype(np.int16)
    return (words, (state0, state1), table, lut.reshape(-1), info.reshape(-1)), data[pos:]


def read_leb128(data: Any, pos: int, t: int) -> tuple[int, int]:
    v = shift = 0
    while True:
        if pos >= len(data) or shift >= 14:
            raise ValueError(f"{CODEC}: ANS table {t} has a truncated or overlong frequency")
        b = data[pos]
        pos += 1
        v |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return v, pos
