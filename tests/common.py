"""Round-trip helpers every codec's tests use (numcodecs' check_encode_decode / check_config /
check_repr pattern, plus the same for the zarr v3 face).

Each helper asserts; none returns an "ok" flag. `expected` values always come from the caller
(the input itself for a lossless codec, tests/reference.py for a lossy one), never from the
codec under test."""

from __future__ import annotations

import array
import json
from typing import Any

import numcodecs
import numpy as np
import zarr
from zarr.registry import get_codec_class


def same_values(got: np.ndarray, expected: np.ndarray) -> bool:
    """Equal dtype, shape and elements: NaN equals NaN, -0.0 is told from 0.0; strings and
    objects by value; the low-precision types by the value each element stands for."""
    got, expected = np.asarray(got), np.asarray(expected)
    if got.dtype != expected.dtype or got.shape != expected.shape:
        return False
    if got.dtype.kind in "TOSU":
        return got.tolist() == expected.tolist()
    if got.dtype.kind in "iub":
        return bool(np.array_equal(got, expected))
    # floats, and the ml_dtypes types (kind "V"), through float64 (exact for all of them)
    a, b = got.astype(np.float64), expected.astype(np.float64)
    return bool(np.array_equal(a, b, equal_nan=True)
                and np.array_equal(np.signbit(a), np.signbit(b)))


# --- the numcodecs face ---------------------------------------------------------------------

def check_encode_decode(codec: numcodecs.abc.Codec, arr: np.ndarray,
                        expected: np.ndarray | None = None, raw: bool = True,
                        identity: bool = False) -> None:
    """Encode `arr` given as an ndarray, bytes, bytearray and array.array (raw bytes are read
    as the codec's dtype; `raw` False: a codec that needs the array's shape and type refuses
    them), decode each result from bytes and into `out=`; every decoding equals `expected`
    (default: `arr`, for a lossless configuration). `identity`: decoding is the identity, so
    bytes decode to bytes (numcodecs' convention), viewed as the array's type here."""
    expected = arr if expected is None else expected
    encoded = codec.encode(arr)
    forms = [arr]
    if arr.flags.c_contiguous and raw:
        forms += [arr.tobytes(), bytearray(arr.tobytes())]
        if arr.dtype.char in array.typecodes and arr.dtype.isnative:
            forms.append(array.array(arr.dtype.char, arr.reshape(-1).tolist()))
    for form in forms:
        enc = codec.encode(form)
        assert np.asarray(enc).tobytes() == np.asarray(encoded).tobytes(), type(form)
        dec = codec.decode(enc).reshape(arr.shape)
        assert same_values(dec, expected), (type(form), dec, expected)
        dec = codec.decode(np.ascontiguousarray(enc).tobytes())
        if identity:
            dec = np.asarray(dec).view(expected.dtype)
        assert same_values(dec.reshape(arr.shape), expected), type(form)
        out = np.empty_like(expected)
        result = codec.decode(enc, out=out)
        assert result is out and same_values(out, expected), type(form)


def check_config(codec: numcodecs.abc.Codec) -> None:
    """get_config -> JSON -> numcodecs.get_codec gives an equal codec with the same config."""
    config = codec.get_config()
    again = numcodecs.get_codec(json.loads(json.dumps(config)))
    assert type(again) is type(codec)
    assert again.get_config() == config
    assert again == codec


def check_repr(codec: Any, namespace: dict[str, Any]) -> None:
    """repr(codec) evaluates to an equal codec."""
    again = eval(repr(codec), dict(namespace))          # noqa: S307 - our own repr
    assert again == codec and repr(again) == repr(codec)


# --- the zarr v3 face -------------------------------------------------------------------------

def check_metadata(codec: Any) -> None:
    """to_dict -> JSON -> the class zarr resolves for the name -> from_dict: equal, hashable,
    and written again the same."""
    data = json.loads(json.dumps(codec.to_dict()))
    cls = get_codec_class(data["name"])
    again = cls.from_dict(data)
    assert type(again) is type(codec) and again == codec and hash(again) == hash(codec)
    assert again.to_dict() == codec.to_dict()


def check_array_round_trip(store: Any, data: np.ndarray, *, expected: np.ndarray | None = None,
                           chunks: tuple[int, ...] | None = None, **create: Any) -> zarr.Array:
    """Write `data` to a new zarr v3 array (create: zarr.create_array arguments), open it again,
    read everything: equal to `expected` (default: `data`). Returns the reopened array."""
    expected = data if expected is None else expected
    a = zarr.create_array(store=store, shape=data.shape, chunks=chunks or data.shape,
                          dtype=data.dtype, **create)
    a[...] = data
    b = zarr.open_array(store, mode="r")
    got = b[...]
    assert same_values(got, expected), (got, expected)
    return b
