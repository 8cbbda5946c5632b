# cython: language_level=3, cdivision=True
"""zdt.predict's traversals and entry points: each predictor's visit order, written once for
both directions and compiled for each, nogil. docs/codecs/predict.md is the spec; this module
computes its "Reconstruction" section and the encoder of its "Encoding" section.

The parts, each in a file of its own:
  _predict_shape.pxd     the chunk's shape as four extents, the predictors' stencils
  _predict_quantize.pxd  the quantizer: one element each way (symbol, raw value, fill value)
  _ans.pxd, _ans.pyx     entropy stage 3: contexts and the decoder's steps (inline, run here
                         per element), the encoder, the model choice, the tables' bytes
  this module            the traversals (Lorenzo, interpolation, reversed, slices), what a
                         traversal carries (`Walk`), and `encode` / `decode`

A traversal visits every element once in its predictor's order and, per element, predicts it
from the predictor values of elements visited before (`Walk.v`), then encodes it (quantize, and
with stage 3 record its symbol and context in visit order) or decodes it (with stage 3, decode
its symbol from the stream first; reconstruct). The direction is the fused `mode` (its pointer
is only ever NULL): each build of a loop holds only its own work (and the compiler only its
own registers).
"""

from collections import namedtuple

from libc.math cimport isfinite
from libc.stdint cimport int16_t, uint8_t, uint16_t, uint32_t, uint64_t
from libc.string cimport memcpy

import numpy as np

from zdt.errors import CorruptChunkError
from zdt.kernels import _ans

from zdt.kernels._ans cimport (ANS_L, CLASS16, FINE, Coder, Ctx, copy_coder, ctx_at,
                               decode_extra_bits, decode_token, make_ctx, next_state,
                               record_symbol, sym_class)
from zdt.kernels._predict_quantize cimport (Quantizer, Reconstruction, apply_patches,
                                            free_patches, init_quantizer, init_reconstruction,
                                            quantizer_level, reconstruction_level,
                                            code_symbol, quantize, real, reconstruct,
                                            same_bits, store_value)
from zdt.kernels._predict_shape cimport (INTERPOLATION, LORENZO, REVERSED, SLICES, Grid, Terms,
                                         along, cubic, grid_of, lorenzo, lorenzo_terms, top_step)

CODEC = "zdt.predict"

# What `encode` returns: the symbols (uint16[n], flat C order), the raw values (in visit order),
# with `record` stage 3's `Order` (else None), and the predictor values (float64[n], flat C
# order: where an element is finite and not the fill value, the value a decoder gives it, bit
# for bit, as float64; elsewhere without meaning)
Prediction = namedtuple("Prediction", ["symbols", "raw", "order", "values"], module=__name__)
# Stage 3's input: the symbols (uint16[n]) and their fine contexts (uint8[n]) in visit order,
# and the count of each (fine context, token) (int64[60, 64])
Order = namedtuple("Order", ["symbols", "contexts", "counts"], module=__name__)


cdef extern from *:
    """
    /* the first i with x[i] == f (n if none): 256 elements at a time while none is equal
       (branch-free within a block: it vectorises; AVX2 and AVX-512 clones: _portable.h), then
       one at a time in the block that has one */
    #include "_portable.h"
    #define ZDT_FIRST_EQUAL(NAME, U) \
    ZDT_CLONES static Py_ssize_t NAME(const U* x, Py_ssize_t n, U f) { \
        Py_ssize_t i = 0, k; \
        for (; i + 256 <= n; i += 256) { \
            U hits = 0; \
            for (k = 0; k < 256; k++) \
                hits += (U)(x[i + k] == f); \
            if (hits) \
                break; \
        } \
        for (; i < n; i++) \
            if (x[i] == f) \
                return i; \
        return n; \
    }
    ZDT_FIRST_EQUAL(zdt_first_equal_64, uint64_t)
    ZDT_FIRST_EQUAL(zdt_first_equal_32, uint32_t)
    """
    Py_ssize_t first_equal_64 "zdt_first_equal_64"(const uint64_t* x, Py_ssize_t n,
                                                   uint64_t f) nogil
    Py_ssize_t first_equal_32 "zdt_first_equal_32"(const uint32_t* x, Py_ssize_t n,
                                                   uint32_t f) nogil


def fill_mask(const real[::1] x, const real[::1] fill):
    """A masked chunk's mask of the flat chunk `x`: uint8[n], 1 where x[i] equals the fill value
    (`fill`: one element, or empty for none) bit for bit; None where no element does. One
    pass that writes nothing up to the first such element (most chunks have none)."""
    cdef Py_ssize_t n = x.shape[0], i, first = 0
    cdef uint64_t f64 = 0
    cdef uint32_t f32 = 0
    if fill.shape[0] == 0 or n == 0:
        return None
    with nogil:
        if real is float:
            memcpy(&f32, &fill[0], 4)
            first = first_equal_32(<const uint32_t*>&x[0], n, f32)
        else:
            memcpy(&f64, &fill[0], 8)
            first = first_equal_64(<const uint64_t*>&x[0], n, f64)
    if first == n:
        return None
    mask = np.zeros(n, dtype=np.uint8)
    cdef uint8_t[::1] m = mask
    cdef const uint32_t* b32 = <const uint32_t*>&x[0]
    cdef const uint64_t* b64 = <const uint64_t*>&x[0]
    with nogil:
        for i in range(first, n):
            if real is float:
                m[i] = b32[i] == f32
            else:
                m[i] = b64[i] == f64
    return mask


def corrupt(str message, str part):
    return CorruptChunkError(f"{CODEC}: {message}", codec=CODEC, part=part)


cdef struct Walk:
    double* v               # each visited element's predictor value
    uint16_t* sym           # each element's symbol, flat order (NULL: decoding stage 3)
    uint8_t* cls            # stage 3: each visited element's class (NULL without)
    void* raw               # the raw values, of the chunk's type: appended when encoding, read
                            # in order when decoding
    Quantizer* qz           # encoding
    Reconstruction* rc      # decoding
    const uint8_t* mask     # decoding a masked chunk: its mask (1: masked, no symbol), else NULL
    bint masked             # encoding a masked chunk: the fill-value elements have no symbol
    double fill64           # the fill value in the chunk's type (float64 or float32 chunks)
    float fill32


cdef inline void copy_walk(Walk* to, const Walk* w) noexcept nogil:
    """A loop's own copy, field by field (see copy_coder): its fields stay in registers."""
    to.v = w.v
    to.sym = w.sym
    to.cls = w.cls
    to.raw = w.raw
    to.qz = w.qz
    to.rc = w.rc
    to.mask = w.mask
    to.masked = w.masked
    to.fill64 = w.fill64
    to.fill32 = w.fill32


cdef inline int finish(Coder* a, const Coder* loc, int rc) noexcept nogil:
    """Hands a loop's copy of the coder back (`a`: NULL without stage 3); returns rc."""
    if a != NULL:
        copy_coder(a, loc)
    return rc


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


cdef inline int visit(mode* m, real* x, const Walk* w, Coder* a, Py_ssize_t i, double p,
                      int c) noexcept nogil:
    """Element i, predicted p, both ways; `c`: its stage 3 context (its neighbours are visited
    before it, so it is known before the element's own symbol is decoded or encoded). 0, or
    -1 for a corrupt chunk (decoding)."""
    cdef int k
    cdef real fill
    if real is float:
        fill = w.fill32
    else:
        fill = w.fill64
    if mode is DecodingAns:
        if w.mask != NULL and w.mask[i]:
            # (a masked element: no symbol; reconstructed as a fill-value symbol is, but a
            # float64 chunk's fill values are written after the traversal from the mask, not
            # patched one by one)
            w.cls[i] = 4
            w.rc.nfill += 1
            w.v[i] = p if isfinite(p) else 0.0
            if real is float:
                x[i] = fill
            return 0
        k = decode_token(a, c)
        if k < 0:
            return -1
        if <unsigned int>(k - 2) < 14:
            # (tokens 2 .. 15: codes -7 .. 6, no extra bits, the value p + q c: most elements)
            w.cls[i] = CLASS16[k]
            next_state(a)
            store_value(x, i, w.v, p + w.rc.qc[k])
            return 0
        if k >= 16:
            k = decode_extra_bits(a, k)
            if k < 0:
                return -1
            w.cls[i] = 3
        else:
            w.cls[i] = CLASS16[k]
        next_state(a)
        return reconstruct(x, i, p, w.v, k, <const real*>w.raw, w.rc, fill)
    elif mode is Decoding:
        return reconstruct(x, i, p, w.v, w.sym[i], <const real*>w.raw, w.rc, fill)
    else:
        k = quantize(x, i, p, w.v, w.sym, <real*>w.raw, w.qz, fill)
        if mode is EncodingAns:
            w.cls[i] = sym_class(<uint16_t>k)
            # (in a masked chunk the fill-value elements are the masked ones: no symbol)
            if k != 1 or not w.masked:
                record_symbol(a, k, c)
        return 0


# --- the traversals -------------------------------------------------------------------------

cdef int run_lorenzo(mode* m, real* x, const Grid* g, const Walk* walk, Coder* a) noexcept nogil:
    """Predictor 1. Context neighbours (stage 3): one step back along the last real dimension
    and along the one before it (none where the index is 0 or there is no such dimension)."""
    cdef Terms terms = lorenzo_terms(g)
    cdef Py_ssize_t i = 0, nb, nc
    cdef Py_ssize_t k[4]
    cdef int zero, r1 = -1, r2 = -1, d, c = 0
    cdef double p
    cdef Walk w
    cdef Coder loc
    cdef Ctx cx
    cdef bint coded = mode is EncodingAns or mode is DecodingAns
    copy_walk(&w, walk)
    if coded:
        copy_coder(&loc, a)
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
                    p = lorenzo(w.v, i, &terms, zero)
                    if coded:
                        # (a missing neighbour: the other one; neither: class 0, both)
                        nb = i - g.st[r1] if r1 >= 0 and k[r1] > 0 else -1
                        nc = i - g.st[r2] if r2 >= 0 and k[r2] > 0 else -1
                        if nb < 0 and nc < 0:
                            c = cx.of[0]
                        else:
                            c = ctx_at(&cx, w.cls, nb if nb >= 0 else nc, nc if nc >= 0 else nb)
                    if visit(m, x, &w, &loc, i, p, c) < 0:
                        return finish(a, &loc, -1)
                    i += 1
    return finish(a, &loc, 0)


cdef inline void quantize_span(real* x, const Walk* w, Py_ssize_t i, Py_ssize_t count,
                               Py_ssize_t es, Py_ssize_t o) noexcept nogil:
    """Encoding `span`'s elements (no stage 3 work): `quantize`'s usual path (`code_symbol`)
    with the quantizer's constants and the arrays in locals; the rest (the fill value, raw
    values) through `quantize` itself. The same arithmetic: the same symbols and values."""
    cdef double* v = w.v
    cdef uint16_t* sym = w.sym
    cdef double q = w.qz.q, inv_q = w.qz.inv_q, limit = w.qz.limit
    cdef bint has_fill = w.qz.has_fill
    cdef real fill, xi, rr
    cdef double p
    cdef int k
    cdef Py_ssize_t j
    if real is float:
        fill = w.fill32
    else:
        fill = w.fill64
    for j in range(count):
        p = cubic(v, i, o)
        xi = x[i]
        if not (has_fill & same_bits(xi, fill)):
            k = code_symbol(<double>xi, p, q, inv_q, limit, has_fill, fill, &rr)
            if k:
                sym[i] = <uint16_t>k
                v[i] = <double>rr
                i += es
                continue
        quantize(x, i, p, v, sym, <real*>w.raw, w.qz, fill)
        i += es


cdef inline int span(mode* m, real* x, const Walk* w, Coder* a, const Ctx* cx, Py_ssize_t i,
                     Py_ssize_t count, Py_ssize_t es, Py_ssize_t o) noexcept nogil:
    """`count` elements from flat index i in steps of es, each interpolated along a dimension
    of stride o where the cubic's four neighbours i -+ o, i -+ 3 o all exist (most of them:
    the loop without the bounds tests of `along`)."""
    cdef Py_ssize_t j, t, at = i
    cdef const uint16_t* sym
    cdef uint8_t* cls
    cdef uint16_t* order_sym
    cdef uint8_t* order_ctx
    cdef bint masked
    cdef Ctx of
    cdef double p
    cdef int c = 0, k
    cdef bint coded = mode is EncodingAns or mode is DecodingAns
    cdef Coder loc
    cdef int rc = 0
    if mode is EncodingAns:
        # two loops: the elements quantized as without stage 3, then their classes, contexts
        # and symbols recorded (one loop doing both measured a quarter slower). No element of
        # a span is another's neighbour (they lie 2 s apart along the row, or on a row between
        # rows of earlier levels), so neither loop reads what the other writes in this span.
        quantize_span(x, w, at, count, es, o)
        # (the arrays, the coder's place and the contexts as locals: a byte store may alias
        # any field the compiler would otherwise load again)
        sym = w.sym
        cls = w.cls
        order_sym = a.order_sym
        order_ctx = a.order_ctx
        t = a.j
        masked = w.masked
        of = cx[0]
        for j in range(count):
            k = sym[i]
            cls[i] = CLASS16[k if k < 16 else 15]
            if k != 1 or not masked:
                order_sym[t] = <uint16_t>k
                order_ctx[t] = <uint8_t>of.of[(cls[i - o] << 3) | cls[i + o]]
                t += 1
            i += es
        a.j = t
        return 0
    if mode is Encoding:
        quantize_span(x, w, i, count, es, o)
        return 0
    if coded:
        copy_coder(&loc, a)
    for j in range(count):
        p = cubic(w.v, i, o)
        if coded:
            c = ctx_at(cx, w.cls, i - o, i + o)
        if visit(m, x, w, &loc, i, p, c) < 0:
            rc = -1
            break
        i += es
    return finish(a, &loc, rc)


cdef inline int one(mode* m, real* x, const Walk* w, Coder* a, const Ctx* cx, Py_ssize_t i,
                    Py_ssize_t kd, Py_ssize_t nd, Py_ssize_t s, Py_ssize_t st) noexcept nogil:
    """One interpolated element, any place along its dimension (index kd of nd, step s,
    stride st)."""
    cdef double p = along(w.v, i, kd, nd, s, st)
    cdef int c = 0
    if mode is EncodingAns or mode is DecodingAns:
        c = ctx_at(cx, w.cls, i - s * st, i + s * st if kd + s < nd else i - s * st)
    return visit(m, x, w, a, i, p, c)


cdef inline void set_level(const Walk* w, Py_ssize_t s) noexcept nogil:
    """The step of interpolation level s (2E / f_s), encoding or decoding."""
    if w.qz != NULL:
        if w.qz.alpha != 1.0 and w.qz.beta != 1.0:
            quantizer_level(w.qz, s)
    elif w.rc.alpha != 1.0 and w.rc.beta != 1.0:
        reconstruction_level(w.rc, s)


cdef int run_interpolation(mode* m, real* x, const Grid* g, const Walk* walk, Coder* a,
                           bint reverse) noexcept nogil:
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
    cdef Walk w
    cdef Coder loc
    cdef Ctx cx
    cdef bint coded = mode is EncodingAns or mode is DecodingAns
    cdef const int16_t* table = NULL
    copy_walk(&w, walk)
    if coded:
        copy_coder(&loc, a)
        if mode is DecodingAns:
            table = loc.table
    for f in range(4):
        rank[f] = 3 - f if reverse else f
    if g.n[0] * g.n[1] * g.n[2] * g.n[3] == 0:
        return 0
    set_level(&w, s)
    # the element (0, 0, 0, 0), predicted 0: no neighbours, level group 3
    if coded:
        make_ctx(&cx, 3, table)
        c = cx.of[0]
    if visit(m, x, &w, &loc, 0, 0.0, c) < 0:
        return finish(a, &loc, -1)
    while s >= 1:
        set_level(&w, s)
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
                                if one(m, x, &w, &loc, &cx, base + k3, k3, n3, s, 1) < 0:
                                    return finish(a, &loc, -1)
                                k3 += 2 * s
                            if k3 + 3 * s < n3:
                                count = (n3 - 3 * s - 1 - k3) // (2 * s) + 1
                                if span(m, x, &w, &loc, &cx, base + k3, count, 2 * s, s) < 0:
                                    return finish(a, &loc, -1)
                                k3 += count * 2 * s
                            while k3 < n3:
                                if one(m, x, &w, &loc, &cx, base + k3, k3, n3, s, 1) < 0:
                                    return finish(a, &loc, -1)
                                k3 += 2 * s
                        else:
                            kd = k0 if d == 0 else (k1 if d == 1 else k2)
                            if kd >= 3 * s and kd + 3 * s < nd:
                                count = (n3 - k3 + step[3] - 1) // step[3]
                                if span(m, x, &w, &loc, &cx, base + k3, count, step[3], sd) < 0:
                                    return finish(a, &loc, -1)
                            else:
                                while k3 < n3:
                                    if one(m, x, &w, &loc, &cx, base + k3, kd, nd, s, st) < 0:
                                        return finish(a, &loc, -1)
                                    k3 += step[3]
                        k2 += step[2]
                    k1 += step[1]
                k0 += step[0]
        s //= 2
    return finish(a, &loc, 0)


cdef int run_slices(mode* m, real* x, const Grid* g, const Walk* walk, Coder* a) noexcept nogil:
    """Predictor 4: each slice along the first real dimension (extent > 1) predicted on its own
    by predictor 2, slice after slice (the raw values in that order)."""
    cdef Grid sub = g[0]
    cdef Walk w
    cdef int r = 0
    cdef Py_ssize_t i, off
    while r < 4 and g.n[r] == 1:
        r += 1
    if r == 4:              # one element
        return run_interpolation(m, x, g, walk, a, False)
    sub.n[r] = 1
    copy_walk(&w, walk)
    for i in range(g.n[r]):
        off = i * g.st[r]
        w.v = walk.v + off
        w.sym = walk.sym + off if walk.sym != NULL else NULL
        w.cls = walk.cls + off if walk.cls != NULL else NULL
        w.mask = walk.mask + off if walk.mask != NULL else NULL
        if run_interpolation(m, x + off, &sub, &w, a, False) < 0:
            return -1
    return 0


cdef int run(int predictor, mode* m, real* x, const Grid* g, const Walk* w, Coder* a) noexcept nogil:
    if predictor == LORENZO:
        return run_lorenzo(m, x, g, w, a)
    if predictor == SLICES:
        return run_slices(m, x, g, w, a)
    return run_interpolation(m, x, g, w, a, predictor == REVERSED)


# --- entry points ---------------------------------------------------------------------------

cdef void set_fill(Walk* w, real fill) noexcept nogil:
    w.fill64 = 0.0
    w.fill32 = 0.0
    if real is float:
        w.fill32 = fill
    else:
        w.fill64 = fill


def encode(real[::1] x, tuple shape, double abs_error, int predictor, real[::1] fill,
           bint record=False, bint masked=False, double alpha=1.0, double beta=1.0):
    """Prediction(symbols uint16[n] in flat C order, raw values[n_raw] in visit order, order,
    values float64[n]) of the flat C-order chunk `x` of 4-d `shape`; `fill`: the fill value (one element,
    compared bit for bit), or empty for none. With `record`, `order` is stage 3's Order (the
    symbols and their contexts in visit order, the (context, token) counts), else None.
    `masked`: a masked chunk's values (the elements equal to the fill value are the masked
    ones): stage 3's order leaves them out (the flat symbols still give them symbol 1).
    `alpha`, `beta`: format 3's steps, 2E / f_s at interpolation level s (level_factor; 1, 1:
    2E at every level, format 1)."""
    cdef Grid g = grid_of(shape)
    cdef Py_ssize_t n = x.shape[0]
    cdef Quantizer qz
    cdef Walk w
    cdef Coder a
    cdef bint has_fill = fill.shape[0] > 0
    syms = np.empty(n, dtype=np.uint16)
    vals = np.empty(n, dtype=np.float64)
    raws = np.empty(n, dtype=np.float32 if real is float else np.float64)
    order_syms = np.empty(n if record else 0, dtype=np.uint16)
    order_ctxs = np.empty(n if record else 0, dtype=np.uint8)
    classes = np.empty(n if record else 0, dtype=np.uint8)
    cdef uint16_t[::1] sym = syms
    cdef double[::1] v = vals
    cdef real[::1] raw = raws
    cdef uint16_t[::1] os = order_syms
    cdef uint8_t[::1] oc = order_ctxs
    cdef uint8_t[::1] cl = classes
    if g.n[0] * g.n[1] * g.n[2] * g.n[3] != n:
        raise ValueError(f"{CODEC}: {n} elements for the shape {shape}")
    if predictor not in (LORENZO, INTERPOLATION, REVERSED, SLICES):
        raise ValueError(f"{CODEC}: unknown predictor {predictor}")
    init_quantizer(&qz, abs_error, has_fill, alpha, beta)
    if n == 0:
        return Prediction(syms, raws[:0], Order(order_syms, order_ctxs, _ans.histogram(
            order_syms, order_ctxs)) if record else None, vals)
    w.v = &v[0]
    w.sym = &sym[0]
    w.cls = &cl[0] if record else NULL
    w.raw = &raw[0]
    w.qz = &qz
    w.rc = NULL
    w.mask = NULL
    w.masked = masked
    set_fill(&w, fill[0] if has_fill else 0)
    if record:
        a.order_sym = &os[0]
        a.order_ctx = &oc[0]
        a.j = 0
    with nogil:
        if record:
            run(predictor, <EncodingAns*>NULL, &x[0], &g, &w, &a)
        else:
            run(predictor, <Encoding*>NULL, &x[0], &g, &w, NULL)
    raws = raws[:qz.nraw].copy()
    if record:
        # (a masked chunk's order is shorter: its masked elements have no symbol)
        order_syms = order_syms[:a.j]
        order_ctxs = order_ctxs[:a.j]
        return Prediction(syms, raws, Order(order_syms, order_ctxs,
                                            _ans.histogram(order_syms, order_ctxs)), vals)
    return Prediction(syms, raws, None, vals)


cdef void fill_masked(double* out, const uint8_t* mask, Py_ssize_t n, double fill) noexcept nogil:
    """out[i] = fill where mask[i] (0 or 1), eight marks at a time: a land mask's runs are
    whole words of 0 or of 1 (a byte at a time, the loop was a tenth of a masked float64
    chunk's decoding)."""
    cdef Py_ssize_t i = 0, k
    cdef uint64_t word, ones = (<uint64_t>0xFFFFFFFFFFFFFFFFULL) // 255     # (0x0101...01)
    while i + 8 <= n:
        memcpy(&word, &mask[i], 8)
        if word == ones:
            for k in range(8):
                out[i + k] = fill
        elif word:
            for k in range(8):
                if mask[i + k]:
                    out[i + k] = fill
        i += 8
    while i < n:
        if mask[i]:
            out[i] = fill
        i += 1


def decode(uint16_t[::1] sym, const real[::1] raw, real[::1] out, tuple shape, double abs_error,
           int predictor, const real[::1] fill, object stream=None,
           const uint8_t[::1] mask=None, double alpha=1.0, double beta=1.0):
    """Reconstructs `out` (flat, C order, of 4-d `shape`) from the symbols and raw values and
    returns the number of fill-value symbols (masked elements included). With `stream` (stage
    3: an _ans.Stream), `sym` is None: each symbol is decoded from the stream where its
    element is reconstructed, and `mask` (uint8[n], 1: masked) gives a masked chunk's masked
    elements, which have no symbol (the flat symbols of the other stages give them symbol 1).
    CorruptChunkError for symbols that ask for more or fewer raw values than there are, a
    stream that runs out, names an empty table, or does not end where it began. `alpha`,
    `beta`: format 3's steps (as `encode`'s)."""
    cdef Grid g = grid_of(shape)
    cdef Py_ssize_t n = out.shape[0]
    cdef Reconstruction rc
    cdef Walk w
    cdef Coder a
    cdef bint coded = stream is not None
    cdef int status = 0
    cdef const uint16_t[::1] words
    cdef const int16_t[::1] table
    cdef const uint8_t[::1] lut
    cdef const uint32_t[::1] info
    cdef uint8_t[::1] cl
    cdef uint16_t no_word = 0
    cdef Py_ssize_t i
    cdef double* vp
    cdef double[::1] vv
    # (a raw array of length 0 still needs a valid pointer)
    cdef real no_raw = 0
    if coded == (sym is not None):
        raise ValueError(f"{CODEC}: symbols or a stage 3 stream, one of them")
    if g.n[0] * g.n[1] * g.n[2] * g.n[3] != n:
        raise ValueError(f"{CODEC}: {n} elements for the shape {shape}")
    if not coded and sym.shape[0] != n:
        raise ValueError(f"{CODEC}: {sym.shape[0]} symbols for {n} elements")
    if predictor not in (LORENZO, INTERPOLATION, REVERSED, SLICES):
        raise corrupt(f"unknown predictor {predictor}", "header")
    if n == 0:
        # (no element: the chunk must hold nothing either, as the encoder writes it)
        if raw.shape[0]:
            raise corrupt(f"the symbols use 0 raw values, the chunk holds {raw.shape[0]}",
                          "raw values")
        if coded and (stream[0].shape[0] or tuple(stream[1]) != (ANS_L, ANS_L)):
            raise corrupt(f"the ANS stream does not end where it began ({stream[0].shape[0]} "
                          f"words left, states {tuple(stream[1])}, not {ANS_L}) for a chunk "
                          f"of no elements", "ANS stream")
        return 0
    if coded:
        words, states, table, lut, info = stream
        if table.shape[0] != FINE:
            raise ValueError(f"{CODEC}: a context table of the wrong length")
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
            raise corrupt(f"an ANS state of {states} lies below 2^16", "ANS stream")
        cl = np.empty(n, dtype=np.uint8)
    if real is double:
        vp = <double*>&out[0]
    else:
        vv = np.empty(n, dtype=np.float64)
        vp = &vv[0]
    init_reconstruction(&rc, abs_error, raw.shape[0], alpha, beta)
    w.v = vp
    w.sym = NULL if coded else &sym[0]
    w.cls = &cl[0] if coded else NULL
    if raw.shape[0]:
        w.raw = <void*>&raw[0]
    else:
        w.raw = <void*>&no_raw
    w.qz = NULL
    w.rc = &rc
    w.mask = NULL
    w.masked = False
    if mask is not None:
        if not coded or mask.shape[0] != n:
            raise ValueError(f"{CODEC}: a mask of {mask.shape[0]} for {n} elements, or without "
                             f"a stage 3 stream")
        w.mask = &mask[0]
    set_fill(&w, fill[0] if fill.shape[0] else 0)
    with nogil:
        if coded:
            status = run(predictor, <DecodingAns*>NULL, &out[0], &g, &w, &a)
        else:
            status = run(predictor, <Decoding*>NULL, &out[0], &g, &w, NULL)
        if rc.oom:
            free_patches(&rc)
        else:
            apply_patches(&rc)
            if real is double and w.mask != NULL:
                fill_masked(&out[0], w.mask, n, w.fill64)
    if rc.oom:
        raise MemoryError(f"{CODEC}: no memory for the decoder's list of fill values")
    if coded and a.err:
        raise corrupt(f"the ANS stream ends before the chunk's {n} symbols" if a.err == 1 else
                      "the ANS stream uses a context whose table is empty", "ANS stream")
    if status < 0 or rc.nraw != rc.nraw_max:
        raise corrupt(f"the symbols use {'more than ' if status < 0 else ''}{rc.nraw} raw "
                      f"values, the chunk holds {rc.nraw_max}", "raw values")
    if coded and (a.pos != a.nwords or a.x0 != ANS_L or a.x1 != ANS_L):
        raise corrupt(f"the ANS stream does not end where it began ({a.nwords - a.pos} words "
                      f"left, states {a.x0} and {a.x1}, not {ANS_L})", "ANS stream")
    return rc.nfill
