# cython: language_level=3
"""zdt.predict: a chunk's shape as the kernels see it, and the predictors' stencils (the spec's
"Reconstruction", docs/codecs/predict.md: Lorenzo's sum; the interpolation's cubic, linear and
extrapolated predictions), inline, nogil.

Shapes arrive as four extents (leading extents of 1 pad lower dimensions;
zdt.codecs.predict drops other extents of 1 and merges leading dimensions beyond four): a
padded dimension's index is always 0, so its Lorenzo terms are skipped (the spec has none for
it) and it has no interpolation points.

Every prediction is a sequence of binary64 operations, each rounded on its own: the modules
that use these are compiled with -ffp-contract=off (setup.py), so no build fuses a multiply
and an add, and the bits are the same on every build and platform.
"""

cdef enum Predictor:        # the chunk header's predictor byte
    LORENZO = 1
    INTERPOLATION = 2
    REVERSED = 3            # interpolation, the dimensions taken last to first
    SLICES = 4              # interpolation of each slice along the first dimension on its own


cdef struct Grid:
    Py_ssize_t n[4]         # the four extents
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


cdef inline Terms lorenzo_terms(const Grid* g) noexcept nogil:
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


cdef inline double cubic(const double* v, Py_ssize_t i, Py_ssize_t o) noexcept nogil:
    """The cubic interpolation at flat index i from its neighbours i -+ o, i -+ 3 o."""
    return (9.0 * (v[i - o] + v[i + o]) - (v[i - 3 * o] + v[i + 3 * o])) * 0.0625


cdef inline double along(const double* v, Py_ssize_t i, Py_ssize_t k, Py_ssize_t n, Py_ssize_t s,
                         Py_ssize_t st) noexcept nogil:
    """The interpolation prediction at flat index i, whose index along the dimension is k (of
    extent n, step s, stride st), wherever it lies along it."""
    cdef double a, b, c
    b = v[i - s * st]
    if k + s < n:
        if k >= 3 * s and k + 3 * s < n:
            return cubic(v, i, s * st)
        c = v[i + s * st]
        return (b + c) * 0.5
    if k >= 3 * s:
        a = v[i - 3 * s * st]
        return 1.5 * b - 0.5 * a
    return b


cdef inline Py_ssize_t top_step(const Grid* g) noexcept nogil:
    """The first level's step s_0: the least power of two >= the largest extent - 1."""
    cdef Py_ssize_t m = 1, s = 1
    cdef int d
    for d in range(4):
        if g.n[d] > m:
            m = g.n[d]
    while s < m - 1:
        s *= 2
    return s
