"""zdt against zarr's own cast_value (zarr >= 3.2, backed by cast-value-rs).

Wherever zarr's built-in produces a result, zdt produces the same bytes, unless the built-in
disagrees with the exact reference: then the case must be one of the known deviations listed
below (and zdt agrees with the reference, which test_cast_reference checks for every case).
Arrays written with either implementation are read back by the other.

.ci/run runs this module under Python 3.12 with the newest zarr and cast-value-rs; on zarr 3.1.x
there is no built-in to compare with.
"""

from __future__ import annotations

import numpy as np
import pytest
import zarr
from hypothesis import given
from hypothesis import strategies as st

import reference
from strategies import ALL_NAMES, ROUNDINGS, arrays, scalar_maps
from zdt import zarr_compat
from zdt.codecs.cast import CastPlan
from zdt.errors import CastError, ConfigError
from zdt.formats import FORMATS

import cast_value_rs  # noqa: F401  (conftest collects this module only where both exist)
from zarr.codecs.cast_value import CastValue


def builtin_encode(arr, target, rounding, oor, pairs):
    """zarr's built-in codec, through its public codec interface."""
    from zarr.core.array_spec import ArrayConfig, ArraySpec
    from zarr.core.buffer import default_buffer_prototype
    from zarr.core.buffer.cpu import NDBuffer
    from zarr.core.dtype import get_data_type_from_json

    codec = CastValue(data_type=target, rounding=rounding, out_of_range=oor,
                      scalar_map={"encode": pairs} if pairs else None)
    source = get_data_type_from_json(arr.dtype.name, zarr_format=3)
    spec = ArraySpec(shape=arr.shape, dtype=source, fill_value=source.default_scalar(),
                     config=ArrayConfig.from_dict({}), prototype=default_buffer_prototype())
    out = codec._encode_sync(NDBuffer.from_numpy_array(arr), spec)
    return out.as_numpy_array()


def known_deviation(pairs, source, target):
    """Cases where zarr's built-in is known to disagree with the spec:

    * scalar_map entries are handed to cast-value-rs as float64, so 64-bit integer keys or
      values beyond 2**53 lose precision (SPEC_NOTES: never through float64 for 64-bit
      integers);
    * scalar_map entries go through dict(), so the *last* of duplicate keys wins (spec: "If the
      same input scalar is repeated, readers MUST use the first occurrence").
    """
    for k, v in pairs:
        for value, dtype in ((k, source), (v, target)):
            if isinstance(value, int) and np.dtype(dtype).itemsize == 8 and abs(value) > 2**53:
                return "64-bit scalar_map entry beyond 2**53"
    keys = [reference.decode_json_scalar(k, source)[0] for k, _ in pairs]
    for i, a in enumerate(keys):
        for b in keys[i + 1:]:
            if (a.kind == b.kind == "any_nan") or (a.kind == b.kind == "value" and a.value.kind == b.value.kind
                                                   and a.value.exact == b.value.exact
                                                   and (a.value.kind != "inf" or a.value.neg == b.value.neg)):
                return "duplicate scalar_map key: the built-in lets the last one win"
    return None


@pytest.mark.parametrize("target", ALL_NAMES)
@pytest.mark.parametrize("source", ALL_NAMES)
@given(data=st.data())
def test_same_bytes_wherever_the_builtin_succeeds(source, target, data):
    arr = data.draw(arrays(source), label="arr")
    rounding = data.draw(st.sampled_from(ROUNDINGS), label="rounding")
    oor = data.draw(st.sampled_from([None, "clamp", "wrap"] if np.dtype(target).kind in "iu"
                                    else [None, "clamp"]), label="out_of_range")
    # hex-encoded keys are not understood by the built-in's map parser (it calls float(key))
    pairs = data.draw(scalar_maps(source, target).filter(
        lambda ps: not any(isinstance(x, str) and x.startswith("0x") for p in ps for x in p)),
        label="scalar_map")
    expected = reference.cast_array(arr, np.dtype(target), rounding, oor,
                                    reference.compile_map(pairs, np.dtype(source), np.dtype(target)))
    plan = CastPlan(FORMATS[source], FORMATS[target], rounding=rounding, out_of_range=oor,
                    scalar_map=pairs)
    try:
        theirs = builtin_encode(arr, target, rounding, oor, pairs)
    except (ValueError, TypeError, OverflowError):
        theirs = None       # the built-in produced no result (its errors are not compared)
    if isinstance(expected, tuple):     # the spec says this cast fails: so does zdt
        with pytest.raises(CastError):
            plan.cast(arr)
        return
    ours = plan.cast(arr)
    assert reference.same_bits_or_nan(ours, expected).all()
    if theirs is not None:
        same = reference.same_bits_or_nan(ours, theirs)
        assert same.all() or known_deviation(pairs, source, target), (
            f"zarr's built-in differs from zdt and from the reference: {arr[~same]} -> "
            f"{theirs[~same]} (zdt {ours[~same]})")


CONFIGS = [
    ("float64", {"data_type": "uint8", "out_of_range": "clamp",
                 "scalar_map": {"encode": [["NaN", 0]], "decode": [[0, "NaN"]]}}, np.nan),
    ("float32", {"data_type": "int16", "rounding": "towards-zero", "out_of_range": "wrap"}, 0.0),
    ("int64", {"data_type": "float64", "rounding": "towards-negative"}, 0),
    ("float64", {"data_type": "float16", "rounding": "nearest-away", "out_of_range": "clamp"}, -0.0),
    ("uint16", {"data_type": "int8", "out_of_range": "clamp"}, 7),
]


def _data(dtype, n=50):
    rng = np.random.default_rng(5)
    if np.dtype(dtype).kind == "f":
        d = (rng.standard_normal(n) * 300).astype(dtype)
        d[::7] = np.nan if dtype == "float64" else d[::7]
        return d
    info = np.iinfo(dtype)
    return rng.integers(max(int(info.min), -2**60), min(int(info.max), 2**60), n, dtype=dtype)


@pytest.mark.parametrize(("dtype", "config", "fill"), CONFIGS)
def test_arrays_written_by_either_are_read_by_the_other(tmp_path, dtype, config, fill):
    zdt_cls = "zdt.codecs.zarr.cast_value.CastValueCodec"
    zarr_cls = "zarr.codecs.cast_value.CastValue"
    data = _data(dtype)
    results = {}
    for writer, reader in [(zdt_cls, zarr_cls), (zarr_cls, zdt_cls)]:
        path = tmp_path / writer.split(".")[0]
        with zarr.config.set({"codecs.cast_value": writer}):
            a = zarr.create_array(store=path, shape=data.shape, chunks=(16,), dtype=dtype,
                                  fill_value=fill, compressors=None,
                                  filters=[{"name": "cast_value", "configuration": config}])
            a[:] = data
        with zarr.config.set({"codecs.cast_value": reader}):
            b = zarr.open_array(path)
            assert type(b.metadata.codecs[0]).__module__.split(".")[0] == reader.split(".")[0]
            results[writer] = b[:]
        chunks = sorted((path / "c").iterdir())
        results[writer + " bytes"] = b"".join(p.read_bytes() for p in chunks)
    assert np.array_equal(results[zdt_cls], results[zarr_cls], equal_nan=True)
    assert results[zdt_cls + " bytes"] == results[zarr_cls + " bytes"]


def test_builtin_and_zdt_configs_are_interchangeable():
    for _, config, _ in CONFIGS:
        data = {"name": "cast_value", "configuration": config}
        assert CastValue.from_dict(data).to_dict()["configuration"]["data_type"] == config["data_type"]
        from zdt.codecs.zarr import CastValueCodec

        assert CastValueCodec.from_dict(data).to_dict() == data


def test_zdt_is_stricter_where_the_spec_says_so():
    """Fill values the built-in accepts but the spec (and SPEC_NOTES) rejects."""
    assert zarr_compat.zarr_threads_array_spec()
    with zarr.config.set({"codecs.cast_value": "zarr.codecs.cast_value.CastValue"}):
        zarr.create_array(store={}, shape=(4,), dtype="float64", fill_value=1.5,
                          filters=[{"name": "cast_value", "configuration": {"data_type": "int8"}}])
    with pytest.raises(ConfigError, match="does not survive the round trip"):
        zarr.create_array(store={}, shape=(4,), dtype="float64", fill_value=1.5,
                          filters=[{"name": "cast_value", "configuration": {"data_type": "int8"}}])
    with pytest.raises(CastError):
        CastPlan(FORMATS["float64"], FORMATS["int8"]).cast(np.array([np.nan]))


# --- scale_offset -------------------------------------------------------------------------------------

from zarr.codecs.scale_offset import ScaleOffset as ZarrScaleOffset  # noqa: E402

from zdt.errors import ScaleOffsetError
from zdt.codecs.scale_offset import cached_plan  # noqa: E402


def builtin_scale_offset(arr, offset, scale, decode):
    from zarr.core.array_spec import ArrayConfig, ArraySpec
    from zarr.core.buffer import default_buffer_prototype
    from zarr.core.buffer.cpu import NDBuffer
    from zarr.core.dtype import get_data_type_from_json

    codec = ZarrScaleOffset(offset=offset, scale=scale)
    dtype = get_data_type_from_json(arr.dtype.name, zarr_format=3)
    codec.validate(shape=arr.shape, dtype=dtype, chunk_grid=None)
    spec = ArraySpec(shape=arr.shape, dtype=dtype, fill_value=dtype.default_scalar(),
                     config=ArrayConfig.from_dict({}), prototype=default_buffer_prototype())
    method = codec._decode_sync if decode else codec._encode_sync
    with np.errstate(all="ignore"):
        return method(NDBuffer.from_numpy_array(arr), spec).as_numpy_array()


@pytest.mark.parametrize("dtype", ALL_NAMES)
@given(data=st.data())
def test_scale_offset_same_bytes_wherever_the_builtin_is_right(dtype, data):
    """Where zarr's ScaleOffset is right (agrees with the exact reference), zdt gives the same
    bytes; where the reference says the element must fail, zdt raises although the built-in
    may return a value (it wraps int64 silently and range-checks only final values)."""
    dt = np.dtype(dtype)
    arr = data.draw(arrays(dtype), label="arr")
    small = st.integers(-5, 5) if dt.kind == "i" else st.integers(0, 5)
    offset = data.draw(small, label="offset")
    scale = data.draw(small.filter(lambda v: v != 0) if dt.kind in "iu"
                      else st.sampled_from([1, 2, -3, 0.5, 0.1, 1e30]), label="scale")
    decode = data.draw(st.booleans(), label="decode")
    with np.errstate(over="ignore"):
        scale_v = np.array(scale, dtype=np.float64 if isinstance(scale, float) else object).astype(dt)[()]
    if not np.isfinite(scale_v):        # the scale itself is beyond the type's range
        with pytest.raises(ConfigError, match="beyond the range"):
            cached_plan(dtype, offset, scale)
        return
    try:
        theirs = builtin_scale_offset(arr, offset, scale, decode)
    except (ValueError, TypeError, OverflowError, FloatingPointError):
        theirs = None
    expected = reference.scale_offset_array(arr, dt.type(offset), scale_v, decode)
    plan = cached_plan(dtype, offset, scale)
    if isinstance(expected, tuple):
        with pytest.raises(ScaleOffsetError):
            plan.decode(arr) if decode else plan.encode(arr)
        return
    ours = plan.decode(arr) if decode else plan.encode(arr)
    assert reference.same_bits_or_nan(ours, expected).all()
    if theirs is not None and reference.same_bits_or_nan(theirs, expected).all():
        assert reference.same_bits_or_nan(ours, theirs).all()


@pytest.mark.parametrize(("dtype", "config", "fill"), [
    ("float64", {"offset": -10, "scale": 0.1}, 0.0),
    ("int32", {"offset": 1000, "scale": 3}, 1000),
    ("uint16", {"offset": 1000}, 1000),
    ("float32", {"scale": 4.0}, 1.5),
])
def test_scale_offset_arrays_written_by_either_are_read_by_the_other(tmp_path, dtype, config, fill):
    rng = np.random.default_rng(3)
    if np.dtype(dtype).kind == "f":
        data = rng.uniform(0, 100, 40).astype(dtype)
    else:
        data = rng.integers(1000, 3000, 40).astype(dtype)
    impls = ["zdt.codecs.zarr.scale_offset.ScaleOffsetCodec", "zarr.codecs.scale_offset.ScaleOffset"]
    results = {}
    for writer, reader in [impls, impls[::-1]]:
        path = tmp_path / writer.split(".")[0]
        with zarr.config.set({"codecs.scale_offset": writer}):
            a = zarr.create_array(store=path, shape=data.shape, chunks=(16,), dtype=dtype,
                                  fill_value=fill, compressors=None,
                                  filters=[{"name": "scale_offset", "configuration": config}])
            a[:] = data
        with zarr.config.set({"codecs.scale_offset": reader}):
            b = zarr.open_array(path)
            assert type(b.metadata.codecs[0]).__module__.split(".")[0] == reader.split(".")[0]
            results[writer] = b[:]
        results[writer + " bytes"] = b"".join(p.read_bytes() for p in sorted((path / "c").iterdir()))
    assert np.array_equal(results[impls[0]], results[impls[1]])
    assert results[impls[0] + " bytes"] == results[impls[1] + " bytes"]


def test_scale_offset_builtin_wraps_int64_where_zdt_raises():
    arr = np.array([2**62], np.int64)
    theirs = builtin_scale_offset(arr, -(2**62), 1, False)      # silently wrapped
    assert int(theirs[0]) == -(2**63)
    with pytest.raises(ScaleOffsetError, match="subtraction"):
        cached_plan("int64", -(2**62), 1).encode(arr)
