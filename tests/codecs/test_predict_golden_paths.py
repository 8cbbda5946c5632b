"""The golden zdt.predict chunks of v2.8 exercise what the earlier ones never did (issue 57),
and those of v2.9 relative chunks of kind 3 (issue 58):
each chunk's bytes parsed as docs/codecs/predict.md lays them out, and where the path is a
stage 3 context, the contexts the independent reference decoder (tests/predict_reference.py)
decodes its symbols in. A chunk that stopped exercising its path (a change of the encoder's
choices, written as a new version) fails here, not silently in the hashes."""

from __future__ import annotations

import math
import struct

import numpy as np
import pytest
from numcodecs.zstd import Zstd

import predict_reference
from predict_golden import CASES, FILL, GOLDEN, written

BY_NAME = {c.name: c for c in CASES}


def chunk_of(name: str) -> bytes:
    return (written()[name] / f"{name}.bin").read_bytes()


def values_chunk(chunk: bytes) -> bytes:
    """The format-1 / format-3 chunk that holds the symbols: a relative chunk's logarithms'
    chunk, a masked chunk's values' chunk (both at once: the logarithms' chunk a masked one)."""
    if chunk[:4] == b"ZPR2" and chunk[4] in (1, 3):
        (length,) = struct.unpack_from("<Q", chunk, 24)
        chunk = chunk[32:32 + length]
    if chunk[:5] == b"ZPR2\x02":
        (length,) = struct.unpack_from("<Q", chunk, 16)
        chunk = chunk[24 + length:]
    return chunk


def header(chunk: bytes) -> dict:
    """A format-1 / format-3 chunk's header: format, predictor, stage, n_raw, where the
    stage's bytes start, format 3's alpha and beta, stage 3's model byte."""
    magic, predictor, size, stage, n_raw = struct.unpack_from("<4sBBHQ", chunk)
    assert magic in (b"ZPR1", b"ZPR3")
    out = {"format": magic[3] - ord("0"), "predictor": predictor, "stage": stage,
           "n_raw": n_raw, "at": 16}
    if magic == b"ZPR3":
        out["alpha"], out["beta"] = struct.unpack_from("<dd", chunk, 16)
        out["at"] = 32
    if stage == 3:
        out["model"] = chunk[out["at"]]
    return out


def contexts(name: str, monkeypatch) -> list[tuple[int, int | None, int | None, int]]:
    """(model, symbol of A, symbol of B, level group) of each symbol the reference decoder
    decodes from the case's chunk (None: no such neighbour)."""
    case = BY_NAME[name]
    seen = []
    symbol = predict_reference.Rans.symbol

    def recording(self, a, b, group):
        seen.append((self.model, a, b, group))
        return symbol(self, a, b, group)

    monkeypatch.setattr(predict_reference.Rans, "symbol", recording)
    predict_reference.decode(chunk_of(name), np.dtype(case.dtype), case.shape,
                             case.config.get("abs_error"),
                             np.nan if case.fill is None else np.asarray(case.fill, case.dtype),
                             reference=case.config.get("mask"))
    return seen


@pytest.mark.parametrize(("name", "model"), [("lorenzo-model2-fill", 2),
                                             ("lorenzo-model3-fill", 3)])
def test_lorenzo_chunks_use_context_models_2_and_3(name, model, monkeypatch):
    """Every Lorenzo stage 3 chunk before v2.8 has model 0, where a context changes nothing;
    these have models 2 and 3, and symbols whose A is missing (the first column) while B has
    a class other than 0, where a decoder that took a missing A as 0 (model 3) or as symbol
    0 (both) decodes another table's token."""
    h = header(chunk_of(name))
    assert (h["format"], h["predictor"], h["stage"], h["model"]) == (1, 1, 3, model)
    seen = contexts(name, monkeypatch)
    assert {m for m, *_ in seen} == {model} and {g for *_, g in seen} == {0}
    lonely_b = [b for _, a, b, _ in seen if a is None and b is not None]
    assert sum(predict_reference.symbol_class(b) != 0 for b in lonely_b) > 0


@pytest.mark.parametrize(("name", "model"), [("lorenzo-model2-fill", 2),
                                             ("lorenzo-model3-fill", 3),
                                             ("ans-model2-fill", 2), ("ans-model3-fill", 3)])
def test_fill_value_symbols_are_context_neighbours_under_models_2_and_3(name, model,
                                                                        monkeypatch):
    """Class 4 (a neighbour whose symbol is 1, the fill value) in contexts whose tables are
    its own: under model 2 the tables 4 g + 3, under model 3 the fine contexts of hi = 4."""
    case = BY_NAME[name]
    assert case.fill == FILL and np.count_nonzero(case.data(case.dtype) == FILL) > 0
    assert header(chunk_of(name))["model"] == model
    seen = contexts(name, monkeypatch)
    fine = [fine_context(a, b, g) for _, a, b, g in seen if 1 in (a, b)]
    assert fine and all(f % 15 >= 10 for f in fine)      # (hi = 4: pairs 10 .. 14)
    tables = {predict_reference.model_table(model, f) for f in fine}
    if model == 2:
        assert tables == {4 * g + 3 for g in {f // 15 for f in fine}}
    else:
        assert tables == set(fine) and len({f % 15 for f in fine}) > 1     # (lo told apart)


def fine_context(a: int | None, b: int | None, group: int) -> int:
    """The spec's fine context of neighbours' symbols a, b (None: missing) at level group g."""
    ca = predict_reference.symbol_class(a) if a is not None else None
    cb = predict_reference.symbol_class(b) if b is not None else None
    ca, cb = (ca if ca is not None else cb if cb is not None else 0,
              cb if cb is not None else ca if ca is not None else 0)
    lo, hi = min(ca, cb), max(ca, cb)
    return 15 * group + hi * (hi + 1) // 2 + lo


def test_a_relative_chunk_with_an_exact_map():
    """A non-empty exact map: the elements marked are float32's largest values (their
    decoded values round past the largest float32 to infinity), whose logarithms stay in the
    chunk; n_exact counts them with the NaN logarithms' (the NaN and the fill value). (Its
    v2.10 chunk, of kind 4: the check there is against kind 3's 2^v, and its exact map is a
    zstd frame as kind 3's.)"""
    name = "rel-exact-map"
    case = BY_NAME[name]
    chunk = chunk_of(name)
    magic, kind, size, log_fill, b, n_exact, length = struct.unpack_from("<4sBBHdQQ", chunk)
    assert (magic, kind, size) == (b"ZPR2", 4, 4)
    at = 32 + length
    (signs,) = struct.unpack_from("<Q", chunk, at)
    at += 8 + signs
    (map_length,) = struct.unpack_from("<Q", chunk, at)
    assert map_length > 0
    n = math.prod(case.shape)
    bits = np.frombuffer(bytes(Zstd().decode(chunk[at + 8:at + 8 + map_length])), np.uint8)
    marked = np.unpackbits(bits, count=n).astype(bool)
    x = case.data(case.dtype).reshape(-1)
    assert marked.any() and np.all(np.abs(x[marked]) >= 2.0 ** 127)
    odd = np.isnan(x) | (x == FILL)
    assert n_exact == np.count_nonzero(marked | odd) and not (marked & odd).any()


@pytest.mark.parametrize(("name", "D"), [("reference-mask-1d", 1), ("reference-mask-2d", 2),
                                         ("reference-mask-4d", 4), ("reference-mask-5d", 4)])
def test_reference_masks_of_other_dimension_counts(name, D):
    """Masked chunks whose header's reference field is 1, of the spec's D = 1, 2, 4 (the 5-d
    chunk merged to 4; the 2-d one with an extent of 1 dropped); the reference's shape the
    chunk's last two extents padded to four dimensions."""
    case = BY_NAME[name]
    chunk = chunk_of(name)
    magic, kind, size, looks, n_masked = struct.unpack_from("<4sBBHQ", chunk)
    assert (magic, kind, looks) == (b"ZPR2", 2, 1) and 0 < n_masked < math.prod(case.shape)
    dims = predict_reference.spec_shape(case.shape)
    assert len(dims) == D
    assert case.config["mask"]["shape"] == ([1, 1] + dims)[-2:]
    if name == "reference-mask-5d":
        assert len(case.shape) == 5 and 1 not in case.shape
    if name == "reference-mask-2d":
        assert 1 in case.shape


def test_format_3_by_slices_whose_first_level_is_not_the_chunks():
    """Predictor 4 in format 3, each slice's first level s_0 below the chunk's, at a step that
    differs: f of the slice's s_0 is not f of the chunk's."""
    name = "levels-slices-first-level"
    case = BY_NAME[name]
    h = header(chunk_of(name))
    assert (h["format"], h["predictor"]) == (3, 4)

    def top(dims):
        s = 1
        while s < max(dims) - 1:
            s *= 2
        return s

    def factor(s):
        f = 1.0
        while s > 1:
            f = min(f * h["alpha"], h["beta"])
            s //= 2
        return f
    dims = predict_reference.spec_shape(case.shape)
    assert top(dims[1:]) < top(dims) and factor(top(dims[1:])) != factor(top(dims))


@pytest.mark.parametrize("name", [f"{label}-{p}-pcodec_levels" for label in ("ones", "5d")
                                  for p in ("interpolation", "interpolation_reversed",
                                            "interpolation_slices")])
def test_stage_2_with_extents_of_1_dropped_and_dimensions_merged(name):
    """Stage 2 on the spec's shape: the four groups' pcodec data hold exactly the elements of
    each group as the spec's (dropped, merged) dimensions give them."""
    from pcodec import standalone

    case = BY_NAME[name]
    assert 1 in case.shape or len(case.shape) > 4
    chunk = chunk_of(name)
    h = header(chunk)
    assert h["stage"] == 2 and h["predictor"] in (2, 3, 4)
    dims = predict_reference.spec_shape(case.shape)
    assert len(dims) < len(case.shape)
    sizes = [0, 0, 0, 0]
    for index in np.ndindex(*dims):
        sizes[predict_reference.level_group(index, h["predictor"])] += 1
    at = h["at"]
    for size in sizes:
        (length,) = struct.unpack_from("<Q", chunk, at)
        at += 8
        got = standalone.simple_decompress(chunk[at:at + length]) if length else None
        assert (0 if got is None else got.size) == size
        at += length


def test_every_v28_case_is_shown_here():
    v28 = {name for name, version in written().items() if version.name == "v2.8"}
    # (rel-exact-map: written again in v2.9, as kind 3)
    shown = {"lorenzo-model2-fill", "lorenzo-model3-fill", "ans-model2-fill", "ans-model3-fill",
             "reference-mask-1d", "reference-mask-2d", "reference-mask-4d",
             "reference-mask-5d", "levels-slices-first-level",
             *(f"{label}-{p}-pcodec_levels" for label in ("ones", "5d")
               for p in ("interpolation", "interpolation_reversed", "interpolation_slices"))}
    assert v28 == shown


def relative_at(chunk: bytes, face: str, shape: tuple[int, ...]) -> bytes:
    """The relative chunk of a case's bytes (the numcodecs face's buffer: after its shape)."""
    return chunk[1 + 8 * len(shape):] if face == "numcodecs" else chunk


def test_the_v29_cases_are_kind_3_chunks_kind_1_s_but_for_the_kind():
    """v2.9 writes every relative case again as kind 3 (the encoder's bound b and its
    logarithms unchanged: each chunk is its older version's, kind byte aside) and adds
    rel-far."""
    upto = written(before=GOLDEN / "v2.10")
    v29 = {name for name, version in upto.items() if version.name == "v2.9"}
    relative = {c.name for c in CASES if "rel_error" in c.config and c.name in upto}
    assert v29 == relative and "rel-far" in v29
    for name in sorted(v29):
        case = BY_NAME[name]
        chunk = relative_at((upto[name] / f"{name}.bin").read_bytes(), case.face, case.shape)
        assert chunk[:5] == b"ZPR2\x03", name
        older = written(before=upto[name])
        if name in older:
            old = relative_at((older[name] / f"{name}.bin").read_bytes(), case.face, case.shape)
            assert old[:5] == b"ZPR2\x01" and old[5:] == chunk[5:], name


def test_rel_far_takes_the_scalar_path_at_both_ends():
    """rel-far's logarithms (decoded by the reference) put 2^m outside the normal numbers at
    both ends (m = floor(rint(64 v) / 64) below -1022 for subnormal values, and up to 1023),
    where a decoder's scaleB rounds once into the subnormals; the reference decodes the chunk
    to its manifest's values within R."""
    name = "rel-far"
    case = BY_NAME[name]
    chunk = chunk_of(name)
    magic, kind, size, log_fill, b, n_exact, length = struct.unpack_from("<4sBBHdQQ", chunk)
    assert (magic, kind, size, n_exact) == (b"ZPR2", 4, 8, 0)
    logs = predict_reference.decode(chunk[32:32 + length], np.dtype("f8"), case.shape, b,
                                    [-math.inf, math.nan][log_fill]).reshape(-1)
    m = np.floor(np.round(logs * 64) / 64)
    assert (m < -1022).sum() > 50 and (m == 1023).any() and (m > 1000).sum() > 200
    x = case.data(case.dtype)
    y = predict_reference.decode(chunk, np.dtype("f8"), case.shape, None, None)
    assert np.all(np.abs(y - x) <= 1e-3 * np.abs(x))


@pytest.mark.parametrize("name", ["rel-signs-3d-float64", "rel-signs-2d-float32"])
def test_the_v210_signed_fields_are_kind_4_with_every_class(name):
    """v2.10's fields that change sign in regions are kind 4: their sign stream's t is the
    largest logarithm (within the bound b of the largest decoded one), every class (0, 1, 2)
    occurs, the tiles read by the reference
    give each element's sign, some tiles are one sign and some are not; the stream is
    shorter than kind 3's zstd bitmap of the same bits."""
    case = BY_NAME[name]
    chunk = chunk_of(name)
    magic, kind, size, log_fill, b, n_exact, length = struct.unpack_from("<4sBBHdQQ", chunk)
    assert (magic, kind) == (b"ZPR2", 4)
    logs = predict_reference.decode(chunk[32:32 + length], np.dtype("f8"), case.shape, b,
                                    [-math.inf, math.nan][log_fill]).reshape(-1)
    (signs,) = struct.unpack_from("<Q", chunk, 32 + length)
    stream = chunk[40 + length:40 + length + signs]
    (t,) = struct.unpack_from("<d", stream)
    assert abs(t - logs[np.isfinite(logs)].max()) <= b
    assert {predict_reference.sign_class(t, v) for v in logs.tolist()} == {0, 1, 2}
    bits = np.array(predict_reference.decode_signs(stream, predict_reference.spec_shape(case.shape),
                                                   logs.tolist()), bool)
    x = case.data(case.dtype).reshape(-1)
    finite = ~np.isnan(x)
    assert np.array_equal(bits[finite], np.signbit(x)[finite])
    plane = bits.reshape(-1, *case.shape[-2:])[0]
    tiles = [plane[i:i + 8, j:j + 8] for i in range(0, plane.shape[0], 8)
             for j in range(0, plane.shape[1], 8)]
    assert any(t.all() or not t.any() for t in tiles) and any(t.any() and not t.all() for t in tiles)
    assert len(stream) < len(Zstd(level=3).encode(np.packbits(bits).tobytes()))
