"""Golden fixtures: zarr stores written by one version of zdt, committed, read by every later one.

Each case is an array (its metadata and codecs) and its data, given by a formula that does not
involve zdt; what reading it must give is the data itself where the codecs are lossless, and
the independent reference (tests/reference.py) applied codec by codec where they are not.

    python tests/golden.py write tests/fixtures/golden/v0.1    (once per release; never over an
                                                               existing directory)

tests/codecs/test_golden.py reads every committed version, and checks that this version still writes
the very same chunk bytes as the newest one.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import ml_dtypes
import numpy as np

import reference as ref

GOLDEN = Path(__file__).parent / "fixtures" / "golden"

NAN_255 = {"encode": [["NaN", 255]], "decode": [[255, "NaN"]]}
NAN_65535 = {"encode": [["NaN", 65535]], "decode": [[65535, "NaN"]]}


@dataclass
class Case:
    name: str
    data: Callable[[], np.ndarray]
    create: dict[str, Any]                      # zarr.create_array arguments but store / shape / dtype
    # the reference applied in order, each (kind, config): what reading gives (default: the data)
    lossy: list[tuple[str, dict]] = field(default_factory=list)
    string_codecs: bool = False                 # written with zdt.use_string_codecs()

    def expected(self) -> np.ndarray:
        x = self.data()
        encoded = []
        for kind, config in self.lossy:
            encoded.append((kind, config, x.dtype))
            x = _ref(kind, config, x, x.dtype, decode=False)
        for kind, config, dtype in reversed(encoded):
            x = _ref(kind, config, x, dtype, decode=True)
        return x


def _ref(kind: str, config: dict, x: np.ndarray, dtype: np.dtype, *, decode: bool) -> np.ndarray:
    if kind == "scale_offset":
        fmt = np.dtype(dtype)
        out = ref.scale_offset_array(x, fmt.type(config.get("offset", 0)),
                                     fmt.type(config.get("scale", 1)), decode)
    else:
        target = np.dtype(getattr(ml_dtypes, config["data_type"], None) or config["data_type"])
        src, dst = (target, np.dtype(dtype)) if decode else (np.dtype(dtype), target)
        pairs = config.get("scalar_map", {}).get("decode" if decode else "encode", [])
        out = ref.cast_array(x, dst, config.get("rounding", "nearest-even"),
                             config.get("out_of_range"), ref.compile_map(pairs, src, dst))
    assert not isinstance(out, tuple), (kind, config, out)      # a golden case never fails
    return out


def _ramp(n: int, lo: float, hi: float, dtype: str, nan_at: tuple[int, ...] = ()) -> Callable[[], np.ndarray]:
    def make() -> np.ndarray:
        x = np.linspace(lo, hi, n).astype(dtype)
        x[list(nan_at)] = np.nan
        return x
    return make


def _low(name: str, values: list[float]) -> Callable[[], np.ndarray]:
    return lambda: np.array(values, dtype=np.float64).astype(getattr(ml_dtypes, name))


CASES = [
    Case("cast_uint8_nan_clamp", _ramp(24, -10.0, 300.0, "float64", (3, 17)),
         dict(chunks=(8,), fill_value=np.nan, compressors=None,
              filters=[{"name": "cast_value", "configuration": {
                  "data_type": "uint8", "out_of_range": "clamp", "scalar_map": NAN_255}}]),
         lossy=[("cast_value", {"data_type": "uint8", "out_of_range": "clamp", "scalar_map": NAN_255})]),
    Case("scale_offset_cast_uint16", _ramp(30, 18.5, 41.2, "float64", (7,)),
         dict(chunks=(10,), fill_value=np.nan, compressors=[{"name": "zstd", "configuration": {"level": 1}}],
              filters=[{"name": "scale_offset", "configuration": {"offset": 18, "scale": 10}},
                       {"name": "cast_value", "configuration": {"data_type": "uint16",
                                                                "scalar_map": NAN_65535}}]),
         lossy=[("scale_offset", {"offset": 18, "scale": 10}),
                ("cast_value", {"data_type": "uint16", "scalar_map": NAN_65535})]),
    Case("scale_offset_int32", lambda: (np.arange(-12, 12, dtype=np.int32) * 3 + 1000),
         dict(chunks=(6,), fill_value=1000, compressors=None,
              filters=[{"name": "scale_offset", "configuration": {"offset": 1000, "scale": 3}}])),
    Case("cast_int16_wrap_towards_zero", _ramp(20, -70000.0, 70000.0, "float32"),
         dict(chunks=(5,), fill_value=0.0, compressors=None,
              filters=[{"name": "cast_value", "configuration": {
                  "data_type": "int16", "rounding": "towards-zero", "out_of_range": "wrap"}}]),
         lossy=[("cast_value", {"data_type": "int16", "rounding": "towards-zero", "out_of_range": "wrap"})]),
    Case("cast_bfloat16_nearest_away", _ramp(16, -3.3, 1e5, "float32", (2,)),
         dict(chunks=(16,), fill_value=-0.5, compressors=None,
              filters=[{"name": "cast_value", "configuration": {
                  "data_type": "bfloat16", "rounding": "nearest-away"}}]),
         lossy=[("cast_value", {"data_type": "bfloat16", "rounding": "nearest-away"})]),
    Case("cast_float8_e4m3fn_clamp", _ramp(16, -600.0, 600.0, "float64", (9,)),
         dict(chunks=(8,), fill_value=1.5, compressors=None,
              filters=[{"name": "cast_value", "configuration": {
                  "data_type": "float8_e4m3fn", "out_of_range": "clamp"}}]),
         lossy=[("cast_value", {"data_type": "float8_e4m3fn", "out_of_range": "clamp"})]),
    Case("bfloat16_big_endian", _low("bfloat16", [1.0, -2.0, 3.140625, 65280.0, -0.0, 1e-38]),
         dict(chunks=(4,), fill_value=0.5, compressors=None,
              serializer={"name": "bytes", "configuration": {"endian": "big"}})),
    Case("float8_e8m0fnu_hex_fill", _low("float8_e8m0fnu", [1.0, 2.0, 0.25, 2.0 ** -127, 2.0 ** 127]),
         dict(chunks=(3,), fill_value=4.0, compressors=None)),
    Case("int4_packbits", lambda: np.array([-8, -1, 0, 7, 3, -5, 1, 2, -2], dtype=ml_dtypes.int4),
         dict(chunks=(4,), fill_value=-3, compressors=None,
              serializer={"name": "packbits", "configuration": {"padding_encoding": "first_byte"}})),
    Case("uint4_bits_1_to_2", lambda: np.array([0, 2, 4, 6, 2, 4], dtype=ml_dtypes.uint4),
         dict(chunks=(3,), fill_value=0, compressors=None,
              serializer={"name": "packbits", "configuration": {"first_bit": 1, "last_bit": 2,
                                                                "padding_encoding": "last_byte"}})),
    Case("float4_e2m1fn_bytes", _low("float4_e2m1fn", [-6.0, -0.5, 0.0, 1.5, 6.0, -0.0]),
         dict(chunks=(4,), fill_value=-1.5, compressors=None)),
    Case("strings_vlen_utf8", lambda: np.array(["", "a", "é日本", "x" * 40, "zarr"] * 3,
                                               dtype=np.dtypes.StringDType()),
         dict(chunks=(6,), fill_value="", compressors=None), string_codecs=True),
    Case("strings_arrow_int64", lambda: np.array(["", "arrow", "ß", "y" * 70] * 3,
                                                 dtype=np.dtypes.StringDType()),
         dict(chunks=(5,), fill_value="", compressors=None,
              serializer={"name": "zdt.vlen_arrow", "configuration": {"offsets": "int64"}})),
    Case("sharded_cast_uint8", _ramp(64, 0.0, 255.0, "float32"),
         dict(chunks=(8,), shards=(32,), fill_value=0.0, compressors=None,
              filters=[{"name": "cast_value", "configuration": {"data_type": "uint8"}}]),
         lossy=[("cast_value", {"data_type": "uint8"})]),
    Case("v2_scale_offset_cast_value", _ramp(12, 19.0, 44.5, "float64", (5,)),
         dict(chunks=(5,), fill_value=np.nan, compressors=None, zarr_format=2,
              filters=[{"id": "scale_offset", "dtype": "<f8", "offset": 19, "scale": 10},
                       {"id": "cast_value", "dtype": "<f8", "data_type": "uint8",
                        "scalar_map": NAN_255}]),
         lossy=[("scale_offset", {"offset": 19, "scale": 10}),
                ("cast_value", {"data_type": "uint8", "scalar_map": NAN_255})]),
]


def create(case: Case, store: Any) -> Any:
    """The case's array, created empty in `store`."""
    import numcodecs
    import zarr

    data = case.data()
    kwargs = dict(case.create)
    if kwargs.get("zarr_format") == 2:
        kwargs["filters"] = [numcodecs.get_codec(f) for f in kwargs["filters"]]
    return zarr.create_array(store=store, shape=data.shape, dtype=data.dtype, **kwargs)


def write(case: Case, store: Any) -> None:
    import zdt

    if case.string_codecs:
        with zdt.use_string_codecs():
            create(case, store)[...] = case.data()
    else:
        create(case, store)[...] = case.data()


def write_all(directory: Path) -> None:
    import zarr

    import zdt

    if directory.exists():
        raise SystemExit(f"{directory} exists: golden fixtures are written once, never over")
    zdt.register()
    for case in CASES:
        write(case, zarr.storage.LocalStore(directory / case.name))
    (directory / "VERSION").write_text(zdt.__version__ + "\n")
    print(f"wrote {len(CASES)} cases to {directory} (zdt {zdt.__version__})")


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] != "write":
        raise SystemExit(__doc__)
    write_all(Path(sys.argv[2]))
