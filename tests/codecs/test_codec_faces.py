"""Every codec, both faces, through the shared round-trip helpers of tests/common.py: buffers of
every kind, out=, configuration and metadata round trips, repr. Values each case must decode
to come from the data (lossless configurations) or tests/reference.py."""

from __future__ import annotations

import ml_dtypes
import numcodecs
import numpy as np
import pytest
from zarr.storage import MemoryStore

import predict_reference
import reference as ref
import zdt
from common import (check_array_round_trip, check_config, check_encode_decode, check_metadata,
                    check_repr)
from zdt.codecs.numcodecs.bitround import BitRound
from zdt.codecs.numcodecs.predict import Predict
from zdt.codecs.zarr import (CastValueCodec, PackBitsCodec, ScaleOffsetCodec, VLenArrowCodec,
                             VLenBytesCodec, VLenUTF8Codec)
from zdt.codecs.zarr.bitround import BitroundCodec
from zdt.codecs.zarr.predict import PredictCodec

NAN_MAP = {"encode": [["NaN", 0]], "decode": [[0, "NaN"]]}


def predicted(codec: Predict, x: np.ndarray, E: float) -> np.ndarray:
    """What the independent reference decoder makes of the chunk the codec writes (the face's
    envelope, one byte D and D u64 extents, taken off)."""
    data = bytes(codec.encode(x))
    return predict_reference.decode(data[1 + 8 * x.ndim:], x.dtype, x.shape, E, np.nan)


SMOOTH = (np.sin(np.arange(60.0) / 7)[:, None] * np.cos(np.arange(40.0) / 5)[None, :] * 10 + 280)
SMOOTH[3, 4] = np.nan

# (numcodecs codec, input, expected decoding: None = the input)
NUMCODECS = {
    "cast_value f8->u1 NaN map": (
        zdt.CastValue(dtype="<f8", data_type="uint8", scalar_map=NAN_MAP, out_of_range="clamp"),
        np.array([np.nan, 1.5, 2.5, 300.0, -4.0, 7.25]),
        ref.cast_array(ref.cast_array(np.array([np.nan, 1.5, 2.5, 300.0, -4.0, 7.25]), np.dtype("u1"),
                                      "nearest-even", "clamp",
                                      ref.compile_map(NAN_MAP["encode"], np.dtype("f8"), np.dtype("u1"))),
                       np.dtype("f8"), "nearest-even", "clamp",
                       ref.compile_map(NAN_MAP["decode"], np.dtype("u1"), np.dtype("f8")))),
    "cast_value i4->i2 lossless": (
        zdt.CastValue(dtype="<i4", data_type="int16"),
        np.arange(-300, 300, 7, dtype=np.int32).reshape(2, -1), None),
    "cast_value f4->bfloat16 lossless": (
        zdt.CastValue(dtype="<f4", data_type="bfloat16"),
        np.array([1.0, -2.5, 0.0, -0.0, np.inf, 3.140625], dtype=np.float32), None),
    "scale_offset f8": (        # -0.0 comes back +0.0: (-0.0 - 10) * 4 / 4 + 10
        zdt.ScaleOffset(dtype="<f8", offset=10, scale=4),
        np.array([10.0, 10.25, 11.5, -0.0, np.nan, 1e300 / 1e10]),
        ref.scale_offset_array(ref.scale_offset_array(
            np.array([10.0, 10.25, 11.5, -0.0, np.nan, 1e300 / 1e10]), np.float64(10), np.float64(4),
            False), np.float64(10), np.float64(4), True)),
    "scale_offset i8 exact": (
        zdt.ScaleOffset(dtype="<i8", offset=-7, scale=5),
        np.arange(-20, 20, dtype=np.int64) * 5 - 7, None),
    "scale_offset big-endian u2": (
        zdt.ScaleOffset(dtype=">u2", offset=100, scale=2),
        (np.arange(100, 140, dtype=">u2")), None),
    # (values of at most 4 significant bits: the rounding keeps them; NaN and infinities too)
    "bitround f8 keepbits 4": (
        BitRound(keepbits=4), np.array([1.5, -0.75, 1024.0, 0.0, np.nan, -np.inf, 1.25 * 2.0 ** -8]), None),
    "predict f8 abs 0.01": (
        Predict(abs_error=0.01), SMOOTH, predicted(Predict(abs_error=0.01), SMOOTH, 0.01)),
    "predict f4 interpolation": (
        Predict(abs_error=0.5, predictor="interpolation"), SMOOTH.astype(np.float32),
        predicted(Predict(abs_error=0.5, predictor="interpolation"), SMOOTH.astype(np.float32), 0.5)),
}


@pytest.mark.parametrize("name", NUMCODECS)
def test_numcodecs_face_round_trips(name):
    codec, data, expected = NUMCODECS[name]
    # (neither takes raw bytes: zdt.predict needs the shape, bitround the type; bitround's
    # decoding is the identity, bytes to bytes)
    check_encode_decode(codec, data, expected, raw=not isinstance(codec, (Predict, BitRound)),
                        identity=isinstance(codec, BitRound))
    if isinstance(codec, BitRound):
        # (its id is numcodecs' own BitRound's, which zdt leaves registered: a plugin changes
        # nothing it was not asked to; the config names the same rounding)
        assert numcodecs.get_codec(codec.get_config()).get_config() == codec.get_config()
    else:
        check_config(codec)
    check_repr(codec, {"CastValue": zdt.CastValue, "ScaleOffset": zdt.ScaleOffset,
                       "BitRound": BitRound, "Predict": Predict})


ZARR_CODECS = [
    CastValueCodec(data_type="uint8"),
    CastValueCodec(data_type="float8_e4m3fn", rounding="towards-zero", out_of_range="clamp",
                   scalar_map={"encode": [["NaN", "0x7f"]], "decode": [["0x7f", "NaN"]]}),
    CastValueCodec(data_type={"name": "int4"}, out_of_range="wrap"),
    ScaleOffsetCodec(offset=2.5, scale=4),
    ScaleOffsetCodec(offset="NaN"),
    ScaleOffsetCodec(),
    PackBitsCodec(), PackBitsCodec(padding_encoding="last_byte", first_bit=1, last_bit=3),
    VLenUTF8Codec(), VLenBytesCodec(), VLenArrowCodec(), VLenArrowCodec(offsets="int64"),
    BitroundCodec(keepbits=3),     # (its alias numcodecs.bitround is written as bitround: test_bitround)
    PredictCodec(abs_error=0.01), PredictCodec(rel_error=1e-3, predictor="lorenzo", entropy="zstd"),
]


@pytest.mark.parametrize("codec", ZARR_CODECS, ids=repr)
def test_zarr_face_metadata_round_trips(codec):
    # (zarr resolves vlen-utf8 / vlen-bytes to its own classes unless asked otherwise)
    with zdt.use_string_codecs():
        check_metadata(codec)
    check_repr(codec, {type(codec).__qualname__: type(codec)})


@pytest.mark.parametrize(("data", "create"), [
    ((np.arange(30.0) - 15).reshape(5, 6) / 64,
     {"filters": [ScaleOffsetCodec(offset=-1, scale=2 ** 10), CastValueCodec(data_type="uint16")],
      "chunks": (2, 4), "fill_value": -1.0}),
    (np.array([-8, 7, 0, -1, 3], dtype=ml_dtypes.int4),
     {"serializer": PackBitsCodec(padding_encoding="first_byte"), "fill_value": 0, "chunks": (2,)}),
    (np.array(["", "α", "bb" * 30], dtype=np.dtypes.StringDType()),
     {"serializer": VLenArrowCodec(), "fill_value": "", "chunks": (2,)}),
], ids=["scale_offset+cast_value", "int4 packbits", "strings arrow"])
def test_zarr_face_array_round_trips(data, create):
    """Lossless configurations: every chunk, partial edge chunks included, reads back as written."""
    check_array_round_trip(MemoryStore(), data, compressors=None, **create)
