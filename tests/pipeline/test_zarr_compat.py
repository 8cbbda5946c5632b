"""The places where zdt reaches into zarr (zdt.zarr_compat): each test here fails loudly the
day zarr changes under one of them, saying what to revisit."""

from __future__ import annotations

from importlib.resources import files

import numpy as np
import pytest
import zarr
from zarr.codecs import BytesCodec
from zarr.core.dtype import VariableLengthUTF8

from zdt import zarr_compat
from zdt.codecs.zarr import VLenArrowCodec, VLenUTF8Codec


def test_zarr_accepts_a_string_codec_by_its_class_name():
    """zarr.core.metadata.v3.validate_codecs checks the class name of a string array's
    serializer; if this fails, zarr checks something else (the codec id?) and
    passes_string_codec_check can go."""
    from zarr.core.metadata.v3 import validate_codecs

    class Renamed(VLenArrowCodec):
        pass

    Renamed.__name__ = "SomeOtherName"
    with pytest.raises(ValueError, match="SomeOtherName"):
        validate_codecs((Renamed(),), VariableLengthUTF8())
    validate_codecs((VLenArrowCodec(),), VariableLengthUTF8())
    assert VLenArrowCodec.__name__ == zarr_compat.ZARR_STRING_CODEC_CLASS_NAME
    assert VLenArrowCodec.__qualname__ == "VLenArrowCodec"


def test_new_arrays_get_the_serializer_default_serializer_v3_picks():
    """zarr builds a new array's serializer in zarr.core.array.default_serializer_v3; if this
    fails, zarr picks it elsewhere and use_string_codecs() must follow."""
    def choose(dtype, serializer):
        return VLenArrowCodec(offsets="int64") if serializer.to_dict()["name"] == "vlen-utf8" else None

    try:
        zarr_compat.set_string_serializer(choose)
        a = zarr.create_array(store={}, shape=(3,), dtype=str)
        b = zarr.create_array(store={}, shape=(3,), dtype="float64")
    finally:
        zarr_compat.set_string_serializer(None)
    c = zarr.create_array(store={}, shape=(3,), dtype=str)
    assert a.metadata.codecs[0] == VLenArrowCodec(offsets="int64")
    assert type(b.metadata.codecs[0]) is BytesCodec
    assert type(c.metadata.codecs[0]).__module__.startswith("zarr.")
    import zarr.core.array as za

    assert za.default_serializer_v3.__module__ == "zarr.core.array"     # zarr's own is back


def test_use_string_codecs_uses_that_route():
    import zdt

    with zdt.use_string_codecs():
        a = zarr.create_array(store={}, shape=(3,), dtype=str)
    b = zarr.create_array(store={}, shape=(3,), dtype=str)
    assert type(a.metadata.codecs[0]) is VLenUTF8Codec
    assert type(b.metadata.codecs[0]).__module__.startswith("zarr.")


def test_zarr_io_loop_is_where_stop_zarr_io_looks():
    """stop_zarr_io cancels what runs on zarr.core.sync.loop[0]; if this fails, zarr keeps its
    IO loop elsewhere and an interrupted zdt convert could leave a partial copy behind."""
    from zarr.core import sync as zarr_sync

    zarr.create_array(store={}, shape=(2,), dtype="int8")[:] = 1     # zarr's loop is running
    loop = zarr_sync.loop[0]
    assert loop is not None and loop.is_running()


def test_installed_config_names_zdts_classes_for_its_two_shared_codec_names():
    """zdt.yaml (installed as <prefix>/etc/zarr/zdt.yaml) configures exactly the codecs in
    IMPLEMENTATIONS, and zarr read it at import."""
    import yaml

    installed = yaml.safe_load(files("zdt").joinpath("config/zdt.yaml").read_text())
    assert installed == {"codecs": zarr_compat.IMPLEMENTATIONS}
    for name, cls in zarr_compat.IMPLEMENTATIONS.items():
        assert zarr.config.get(f"codecs.{name}") == cls
    assert zarr.config.get("codecs.bytes") == "zarr.codecs.bytes.BytesCodec"


def test_the_spec_probe_matches_this_zarr():
    """zarr_threads_array_spec tells whether zarr hands each codec the spec the codecs before it
    produce (zarr >= 3.4) or the array's own (3.1); array_spec_before is needed only then."""
    from packaging.version import Version

    assert zarr_compat.zarr_threads_array_spec() == (Version(zarr.__version__) >= Version("3.4"))


def test_array_spec_before_finds_the_spec_inside_zarrs_metadata_constructor():
    """On zarr 3.1 the frame walk must find zarr's constructor locals; on newer zarr it is
    not used (and finds nothing)."""
    from zdt.codecs.zarr import CastValueCodec, ScaleOffsetCodec

    seen = []
    original = zarr_compat.array_spec_before

    def spy(codec, spec):
        found = original(codec, spec)
        seen.append(None if found is None else (found.dtype.to_json(zarr_format=3),
                                                float(found.fill_value)))
        return found

    try:
        zarr_compat.array_spec_before = spy
        zarr.create_array(store={}, shape=(4,), dtype="float64", fill_value=12.0,
                          filters=[ScaleOffsetCodec(offset=10, scale=2), CastValueCodec(data_type="uint8")])
    finally:
        zarr_compat.array_spec_before = original
    if zarr_compat.zarr_threads_array_spec():
        assert seen == []
    else:
        assert seen == [("float64", 12.0), ("float64", 4.0)]


def test_registry_attributes_the_citizen_tests_read_exist():
    """tests/pipeline/test_zarr_citizen.py snapshots zarr's registries through these names."""
    from zarr import registry
    from zarr.core.dtype import data_type_registry

    codecs = getattr(registry, "_codec_registries", None) or getattr(registry, "__codec_registries")
    assert "bytes" in codecs and isinstance(data_type_registry.contents, dict)
    assert np.dtype("float64") == zarr.create_array(store={}, shape=(1,), dtype="float64").dtype
