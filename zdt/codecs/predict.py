"""zdt.predict: error-bounded prediction (array -> bytes), what its zarr v3 codec and numcodecs
codec compute. The spec, byte layout included, is docs/codecs/predict.md; the kernels are in
zdt.kernels._predict.

A chunk is predicted element by element from neighbours already reconstructed, the prediction
error quantized in steps of 2E into 16-bit symbols, the values that cannot be predicted within E
stored exactly. Behind a 16-byte header, one of four entropy stages (the header says which):
3, zdt's own rANS with a table for each context (level group, the neighbours' codes;
zdt.kernels._ans), what `entropy="auto"` writes; 0, the symbols as byte planes and the
exact values in one zstd frame, which auto also tries where many codes are wide (it finds long
repeats that stage 3 does not); 1 and 2, the symbols in pcodec's standalone format (2: each
level group apart), readable and still written when asked for.

An integer array (int8 .. uint32) is coded as its values in float64 within a bound just below
k + 1/2, k = floor(E), and decoded to the nearest integer (integer_bound): within k of the
original, the original itself when E < 1 (CF-packed data: the engine passes the bound in
stored units, a whole number of steps).

A chunk with elements equal to the fill value may be a masked chunk (format 2, kind 2): the
mask in a stream of its own (zdt.kernels._ans), then a format-1 chunk in which the masked
elements have no symbol; which of the two formats encode measures depends on how the mask
stream compares with the entropy of as many scattered masked elements (mask_formats).

Format 3 is format 1 with a step for each interpolation level (2E / f_s, f_s from the alpha
and beta after its header): where a prediction codes nearly every element as 0 (a smooth
field at a coarse bound), finer steps at the coarse levels leave the fine levels less to
code; encode packs it too there (level_variants) and keeps the smaller chunk.

A corrupt chunk is a zdt.errors.CorruptChunkError (a ValueError) naming what is wrong and the
part of the chunk (`part`) it is in.
"""

from __future__ import annotations

import base64
import binascii
import functools
import itertools
import math
import struct
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from zdt.codecs.config_json import check_keys
from zdt.errors import ConfigError
from zdt.kernels import _ans, _predict

CODEC = "zdt.predict"
MAGIC = b"ZPR1"
FORMAT_MAGIC = b"ZPR"     # the magic's fourth byte is the format version: "1", "2", "3"
FORMAT2_MAGIC = b"ZPR2"   # format 2: a chunk of parts (pointwise-relative: zdt.codecs.predict_relative)
FORMAT3_MAGIC = b"ZPR3"   # format 3: format 1 with a step of its own for each interpolation level
HEADER = struct.Struct("<4sBBHQ")      # magic, predictor, element size, entropy stage, n_raw
LEVEL_STEPS = struct.Struct("<dd")     # format 3, after the header: alpha, beta (level_steps)
# format 3's alpha and beta lie in [1, STEPS_MAX] (else a corrupt chunk)
STEPS_MAX = 1024.0
# the (alpha, beta) the encoder tries where at least LEVEL_ZEROS of a prediction's symbols are
# code 0 (a smooth field at a coarse bound: the coarse levels, predicted more closely, leave
# the fine ones nothing to code; below that share it wrote more on every chunk of bench_bytes)
STEPS_TRIED = ((1.125, 1.5), (1.25, 2.0))
LEVEL_ZEROS = 0.9
# format 2's first byte after the magic is its kind: 1 pointwise relative
# (zdt.codecs.predict_relative), 2 masked
MASKED_KIND = 2
# a masked chunk: magic, kind, element size, reserved, n_masked, the mask stream's length
MASKED_HEADER = struct.Struct("<4sBBHQQ")
PREDICTORS = {"lorenzo": 1, "interpolation": 2, "interpolation_reversed": 3,
              "interpolation_slices": 4}
CHOICES = ("auto", *PREDICTORS)
STAGES = {"zstd": 0, "pcodec": 1, "pcodec_levels": 2, "ans": 3}   # the header's entropy-stage field
INTERPOLATING = (2, 3, 4)               # the predictors stage 2 (levels) goes with
GROUPS = 4                              # stage 2: levels 1, 2, 4, and the rest
STAGE_CHOICES = ("auto", *STAGES)
PCO_LENGTH = struct.Struct("<Q")        # stage 1: the pcodec data's length, ahead of it
PCODEC_LEVEL = 8
KEYS = ("abs_error", "rel_error", "predictor", "level", "entropy", "keep", "fill", "mask")
# a masked chunk's header field at offset 6: 0, or LOOKS_BACK: its mask stream's first slice
# looks back at the configuration's reference mask (`mask`)
LOOKS_BACK = 1
# the most bits a reference mask may have (its stream is decoded when the codec is created)
REFERENCE_BITS = 1 << 31
# the JSON of a non-finite `fill`
NONFINITE = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}
DTYPES = (np.dtype("float32"), np.dtype("float64"))
# integer arrays: coded as float64 values (exact for every one of these types) within a bound
# just under k + 1/2 and rounded back (integer_bound; docs/codecs/predict.md, "Integer data
# types"); 64-bit integers are not (float64 holds them exactly only up to 2**53)
INTEGERS = tuple(np.dtype(t) for t in ("int8", "uint8", "int16", "uint16", "int32", "uint32"))
WORKING = np.dtype("float64")           # the chunk's element type for an integer array
# an integer stored exactly: a raw value that is a quiet NaN whose significand's low 33 bits
# hold the integer plus 2**32 (escape / escaped)
ESCAPE = 0x7FF8_0000_0000_0000
ESCAPE_BIAS = 1 << 32
ESCAPE_ROUNDS = 4       # encodes that escape what decoded to a kept value, before the sure way


ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"


# the error of a corrupt chunk: corrupt(message, part) -> CorruptChunkError naming the codec
# and where in the chunk (the kernels raise the same)
corrupt = _predict.corrupt


def frame_content_size(frame: bytes | memoryview) -> int:
    """The content size a zstd frame declares in its header (RFC 8878, 3.1.1.1); ValueError if
    the bytes are no zstd frame or the frame does not declare it (the spec requires it). Read
    here rather than trusted to the zstd binding: decompressing into a buffer of the expected
    size would leave a shorter frame's tail uninitialised instead of failing."""
    if len(frame) < 5 or bytes(frame[:4]) != ZSTD_MAGIC:
        raise corrupt(f"the payload is not a zstd frame (magic {bytes(frame[:4])!r})", "zstd frame")
    descriptor = frame[4]
    fcs_flag, single_segment, dict_flag = descriptor >> 6, (descriptor >> 5) & 1, descriptor & 3
    if descriptor & 0x08:
        raise corrupt("the zstd frame header sets its reserved bit", "zstd frame")
    fcs_size = (1 if single_segment else 0, 2, 4, 8)[fcs_flag]
    if fcs_size == 0:
        raise corrupt("the zstd frame does not declare its content size", "zstd frame")
    start = 5 + (0 if single_segment else 1) + (0, 1, 2, 4)[dict_flag]
    if len(frame) < start + fcs_size:
        raise corrupt("the zstd frame header is truncated", "zstd frame")
    size = int.from_bytes(bytes(frame[start:start + fcs_size]), "little")
    return size + 256 if fcs_size == 2 else size


def grid4(shape: tuple[int, ...]) -> tuple[int, int, int, int]:
    """The spec's shape: extents of 1 dropped, leading dimensions beyond four merged, then
    padded with leading 1s to four (the kernels' form)."""
    dims = [int(n) for n in shape if n != 1]
    while len(dims) > 4:
        dims[:2] = [dims[0] * dims[1]]
    return tuple([1] * (4 - len(dims)) + dims)        # type: ignore[return-value]


def _pcodec() -> Any:
    """pcodec's standalone module (`pip install pcodec`: zdt[zarr] brings it)."""
    try:
        from pcodec import standalone
    except ImportError:
        return None
    return standalone


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
        return cls(shape, _ans.mask_encode(bits, (1, 1, *shape)), bits.copy())

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
            bits, _, rest = _ans.mask_decode(stream, (1, 1, int(shape[0]), int(shape[1])))
        except (ValueError, UnicodeEncodeError, binascii.Error) as exc:
            raise bad(f"its stream does not decode: {exc}") from None
        if len(rest):
            raise bad(f"{len(rest)} bytes after its stream")
        return cls((int(shape[0]), int(shape[1])), bytes(stream), bits)

    def to_json(self) -> dict[str, Any]:
        return {"shape": list(self.shape), "stream": base64.b64encode(self.stream).decode("ascii")}

    def for_grid(self, shape: tuple[int, int, int, int]) -> np.ndarray | None:
        """Its bits where a chunk of the 4-d grid `shape` looks back at it, else None."""
        return self.bits if tuple(shape[2:]) == self.shape else None


@dataclass(frozen=True)
class PredictConfig:
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

    @classmethod
    def create(cls, *, abs_error: object = None, predictor: object = "auto", level: object = 3,
               entropy: object = "auto", keep: object = (), rel_error: object = None,
               fill: object = None, mask: object = None) -> PredictConfig:
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
        if entropy in ("pcodec", "pcodec_levels") and _pcodec() is None:
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
        reference = mask if isinstance(mask, ReferenceMask) or mask is None else \
            ReferenceMask.from_json(mask)
        return cls(None if abs_error is None else float(abs_error), str(predictor), int(level),
                   str(entropy), tuple(sorted({int(v) for v in keep})),
                   None if rel_error is None else float(rel_error),
                   None if fill is None else float(NONFINITE.get(fill, fill)),  # type: ignore[arg-type]
                   reference)

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

    # --- chunks -------------------------------------------------------------------------------

    def encode(self, arr: np.ndarray, fill: object = None) -> bytes:
        """The chunk bytes of `arr` (float32, float64 or an integer type of INTEGERS, any
        shape); `fill`: the array's fill value (kept bit for bit), or None."""
        dtype = self.check_dtype(arr.dtype)
        fill = self.fill if self.fill is not None else fill     # (the codec's own, if it has one)
        if dtype.kind in "iu":
            return self._encode_integers(np.asarray(arr, dtype=dtype), fill)
        if self.rel_error is not None:
            from zdt.codecs import predict_relative

            return predict_relative.encode(self, np.asarray(arr, dtype=dtype), fill)
        return self.encode_floats(np.asarray(arr, dtype=dtype), fill)[0]

    def encode_floats(self, arr: np.ndarray, fill: object, *,
                      formats: tuple[str, ...] | None = None) -> tuple[bytes, np.ndarray]:
        """The chunk of the float32 / float64 array `arr` under abs_error (`fill`: the fill
        value `encode` resolved, or None), and what a decoder gives its elements: float64 in
        flat C order, bit for bit where an element is finite and not the fill value (elsewhere
        without meaning; those elements decode to themselves). The relative chunks' encoder
        checks its elements against these without decoding the chunk. `formats`: where some
        elements equal the fill value, the formats measured ("masked": a masked chunk,
        "plain": format 1 with fill-value symbols), the smaller kept; None: mask_formats'."""
        dtype = arr.dtype
        x = np.ascontiguousarray(arr, dtype=dtype).reshape(-1)
        shape = grid4(arr.shape)
        fills = fill_array(fill, dtype)
        # (1 where an element is the fill value bit for bit; None where none is)
        mask = _predict.fill_mask(x, fills)
        if mask is None:
            return self._encode_values(x, shape, dtype, fills)
        n_masked = int(np.count_nonzero(mask))
        stream, looks = _ans.mask_encode(mask, shape), 0
        reference = None if self.mask is None else self.mask.for_grid(shape)
        if reference is not None:
            # (the first slice looking back at the reference, where that codes it smaller)
            back = _ans.mask_encode(mask, shape, reference)
            if len(back) < len(stream):
                stream, looks = back, LOOKS_BACK
        if formats is None:
            formats = mask_formats(len(stream), n_masked, x.size)
        head = MASKED_HEADER.pack(FORMAT2_MAGIC, MASKED_KIND, dtype.itemsize, looks, n_masked,
                                  len(stream)) + stream
        return self._encode_values(x, shape, dtype, fills, mask, head, formats)

    def _encode_values(self, x: np.ndarray, shape: tuple[int, int, int, int], dtype: np.dtype,
                       fills: np.ndarray, mask: np.ndarray | None = None, head: bytes = b"",
                       formats: tuple[str, ...] = ("plain",)) -> tuple[bytes, np.ndarray]:
        """The smallest chunk of the flat chunk `x` (of 4-d `shape`) over the predictors and
        stages tried, and its predictor values (encode_floats): format 1, and with `mask` (the
        elements equal to the fill value) and "masked" among `formats`, masked chunks too
        (`head`: their header and mask stream; then a format-1 chunk without the masked
        elements' symbols). Both formats pack the same predictions: a masked element is
        reconstructed as a fill-value symbol is, and only the symbols stage 3 records differ."""
        only_masked = mask is not None and formats == ("masked",)
        best: dict[str, tuple[bytes, np.ndarray]] = {}
        for name, first in choose_predictors(self, x, shape, fills, only_masked):
            for steps, prediction in [(None, first), *level_variants(self, x, shape, fills, name,
                                                                     first, only_masked)]:
                for form in formats:
                    masked = form == "masked"
                    p = prediction if only_masked or not masked else without_masked(prediction)
                    for stage in self._stages(p):
                        out = self._pack(PREDICTORS[name], dtype, p, stage, shape,
                                         mask if masked else None, steps)
                        out = head + out if masked else out
                        if form not in best or len(out) < len(best[form][0]):
                            best[form] = out, prediction.values
        plain, masked_best = best.get("plain"), best.get("masked")
        if masked_best is not None and (plain is None or len(masked_best[0]) < len(plain[0])):
            return masked_best
        assert plain is not None
        return plain

    def _stages(self, prediction: Any) -> list[str]:
        """The entropy stages tried for a predictor's symbols. `auto`: stage 3 (zdt's own
        context-modelled rANS), and zstd as well where more than WIDE_SHARE of the codes are
        wide (symbols >= 16: codes c >= 7 or c <= -8, tokens with extra bits): their low bits,
        which stage 3 stores as they are, may repeat in patterns zstd finds (data quantized at
        its source: an elevation model in steps of 28 m codes multiples of 28 at a bound of
        0.5 m). The pcodec stages stay readable and
        can be asked for; stage 3 codes smaller on every row of bench_bytes."""
        if self.entropy != "auto":
            return [self.entropy]
        order = prediction.order
        wide = int(order.counts[:, WIDE_SYMBOL:].sum())     # (symbols >= 16: tokens >= 16)
        return ["ans", "zstd"] if wide > WIDE_SHARE * len(order.symbols) else ["ans"]

    def _pack(self, predictor: int, dtype: np.dtype, prediction: Any, stage: str,
              shape: tuple[int, int, int, int], mask: np.ndarray | None = None,
              steps: tuple[float, float] | None = None) -> bytes:
        """A format-1 chunk of the prediction by `stage` (format 3 with the levels' `steps`,
        alpha and beta, it was made with); with `mask`, a masked chunk's values' chunk: the
        masked elements' symbols left out (stage 3's order has none of them)."""
        from numcodecs.zstd import Zstd

        sym, raw = prediction.symbols, prediction.raw
        unmasked = None if mask is None or stage == "ans" else mask == 0
        if unmasked is not None and stage in ("zstd", "pcodec"):
            sym = sym[unmasked]
        raw_bytes = raw.astype(dtype.newbyteorder("<")).tobytes()
        head = HEADER.pack(MAGIC if steps is None else FORMAT3_MAGIC, predictor, dtype.itemsize,
                           STAGES[stage], len(raw))
        if steps is not None:
            head += LEVEL_STEPS.pack(*steps)
        if stage != "zstd":
            # the symbols by stage 3 or pcodec, then the raw values' own frame (none when there
            # is no raw value: numcodecs' zstd cannot decode an empty one)
            frame = bytes(Zstd(level=self.level).encode(raw_bytes)) if len(raw) else b""
            if stage == "ans":      # in visit order, through zdt's own rANS
                order = prediction.order
                return head + _ans.pack(order.symbols, order.contexts, order.counts) + frame
            levels = stage == "pcodec_levels"
            parts = [head]
            for where in level_groups(shape, predictor, unmasked) if levels else [slice(None)]:
                # (stage 2: a group without elements has no pcodec data, length 0)
                codes = _pco_compress(sym[where]) if len(sym[where]) or not levels else b""
                parts += [PCO_LENGTH.pack(len(codes)), codes]
            return b"".join([*parts, frame])
        low = (sym & 0xFF).astype(np.uint8)
        high = (sym >> 8).astype(np.uint8)
        frame = Zstd(level=self.level).encode(b"".join((low.tobytes(), high.tobytes(), raw_bytes)))
        return head + bytes(frame)

    def for_integers(self) -> PredictConfig:
        """The configuration that codes an integer array's values as float64: the bound
        integer_bound(abs_error)."""
        assert self.abs_error is not None
        return PredictConfig(integer_bound(self.abs_error), self.predictor, self.level, self.entropy,
                             mask=self.mask)

    def _encode_integers(self, x: np.ndarray, fill: object) -> bytes:
        """The values as float64 within integer_bound; the values of `keep` escaped (stored
        exactly); and where another value would decode to a kept one or the fill value, that
        value escaped too, until none does (each round escapes at least one more element;
        after ESCAPE_ROUNDS, every value within k of a kept one, which settles it)."""
        kept = np.asarray([*self.keep, *([] if fill is None else [int(fill)])], dtype=np.int64)
        xi = x.astype(np.int64)
        is_kept = np.isin(xi, kept)
        escaped = np.isin(xi, np.asarray(self.keep, dtype=np.int64))
        if fill is not None:
            escaped &= xi != int(fill)      # (the fill value: its own symbol)
        k = whole_steps(self.abs_error)
        others = xi[~is_kept]
        # (only a kept value within k of another value can be decoded to)
        at_risk = others.size and kept.size and bool(
            ((kept >= others.min() - k) & (kept <= others.max() + k)).any())
        config = self.for_integers()
        for rounds in itertools.count(1):
            xf = xi.astype(WORKING)
            xf[escaped] = ((xi[escaped] + ESCAPE_BIAS).astype(np.uint64)
                           | np.uint64(ESCAPE)).view(WORKING)
            data = config.encode(xf, fill)
            if not at_risk:
                return data
            y = self.decode(data, x.dtype, x.shape, fill).astype(np.int64)
            wrong = np.isin(y, kept) & ~is_kept
            if not wrong.any():
                return data
            escaped |= wrong
            if rounds == ESCAPE_ROUNDS:     # (only these can decode to a kept value)
                escaped |= (np.abs(xi[..., None] - kept) <= k).any(axis=-1) & ~is_kept
                at_risk = False
        raise AssertionError("unreachable")

    def decode(self, data: object, dtype: np.dtype, shape: tuple[int, ...], fill: object = None) -> np.ndarray:
        """The chunk of `shape` and `dtype` that `data` holds; CorruptChunkError naming what is
        wrong with a corrupt chunk."""
        dtype = self.check_dtype(np.dtype(dtype))
        fill = self.fill if self.fill is not None else fill     # (the codec's own, if it has one)
        buf = memoryview(data).cast("B") if not isinstance(data, bytes) else data
        # (format 2: its kind in the byte after the magic; None for format 1 or a cut chunk)
        kind = buf[4] if bytes(buf[:4]) == FORMAT2_MAGIC and len(buf) > 4 else None
        if bytes(buf[:4]) == FORMAT2_MAGIC and kind != MASKED_KIND:
            if dtype.kind in "iu":
                raise corrupt(f"a format-2 chunk (a relative bound) in an array of {dtype}: "
                              f"integer arrays take format 1 and masked chunks only", "header")
            from zdt.codecs import predict_relative

            return predict_relative.decode(buf, dtype, shape)
        if dtype.kind in "iu":
            return self._decode_integers(buf, dtype, shape, fill)
        mask = n_masked = None
        if kind == MASKED_KIND:
            mask, n_masked, buf = self._read_mask(buf, dtype, shape, fill)
        return self._decode_values(buf, dtype, shape, fill, mask, n_masked)

    def _read_mask(self, buf: Any, dtype: np.dtype, shape: tuple[int, ...],
                   fill: object) -> tuple[np.ndarray, int, Any]:
        """A masked chunk's mask (uint8[n], 1: masked), the number of masked elements, and its
        values' chunk (the spec's "Masked chunks")."""
        n = math.prod(shape)
        if len(buf) < MASKED_HEADER.size:
            raise corrupt(f"a masked chunk of {len(buf)} bytes is shorter than its "
                          f"{MASKED_HEADER.size}-byte header", "header")
        _, _, size, looks, n_masked, length = MASKED_HEADER.unpack_from(buf)
        if size != dtype.itemsize:
            raise corrupt(f"the chunk holds {size}-byte elements, the array {dtype}", "header")
        if looks not in (0, LOOKS_BACK):
            raise corrupt(f"the masked chunk's reference field is {looks}, not 0 or "
                          f"{LOOKS_BACK}", "header")
        reference = None
        if looks:
            reference = None if self.mask is None else self.mask.for_grid(grid4(shape))
            if reference is None:
                raise corrupt(f"the chunk's mask looks back at a reference mask of "
                              f"{' x '.join(map(str, grid4(shape)[2:]))}, and the codec has "
                              f"{'none' if self.mask is None else 'one of ' + ' x '.join(map(str, self.mask.shape))}",
                              "header")
        if not 1 <= n_masked <= n:
            raise corrupt(f"the chunk claims {n_masked} masked elements of {n}", "header")
        if fill is None:
            raise corrupt("a masked chunk, and there is no fill value for its masked "
                          "elements", "mask")
        if length > len(buf) - MASKED_HEADER.size:
            raise corrupt(f"the mask stream's length {length} runs past the chunk's end", "mask")
        end = MASKED_HEADER.size + length
        mask, count, rest = _ans.mask_decode(buf[MASKED_HEADER.size:end], grid4(shape), reference)
        if len(rest):
            raise corrupt(f"{len(rest)} bytes after the mask stream's words, within its "
                          f"length", "mask")
        if count != n_masked:
            raise corrupt(f"the mask has {count} masked elements, the header says "
                          f"{n_masked}", "mask")
        return mask, n_masked, buf[end:]

    def _decode_values(self, buf: Any, dtype: np.dtype, shape: tuple[int, ...], fill: object,
                       mask: np.ndarray | None, n_masked: int | None) -> np.ndarray:
        """A format-1 chunk, or with `mask` a masked chunk's values' chunk (no symbols for its
        n_masked masked elements)."""
        n = math.prod(shape)
        n_sym = n if mask is None or n_masked is None else n - n_masked
        if len(buf) < HEADER.size:
            raise corrupt(f"a {'values chunk' if mask is not None else 'chunk'} of {len(buf)} "
                          f"bytes is shorter than its {HEADER.size}-byte header", "header")
        magic, predictor, size, stage, n_raw = HEADER.unpack_from(buf)
        if magic not in (MAGIC, FORMAT3_MAGIC) and mask is not None:
            raise corrupt(f"the masked chunk's values chunk starts with {bytes(magic)!r}, not "
                          f"{MAGIC!r} or {FORMAT3_MAGIC!r}", "header")
        if magic not in (MAGIC, FORMAT3_MAGIC):
            if magic[:3] == FORMAT_MAGIC and 0x34 <= magic[3] <= 0x39:
                raise corrupt(f"the chunk is of format {chr(magic[3])}, newer than this decoder "
                              f"reads (formats 1 to 3): a newer zdt reads it", "header")
            raise corrupt(f"the chunk starts with {bytes(magic)!r}, not {MAGIC!r}", "header")
        alpha = beta = 1.0
        start = HEADER.size
        if magic == FORMAT3_MAGIC:
            if len(buf) < HEADER.size + LEVEL_STEPS.size:
                raise corrupt(f"a format-3 chunk of {len(buf)} bytes is shorter than its "
                              f"{HEADER.size + LEVEL_STEPS.size}-byte header", "header")
            alpha, beta = LEVEL_STEPS.unpack_from(buf, HEADER.size)
            start += LEVEL_STEPS.size
            if not (1.0 <= alpha <= STEPS_MAX and 1.0 <= beta <= STEPS_MAX):
                raise corrupt(f"the levels' steps alpha {alpha!r} and beta {beta!r} are not both "
                              f"within [1, {STEPS_MAX:g}]", "header")
            if predictor not in INTERPOLATING:
                raise corrupt(f"a format-3 chunk (a step for each level) with predictor "
                              f"{predictor}, which has no levels", "header")
        if self.abs_error is None:
            raise corrupt("a format-1 chunk (an absolute bound) in an array whose codec has "
                          "rel_error: its bound is not known", "header")
        if predictor not in PREDICTORS.values():
            raise corrupt(f"unknown predictor {predictor} in the chunk header", "header")
        if size != dtype.itemsize:
            raise corrupt(f"the chunk holds {size}-byte elements, the array {dtype}", "header")
        if stage not in STAGES.values():
            raise corrupt(f"unknown entropy stage {stage} in the chunk header", "header")
        if n_raw > n:
            raise corrupt(f"the chunk claims {n_raw} exact values for {n} elements", "header")
        if stage == STAGES["pcodec_levels"] and predictor not in INTERPOLATING:
            raise corrupt(f"entropy stage 2 (by level) with predictor {predictor}, "
                          f"which has no levels", "header")
        stream = None
        # (a masked chunk's unmasked elements: those with symbols, for stages 0 to 2)
        unmasked = None if mask is None or stage == STAGES["ans"] else mask == 0
        if stage == STAGES["ans"]:
            stream, rest = _ans.read(buf[start:])
            sym = None          # (decoded where each element is reconstructed)
        elif stage == STAGES["pcodec"]:
            sym, rest = _pcodec_symbols(buf[start:], n_sym)
        elif stage == STAGES["pcodec_levels"]:
            sym, rest = _level_symbols(buf[start:], grid4(shape), predictor, unmasked)
        if stage != STAGES["zstd"]:
            if n_raw:
                payload = zstd_exactly(rest, n_raw * size)
            elif len(rest):
                raise corrupt(f"{len(rest)} bytes after the symbols of a chunk "
                              f"without exact values", "raw values")
            else:
                payload = np.empty(0, dtype=np.uint8)
        else:
            planes = zstd_exactly(buf[start:], 2 * n_sym + n_raw * size)
            sym = planes[:n_sym].astype(np.uint16) | (planes[n_sym:2 * n_sym].astype(np.uint16) << 8)
            payload = planes[2 * n_sym:]
        if sym is not None and unmasked is not None and stage != STAGES["pcodec_levels"]:
            # (the unmasked elements' symbols, in flat C order; a masked one decodes as symbol 1)
            full = np.ones(n, dtype=np.uint16)
            full[unmasked] = sym
            sym = full
        # (a copy: the raw values may start at an odd offset of the payload, where a float32
        # or float64 is misaligned, and the kernel loads them as floats)
        raw = payload.view(dtype.newbyteorder("<")).astype(dtype, copy=True)
        out = np.empty(n, dtype=dtype)
        n_fill = _predict.decode(sym, raw, out, grid4(shape), self.abs_error, predictor,
                                 fill_array(fill, dtype), stream,
                                 mask if stream is not None else None, alpha, beta)
        if mask is not None and n_fill != n_masked:
            raise corrupt(f"{n_fill - n_masked} unmasked elements have the fill-value symbol, "
                          f"which is the masked elements' alone", "symbols")
        # (without a fill value, a fill-value symbol decodes as 0)
        if fill is None and n_fill:
            raise corrupt(f"the chunk has fill-value symbols, and there is no fill "
                          f"value", "symbols")
        return out.reshape(shape)

    def _decode_integers(self, data: object, dtype: np.dtype, shape: tuple[int, ...],
                         fill: object) -> np.ndarray:
        """Each value within a bound below k + 1/2 of an integer: the nearest integer is within
        k of it, and so is the type's range clamped to (the value was in it); an escaped value
        is its integer (a format-1 chunk: `decode` sees to it)."""
        y = self.for_integers().decode(data, WORKING, shape, fill).reshape(-1)
        info = np.iinfo(dtype)
        with np.errstate(invalid="ignore"):      # (the escaped values: replaced below)
            out = np.clip(np.rint(y), info.min, info.max).astype(dtype)
        special = np.flatnonzero(~np.isfinite(y))
        if special.size:
            bits = y[special].view(np.uint64)
            value = (bits & np.uint64(ESCAPE_BIAS * 2 - 1)).astype(np.int64) - ESCAPE_BIAS
            bad = (bits & ~np.uint64(ESCAPE_BIAS * 2 - 1) != np.uint64(ESCAPE)) | \
                (value < int(info.min)) | (value > int(info.max))
            if bad.any():
                i = int(special[np.argmax(bad)])
                raise corrupt(f"the exact value of element {i} is {y[i]!r} (bits "
                              f"0x{int(y[i:i + 1].view(np.uint64)[0]):016x}), which is no "
                              f"{dtype} value", "raw values")
            out[special] = value.astype(dtype)
        return out.reshape(shape)


# mask_formats: a mask stream under CLUSTERED times the entropy of as many masked elements at
# random: the masked chunk alone, unless fewer than 1/FEW_MASKED of the elements are masked;
# over SCATTERED: format 1 alone (at most half masked); chunks under SMALL_CHUNK elements: both
FEW_MASKED = 64
CLUSTERED = 0.25
SCATTERED = 0.75
SMALL_CHUNK = 4096
WIDE_SYMBOL = 16            # the symbols of codes c >= 7, c <= -8: tokens with extra bits
WIDE_SHARE = 0.25           # auto tries zstd too where more of the codes are wide (_stages)


def _pco_compress(sym: np.ndarray) -> bytes:
    from pcodec import ChunkConfig

    return bytes(_pcodec().simple_compress(np.ascontiguousarray(sym, dtype=np.uint16),
                                           ChunkConfig(compression_level=PCODEC_LEVEL)))


def level_groups(shape: tuple[int, int, int, int], predictor: int,
                 unmasked: np.ndarray | None = None) -> tuple[np.ndarray, ...]:
    """Stage 2's groups: for g = 0 .. 3, the flat indices (C order) of the elements whose
    level group is g: the fewest trailing zero bits (capped at 3; 0 has 3) of their indices
    along the dimensions the predictor interpolates along (all of them; for predictor 4 not
    the first real one, along which it slices). Shapes arrive as the kernels' four extents
    (padded dimensions have index 0: 3 bits, no effect). `unmasked` (a masked chunk's
    unmasked elements, bool[n]): only those."""
    groups = _groups(shape, predictor == PREDICTORS["interpolation_slices"])
    return groups if unmasked is None else tuple(g[unmasked[g]] for g in groups)


@functools.lru_cache(maxsize=8)
def _groups(shape: tuple[int, int, int, int], slices: bool) -> tuple[np.ndarray, ...]:
    if not math.prod(shape):
        # (no element: nothing sized by an extent, which a corrupt chunk may claim at 2**51)
        none = np.empty(0, dtype=np.intp)
        none.flags.writeable = False
        return (none,) * GROUPS
    dims = [d for d in range(4) if shape[d] > 1]
    if slices and dims:
        dims = dims[1:]
    group = np.full(shape, GROUPS - 1, dtype=np.int8)
    for d in dims:
        i = np.arange(shape[d])
        t = np.full(shape[d], GROUPS - 1, dtype=np.int8)
        for k in range(GROUPS - 2, -1, -1):
            t[i % (1 << (k + 1)) != 0] = k
        t[0] = GROUPS - 1
        group = np.minimum(group, t.reshape([-1 if e == d else 1 for e in range(4)]))
    flat = group.reshape(-1)
    out = tuple(np.flatnonzero(flat == g) for g in range(GROUPS))
    for a in out:
        a.flags.writeable = False
    return out


def _level_symbols(data: Any, shape: tuple[int, int, int, int], predictor: int,
                   unmasked: np.ndarray | None = None) -> tuple[np.ndarray, Any]:
    """Entropy stage 2: the symbols of the chunk's elements from the four groups'
    length-prefixed pcodec data (an empty group: length 0), in flat C order, and what follows
    them (the raw values' zstd frame). `unmasked`: a masked chunk's unmasked elements, the
    only ones with symbols (the masked ones get symbol 1)."""
    sym = np.empty(math.prod(shape), dtype=np.uint16) if unmasked is None else \
        np.ones(math.prod(shape), dtype=np.uint16)
    rest = data
    for g, where in enumerate(level_groups(shape, predictor, unmasked)):
        if len(rest) < PCO_LENGTH.size:
            raise corrupt(f"the chunk ends inside level group {g}'s pcodec length", "symbols")
        if not len(where):
            (length,) = PCO_LENGTH.unpack_from(rest)
            if length:
                raise corrupt(f"level group {g} has no elements in this shape and "
                              f"{length} bytes of pcodec data", "symbols")
            rest = rest[PCO_LENGTH.size:]
            continue
        part, rest = _pcodec_symbols(rest, len(where))
        sym[where] = part
    return sym, rest


# --- which predictors a chunk is packed with ----------------------------------------------------
# `predictor="auto"` predicts a chunk with each predictor worth trying for its shape. In a chunk
# of SAMPLE_FROM elements or more it first estimates them on SAMPLE_BLOCKS blocks (together
# SAMPLE_SHARE of the chunk, at least SAMPLE_LEAST elements; after the first block only those
# within EARLY_SLACK of the least go on to the others) and predicts the whole chunk only
# with those within SAMPLE_SLACK of the least estimate; of the whole predictions it packs
# those whose symbols' order-0 entropy and raw values come within ESTIMATE_SLACK of the least.
SAMPLE_FROM = 1 << 16
SAMPLE_BLOCKS = 4
SAMPLE_SHARE = 1 / 16
SAMPLE_LEAST = 1 << 14
# (the least estimate only: a slack of 1% let two close predictors, interpolation and its
# reversed order on an isotropic field, both be predicted and packed whole, auto's encoding
# twice the fixed predictor's; on bench_bytes' rows keeping the least alone wrote 0.14% more)
SAMPLE_SLACK = 1.0
# (the 16 sample predictions were 1/4 of a whole prediction; on bench_predict's field 10 are
# made now, and auto encodes in 1.24x the fixed predictor's time, was 1.30x; bench_bytes'
# zdt.predict column the same bytes on every row but one, the DEM at 50 m 0.03% smaller)
EARLY_SLACK = 1.3
ESTIMATE_SLACK = 1.1        # (packing is the costly part)


def choose_predictors(config: PredictConfig, x: np.ndarray, shape: tuple[int, int, int, int],
                      fills: np.ndarray, masked: bool = False) -> list[tuple[str, Any]]:
    """(name, _predict.Prediction) of each predictor `config` packs the flat chunk `x` (of
    4-d `shape`) with: the one it names, or for auto those chosen as above. With stage 3 (the
    entropy `auto` or `ans`) each prediction records its symbols in visit order (`masked`: a
    masked chunk's values, whose fill-value elements have no symbol)."""
    record = config.entropy in ("auto", "ans")
    names = worth_trying(shape) if config.predictor == "auto" else [config.predictor]
    if config.entropy == "pcodec_levels":         # (only the predictors with levels have it)
        names = [n for n in names if PREDICTORS[n] in INTERPOLATING]

    def predict(flat: np.ndarray, shape4: tuple[int, int, int, int], name: str,
                record: bool) -> Any:
        return _predict.encode(flat, shape4, config.abs_error, PREDICTORS[name], fills, record,
                               masked)

    if len(names) > 1 and x.size >= SAMPLE_FROM:
        # the symbols and raw values over the sample blocks at their order-0 entropy (stage
        # 3's own estimate, its context tables fitted to a few thousand symbols, chose worse:
        # bench_bytes' zdt.predict column 0.16% larger in total, up to 8% on a row; and
        # recording the visit order for it took half the samples' time)
        sampled = dict.fromkeys(names, 0.0)
        for k, block in enumerate(sample_blocks(x.reshape(shape))):
            for name in sampled:
                p = predict(block.reshape(-1), grid4(block.shape), name, False)
                sampled[name] += order0_bits(p.symbols, p.raw)
            if k == 0:
                sampled = {name: sampled[name] for name in within(sampled, EARLY_SLACK)}
                if len(sampled) == 1:       # (one left: the other blocks cannot change that)
                    break
        names = within(sampled, SAMPLE_SLACK)
    predictions = [(name, predict(x, shape, name, record)) for name in names]
    if len(predictions) > 1:
        whole = {name: order0_bits(p.symbols, p.raw) for name, p in predictions}
        kept = within(whole, ESTIMATE_SLACK)
        predictions = [(name, p) for name, p in predictions if name in kept]
    return predictions


def level_variants(config: PredictConfig, x: np.ndarray, shape: tuple[int, int, int, int],
                   fills: np.ndarray, name: str, prediction: Any,
                   masked: bool) -> list[tuple[tuple[float, float], Any]]:
    """The predictions with the levels' steps of STEPS_TRIED (format 3) of an interpolating
    predictor whose symbols are at least LEVEL_ZEROS code 0 (fill-value symbols aside)."""
    if PREDICTORS[name] not in INTERPOLATING:
        return []
    order = prediction.order
    if order is not None:       # (stage 3's counts of each token: symbols 1 and 2 are tokens 1, 2)
        coded = len(order.symbols) - int(order.counts[:, 1].sum())
        zeros = int(order.counts[:, 2].sum())
    else:
        sym = prediction.symbols
        coded = sym.size - int(np.count_nonzero(sym == 1))
        zeros = int(np.count_nonzero(sym == 2))
    if not coded or zeros < LEVEL_ZEROS * coded:
        return []
    record = config.entropy in ("auto", "ans")
    return [(steps, _predict.encode(x, shape, config.abs_error, PREDICTORS[name], fills, record,
                                    masked, *steps)) for steps in STEPS_TRIED]


def within(cost: dict[str, float], slack: float) -> list[str]:
    """The names whose cost is at most `slack` times the least, in their order."""
    least = min(cost.values())
    return [name for name, c in cost.items() if c <= least * slack]


def worth_trying(shape: tuple[int, int, int, int]) -> list[str]:
    """The predictors `auto` tries on a chunk of this (4-d) shape: the reversed order and the
    slices only where they differ from plain interpolation (two or more real dimensions)."""
    real = sum(n > 1 for n in shape)
    names = ["lorenzo", "interpolation"]
    return names + (["interpolation_reversed", "interpolation_slices"] if real >= 2 else [])


def sample_blocks(x: np.ndarray) -> list[np.ndarray]:
    """SAMPLE_BLOCKS contiguous blocks of the chunk `x`, together about SAMPLE_SHARE of its
    elements: each the chunk's shape scaled down alike along its dimensions of extent > 1,
    placed at 1/8, 3/8, 5/8, 7/8 of each extent (in an order turned by one for each dimension,
    so in two or more dimensions the blocks do not share a row or column)."""
    dims = [d for d in range(x.ndim) if x.shape[d] > 1]
    share = max(SAMPLE_SHARE, SAMPLE_LEAST / x.size) / SAMPLE_BLOCKS
    scale = share ** (1 / max(len(dims), 1))
    side = {d: min(x.shape[d], max(8, round(x.shape[d] * scale))) for d in dims}
    blocks = []
    for k in range(SAMPLE_BLOCKS):
        where = [slice(None)] * x.ndim
        for r, d in enumerate(dims):
            at = (2 * ((k + r) % SAMPLE_BLOCKS) + 1) / (2 * SAMPLE_BLOCKS)
            start = int((x.shape[d] - side[d]) * at)
            where[d] = slice(start, start + side[d])
        blocks.append(np.ascontiguousarray(x[tuple(where)]))
    return blocks


def order0_bits(sym: np.ndarray, raw: np.ndarray) -> float:
    """Bits a chunk's symbols take at their order-0 entropy, plus its raw values' bits."""
    return _ans.order0_bits(sym) + 8.0 * raw.nbytes + 1.0


def zstd_exactly(frame: Any, expected: int) -> np.ndarray:
    """A zstd frame's content, which must be `expected` bytes (declared in its header, and
    decoded to that length); ValueError otherwise."""
    from numcodecs.zstd import Zstd

    declared = frame_content_size(frame)
    if declared != expected:
        raise corrupt(f"the zstd frame declares {declared} bytes of content, "
                      f"the header and shape call for {expected}", "zstd frame")
    if expected == 0:       # (numcodecs' zstd cannot decode a frame of empty content)
        return np.empty(0, dtype=np.uint8)
    payload = np.empty(expected, dtype=np.uint8)
    try:
        Zstd().decode(bytes(frame), out=payload)
    except Exception as exc:        # numcodecs' zstd raises RuntimeError / ValueError
        why = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise corrupt(f"the zstd frame does not decode into the {expected} bytes "
                      f"the header and shape call for ({why})", "zstd frame") from None
    return payload


def _pcodec_symbols(data: Any, n: int) -> tuple[np.ndarray, Any]:
    """Entropy stage 1: the n symbols from the length-prefixed pcodec data, and what follows
    it (the raw values' zstd frame); ValueError for a chunk that does not hold exactly n."""
    standalone = _pcodec()
    if standalone is None:
        raise ValueError(f"{CODEC}: the chunk's symbols are pcodec-coded and the pcodec package "
                         f"is not installed (pip install pcodec)")
    if len(data) < PCO_LENGTH.size:
        raise corrupt("the chunk ends inside its pcodec length", "symbols")
    (length,) = PCO_LENGTH.unpack_from(data)
    if length > len(data) - PCO_LENGTH.size:
        raise corrupt(f"the pcodec data's length {length} runs past the chunk's end", "symbols")
    codes = bytes(data[PCO_LENGTH.size:PCO_LENGTH.size + length])
    sym = np.empty(n, dtype=np.uint16)
    try:
        progress = standalone.simple_decompress_into(codes, sym)
    except BaseException as exc:    # pcodec's "pco error: ..." (RuntimeError); a Rust panic
        if not isinstance(exc, (RuntimeError, ValueError)) and type(exc).__name__ != "PanicException":
            raise
        why = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise corrupt(f"the pcodec symbols do not decode ({why})", "symbols") from None
    if progress.n_processed != n or not progress.finished:
        raise corrupt(f"the pcodec data holds "
                      f"{'more' if not progress.finished else progress.n_processed} symbols, "
                      f"the chunk's shape calls for {n}", "symbols")
    return sym, data[PCO_LENGTH.size + length:]


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


def integer_bound(abs_error: float) -> float:
    """The bound an integer array's values are coded within, as float64: the largest float64
    below k + 1/2, k = floor(abs_error) (at most 2**51): every decoded value rounds to an
    integer within k of the original, and with abs_error < 1 to the original itself."""
    return math.nextafter(whole_steps(abs_error) + 0.5, 0.0)


def whole_steps(abs_error: float) -> int:
    """k = floor(abs_error), at most 2**51: how far an integer array's values may move."""
    return math.floor(min(abs_error, 2.0 ** 51))


def mask_formats(stream_bytes: int, n_masked: int, n: int) -> tuple[str, ...]:
    """The formats encode measures for a chunk of `n` elements, `n_masked` of them masked,
    whose mask stream takes `stream_bytes`: both below SMALL_CHUNK elements (where they cost
    little and the stream's fixed part weighs), else by how far the stream is below
    n H(n_masked / n), the bits of as many independent masked elements. Measured (1M-element
    chunks, smooth and noisy fields, abs bounds; bench_bytes' masked rows): where it is below
    CLUSTERED (land, scan lines, a sensor's edge: the stream codes the shapes) the masked
    chunk is smaller but for a few chunks with few masked elements (up to 1% larger); where
    it is above SCATTERED (gaps at random) format 1 is smaller, up to 17% on a smooth field
    with 1-2% of its elements missing (stage 3 codes the fill-value symbols in its contexts
    for less than the mask stream's adaptive bits), unless most elements are masked;
    between, either can win by a few percent: both are packed."""
    p = n_masked / n
    if p >= 1.0:
        return ("masked",)
    if n < SMALL_CHUNK:
        return ("masked", "plain")
    iid = n * -(p * math.log2(p) + (1 - p) * math.log2(1 - p))
    share = 8 * (stream_bytes - _ans.MASK_HEAD.size) / iid      # (the words, not the state)
    if share >= SCATTERED and 2 * n_masked <= n:
        # (not where most are masked: format 1 would give each of them a symbol, where the
        # scattered elements are the unmasked ones: a DEM's unit with 12 of 262,144 elements
        # on land, the masked chunk 109 bytes, format 1 168)
        return ("plain",)
    if share < CLUSTERED and FEW_MASKED * n_masked >= n:
        return ("masked",)
    return ("masked", "plain")


def without_masked(prediction: Any) -> Any:
    """The prediction a masked chunk packs from `prediction` (made without `masked`): stage 3's
    order without the fill-value symbols (1), which in a chunk with a mask are the masked
    elements, bit for bit the order `_predict.encode(..., masked=True)` records."""
    order = prediction.order
    if order is None:
        return prediction
    keep = order.symbols != 1
    symbols, contexts = order.symbols[keep], order.contexts[keep]
    return prediction._replace(order=_predict.Order(symbols, contexts,
                                                    _ans.histogram(symbols, contexts)))


def fill_array(fill: object, dtype: np.dtype) -> np.ndarray:
    """The fill value as an array of one element of `dtype` (empty for None)."""
    if fill is None:
        return np.empty(0, dtype=dtype)
    return np.asarray([fill], dtype=dtype)
