"""Differential check of the C library against zdt's Python codec (not wired into zdt yet).
Decoder: random fields freshly encoded by zdt's encoder, decoded by both, compared bit for bit;
and the same chunks cut and bit-flipped, which must fail in both or decode to the same bits.
Encoder: random and real-looking fields encoded by both, the chunks compared byte for byte.

    cmake -S libzdtpredict -B libzdtpredict/build && cmake --build libzdtpredict/build -j2
    PYTHONPATH=/work/wt-ccore /work/main/.venv/bin/python libzdtpredict/tools/compare_with_python.py

Options: --lib PATH (the shared library; default libzdtpredict/build/libzdt-predict.so or
$ZDT_PREDICT_LIB), --cases N (decoder, default 400), --encode-cases N (encoder, default 600),
--seed S, --mutations M (per case, default 20).
Fields: float32 / float64 (and some integer types), shapes of 1 to 4 dimensions (extents of 1
among them), abs and rel bounds, NaN and finite fill values (masked chunks), NaN and
infinities stored raw, every predictor, stages 0 and 3, the numcodecs face. Exit status 1 on
any difference.
"""

from __future__ import annotations

import argparse
import ctypes
import ctypes.util
import math
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from zdt_predict_ctypes import DecodeError, Library  # noqa: E402

from zdt.codecs.numcodecs.predict import Predict  # noqa: E402
from zdt.codecs.predict import PredictConfig, ReferenceMask  # noqa: E402
from zdt.errors import CorruptChunkError  # noqa: E402

PREDICTORS = ["auto", "lorenzo", "interpolation", "interpolation_reversed", "interpolation_slices"]
STAGES = ["auto", "ans", "zstd"]


def field(rng: np.random.Generator, shape: tuple[int, ...], dtype: str) -> np.ndarray:
    """A smooth field with noise, at a random scale, some elements NaN or infinite."""
    n = math.prod(shape)
    grids = np.meshgrid(*[np.linspace(0, rng.uniform(1, 8), k) for k in shape], indexing="ij")
    x = sum(np.sin(g + rng.uniform(0, 6)) for g in grids) if shape else np.zeros(())
    x = np.asarray(x, dtype=np.float64) * 10 ** rng.uniform(-3, 4)
    if rng.random() < 0.7:      # (else smooth: a coarse bound then gives format 3)
        x = x + rng.normal(0, 10 ** rng.uniform(-4, 1), x.shape)
    if rng.random() < 0.3 and n:
        x += 10 ** rng.uniform(-2, 3)   # all positive or all negative: relative bounds' case
    flat = x.reshape(-1)
    if rng.random() < 0.3 and n:
        flat[rng.integers(0, n, size=max(1, n // 50))] = np.nan
    if rng.random() < 0.15 and n:
        flat[rng.integers(0, n, size=max(1, n // 200))] = rng.choice([np.inf, -np.inf, 0.0, 1e30])
    return x.astype(dtype)


def random_shape(rng: np.random.Generator) -> tuple[int, ...]:
    ndim = int(rng.integers(1, 5))
    shape = [int(rng.choice([1, 2, 3, 5, 8, 13, 17, 30, 64])) for _ in range(ndim)]
    while math.prod(shape) > 60_000:
        shape[int(np.argmax(shape))] //= 2
    return tuple(shape)


ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"


def zstd_disagrees(original: bytes, mutant: bytes) -> bool:
    """Whether the mutation lies in a zstd frame of the chunk that libzstd (which the C library
    links) and numcodecs' own zstd decode differently (a corrupt block without a checksum:
    each zstd version checks what it checks), so the two decoders' answers may differ there."""
    from numcodecs.zstd import Zstd

    zstd = ctypes.CDLL(ctypes.util.find_library("zstd") or "libzstd.so.1")
    zstd.ZSTD_findFrameCompressedSize.restype = ctypes.c_size_t
    zstd.ZSTD_decompress.restype = ctypes.c_size_t
    zstd.ZSTD_isError.argtypes = [ctypes.c_size_t]
    at = next((i for i in range(min(len(original), len(mutant))) if original[i] != mutant[i]),
              min(len(original), len(mutant)))
    start = original.find(ZSTD_MAGIC)
    while start >= 0:
        size = zstd.ZSTD_findFrameCompressedSize(original[start:], len(original) - start)
        if not zstd.ZSTD_isError(size) and start <= at < start + size:
            frame = mutant[start:start + size]
            out = ctypes.create_string_buffer(1 << 24)
            got = zstd.ZSTD_decompress(out, len(out), frame, len(frame))
            mine = None if zstd.ZSTD_isError(got) else out.raw[:got]
            try:
                theirs = bytes(Zstd().decode(frame))
            except Exception:
                theirs = None
            return mine != theirs
        start = original.find(ZSTD_MAGIC, start + 1)
    return False


def empty_frame_mutated(original: bytes, mutant: bytes) -> bool:
    """Whether the mutation lies in a zstd frame that declares no content: zdt's Python decoder
    reads only such a frame's header (predict.zstd_exactly: numcodecs' zstd does not decode an
    empty frame), the C decoder the whole frame, so it refuses a corrupt one that Python takes."""
    zstd = ctypes.CDLL(ctypes.util.find_library("zstd") or "libzstd.so.1")
    zstd.ZSTD_findFrameCompressedSize.restype = ctypes.c_size_t
    zstd.ZSTD_getFrameContentSize.restype = ctypes.c_ulonglong
    zstd.ZSTD_isError.argtypes = [ctypes.c_size_t]
    at = next((i for i in range(min(len(original), len(mutant))) if original[i] != mutant[i]),
              min(len(original), len(mutant)))
    start = original.find(ZSTD_MAGIC)
    while start >= 0:
        size = zstd.ZSTD_findFrameCompressedSize(original[start:], len(original) - start)
        if not zstd.ZSTD_isError(size) and start <= at < start + size:
            return zstd.ZSTD_getFrameContentSize(original[start:], len(original) - start) == 0
        start = original.find(ZSTD_MAGIC, start + 1)
    return False


def chunk_kind(data: bytes) -> str:
    """What a chunk (a numcodecs buffer's chunk, a relative chunk's logarithms) holds: its
    format, a masked one's values, predictor and stage."""
    if data[:4] == b"ZPR2" and data[4:5] == b"\x01":
        length = int.from_bytes(data[24:32], "little")
        return "relative(" + chunk_kind(data[32:32 + length]) + ")"
    if data[:4] == b"ZPR2" and data[4:5] == b"\x02":
        length = int.from_bytes(data[16:24], "little")
        return "masked(" + chunk_kind(data[24 + length:]) + ")"
    if data[:3] == b"ZPR" and len(data) >= 8:
        return f"f{chr(data[3])}p{data[4]}s{data[6]}"
    return "?"


def same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def python_decode(config: PredictConfig, data: bytes, dtype, shape, fill, numcodecs: Predict | None):
    if numcodecs is not None:
        return numcodecs.decode(data)
    return config.decode(data, np.dtype(dtype), shape, fill)


# --- the encoder ----------------------------------------------------------------------------


def real_looking(rng: np.random.Generator, shape: tuple[int, ...], dtype: str) -> tuple[np.ndarray, str]:
    """A field of one of the kinds zdt meets: smooth with noise, steps (data quantized at its
    source), smooth alone, noise alone; and how it was made."""
    n = math.prod(shape)
    grids = np.meshgrid(*[np.linspace(0, rng.uniform(1, 8), k) for k in shape], indexing="ij")
    smooth = np.asarray(sum(np.sin(g + rng.uniform(0, 6)) for g in grids) if shape else
                        np.zeros(()), dtype=np.float64) * 10 ** rng.uniform(-3, 4)
    kind = str(rng.choice(["smooth+noise", "steps", "smooth", "noise"], p=[0.5, 0.2, 0.2, 0.1]))
    if kind == "smooth+noise":
        x = smooth + rng.normal(0, 10 ** rng.uniform(-4, 0), smooth.shape) * np.abs(smooth).max()
    elif kind == "steps":
        step = 10 ** rng.uniform(-2, 1) * max(np.abs(smooth).max(), 1e-9) / 20
        x = np.round(smooth / step) * step
    elif kind == "noise":
        x = rng.normal(0, 10 ** rng.uniform(-3, 3), smooth.shape)
    else:
        x = smooth
    if rng.random() < 0.3 and n:
        x = x + 10 ** rng.uniform(-2, 3)
    return x.astype(dtype).reshape(shape), kind


def encoder_shape(rng: np.random.Generator) -> tuple[int, ...]:
    if rng.random() < 0.08:      # (auto's sample blocks: 65,536 elements or more)
        big = [(300, 260), (70_000,), (40, 45, 40), (3, 4, 90, 70), (1, 257, 263)]
        return big[int(rng.integers(0, len(big)))]
    return random_shape(rng)


def check_encoder(lib: Library, rng: np.random.Generator, cases: int) -> tuple[int, int, dict]:
    """Fields encoded by zdt's encoder and the C encoder: the chunks must be the same bytes.
    Returns (checked, differing, counts of what was checked)."""
    checked = differ = 0
    seen: dict[str, int] = {}
    for case in range(cases):
        shape = encoder_shape(rng)
        n = math.prod(shape)
        integer = rng.random() < 0.12
        relative = not integer and rng.random() < 0.25
        dtype = str(rng.choice(["int8", "uint8", "int16", "uint16", "int32", "uint32"])) if \
            integer else str(rng.choice(["float32", "float64"]))
        predictor = str(rng.choice(PREDICTORS))
        entropy = str(rng.choice(STAGES, p=[0.5, 0.3, 0.2]))
        level = int(rng.choice([3, 3, 3, 1, -7, 0]))
        fill = None
        keep: tuple[int, ...] = ()
        reference = None
        if integer:
            info = np.iinfo(dtype)
            base, kind = real_looking(rng, shape, "float64")
            scale = max(1e-9, float(np.abs(base).max())) if n else 1.0
            x = np.clip(np.round(base / scale * info.max * rng.uniform(0.05, 0.9)),
                        info.min, info.max).astype(dtype)
            if n and rng.random() < 0.4:
                fill = int(rng.choice([info.min, info.max]))
                x.reshape(-1)[rng.integers(0, n, size=max(1, n // 20))] = fill
            if n and rng.random() < 0.3:
                kv = int(x.reshape(-1)[rng.integers(0, n)])
                keep = (kv,) if fill is None or kv != fill else ()
            bound = {"abs_error": float(rng.choice([0.5, 1.0, 3.0, 7.5, 100.0]))}
        else:
            x, kind = real_looking(rng, shape, dtype)
            flat = x.reshape(-1)
            if n and rng.random() < 0.35:
                # NaN holes (at random, or a block), or a -9999 land mask
                fill = float("nan") if rng.random() < 0.5 else -9999.0
                if rng.random() < 0.5 and x.ndim >= 2:
                    ii = np.indices(x.shape)
                    x[(ii[-1] - x.shape[-1] / 2) ** 2 + (ii[-2] - x.shape[-2] / 3) ** 2 <
                      (min(x.shape[-2:]) / 3 + 1) ** 2] = fill
                    if not relative and rng.random() < 0.5:
                        reference = ReferenceMask.of(
                            x.reshape(-1, *x.shape[-2:])[0] == fill if fill == fill else
                            np.isnan(x.reshape(-1, *x.shape[-2:])[0]))
                else:
                    flat[rng.integers(0, n, size=max(1, int(n * rng.uniform(0.001, 0.5))))] = fill
            elif n and rng.random() < 0.15:
                flat[rng.integers(0, n, size=max(1, n // 100))] = np.nan   # stored raw
            if n and rng.random() < 0.05:
                flat[rng.integers(0, n, size=2)] = rng.choice([np.inf, -np.inf, 0.0, 1e-310])
            finite = x[np.isfinite(x) & (x != -9999.0)]
            spread = float(finite.max() - finite.min()) if finite.size else 1.0
            bound = {"rel_error": float(10 ** rng.uniform(-6, -1))} if relative else \
                {"abs_error": float(max(spread, 1e-9) * 10 ** rng.uniform(-6, -1))}
        config = PredictConfig.create(**bound, predictor=predictor, entropy=entropy,
                                      level=level, keep=list(keep), mask=reference)
        expected = config.encode(x, fill)
        got = lib.encode(x, abs_error=bound.get("abs_error"), rel_error=bound.get("rel_error"),
                         predictor=predictor, entropy=entropy, level=level,
                         fill=None if fill is None else float(fill), keep=keep,
                         reference=None if reference is None else (reference.shape,
                                                                   reference.bits))
        checked += 1
        label = (f"{'int' if integer else dtype}-{'rel' if relative else 'abs'}"
                 f"{'-masked' if fill is not None and not integer else ''}"
                 f"{'-reference' if reference is not None else ''}")
        seen[label] = seen.get(label, 0) + 1
        form = chunk_kind(expected)
        seen["chunk " + form] = seen.get("chunk " + form, 0) + 1
        if expected != got:
            differ += 1
            at = next((i for i in range(min(len(expected), len(got)))
                       if expected[i] != got[i]), min(len(expected), len(got)))
            print(f"ENCODE DIFFERS case {case}: {dtype} {shape} {kind} {bound} {predictor} "
                  f"{entropy} level {level} fill={fill} keep={keep} reference="
                  f"{reference is not None}: {len(expected)} bytes (Python), {len(got)} (C), "
                  f"first difference at {at}")
    return checked, differ, seen


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lib", default=None)
    ap.add_argument("--cases", type=int, default=400)
    ap.add_argument("--seed", type=int, default=57)
    ap.add_argument("--mutations", type=int, default=20)
    ap.add_argument("--encode-cases", type=int, default=600)
    ap.add_argument("--dump", default=None, help="a folder to write each differing chunk to")
    args = ap.parse_args()
    lib = Library(args.lib)
    rng = np.random.default_rng(args.seed)
    checked = differ = mutated = both_refused = both_same = zstd_only = empty_frames = 0
    kinds: dict[str, int] = {}
    forms: dict[str, int] = {}
    for case in range(args.cases):
        shape = random_shape(rng)
        integer = rng.random() < 0.1
        dtype = str(rng.choice(["int16", "uint8", "int32"])) if integer else \
            str(rng.choice(["float32", "float64"]))
        relative = not integer and rng.random() < 0.3
        numcodecs = not integer and rng.random() < 0.1
        predictor = str(rng.choice(PREDICTORS))
        entropy = str(rng.choice(STAGES))
        fill = None
        if integer:
            info = np.iinfo(dtype)
            base = np.nan_to_num(field(rng, shape, "float64"), nan=0.0, posinf=0.0, neginf=0.0)
            x = np.clip(np.round(base / max(1e-9, np.abs(base).max()) * info.max * 0.9),
                        info.min, info.max).astype(dtype)
            fill = int(x.reshape(-1)[0]) if x.size and rng.random() < 0.5 else None
            bound = {"abs_error": float(rng.choice([0.5, 2.0, 7.5, 100.0]))}
        else:
            x = field(rng, shape, dtype)
            if not numcodecs and rng.random() < 0.4:
                # a fill value: NaN (the NaN become masked elements) or a finite one
                fill = float("nan") if rng.random() < 0.5 else -9999.0
                if x.size and rng.random() < 0.5:
                    # land: a disk in the last two dimensions, the same in every slice
                    ii = np.indices(x.shape)
                    a, b = ii[-1], ii[-2] if x.ndim > 1 else 0
                    x[(a - x.shape[-1] / 2) ** 2 + (b - x.shape[0] / 2) ** 2 <
                      (min(x.shape) / 3 + 1) ** 2] = fill
                elif fill == -9999.0 and x.size:
                    flat = x.reshape(-1)
                    flat[rng.integers(0, x.size, size=max(1, x.size // 4))] = fill
            scale = float(np.nanmax(np.abs(x[np.isfinite(x)]))) if np.isfinite(x).any() else 1.0
            coarse = rng.random() < 0.3     # (a smooth field at a coarse bound: format 3)
            bound = {"rel_error": float(10 ** rng.uniform(-5, -1))} if relative else \
                {"abs_error": float(max(scale, 1e-6) * 10 ** rng.uniform(*(
                    (-2.5, -1) if coarse else (-6, -1))))}
        config_args = dict(bound, predictor=predictor, entropy=entropy)
        kind = f"{dtype}-{'rel' if relative else 'abs'}-{'numcodecs' if numcodecs else 'zarr'}"
        kinds[kind] = kinds.get(kind, 0) + 1
        if numcodecs:
            face = Predict(**config_args)
            data = bytes(face.encode(x))
            config = face.config
        else:
            face = None
            config = PredictConfig.create(**config_args)
            data = config.encode(x, fill)
        abs_error = config.abs_error
        form = chunk_kind(data[1 + 8 * data[0]:] if numcodecs else data)
        forms[form] = forms.get(form, 0) + 1
        expected = python_decode(config, data, dtype, shape, fill, face)
        got = lib.decode(data, dtype, shape, abs_error,
                         None if fill is None else float(fill), numcodecs=numcodecs)
        checked += 1
        if not same_bits(expected, got):
            differ += 1
            print(f"DIFFER case {case}: {kind} {shape} {config_args} fill={fill} "
                  f"({len(data)} bytes, magic {data[:4]!r})")
            continue
        # mutations: both refuse, or both decode to the same bits
        for _ in range(args.mutations):
            m = bytearray(data)
            if rng.random() < 0.3:
                m = m[:int(rng.integers(0, len(m)))]
            elif m:
                at = int(rng.integers(0, len(m)))
                m[at] ^= 1 << int(rng.integers(0, 8))
            m = bytes(m)
            mutated += 1
            try:
                py = python_decode(config, m, dtype, shape, fill, face)
            except (CorruptChunkError, ValueError, MemoryError) as exc:
                py = exc
            try:
                c = lib.decode(m, dtype, shape, abs_error, None if fill is None else float(fill),
                               numcodecs=numcodecs)
            except DecodeError as exc:
                c = exc
            if isinstance(py, Exception) and isinstance(c, Exception):
                both_refused += 1
            elif isinstance(py, np.ndarray) and isinstance(c, np.ndarray) and same_bits(py, c):
                both_same += 1
            elif zstd_disagrees(data, m):
                zstd_only += 1
            elif isinstance(c, Exception) and isinstance(py, np.ndarray) and \
                    empty_frame_mutated(data, m):
                empty_frames += 1
            else:
                differ += 1
                if args.dump:
                    Path(args.dump).mkdir(parents=True, exist_ok=True)
                    (Path(args.dump) / f"case{case}-{mutated}.bin").write_bytes(m)
                    (Path(args.dump) / f"case{case}-{mutated}.orig").write_bytes(data)
                    (Path(args.dump) / f"case{case}-{mutated}.txt").write_text(repr(
                        (dtype, shape, config_args, fill, numcodecs)))
                what = lambda r: f"{type(r).__name__}: {r}" if isinstance(r, Exception) else "decodes"
                print(f"DIFFER mutated case {case} ({kind} {shape} {config_args}): Python "
                      f"{what(py)}; C {what(c)}")
    print(f"libzdt-predict {lib.version}: {checked} fields ({', '.join(f'{k} {v}' for k, v in sorted(kinds.items()))})")
    print("chunks (format f, predictor p, stage s): " + ", ".join(
        f"{k} {v}" for k, v in sorted(forms.items())))
    print(f"{mutated} mutated chunks: {both_refused} refused by both, {both_same} decoded to the "
          f"same bits by both, {zstd_only} where the two zstd libraries differ on a corrupt frame, "
          f"{empty_frames} refused by C alone: a corrupt frame of no content, which Python does "
          f"not decode")
    enc_checked, enc_differ, seen = check_encoder(lib, rng, args.encode_cases)
    print(f"encoder: {enc_checked} fields encoded by both, {enc_checked - enc_differ} "
          f"byte-identical ({', '.join(f'{k} {v}' for k, v in sorted(seen.items()) if not k.startswith('chunk'))})")
    print("encoder chunks: " + ", ".join(f"{k[6:]} {v}" for k, v in sorted(seen.items())
                                         if k.startswith("chunk")))
    differ += enc_differ
    print(f"{checked + mutated + enc_checked - differ} passed, {differ} failed")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
