"""Chunks packed by hand from a prediction, as docs/codecs/predict.md lays them out: format 1
or 3 (a step for each level) with entropy stages 0 (zstd over byte planes), 1 (pcodec) and 2
(pcodec by level group), alone or as a masked chunk's values' chunk. The tests use them for the
forms the encoder does not pick for a given field (it keeps the smallest): the C decoder and
the independent reference (tests/predict_reference.py) must read them. Stage 3 (rANS) is not
packed here: its chunks come from the encoder."""

from __future__ import annotations

import itertools
import struct

import numpy as np
from numcodecs.zstd import Zstd

import predict_reference

HEADER = struct.Struct("<4sBBHQ")
STEPS = struct.Struct("<dd")
MASKED_HEADER = struct.Struct("<4sBBHQQ")
PCODEC_LEVEL = 8        # (the encoder's compression level for stages 1 and 2)


def level_groups(shape: tuple[int, ...], predictor: int) -> list[list[int]]:
    """Stage 2's four groups: the flat indices (C order) of each, by the reference's rule."""
    dims = predict_reference.spec_shape(shape)
    groups: list[list[int]] = [[], [], [], []]
    for index in itertools.product(*[range(n) for n in dims]):
        groups[predict_reference.level_group(index, predictor)].append(
            predict_reference.flat(index, dims))
    return groups


def _pcodec(symbols: np.ndarray) -> bytes:
    from pcodec import ChunkConfig, standalone

    codes = bytes(standalone.simple_compress(np.ascontiguousarray(symbols, np.uint16),
                                             ChunkConfig(compression_level=PCODEC_LEVEL)))
    return struct.pack("<Q", len(codes)) + codes


def pack_values(symbols: np.ndarray, raw: np.ndarray, shape: tuple[int, ...], predictor: int,
                stage: int, steps: tuple[float, float] | None = None,
                mask: np.ndarray | None = None, level: int = 3) -> bytes:
    """A format-1 chunk (format 3 with `steps`, alpha and beta) of a prediction's symbols
    (flat C order) and raw values (visit order, the chunk's type); with `mask` (1: masked),
    a masked chunk's values' chunk: the masked elements' symbols left out."""
    if stage not in (0, 1, 2):
        raise ValueError(f"stage {stage}: packed by the encoder only")
    sym = np.ascontiguousarray(symbols, np.uint16).reshape(-1)
    keep = np.ones(sym.size, bool) if mask is None else ~np.asarray(mask, bool).reshape(-1)
    raw = np.ascontiguousarray(raw)
    raw_le = raw.astype(raw.dtype.newbyteorder("<")).tobytes()
    out = HEADER.pack(b"ZPR3" if steps else b"ZPR1", predictor, raw.dtype.itemsize, stage,
                      raw.size)
    if steps:
        out += STEPS.pack(*steps)
    if stage == 0:
        kept = sym[keep]
        planes = (kept & 0xFF).astype(np.uint8).tobytes() + (kept >> 8).astype(np.uint8).tobytes()
        return out + bytes(Zstd(level=level).encode(planes + raw_le))
    if stage == 1:
        out += _pcodec(sym[keep])
    else:
        for group in level_groups(shape, predictor):
            at = np.array([i for i in group if keep[i]], dtype=np.int64)
            out += _pcodec(sym[at]) if at.size else struct.pack("<Q", 0)
    return out + (bytes(Zstd(level=level).encode(raw_le)) if raw.size else b"")


def masked(values: bytes, stream: bytes, n_masked: int, itemsize: int,
           looks_back: bool = False) -> bytes:
    """A masked chunk (format 2, kind 2) of its mask stream and values' chunk."""
    return MASKED_HEADER.pack(b"ZPR2", 2, itemsize, int(looks_back), n_masked,
                              len(stream)) + stream + values
