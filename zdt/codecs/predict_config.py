"""zdt.predict's configuration: PredictConfig (the codec's JSON configuration, checked), its
reference mask (ReferenceMask) and the data types it takes. What a chunk is and how it is
written and read: zdt.codecs.predict_chunk (the C library, zdt.kernels._predict_core)."""

from __future__ import annotations

import base64
import binascii
import functools
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from zdt.codecs import predict_chunk
from zdt.codecs.config_json import check_keys
from zdt.errors import ConfigError
from zdt.kernels import _predict_core

CODEC = "zdt.predict"
PREDICTORS = {"lorenzo": 1, "interpolation": 2, "interpolation_reversed": 3,
              "interpolation_slices": 4}
CHOICES = ("auto", *PREDICTORS)
STAGES = {"zstd": 0, "pcodec": 1, "pcodec_levels": 2, "ans": 3}   # the header's entropy-stage field
STAGE_CHOICES = ("auto", *STAGES)
# how hard `auto` looks for the smallest chunk (the C library's effort codes); "default" is
# also what an absent key means, and is not written
EFFORTS = {"fast": 1, "default": 0, "max": 2}
KEYS = ("abs_error", "rel_error", "predictor", "level", "entropy", "keep", "fill", "mask",
        "effort")
# the most bits a reference mask may have (its stream is decoded when the codec is created)
REFERENCE_BITS = 1 << 31
# the JSON of a non-finite `fill`
NONFINITE = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}
DTYPES = (np.dtype("float32"), np.dtype("float64"))
# integer arrays: coded as float64 values (exact for every one of these types) within a bound
# just under k + 1/2 and rounded back (docs/codecs/predict.md, "Integer data types"); 64-bit
# integers are not (float64 holds them exactly only up to 2**53)
INTEGERS = tuple(np.dtype(t) for t in ("int8", "uint8", "int16", "uint16", "int32", "uint32"))


@dataclass(frozen=True)
class ReferenceMask:
    """The configuration's `mask`: a reference for the masks of chunks whose last two extents
    (as a 4-d grid) are its shape; their first slice's mask looks back at it as a later slice
    looks back at the one before (a land mask repeated in every chunk along time then costs
    next to nothing in each). JSON: {"shape": [n2, n3], "stream": base64 of its mask stream,
    coded over the grid (1, 1, n2, n3)}."""

    shape: tuple[int, int]
    stream: bytes
    bits: np.ndarray = field(compare=False, repr=False)    # uint8[n2 n3], 1: masked

    @classmethod
    def of(cls, mask: np.ndarray) -> ReferenceMask:
        """The reference mask of a 2-d boolean array (a slice's mask)."""
        mask = np.ascontiguousarray(mask, dtype=bool)
        if mask.ndim != 2 or not mask.size:
            raise ValueError(f"{CODEC}: a reference mask is 2-d and not empty, not of shape "
                             f"{mask.shape}")
        bits = mask.reshape(-1).view(np.uint8)
        shape = (int(mask.shape[0]), int(mask.shape[1]))
        return cls(shape, _predict_core.mask_encode(bits, (1, 1, *shape)), bits.copy())

    @classmethod
    def from_json(cls, value: object) -> ReferenceMask:
        def bad(why: str) -> ConfigError:
            return ConfigError(f"{CODEC}: mask must be {{\"shape\": [n2, n3], \"stream\": "
                               f"base64 of a mask stream}}: {why}", config_key="mask")
        if not isinstance(value, Mapping) or set(value) != {"shape", "stream"}:
            raise bad(f"got {value!r}")
        shape, text = value["shape"], value["stream"]
        if (not isinstance(shape, (list, tuple)) or len(shape) != 2
                or any(isinstance(k, bool) or not isinstance(k, int) or k < 1 for k in shape)
                or shape[0] * shape[1] > REFERENCE_BITS):
            raise bad(f"its shape {shape!r} is not two extents >= 1 (at most 2^31 bits)")
        if not isinstance(text, str):
            raise bad(f"its stream {text!r} is not a base64 string")
        try:
            stream = base64.b64decode(text.encode("ascii"), validate=True)
            bits = _predict_core.reference_decode(stream, int(shape[0]), int(shape[1]))
        except (ValueError, UnicodeEncodeError, binascii.Error) as exc:
            raise bad(f"its stream does not decode: {exc}") from None
        return cls((int(shape[0]), int(shape[1])), bytes(stream), bits)

    def to_json(self) -> dict[str, Any]:
        return {"shape": list(self.shape), "stream": base64.b64encode(self.stream).decode("ascii")}

    def for_grid(self, shape: tuple[int, int, int, int]) -> np.ndarray | None:
        """Its bits where a chunk of the 4-d grid `shape` looks back at it, else None."""
        return self.bits if tuple(shape[2:]) == self.shape else None


@dataclass(frozen=True)
class PredictConfig:
    """The codec's configuration (docs/codecs/predict.md, "Configuration")."""

    abs_error: float | None         # |decoded - x| <= abs_error (None: the bound is relative)
    predictor: str = "auto"
    level: int = 3
    entropy: str = "auto"
    keep: tuple[int, ...] = ()      # integer arrays: values stored exactly (missing-data marks)
    rel_error: float | None = None  # |decoded - x| <= rel_error |x| (format-2 chunks)
    # float arrays: the value the fill-value symbol stands for, in place of the array's fill
    # value (a CF _FillValue the data hold where the zarr fill value is NaN)
    fill: float | None = None
    mask: ReferenceMask | None = None   # masked chunks' reference (ReferenceMask)
    effort: str = "default"         # the encoder's search: "fast", "default" or "max"

    @classmethod
    def create(cls, *, abs_error: object = None, predictor: object = "auto", level: object = 3,
               entropy: object = "auto", keep: object = (), rel_error: object = None,
               fill: object = None, mask: object = None,
               effort: object = "default") -> PredictConfig:
        if (abs_error is None) == (rel_error is None):
            raise ConfigError(f"{CODEC}: give one of abs_error and rel_error (both together: not "
                              f"yet)", config_key="rel_error" if rel_error is not None else "abs_error")
        key, bound = ("abs_error", abs_error) if abs_error is not None else ("rel_error", rel_error)
        if isinstance(bound, bool) or not isinstance(bound, (int, float)) \
                or not math.isfinite(bound) or bound <= 0:
            raise ConfigError(f"{CODEC}: {key} must be a finite number > 0, got {bound!r}",
                              config_key=key)
        if predictor not in CHOICES:
            raise ConfigError(f"{CODEC}: predictor must be one of {', '.join(CHOICES)}, got {predictor!r}",
                              config_key="predictor")
        if isinstance(level, bool) or not isinstance(level, int) or not -7 <= level <= 22:
            raise ConfigError(f"{CODEC}: level must be an integer from -7 to 22, got {level!r}",
                              config_key="level")
        if entropy not in STAGE_CHOICES:
            raise ConfigError(f"{CODEC}: entropy must be one of {', '.join(STAGE_CHOICES)}, got "
                              f"{entropy!r}", config_key="entropy")
        if entropy == "pcodec_levels" and predictor == "lorenzo":
            raise ConfigError(f"{CODEC}: entropy 'pcodec_levels' goes with the interpolation "
                              f"predictors (Lorenzo has no levels)", config_key="entropy")
        if entropy in ("pcodec", "pcodec_levels") and _predict_core.pcodec_module() is None:
            raise ConfigError(f"{CODEC}: entropy {entropy!r} needs the pcodec package (pip "
                              f"install pcodec)", config_key="entropy")
        if not isinstance(keep, (list, tuple)) or any(
                isinstance(v, bool) or not isinstance(v, int) for v in keep):
            raise ConfigError(f"{CODEC}: keep must be a list of integers (the values of an "
                              f"integer array stored exactly), got {keep!r}", config_key="keep")
        if fill is not None and (isinstance(fill, bool) or not (
                isinstance(fill, (int, float)) or (isinstance(fill, str) and fill in NONFINITE))):
            raise ConfigError(f"{CODEC}: fill must be a number, \"NaN\", \"Infinity\" or "
                              f"\"-Infinity\", got {fill!r}", config_key="fill")
        if not isinstance(effort, str) or effort not in EFFORTS:
            raise ConfigError(f"{CODEC}: effort must be one of {', '.join(EFFORTS)}, got "
                              f"{effort!r}", config_key="effort")
        reference = mask if isinstance(mask, ReferenceMask) or mask is None else \
            ReferenceMask.from_json(mask)
        return cls(None if abs_error is None else float(abs_error), str(predictor), int(level),
                   str(entropy), tuple(sorted({int(v) for v in keep})),
                   None if rel_error is None else float(rel_error),
                   None if fill is None else float(NONFINITE.get(fill, fill)),  # type: ignore[arg-type]
                   reference, str(effort))

    @classmethod
    def from_json(cls, config: Mapping[str, Any]) -> PredictConfig:
        return cls.create(**check_keys(config, KEYS, CODEC))

    def to_json(self) -> dict[str, Any]:
        bound = {"abs_error": self.abs_error} if self.rel_error is None else {"rel_error": self.rel_error}
        out = {**bound, "predictor": self.predictor, "level": self.level, "entropy": self.entropy}
        if self.keep:
            out["keep"] = list(self.keep)
        if self.fill is not None:
            f = self.fill
            out["fill"] = f if math.isfinite(f) else ("NaN" if math.isnan(f) else
                                                      ("Infinity" if f > 0 else "-Infinity"))
        if self.mask is not None:
            out["mask"] = self.mask.to_json()
        if self.effort != "default":
            out["effort"] = self.effort
        return out

    def check_dtype(self, dtype: np.dtype) -> np.dtype:
        """The native form of the array's data type; ConfigError for a type the codec does not
        take, or `keep` with a float type (which keeps NaN and the infinities itself)."""
        native = check_dtype(dtype)
        if self.keep and native.kind == "f":
            raise ConfigError(f"{CODEC}: keep applies to integer arrays, not {dtype}",
                              config_key="keep")
        if self.rel_error is not None and native.kind != "f":
            raise ConfigError(f"{CODEC}: rel_error on integer arrays ({dtype}): not yet (use "
                              f"abs_error)", config_key="rel_error")
        if self.fill is not None and native.kind != "f":
            raise ConfigError(f"{CODEC}: fill applies to float arrays (integer arrays: keep), "
                              f"not {dtype}", config_key="fill")
        return native


    # --- chunks (zdt.codecs.predict_chunk) ----------------------------------------------------

    @property
    def core(self) -> _predict_core.Codec:
        """The C library's parameters for this configuration (built once for equal ones)."""
        return _core(self)

    def encode(self, arr: np.ndarray, fill: object = None) -> bytes:
        """The chunk bytes of `arr` (float32, float64 or an integer type of INTEGERS, any
        shape); `fill`: the array's fill value (kept bit for bit), or None."""
        return predict_chunk.encode(self, arr, fill)

    def decode(self, data: object, dtype: np.dtype, shape: tuple[int, ...],
               fill: object = None) -> np.ndarray:
        """The chunk of `shape` and `dtype` that `data` holds; CorruptChunkError naming what is
        wrong with a corrupt chunk."""
        return predict_chunk.decode(self, data, dtype, shape, fill)


@functools.lru_cache(maxsize=64)
def _core(config: PredictConfig) -> _predict_core.Codec:
    reference = None if config.mask is None else config.mask.bits
    return _predict_core.Codec(
        0.0 if config.abs_error is None else config.abs_error,
        0.0 if config.rel_error is None else config.rel_error,
        0 if config.predictor == "auto" else PREDICTORS[config.predictor],
        -1 if config.entropy == "auto" else STAGES[config.entropy], config.level, config.keep,
        reference, (0, 0) if config.mask is None else config.mask.shape, EFFORTS[config.effort])

def check_dtype(dtype: np.dtype, integers: bool = True) -> np.dtype:
    """The native form of a data type the codec takes (with `integers`, those of INTEGERS too);
    ConfigError otherwise."""
    native = dtype.newbyteorder("=")
    if native in DTYPES or (integers and native in INTEGERS):
        return native
    takes = "float32, float64 or 8- to 32-bit integer" if integers else "float32 or float64"
    why = " (64-bit integers: not yet, float64 holds them exactly only up to 2**53)" if (
        integers and dtype.kind in "iu" and dtype.itemsize == 8) else ""
    raise ConfigError(f"{CODEC}: takes {takes} arrays, not {dtype}{why}", config_key="data_type")
