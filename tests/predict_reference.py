"""A slow, independent decoder of zdt.predict chunks, written from docs/codecs/predict.md alone:
Python floats (IEEE binary64, each operation rounded, no fused multiply-add) and Python loops
over the spec's shapes (extents of 1 dropped, leading dimensions merged beyond four), not the
kernels' padded four-dimensional form."""

from __future__ import annotations

import decimal
import functools
import itertools
import math
import struct

import numpy as np
from numcodecs.zstd import Zstd


def spec_shape(shape: tuple[int, ...]) -> list[int]:
    dims = [n for n in shape if n != 1]
    while len(dims) > 4:
        dims = [dims[0] * dims[1], *dims[2:]]
    return dims


def flat(index: tuple[int, ...], dims: list[int]) -> int:
    i = 0
    for k, n in zip(index, dims):
        i = i * n + k
    return i


def back(index: tuple[int, ...], d: int, dims: list[int]) -> int | None:
    """The flat index one step back along dimension d, None at index 0 (or no such d)."""
    if d < 0 or index[d] == 0:
        return None
    return flat(tuple(k - (e == d) for e, k in enumerate(index)), dims)


def lorenzo_order(dims: list[int]):
    """(flat index, prediction function, stage 3's context (A, B, level group), level step s)
    in C order (Lorenzo has no levels: s = 1)."""
    D = len(dims)
    # the spec's terms in its order: for each mask, the dimensions S it names, the flat distance
    # of the neighbour one step back along every dimension of S, and the term's sign
    strides = [math.prod(dims[d + 1:]) for d in range(D)]
    terms = []
    for mask in range(1, 2 ** D):
        S = [D - 1 - b for b in range(D) if mask >> b & 1]
        terms.append((S, sum(strides[d] for d in S), len(S) % 2 == 1))
    for index in itertools.product(*[range(n) for n in dims]):
        i = flat(index, dims)

        def predict(v, index=index, i=i):
            p = 0.0
            for S, distance, odd in terms:
                t = 0.0 if any(index[d] == 0 for d in S) else v[i - distance]
                p = p + t if odd else p - t
            return p
        yield i, predict, (back(index, D - 1, dims), back(index, D - 2, dims), 0), 1


def interpolation_order(dims: list[int], reverse: bool = False):
    """Predictor 2, or with `reverse` predictor 3 (each level's dimensions last to first)."""
    D = len(dims)
    if 0 in dims:           # an empty chunk: no element
        return
    s = 1
    while D and s < max(dims) - 1:
        s *= 2
    yield 0, lambda v: 0.0, (None, None, 3), s      # (the first element: the top level's step)
    if D == 0:
        return
    order = list(reversed(range(D))) if reverse else list(range(D))
    while s >= 1:
        for d in order:
            ranges = []
            for e, n in enumerate(dims):
                if order.index(e) < order.index(d):
                    ranges.append(range(0, n, s))
                elif e == d:
                    ranges.append(range(s, n, 2 * s))
                else:
                    ranges.append(range(0, n, 2 * s))
            for index in itertools.product(*ranges):
                def predict(v, index=index, d=d, s=s):
                    k, n = index[d], dims[d]

                    def at(delta):
                        j = list(index)
                        j[d] = k + delta
                        return v[flat(tuple(j), dims)]
                    b = at(-s)
                    if k + 3 * s < n and k >= 3 * s:
                        return (9.0 * (b + at(s)) - (at(-3 * s) + at(3 * s))) * 0.0625
                    if k + s < n:
                        return (b + at(s)) * 0.5
                    if k >= 3 * s:
                        return 1.5 * b - 0.5 * at(-3 * s)
                    return b
                ahead = list(index)
                ahead[d] += s
                behind = list(index)
                behind[d] -= s
                context = (flat(tuple(behind), dims),
                           flat(tuple(ahead), dims) if ahead[d] < dims[d] else None,
                           {1: 0, 2: 1, 4: 2}.get(s, 3))
                yield flat(index, dims), predict, context, s
        s //= 2


class Offset:
    """The elements of a slice, indexed from its first (flat) element."""

    def __init__(self, v: list, start: int) -> None:
        self.v, self.start = v, start

    def __getitem__(self, i: int):
        return self.v[self.start + i]


def slices_order(dims: list[int]):
    """Predictor 4: each slice along dimension 0, in turn, as a chunk of its own (predictor 2)."""
    if not dims:
        yield from interpolation_order(dims)
        return
    size = math.prod(dims[1:])
    for i0 in range(dims[0]):
        for i, predict, (a, b, g), s in interpolation_order(dims[1:]):
            start = i0 * size
            yield (start + i, (lambda v, predict=predict, start=start: predict(Offset(v, start))),
                   (None if a is None else start + a, None if b is None else start + b, g), s)


def level_group(index: tuple[int, ...], predictor: int) -> int:
    """Stage 2's group of an element: the fewest trailing zero bits, capped at 3 (0: 3), of its
    indices along the dimensions its predictor interpolates along."""
    along = index[1:] if predictor == 4 else index
    best = 3
    for k in along:
        t = 3 if k == 0 else min(3, (k & -k).bit_length() - 1)
        best = min(best, t)
    return best


def unzigzag(m: int) -> int:
    return m >> 1 if m % 2 == 0 else -((m + 1) >> 1)


def symbol_class(k: int) -> int:
    if k == 1:
        return 4
    if k == 2:
        return 0
    if k in (3, 4):
        return 1
    if 5 <= k <= 8:
        return 2
    return 3        # 0 (raw) and codes beyond -3..3


def model_table(model: int, fine: int) -> int:
    g, pair = divmod(fine, 15)
    hi = max(h for h in range(5) if h * (h + 1) // 2 <= pair)
    return [0, g, 4 * g + [0, 1, 1, 2, 3][hi], fine][model]


class Rans:
    """Stage 3's symbols, one at a time in visit order, each from its context's table."""

    def __init__(self, data: bytes, at: int) -> None:
        self.model = data[at]
        at += 1
        assert self.model < 4
        self.tables = []
        for _ in range([1, 4, 16, 60][self.model]):
            k = data[at]
            tokens = list(data[at + 1:at + 1 + k])
            at += 1 + k
            freqs = []
            for _ in range(k - 1):
                v, shift = 0, 0
                while True:
                    byte = data[at]
                    at += 1
                    v |= (byte & 0x7F) << shift
                    shift += 7
                    if byte < 0x80:
                        break
                freqs.append(v)
            if k:
                freqs.append(4096 - sum(freqs))
            assert all(f >= 1 for f in freqs) and tokens == sorted(set(tokens))
            self.tables.append(list(zip(tokens, freqs)))
        self.states = list(struct.unpack_from("<II", data, at))
        (n_words,) = struct.unpack_from("<Q", data, at + 8)
        at += 16
        self.words = list(struct.unpack_from(f"<{n_words}H", data, at))
        self.end = at + 2 * n_words
        self.next_word = 0
        self.j = 0

    def renormalize(self, x: int) -> int:
        if x < 1 << 16:
            x = (x << 16) | self.words[self.next_word]
            self.next_word += 1
        return x

    def symbol(self, a: int | None, b: int | None, group: int) -> int:
        if a is None:
            ca = symbol_class(b) if b is not None else 0
            cb = ca
        else:
            ca = symbol_class(a)
            cb = symbol_class(b) if b is not None else ca
        lo, hi = min(ca, cb), max(ca, cb)
        table = self.tables[model_table(self.model, 15 * group + hi * (hi + 1) // 2 + lo)]
        assert table, "a context whose table is empty"
        x = self.states[self.j % 2]
        slot = x % 4096
        start = 0
        for token, freq in table:
            if slot < start + freq:
                break
            start += freq
        x = self.renormalize(freq * (x >> 12) + slot - start)
        if token < 16:
            k = token
        else:
            bits = (token - 16) // 4 + 2
            k = ((4 + (token - 16) % 4) << bits) | (x % (1 << bits))
            x = self.renormalize(x >> bits)
        self.states[self.j % 2] = x
        self.j += 1
        return k

    def check_end(self) -> None:
        assert self.states == [1 << 16, 1 << 16] and self.next_word == len(self.words)


def exp2_coefficients() -> list[float]:
    """(ln 2)**i / i! for i = 0 .. 13, each the binary64 value nearest it, from ln 2 to 60
    digits (Decimal): the spec's table, computed again."""
    with decimal.localcontext() as ctx:
        ctx.prec = 60
        ln2, term, out = decimal.Decimal(2).ln(), decimal.Decimal(1), []
        for i in range(14):
            out.append(float(term))         # (correctly rounded)
            term = term * ln2 / (i + 1)
    return out


def spec_exp2(v: float) -> float:
    """2**v as "Pointwise-relative bounds" computes it, in Python floats."""
    c = exp2_coefficients()
    k = round(v)                            # (Python rounds ties to even)
    f = v - k
    p = c[13]
    for i in range(12, -1, -1):
        p = p * f
        p = p + c[i]
    k = max(-1200, min(1200, k))
    try:
        return math.ldexp(p, k)
    except OverflowError:
        return math.inf


@functools.lru_cache(maxsize=None)
def exp2_table() -> tuple[list[float], list[float]]:
    """Kind 3's table T (the binary64 values nearest 2^(j/64), j = 0 .. 63) and coefficients
    (those nearest (ln 2)^i / i!, i = 0 .. 5), from 60 digits (Decimal): computed again, not
    copied from the spec."""
    with decimal.localcontext() as ctx:
        ctx.prec = 60
        table = [float(decimal.Decimal(2) ** (decimal.Decimal(j) / 64)) for j in range(64)]
    return table, exp2_coefficients()[:6]


def table_exp2(v: float) -> float:
    """2**v as kind 3 computes it, in Python floats and integers."""
    table, d = exp2_table()
    c = max(-1100.0, min(1100.0, v))
    k = round(c * 64)                       # (exact product; Python rounds ties to even)
    j, m = k % 64, k // 64                  # (j in 0 .. 63, m = floor(k / 64))
    r = c - k / 64                          # (k / 64 exact, the difference exact)
    p = d[5]
    for i in range(4, -1, -1):
        p = p * r
        p = p + d[i]
    y = table[j] * p
    try:
        return math.ldexp(y, m)
    except OverflowError:
        return math.inf


def sign_class(t: float, v: float) -> int:
    """Kind 4's class of a logarithm v (or a tile's smallest) against the stream's t."""
    d = t - v                   # (one binary64 subtraction, as the spec says)
    return 0 if math.isnan(d) else int(d >= 4.0) + int(d >= 8.0)


def decode_signs(data: bytes, dims: list[int], logs: list[float]) -> list[bool]:
    """Kind 4's sign stream: t, then a mask stream's state and words; each plane (the last two
    dimensions of the spec's shape, padded to four) in tiles of 8 x 8, row by row, each tile a
    flag (all its signs equal), then one sign or a sign for each of its elements."""
    (t,) = struct.unpack_from("<d", data)
    assert math.isfinite(t)
    x, n_words = struct.unpack_from("<IQ", data, 8)
    words = list(struct.unpack_from(f"<{n_words}H", data, 20))
    assert 20 + 2 * n_words == len(data) and x >= 1 << 16
    shape4 = ([1, 1, 1, 1] + list(dims))[-4:]
    rows, cols = shape4[2], shape4[3]
    plane = rows * cols
    n = math.prod(shape4)
    P = [32768] * 60
    bits = [False] * n
    used = 0

    def next_bit(c: int) -> bool:
        nonlocal x, used
        F = 65536 - P[c]
        slot = x % 65536
        if slot >= F:
            x = P[c] * (x >> 16) + slot - F
            P[c] += (65536 - P[c]) >> 4
            bit = True
        else:
            x = F * (x >> 16) + slot
            P[c] -= P[c] >> 4
            bit = False
        if x < 1 << 16:
            x = (x << 16) | words[used]
            used += 1
        return bit

    trows, tcols = -(-rows // 8), -(-cols // 8)
    for s in range(0, n, plane):
        flags: dict[tuple[int, int], int] = {}
        for a in range(trows):
            for b in range(tcols):
                cells = [(i, j) for i in range(8 * a, min(8 * a + 8, rows))
                         for j in range(8 * b, min(8 * b + 8, cols))]
                # (the tile's class: the largest of its four corners')
                corners = {cells[0], cells[-1], (cells[0][0], cells[-1][1]),
                           (cells[-1][0], cells[0][1])}
                m = max(sign_class(t, logs[s + i * cols + j]) for i, j in corners)
                up = flags.get((a - 1, b), 2)
                left = flags.get((a, b - 1), 2)
                u = next_bit(m + 3 * up + 9 * left)
                flags[(a, b)] = int(u)
                if u:
                    i0, j0 = 8 * a, 8 * b
                    above = int(bits[s + (i0 - 1) * cols + j0]) if i0 else 2
                    before = int(bits[s + i0 * cols + j0 - 1]) if j0 else 2
                    bit = next_bit(27 + above + 3 * before)
                    for i, j in cells:
                        bits[s + i * cols + j] = bit
                    continue
                for i, j in cells:
                    e = s + i * cols + j
                    w = int(bits[e - 1]) if j else 0
                    nn = int(bits[e - cols]) if i else 0
                    nw = int(bits[e - cols - 1]) if i and j else 0
                    bits[e] = next_bit(36 + w + 2 * nn + 4 * nw + 8 * sign_class(t, logs[e]))
    assert x == 1 << 16 and used == n_words
    return bits


def decode_relative(data: bytes, dtype: np.dtype, shape: tuple[int, ...]) -> np.ndarray:
    """A format-2 chunk (kind 1, 3 or 4, pointwise relative), element by element."""
    magic, kind, size, log_fill, b, n_exact, length = struct.unpack_from("<4sBBHdQQ", data)
    assert magic == b"ZPR2" and kind in (1, 3, 4) and size == dtype.itemsize and log_fill in (0, 1)
    exp2 = spec_exp2 if kind == 1 else table_exp2
    n = math.prod(shape)
    assert data[32:36] in (b"ZPR1", b"ZPR3") or data[32:37] == b"ZPR2\x02"
    logs = decode(data[32:32 + length], np.dtype("float64"), shape, b,
                  [-math.inf, math.nan][log_fill]).reshape(-1)
    at = 32 + length
    (sign_length,) = struct.unpack_from("<Q", data, at)
    at += 8

    def bitmap(length: int, at: int) -> list[bool]:
        bits = bytes(Zstd().decode(data[at:at + length]))
        assert len(bits) == (n + 7) // 8
        return [bool(bits[i // 8] >> (7 - i % 8) & 1) for i in range(n)]

    if not sign_length:
        negative = [False] * n
    elif kind == 4:
        negative = decode_signs(data[at:at + sign_length], spec_shape(shape), logs.tolist())
    else:
        negative = bitmap(sign_length, at)
    at += sign_length
    (map_length,) = struct.unpack_from("<Q", data, at)
    at += 8
    exact_map = bitmap(map_length, at) if map_length else [False] * n
    # (an element is exact where its logarithm is NaN or its bit is set)
    exact_map = [bit or math.isnan(v) for bit, v in zip(exact_map, logs.tolist())]
    assert sum(exact_map) == n_exact
    at += map_length
    rest = bytes(Zstd().decode(data[at:])) if n_exact else data[at:]
    assert len(rest) == n_exact * size
    exact = np.frombuffer(rest, dtype=dtype.newbyteorder("<"))
    out = np.empty(n, dtype=dtype)
    used = 0
    for i, v in enumerate(logs.tolist()):
        if exact_map[i]:
            out[i] = exact[used]
            used += 1
            continue
        value = 0.0 if v == -math.inf else math.inf if v == math.inf else exp2(v)
        with np.errstate(over="ignore"):
            value = dtype.type(value)       # float32: rounded to nearest
        out[i] = -value if negative[i] else value
    assert used == n_exact
    return out.reshape(shape)


def decode_mask(data: bytes, dims: list[int], reference: list[list[bool]] | None = None) -> list[bool]:
    """The spec's mask stream: one bit per element in flat C order, each by its context's
    adaptive probability, one rANS state; `reference` (rows of bits): the reference mask the
    elements without a slice before look back at (a chunk whose header says so)."""
    x, n_words = struct.unpack_from("<IQ", data)
    words = list(struct.unpack_from(f"<{n_words}H", data, 12))
    assert 12 + 2 * n_words == len(data)
    D = len(dims)
    P = [32768] * 48
    bits: list[bool] = []
    used = 0

    def bit_at(index: tuple[int, ...], d: int, step: int) -> int:
        """The bit `step` along dimension d from index (0 where there is no such element)."""
        if d < 0 or not 0 <= index[d] + step < dims[d]:
            return 0
        return int(bits[flat(tuple(k + step * (e == d) for e, k in enumerate(index)), dims)])

    for index in itertools.product(*[range(k) for k in dims]):
        w = bit_at(index, D - 1, -1)
        n_ = bit_at(index, D - 2, -1)
        if D >= 2 and index[D - 2] > 0:
            up = tuple(k - (e == D - 2) for e, k in enumerate(index))
            nw = bit_at(up, D - 1, -1)
            ne = bit_at(up, D - 1, 1)
        else:
            nw = ne = 0
        if D >= 3 and index[D - 3] > 0:
            t = 1 + bit_at(index, D - 3, -1)
        elif D == 4 and index[0] > 0:
            t = 1 + bit_at(index, 0, -1)
        elif reference is not None:
            # (its shape: the chunk's last two extents, padded with leading extents of 1)
            last = ([1, 1] + list(dims))[-2:]
            assert [len(reference), len(reference[0])] == last
            r = index[D - 2] if D >= 2 else 0
            t = 1 + int(reference[r][index[D - 1] if D >= 1 else 0])
        else:
            t = 0
        c = w + 2 * n_ + 4 * nw + 8 * ne + 16 * t
        F = 65536 - P[c]
        slot = x % 65536
        if slot >= F:
            x = P[c] * (x >> 16) + slot - F
            P[c] += (65536 - P[c]) >> 4
            bits.append(True)
        else:
            x = F * (x >> 16) + slot
            P[c] -= P[c] >> 4
            bits.append(False)
        if x < 1 << 16:
            x = (x << 16) | words[used]
            used += 1
    assert x == 1 << 16 and used == n_words
    return bits


def reference_bits(config_mask: dict) -> list[list[bool]]:
    """The configuration's `mask` (a reference mask): its stream decoded over its shape."""
    import base64

    m2, m3 = config_mask["shape"]
    flat_bits = decode_mask(base64.b64decode(config_mask["stream"]), [m2, m3])
    return [flat_bits[r * m3:(r + 1) * m3] for r in range(m2)]


def decode(data: bytes, dtype: np.dtype, shape: tuple[int, ...], abs_error: float, fill,
           mask: list[bool] | None = None, reference: dict | None = None) -> np.ndarray:
    """`reference`: the configuration's `mask`, if it has one."""
    dtype = np.dtype(dtype)
    if data[:5] == b"ZPR2\x02" and mask is None:
        # a masked chunk: the mask stream, then the values' chunk (of float64 for integers)
        magic, kind, size, looks, n_masked, length = struct.unpack_from("<4sBBHQQ", data)
        assert looks in (0, 1) and 1 <= n_masked <= math.prod(shape) and fill is not None
        mask = decode_mask(data[24:24 + length], spec_shape(shape),
                           reference_bits(reference) if looks else None)
        assert sum(mask) == n_masked
        return decode(data[24 + length:], dtype, shape, abs_error, fill, mask)
    if data[:4] == b"ZPR2":
        assert mask is None, "a masked chunk's values' chunk is of format 1"
        return decode_relative(data, dtype, shape)
    if dtype.kind in "iu":
        # "Integer data types": the float64 chunk within the largest float64 below k + 1/2,
        # each value rounded to the nearest integer (ties to even), clamped to the type's range
        k = math.floor(min(abs_error, 2.0 ** 51))
        bound = math.nextafter(k + 0.5, 0.0)
        y = decode(data, np.dtype("float64"), shape, bound, float(fill), mask)
        lo, hi = int(np.iinfo(dtype).min), int(np.iinfo(dtype).max)
        out = []
        for v in y.reshape(-1).tolist():
            if math.isfinite(v):
                out.append(min(max(round(v), lo), hi))
                continue
            # an escaped integer: a quiet NaN, sign clear, the integer + 2^32 in the low 33 bits
            bits = struct.unpack("<Q", struct.pack("<d", v))[0]
            assert bits >> 33 == 0x7FF8_0000_0000_0000 >> 33, hex(bits)
            w = (bits & (2**33 - 1)) - 2**32
            assert lo <= w <= hi
            out.append(w)
        return np.array(out, dtype=dtype).reshape(shape)
    magic, predictor, size, stage, n_raw = struct.unpack_from("<4sBBHQ", data)
    assert magic in (b"ZPR1", b"ZPR3") and predictor in (1, 2, 3, 4) and size == dtype.itemsize and stage in (0, 1, 2, 3)
    # format 3: alpha and beta after the header; level s's step is 2E / f_s, f_1 = 1,
    # f_2s = min(f_s alpha, beta)
    alpha = beta = 1.0
    at0 = 16
    if magic == b"ZPR3":
        alpha, beta = struct.unpack_from("<dd", data, 16)
        assert 1.0 <= alpha <= 1024.0 and 1.0 <= beta <= 1024.0 and predictor in (2, 3, 4)
        at0 = 32

    def factor(s: int) -> float:
        f = 1.0
        while s > 1:
            f = min(f * alpha, beta)
            s //= 2
        return f
    n = math.prod(shape)
    dims = spec_shape(shape)
    masked = mask or [False] * n
    # (a masked chunk's values: the masked elements have no symbols; stages 0 to 2 hold the
    # others' in flat C order)
    unmasked = [i for i in range(n) if not masked[i]]

    def spread(codes: list[int]) -> list[int]:
        assert len(codes) == len(unmasked)
        symbols = [1] * n
        for i, k in zip(unmasked, codes):
            symbols[i] = k
        return symbols
    if stage == 0:          # symbols as two byte planes, then the raw values, one zstd frame
        m = len(unmasked)
        # (numcodecs' zstd does not decode a frame of no content: a chunk whose every element
        # is masked and none raw)
        payload = bytes(Zstd().decode(data[at0:])) if 2 * m + n_raw * size else b""
        assert data[at0:at0 + 4] == b"\x28\xb5\x2f\xfd"
        assert len(payload) == 2 * m + n_raw * size
        symbols = spread([payload[i] | payload[m + i] << 8 for i in range(m)])
        raws = np.frombuffer(payload[2 * m:], dtype=dtype.newbyteorder("<"))
    elif stage == 1:        # u64 length, pcodec standalone data of the symbols, zstd frame
        from pcodec import standalone

        (length,) = struct.unpack_from("<Q", data, at0)
        codes = standalone.simple_decompress(data[at0 + 8:at0 + 8 + length])
        if codes is None:       # (pcodec's answer for no values: every element masked)
            codes = np.empty(0, dtype=np.uint16)
        assert codes.dtype == np.uint16 and codes.size == len(unmasked)
        symbols = spread([int(k) for k in codes])
        rest = bytes(Zstd().decode(data[at0 + 8 + length:])) if n_raw else data[at0 + 8 + length:]
        assert len(rest) == n_raw * size
        raws = np.frombuffer(rest, dtype=dtype.newbyteorder("<"))
    if stage == 2:          # four groups by level, each u64 length + pcodec data, zstd frame
        from pcodec import standalone

        assert predictor in (2, 3, 4)
        members = [[], [], [], []]
        for index in itertools.product(*[range(k) for k in dims]):
            if not masked[flat(index, dims)]:
                members[level_group(index, predictor)].append(flat(index, dims))
        symbols = [1] * n
        at = at0
        for group in members:
            (length,) = struct.unpack_from("<Q", data, at)
            at += 8
            if not group:
                assert length == 0
                continue
            codes = standalone.simple_decompress(data[at:at + length])
            at += length
            assert codes.size == len(group)
            for i, k in zip(group, codes.tolist()):
                symbols[i] = k
        rest = bytes(Zstd().decode(data[at:])) if n_raw else data[at:]
        assert len(rest) == n_raw * size
        raws = np.frombuffer(rest, dtype=dtype.newbyteorder("<"))
    rans = None
    if stage == 3:          # model, tables, two states, words; symbols decoded as visited
        rans = Rans(data, at0)
        rest = bytes(Zstd().decode(data[rans.end:])) if n_raw else data[rans.end:]
        assert len(rest) == n_raw * size
        raws = np.frombuffer(rest, dtype=dtype.newbyteorder("<"))
        symbols = [None] * n
    q = 2.0 * abs_error
    out = np.empty(n, dtype=dtype)
    v = [None] * n
    used = 0
    order = {1: lambda: lorenzo_order(dims), 2: lambda: interpolation_order(dims),
             3: lambda: interpolation_order(dims, reverse=True), 4: lambda: slices_order(dims)}[predictor]()
    visited = 0
    for i, predict, (a, b, group), s in order:
        assert v[i] is None, "an element visited twice"
        p = predict(v)
        if masked[i]:
            symbols[i] = 1          # (no symbol: reconstructed as the fill value's)
        elif rans is not None:
            symbols[i] = rans.symbol(None if a is None else symbols[a],
                                     None if b is None else symbols[b], group)
        k = symbols[i]
        if k >= 2:
            r = p + (q / factor(s)) * float(unzigzag(k - 2))
            value = dtype.type(r)               # float32: rounded to nearest
            out[i] = value
            v[i] = float(value)
        elif k == 1:
            out[i] = fill
            v[i] = p if math.isfinite(p) else 0.0
        else:
            value = raws[used]
            used += 1
            out[i] = value
            v[i] = float(value) if math.isfinite(float(value)) else (p if math.isfinite(p) else 0.0)
        visited += 1
    assert visited == n and used == n_raw
    if mask is not None:        # (symbol 1 is the masked elements' alone)
        assert all(symbols[i] != 1 for i in unmasked), "a fill-value symbol outside the mask"
    if rans is not None:
        rans.check_end()
    return out.reshape(shape)


def values_chunk(data: bytes) -> bytes:
    """The format-1 chunk in a chunk: the chunk itself, or a masked chunk's values' chunk
    (whose header names the predictor and entropy stage)."""
    if data[:5] == b"ZPR2\x02":
        return data[24 + struct.unpack_from("<Q", data, 16)[0]:]
    return data
