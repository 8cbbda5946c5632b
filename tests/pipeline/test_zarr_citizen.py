"""zdt as a plugin that changes nothing it was not asked to.

Each test runs in a fresh interpreter (registration is per process): importing zdt, or zarr
loading zdt's entry points, must leave zarr and numcodecs exactly as they were; arrays that
use no zdt codec must see zarr's own classes; zdt's data types must come through the
``zarr.data_type`` entry points on zarr >= 3.2 and through one explicit ``zdt.register()`` on
zarr 3.1 (which never loads that group); the numcodecs codecs must work without zarr.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest
import zarr
from packaging.version import Version

ZARR_LOADS_DATA_TYPE_ENTRY_POINTS = Version(zarr.__version__) >= Version("3.2")

# What a plugin could change: zarr's whole config, every codec registry (names and classes),
# the data-type registry, the serializer zarr picks for new arrays, numcodecs' registry.
SNAPSHOT = textwrap.dedent("""
    import json
    import numcodecs
    import zarr
    import zarr.core.array as za
    from zarr import registry
    from zarr.core.dtype import data_type_registry

    def snapshot():
        return {
            "config": json.loads(json.dumps(zarr.config.to_dict(), sort_keys=True, default=str)),
            "codecs": {name: sorted(reg) for name, reg in (
                getattr(registry, "_codec_registries", None)
                or getattr(registry, "__codec_registries")).items()},
            "data types": {k: f"{v.__module__}.{v.__qualname__}"
                           for k, v in data_type_registry.contents.items()},
            "serializer": f"{za.default_serializer_v3.__module__}.{za.default_serializer_v3.__name__}",
            "numcodecs": sorted(numcodecs.registry.codec_registry),
        }
""")


def run(script: str, tmp_path) -> dict:
    """Run `script` (after SNAPSHOT) in a fresh interpreter; it prints one JSON value."""
    out = subprocess.run([sys.executable, "-c", SNAPSHOT + textwrap.dedent(script)],
                         capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_importing_zdt_changes_nothing_in_zarr_or_numcodecs(tmp_path):
    got = run("""
        before = snapshot()
        import zdt, zdt.codecs.zarr, zdt.codecs.numcodecs, zdt.dtypes, zdt.pipeline
        import zdt.zarr_compat, zdt.command
        after = snapshot()
        print(json.dumps({"same": before == after,
                          "changed": [k for k in before if before[k] != after[k]]}))
    """, tmp_path)
    assert got == {"same": True, "changed": []}


def test_zarr_loading_zdt_entry_points_changes_no_setting_and_no_other_codec(tmp_path):
    """zarr loads zdt's codecs lazily when an array names one; that adds zdt's classes under
    zdt's names and touches nothing else (a user's explicit codecs.bytes stays)."""
    got = run("""
        zarr.config.set({"codecs.bytes": "zarr.codecs.bytes.BytesCodec"})
        before = snapshot()
        from zarr.registry import get_codec_class
        for name in ("cast_value", "scale_offset", "packbits", "zdt.vlen_arrow", "vlen-utf8",
                     "vlen-bytes"):
            get_codec_class(name)
        after = snapshot()
        # (zarr loads every plugin's entry points for a name: count zdt's additions, and check
        # that nothing registered before went away)
        added = {name: sorted(c for c in set(after["codecs"][name]) - set(before["codecs"].get(name, []))
                              if c.startswith("zdt."))
                 for name in after["codecs"]}
        added = {name: classes for name, classes in added.items() if classes}
        kept = all(set(classes) <= set(after["codecs"][name])
                   for name, classes in before["codecs"].items())
        print(json.dumps({"config": before["config"] == after["config"],
                          "serializer": before["serializer"] == after["serializer"],
                          "bytes": after["codecs"]["bytes"], "added": added, "kept": kept,
                          "bytes class": get_codec_class("bytes").__module__}))
    """, tmp_path)
    assert got["config"] and got["serializer"] and got["kept"]
    assert got["bytes"] == ["zarr.codecs.bytes.BytesCodec"]
    assert got["bytes class"] == "zarr.codecs.bytes"
    assert got["added"] == {
        "cast_value": ["zdt.codecs.zarr.cast_value.CastValueCodec"],
        "scale_offset": ["zdt.codecs.zarr.scale_offset.ScaleOffsetCodec"],
        "packbits": ["zdt.codecs.zarr.packbits.PackBitsCodec"],
        "zdt.vlen_arrow": ["zdt.codecs.zarr.vlen.VLenArrowCodec"],
        "vlen-utf8": ["zdt.codecs.zarr.vlen.VLenUTF8Codec"],
        "vlen-bytes": ["zdt.codecs.zarr.vlen.VLenBytesCodec"],
    }


def test_arrays_without_zdt_codecs_get_zarrs_own_classes_after_zdt_is_loaded(tmp_path):
    """The failures zarr's own suite found when zdt replaced `bytes`: a bytes codec read back
    from metadata is zarr's class and equals the one zarr built, through JSON and pickle,
    inside a shard too."""
    got = run("""
        import pickle
        import numpy as np
        import zdt
        from zarr.codecs import BytesCodec, ShardingCodec
        from zarr.registry import get_codec_class
        get_codec_class("cast_value")               # zdt's entry point is loaded
        a = zarr.create_array(store={}, shape=(8,), chunks=(4,), dtype="float64", fill_value=0.0)
        a[:] = np.arange(8.0)
        b = zarr.open_array(a.store)
        shard = ShardingCodec(chunk_shape=(2,), codecs=[BytesCodec()])
        back = get_codec_class("sharding_indexed").from_dict(shard.to_dict())
        print(json.dumps({
            "classes": [f"{type(c).__module__}.{type(c).__name__}" for c in b.metadata.codecs],
            "json": back == shard, "pickle": pickle.loads(pickle.dumps(shard)) == shard,
            "values": b[:].tolist()}))
    """, tmp_path)
    assert got["classes"][0] == "zarr.codecs.bytes.BytesCodec"
    assert all(c.startswith("zarr.") for c in got["classes"])
    assert got["json"] and got["pickle"] and got["values"] == list(range(8))


@pytest.mark.skipif(not ZARR_LOADS_DATA_TYPE_ENTRY_POINTS,
                    reason="zarr 3.1 never loads zarr.data_type entry points (next test)")
def test_zarr_finds_zdt_data_types_through_entry_points_without_importing_zdt(tmp_path):
    got = run("""
        import ml_dtypes, numpy as np
        a = zarr.create_array(store={}, shape=(4,), dtype="bfloat16", fill_value=1.5)
        b = zarr.create_array(store={}, shape=(4,), dtype=np.dtype(ml_dtypes.int4), fill_value=-3)
        a[:] = np.array([1, 2, 3, 4], dtype=ml_dtypes.bfloat16)
        print(json.dumps({"a": type(a.metadata.data_type).__module__,
                          "b": b.metadata.data_type.to_json(zarr_format=3),
                          "values": a[:].astype(float).tolist(), "fill": float(b.fill_value)}))
    """, tmp_path)
    assert got == {"a": "zdt.dtypes", "b": "int4", "values": [1.0, 2.0, 3.0, 4.0], "fill": -3.0}


@pytest.mark.skipif(ZARR_LOADS_DATA_TYPE_ENTRY_POINTS,
                    reason="zarr >= 3.2 loads zarr.data_type entry points (previous test)")
def test_on_zarr_3_1_one_register_call_makes_the_data_types_known(tmp_path):
    got = run("""
        import zdt
        try:
            zarr.create_array(store={}, shape=(4,), dtype="bfloat16")
            unknown = None
        except Exception as exc:
            unknown = type(exc).__name__
        before = snapshot()
        zdt.register()
        zdt.register()                              # idempotent
        after = snapshot()
        a = zarr.create_array(store={}, shape=(4,), dtype="bfloat16", fill_value=1.5)
        added = sorted(set(after["data types"]) - set(before["data types"]))
        print(json.dumps({"unknown": unknown, "added": added,
                          "others": {k: v for k, v in before.items() if k != "data types"}
                                    == {k: v for k, v in after.items() if k != "data types"},
                          "type": type(a.metadata.data_type).__module__}))
    """, tmp_path)
    from zdt.dtypes import DATA_TYPES

    assert got["unknown"] is not None
    assert got["added"] == sorted(DATA_TYPES)
    assert got["others"] and got["type"] == "zdt.dtypes"


def test_cast_value_to_a_zdt_type_needs_no_registration(tmp_path):
    """A float32 array with cast_value to float8_e4m3fn: the codec resolves its target itself,
    on every zarr."""
    got = run("""
        import numpy as np
        a = zarr.create_array(store={}, shape=(4,), dtype="float32", fill_value=0.0,
                              filters=[{"name": "cast_value",
                                        "configuration": {"data_type": "float8_e4m3fn"}}])
        a[:] = np.array([1.0, 2.5, 3.0, 448.0], dtype=np.float32)
        print(json.dumps(a[:].tolist()))
    """, tmp_path)
    assert got == [1.0, 2.5, 3.0, 448.0]


def test_numcodecs_codecs_work_without_zarr(tmp_path):
    """numcodecs-only users (and zarr 2): the numcodecs face imports nothing of zarr."""
    script = textwrap.dedent("""
        import json, sys
        sys.modules["zarr"] = None                  # any import of zarr fails
        import numpy as np
        import numcodecs
        codec = numcodecs.get_codec({"id": "cast_value", "dtype": "<f8", "data_type": "uint8",
                                     "scalar_map": {"encode": [["NaN", 255]], "decode": [[255, "NaN"]]}})
        so = numcodecs.get_codec({"id": "scale_offset", "dtype": "<f8", "offset": 10, "scale": 2})
        x = np.array([10.0, 11.5, np.nan, 20.0])
        enc = codec.encode(so.encode(x))
        back = so.decode(codec.decode(enc))
        print(json.dumps({"enc": enc.tolist(), "back": [None if v != v else v for v in back.tolist()],
                          "zarr": sorted(m for m in sys.modules if m.split(".")[0] == "zarr"
                                         and sys.modules[m] is not None),
                          "module": type(codec).__module__}))
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         cwd=tmp_path, timeout=120)
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)
    assert got == {"enc": [0, 3, 255, 20], "back": [10.0, 11.5, None, 20.0], "zarr": [],
                   "module": "zdt.codecs.numcodecs.cast_value"}


def test_the_zdt_command_without_zarr_says_what_to_install(tmp_path):
    script = ("import sys; sys.modules['zarr'] = None\n"
              "from zdt.command import main\n"
              "sys.exit(main(['inspect', '.']))\n")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         cwd=tmp_path, timeout=120)
    assert out.returncode == 1
    assert out.stderr.strip() == ("zdt inspect: this needs zarr >= 3.1, which is not "
                                  "installed: pip install 'zdt[zarr]'")
