# cython: language_level=3
"""zdt.predict's one implementation: the C library libzdtpredict (its sources compiled into
this extension, include/zdt_predict.h its interface) under the zarr and numcodecs faces.

The library is built here without libzstd: its zstd provider is numcodecs' Zstd (the frames zdt
has always written, numcodecs' bundled zstd), and its pcodec provider the pcodec package
(entropy stages 1 and 2), both called back with the GIL held (one or two zstd calls a chunk).
The C calls run without the GIL. A C error becomes the exception zdt raised before the library
existed: CorruptChunkError naming the part for a corrupt chunk; an exception a provider raised
is raised again as it was.

Codec: one configuration's parameters (zdt_predict_params), built once by
zdt.codecs.predict_config.PredictConfig; encode / decode / decode_numcodecs a chunk. The other
functions reach single steps of the library (the mask stream, a prediction, stage 3's order-0
estimate) for the tests and the reference mask.
"""

from cpython.buffer cimport PyBUF_READ, PyBUF_WRITE
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize
from cpython.memoryview cimport PyMemoryView_FromMemory
from libc.stdint cimport int64_t, uint8_t, uint16_t, uint32_t, uint64_t
from libc.stdlib cimport free, malloc
from libc.string cimport memcpy, memset, strncpy

import math
import os
import threading
from typing import NamedTuple

import numpy as np

from zdt.errors import CorruptChunkError

CODEC = "zdt.predict"


cdef extern from "zdt_predict.h":
    int ZDT_PREDICT_OK, ZDT_PREDICT_E_CORRUPT, ZDT_PREDICT_E_PARAM, ZDT_PREDICT_E_DST_SIZE
    int ZDT_PREDICT_E_UNSUPPORTED, ZDT_PREDICT_E_FORMAT_TOO_NEW, ZDT_PREDICT_E_NOMEM
    int ZDT_PREDICT_MAX_DIMS

    ctypedef struct zdt_predict_zstd:
        uint32_t struct_size
        void *opaque
        int (*compress)(void *, const void *, size_t, int, void *, size_t, size_t *) noexcept
        int (*decompress)(void *, const void *, size_t, void *, size_t, char *, size_t) noexcept

    ctypedef struct zdt_predict_pcodec:
        uint32_t struct_size
        void *opaque
        int (*compress)(void *, const uint16_t *, size_t, const void **, size_t *) noexcept
        int (*decompress)(void *, const void *, size_t, uint16_t *, size_t, char *,
                          size_t) noexcept

    ctypedef struct zdt_predict_params:
        uint32_t struct_size
        uint32_t dtype
        uint32_t ndim
        uint64_t shape[32]
        double abs_error
        int has_fill
        double fill
        const uint8_t *reference
        uint64_t reference_shape[2]
        double rel_error
        int predictor
        int entropy
        int level
        const int64_t *keep
        size_t n_keep
        const zdt_predict_zstd *zstd
        const zdt_predict_pcodec *pcodec
        int effort

    ctypedef struct zdt_predict_error:
        int status
        char part[32]
        char message[256]

    void zdt_predict_params_init(zdt_predict_params *params)
    const char *zdt_predict_version_string()
    int zdt_predict_decode(const void *src, size_t src_size, const zdt_predict_params *params,
                           void *dst, size_t dst_size, zdt_predict_error *err) nogil
    int zdt_predict_numcodecs_header(const void *src, size_t src_size,
                                     zdt_predict_params *params, size_t *chunk_offset,
                                     zdt_predict_error *err)
    int zdt_predict_reference_decode(const void *stream, size_t stream_size, uint64_t rows,
                                     uint64_t cols, uint8_t *bits, zdt_predict_error *err) nogil
    size_t zdt_predict_encode_bound(const zdt_predict_params *params)
    ctypedef struct zdt_predict_workspace:
        pass
    zdt_predict_workspace *zdt_predict_workspace_new(size_t limit)
    void zdt_predict_workspace_free(zdt_predict_workspace *ws)
    int zdt_predict_encode_with(zdt_predict_workspace *ws, const void *src, size_t src_size,
                                const zdt_predict_params *params, void *dst,
                                size_t dst_capacity, size_t *written,
                                zdt_predict_error *err) nogil


cdef extern from "encode.h":
    ctypedef struct zdt__grid:
        size_t n[4]
        size_t st[4]
        size_t count
    ctypedef struct zdt__buf:
        uint8_t *p
        size_t len
        size_t cap
        int oom
    ctypedef struct zdt__pred:
        int predictor
        size_t n
        uint16_t *sym
        double *v
        void *raw
        size_t nraw
    void zdt__grid_of(zdt__grid *g, const uint64_t *shape, uint32_t ndim)
    void zdt__buf_free(zdt__buf *b)
    void zdt__mask_encode(zdt__buf *out, const uint8_t *bits, const zdt__grid *g,
                          const uint8_t *reference) nogil
    int zdt__mask_decode(const uint8_t *buf, size_t len, const zdt__grid *g,
                         const uint8_t *reference, uint8_t *bits, size_t *count,
                         const char *part, zdt_predict_error *err) nogil
    void zdt__signs_encode(zdt__buf *out, const uint8_t *negative, const zdt__grid *g,
                           const double *logs, const double *decoded, int plain) nogil
    double zdt__order0_bits(const uint16_t *sym, size_t n, int *oom) nogil
    int zdt__predict(zdt__pred *out, const void *x, const zdt__grid *g, int is_f32,
                     double abs_error, int predictor, double alpha, double beta, int has_fill,
                     double fill64, float fill32, int record, int zeros_likely,
                     void *spare) nogil
    void zdt__pred_free(zdt__pred *p, void *spare)
    int zdt__encode_chunk(const void *src, const zdt_predict_params *p, const zdt__grid *g,
                          int is_f32, double abs_error, int has_fill, double fill, zdt__buf *out,
                          double **values, void *pool, zdt_predict_error *err) nogil


VERSION = zdt_predict_version_string().decode()
# the library's data type codes, entropy codes (-1: auto) and predictor codes (0: auto)
DTYPES = {"float32": 1, "float64": 2, "int8": 3, "uint8": 4, "int16": 5, "uint16": 6,
          "int32": 7, "uint32": 8}
BY_CODE = {v: np.dtype(k) for k, v in DTYPES.items()}
PCODEC_LEVEL = 8


def corrupt(str message, str part) -> CorruptChunkError:
    """The error of a corrupt chunk, naming the codec and the part of the chunk."""
    return CorruptChunkError(f"{CODEC}: {message}", codec=CODEC, part=part)


# --- the providers: numcodecs' zstd, the pcodec package (called with the GIL) --------------------

_zstd_codecs = {}


cdef object _zstd(int level):
    codec = _zstd_codecs.get(level)
    if codec is None:
        from numcodecs.zstd import Zstd
        codec = _zstd_codecs.setdefault(level, Zstd(level=level))
    return codec


def pcodec_module():
    """pcodec's standalone module (`pip install pcodec`: zdt[zarr] brings it), or None."""
    try:
        from pcodec import standalone
    except ImportError:
        return None
    return standalone


def _workspace_limit() -> int:
    """What of an encode's arrays a thread keeps for its next encode, at most, in bytes
    (zdt_predict_workspace): ZDT_PREDICT_WORKSPACE_MIB from the environment (0: nothing kept),
    else 64 MiB."""
    raw = os.environ.get("ZDT_PREDICT_WORKSPACE_MIB")
    if not raw:
        return 64 << 20
    try:
        mib = int(raw)
    except ValueError:
        mib = -1
    if not 0 <= mib < 1 << 40:
        raise ImportError(f"ZDT_PREDICT_WORKSPACE_MIB={raw!r} is not a whole number of MiB "
                          f"(0 keeps nothing between encodes)")
    return mib << 20


WORKSPACE_LIMIT = _workspace_limit()


cdef class _Workspace:
    """A thread's zdt_predict_workspace (threading.local: freed with its thread). `busy` while
    an encode of this thread uses it: an encode started inside it (from a provider's
    callback) takes none."""
    cdef zdt_predict_workspace *p
    cdef bint busy

    def __cinit__(self):
        self.p = zdt_predict_workspace_new(WORKSPACE_LIMIT)
        if self.p == NULL:
            raise MemoryError()
        self.busy = False

    def __dealloc__(self):
        zdt_predict_workspace_free(self.p)


_thread = threading.local()


cdef _Workspace _workspace():
    ws = getattr(_thread, "workspace", None)
    if ws is None:
        ws = _thread.workspace = _Workspace()
    return ws


cdef class _Io:
    """One call's providers: the structs the library calls, the first exception a callback
    raised (raised again after the call), the last pcodec bytes (alive until the next)."""
    cdef zdt_predict_zstd zstd
    cdef zdt_predict_pcodec pcodec
    cdef object error
    cdef object codes

    def __cinit__(self):
        self.zstd.struct_size = sizeof(zdt_predict_zstd)
        self.zstd.opaque = <void *>self
        self.zstd.compress = _zstd_compress
        self.zstd.decompress = _zstd_decompress
        self.pcodec.struct_size = sizeof(zdt_predict_pcodec)
        self.pcodec.opaque = <void *>self
        self.pcodec.compress = _pco_compress
        self.pcodec.decompress = _pco_decompress
        self.error = None
        self.codes = None

    cdef void attach(self, zdt_predict_params *p):
        p.zstd = &self.zstd
        p.pcodec = &self.pcodec


cdef int _kept(_Io io, object exc, int rc) noexcept:
    """A provider's failure: the first exception kept, raised again once the library returns."""
    if io.error is None:
        io.error = exc
    return rc


cdef str _first_line(object exc):
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__


cdef int _zstd_compress(void *opaque, const void *src, size_t n, int level, void *dst,
                        size_t cap, size_t *written) noexcept with gil:
    cdef _Io io = <_Io>opaque
    cdef const char *p
    try:
        frame = _zstd(level).encode(PyMemoryView_FromMemory(<char *>src, n, PyBUF_READ))
        frame = bytes(frame)
        if <size_t>len(frame) > cap:
            raise AssertionError(f"a zstd frame of {len(frame)} bytes, above its bound {cap}")
        p = PyBytes_AS_STRING(frame)
        memcpy(dst, p, len(frame))
        written[0] = len(frame)
        return 0
    except BaseException as exc:
        return _kept(io, exc, -1)


cdef int _zstd_decompress(void *opaque, const void *src, size_t n, void *dst, size_t size,
                          char *why, size_t why_size) noexcept with gil:
    cdef _Io io = <_Io>opaque
    if size == 0:       # (numcodecs' zstd cannot decode a frame of empty content: its header
        return 0        # was checked, and says 0 bytes)
    try:
        out = np.frombuffer(PyMemoryView_FromMemory(<char *>dst, size, PyBUF_WRITE),
                            dtype=np.uint8)
        _zstd(3).decode(PyMemoryView_FromMemory(<char *>src, n, PyBUF_READ), out=out)
        return 0
    except Exception as exc:        # numcodecs' zstd raises RuntimeError / ValueError
        text = _first_line(exc).encode()[:why_size - 1]
        memcpy(why, <const char *>text, len(text))
        why[len(text)] = 0
        return -1
    except BaseException as exc:
        return _kept(io, exc, -1)


cdef int _pco_compress(void *opaque, const uint16_t *sym, size_t n, const void **out,
                       size_t *size) noexcept with gil:
    cdef _Io io = <_Io>opaque
    try:
        from pcodec import ChunkConfig
        symbols = np.frombuffer(PyMemoryView_FromMemory(<char *>sym, 2 * n, PyBUF_READ),
                                dtype=np.uint16)
        io.codes = bytes(pcodec_module().simple_compress(
            symbols, ChunkConfig(compression_level=PCODEC_LEVEL)))
        out[0] = <const void *>PyBytes_AS_STRING(io.codes)
        size[0] = len(io.codes)
        return 0
    except BaseException as exc:
        return _kept(io, exc, -1)


cdef int _pco_decompress(void *opaque, const void *src, size_t length, uint16_t *sym, size_t n,
                         char *why, size_t why_size) noexcept with gil:
    cdef _Io io = <_Io>opaque
    try:
        standalone = pcodec_module()
        if standalone is None:
            raise ValueError(f"{CODEC}: the chunk's symbols are pcodec-coded and the pcodec "
                             f"package is not installed (pip install pcodec)")
        codes = PyBytes_FromStringAndSize(<const char *>src, length)
        out = np.frombuffer(PyMemoryView_FromMemory(<char *>sym, 2 * n, PyBUF_WRITE),
                            dtype=np.uint16)
        try:
            progress = standalone.simple_decompress_into(codes, out)
        except BaseException as exc:    # pcodec's "pco error: ..." (RuntimeError); a Rust panic
            if not isinstance(exc, (RuntimeError, ValueError)) and \
                    type(exc).__name__ != "PanicException":
                raise
            raise corrupt(f"the pcodec symbols do not decode ({_first_line(exc)})", "symbols") from None
        if progress.n_processed != n or not progress.finished:
            raise corrupt(f"the pcodec data holds "
                          f"{'more' if not progress.finished else progress.n_processed} "
                          f"symbols, the chunk's shape calls for {n}", "symbols")
        return ZDT_PREDICT_OK
    except BaseException as exc:
        return _kept(io, exc, ZDT_PREDICT_E_CORRUPT)


cdef object _raise(int rc, zdt_predict_error *err, _Io io):
    """The exception of a failed call: what a provider raised, else the library's error."""
    if io is not None and io.error is not None:
        error, io.error = io.error, None
        raise error
    message = err.message.decode("utf-8", "replace")
    part = err.part.decode("utf-8", "replace")
    if rc == ZDT_PREDICT_E_CORRUPT or rc == ZDT_PREDICT_E_FORMAT_TOO_NEW:
        raise CorruptChunkError(message, codec=CODEC, part=part)
    if rc == ZDT_PREDICT_E_NOMEM:
        raise MemoryError(message)
    raise ValueError(message)


cdef void _set_shape(zdt_predict_params *p, tuple shape) except *:
    if len(shape) > ZDT_PREDICT_MAX_DIMS:
        raise ValueError(f"{CODEC}: an array of {len(shape)} dimensions (at most "
                         f"{ZDT_PREDICT_MAX_DIMS})")
    p.ndim = len(shape)
    for d, n in enumerate(shape):
        p.shape[d] = n


cdef class Codec:
    """One configuration's parameters (zdt_predict_params): abs_error or rel_error (0.0:
    none), predictor (0 auto, 1 .. 4), entropy (-1 auto, 0 .. 3), level, keep (int64 values),
    reference (the reference mask's bits, uint8[rows * cols], and its shape), effort (0
    default, 1 fast, 2 max)."""

    cdef zdt_predict_params base
    cdef object keep_array
    cdef object reference_bits

    def __init__(self, double abs_error, double rel_error, int predictor, int entropy,
                 int level, keep=(), reference=None, tuple reference_shape=(0, 0),
                 int effort=0):
        zdt_predict_params_init(&self.base)
        self.base.effort = effort
        self.base.abs_error = abs_error
        self.base.rel_error = rel_error
        self.base.predictor = predictor
        self.base.entropy = entropy
        self.base.level = level
        cdef int64_t[::1] kept
        self.keep_array = np.ascontiguousarray(np.asarray(keep, dtype=np.int64))
        if len(self.keep_array):
            kept = self.keep_array
            self.base.keep = &kept[0]
            self.base.n_keep = len(self.keep_array)
        cdef const uint8_t[::1] bits
        if reference is not None:
            self.reference_bits = np.ascontiguousarray(reference, dtype=np.uint8)
            bits = self.reference_bits
            self.base.reference = &bits[0]
            self.base.reference_shape[0] = reference_shape[0]
            self.base.reference_shape[1] = reference_shape[1]

    cdef void _params(self, zdt_predict_params *p, object dtype, object fill) except *:
        p[0] = self.base
        p.dtype = DTYPES[dtype.name]
        if fill is not None:
            p.has_fill = 1
            p.fill = fill

    def encode(self, arr, fill=None) -> bytes:
        """The chunk of the C-contiguous array `arr` (of a type of DTYPES, native order);
        `fill`: the fill value as float (a float32 array's: its float32 value), or None."""
        cdef zdt_predict_params p
        cdef zdt_predict_error err
        cdef _Io io = _Io()
        cdef size_t bound, written = 0
        cdef int rc
        cdef const uint8_t[::1] src = np.ascontiguousarray(arr).reshape(-1).view(np.uint8)
        cdef const void *sp = &src[0] if len(src) else NULL
        cdef size_t n_src = len(src)
        cdef uint8_t[::1] dst
        cdef _Workspace ws = _workspace()
        cdef zdt_predict_workspace *wp = NULL if ws.busy else ws.p
        self._params(&p, arr.dtype, fill)
        _set_shape(&p, tuple(arr.shape))
        io.attach(&p)
        bound = zdt_predict_encode_bound(&p)
        for attempt in range(2):
            out = np.empty(max(bound, 1), dtype=np.uint8)      # (not zero-filled)
            dst = out
            if wp != NULL:
                ws.busy = True
            try:
                with nogil:
                    rc = zdt_predict_encode_with(wp, sp, n_src, &p, &dst[0], bound, &written,
                                                 &err)
            finally:
                if wp != NULL:
                    ws.busy = False
            if rc == ZDT_PREDICT_E_DST_SIZE and io.error is None and attempt == 0:
                bound = written         # (the pcodec stages' bound is an estimate)
                continue
            if rc != ZDT_PREDICT_OK:
                _raise(rc, &err, io)
            return out[:written].tobytes()

    def encode_floats(self, arr, fill=None):
        """A float array's chunk under the absolute bound, as encode writes it, and what it
        decodes each finite element that is not the fill value to (float64, flat C order):
        the values the relative chunks' encoder checks its elements against."""
        cdef zdt_predict_params p
        cdef zdt_predict_error err
        cdef _Io io = _Io()
        cdef zdt__grid g
        cdef zdt__buf out
        cdef double *values = NULL
        cdef int rc
        x = np.ascontiguousarray(arr)
        if x.dtype not in (np.float32, np.float64) or self.base.abs_error <= 0.0:
            raise ValueError(f"{CODEC}: encode_floats takes float32 or float64 arrays under "
                             f"an absolute bound")
        cdef const uint8_t[::1] src = x.reshape(-1).view(np.uint8)
        cdef const void *sp = &src[0] if len(src) else NULL
        self._params(&p, x.dtype, fill)
        _set_shape(&p, tuple(x.shape))
        io.attach(&p)
        zdt__grid_of(&g, p.shape, p.ndim)
        memset(&out, 0, sizeof(out))
        with nogil:
            rc = zdt__encode_chunk(sp, &p, &g, p.dtype == 1, p.abs_error, p.has_fill, p.fill,
                                   &out, &values, NULL, &err)
        try:
            if rc != ZDT_PREDICT_OK:
                _raise(rc, &err, io)
            data = PyBytes_FromStringAndSize(<const char *>out.p, out.len) if out.len else b""
            got = np.frombuffer(PyBytes_FromStringAndSize(<const char *>values, 8 * g.count),
                                dtype=np.float64).copy() if g.count else np.empty(0)
            return data, got
        finally:
            zdt__buf_free(&out)
            free(values)

    def decode(self, data, out, fill=None) -> None:
        """Decodes the chunk `data` (any buffer) into `out` (a C-contiguous array of the
        chunk's shape and type)."""
        cdef zdt_predict_params p
        cdef zdt_predict_error err
        cdef _Io io = _Io()
        cdef const uint8_t[::1] src = _bytes_view(data)
        cdef const void *sp = &src[0] if len(src) else NULL
        cdef size_t n_src = len(src)
        cdef uint8_t[::1] dst = out.reshape(-1).view(np.uint8)
        cdef void *dp = &dst[0] if len(dst) else NULL
        cdef size_t n_dst = len(dst)
        cdef int rc
        self._params(&p, out.dtype, fill)
        _set_shape(&p, tuple(out.shape))
        io.attach(&p)
        with nogil:
            rc = zdt_predict_decode(sp, n_src, &p, dp, n_dst, &err)
        if rc != ZDT_PREDICT_OK:
            _raise(rc, &err, io)

    def decode_numcodecs(self, data):
        """The array a numcodecs-face buffer holds (its shape and type ahead of the chunk)."""
        cdef zdt_predict_params p
        cdef zdt_predict_error err
        cdef const uint8_t[::1] src = _bytes_view(data)
        cdef size_t offset = 0
        cdef int rc
        p = self.base
        rc = zdt_predict_numcodecs_header(&src[0] if len(src) else NULL, len(src), &p, &offset,
                                          &err)
        if rc != ZDT_PREDICT_OK:
            _raise(rc, &err, None)
        shape = tuple(int(p.shape[d]) for d in range(p.ndim))
        most = np.iinfo(np.intp).max
        if any(n > most for n in shape) or math.prod(shape) * BY_CODE[p.dtype].itemsize > most:
            raise corrupt(f"the buffer's shape {shape} is larger than an array can be", "shape")
        try:
            out = np.empty(shape, dtype=BY_CODE[p.dtype])
        except (MemoryError, ValueError):     # a corrupt shape: more than memory holds
            raise corrupt(f"the buffer's shape {shape} ({math.prod(shape):,} elements) does "
                          f"not fit in memory", "shape") from None
        self.decode(src[offset:], out)
        return out


cdef const uint8_t[::1] _bytes_view(data) except *:
    if isinstance(data, bytes):
        return data
    view = memoryview(data)
    if not view.c_contiguous:
        view = memoryview(bytes(view))
    return view.cast("B")


# --- single steps, for the reference mask and the tests --------------------------------------------

class MaskStream(NamedTuple):
    """A decoded mask stream: its bits (uint8, 1: masked) and how many are set."""

    bits: np.ndarray
    n_masked: int


class Prediction(NamedTuple):
    """A prediction: each element's symbol (flat C order), the raw values (visit order, the
    chunk's type) and each element's predictor value (float64, flat C order)."""

    symbols: np.ndarray
    raw: np.ndarray
    values: np.ndarray


cdef void _grid(zdt__grid *g, tuple shape) except *:
    cdef uint64_t ext[32]
    if len(shape) > 32:
        raise ValueError(f"{CODEC}: a shape of {len(shape)} dimensions")
    for d, n in enumerate(shape):
        ext[d] = n
    zdt__grid_of(g, ext, len(shape))


cdef bytes _taken(zdt__buf *out, str what):
    """A stream the core wrote into *out, as bytes (out freed): MemoryError where it ran out."""
    try:
        if out.oom:
            raise MemoryError(f"{CODEC}: no memory for {what}")
        return PyBytes_FromStringAndSize(<const char *>out.p, out.len) if out.len else b""
    finally:
        zdt__buf_free(out)


def signs_encode(negative, tuple shape, logs) -> bytes:
    """Kind 4's sign stream of `negative` (uint8[n], 1: negative) over a chunk of `shape`
    with the logarithms a decoder reads (float64[n])."""
    cdef zdt__grid g
    cdef zdt__buf out
    cdef const uint8_t[::1] b = np.ascontiguousarray(negative, dtype=np.uint8).reshape(-1)
    cdef const double[::1] v = np.ascontiguousarray(logs, dtype=np.float64).reshape(-1)
    _grid(&g, shape)
    if <size_t>len(b) != g.count or <size_t>len(v) != g.count or (len(b) and max(b) > 1):
        raise ValueError(f"{CODEC}: {g.count} signs (0, 1) and logarithms for a chunk of "
                         f"{g.count} elements")
    memset(&out, 0, sizeof(out))
    zdt__signs_encode(&out, &b[0] if g.count else NULL, &g, &v[0] if g.count else NULL, NULL, 0)
    return _taken(&out, "a sign stream")


def mask_encode(bits, tuple shape, reference=None) -> bytes:
    """The mask stream of `bits` (uint8[n], 1: masked) over a chunk of `shape`; `reference`:
    the bits its first slice looks back at (the last two extents of the 4-d grid), or None."""
    cdef zdt__grid g
    cdef zdt__buf out
    cdef const uint8_t[::1] b = np.ascontiguousarray(bits, dtype=np.uint8).reshape(-1)
    cdef const uint8_t[::1] r
    cdef const uint8_t *rp = NULL
    _grid(&g, shape)
    if <size_t>len(b) != g.count:
        raise ValueError(f"{CODEC}: {len(b)} mask bits for a chunk of {g.count} elements")
    if reference is not None:
        r = np.ascontiguousarray(reference, dtype=np.uint8).reshape(-1)
        if <size_t>len(r) != g.n[2] * g.n[3]:
            raise ValueError(f"{CODEC}: a reference of {len(r)} bits for slices of "
                             f"{g.n[2] * g.n[3]}")
        rp = &r[0]
    memset(&out, 0, sizeof(out))
    zdt__mask_encode(&out, &b[0] if g.count else NULL, &g, rp)
    return _taken(&out, "a mask stream")


def mask_decode(data, tuple shape, reference=None) -> MaskStream:
    """A mask stream (exactly `data`) over a chunk of `shape`: CorruptChunkError (part
    "mask") when it is not one."""
    cdef zdt__grid g
    cdef zdt_predict_error err
    cdef size_t count = 0
    cdef const uint8_t[::1] src = _bytes_view(data)
    cdef const uint8_t[::1] r
    cdef const uint8_t *rp = NULL
    cdef uint8_t[::1] bits
    cdef int rc
    _grid(&g, shape)
    if reference is not None:
        r = np.ascontiguousarray(reference, dtype=np.uint8).reshape(-1)
        if <size_t>len(r) != g.n[2] * g.n[3]:
            raise ValueError(f"{CODEC}: a reference of {len(r)} bits for slices of "
                             f"{g.n[2] * g.n[3]}")
        rp = &r[0]
    out = np.empty(max(g.count, 1), dtype=np.uint8)
    bits = out
    rc = zdt__mask_decode(&src[0] if len(src) else <const uint8_t *>"", len(src), &g, rp,
                          &bits[0], &count, "mask", &err)
    if rc != ZDT_PREDICT_OK:
        _raise(rc, &err, None)
    return MaskStream(out[:g.count], count)


def reference_decode(stream, int rows, int cols):
    """A configuration's reference mask: the bits (uint8[rows * cols]) its stream decodes
    to; ValueError when it does not decode to exactly that."""
    cdef zdt_predict_error err
    cdef const uint8_t[::1] src = _bytes_view(stream)
    cdef uint8_t[::1] bits
    cdef int rc
    out = np.empty(rows * cols, dtype=np.uint8)
    bits = out
    rc = zdt_predict_reference_decode(&src[0] if len(src) else NULL, len(src), rows, cols,
                                      &bits[0], &err)
    if rc != ZDT_PREDICT_OK:
        raise ValueError(err.message.decode("utf-8", "replace"))
    return out


def order0_bits(sym) -> float:
    """The bits the symbols take at their order-0 entropy (auto's estimate)."""
    cdef const uint16_t[::1] s = np.ascontiguousarray(sym, dtype=np.uint16).reshape(-1)
    cdef int oom = 0
    cdef double bits = zdt__order0_bits(&s[0] if len(s) else NULL, len(s), &oom)
    if oom:
        raise MemoryError(f"{CODEC}: no memory for an estimate")
    return bits


def predict(x, tuple shape, double abs_error, int predictor, fill=None, double alpha=1.0,
            double beta=1.0, bint zeros_likely=False) -> Prediction:
    """The prediction of the flat chunk `x` (float32 / float64) over `shape` by `predictor`
    (1 .. 4), with format 3's steps alpha and beta; `fill`: the fill value, or None;
    `zeros_likely`: Lorenzo's build with code 0's branch (the encoder's where its samples
    show mostly code 0; the same prediction)."""
    cdef zdt__grid g
    cdef zdt__pred p
    cdef const uint8_t[::1] b
    cdef int rc, is_f32
    cdef double f64 = 0.0
    x = np.ascontiguousarray(x).reshape(-1)
    if x.dtype not in (np.float32, np.float64):
        raise ValueError(f"{CODEC}: predicts float32 or float64, not {x.dtype}")
    is_f32 = x.dtype == np.float32
    _grid(&g, shape)
    if <size_t>x.size != g.count:
        raise ValueError(f"{CODEC}: {x.size} elements for a chunk of {g.count}")
    if fill is not None:
        f64 = float(np.asarray(fill, dtype=x.dtype))
    b = x.view(np.uint8)
    memset(&p, 0, sizeof(p))
    rc = zdt__predict(&p, &b[0] if len(b) else NULL, &g, is_f32, abs_error, predictor, alpha,
                      beta, fill is not None, f64, <float>f64, 0, zeros_likely, NULL)
    if rc != ZDT_PREDICT_OK:
        zdt__pred_free(&p, NULL)
        raise MemoryError(f"{CODEC}: no memory for a prediction")
    try:
        symbols = np.frombuffer(PyBytes_FromStringAndSize(<const char *>p.sym, 2 * g.count),
                                dtype=np.uint16).copy()
        raw = np.frombuffer(PyBytes_FromStringAndSize(<const char *>p.raw,
                                                      p.nraw * x.dtype.itemsize),
                            dtype=x.dtype).copy()
        values = np.frombuffer(PyBytes_FromStringAndSize(<const char *>p.v, 8 * g.count),
                               dtype=np.float64).copy()
    finally:
        zdt__pred_free(&p, NULL)
    return Prediction(symbols, raw, values)
