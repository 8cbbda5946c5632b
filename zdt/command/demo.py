"""``zdt demo``: zdt's codecs on real data, written to and read back from zarr v3 arrays.

The data ship with the vega_datasets package (``pip install 'zdt[demo]'``):

* the hourly air temperatures of Seattle and San Francisco for 2010 (degrees Fahrenheit, 0.1
  degree resolution; 17,518 readings), stored as float64 through ``cast_value`` alone and
  through the ``[scale_offset, cast_value]`` chain of the scale_offset spec;
* the daily weather of Seattle 2012-2015 ("drizzle", "rain", ...), stored as strings with
  ``vlen-utf8`` and with the Arrow-offsets layout, handed to pyarrow without a copy if pyarrow
  is installed.

For each it prints the codec metadata zarr stored, the bytes saved, the largest error and the
create+write+read time, next to zarr's own implementation where this zarr has one. Then the
main job: ``zdt convert`` shrinks a store of the daily weather (on its date axis) and the
hourly temperatures within per-array bounds, and every error is checked again. A last step
tiles the temperatures to tens of millions of values and times writing and reading them
through zdt's pipeline and codecs against zarr's own setups (in memory, so the codecs are what
is timed).
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import shutil
import tempfile
import time
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

NAN_MAP = {"encode": [["NaN", 0]], "decode": [[0, "NaN"]]}

CONFIGS = [
    ("cast_value float32", [{"name": "cast_value", "configuration": {"data_type": "float32"}}]),
    ("cast_value float16", [{"name": "cast_value", "configuration": {"data_type": "float16"}}]),
    ("cast_value uint8, whole degrees",
     [{"name": "cast_value", "configuration": {"data_type": "uint8", "out_of_range": "clamp",
                                               "scalar_map": NAN_MAP}}]),
    ("scale_offset x10 + cast_value int16: lossless",
     [{"name": "scale_offset", "configuration": {"scale": 10}},
      {"name": "cast_value", "configuration": {
          "data_type": "int16",
          "scalar_map": {"encode": [["NaN", -32768]], "decode": [[-32768, "NaN"]]}}}]),
    ("scale_offset (t - 30) x5 + cast_value uint8: 0.2 F steps",
     [{"name": "scale_offset", "configuration": {"offset": 30, "scale": 5}},
      {"name": "cast_value", "configuration": {"data_type": "uint8", "scalar_map": NAN_MAP}}]),
]


def _data_dir():
    return resources.files("vega_datasets") / "_data"


def load_temperatures() -> np.ndarray:
    """Seattle then San Francisco, hourly, 2010, as float64 degrees Fahrenheit."""
    values = []
    for name in ("seattle-temps.csv", "sf-temps.csv"):
        rows = csv.DictReader(io.StringIO((_data_dir() / name).read_text()))
        values += [float(r["temp"]) for r in rows]
    return np.array(values, dtype=np.float64)


def load_weather() -> np.ndarray:
    rows = csv.DictReader(io.StringIO((_data_dir() / "seattle-weather.csv").read_text()))
    return np.array([r["weather"] for r in rows], dtype=np.dtypes.StringDType())


def _write_read(path: Path, data: np.ndarray, codecs: list[dict], impl: str | None,
                repeat: int = 5) -> tuple[np.ndarray, float]:
    """Create, write and read back the array; best time of `repeat` runs."""
    import zarr

    from zdt.zarr_compat import codec_config

    best = float("inf")
    with zarr.config.set(codec_config(impl) if impl == "zarr" else {}):
        for _ in range(repeat):
            t0 = time.perf_counter()
            # one chunk per city
            arr = zarr.create_array(store=path, shape=data.shape, chunks=(data.size // 2,),
                                    dtype="float64", fill_value=np.nan, compressors=None,
                                    filters=codecs, overwrite=True)
            arr[:] = data
            back = zarr.open_array(path)[:]
            best = min(best, time.perf_counter() - t0)
    return back, best


def _stored_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in (path / "c").rglob("*") if p.is_file())


def numbers(tmp: Path) -> None:
    import zarr

    from zdt.zarr_compat import zarr_builtins_usable

    data = load_temperatures()
    builtin = zarr_builtins_usable()
    print(f"== {data.size} hourly temperatures (Seattle and San Francisco, 2010), "
          f"{data.min():.1f} to {data.max():.1f} F, float64 = {data.nbytes} bytes")
    print(f"zarr {zarr.__version__}; zarr's own cast_value / scale_offset: "
          f"{'available' if builtin else 'not available'}\n")
    for i, (label, codecs) in enumerate(CONFIGS):
        path = tmp / f"t{i}"
        back, seconds = _write_read(path, data, codecs, None)
        meta = json.loads((path / "zarr.json").read_text())
        stored = _stored_bytes(path)
        err = float(np.max(np.abs(back - data)))
        print(f"-- {label}")
        print(f"   codecs: {json.dumps(meta['codecs'])}")
        print(f"   stored {stored} bytes, saved {1 - stored / data.nbytes:.1%}; max error {err:.3g} F")
        line = f"   create+write+read (best of 5): zdt {seconds * 1e3:.2f} ms"
        if builtin:
            theirs, their_seconds = _write_read(tmp / f"t{i}-zarr", data, codecs, "zarr")
            same = np.array_equal(theirs, back, equal_nan=True)
            line += (f", zarr built-in {their_seconds * 1e3:.2f} ms "
                     f"({'same values' if same else 'DIFFERENT values'})")
        print(line)


def strings(tmp: Path) -> None:
    import zarr

    from zdt import use_string_codecs
    from zdt.codecs.zarr import VLenArrowCodec, VLenUTF8Codec

    weather = load_weather()
    print(f"\n== {weather.size} days of Seattle weather (2012-2015), StringDType: "
          f"{sorted(set(weather.tolist()))}")
    for label, serializer in [("vlen-utf8", VLenUTF8Codec()), ("zdt.vlen_arrow", VLenArrowCodec())]:
        path = tmp / label
        t0 = time.perf_counter()
        a = zarr.create_array(store=path, shape=weather.shape, chunks=(weather.size,),
                              dtype=weather.dtype, serializer=serializer, compressors=None)
        a[:] = weather
        with use_string_codecs():
            back = zarr.open_array(path)[:]
        seconds = time.perf_counter() - t0
        meta = json.loads((path / "zarr.json").read_text())
        print(f"-- {label}: codecs {json.dumps(meta['codecs'])}; {_stored_bytes(path)} bytes; "
              f"read back {back.dtype}, equal: {bool((back == weather).all())}; {seconds * 1e3:.1f} ms")
    try:
        from zdt.codecs.arrow import chunk_to_arrow

        raw = np.frombuffer((tmp / "zdt.vlen_arrow" / "c" / "0").read_bytes(), dtype=np.uint8)
        arr = chunk_to_arrow(raw, weather.size)
        data_start = ((weather.size + 1) * 4 + 63) // 64 * 64
        shared = arr.buffers()[2].address == raw.ctypes.data + data_start
        counts = {d["values"]: d["counts"] for d in arr.value_counts().to_pylist()}
        print(f"-- the zdt.vlen_arrow chunk as a pyarrow {arr.type} array without a copy "
              f"(its data buffer is the chunk's memory: {shared}); value counts {counts}")
    except ImportError:
        print("-- (pip install pyarrow to see the chunk handed to Arrow without a copy)")


def shrink(tmp: Path) -> None:
    """The main job: `zdt convert` on a small real store (daily Seattle weather with its date
    axis and weather strings, and the hourly temperatures of both cities), with per-array
    bounds; the report, bytes before and after, and every error checked here again."""
    import zarr

    from zdt.command import main as zdt_main
    from zdt.engine.writer import numcodecs_note_silenced

    rows = list(csv.DictReader(io.StringIO((_data_dir() / "seattle-weather.csv").read_text())))
    days = np.array([r["date"].replace("/", "-") for r in rows], dtype="datetime64[D]")
    src = tmp / "weather.zarr"
    root = zarr.open_group(src, mode="w", attributes={"title": "Seattle weather 2012-2015 (vega_datasets)"})
    root.create_array("time", data=(days - np.datetime64("2012-01-01")).astype(np.int64),
                      dimension_names=["time"], attributes={"units": "days since 2012-01-01"})
    columns = {"precipitation": "mm", "temp_max": "C", "temp_min": "C", "wind": "m/s"}
    for name, unit in columns.items():
        root.create_array(name, data=np.array([float(r[name]) for r in rows]),
                          dimension_names=["time"], attributes={"units": unit})
    root.create_array("weather", data=load_weather(), dimension_names=["time"])
    temps = load_temperatures().reshape(2, -1)
    root.create_array("hourly_temp", data=temps, chunks=(1, 4380), fill_value=np.nan,
                      dimension_names=["city", "hour"], attributes={"units": "F"})
    bounds = ["--abs-error", "0.05", "--bound", "/wind=abs:0.25", "--bound", "/hourly_temp=rel:1e-3"]
    print(f"\n== zdt convert: {src.name}, daily weather (precipitation, temperatures, wind, "
          f"strings) on its date axis and two cities' hourly temperatures\n$ zdt convert "
          f"{src.name} small.zarr {' '.join(bounds)}")
    if zdt_main(["convert", str(src), str(tmp / "small.zarr"), *bounds]) != 0:
        raise SystemExit("zdt demo: zdt convert failed")
    small = zarr.open_group(tmp / "small.zarr", mode="r")
    limits = {"wind": ("abs", 0.25), "hourly_temp": ("rel", 1e-3)}
    print(f"   {'array':14s} {'bytes before':>12s} {'after':>8s}  largest error (checked here)")
    for name in ["time", *columns, "weather", "hourly_temp"]:
        before, after = _stored_bytes(src / name), _stored_bytes(tmp / "small.zarr" / name)
        with numcodecs_note_silenced():      # (as convert: not in the middle of this table)
            x, y = root[name][...], small[name][...]
        if x.dtype.kind == "f":
            kind, bound = limits.get(name, ("abs", 0.05))
            err = np.abs(y - x) / (np.abs(x) if kind == "rel" else 1)
            worst = float(np.nanmax(np.where(x == 0, 0, err) if kind == "rel" else err))
            assert worst <= bound and np.array_equal(np.isnan(x), np.isnan(y))
            shown = f"{worst:.3g} ({kind} bound {bound:g})"
        else:
            assert np.array_equal(x, y)
            shown = "exact"
        print(f"   {name:14s} {before:12,d} {after:8,d}  {shown}")


SPEED_CODECS = CONFIGS[-1][1]


def speed(tiles: int, repeat: int = 3) -> None:
    import zarr
    from zarr.storage import MemoryStore

    from zdt.pipeline import OURS, comparison_setups

    data = np.tile(load_temperatures(), tiles)
    print(f"\n== speed: the temperatures tiled to {data.size:,} values ({data.nbytes / 1e6:.0f} MB "
          f"float64), chunks of 1,000,000, in memory; {SPEED_CODECS[0]['name']} + "
          f"{SPEED_CODECS[1]['name']} uint8 as above; best of {repeat}")
    results: dict[str, tuple[float, float]] = {}
    reference = None
    for label, config in comparison_setups(every_combination=False).items():
        with zarr.config.set(config):
            writes, reads = [], []
            for _ in range(repeat):
                arr = zarr.create_array(MemoryStore(), shape=data.shape, chunks=(1_000_000,),
                                        dtype="float64", fill_value=np.nan, compressors=None,
                                        filters=SPEED_CODECS)
                t0 = time.perf_counter()
                arr[:] = data
                t1 = time.perf_counter()
                back = arr[:]
                t2 = time.perf_counter()
                writes.append(t1 - t0)
                reads.append(t2 - t1)
        if reference is None:
            reference = back
        elif not np.array_equal(back, reference, equal_nan=True):
            print(f"-- {label}: DIFFERENT values")
        results[label] = (min(writes), min(reads))
    ours = results[OURS]
    for label, (w, r) in results.items():
        line = (f"-- {label:38s} write {w * 1e3:7.1f} ms ({data.nbytes / w / 1e9:5.2f} GB/s)  "
                f"read {r * 1e3:7.1f} ms ({data.nbytes / r / 1e9:5.2f} GB/s)")
        if label != OURS:
            line += f"  zdt is {w / ours[0]:.1f}x / {r / ours[1]:.1f}x faster"
        print(line)


def main(args: Any = None) -> None:
    tiles = getattr(args, "tiles", 1142)
    tmp = Path(tempfile.mkdtemp(prefix="zdt-demo-"))
    try:
        numbers(tmp)
        strings(tmp)
        shrink(tmp)
        print(f"\narrays were written under {tmp} (removed now)")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if tiles:
        speed(tiles)


def run(args: argparse.Namespace) -> int:
    from importlib.util import find_spec

    from zdt.errors import MissingPackage

    missing = [m for m in ("zarr", "vega_datasets") if find_spec(m) is None]
    if missing:
        raise MissingPackage(f"the demo needs {' and '.join(missing)}, which "
                             f"{'is' if len(missing) == 1 else 'are'} not installed: "
                             "pip install 'zdt[demo]'")
    main(args)
    return 0


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "demo", help="run zdt's codecs on real data (needs: pip install 'zdt[demo]')",
        description="Real temperature readings and weather strings written to zarr v3 arrays "
                    "through zdt's codecs and read back: stored codec metadata, bytes saved, "
                    "largest error and timings next to zarr's own codecs where present; then "
                    "the temperatures tiled to tens of millions of values, written and read "
                    "through zdt's pipeline and through zarr's.")
    p.add_argument("--tiles", type=int, default=1142, metavar="N",
                   help="copies of the 17,518 temperatures in the speed step (default 1142: "
                        "20 million values; 0 skips it)")
    p.set_defaults(run=run)
