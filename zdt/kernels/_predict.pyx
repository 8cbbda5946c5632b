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

from libc.math cimport fabs, isfinite
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
    double E
    double q
    double inv_q
    double limit            # E * MARGIN
    bint has_fill
    Py_ssize_t nraw


cdef inline void encode_one(real* x, Py_ssize_t i, double p, double* v, uint16_t* sym, real* raw,
                            Enc* e, real fill) noexcept nogil:
    cdef real xi = x[i]
    cdef double xd = <double>xi, t, r
    cdef int c
    cdef real rr
    if e.has_fill and same_bits(xi, fill):
        sym[i] = 1
        v[i] = p if isfinite(p) else 0.0
        return
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
            sym[i] = <uint16_t>((2 * c if c >= 0 else -2 * c - 1) + 2)
            v[i] = <double>rr
            return
    sym[i] = 0
    raw[e.nraw] = xi
    e.nraw += 1
    if isfinite(xd):
        v[i] = xd
    else:
        v[i] = p if isfinite(p) else 0.0


cdef struct Patch:
    double* where
    double value


cdef struct Dec:
    double q
    Py_ssize_t nraw         # raw values used so far
    Py_ssize_t nraw_max
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


cdef inline int decode_one(real* out, Py_ssize_t i, double p, double* v, const uint16_t* sym,
                           const real* raw, Dec* e, real fill) noexcept nogil:
    """0, or -1 when the symbols ask for more raw values than the chunk holds."""
    cdef uint16_t k = sym[i]
    cdef int m, c
    cdef double r
    cdef real rr
    if k >= 2:
        m = k - 2
        c = (m >> 1) if (m & 1) == 0 else -((m + 1) >> 1)
        r = p + e.q * <double>c
        rr = <real>r
        out[i] = rr
        v[i] = <double>rr
        return 0
    if k == 1:
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


cdef inline int pair_of(int a, int b) noexcept nogil:
    return PAIR[5 * a + b]


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


cdef inline int fine_context(const uint16_t* sym, Py_ssize_t nb, Py_ssize_t nc, int group) noexcept nogil:
    """The context of an element: its level group and its neighbours' classes (a missing one:
    the other's; none: class 0)."""
    cdef int a, b
    if nb < 0:
        a = sym_class(sym[nc]) if nc >= 0 else 0
        b = a
    else:
        a = sym_class(sym[nb])
        b = sym_class(sym[nc]) if nc >= 0 else a
    return group * PAIRS + pair_of(a, b)


cdef inline int along_context(const uint16_t* sym, Py_ssize_t i, Py_ssize_t sd, bint ahead,
                              int group_base) noexcept nogil:
    """fine_context for an interpolated element: i - sd always visited, i + sd if `ahead`."""
    cdef int a = sym_class(sym[i - sd])
    cdef int b = sym_class(sym[i + sd]) if ahead else a
    return group_base + pair_of(a, b)


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


cdef inline void ans_record(Ans* a, const uint16_t* sym, Py_ssize_t i, int fine) noexcept nogil:
    a.vsym[a.j] = sym[i]
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


cdef inline int ans_next(Ans* a, uint16_t* sym, Py_ssize_t i, int fine) noexcept nogil:
    """Decodes element i's symbol, of fine context `fine`, into sym[i]; -1 on a corrupt stream
    (a.err says why)."""
    cdef int t = a.table[fine]
    cdef uint32_t entry, tok, nbits, x, slot
    if t < 0:
        a.err = 2
        return -1
    slot = a.x0 & (M_TOTAL - 1)
    tok = a.lut[(t << SCALE) + slot]
    entry = a.info[t * TOKENS + tok]
    a.x0 = (entry & 0xFFFF) * (a.x0 >> SCALE) + slot - (entry >> 16)
    if not refill(a):
        return -1
    if tok < 16:
        sym[i] = <uint16_t>tok
    else:
        nbits = (tok - 16) // 4 + 2
        sym[i] = <uint16_t>(((4u | ((tok - 16) & 3)) << nbits) | (a.x0 & ((1u << nbits) - 1)))
        a.x0 >>= nbits
        if not refill(a):
            return -1
    x = a.x0
    a.x0 = a.x1
    a.x1 = x
    return 0


cdef inline int finish(Ans* a, Ans* loc, int rc) noexcept nogil:
    """A traversal works on a local copy of the coder, whose fields the compiler may keep in
    registers (no store to the chunk's arrays can alias a local); this hands it back."""
    if a != NULL:
        a[0] = loc[0]
    return rc


# --- the traversals -------------------------------------------------------------------------
# One traversal per predictor, written once for both directions and compiled for each: the
# fused `mode` (its pointer is only ever NULL) picks the body at compile time, so each build
# of a loop holds only its own work (and the compiler only its own registers).
# With stage 3 (`a` not NULL), encoding records each element's symbol and context in visit
# order, and decoding takes each element's symbol from the stream just before reconstructing it.

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
                      const real* raw, Enc* e, Dec* dd, real fill, Ans* a, int fine) noexcept nogil:
    """One element both ways; `fine`: its stage 3 context (its neighbours' symbols are known
    before the element's own is decoded or encoded)."""
    if mode is DecodingAns:
        if ans_next(a, sym, i, fine) < 0:
            return -1
    if mode is Decoding or mode is DecodingAns:
        return decode_one(x, i, p, v, sym, raw, dd, fill)
    else:
        encode_one(x, i, p, v, sym, <real*>raw, e, fill)
        if mode is EncodingAns:
            ans_record(a, sym, i, fine)
        return 0


cdef int run_lorenzo(const Grid* g, real* x, double* v, uint16_t* sym, const real* raw, Enc* e,
                     Dec* dd, real fill, mode* m, Ans* a) noexcept nogil:
    """Context neighbours (stage 3): one step back along the last real dimension and along the
    one before it (none where the index is 0 or there is no such dimension)."""
    cdef Terms terms = lorenzo_terms(g)
    cdef Py_ssize_t i = 0, nb, nc
    cdef Py_ssize_t k[4]
    cdef int zero, r1 = -1, r2 = -1, d, fine
    cdef double p
    cdef Ans loc
    cdef bint coded = mode is EncodingAns or mode is DecodingAns
    if coded:
        loc = a[0]
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
                    fine = 0
                    if coded:
                        nb = i - g.st[r1] if r1 >= 0 and k[r1] > 0 else -1
                        nc = i - g.st[r2] if r2 >= 0 and k[r2] > 0 else -1
                        fine = fine_context(sym, nb, nc, 0)
                    if visit(m, x, i, p, v, sym, raw, e, dd, fill, &loc, fine) < 0:
                        return finish(a, &loc, -1)
                    i += 1
    return finish(a, &loc, 0)


cdef int run_interpolation(const Grid* g, real* x, double* v, uint16_t* sym, const real* raw, Enc* e,
                           Dec* dd, real fill, mode* m, bint reverse, Ans* a) noexcept nogil:
    """Predictors 2 and 3 (`reverse`: at each level the dimensions last to first; padded
    dimensions, of extent 1, then come last and have no elements to visit). Context neighbours
    (stage 3): the elements at i_d - s and i_d + s (the latter where it exists); level group:
    0, 1, 2 at s = 1, 2, 4, else 3."""
    cdef Py_ssize_t s = top_step(g)
    cdef Py_ssize_t i, base, k0, k1, k2, k3, kd, nd, sd
    cdef Py_ssize_t first[4]
    cdef Py_ssize_t step[4]
    cdef int d, f, kk, group, fine
    cdef int rank[4]        # a dimension's place in the order of a level
    cdef double p
    cdef Ans loc
    cdef bint coded = mode is EncodingAns or mode is DecodingAns
    if coded:
        loc = a[0]
    for f in range(4):
        rank[f] = 3 - f if reverse else f
    if g.n[0] * g.n[1] * g.n[2] * g.n[3] == 0:
        return 0
    # the element (0, 0, 0, 0), predicted 0
    if visit(m, x, 0, 0.0, v, sym, raw, e, dd, fill, &loc, fine_context(sym, -1, -1, 3)) < 0:
        return finish(a, &loc, -1)
    while s >= 1:
        group = PAIRS * (0 if s == 1 else (1 if s == 2 else (2 if s == 4 else 3)))
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
            sd = s * g.st[d]
            # (the innermost loop runs along dimension 3 with everything else hoisted; the
            # index along d is k3 when d is 3, else fixed for the loop)
            k0 = first[0]
            while k0 < g.n[0]:
                k1 = first[1]
                while k1 < g.n[1]:
                    k2 = first[2]
                    while k2 < g.n[2]:
                        base = k0 * g.st[0] + k1 * g.st[1] + k2 * g.st[2]
                        kd = k0 if d == 0 else (k1 if d == 1 else k2)
                        k3 = first[3]
                        while k3 < g.n[3]:
                            if d == 3:
                                kd = k3
                            i = base + k3
                            p = along(v, i, kd, nd, s, g.st[d])
                            fine = along_context(sym, i, sd, kd + s < nd, group) if coded else 0
                            if visit(m, x, i, p, v, sym, raw, e, dd, fill, &loc, fine) < 0:
                                return finish(a, &loc, -1)
                            k3 += step[3]
                        k2 += step[2]
                    k1 += step[1]
                k0 += step[0]
        s //= 2
    return finish(a, &loc, 0)


cdef int run_slices(const Grid* g, real* x, double* v, uint16_t* sym, const real* raw, Enc* e,
                    Dec* dd, real fill, mode* m, Ans* a) noexcept nogil:
    """Predictor 4: each slice along the first real dimension (extent > 1) predicted on its own
    by predictor 2, slice after slice (the raw values in that order)."""
    cdef Grid sub = g[0]
    cdef int r = 0
    cdef Py_ssize_t i, off
    while r < 4 and g.n[r] == 1:
        r += 1
    if r == 4:              # one element
        return run_interpolation(g, x, v, sym, raw, e, dd, fill, m, False, a)
    sub.n[r] = 1
    for i in range(g.n[r]):
        off = i * g.st[r]
        if run_interpolation(&sub, x + off, v + off, sym + off, raw, e, dd, fill, m, False, a) < 0:
            return -1
    return 0


cdef int run(int predictor, const Grid* g, real* x, double* v, uint16_t* sym, const real* raw,
             Enc* e, Dec* dd, real fill, mode* m, Ans* a) noexcept nogil:
    if predictor == LORENZO:
        return run_lorenzo(g, x, v, sym, raw, e, dd, fill, m, a)
    if predictor == SLICES:
        return run_slices(g, x, v, sym, raw, e, dd, fill, m, a)
    return run_interpolation(g, x, v, sym, raw, e, dd, fill, m, predictor == REVERSED, a)


# --- entry points ---------------------------------------------------------------------------

def encode(real[::1] x, tuple shape, double abs_error, int predictor, real[::1] fill,
           bint record=False):
    """(symbols uint16[n], raw values[n_raw]) of the flat C-order chunk `x` of 4-d `shape`;
    `fill`: the fill value (one element, compared bit for bit), or empty for none. With
    `record`, also (symbols uint16[n], fine contexts uint8[n]) in visit order, for stage 3."""
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
    cdef uint16_t[::1] sym = syms
    cdef double[::1] v = vals
    cdef real[::1] raw = raws
    cdef uint16_t[::1] vs = vsyms
    cdef uint8_t[::1] vc = vctxs
    e.E = abs_error
    e.q = 2.0 * abs_error
    e.inv_q = 1.0 / e.q
    e.limit = abs_error * MARGIN
    e.has_fill = has_fill
    e.nraw = 0
    if n == 0:
        return (syms, raws[:0], vsyms, vctxs) if record else (syms, raws[:0])
    if predictor not in (LORENZO, INTERPOLATION, REVERSED, SLICES):
        raise ValueError(f"zdt.predict: unknown predictor {predictor}")
    if record:
        a.vsym = &vs[0]
        a.vctx = &vc[0]
        a.j = 0
    with nogil:
        if record:
            run(predictor, &g, &x[0], &v[0], &sym[0], &raw[0], &e, NULL, f, <EncodingAns*>NULL, &a)
        else:
            run(predictor, &g, &x[0], &v[0], &sym[0], &raw[0], &e, NULL, f, <Encoding*>NULL, NULL)
    if record:
        return syms, raws[:e.nraw].copy(), vsyms, vctxs
    return syms, raws[:e.nraw].copy()


def decode(uint16_t[::1] sym, const real[::1] raw, real[::1] out, tuple shape, double abs_error,
           int predictor, const real[::1] fill, object stream=None):
    """Reconstructs `out` (flat, C order, of 4-d `shape`) from the symbols and raw values;
    ValueError if the symbols ask for more raw values than there are. With `stream` (stage 3:
    (words uint16, the two states, table of each fine context int16[60], lut uint8[T*4096],
    info uint32[T*64])),
    `sym` is written: each symbol decoded from the
    words where its element is reconstructed; ValueError for a stream that runs out, names
    an empty table, or does not end where it began."""
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
    cdef uint16_t no_word = 0
    if sym.shape[0] != n:
        raise ValueError(f"zdt.predict: {sym.shape[0]} symbols for {n} elements")
    if n == 0:
        return
    if coded:
        words, states, table, lut, info = stream
        if table.shape[0] != FINE:
            raise ValueError("zdt.predict: a context table of the wrong length")
        a.words = &words[0] if words.shape[0] else &no_word
        a.nwords = words.shape[0]
        a.pos = 0
        a.j = 0
        a.x0 = <uint32_t>states[0]
        a.x1 = <uint32_t>states[1]
        a.table = &table[0]
        a.lut = &lut[0]
        a.info = &info[0]
        a.err = 0
        if a.x0 < ANS_L or a.x1 < ANS_L:
            raise ValueError(f"zdt.predict: an ANS state of {states} lies below 2^16")
    cdef double* vp
    cdef double[::1] vv
    cdef Py_ssize_t k
    if real is double:
        vp = <double*>&out[0]
    else:
        vv = np.empty(n, dtype=np.float64)
        vp = &vv[0]
    dd.q = 2.0 * abs_error
    dd.nraw = 0
    dd.nraw_max = raw.shape[0]
    dd.patches = NULL
    dd.npatch = 0
    dd.cap = 0
    dd.oom = False
    # (a raw array of length 0 still needs a valid pointer)
    cdef real dummy = 0
    cdef const real* rp = &raw[0] if raw.shape[0] else &dummy
    if predictor not in (LORENZO, INTERPOLATION, REVERSED, SLICES):
        raise ValueError(f"zdt.predict: unknown predictor {predictor}")
    with nogil:
        if coded:
            rc = run(predictor, &g, &out[0], vp, &sym[0], rp, NULL, &dd, f, <DecodingAns*>NULL, &a)
        else:
            rc = run(predictor, &g, &out[0], vp, &sym[0], rp, NULL, &dd, f, <Decoding*>NULL, NULL)
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


def ans_histogram(const uint16_t[::1] vsym, const uint8_t[::1] vctx):
    """Counts int64[60, 64] of each (fine context, token) of the symbols in visit order."""
    hist = np.zeros((FINE, TOKENS), dtype=np.int64)
    cdef int64_t[:, ::1] h = hist
    cdef Py_ssize_t j, n = vsym.shape[0]
    cdef int nbits
    cdef uint32_t bits
    with nogil:
        for j in range(n):
            h[vctx[j], token_of(vsym[j], &nbits, &bits)] += 1
    return hist


def ans_encode(const uint16_t[::1] vsym, const uint8_t[::1] vctx, const int16_t[::1] table,
               const uint16_t[:, ::1] freq, const uint16_t[:, ::1] start):
    """(words uint16[W] in decoding order, (state 0, state 1)) of the symbols coded backwards,
    the j-th by state j % 2, each token with its table's frequencies then its extra bits;
    `table`: each fine context's table (every context the symbols use must have one, each token
    they use a frequency)."""
    cdef Py_ssize_t n = vsym.shape[0], j, top
    cdef Py_ssize_t cap = 2 * n + 2
    cdef Py_ssize_t n_tables = freq.shape[0]
    out = np.empty(cap, dtype=np.uint16)
    recip = np.zeros((n_tables, TOKENS), dtype=np.uint64)
    cdef uint16_t[::1] w = out
    cdef uint64_t[:, ::1] rcp = recip
    cdef uint32_t state[2]
    cdef uint32_t x, bits, fq, q
    cdef int nbits, tok, t
    cdef uint64_t tt
    # floor(x / f) = (x * ceil(2^44 / f)) >> 44, exactly for x < 2^20 f and f <= 2^12 (the
    # rounding error x * (ceil - 2^44 / f) / 2^44 stays below 1 / f), and it fits 64 bits
    for t in range(n_tables):
        for tok in range(TOKENS):
            if freq[t, tok]:
                rcp[t, tok] = ((<uint64_t>1 << 44) + freq[t, tok] - 1) // freq[t, tok]
    state[0] = ANS_L
    state[1] = ANS_L
    top = cap
    with nogil:
        for j in range(n - 1, -1, -1):
            x = state[j & 1]
            tok = token_of(vsym[j], &nbits, &bits)
            if nbits:
                if x >= (1u << (32 - nbits)):
                    top -= 1
                    w[top] = <uint16_t>(x & 0xFFFF)
                    x >>= 16
                x = (x << nbits) | bits
            t = table[vctx[j]]
            fq = freq[t, tok]
            if <uint64_t>x >= (<uint64_t>(ANS_L >> SCALE) << 16) * fq:
                top -= 1
                w[top] = <uint16_t>(x & 0xFFFF)
                x >>= 16
            q = <uint32_t>((<uint64_t>x * rcp[t, tok]) >> 44)
            x = (q << SCALE) + (x - q * fq) + start[t, tok]
            state[j & 1] = x
    return out[top:].copy(), (int(state[0]), int(state[1]))
