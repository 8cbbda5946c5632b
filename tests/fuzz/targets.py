"""Fuzz targets: every decoder of zdt fed arbitrary bytes (and, for the codecs with a
configuration, an arbitrary configuration drawn from the same bytes).

A target returns True when the decoder returned a result of the promised shape and type,
False when it raised ValueError (zdt's codec errors are ValueErrors) or TypeError for a
configuration it rejects (both are passes). Anything else (another exception, a crash, a hang) is a finding.
`fuzz_decoders.py` drives these with atheris; tests/kernels/test_hardening.py replays the corpus
(tests/fuzz/corpus/<target>/) and every past finding as ordinary tests. Importable without
atheris.
"""

from __future__ import annotations

import numpy as np

from zdt.codecs import vlen

ACCEPTED = (ValueError, TypeError)


class Input:
    """Reads choices from the front of the fuzz input; what is left is the chunk bytes."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.pos = 0

    def byte(self) -> int:
        if self.pos >= len(self.data):
            return 0
        self.pos += 1
        return self.data[self.pos - 1]

    def pick(self, options):
        return options[self.byte() % len(options)]

    def rest(self) -> bytes:
        return self.data[self.pos:]


def _shape(inp: Input) -> tuple[int, ...]:
    dims = inp.byte() % 3
    return tuple(inp.byte() % 9 for _ in range(dims))


def _vlen_target(utf8: bool, layout: int, width: int, codec: str):
    def run(data: bytes) -> bool:
        inp = Input(data)
        shape = _shape(inp)
        as_objects = inp.byte() & 1
        try:
            out = vlen.decode(inp.rest(), shape, utf8=utf8, layout=layout, width=width, codec=codec,
                              dtype=object if (as_objects and utf8) else None)
        except ACCEPTED:
            return False
        assert out.shape == shape, (out.shape, shape)
        if not utf8:
            assert all(isinstance(x, bytes) for x in out.reshape(-1))
        return True
    return run


SOURCES = ["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
           "float16", "float32", "float64", "bfloat16", "float8_e4m3fn", "float8_e5m2",
           "float8_e8m0fnu", "float4_e2m1fn", "float6_e2m3fn", "int4", "uint2"]
ROUNDINGS = ["nearest-even", "towards-zero", "towards-positive", "towards-negative", "nearest-away"]


def _scalar(inp: Input):
    return inp.pick([0, 1, -1, 255, 0.5, -0.0, 1e300, "NaN", "Infinity", "-Infinity", "0x7f",
                     2 ** 63, -(2 ** 63), 3.25, 65504])


def cast_value_decode(data: bytes) -> bool:
    """cast_value decoding arbitrary stored bytes under an arbitrary configuration."""
    from zdt.codecs.cast import CastValueConfig
    from zdt.formats import format_for

    inp = Input(data)
    array_type, stored = inp.pick(SOURCES), inp.pick(SOURCES)
    config = {"data_type": stored, "rounding": inp.pick(ROUNDINGS),
              "out_of_range": inp.pick([None, "clamp", "wrap"])}
    if inp.byte() & 1:
        config["scalar_map"] = {"encode": [[_scalar(inp), _scalar(inp)]],
                                "decode": [[_scalar(inp), _scalar(inp)]]}
    try:
        plan = CastValueConfig.create(**config).decode_plan(array_type)
    except ACCEPTED:
        return False
    return _decode_elements(inp, format_for(stored).dtype, plan.cast, format_for(array_type).dtype)


def _decode_elements(inp: Input, dtype: np.dtype, decode, out_dtype: np.dtype) -> bool:
    """The rest of the input as whole elements of dtype, through decode."""
    raw = inp.rest()
    encoded = np.frombuffer(raw[: len(raw) - len(raw) % dtype.itemsize], dtype=dtype)
    try:
        out = decode(encoded)
    except ACCEPTED:
        return False
    assert out.shape == encoded.shape and out.dtype == out_dtype
    return True


def scale_offset_decode(data: bytes) -> bool:
    from zdt.formats import format_for
    from zdt.codecs.scale_offset import ScaleOffsetConfig

    inp = Input(data)
    dtype_name = inp.pick(SOURCES)
    try:
        plan = ScaleOffsetConfig.create(offset=_scalar(inp), scale=_scalar(inp)).plan(dtype_name)
    except ACCEPTED:
        return False
    dtype = format_for(dtype_name).dtype
    return _decode_elements(inp, dtype, plan.decode, dtype)


PACKBITS_TYPES = ["bool", "int2", "uint2", "int4", "uint4", "float4_e2m1fn", "float6_e3m2fn",
                  "int8", "uint16", "int32", "float16", "float32", "float64", "complex64"]


def packbits_decode(data: bytes) -> bool:
    import ml_dtypes  # noqa: F401  the low-precision dtypes by name

    from zdt.formats import format_for
    from zdt.codecs.packbits import PackBitsConfig

    inp = Input(data)
    name = inp.pick(PACKBITS_TYPES)
    dtype = np.dtype(name) if name in ("bool", "complex64") else format_for(name).dtype
    config = {"padding_encoding": inp.pick(["none", "first_byte", "last_byte"])}
    if inp.byte() & 1:
        config["first_bit"] = inp.byte() % 70
    if inp.byte() & 1:
        config["last_bit"] = inp.byte() % 70
    shape = _shape(inp)
    try:
        cfg = PackBitsConfig.create(**config)
        out = cfg.decode(inp.rest(), dtype, shape)
    except ACCEPTED:
        return False
    assert out.shape == shape and out.dtype == dtype
    return True


def predict_reference_mask(rows: int, cols: int):
    """The fuzz target's reference mask for slices of rows x cols (a fixed pattern: a chunk
    whose mask stream looks back at it decodes against it)."""
    from zdt.codecs.predict import ReferenceMask

    i, j = np.mgrid[0:rows, 0:cols]
    return ReferenceMask.of((i + 2 * j) % 5 == 0)


def predict_decode(data: bytes) -> bool:
    """zdt.predict chunks (docs/codecs/predict.md): header, zstd frame, symbols, raw values;
    format 2 (relative): the logarithms' chunk, the sign and exact maps, the exact values;
    format 2 (masked): the mask stream (looking back at a reference mask where its header says
    so), the values' chunk without the masked symbols."""
    from zdt.codecs.predict import PredictConfig, grid4

    inp = Input(data)
    # (integer types: the float64 chunk rounded back, escaped values, `keep`)
    dtype = np.dtype(inp.pick(["float32", "float64", "int16", "uint8"]))
    shape = _shape(inp)
    fill = inp.pick([None, 0.0, np.nan] if dtype.kind == "f" else [None, 0, 3])
    keep = [] if dtype.kind == "f" else inp.pick([[], [5]])
    grid = grid4(shape)
    reference = predict_reference_mask(*grid[2:]) if grid[2] * grid[3] else None
    cfg = PredictConfig.create(abs_error=[1e-3, 0.5, 100.0][inp.byte() % 3], keep=keep,
                               mask=reference)
    try:
        out = cfg.decode(inp.rest(), dtype, shape, fill)
    except ACCEPTED:
        return False
    assert out.shape == shape and out.dtype == dtype
    return True


def predict_numcodecs_decode(data: bytes) -> bool:
    """zdt.predict's numcodecs face: the dimension count and extents ahead of a chunk."""
    from zdt.codecs.numcodecs.predict import Predict

    inp = Input(data)
    codec = Predict(abs_error=[1e-3, 0.5, 100.0][inp.byte() % 3])
    try:
        out = codec.decode(inp.rest())
    except ACCEPTED:
        return False
    assert out.dtype in (np.float32, np.float64)
    return True


# ------------------------------------------------------------------ differential targets
# Random configurations and element bit patterns through cast_value and scale_offset, every
# kernel build this machine runs (and cast_value's exact path), compared with the exact
# pure-Python reference (tests/reference.py): a wrong answer, a wrong failing element or a
# wrong reason is a finding, as a crash is. Few elements per input: the reference is slow.
DIFF_ELEMENTS = 24


def _reference():
    import sys
    from pathlib import Path

    tests = str(Path(__file__).resolve().parent.parent)
    if tests not in sys.path:
        sys.path.insert(0, tests)
    import reference

    return reference


def _elements(inp: Input, dtype: np.dtype) -> np.ndarray:
    raw = inp.rest()[: DIFF_ELEMENTS * dtype.itemsize]
    return np.frombuffer(raw[: len(raw) - len(raw) % dtype.itemsize], dtype=dtype).copy()


def _mismatch(what: str, arr: np.ndarray, got: object, expected: object) -> AssertionError:
    return AssertionError(f"{what}: input {arr!r} ({arr.view(f'u{arr.dtype.itemsize}')!r}) gave "
                          f"{got!r}, the reference {expected!r}")


def _agree(reference, what: str, arr: np.ndarray, runs, expected, error_type, reason) -> bool:
    """Every (label, build, call) in runs gives the reference's result: the same bits (NaN =
    NaN), or error_type at the reference's failing element with its reason(exc). True when
    the reference gave a result."""
    from zdt import kernels

    for label, build, call in runs:
        with kernels.use(build):
            try:
                got = call()
            except error_type as exc:
                if not (isinstance(expected, tuple) and exc.index == (expected[0],)
                        and reason(exc) == expected[1]):
                    raise _mismatch(f"{what} ({label})", arr, exc, expected) from None
                continue
        if isinstance(expected, tuple) or not reference.same_bits_or_nan(got, expected).all():
            raise _mismatch(f"{what} ({label})", arr, got, expected)
    return not isinstance(expected, tuple)


def cast_value_differential(data: bytes) -> bool:
    from zdt import kernels
    from zdt.codecs.cast import CastPlan
    from zdt.errors import CastError
    from zdt.formats import format_for

    reference = _reference()
    inp = Input(data)
    source, target = inp.pick(SOURCES), inp.pick(SOURCES)
    rounding, oor = inp.pick(ROUNDINGS), inp.pick([None, "clamp", "wrap"])
    pairs = [[_scalar(inp), _scalar(inp)] for _ in range(inp.byte() % 3)]
    try:
        plan = CastPlan(format_for(source), format_for(target), rounding=rounding,
                        out_of_range=oor, scalar_map=pairs)
    except ACCEPTED:
        return False
    src, tgt = format_for(source).dtype, format_for(target).dtype
    try:
        entries = reference.compile_map(pairs, src, tgt)
    except AssertionError:
        # the reference reads JSON scalars strictly (1.0 or -0.0 is no integer); zdt accepts
        # integer-valued floats for integer types. Values, not spellings, are compared here
        return False
    arr = _elements(inp, src)
    expected = reference.cast_array(arr, tgt, rounding, oor, entries)
    what = f"cast_value {source}->{target} {rounding} {oor} scalar_map={pairs}"
    runs = [(f"{b}, fast", b, lambda: plan.cast(arr)) for b in kernels.available()]
    runs.append(("exact path", kernels.build(), lambda: plan.cast(arr, fast=False)))
    return _agree(reference, what, arr, runs, expected, CastError, lambda exc: exc.reason)


def scale_offset_differential(data: bytes) -> bool:
    from zdt import kernels
    from zdt.codecs.scale_offset import ScaleOffsetPlan
    from zdt.errors import ScaleOffsetError
    from zdt.formats import format_for

    reference = _reference()
    inp = Input(data)
    name = inp.pick(SOURCES)
    offset, scale, decode = _scalar(inp), _scalar(inp), bool(inp.byte() & 1)
    try:
        plan = ScaleOffsetPlan(format_for(name), offset, scale)
    except ACCEPTED:
        return False
    dtype = format_for(name).dtype
    try:
        off, sc = reference.decode_json_scalar(offset, dtype)[1], reference.decode_json_scalar(scale, dtype)[1]
    except (AssertionError, KeyError):
        # the reference takes only scalars its type holds exactly (255 is no float8 value);
        # zdt rounds a JSON number to the type as fill values are. Values are compared here
        return False
    arr = _elements(inp, dtype)
    expected = reference.scale_offset_array(arr, off, sc, decode)
    what = f"scale_offset {name} offset={offset!r} scale={scale!r} {'decode' if decode else 'encode'}"
    run = plan.decode if decode else plan.encode
    runs = [(b, b, lambda: run(arr)) for b in kernels.available()]
    return _agree(reference, what, arr, runs, expected, ScaleOffsetError, lambda exc: exc.operation)


TARGETS = {
    "vlen_utf8": _vlen_target(True, vlen.VLEN, 4, "vlen-utf8"),
    "vlen_bytes": _vlen_target(False, vlen.VLEN, 4, "vlen-bytes"),
    "arrow_utf8_int32": _vlen_target(True, vlen.ARROW, 4, "zdt.vlen_arrow"),
    "arrow_bytes_int64": _vlen_target(False, vlen.ARROW, 8, "zdt.vlen_arrow"),
    "packbits": packbits_decode,
    "predict": predict_decode,
    "predict_numcodecs": predict_numcodecs_decode,
    "cast_value": cast_value_decode,
    "scale_offset": scale_offset_decode,
    "cast_value_differential": cast_value_differential,
    "scale_offset_differential": scale_offset_differential,
}


def _level_steps_chunk(x: np.ndarray, abs_error: float, entropy: str) -> bytes:
    """A format-3 chunk of `x` (interpolation, alpha 1.25, beta 2), whatever the encoder
    would choose for it: stage 0 written here from the library's prediction; stage 3 the
    encoder's own chunk where it chooses format 3."""
    from numcodecs.zstd import Zstd

    from zdt.codecs.predict import HEADER, LEVEL_STEPS, PREDICTORS, PredictConfig, grid4
    from zdt.kernels import _predict_core

    config = PredictConfig.create(abs_error=abs_error, predictor="interpolation", entropy=entropy)
    chunk = config.encode(x)
    if entropy == "ans" and chunk[:4] == b"ZPR3":
        return chunk
    p = _predict_core.predict(x.reshape(-1), grid4(x.shape), abs_error,
                              PREDICTORS["interpolation"], None, 1.25, 2.0)
    planes = (p.symbols & 0xFF).astype(np.uint8).tobytes() + (p.symbols >> 8).astype(np.uint8).tobytes()
    head = HEADER.pack(b"ZPR3", PREDICTORS["interpolation"], x.dtype.itemsize, 0, len(p.raw))
    return head + LEVEL_STEPS.pack(1.25, 2.0) + bytes(Zstd(level=3).encode(
        planes + p.raw.astype(x.dtype.newbyteorder("<")).tobytes()))


def _looking_back_chunk(x: np.ndarray) -> bytes:
    """A masked chunk of the (6, 8) float64 `x` with NaN where the target's reference mask is
    set, its mask stream looking back at that reference (the header's field 1)."""
    from numcodecs.zstd import Zstd

    from zdt.codecs.predict import HEADER, MASKED_HEADER, PREDICTORS
    from zdt.kernels import _predict_core

    reference = predict_reference_mask(6, 8)
    y = np.where(reference.bits.reshape(6, 8) == 1, np.nan, x)
    # (its values' chunk by stage 0, written here: the unmasked elements' symbols)
    p = _predict_core.predict(y.reshape(-1), (1, 1, 6, 8), 0.5, PREDICTORS["interpolation"], np.nan)
    sym = p.symbols[reference.bits == 0]
    planes = (sym & 0xFF).astype(np.uint8).tobytes() + (sym >> 8).astype(np.uint8).tobytes()
    values = HEADER.pack(b"ZPR1", PREDICTORS["interpolation"], 8, 0, len(p.raw)) + bytes(
        Zstd(level=3).encode(planes + p.raw.astype("<f8").tobytes()))
    stream = _predict_core.mask_encode(reference.bits, (1, 1, 6, 8), reference.bits)
    return MASKED_HEADER.pack(b"ZPR2", 2, 8, 1, int(reference.bits.sum()), len(stream)) + stream + values


def seeds(name: str) -> list[bytes]:
    """Valid inputs for a target (choice bytes, then a well-formed chunk): where the fuzzer
    starts, so its mutations are near-misses of real chunks."""
    words = np.array(["", "rain", "日本", "snow🙂", "x" * 70], dtype=np.dtypes.StringDType())
    raw = [b"", b"\x00\xff", b"x" * 70]
    objects = np.empty(len(raw), dtype=object)
    objects[:] = raw
    if name.startswith(("vlen_", "arrow_")):
        utf8 = "utf8" in name
        layout = vlen.ARROW if name.startswith("arrow") else vlen.VLEN
        width = 8 if name.endswith("int64") else 4
        arr = words if utf8 else objects
        chunk = vlen.encode(arr, utf8=utf8, layout=layout, width=width).tobytes()
        # one dimension of len(arr): dims byte 1, extent byte, as-objects byte
        return [bytes([1, len(arr), 0]) + chunk, bytes([1, len(arr), 1]) + chunk,
                bytes([0, 0]) + vlen.encode(arr[:1], utf8=utf8, layout=layout, width=width).tobytes()]
    if name == "packbits":
        from zdt.codecs.packbits import PackBitsConfig

        int4 = PACKBITS_TYPES.index("int4")
        values = np.arange(-4, 4, dtype=np.int8).astype("int4")
        chunk = PackBitsConfig.create().encode(values).tobytes()
        # int4, padding "none", no first_bit, no last_bit, shape (8,); bool, "first_byte", (3,)
        return [bytes([int4, 0, 0, 0, 1, 8]) + chunk, bytes([0, 1, 0, 0, 1, 3]) + b"\x05\x05"]
    if name == "predict":
        from zdt.codecs.predict import PredictConfig

        x = np.cumsum(np.linspace(-1, 1, 48)).reshape(6, 8)
        x[1, 2] = np.nan
        # float64, shape (6, 8), no fill, abs_error 0.5; float32 (5,), fill 0.0, 1e-3
        # each entropy stage: zstd over byte planes, pcodec's symbols then a zstd frame
        return [bytes([1, 2, 6, 8, 0, 1]) + PredictConfig.create(abs_error=0.5, entropy="zstd").encode(x),
                bytes([1, 2, 6, 8, 0, 1]) + PredictConfig.create(abs_error=0.5, entropy="pcodec").encode(x),
                bytes([0, 1, 5, 1, 0]) + PredictConfig.create(abs_error=1e-3).encode(
                    np.array([0, 1, 2, 0, 4], "f4"), 0.0)] + [
                # predictors 3 (dimensions reversed) and 4 (slices), shape (6, 8)
                bytes([1, 2, 6, 8, 0, 1]) + PredictConfig.create(abs_error=0.5, predictor=p).encode(x)
                for p in ("interpolation_reversed", "interpolation_slices")] + [
                # entropy stage 2 (pcodec by level), predictors 2 and 4
                bytes([1, 2, 6, 8, 0, 1]) + PredictConfig.create(
                    abs_error=0.5, predictor=p, entropy="pcodec_levels").encode(x)
                for p in ("interpolation", "interpolation_slices")] + [
                # entropy stage 3 (zdt's rANS), each predictor, a bound fine enough for wide codes
                bytes([1, 2, 6, 8, 0, 1]) + PredictConfig.create(
                    abs_error=1e-4, predictor=p, entropy="ans").encode(x)
                for p in ("lorenzo", "interpolation", "interpolation_reversed", "interpolation_slices")] + [
                # int16, shape (6, 8), fill 3, keep [5] (escaped), abs_error 0.5: exact
                bytes([2, 2, 6, 8, 2, 1, 1]) + PredictConfig.create(abs_error=0.5, keep=[5]).encode(
                    np.where(np.arange(48).reshape(6, 8) % 7 == 0, 5,
                             np.round(np.nan_to_num(x) * 10)).astype("i2"), 3)] + [
                # format 2 (a pointwise-relative bound): zeros, negatives, NaN (an exact value);
                # float64 (6, 8) no fill; float32 (5,) fill 0.0
                bytes([1, 2, 6, 8, 0, 1]) + PredictConfig.create(rel_error=1e-3, entropy=e).encode(
                    np.where(np.arange(48).reshape(6, 8) % 5 == 0, 0.0, x))
                for e in ("ans", "zstd")] + [
                bytes([0, 1, 5, 1, 0]) + PredictConfig.create(rel_error=1e-7).encode(
                    np.array([0, 1, -2, 0, 4e-40], "f4"), 0.0)] + [
                # masked chunks (format 2, kind 2): the mask stream, then the values' chunk;
                # float64 (6, 8) fill NaN, each stage; int16 (6, 8) fill 3
                bytes([1, 2, 6, 8, 2, 1]) + PredictConfig.create(abs_error=0.5, entropy=e).encode(
                    np.where(np.arange(48).reshape(6, 8) % 8 < 3, np.nan, x), np.nan)
                for e in ("ans", "zstd", "pcodec", "pcodec_levels")] + [
                bytes([2, 2, 6, 8, 2, 0, 1]) + PredictConfig.create(abs_error=0.5).encode(
                    np.where(np.arange(48).reshape(6, 8) % 8 < 3, 3,
                             np.round(np.nan_to_num(x) * 10)).astype("i2"), 3)] + [
                # format 3 (a step for each interpolation level), stage 3 and zstd
                bytes([1, 2, 6, 8, 0, 1]) + _level_steps_chunk(x, 0.5, e) for e in ("ans", "zstd")] + [
                # a masked chunk looking back at the target's reference mask, float64 (6, 8)
                # fill NaN
                bytes([1, 2, 6, 8, 2, 1]) + _looking_back_chunk(x)]
    if name == "predict_numcodecs":
        from zdt.codecs.numcodecs.predict import Predict

        x = np.cumsum(np.linspace(-1, 1, 48)).reshape(6, 8)
        return [bytes([1]) + Predict(abs_error=0.5).encode(x),
                bytes([1]) + Predict(rel_error=1e-2).encode(-x),
                bytes([0]) + Predict(abs_error=1e-3).encode(np.float32([3.0]).reshape(()))]
    if name == "cast_value":
        f64, u8 = SOURCES.index("float64"), SOURCES.index("uint8")
        return [bytes([f64, u8, 0, 1, 0]) + bytes(range(64)),
                bytes([f64, u8, 0, 0, 1, 7, 0, 0, 7]) + bytes(range(32))]
    if name == "scale_offset":
        f64 = SOURCES.index("float64")
        # offset and scale are indexes into _scalar's list: (1, 0.5) and (-1, 1)
        return [bytes([f64, 1, 4]) + np.arange(8, dtype=np.float64).tobytes(),
                bytes([SOURCES.index("int16"), 2, 1]) + np.arange(8, dtype=np.int16).tobytes()]
    if name == "cast_value_differential":
        f64, i32, u8, bf16 = (SOURCES.index(n) for n in ("float64", "int32", "uint8", "bfloat16"))
        # float64 -> uint8 nearest-even clamp; int32 -> bfloat16 towards-zero; both no map
        return [bytes([f64, u8, 0, 1, 0]) + np.array([0.5, 1.5, -3, 300, 1e300], "f8").tobytes(),
                bytes([i32, bf16, 1, 0, 0]) + np.array([1, 2 ** 24 + 1, -7, 2 ** 31 - 1], "i4").tobytes()]
    if name == "scale_offset_differential":
        f32, i16 = SOURCES.index("float32"), SOURCES.index("int16")
        # float32 encode with offset 1, scale 0.5; int16 decode with offset -1, scale 1
        return [bytes([f32, 1, 4, 0]) + np.arange(6, dtype=np.float32).tobytes(),
                bytes([i16, 2, 1, 1]) + np.arange(-3, 5, dtype=np.int16).tobytes()]
    raise KeyError(name)
