"""ctypes bindings of libzdt-predict for the tools beside this file (not part of zdt yet): the
structs of include/zdt_predict.h and one `decode` that gives a NumPy array or raises
CorruptChunkError-like errors (DecodeError, with the status and the part)."""

from __future__ import annotations

import ctypes
import math
import os
from pathlib import Path

import numpy as np

MAX_DIMS = 32
DTYPES = {"float32": 1, "float64": 2, "int8": 3, "uint8": 4, "int16": 5, "uint16": 6,
          "int32": 7, "uint32": 8}
BY_CODE = {v: np.dtype(k) for k, v in DTYPES.items()}


class Params(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_uint32), ("dtype", ctypes.c_uint32),
                ("ndim", ctypes.c_uint32), ("shape", ctypes.c_uint64 * MAX_DIMS),
                ("abs_error", ctypes.c_double), ("has_fill", ctypes.c_int),
                ("fill", ctypes.c_double), ("reference", ctypes.POINTER(ctypes.c_uint8)),
                ("reference_shape", ctypes.c_uint64 * 2),
                # the encoder's configuration
                ("rel_error", ctypes.c_double), ("predictor", ctypes.c_int),
                ("entropy", ctypes.c_int), ("level", ctypes.c_int),
                ("keep", ctypes.POINTER(ctypes.c_int64)), ("n_keep", ctypes.c_size_t),
                # the providers (NULL: libzstd; no pcodec)
                ("zstd", ctypes.c_void_p), ("pcodec", ctypes.c_void_p)]


PREDICTORS = {"auto": 0, "lorenzo": 1, "interpolation": 2, "interpolation_reversed": 3,
              "interpolation_slices": 4}
ENTROPY = {"auto": -1, "zstd": 0, "pcodec": 1, "pcodec_levels": 2, "ans": 3}


class Error(ctypes.Structure):
    _fields_ = [("status", ctypes.c_int), ("part", ctypes.c_char * 32),
                ("message", ctypes.c_char * 256)]


class DecodeError(ValueError):
    def __init__(self, status: int, part: str, message: str) -> None:
        super().__init__(message)
        self.status, self.part = status, part


def default_library() -> Path:
    here = Path(__file__).resolve().parent.parent
    return Path(os.environ.get("ZDT_PREDICT_LIB", here / "build" / "libzdt-predict.so"))


class Library:
    def __init__(self, path: Path | str | None = None) -> None:
        self.lib = ctypes.CDLL(str(path or default_library()))
        lib = self.lib
        lib.zdt_predict_params_init.argtypes = [ctypes.POINTER(Params)]
        lib.zdt_predict_decoded_size.argtypes = [ctypes.POINTER(Params),
                                                 ctypes.POINTER(ctypes.c_size_t),
                                                 ctypes.POINTER(Error)]
        lib.zdt_predict_decode.argtypes = [ctypes.c_void_p, ctypes.c_size_t,
                                           ctypes.POINTER(Params), ctypes.c_void_p,
                                           ctypes.c_size_t, ctypes.POINTER(Error)]
        lib.zdt_predict_numcodecs_header.argtypes = [ctypes.c_void_p, ctypes.c_size_t,
                                                     ctypes.POINTER(Params),
                                                     ctypes.POINTER(ctypes.c_size_t),
                                                     ctypes.POINTER(Error)]
        lib.zdt_predict_reference_decode.argtypes = [ctypes.c_void_p, ctypes.c_size_t,
                                                     ctypes.c_uint64, ctypes.c_uint64,
                                                     ctypes.c_void_p, ctypes.POINTER(Error)]
        lib.zdt_predict_version_string.restype = ctypes.c_char_p
        lib.zdt_predict_encode_bound.argtypes = [ctypes.POINTER(Params)]
        lib.zdt_predict_encode_bound.restype = ctypes.c_size_t
        lib.zdt_predict_encode.argtypes = [ctypes.c_void_p, ctypes.c_size_t,
                                           ctypes.POINTER(Params), ctypes.c_void_p,
                                           ctypes.c_size_t, ctypes.POINTER(ctypes.c_size_t),
                                           ctypes.POINTER(Error)]

    @property
    def version(self) -> str:
        return self.lib.zdt_predict_version_string().decode()

    def _raise(self, rc: int, err: Error) -> None:
        if rc:
            raise DecodeError(rc, err.part.decode(), err.message.decode())

    def reference(self, shape: tuple[int, int], stream: bytes) -> np.ndarray:
        bits = np.empty(shape[0] * shape[1], dtype=np.uint8)
        err = Error()
        self._raise(self.lib.zdt_predict_reference_decode(stream, len(stream), shape[0],
                                                          shape[1], bits.ctypes.data,
                                                          ctypes.byref(err)), err)
        return bits

    def encode(self, x: np.ndarray, abs_error: float | None = None,
               rel_error: float | None = None, predictor: str = "auto", entropy: str = "auto",
               level: int = 3, fill: float | None = None, keep: tuple[int, ...] = (),
               reference: tuple[tuple[int, int], np.ndarray] | None = None) -> bytes:
        """The chunk the C encoder writes for the array x (C order) and this configuration."""
        x = np.ascontiguousarray(x)
        p = Params()
        self.lib.zdt_predict_params_init(ctypes.byref(p))
        p.dtype = DTYPES[x.dtype.name]
        p.ndim = x.ndim
        for d, n in enumerate(x.shape):
            p.shape[d] = n
        p.abs_error = 0.0 if abs_error is None else abs_error
        p.rel_error = 0.0 if rel_error is None else rel_error
        p.predictor = PREDICTORS[predictor]
        p.entropy = ENTROPY[entropy]
        p.level = level
        if fill is not None:
            p.has_fill, p.fill = 1, fill
        kept = np.asarray(sorted(set(int(v) for v in keep)), dtype=np.int64)
        if kept.size:
            p.keep = kept.ctypes.data_as(ctypes.POINTER(ctypes.c_int64))
            p.n_keep = kept.size
        if reference is not None:
            (rows, cols), bits = reference
            p.reference = bits.ctypes.data_as(ctypes.POINTER(ctypes.c_uint8))
            p.reference_shape[0], p.reference_shape[1] = rows, cols
        bound = self.lib.zdt_predict_encode_bound(ctypes.byref(p))
        err = Error()
        out = np.empty(max(bound, 1), dtype=np.uint8)     # (not zero-filled)
        written = ctypes.c_size_t(0)
        self._raise(self.lib.zdt_predict_encode(x.ctypes.data, x.nbytes, ctypes.byref(p),
                                                out.ctypes.data, out.nbytes,
                                                ctypes.byref(written), ctypes.byref(err)), err)
        return out[:written.value].tobytes()

    def decode(self, data: bytes, dtype: np.dtype | str | None = None,
               shape: tuple[int, ...] | None = None, abs_error: float | None = None,
               fill: float | None = None, reference: tuple[tuple[int, int], np.ndarray] | None = None,
               numcodecs: bool = False) -> np.ndarray:
        """The chunk `data` decoded (numcodecs: the face's buffer, whose shape and type it
        carries)."""
        p = Params()
        self.lib.zdt_predict_params_init(ctypes.byref(p))
        err = Error()
        offset = ctypes.c_size_t(0)
        if numcodecs:
            self._raise(self.lib.zdt_predict_numcodecs_header(data, len(data), ctypes.byref(p),
                                                              ctypes.byref(offset),
                                                              ctypes.byref(err)), err)
            shape = tuple(p.shape[d] for d in range(p.ndim))
        else:
            p.dtype = DTYPES[np.dtype(dtype).name]
            p.ndim = len(shape)
            for d, n in enumerate(shape):
                p.shape[d] = n
        p.abs_error = 0.0 if abs_error is None else abs_error
        if fill is not None:
            p.has_fill, p.fill = 1, fill
        if reference is not None:
            (rows, cols), bits = reference
            p.reference = bits.ctypes.data_as(ctypes.POINTER(ctypes.c_uint8))
            p.reference_shape[0], p.reference_shape[1] = rows, cols
        size = ctypes.c_size_t(0)
        self._raise(self.lib.zdt_predict_decoded_size(ctypes.byref(p), ctypes.byref(size),
                                                      ctypes.byref(err)), err)
        out = np.empty(math.prod(shape), dtype=BY_CODE[p.dtype])
        chunk = data[offset.value:]
        self._raise(self.lib.zdt_predict_decode(chunk, len(chunk), ctypes.byref(p),
                                                out.ctypes.data, out.nbytes,
                                                ctypes.byref(err)), err)
        return out.reshape(shape)
