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

from libc.math cimport fabs, isfinite, trunc, copysign
from libc.stdint cimport int64_t, uint16_t, uint32_t, uint64_t
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
cdef int CODE_MIN = -32767
cdef int CODE_MAX = 32766


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
    if isfinite(xd) and isfinite(p):
        t = (xd - p) / e.q
        if fabs(t) < 32767.0:
            c = <int>trunc(t + copysign(0.5, t))
            if CODE_MIN <= c <= CODE_MAX:
                r = p + e.q * <double>c
                rr = <real>r
                # (a value that reads back equal to the fill value would read as missing
                # where the fill value masks, CF's _FillValue: it is stored raw instead)
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


cdef struct Dec:
    double q
    Py_ssize_t nraw         # raw values used so far
    Py_ssize_t nraw_max


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
    return 0


# --- the traversals -------------------------------------------------------------------------
# One traversal per predictor, written once for both directions: `decoding` picks the body.

cdef int run_lorenzo(const Grid* g, real* x, double* v, uint16_t* sym, const real* raw, Enc* e,
                     Dec* dd, real fill, bint decoding) noexcept nogil:
    cdef Terms terms = lorenzo_terms(g)
    cdef Py_ssize_t i = 0, i0, i1, i2, i3
    cdef int zero
    cdef double p
    for i0 in range(g.n[0]):
        for i1 in range(g.n[1]):
            for i2 in range(g.n[2]):
                for i3 in range(g.n[3]):
                    zero = (<int>(i3 == 0)) | (<int>(i2 == 0) << 1) | (<int>(i1 == 0) << 2) | (<int>(i0 == 0) << 3)
                    p = lorenzo(v, i, &terms, zero)
                    if decoding:
                        if decode_one(x, i, p, v, sym, raw, dd, fill) < 0:
                            return -1
                    else:
                        encode_one(x, i, p, v, sym, <real*>raw, e, fill)
                    i += 1
    return 0


cdef int run_interpolation(const Grid* g, real* x, double* v, uint16_t* sym, const real* raw, Enc* e,
                           Dec* dd, real fill, bint decoding, bint reverse) noexcept nogil:
    """Predictors 2 and 3 (`reverse`: at each level the dimensions last to first; padded
    dimensions, of extent 1, then come last and have no elements to visit)."""
    cdef Py_ssize_t s = top_step(g)
    cdef Py_ssize_t i
    cdef Py_ssize_t k[4]
    cdef Py_ssize_t first[4]
    cdef Py_ssize_t step[4]
    cdef int d, f, kk
    cdef int rank[4]        # a dimension's place in the order of a level
    cdef double p
    for f in range(4):
        rank[f] = 3 - f if reverse else f
    if g.n[0] * g.n[1] * g.n[2] * g.n[3] == 0:
        return 0
    # the element (0, 0, 0, 0), predicted 0
    if decoding:
        if decode_one(x, 0, 0.0, v, sym, raw, dd, fill) < 0:
            return -1
    else:
        encode_one(x, 0, 0.0, v, sym, <real*>raw, e, fill)
    while s >= 1:
        for kk in range(4):
            d = 3 - kk if reverse else kk
            for f in range(4):
                if rank[f] < kk:
                    first[f] = 0; step[f] = s
                elif f == d:
                    first[f] = s; step[f] = 2 * s
                else:
                    first[f] = 0; step[f] = 2 * s
            k[0] = first[0]
            while k[0] < g.n[0]:
                k[1] = first[1]
                while k[1] < g.n[1]:
                    k[2] = first[2]
                    while k[2] < g.n[2]:
                        k[3] = first[3]
                        while k[3] < g.n[3]:
                            i = k[0] * g.st[0] + k[1] * g.st[1] + k[2] * g.st[2] + k[3]
                            p = along(v, i, k[d], g.n[d], s, g.st[d])
                            if decoding:
                                if decode_one(x, i, p, v, sym, raw, dd, fill) < 0:
                                    return -1
                            else:
                                encode_one(x, i, p, v, sym, <real*>raw, e, fill)
                            k[3] += step[3]
                        k[2] += step[2]
                    k[1] += step[1]
                k[0] += step[0]
        s //= 2
    return 0


cdef int run_slices(const Grid* g, real* x, double* v, uint16_t* sym, const real* raw, Enc* e,
                    Dec* dd, real fill, bint decoding) noexcept nogil:
    """Predictor 4: each slice along the first real dimension (extent > 1) predicted on its own
    by predictor 2, slice after slice (the raw values in that order)."""
    cdef Grid sub = g[0]
    cdef int r = 0
    cdef Py_ssize_t i, off
    while r < 4 and g.n[r] == 1:
        r += 1
    if r == 4:              # one element
        return run_interpolation(g, x, v, sym, raw, e, dd, fill, decoding, False)
    sub.n[r] = 1
    for i in range(g.n[r]):
        off = i * g.st[r]
        if run_interpolation(&sub, x + off, v + off, sym + off, raw, e, dd, fill, decoding, False) < 0:
            return -1
    return 0


cdef int run(int predictor, const Grid* g, real* x, double* v, uint16_t* sym, const real* raw,
             Enc* e, Dec* dd, real fill, bint decoding) noexcept nogil:
    if predictor == LORENZO:
        return run_lorenzo(g, x, v, sym, raw, e, dd, fill, decoding)
    if predictor == SLICES:
        return run_slices(g, x, v, sym, raw, e, dd, fill, decoding)
    return run_interpolation(g, x, v, sym, raw, e, dd, fill, decoding, predictor == REVERSED)


# --- entry points ---------------------------------------------------------------------------

def encode(real[::1] x, tuple shape, double abs_error, int predictor, real[::1] fill):
    """(symbols uint16[n], raw values[n_raw]) of the flat C-order chunk `x` of 4-d `shape`;
    `fill`: the fill value (one element, compared bit for bit), or empty for none."""
    cdef Grid g = grid_of(shape)
    cdef Py_ssize_t n = x.shape[0]
    cdef Enc e
    cdef bint has_fill = fill.shape[0] > 0
    cdef real f = fill[0] if has_fill else 0
    syms = np.empty(n, dtype=np.uint16)
    vals = np.empty(n, dtype=np.float64)
    raws = np.empty(n, dtype=np.float32 if real is float else np.float64)
    cdef uint16_t[::1] sym = syms
    cdef double[::1] v = vals
    cdef real[::1] raw = raws
    e.E = abs_error
    e.q = 2.0 * abs_error
    e.limit = abs_error * MARGIN
    e.has_fill = has_fill
    e.nraw = 0
    if n == 0:
        return syms, raws[:0]
    if predictor not in (LORENZO, INTERPOLATION, REVERSED, SLICES):
        raise ValueError(f"zdt.predict: unknown predictor {predictor}")
    with nogil:
        run(predictor, &g, &x[0], &v[0], &sym[0], &raw[0], &e, NULL, f, False)
    return syms, raws[:e.nraw].copy()


def decode(const uint16_t[::1] sym, const real[::1] raw, real[::1] out, tuple shape, double abs_error,
           int predictor, const real[::1] fill):
    """Reconstructs `out` (flat, C order, of 4-d `shape`) from the symbols and raw values;
    ValueError if the symbols ask for more raw values than there are."""
    cdef Grid g = grid_of(shape)
    cdef Py_ssize_t n = out.shape[0]
    cdef Dec dd
    cdef real f = fill[0] if fill.shape[0] else 0
    cdef int rc = 0
    if sym.shape[0] != n:
        raise ValueError(f"zdt.predict: {sym.shape[0]} symbols for {n} elements")
    if n == 0:
        return
    vals = np.empty(n, dtype=np.float64)
    cdef double[::1] v = vals
    dd.q = 2.0 * abs_error
    dd.nraw = 0
    dd.nraw_max = raw.shape[0]
    # (a raw array of length 0 still needs a valid pointer)
    cdef real dummy = 0
    cdef const real* rp = &raw[0] if raw.shape[0] else &dummy
    if predictor not in (LORENZO, INTERPOLATION, REVERSED, SLICES):
        raise ValueError(f"zdt.predict: unknown predictor {predictor}")
    with nogil:
        rc = run(predictor, &g, &out[0], &v[0], <uint16_t*>&sym[0], rp, NULL, &dd, f, True)
    if rc < 0 or dd.nraw != dd.nraw_max:
        raise ValueError(f"zdt.predict: the symbols use {'more than ' if rc < 0 else ''}"
                         f"{dd.nraw} raw values, the chunk holds {dd.nraw_max}")
