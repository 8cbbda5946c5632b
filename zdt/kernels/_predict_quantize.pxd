# cython: language_level=3
"""zdt.predict's quantizer: one element each way, inline, nogil (the spec's "Reconstruction"
and the informative "Encoding", docs/codecs/predict.md).

Encoding an element (`quantize`) turns its value and prediction p into a symbol: 1 for the
fill value (bit for bit), k = zigzag(c) + 2 for the code c = round((x - p) / 2E) when the value
it reconstructs to lies within E of x, else 0 with x stored raw. Decoding (`reconstruct`) maps
the symbol back. Both write the element's predictor value v, which later predictions read.
Symbols 0 (raw) and 1 (fill) are what the stage 3 decoder hands over through `reconstruct`;
symbols 2 .. 15 it reconstructs itself from `Reconstruction.qc`.
"""

from libc.math cimport fabs, isfinite
from libc.stdint cimport uint16_t, uint64_t
from libc.stdlib cimport free, realloc
from libc.string cimport memcpy

ctypedef fused real:        # a chunk's element type
    float
    double


cdef inline bint same_bits(real a, real b) noexcept nogil:
    cdef uint64_t x = 0, y = 0
    memcpy(&x, &a, sizeof(real))
    memcpy(&y, &b, sizeof(real))
    return x == y


cdef struct Quantizer:      # encoding
    double q                # 2E
    double inv_q            # 1 / q: the encoder need not divide exactly (its result is checked)
    double limit            # E less a margin: the check below E by more than its own rounding
    bint has_fill
    Py_ssize_t nraw         # raw values written so far
    double q0               # 2E, the step of the finest level (s = 1)
    double alpha, beta      # the levels' steps (level_factor)


cdef inline double level_factor(double alpha, double beta, Py_ssize_t s) noexcept nogil:
    """f_s, by which the step of interpolation level s (a power of two) divides 2E: f_1 = 1,
    f_2s = min(f_s * alpha, beta), each product rounded (binary64)."""
    cdef double f = 1.0
    while s > 1:
        f = f * alpha
        if f > beta:
            f = beta
        s >>= 1
    return f


cdef inline void quantizer_level(Quantizer* qz, Py_ssize_t s) noexcept nogil:
    qz.q = qz.q0 / level_factor(qz.alpha, qz.beta, s)
    qz.inv_q = 1.0 / qz.q


cdef inline void init_quantizer(Quantizer* qz, double abs_error, bint has_fill,
                                double alpha=1.0, double beta=1.0) noexcept nogil:
    qz.q = 2.0 * abs_error
    qz.q0 = qz.q
    qz.alpha = alpha
    qz.beta = beta
    qz.inv_q = 1.0 / qz.q
    qz.limit = abs_error * (1.0 - 2.0 ** -40)
    qz.has_fill = has_fill
    qz.nraw = 0


cdef inline int code_symbol(double xd, double p, double q, double inv_q, double limit,
                            bint has_fill, real fill, real* rr) noexcept nogil:
    """The symbol k >= 2 of value xd predicted p, its reconstruction in rr, when its code
    c = round((xd - p) / q) (half away from zero) reconstructs within `limit` of xd and not to
    the fill value; 0 otherwise. Branches only on what is nearly always so (the tests combined
    with &), the zigzag from the code's bits (a branch on its sign, a coin toss on noisy data,
    was mispredicted every other element)."""
    # |t| < 32766 holds only when x and p are finite (else t is infinite or NaN) and keeps c
    # within the codes' range
    cdef double t = (xd - p) * inv_q
    cdef int c
    if fabs(t) < 32766.0:
        c = <int>(t + (0.5 if t >= 0 else -0.5))        # (rounded half away from zero)
        rr[0] = <real>(p + q * <double>c)
        # (a value that reads back equal to the fill value would read as missing where the
        # fill value masks, CF's _FillValue: it is stored raw instead)
        if (fabs(<double>rr[0] - xd) <= limit) & (not (has_fill & (rr[0] == fill))):
            return <int>(((<unsigned int>c << 1) ^ <unsigned int>(c >> 31)) + 2)
    return 0


cdef inline int quantize(const real* x, Py_ssize_t i, double p, double* v, uint16_t* sym,
                         real* raw, Quantizer* qz, real fill) noexcept nogil:
    """Element i with prediction p: its symbol (also written to sym[i]), its predictor value
    v[i], and its value appended to `raw` when it is stored exactly."""
    cdef real xi = x[i]
    cdef double xd = <double>xi
    cdef int k
    cdef real rr
    if qz.has_fill and same_bits(xi, fill):
        sym[i] = 1
        v[i] = p if isfinite(p) else 0.0
        return 1
    k = code_symbol(xd, p, qz.q, qz.inv_q, qz.limit, qz.has_fill, fill, &rr)
    if k:
        sym[i] = <uint16_t>k
        v[i] = <double>rr
        return k
    sym[i] = 0
    raw[qz.nraw] = xi
    qz.nraw += 1
    if isfinite(xd):
        v[i] = xd
    else:
        v[i] = p if isfinite(p) else 0.0
    return 0


cdef struct Patch:
    double* where
    double value


cdef struct Reconstruction:     # decoding
    double q                # the step of the level being decoded (2E / f_s)
    double q0               # 2E
    double alpha, beta      # the levels' steps (level_factor)
    double qc[16]           # q * c for the symbols 2 .. 15 (the same product, computed once)
    Py_ssize_t nraw         # raw values used so far
    Py_ssize_t nraw_max     # raw values the chunk holds
    Py_ssize_t nfill        # fill-value symbols decoded
    # float64: the predictor values are written to the output itself (no second array), and
    # the elements whose value differs from their predictor value (the fill value, a
    # non-finite raw value) are patched in after the traversal
    Patch* patches
    Py_ssize_t npatch
    Py_ssize_t cap
    bint oom                # no memory for a patch


cdef inline int code_of(int k) noexcept nogil:
    """The code of symbol k >= 2 (zigzag: 2, 3, 4, 5 -> 0, -1, 1, -2)."""
    cdef int m = k - 2
    return (m >> 1) if (m & 1) == 0 else -((m + 1) >> 1)


cdef inline void reconstruction_level(Reconstruction* rc, Py_ssize_t s) noexcept nogil:
    cdef int k
    rc.q = rc.q0 / level_factor(rc.alpha, rc.beta, s)
    for k in range(16):
        rc.qc[k] = rc.q * <double>code_of(k) if k >= 2 else 0.0


cdef inline void init_reconstruction(Reconstruction* rc, double abs_error,
                                     Py_ssize_t nraw_max, double alpha=1.0,
                                     double beta=1.0) noexcept nogil:
    rc.q0 = 2.0 * abs_error
    rc.alpha = alpha
    rc.beta = beta
    reconstruction_level(rc, 1)
    rc.nraw = 0
    rc.nraw_max = nraw_max
    rc.nfill = 0
    rc.patches = NULL
    rc.npatch = 0
    rc.cap = 0
    rc.oom = False


cdef inline void patch(Reconstruction* rc, double* where, double value) noexcept nogil:
    cdef Patch* grown
    if rc.npatch == rc.cap:
        grown = <Patch*>realloc(rc.patches, (2 * rc.cap + 64) * sizeof(Patch))
        if grown == NULL:
            rc.oom = True
            return
        rc.patches = grown
        rc.cap = 2 * rc.cap + 64
    rc.patches[rc.npatch].where = where
    rc.patches[rc.npatch].value = value
    rc.npatch += 1


cdef inline void free_patches(Reconstruction* rc) noexcept nogil:
    free(rc.patches)
    rc.patches = NULL
    rc.npatch = 0
    rc.cap = 0


cdef inline void apply_patches(Reconstruction* rc) noexcept nogil:
    """The patched values written (float64); the list freed."""
    cdef Py_ssize_t k
    for k in range(rc.npatch):
        rc.patches[k].where[0] = rc.patches[k].value
    free_patches(rc)


cdef inline void store_value(real* out, Py_ssize_t i, double* v, double r) noexcept nogil:
    """Element i decoded to r (rounded to float32 for float32 chunks), and its predictor value."""
    cdef real rr = <real>r
    if real is float:      # (float64 decodes into v itself: out is v)
        out[i] = rr
    v[i] = <double>rr


cdef inline int reconstruct(real* out, Py_ssize_t i, double p, double* v, int k,
                            const real* raw, Reconstruction* rc, real fill) noexcept nogil:
    """Element i from its symbol k and prediction p; 0, or -1 when the symbols ask for more
    raw values than the chunk holds."""
    cdef real rr
    if k >= 2:
        store_value(out, i, v, p + (rc.qc[k] if k < 16 else rc.q * <double>code_of(k)))
        return 0
    if k == 1:
        rc.nfill += 1
        out[i] = fill
        v[i] = p if isfinite(p) else 0.0
        if real is double:
            patch(rc, &v[i], fill)
        return 0
    if rc.nraw >= rc.nraw_max:
        return -1
    rr = raw[rc.nraw]
    rc.nraw += 1
    out[i] = rr
    if isfinite(<double>rr):
        v[i] = <double>rr
    else:
        v[i] = p if isfinite(p) else 0.0
        if real is double:
            patch(rc, &v[i], rr)
    return 0
