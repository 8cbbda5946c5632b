# cython: language_level=3, cdivision=True
"""zdt.predict's entropy stage 3 (the spec's "Stage 3", docs/codecs/predict.md): the rANS
encoder, the (context, token) counts, the choice of the context model and its frequency
tables, and the stage's bytes both ways. The decoder's steps, run by the traversal where each
element is reconstructed, are inline in _ans.pxd.

Each symbol is coded with the table of its context: its level group and the classes of its
two context neighbours' symbols (60 fine contexts). A model maps the fine contexts onto its
tables: model 0 one table, 1 one a level group, 2 a level group and 4 neighbour classes, 3
all 60. The encoder takes the model whose tables plus coded symbols come out fewest (estimated
by the symbols' entropy under each table's counts, and the tables' bytes): a small chunk cannot
pay for 60 tables, a large one gains from them.

Stage 3's bytes: the model byte, its tables, the two final states and the word count, the
words (the raw values' zstd frame follows them).

Also here, the other rANS coder of zdt.predict: a masked chunk's mask stream (the spec's
"Masked chunks"), one bit per element with adaptive binary probabilities.
"""

import struct
from collections import namedtuple

from libc.math cimport floor, log2
from libc.string cimport memcpy, memset
from libc.stdint cimport int16_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t

import numpy as np

from zdt.errors import CorruptChunkError

CODEC = "zdt.predict"
STATE_LENGTH = struct.Struct("<IIQ")    # the two final states, the number of 16-bit words

# What the decoding traversal reads: the words (uint16, in decoding order), the two states,
# the table of each fine context (int16[60], -1 for an empty one), and the tables themselves:
# lut (uint8[T * 4096], each slot's token), info (uint32[T * 64], each token's freq | start << 16)
Stream = namedtuple("Stream", ["words", "states", "table", "lut", "info"], module=__name__)


def corrupt(str message, str part="ANS stream"):
    return CorruptChunkError(f"{CODEC}: {message}", codec=CODEC, part=part)


# --- context models -------------------------------------------------------------------------

cdef int n_tables_of(int model) noexcept nogil:
    return 1 if model == 0 else 4 if model == 1 else 16 if model == 2 else FINE


cdef int table_of(int model, int fine) noexcept nogil:
    """The table of fine context `fine` in model `model` (the spec's model map)."""
    cdef int g = fine // PAIRS, pair = fine % PAIRS, hi = 0
    if model == 0:
        return 0
    if model == 1:
        return g
    if model == 2:
        while (hi + 1) * (hi + 2) // 2 <= pair:
            hi += 1
        # (the classes' pairs by the higher class: 0; 1 or 2; 3; 4)
        return 4 * g + (0 if hi == 0 else 1 if hi <= 2 else 2 if hi == 3 else 3)
    return fine


def tables_of(int model):
    """int16[60]: the table of each fine context in `model`."""
    out = np.empty(FINE, dtype=np.int16)
    cdef int16_t[::1] o = out
    cdef int f
    for f in range(FINE):
        o[f] = <int16_t>table_of(model, f)
    return out


# --- counting and the model choice -------------------------------------------------------------

def histogram(const uint16_t[::1] order_sym, const uint8_t[::1] order_ctx):
    """The count int64[60, 64] of each (fine context, token) of the symbols in visit order."""
    cdef Py_ssize_t n = order_sym.shape[0], j
    cdef int nbits
    cdef uint32_t bits, s
    # four counts, element j in count j % 4: a run of one (context, token) then increments
    # four counters in turn, not one counter four times over (each increment waits for the last)
    part = np.zeros((4, FINE * TOKENS), dtype=np.int64)
    cdef int64_t[:, ::1] h = part
    if order_ctx.shape[0] != n:
        raise ValueError(f"{CODEC}: {n} symbols and {order_ctx.shape[0]} contexts")
    if n and np.max(order_ctx) >= FINE:
        raise ValueError(f"{CODEC}: a context is not below {FINE}")
    with nogil:
        for j in range(n):
            s = order_sym[j]
            h[j & 3, order_ctx[j] * TOKENS + (<int>s if s < 16 else token_of(s, &nbits, &bits))] += 1
    return part.sum(axis=0).reshape(FINE, TOKENS)


def order0_bits(const uint16_t[::1] sym):
    """The bits `sym` takes at its order-0 entropy: n log2 n - sum over the symbols of
    c log2 c (c: each symbol's count). Symbols below 4096 counted in a table on the stack,
    the rare others (wide codes) sorted and counted in runs: no 64K-entry table to clear."""
    cdef Py_ssize_t n = sym.shape[0], i, wide = 0
    cdef uint32_t small[4096]
    cdef double bits = 0.0, c
    cdef uint16_t s
    if n == 0:
        return 0.0
    large = np.empty(n, dtype=np.uint16)
    cdef uint16_t[::1] big = large
    with nogil:
        memset(small, 0, sizeof(small))
        for i in range(n):
            s = sym[i]
            if s < 4096:
                small[s] += 1
            else:
                big[wide] = s
                wide += 1
        for i in range(4096):
            if small[i]:
                c = small[i]
                bits -= c * log2(c)
    if wide:
        runs = np.unique(large[:wide], return_counts=True)[1].astype(np.float64)
        bits -= float((runs * np.log2(runs)).sum())
    return bits + <double>n * log2(<double>n)


cdef void normalise(const int64_t* c, uint16_t* f) noexcept nogil:
    """Frequencies summing to 2^12 for the counts c[64], every counted token at least 1 (all 0
    for no counts): each count scaled and rounded, the largest count's token absorbing the
    rounding where it can stay >= 1 (nearly always), else the counts from the largest down."""
    cdef int64_t n = 0, diff, step
    cdef int64_t g[TOKENS]
    cdef int order[TOKENS]
    cdef int tok, top = 0, i, k, t
    for tok in range(TOKENS):
        n += c[tok]
        if c[tok] > c[top]:
            top = tok
    if n == 0:
        for tok in range(TOKENS):
            f[tok] = 0
        return
    diff = M_TOTAL
    for tok in range(TOKENS):
        g[tok] = 0
        if c[tok] > 0:
            g[tok] = <int64_t>floor(<double>c[tok] * (<double>M_TOTAL / <double>n) + 0.5)
            if g[tok] < 1:
                g[tok] = 1
        diff -= g[tok]
    if g[top] + diff >= 1:
        g[top] += diff
    else:
        # the tokens by count, largest first (ties: lower token first)
        for i in range(TOKENS):
            k = i
            while k > 0 and c[order[k - 1]] < c[i]:
                order[k] = order[k - 1]
                k -= 1
            order[k] = i
        i = 0
        while diff:
            t = order[i % TOKENS]
            if g[t] > 1:
                step = -diff if -diff < g[t] - 1 else g[t] - 1
                g[t] -= step
                diff += step
            i += 1
    for tok in range(TOKENS):
        f[tok] = <uint16_t>g[tok]


cdef int model_counts(const int64_t[:, ::1] hist, int m, int64_t (*counts)[TOKENS]) except -1:
    """The counts of model m's tables (each the sum of its fine contexts'); its table count."""
    cdef int f, tok, n_tables = n_tables_of(m)
    for f in range(n_tables):
        for tok in range(TOKENS):
            counts[f][tok] = 0
    for f in range(FINE):
        for tok in range(TOKENS):
            counts[table_of(m, f)][tok] += hist[f, tok]
    return n_tables


def model(const int64_t[:, ::1] hist):
    """Stage 3's context model for the counts hist[60, 64] of each (fine context, token):
    (model, its frequency tables uint16[T, 64], each model's estimated bits float64[4]). A
    model's estimate: its tables' entropy over the counts, its tables' bytes (1.5 a
    frequency) and the tokens' extra bits (the same for every model); the model with the least
    is taken (the first of equals)."""
    cdef int m, t, tok, c, best = 0, n_tables
    cdef int64_t n
    cdef double bits, table_bytes, s, extra = 0.0
    cdef int64_t counts[FINE][TOKENS]
    costs = np.zeros(MODELS, dtype=np.float64)
    cdef double[::1] cost = costs
    if hist.shape[0] != FINE or hist.shape[1] != TOKENS:
        raise ValueError(f"{CODEC}: counts of shape {(hist.shape[0], hist.shape[1])}, not "
                         f"({FINE}, {TOKENS})")
    for t in range(FINE):
        for tok in range(16, TOKENS):
            extra += <double>hist[t, tok] * ((tok - 16) // 4 + 2)
    for m in range(MODELS):
        n_tables = model_counts(hist, m, counts)
        bits = 0.0
        table_bytes = 0.0
        for t in range(n_tables):
            n = 0
            s = 0.0
            c = 0
            for tok in range(TOKENS):
                if counts[t][tok] > 0:
                    n += counts[t][tok]
                    s += <double>counts[t][tok] * log2(<double>counts[t][tok])
                    c += 1
            if n:
                bits += <double>n * log2(<double>n) - s
            table_bytes += 1 + c + (1.5 * (c - 1) if c > 1 else 0.0)
        cost[m] = 8.0 * (1 + table_bytes) + bits + extra
        if cost[m] < cost[best]:
            best = m
    n_tables = model_counts(hist, best, counts)
    freq = np.zeros((n_tables, TOKENS), dtype=np.uint16)
    cdef uint16_t[:, ::1] fr = freq
    for t in range(n_tables):
        normalise(&counts[t][0], &fr[t, 0])
    return best, freq, costs


# --- the encoder --------------------------------------------------------------------------------

cdef struct Sym:          # a token of a table, for the encoder
    uint64_t rcp            # ceil(2^44 / freq)
    uint32_t freq
    uint32_t start


cdef inline bint put(uint32_t* x, int k, const Sym* tab, uint16_t* w, Py_ssize_t* top) noexcept nogil:
    """Codes symbol k with table `tab` onto state x (its extra bits first), words to the front;
    False for a token the table gives no frequency (the state is then garbage, not undefined:
    such a token's Sym is all zero)."""
    cdef int nbits = 0, tok = k
    cdef uint32_t bits = 0, q, fq
    if k >= 16:
        tok = token_of(<uint32_t>k, &nbits, &bits)
        if x[0] >= (1u << (32 - nbits)):
            top[0] -= 1
            w[top[0]] = <uint16_t>(x[0] & 0xFFFF)
            x[0] >>= 16
        x[0] = (x[0] << nbits) | bits
    fq = tab[tok].freq
    if <uint64_t>x[0] >= (<uint64_t>fq << (16 + 16 - SCALE)):      # (2^16 >> 12) << 16
        top[0] -= 1
        w[top[0]] = <uint16_t>(x[0] & 0xFFFF)
        x[0] >>= 16
    # floor(x / f) = (x * ceil(2^44 / f)) >> 44, exactly for x < 2^20 f and f <= 2^12 (the
    # rounding error x * (ceil - 2^44 / f) / 2^44 stays below 1 / f), and it fits 64 bits
    q = <uint32_t>((<uint64_t>x[0] * tab[tok].rcp) >> 44)
    x[0] = (q << SCALE) + (x[0] - q * fq) + tab[tok].start
    return fq != 0


def encode(const uint16_t[::1] order_sym, const uint8_t[::1] order_ctx, const int16_t[::1] table,
           const uint16_t[:, ::1] freq):
    """(words uint16[W] in decoding order, (state 0, state 1)) of the symbols coded backwards,
    the j-th by state j % 2, each token with its table's frequencies (a token's start: the sum
    of the frequencies before it) then its extra bits. `table`: each fine context's table, all
    below len(freq); ValueError for a table out of range or a symbol whose token its table
    gives no frequency (the stream would not decode)."""
    cdef Py_ssize_t n = order_sym.shape[0], j, top
    cdef Py_ssize_t cap = 2 * n + 2
    cdef Py_ssize_t n_tables = freq.shape[0]
    cdef int t, tok, nbits
    cdef uint32_t start, bits
    cdef bint ok = True
    if table.shape[0] != FINE or freq.shape[1] != TOKENS:
        raise ValueError(f"{CODEC}: a context or frequency table of the wrong length")
    if order_ctx.shape[0] != n:
        raise ValueError(f"{CODEC}: {n} symbols and {order_ctx.shape[0]} contexts")
    for t in range(FINE):
        if not 0 <= table[t] < n_tables:
            raise ValueError(f"{CODEC}: the ANS encoder's context {t} names table {table[t]} of "
                             f"{n_tables}")
    out = np.empty(cap, dtype=np.uint16)
    syms = np.zeros((n_tables + 1) * TOKENS * sizeof(Sym), dtype=np.uint8)
    cdef uint16_t[::1] w = out
    cdef uint8_t[::1] sb = syms
    cdef Sym* tabs = <Sym*>&sb[0]
    # (every uint8 context has an entry: those past the fine contexts a table of no frequency,
    # so a symbol with such a context is refused below like a token without frequency)
    cdef const Sym* by_ctx[256]
    cdef uint32_t x0 = ANS_L, x1 = ANS_L
    for t in range(n_tables):
        start = 0
        for tok in range(TOKENS):
            if freq[t, tok]:
                tabs[t * TOKENS + tok].rcp = ((<uint64_t>1 << 44) + freq[t, tok] - 1) // freq[t, tok]
                tabs[t * TOKENS + tok].freq = freq[t, tok]
                tabs[t * TOKENS + tok].start = start
                start += freq[t, tok]
    for t in range(256):
        by_ctx[t] = tabs + TOKENS * (table[t] if t < FINE else n_tables)
    top = cap
    with nogil:
        # (two states, the j-th symbol on state j % 2: pairs from the end, each in a register;
        # each put emits at most two words, so `top` stays within the 2n + 2 of `out`)
        j = n - 1
        if j % 2 == 1:
            ok = put(&x1, order_sym[j], by_ctx[order_ctx[j]], &w[0], &top)
            j -= 1
        while j >= 1:
            ok &= put(&x0, order_sym[j], by_ctx[order_ctx[j]], &w[0], &top)
            ok &= put(&x1, order_sym[j - 1], by_ctx[order_ctx[j - 1]], &w[0], &top)
            j -= 2
        if j == 0:
            ok &= put(&x0, order_sym[0], by_ctx[order_ctx[0]], &w[0], &top)
    if not ok:
        for j in range(n):
            if order_ctx[j] >= FINE:
                raise ValueError(f"{CODEC}: symbol {j}'s context {order_ctx[j]} is not below {FINE}")
            if freq[table[order_ctx[j]], token_of(order_sym[j], &nbits, &bits)] == 0:
                raise ValueError(f"{CODEC}: symbol {j} ({order_sym[j]}) has a token its context "
                                 f"{order_ctx[j]}'s table {table[order_ctx[j]]} gives no "
                                 f"frequency")
    return out[top:].copy(), (int(x0), int(x1))


# --- the frequency tables' bytes ----------------------------------------------------------------

def write_tables(const uint16_t[:, ::1] freq):
    """The bytes of the frequency tables (rows of `freq`; the spec's "a frequency table")."""
    cdef Py_ssize_t n_tables = freq.shape[0], at = 0
    cdef int t, tok, k, last
    cdef uint16_t fq
    out = np.empty(n_tables * (1 + 3 * TOKENS), dtype=np.uint8)
    cdef uint8_t[::1] o = out
    for t in range(n_tables):
        k = 0
        last = -1
        for tok in range(TOKENS):
            if freq[t, tok]:
                k += 1
                last = tok
        o[at] = <uint8_t>k
        at += 1
        for tok in range(TOKENS):
            if freq[t, tok]:
                o[at] = <uint8_t>tok
                at += 1
        for tok in range(last):
            fq = freq[t, tok]
            if fq == 0:
                continue
            if fq < 0x80:
                o[at] = <uint8_t>fq
                at += 1
            else:           # (frequencies are below 4096: two bytes)
                o[at] = <uint8_t>((fq & 0x7F) | 0x80)
                o[at + 1] = <uint8_t>(fq >> 7)
                at += 2
    return out[:at].tobytes()


def read_tables(const uint8_t[::1] data, Py_ssize_t pos, int n_tables):
    """Stage 3's `n_tables` frequency tables from data[pos:]: (lut uint8[T*4096] of each
    slot's token, info uint32[T*64] of each token's freq | start << 16, empty bool[T], the
    position after them); CorruptChunkError naming the table and what is wrong with it."""
    cdef Py_ssize_t end = data.shape[0], a
    cdef int t, k, i, tok, prev, shift, b
    cdef uint32_t v, total, st
    cdef uint8_t tokens[TOKENS]
    cdef uint32_t f[TOKENS]
    lut_a = np.zeros(n_tables * M_TOTAL, dtype=np.uint8)
    info_a = np.zeros(n_tables * TOKENS, dtype=np.uint32)
    empty_a = np.zeros(n_tables, dtype=bool)
    cdef uint8_t[::1] lut = lut_a
    cdef uint32_t[::1] info = info_a
    cdef uint8_t[::1] empty = empty_a.view(np.uint8)
    for t in range(n_tables):
        if pos >= end:
            raise corrupt(f"the chunk ends inside ANS table {t}")
        k = data[pos]
        pos += 1
        if k > TOKENS:
            raise corrupt(f"ANS table {t} lists {k} tokens, more than {TOKENS}")
        if pos + k > end:
            raise corrupt(f"the chunk ends inside ANS table {t}")
        prev = -1
        for i in range(k):
            tokens[i] = data[pos + i]
            if tokens[i] <= prev or tokens[i] >= TOKENS:
                raise corrupt(f"ANS table {t}'s tokens are not increasing below {TOKENS}")
            prev = tokens[i]
        pos += k
        total = 0
        for i in range(k - 1):
            # LEB128: 7 bits a byte, low group first; at most 2 bytes
            v = 0
            shift = 0
            while True:
                if pos >= end or shift >= 14:
                    raise corrupt(f"ANS table {t} has a truncated or overlong frequency")
                b = data[pos]
                pos += 1
                v |= <uint32_t>(b & 0x7F) << shift
                shift += 7
                if not b & 0x80:
                    break
            if not 1 <= v < M_TOTAL:
                raise corrupt(f"ANS table {t} gives token {tokens[i]} frequency {v}")
            f[i] = v
            total += v
        if k == 0:
            empty[t] = 1
            continue
        if total >= M_TOTAL:
            raise corrupt(f"ANS table {t}'s frequencies sum past {M_TOTAL}")
        f[k - 1] = M_TOTAL - total
        st = 0
        for i in range(k):
            tok = tokens[i]
            info[t * TOKENS + tok] = f[i] | (st << 16)
            for a in range(st, st + f[i]):
                lut[t * M_TOTAL + a] = <uint8_t>tok
            st += f[i]
    return lut_a, info_a, empty_a, pos


# --- the stage's bytes ------------------------------------------------------------------------

def pack(order_sym, order_ctx, counts):
    """Stage 3's bytes for the symbols in visit order, their fine contexts and the count of each
    (fine context, token): the model byte, the tables, the final states and word count, the
    words (the raw values follow them)."""
    best, freq, _ = model(counts)
    words, states = encode(order_sym, order_ctx, tables_of(best), freq)
    return (bytes([best]) + write_tables(freq) + STATE_LENGTH.pack(*states, len(words))
            + words.astype("<u2").tobytes())


def read(data):
    """The decoder's Stream from stage 3's bytes, and what follows the words (the raw values'
    frame); CorruptChunkError naming what is wrong with corrupt bytes."""
    if len(data) < 1:
        raise corrupt("the chunk ends before its ANS model")
    cdef int m = data[0]
    cdef Py_ssize_t pos = 1
    if m >= MODELS:
        raise corrupt(f"unknown ANS context model {m}")
    lut, info, empty, pos = read_tables(data, pos, n_tables_of(m))
    if len(data) - pos < STATE_LENGTH.size:
        raise corrupt("the chunk ends before its ANS state")
    state0, state1, n_words = STATE_LENGTH.unpack_from(data, pos)
    pos += STATE_LENGTH.size
    if n_words > (len(data) - pos) // 2:
        raise corrupt(f"{n_words} ANS words run past the chunk's end")
    words = np.frombuffer(bytes(data[pos:pos + 2 * n_words]), dtype="<u2").astype(np.uint16)
    pos += 2 * n_words
    table = tables_of(m)
    table[empty[table]] = -1
    return Stream(words, (state0, state1), table, lut, info), data[pos:]


# --- the mask stream (the spec's "Masked chunks") --------------------------------------------
# One bit per element in flat C order (set: masked), coded by one binary rANS state whose
# probabilities adapt per context: the neighbours w, n, nw, ne in the last two dimensions and
# the bit one slice back along the third-last (or, in its first slice, along the fourth-last:
# a mask that repeats along time costs almost nothing after the first slice).

MASK_HEAD = struct.Struct("<IQ")        # the final state, the number of 16-bit words

cdef enum:
    MASK_CONTEXTS = 48
    MASK_ONE = 65536                    # probabilities in 16 bits
    MASK_HALF = 32768
    MASK_RATE = 4                       # adaptation: P += (2^16 - P) >> 4 after a 1, P -= P >> 4 after a 0


def mask_corrupt(str message):
    return corrupt(message, "mask")


cdef inline void row_contexts(uint8_t* ctx, const uint8_t* up, const uint8_t* before,
                              Py_ssize_t n3) noexcept nogil:
    """Each bit's context in a row but for the bit before it (w, added as the row is coded):
    `up` the row above with a 0 on either side (up[k3 + 1] is the bit above; all 0 in a
    slice's first row), `before` the row one slice back (along dimension 1 of the 4-d grid, or
    at a slice 0 along dimension 0; NULL where neither exists)."""
    cdef Py_ssize_t k3
    for k3 in range(n3):
        ctx[k3] = <uint8_t>((up[k3 + 1] << 1) | (up[k3] << 2) | (up[k3 + 2] << 3))
    if before != NULL:
        for k3 in range(n3):
            ctx[k3] |= <uint8_t>((1 + before[k3]) << 4)


def mask_encode(const uint8_t[::1] mask, tuple shape, const uint8_t[::1] reference=None):
    """The mask stream's bytes (state, word count, words) of `mask` (0 or 1 per element, flat C
    order) over the 4-d grid `shape`: each bit's probability first to last, then the bits coded
    last to first. `reference` (shape[2] x shape[3] bits, 0 or 1): the slice the first slice
    looks back at (a reference mask, as a later slice looks back at the one before it)."""
    cdef Py_ssize_t n0 = shape[0], n1 = shape[1], n2 = shape[2], n3 = shape[3]
    cdef Py_ssize_t n = mask.shape[0], i, k0, k1, k2, k3, top, cap = n + 2
    cdef Py_ssize_t s1 = n2 * n3, s0 = n1 * n2 * n3
    cdef uint16_t p[MASK_CONTEXTS]
    cdef uint32_t x = ANS_L, f, start, q, pc = MASK_HALF
    cdef int c, bit, cur = 0
    cdef const uint8_t* ref = reference_of(reference, n2, n3)
    if n0 * n1 * n2 * n3 != n:
        raise ValueError(f"{CODEC}: {n} mask bits for the shape {shape}")
    for i in range(n):
        if mask[i] > 1:
            raise ValueError(f"{CODEC}: mask element {i} is {mask[i]}, not 0 or 1")
    probs = np.empty(n, dtype=np.uint16)
    out = np.empty(cap, dtype=np.uint16)
    cdef uint16_t[::1] pr = probs
    cdef uint16_t[::1] w = out
    for c in range(MASK_CONTEXTS):
        p[c] = MASK_HALF
    top = cap
    if n == 0:
        return MASK_HEAD.pack(x, 0)
    row_a = np.zeros(2 * n3 + 2, dtype=np.uint8)
    cdef uint8_t[::1] row = row_a
    cdef uint8_t* ctx = &row[n3 + 2]
    with nogil:
        i = 0
        for k0 in range(n0):
            for k1 in range(n1):
                memset(&row[0], 0, n3 + 2)
                for k2 in range(n2):
                    row_contexts(ctx, &row[0], &mask[i - s1] if k1 > 0 else (
                        &mask[i - s0] if k0 > 0 else (
                            ref + k2 * n3 if ref != NULL else NULL)), n3)
                    bit = 0
                    for k3 in range(n3):
                        c = ctx[k3] | bit
                        if c != cur:        # (as the decoder: see there)
                            p[cur] = pc
                            cur = c
                            pc = p[c]
                        bit = mask[i + k3]
                        pr[i + k3] = <uint16_t>pc
                        if bit:
                            pc = pc + ((MASK_ONE - pc) >> MASK_RATE)
                        else:
                            pc = pc - (pc >> MASK_RATE)
                    memcpy(&row[1], &mask[i], n3)
                    i += n3
        for i in range(n - 1, -1, -1):
            q = pr[i]
            if mask[i]:
                f = q
                start = MASK_ONE - q
            else:
                f = MASK_ONE - q
                start = 0
            # (at most one word out per bit: x < 2^32 and f >= 1)
            if <uint64_t>x >= (<uint64_t>f << 16):
                top -= 1
                w[top] = <uint16_t>(x & 0xFFFF)
                x >>= 16
            x = ((x // f) << 16) + (x % f) + start
    return MASK_HEAD.pack(x, cap - top) + out[top:].astype("<u2").tobytes()


cdef inline bint mask_refill(uint32_t* x, Py_ssize_t* pos, Py_ssize_t n_words,
                             const uint16_t* wp) noexcept nogil:
    """The mask decoder's state below 2^16 takes the next word; 1 where none is left."""
    if x[0] < ANS_L:
        if pos[0] >= n_words:
            return 1
        x[0] = (x[0] << 16) | wp[pos[0]]
        pos[0] += 1
    return 0


cdef const uint8_t* reference_of(const uint8_t[::1] reference, Py_ssize_t n2,
                                 Py_ssize_t n3) except? NULL:
    """The reference mask's bits (NULL for None); ValueError unless it has n2 x n3 of 0 or 1."""
    cdef Py_ssize_t i
    if reference is None:
        return NULL
    if reference.shape[0] != n2 * n3 or n2 * n3 == 0:
        raise ValueError(f"{CODEC}: a reference mask of {reference.shape[0]} bits for slices of "
                         f"{n2} x {n3}")
    for i in range(reference.shape[0]):
        if reference[i] > 1:
            raise ValueError(f"{CODEC}: reference mask element {i} is {reference[i]}, not 0 or 1")
    return &reference[0]


def mask_decode(data, tuple shape, const uint8_t[::1] reference=None):
    """(mask uint8[n] (0 or 1 per element, flat C order), the number of set bits, what follows
    the stream) from the mask stream at the start of `data` for the 4-d grid `shape` (with
    `reference`: as mask_encode's); CorruptChunkError (part "mask") for a stream that runs out
    or does not end where it began."""
    cdef Py_ssize_t n0 = shape[0], n1 = shape[1], n2 = shape[2], n3 = shape[3]
    cdef Py_ssize_t n = n0 * n1 * n2 * n3, i, k0, k1, k2, k3, pos = 0, count = 0
    cdef Py_ssize_t s1 = n2 * n3, s0 = n1 * n2 * n3, n_words
    cdef uint16_t p[MASK_CONTEXTS]
    cdef uint32_t x, f, slot, pc = MASK_HALF
    cdef int c, bit, err = 0, cur = 0
    cdef uint16_t no_word = 0
    cdef const uint16_t* wp
    cdef const uint8_t* ref = reference_of(reference, n2, n3)
    if len(data) < MASK_HEAD.size:
        raise mask_corrupt("the chunk ends inside the mask stream's state")
    x0, n_words_obj = MASK_HEAD.unpack_from(data)
    if n_words_obj > (len(data) - MASK_HEAD.size) // 2:
        raise mask_corrupt(f"{n_words_obj} mask words run past the chunk's end")
    n_words = n_words_obj
    x = x0
    if x < ANS_L:
        raise mask_corrupt(f"the mask stream's state {x} lies below 2^16")
    # (one copy: a little-endian machine's native uint16, aligned)
    words_a = np.frombuffer(data, dtype="<u2", count=n_words, offset=MASK_HEAD.size).astype(np.uint16)
    cdef const uint16_t[::1] words = words_a
    wp = &words[0] if n_words else &no_word
    mask_a = np.zeros(n, dtype=np.uint8)
    cdef uint8_t[::1] m = mask_a
    for c in range(MASK_CONTEXTS):
        p[c] = MASK_HALF
    row_a = np.zeros(2 * n3 + 2, dtype=np.uint8)
    cdef uint8_t[::1] row = row_a
    cdef uint8_t* ctx = &row[n3 + 2]
    if n:
        with nogil:
            i = 0
            for k0 in range(n0):
                for k1 in range(n1):
                    memset(&row[0], 0, n3 + 2)
                    for k2 in range(n2):
                        row_contexts(ctx, &row[0], &m[i - s1] if k1 > 0 else (
                            &m[i - s0] if k0 > 0 else (
                                ref + k2 * n3 if ref != NULL else NULL)), n3)
                        bit = 0
                        k3 = 0
                        while k3 < n3:
                            c = ctx[k3] | bit
                            if c != cur:
                                # (the current context's probability stays in a register while
                                # the context repeats: a masked region or open water)
                                p[cur] = pc
                                cur = c
                                pc = p[c]
                            f = MASK_ONE - pc
                            slot = x & 0xFFFF
                            bit = slot >= f
                            if bit:
                                x = pc * (x >> 16) + slot - f
                                pc = pc + ((MASK_ONE - pc) >> MASK_RATE)
                            else:
                                x = f * (x >> 16) + slot
                                pc = pc - (pc >> MASK_RATE)
                            m[i + k3] = <uint8_t>bit
                            count += bit
                            if mask_refill(&x, &pos, n_words, wp):
                                err = 1
                                break
                            k3 += 1
                            # A run in a context whose probability has settled at its end (a
                            # 0 after P < 16, a 1 after 2^16 - P < 16: the update leaves P as it
                            # is) decodes with nothing but the state's steps, while the context
                            # and the bit stay: the same arithmetic as above, bit for bit. (The
                            # mask starts all 0; the step that ends a run is the one above.)
                            if not bit and pc < 16:
                                f = MASK_ONE - pc
                                while k3 < n3 and ctx[k3] == cur:
                                    slot = x & 0xFFFF
                                    if slot >= f:
                                        break
                                    x = f * (x >> 16) + slot
                                    if mask_refill(&x, &pos, n_words, wp):
                                        err = 1
                                        break
                                    k3 += 1
                            elif bit and pc > MASK_ONE - 16:
                                f = MASK_ONE - pc
                                while k3 < n3 and (ctx[k3] | 1) == cur:
                                    slot = x & 0xFFFF
                                    if slot < f:
                                        break
                                    x = pc * (x >> 16) + slot - f
                                    m[i + k3] = 1
                                    count += 1
                                    if mask_refill(&x, &pos, n_words, wp):
                                        err = 1
                                        break
                                    k3 += 1
                            if err:
                                break
                        if err:
                            break
                        memcpy(&row[1], &m[i], n3)
                        i += n3
                    if err:
                        break
                if err:
                    break
    if err:
        raise mask_corrupt(f"the mask stream ends before the chunk's {n} bits")
    if pos != n_words or x != ANS_L:
        raise mask_corrupt(f"the mask stream does not end where it began ({n_words - pos} "
                           f"words left, state {x}, not {ANS_L})")
    return mask_a, count, data[MASK_HEAD.size + 2 * n_words:]
