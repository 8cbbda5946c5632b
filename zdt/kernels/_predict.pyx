# cython: language_level=3, cdivision=True, boundscheck=False, wraparound=False, initializedcheck=False
"""zdt.predict's kernels: error-bounded prediction and its reconstruction, nogil.

docs/codecs/predict.md is the spec; this module computes its "Reconstruction" section and the
encoder of its "Encoding" section. Shapes arrive as four extents (leading extents of 1 pad
lower dimensions; zdt.codecs.predict drops other extents of 1 and merges leading dimensions
beyond four): a padded dimension's index is always 0, so its Lorenzo terms are skipped (the
spec has none for it) and it has no interpolation points.

Every prediction and reconstruction is a sequence of binary64 operations, each rounded on its
own: the module is compiled with -ffp-contract=off (setup.py), so no build fuses a multiply
and an add, and the bits are the same on every build and platform.
"""

from libc.math cimport fabs, floor, isfinite, log2
from libc.stdint cimport int16_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t
from libc.stdlib cimport free, realloc
from libc.string cimport memcpy

import numpy as np

ctypedef fused real:
    float
    double

cdef enum:
    LORENZO = 1
    INTERPOLATION = 2
    REVERSED = 3            # interpolation, the dimensions taken last to first
    SLICES = 4              # interpolation of each slice along the first dimension on its own

cdef double MARGIN = 1.0 - 2.0 ** -40       # the encoder's check, below E by more than a rounding


cdef inline bint same_bits(real a, real b) noexcept nogil:
    cdef uint64_t x = 0, y = 0
    memcpy(&x, &a, sizeof(real))
    memcpy(&y, &b, sizeof(real))
    return x == y


cdef struct Grid:
    Py_ssize_t n[4]
    Py_ssize_t st[4]        # C-order strides in elements


cdef inline Grid grid_of(tuple shape):
    cdef Grid g
    cdef int d
    for d in range(4):
        g.n[d] = shape[d]
    g.st[3] = 1
    for d in range(2, -1, -1):
        g.st[d] = g.st[d + 1] * g.n[d + 1]
    return g


cdef struct Terms:
    int count               # the Lorenzo terms over the chunk's real dimensions, in mask order
    int mask[15]            # bit b: dimension 3 - b
    Py_ssize_t off[15]      # how far back the term's neighbour is (elements)
    bint add[15]            # |S| odd: added; even: subtracted


cdef Terms lorenzo_terms(const Grid* g) noexcept nogil:
    """The terms of the spec's sum, once per chunk: only masks over dimensions of extent > 1
    (a padded dimension's index is always 0, so its terms are always 0.0 and are skipped, as
    the spec, which drops those dimensions, has them)."""
    cdef Terms t
    cdef int m, b, bits
    cdef bint real_dims
    t.count = 0
    for m in range(1, 16):
        real_dims = True
        bits = 0
        for b in range(4):
            if m & (1 << b):
                real_dims = real_dims and g.n[3 - b] > 1
                bits += 1
        if not real_dims:
            continue
        t.mask[t.count] = m
        t.off[t.count] = 0
        for b in range(4):
            if m & (1 << b):
                t.off[t.count] += g.st[3 - b]
        t.add[t.count] = bits % 2 == 1
        t.count += 1
    return t


cdef inline double lorenzo(const double* v, Py_ssize_t i, const Terms* t, int zero) noexcept nogil:
    """The Lorenzo sum at flat index i; `zero` has bit b set where dimension 3 - b's index is
    0 (the neighbour is outside: the term is 0.0)."""
    cdef double p = 0.0, term
    cdef int k
    for k in range(t.count):
        term = 0.0 if (t.mask[k] & zero) else v[i - t.off[k]]
        p = p + term if t.add[k] else p - term
    return p


cdef inline double along(const double* v, Py_ssize_t i, Py_ssize_t k, Py_ssize_t n, Py_ssize_t s,
                         Py_ssize_t st) noexcept nogil:
    """The interpolation prediction at flat index i, whose index along the dimension is k (of
    extent n, step s, stride st)."""
    cdef double a, b, c, e
    b = v[i - s * st]
    if k + s < n:
        c = v[i + s * st]
        if k >= 3 * s and k + 3 * s < n:
            a = v[i - 3 * s * st]
            e = v[i + 3 * s * st]
            return (9.0 * (b + c) - (a + e)) * 0.0625
        return (b + c) * 0.5
    if k >= 3 * s:
        a = v[i - 3 * s * st]
        return 1.5 * b - 0.5 * a
    return b


cdef inline Py_ssize_t top_step(const Grid* g) noexcept nogil:
    cdef Py_ssize_t m = 1, s = 1
    cdef int d
    for d in range(4):
        if g.n[d] > m:
            m = g.n[d]
    while s < m - 1:
        s *= 2
    return s


# --- one element, both ways -----------------------------------------------------------------

cdef struct Enc:
    double q
    double inv_q
    double limit            # E * MARGIN
    bint has_fill
    Py_ssize_t nraw


cdef inline int encode_one(real* x, Py_ssize_t i, double p, double* v, uint16_t* sym, real* raw,
                            Enc* e, real fill) noexcept nogil:
    cdef real xi = x[i]
    cdef double xd = <double>xi, t, r
    cdef int c, k
    cdef real rr
    if e.has_fill and same_bits(xi, fill):
        sym[i] = 1
        v[i] = p if isfinite(p) else 0.0
        return 1
    # (the encoder need not be exact: r is checked below). |t| < 32766 holds only when x and
    # p are finite (else t is infinite or NaN) and keeps c within the codes' range
    t = (xd - p) * e.inv_q
    if fabs(t) < 32766.0:
        c = <int>(t + (0.5 if t >= 0 else -0.5))        # (rounded half away from zero)
        r = p + e.q * <double>c
        rr = <real>r
        # (a value that reads back equal to the fill value would read as missing where the
        # fill value masks, CF's _FillValue: it is stored raw instead)
        if fabs(<double>rr - xd) <= e.limit and not (e.has_fill and rr == fill):
            k = (2 * c if c >= 0 else -2 * c - 1) + 2
            sym[i] = <uint16_t>k
            v[i] = <double>rr
            return k
    sym[i] = 0
    raw[e.nraw] = xi
    e.nraw += 1
    if isfinite(xd):
        v[i] = xd
    else:
        v[i] = p if isfinite(p) else 0.0
    return 0


cdef struct Patch:
    double* where
    double value


cdef struct Dec:
    double q
    double qc[16]           # q * c for the symbols 2 .. 15 (the same product, computed once)
    Py_ssize_t nraw         # raw values used so far
    Py_ssize_t nraw_max
    Py_ssize_t nfill        # fill-value symbols decoded
    # float64: the predictor values are written to the output itself (no second array), and
    # the elements whose value differs from their predictor value (the fill value, a
    # non-finite raw value) are patched in after the traversal
    Patch* patches
    Py_ssize_t npatch
    Py_ssize_t cap
    bint oom


cdef inline void patch(Dec* e, double* where, double value) noexcept nogil:
    cdef Patch* grown
    if e.npatch == e.cap:
        grown = <Patch*>realloc(e.patches, (2 * e.cap + 64) * sizeof(Patch))
        if grown == NULL:
            e.oom = True
            return
        e.patches = grown
        e.cap = 2 * e.cap + 64
    e.patches[e.npatch].where = where
    e.patches[e.npatch].value = value
    e.npatch += 1


cdef inline int code_of(int k) noexcept nogil:
    """The code of symbol k >= 2 (zigzag: 2, 3, 4, 5 -> 0, -1, 1, -2)."""
    cdef int m = k - 2
    return (m >> 1) if (m & 1) == 0 else -((m + 1) >> 1)


cdef void init_dec(Dec* dd, double abs_error, Py_ssize_t nraw_max) noexcept nogil:
    cdef int k
    dd.q = 2.0 * abs_error
    for k in range(16):
        dd.qc[k] = dd.q * <double>code_of(k) if k >= 2 else 0.0
    dd.nraw = 0
    dd.nraw_max = nraw_max
    dd.nfill = 0
    dd.patches = NULL
    dd.npatch = 0
    dd.cap = 0
    dd.oom = False


cdef inline void store_value(real* out, Py_ssize_t i, double* v, double r) noexcept nogil:
    """Element i decoded to r (rounded to float32 for float32 chunks), and its predictor value."""
    cdef real rr = <real>r
    if real is float:      # (float64 decodes into v itself: out is v)
        out[i] = rr
    v[i] = <double>rr


cdef inline int decode_one(real* out, Py_ssize_t i, double p, double* v, int k,
                           const real* raw, Dec* e, real fill) noexcept nogil:
    """Element i from its symbol k; 0, or -1 when the symbols ask for more raw values than
    the chunk holds."""
    cdef real rr
    if k >= 2:
        store_value(out, i, v, p + (e.qc[k] if k < 16 else e.q * <double>code_of(k)))
        return 0
    if k == 1:
        e.nfill += 1
        out[i] = fill
        v[i] = p if isfinite(p) else 0.0
        if real is double:
            patch(e, &v[i], fill)
        return 0
    if e.nraw >= e.nraw_max:
        return -1
    rr = raw[e.nraw]
    e.nraw += 1
    out[i] = rr
    if isfinite(<double>rr):
        v[i] = <double>rr
    else:
        v[i] = p if isfinite(p) else 0.0
        if real is double:
            patch(e, &v[i], rr)
    return 0



# --- entropy stage 3: context-modelled rANS (the spec's "Stage 3") -------------------------
# Symbols are coded in the predictor's visit order; each one's context is its level group and
# the classes of the symbols of its two context neighbours (visited before it), so the decoder
# decodes each symbol where it reconstructs the element, in one pass.

cdef extern from *:
    int __builtin_clz(unsigned int) nogil

cdef enum:
    TOKENS = 64             # symbols 0..15 are tokens of their own; above, 4 tokens an octave
    PAIRS = 15              # unordered pairs of the five neighbour classes
    FINE = 60               # 4 level groups x 15 pairs
    SCALE = 12              # frequencies sum to 2^12
    M_TOTAL = 4096
    ANS_L = 65536           # the state lies in [2^16, 2^32); words of 16 bits

# the class of a neighbour's symbol: 0 code 0; 1 codes +-1; 2 codes -3..3 otherwise; 3 larger
# codes and raw values; 4 the fill value
cdef uint8_t CLASS16[16]
CLASS16[:] = [3, 4, 0, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3]


# the pair of two classes a, b (lo = min, hi = max): hi (hi + 1) / 2 + lo, at PAIR[5 a + b]
cdef uint8_t PAIR[25]
PAIR[:] = [0, 1, 3, 6, 10, 1, 2, 4, 7, 11, 3, 4, 5, 8, 12, 6, 7, 8, 9, 13, 10, 11, 12, 13, 14]


cdef inline int sym_class(uint16_t s) noexcept nogil:
    return CLASS16[s if s < 16 else 15]


cdef inline int token_of(uint32_t s, int* nbits, uint32_t* bits) noexcept nogil:
    cdef int e
    if s < 16:
        nbits[0] = 0
        bits[0] = 0
        return <int>s
    e = 31 - __builtin_clz(s)
    nbits[0] = e - 2
    bits[0] = s & ((1u << (e - 2)) - 1)
    return 16 + (e - 4) * 4 + <int>((s >> (e - 2)) & 3)


cdef struct Ctx:
    # a level group's contexts by the classes a, b of the two context neighbours, at
    # (a << 3) | b: encoding, the fine context; decoding, its table (-1: empty)
    int16_t of[40]


cdef void make_ctx(Ctx* cx, int group, const int16_t* table) noexcept nogil:
    cdef int a, b, fine
    for a in range(5):
        for b in range(5):
            fine = group * PAIRS + PAIR[5 * a + b]
            cx.of[(a << 3) | b] = table[fine] if table != NULL else fine


cdef inline int ctx_at(const Ctx* cx, const uint8_t* cls, Py_ssize_t ia, Py_ssize_t ib) noexcept nogil:
    """The context of an element whose context neighbours are ia and ib (the same index for a
    missing B); cls: the class of each element visited."""
    return cx.of[(cls[ia] << 3) | cls[ib]]


cdef struct Ans:
    # encoding: the symbols and contexts in visit order
    uint16_t* vsym
    uint8_t* vctx
    Py_ssize_t j
    # decoding: two states, the j-th symbol in visit order coded by state j % 2 (x0 the next
    # symbol's: swapped after each)
    uint32_t x0
    uint32_t x1
    const uint16_t* words
    Py_ssize_t nwords
    Py_ssize_t pos
    const int16_t* table        # fine context -> table (-1: the table is empty)
    const uint8_t* lut          # table * 4096 + slot -> token (4 KB a table: 60 of them fit L2)
    const uint32_t* info        # table * 64 + token -> freq | start << 16
    int err                     # 1 the stream ran out, 2 a context without a table


cdef inline void ans_record(Ans* a, int k, int fine) noexcept nogil:
    # (the (context, token) counts are a pass of their own, ans_histogram: counted here, the
    # increments' read-modify-write chains made this loop 1.5x slower)
    a.vsym[a.j] = <uint16_t>k
    a.vctx[a.j] = <uint8_t>fine
    a.j += 1


cdef inline bint refill(Ans* a) noexcept nogil:
    if a.x0 < ANS_L:
        if a.pos >= a.nwords:
            a.err = 1
            return False
        a.x0 = (a.x0 << 16) | a.words[a.pos]
        a.pos += 1
    return True


cdef inline int ans_token(Ans* a, int t) noexcept nogil:
    """The next token, decoded with table t (its element's context's) from state x0, which is
    refilled; -1 on a corrupt stream (a.err says why)."""
    cdef uint32_t entry, tok, slot
    if t < 0:
        a.err = 2
        return -1
    slot = a.x0 & (M_TOTAL - 1)
    tok = a.lut[(t << SCALE) + slot]
    entry = a.info[t * TOKENS + tok]
    a.x0 = (entry & 0xFFFF) * (a.x0 >> SCALE) + slot - (entry >> 16)
    if not refill(a):
        return -1
    return <int>tok


cdef inline int ans_extra(Ans* a, int tok) noexcept nogil:
    """The symbol of token tok >= 16: its extra bits taken from x0, which is refilled; -1 on a
    corrupt stream."""
    cdef uint32_t nbits = (tok - 16) // 4 + 2
    cdef int k = <int>(((4u | ((tok - 16) & 3)) << nbits) | (a.x0 & ((1u << nbits) - 1)))
    a.x0 >>= nbits
    if not refill(a):
        return -1
    return k


cdef inline void ans_swap(Ans* a) noexcept nogil:
    """The next symbol is the other state's."""
    cdef uint32_t x = a.x0
    a.x0 = a.x1
    a.x1 = x


cdef inline void take(Ans* to, const Ans* a) noexcept nogil:
    """Each loop works on a local copy of the coder, copied in and back field by field: the
    compiler then keeps the fields it uses in registers (no store to the chunk's arrays can
    alias a local; with a whole-struct copy it kept them in memory, and decoding measured 17%
    slower)."""
    to.vsym = a.vsym
    to.vctx = a.vctx
    to.j = a.j
    to.x0 = a.x0
    to.x1 = a.x1
    to.words = a.words
    to.nwords = a.nwords
    to.pos = a.pos
    to.table = a.table
    to.lut = a.lut
    to.info = a.info
    to.err = a.err


cdef inline int finish(Ans* a, Ans* loc, int rc) noexcept nogil:
    """Hands a loop's copy of the coder back (`a`: NULL without stage 3); returns rc."""
    if a != NULL:
        take(a, loc)
    return rc


# --- the traversals -------------------------------------------------------------------------
# One traversal per predictor, written once for both directions and compiled for each: the
# fused `mode` (its pointer is only ever NULL) picks the body at compile time, so each build
# of a loop holds only its own work (and the compiler only its own registers).
# With stage 3 (`a` not NULL), encoding records each element's symbol and context in visit
# order, and decoding takes each element's symbol from the stream just before reconstructing
# it; both keep each visited element's class in `cls` for its later neighbours' contexts.

cdef struct Encoding:
    char unused
cdef struct EncodingAns:       # encoding, recording the symbols and contexts for stage 3
    char unused
cdef struct Decoding:
    char unused
cdef struct DecodingAns:       # decoding, each symbol from stage 3's stream
    char unused

ctypedef fused mode:
    Encoding
    EncodingAns
    Decoding
    DecodingAns


cdef inline int visit(mode* m, real* x, Py_ssize_t i, double p, double* v, uint16_t* sym,
                      uint8_t* cls, const real* raw, Enc* e, Dec* dd, real fill, Ans* a,
                      int c) noexcept nogil:
    """One element both ways; `c`: its stage 3 context (Ctx: its neighbours are visited before
    it, so it is known before the element's own symbol is decoded or encoded)."""
    cdef int k
    if mode is DecodingAns:
        k = ans_token(a, c)
        if k < 0:
            return -1
        if <unsigned int>(k - 2) < 14:
            # (tokens 2 .. 15: codes -6 .. 6, no extra bits, the value p + q c: most elements)
            cls[i] = CLASS16[k]
            ans_swap(a)
            store_value(x, i, v, p + dd.qc[k])
            return 0
        if k >= 16:
            k = ans_extra(a, k)
            if k < 0:
                return -1
            cls[i] = 3
        else:
            cls[i] = CLASS16[k]
        ans_swap(a)
        return decode_one(x, i, p, v, k, raw, dd, fill)
    elif mode is Decoding:
        return decode_one(x, i, p, v, sym[i], raw, dd, fill)
    else:
        k = encode_one(x, i, p, v, sym, <real*>raw, e, fill)
        if mode is EncodingAns:
            cls[i] = sym_class(<uint16_t>k)
            ans_record(a, k, c)
        return 0


cdef int run_lorenzo(const Grid* g, real* x, double* v, uint16_t* sym, uint8_t* cls,
                     const real* raw, Enc* e, Dec* dd, real fill, mode* m, Ans* a) noexcept nogil:
    """Context neighbours (stage 3): one step back along the last real dimension and along the
    one before it (none where the index is 0 or there is no such dimension)."""
    cdef Terms terms = lorenzo_terms(g)
    cdef Py_ssize_t i = 0, nb, nc
    cdef Py_ssize_t k[4]
    cdef int zero, r1 = -1, r2 = -1, d, c = 0
    cdef double p
    cdef Ans loc
    cdef Ctx cx
    cdef bint coded = mode is EncodingAns or mode is DecodingAns
    if coded:
        take(&loc, a)
        make_ctx(&cx, 0, loc.table if mode is DecodingAns else NULL)
    for d in range(3, -1, -1):
        if g.n[d] > 1:
            if r1 < 0:
                r1 = d
            elif r2 < 0:
                r2 = d
    for k[0] in range(g.n[0]):
        for k[1] in range(g.n[1]):
            for k[2] in range(g.n[2]):
                for k[3] in range(g.n[3]):
                    zero = (<int>(k[3] == 0)) | (<int>(k[2] == 0) << 1) | (<int>(k[1] == 0) << 2) | (<int>(k[0] == 0) << 3)
                    p = lorenzo(v, i, &terms, zero)
                    if coded:
                        # (a missing neighbour: the other one; neither: class 0, both)
                        nb = i - g.st[r1] if r1 >= 0 and k[r1] > 0 else -1
                        nc = i - g.st[r2] if r2 >= 0 and k[r2] > 0 else -1
                        if nb < 0 and nc < 0:
                            c = cx.of[0]
                        else:
                            c = ctx_at(&cx, cls, nb if nb >= 0 else nc, nc if nc >= 0 else nb)
                    if visit(m, x, i, p, v, sym, cls, raw, e, dd, fill, &loc, c) < 0:
                        return finish(a, &loc, -1)
                    i += 1
    return finish(a, &loc, 0)


cdef inline int span(mode* m, real* x, double* v, uint16_t* sym, uint8_t* cls, const real* raw,
                     Enc* e, Dec* dd, real fill, Ans* a, const Ctx* cx, Py_ssize_t i,
                     Py_ssize_t count, Py_ssize_t es, Py_ssize_t o) noexcept nogil:
    """`count` elements from flat index i in steps of es, each interpolated along a dimension
    of stride o where the cubic's four neighbours i -+ o, i -+ 3 o all exist (most of them:
    the loop without the bounds tests of `along`)."""
    cdef Py_ssize_t j
    cdef double p
    cdef int c = 0
    cdef bint coded = mode is EncodingAns or mode is DecodingAns
    cdef Ans loc
    cdef int rc = 0
    if coded:
        take(&loc, a)
    for j in range(count):
        p = (9.0 * (v[i - o] + v[i + o]) - (v[i - 3 * o] + v[i + 3 * o])) * 0.0625
        if coded:
            c = ctx_at(cx, cls, i - o, i + o)
        if visit(m, x, i, p, v, sym, cls, raw, e, dd, fill, &loc, c) < 0:
            rc = -1
            break
        i += es
    return finish(a, &loc, rc)


cdef inline int one(mode* m, real* x, double* v, uint16_t* sym, uint8_t* cls, const real* raw,
                    Enc* e, Dec* dd, real fill, Ans* a, const Ctx* cx, Py_ssize_t i,
                    Py_ssize_t kd, Py_ssize_t nd, Py_ssize_t s, Py_ssize_t st) noexcept nogil:
    """One interpolated element, any place along its dimension (index kd of nd, step s,
    stride st)."""
    cdef double p = along(v, i, kd, nd, s, st)
    cdef int c = 0
    if mode is EncodingAns or mode is DecodingAns:
        c = ctx_at(cx, cls, i - s * st, i + s * st if kd + s < nd else i - s * st)
    return visit(m, x, i, p, v, sym, cls, raw, e, dd, fill, a, c)


cdef int run_interpolation(const Grid* g, real* x, double* v, uint16_t* sym, uint8_t* cls,
                           const real* raw, Enc* e, Dec* dd, real fill, mode* m, bint reverse,
                           Ans* a) noexcept nogil:
    """Predictors 2 and 3 (`reverse`: at each level the dimensions last to first; padded
    dimensions, of extent 1, then come last and have no elements to visit). Context neighbours
    (stage 3): the elements at i_d - s and i_d + s (the latter where it exists); level group:
    0, 1, 2 at s = 1, 2, 4, else 3."""
    cdef Py_ssize_t s = top_step(g)
    cdef Py_ssize_t base, k0, k1, k2, k3, kd, nd, sd, st, n3 = g.n[3], count
    cdef Py_ssize_t first[4]
    cdef Py_ssize_t step[4]
    cdef int d, f, kk, c = 0
    cdef int rank[4]        # a dimension's place in the order of a level
    cdef Ans loc
    cdef Ctx cx
    cdef bint coded = mode is EncodingAns or mode is DecodingAns
    cdef const int16_t* table = NULL
    if coded:
        take(&loc, a)
        if mode is DecodingAns:
            table = loc.table
    for f in range(4):
        rank[f] = 3 - f if reverse else f
    if g.n[0] * g.n[1] * g.n[2] * g.n[3] == 0:
        return 0
    # the element (0, 0, 0, 0), predicted 0: no neighbours, level group 3
    if coded:
        make_ctx(&cx, 3, table)
        c = cx.of[0]
    if visit(m, x, 0, 0.0, v, sym, cls, raw, e, dd, fill, &loc, c) < 0:
        return finish(a, &loc, -1)
    while s >= 1:
        if coded:
            make_ctx(&cx, 0 if s == 1 else (1 if s == 2 else (2 if s == 4 else 3)), table)
        for kk in range(4):
            d = 3 - kk if reverse else kk
            for f in range(4):
                if rank[f] < kk:
                    first[f] = 0; step[f] = s
                elif f == d:
                    first[f] = s; step[f] = 2 * s
                else:
                    first[f] = 0; step[f] = 2 * s
            nd = g.n[d]
            st = g.st[d]
            sd = s * st
            # (the innermost loop runs along dimension 3; where the cubic's four neighbours
            # exist, `span` visits the elements without bounds tests)
            k0 = first[0]
            while k0 < g.n[0]:
                k1 = first[1]
                while k1 < g.n[1]:
                    k2 = first[2]
                    while k2 < g.n[2]:
                        base = k0 * g.st[0] + k1 * g.st[1] + k2 * g.st[2]
                        k3 = first[3]
                        if d == 3:
                            # along the row: k3 = s, 3s, 5s, ...; cubic from 3s while k3 + 3s < n3
                            while k3 < n3 and k3 < 3 * s:
                                if one(m, x, v, sym, cls, raw, e, dd, fill, &loc, &cx, base + k3,
                                       k3, n3, s, 1) < 0:
                                    return finish(a, &loc, -1)
                                k3 += 2 * s
                            if k3 + 3 * s < n3:
                                count = (n3 - 3 * s - 1 - k3) // (2 * s) + 1
                                if span(m, x, v, sym, cls, raw, e, dd, fill, &loc, &cx, base + k3,
                                        count, 2 * s, s) < 0:
                                    return finish(a, &loc, -1)
                                k3 += count * 2 * s
                            while k3 < n3:
                                if one(m, x, v, sym, cls, raw, e, dd, fill, &loc, &cx, base + k3,
                                       k3, n3, s, 1) < 0:
                                    return finish(a, &loc, -1)
                                k3 += 2 * s
                        else:
                            kd = k0 if d == 0 else (k1 if d == 1 else k2)
                            if kd >= 3 * s and kd + 3 * s < nd:
                                count = (n3 - k3 + step[3] - 1) // step[3]
                                if span(m, x, v, sym, cls, raw, e, dd, fill, &loc, &cx, base + k3,
                                        count, step[3], sd) < 0:
                                    return finish(a, &loc, -1)
                            else:
                                while k3 < n3:
                                    if one(m, x, v, sym, cls, raw, e, dd, fill, &loc, &cx,
                                           base + k3, kd, nd, s, st) < 0:
                                        return finish(a, &loc, -1)
                                    k3 += step[3]
                        k2 += step[2]
                    k1 += step[1]
                k0 += step[0]
        s //= 2
    return finish(a, &loc, 0)


cdef int run_slices(const Grid* g, real* x, double* v, uint16_t* sym, uint8_t* cls,
                    const real* raw, Enc* e, Dec* dd, real fill, mode* m, Ans* a) noexcept nogil:
    """Predictor 4: each slice along the first real dimension (extent > 1) predicted on its own
    by predictor 2, slice after slice (the raw values in that order)."""
    cdef Grid sub = g[0]
    cdef int r = 0
    cdef Py_ssize_t i, off
    while r < 4 and g.n[r] == 1:
        r += 1
    if r == 4:              # one element
        return run_interpolation(g, x, v, sym, cls, raw, e, dd, fill, m, False, a)
    sub.n[r] = 1
    for i in range(g.n[r]):
        off = i * g.st[r]
        if run_interpolation(&sub, x + off, v + off, sym + off if sym != NULL else NULL,
                             cls + off if cls != NULL else NULL, raw, e, dd, fill, m, False,
                             a) < 0:
            return -1
    return 0


cdef int run(int predictor, const Grid* g, real* x, double* v, uint16_t* sym, uint8_t* cls,
             const real* raw, Enc* e, Dec* dd, real fill, mode* m, Ans* a) noexcept nogil:
    if predictor == LORENZO:
        return run_lorenzo(g, x, v, sym, cls, raw, e, dd, fill, m, a)
    if predictor == SLICES:
        return run_slices(g, x, v, sym, cls, raw, e, dd, fill, m, a)
    return run_interpolation(g, x, v, sym, cls, raw, e, dd, fill, m, predictor == REVERSED, a)


# --- entry points ---------------------------------------------------------------------------

def encode(real[::1] x, tuple shape, double abs_error, int predictor, real[::1] fill,
           bint record=False):
    """(symbols uint16[n], raw values[n_raw]) of the flat C-order chunk `x` of 4-d `shape`;
    `fill`: the fill value (one element, compared bit for bit), or empty for none. With
    `record`, also (symbols uint16[n], fine contexts uint8[n]) in visit order and the count
    of each (fine context, token) int64[60, 64], for stage 3."""
    cdef Grid g = grid_of(shape)
    cdef Py_ssize_t n = x.shape[0]
    cdef Enc e
    cdef Ans a
    cdef bint has_fill = fill.shape[0] > 0
    cdef real f = fill[0] if has_fill else 0
    syms = np.empty(n, dtype=np.uint16)
    vals = np.empty(n, dtype=np.float64)
    raws = np.empty(n, dtype=np.float32 if real is float else np.float64)
    vsyms = np.empty(n if record else 0, dtype=np.uint16)
    vctxs = np.empty(n if record else 0, dtype=np.uint8)
    classes = np.empty(n if record else 0, dtype=np.uint8)
    cdef uint16_t[::1] sym = syms
    cdef double[::1] v = vals
    cdef real[::1] raw = raws
    cdef uint16_t[::1] vs = vsyms
    cdef uint8_t[::1] vc = vctxs
    cdef uint8_t[::1] cl = classes
    e.q = 2.0 * abs_error
    e.inv_q = 1.0 / e.q
    e.limit = abs_error * MARGIN
    e.has_fill = has_fill
    e.nraw = 0
    if n == 0:
        return (syms, raws[:0], vsyms, vctxs, ans_histogram(vsyms, vctxs)) if record else (
            syms, raws[:0])
    if predictor not in (LORENZO, INTERPOLATION, REVERSED, SLICES):
        raise ValueError(f"zdt.predict: unknown predictor {predictor}")
    if record:
        a.vsym = &vs[0]
        a.vctx = &vc[0]
        a.j = 0
    with nogil:
        if record:
            run(predictor, &g, &x[0], &v[0], &sym[0], &cl[0], &raw[0], &e, NULL, f,
                <EncodingAns*>NULL, &a)
        else:
            run(predictor, &g, &x[0], &v[0], &sym[0], NULL, &raw[0], &e, NULL, f,
                <Encoding*>NULL, NULL)
    if record:
        return syms, raws[:e.nraw].copy(), vsyms, vctxs, ans_histogram(vsyms, vctxs)
    return syms, raws[:e.nraw].copy()


def decode(uint16_t[::1] sym, const real[::1] raw, real[::1] out, tuple shape, double abs_error,
           int predictor, const real[::1] fill, object stream=None):
    """Reconstructs `out` (flat, C order, of 4-d `shape`) from the symbols and raw values and
    returns the number of fill-value symbols; ValueError if the symbols ask for more raw values
    than there are. With `stream` (stage 3: (words uint16, the two states, table of each fine
    context int16[60], lut uint8[T*4096], info uint32[T*64])), `sym` is None: each symbol is
    decoded from the words where its element is reconstructed; ValueError for a stream that
    runs out, names an empty table, or does not end where it began."""
    cdef Grid g = grid_of(shape)
    cdef Py_ssize_t n = out.shape[0]
    cdef Dec dd
    cdef Ans a
    cdef bint coded = stream is not None
    cdef real f = fill[0] if fill.shape[0] else 0
    cdef int rc = 0
    cdef const uint16_t[::1] words
    cdef const int16_t[::1] table
    cdef const uint8_t[::1] lut
    cdef const uint32_t[::1] info
    cdef uint8_t[::1] cl
    cdef uint16_t no_word = 0
    if coded == (sym is not None):
        raise ValueError("zdt.predict: symbols or a stage 3 stream, one of them")
    if not coded and sym.shape[0] != n:
        raise ValueError(f"zdt.predict: {sym.shape[0]} symbols for {n} elements")
    if n == 0:
        return 0
    if coded:
        words, states, table, lut, info = stream
        if table.shape[0] != FINE:
            raise ValueError("zdt.predict: a context table of the wrong length")
        a.words = &words[0] if words.shape[0] else &no_word
        a.nwords = words.shape[0]
        a.pos = 0
        a.x0 = <uint32_t>states[0]
        a.x1 = <uint32_t>states[1]
        a.table = &table[0]
        a.lut = &lut[0]
        a.info = &info[0]
        a.err = 0
        if a.x0 < ANS_L or a.x1 < ANS_L:
            raise ValueError(f"zdt.predict: an ANS state of {states} lies below 2^16")
        cl = np.empty(n, dtype=np.uint8)
    cdef double* vp
    cdef double[::1] vv
    cdef Py_ssize_t k
    if real is double:
        vp = <double*>&out[0]
    else:
        vv = np.empty(n, dtype=np.float64)
        vp = &vv[0]
    init_dec(&dd, abs_error, raw.shape[0])
    # (a raw array of length 0 still needs a valid pointer)
    cdef real dummy = 0
    cdef const real* rp = &raw[0] if raw.shape[0] else &dummy
    if predictor not in (LORENZO, INTERPOLATION, REVERSED, SLICES):
        raise ValueError(f"zdt.predict: unknown predictor {predictor}")
    with nogil:
        if coded:
            rc = run(predictor, &g, &out[0], vp, NULL, &cl[0], rp, NULL, &dd, f,
                     <DecodingAns*>NULL, &a)
        else:
            rc = run(predictor, &g, &out[0], vp, &sym[0], NULL, rp, NULL, &dd, f,
                     <Decoding*>NULL, NULL)
        for k in range(dd.npatch):
            dd.patches[k].where[0] = dd.patches[k].value
        free(dd.patches)
    if dd.oom:
        raise MemoryError("zdt.predict: no memory for the decoder's list of fill values")
    if coded and a.err:
        raise ValueError("zdt.predict: the ANS stream " + (
            f"ends before the chunk's {n} symbols" if a.err == 1 else
            "uses a context whose table is empty"))
    if rc < 0 or dd.nraw != dd.nraw_max:
        raise ValueError(f"zdt.predict: the symbols use {'more than ' if rc < 0 else ''}"
                         f"{dd.nraw} raw values, the chunk holds {dd.nraw_max}")
    if coded and (a.pos != a.nwords or a.x0 != ANS_L or a.x1 != ANS_L):
        raise ValueError(f"zdt.predict: the ANS stream does not end where it began ("
                         f"{a.nwords - a.pos} words left, states {a.x0} and {a.x1}, not "
                         f"{ANS_L})")
    return dd.nfill


def ans_histogram(const uint16_t[::1] vsym, const uint8_t[::1] vctx):
    """The count int64[60, 64] of each (fine context, token) of the symbols in visit order."""
    cdef Py_ssize_t n = vsym.shape[0], j, k
    cdef int nbits
    cdef uint32_t bits, s
    # four counts, element j in count j % 4: a run of one (context, token) then increments
    # four counters in turn, not one counter four times over (each increment waits for the last)
    part = np.zeros((4, FINE * TOKENS), dtype=np.int64)
    cdef int64_t[:, ::1] h = part
    with nogil:
        for j in range(n):
            s = vsym[j]
            h[j & 3, vctx[j] * TOKENS + (<int>s if s < 16 else token_of(s, &nbits, &bits))] += 1
    return part.sum(axis=0).reshape(FINE, TOKENS)


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


cdef int model_counts(const int64_t[:, ::1] hist, const int64_t[:, ::1] table_of, int m,
                      int64_t (*counts)[TOKENS]) except -1:
    """The counts of model m's tables (each the sum of its fine contexts'); its table count."""
    cdef int f, tok, n_tables = 0
    for f in range(FINE):
        if not 0 <= table_of[m, f] < FINE:
            raise ValueError("zdt.predict: a context table out of range")
        n_tables = max(n_tables, <int>table_of[m, f] + 1)
    for f in range(n_tables):
        for tok in range(TOKENS):
            counts[f][tok] = 0
    for f in range(FINE):
        for tok in range(TOKENS):
            counts[table_of[m, f]][tok] += hist[f, tok]
    return n_tables


def ans_model(const int64_t[:, ::1] hist, const int64_t[:, ::1] table_of):
    """Stage 3's context model for the counts hist[60, 64] of each (fine context, token):
    (model, its frequency tables uint16[T, 64], each model's estimated bits float64[M]). A
    model's estimate: its tables' entropy over the counts, its tables' bytes (1.5 a
    frequency) and the tokens' extra bits (the same for every model); the model with the least
    is taken (the first of equals). table_of[m, f]: the table of fine context f in model m."""
    cdef int m, t, tok, c, n_models = table_of.shape[0], best = 0, n_tables
    cdef int64_t n
    cdef double bits, table_bytes, s, extra = 0.0
    cdef int64_t counts[FINE][TOKENS]
    costs = np.zeros(n_models, dtype=np.float64)
    cdef double[::1] cost = costs
    if hist.shape[0] != FINE or hist.shape[1] != TOKENS or table_of.shape[1] != FINE:
        raise ValueError("zdt.predict: counts or context tables of the wrong shape")
    for t in range(FINE):
        for tok in range(16, TOKENS):
            extra += <double>hist[t, tok] * ((tok - 16) // 4 + 2)
    for m in range(n_models):
        n_tables = model_counts(hist, table_of, m, counts)
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
    n_tables = model_counts(hist, table_of, best, counts)
    freq = np.zeros((n_tables, TOKENS), dtype=np.uint16)
    cdef uint16_t[:, ::1] fr = freq
    for t in range(n_tables):
        normalise(&counts[t][0], &fr[t, 0])
    return best, freq, costs


cdef struct Sym:          # a token of a table, for the encoder
    uint64_t rcp            # ceil(2^44 / freq)
    uint32_t freq
    uint32_t start


cdef inline void put(uint32_t* x, int k, const Sym* tab, uint16_t* w, Py_ssize_t* top) noexcept nogil:
    """Codes symbol k with table `tab` onto state x (its extra bits first), words to the front."""
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


def ans_encode(const uint16_t[::1] vsym, const uint8_t[::1] vctx, const int16_t[::1] table,
               const uint16_t[:, ::1] freq):
    """(words uint16[W] in decoding order, (state 0, state 1)) of the symbols coded backwards,
    the j-th by state j % 2, each token with its table's frequencies (a token's start: the sum
    of the frequencies before it) then its extra bits; `table`: each fine context's table
    (every context the symbols use must have one, each token they use a frequency)."""
    cdef Py_ssize_t n = vsym.shape[0], j, top
    cdef Py_ssize_t cap = 2 * n + 2
    cdef Py_ssize_t n_tables = freq.shape[0]
    cdef int t, tok
    cdef uint32_t start
    if table.shape[0] != FINE or freq.shape[1] != TOKENS:
        raise ValueError("zdt.predict: a context or frequency table of the wrong length")
    out = np.empty(cap, dtype=np.uint16)
    syms = np.zeros(n_tables * TOKENS * sizeof(Sym), dtype=np.uint8)
    cdef uint16_t[::1] w = out
    cdef uint8_t[::1] sb = syms
    cdef Sym* tabs = <Sym*>&sb[0]
    cdef const Sym* by_ctx[FINE]
    cdef uint32_t x0 = ANS_L, x1 = ANS_L
    for t in range(n_tables):
        start = 0
        for tok in range(TOKENS):
            if freq[t, tok]:
                tabs[t * TOKENS + tok].rcp = ((<uint64_t>1 << 44) + freq[t, tok] - 1) // freq[t, tok]
                tabs[t * TOKENS + tok].freq = freq[t, tok]
                tabs[t * TOKENS + tok].start = start
                start += freq[t, tok]
    for t in range(FINE):
        by_ctx[t] = tabs + TOKENS * (table[t] if 0 <= table[t] < n_tables else 0)
    top = cap
    with nogil:
        # (two states, the j-th symbol on state j % 2: pairs from the end, each in a register)
        j = n - 1
        if j % 2 == 1:
            put(&x1, vsym[j], by_ctx[vctx[j]], &w[0], &top)
            j -= 1
        while j >= 1:
            put(&x0, vsym[j], by_ctx[vctx[j]], &w[0], &top)
            put(&x1, vsym[j - 1], by_ctx[vctx[j - 1]], &w[0], &top)
            j -= 2
        if j == 0:
            put(&x0, vsym[0], by_ctx[vctx[0]], &w[0], &top)
    return out[top:].copy(), (int(x0), int(x1))


def ans_tables(const uint8_t[::1] data, Py_ssize_t pos, int n_tables):
    """Stage 3's `n_tables` frequency tables from data[pos:]: (lut uint8[T*4096] of each
    slot's token, info uint32[T*64] of each token's freq | start << 16, empty bool[T], the
    position after them); ValueError naming the table and what is wrong with it."""
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
            raise ValueError(f"zdt.predict: the chunk ends inside ANS table {t}")
        k = data[pos]
        pos += 1
        if k > TOKENS:
            raise ValueError(f"zdt.predict: ANS table {t} lists {k} tokens, more than {TOKENS}")
        if pos + k > end:
            raise ValueError(f"zdt.predict: the chunk ends inside ANS table {t}")
        prev = -1
        for i in range(k):
            tokens[i] = data[pos + i]
            if tokens[i] <= prev or tokens[i] >= TOKENS:
                raise ValueError(f"zdt.predict: ANS table {t}'s tokens are not increasing below "
                                 f"{TOKENS}")
            prev = tokens[i]
        pos += k
        total = 0
        for i in range(k - 1):
            # LEB128: 7 bits a byte, low group first; at most 2 bytes
            v = 0
            shift = 0
            while True:
                if pos >= end or shift >= 14:
                    raise ValueError(f"zdt.predict: ANS table {t} has a truncated or overlong "
                                     f"frequency")
                b = data[pos]
                pos += 1
                v |= <uint32_t>(b & 0x7F) << shift
                shift += 7
                if not b & 0x80:
                    break
            if not 1 <= v < M_TOTAL:
                raise ValueError(f"zdt.predict: ANS table {t} gives token {tokens[i]} frequency {v}")
            f[i] = v
            total += v
        if k == 0:
            empty[t] = 1
            continue
        if total >= M_TOTAL:
            raise ValueError(f"zdt.predict: ANS table {t}'s frequencies sum past {M_TOTAL}")
        f[k - 1] = M_TOTAL - total
        st = 0
        for i in range(k):
            tok = tokens[i]
            info[t * TOKENS + tok] = f[i] | (st << 16)
            for a in range(st, st + f[i]):
                lut[t * M_TOTAL + a] = <uint8_t>tok
            st += f[i]
    return lut_a, info_a, empty_a, pos


def ans_write_tables(const uint16_t[:, ::1] freq):
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
