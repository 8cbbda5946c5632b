"""`python -m zdt demo`: cast_value on real data, written to and read back from a zarr v3 array.

The data are the hourly air temperatures of Seattle and San Francisco for 2010 (degrees
Fahrenheit, 0.1 degree resolution; 17,518 readings) shipped with the vega_datasets package
(install with ``pip install 'zdt[demo]'``). Each configuration stores the float64 readings
through cast_value, reads them back, and reports what is stored, the bytes saved, the largest
error, and the write+read time next to zarr's own cast_value where this zarr has one.
"""

from __future__ import annotations

import csv
import io
import json
import shutil
import sys
import tempfile
import time
from importlib import resources
from pathlib import Path

import numpy as np


def load_temperatures() -> np.ndarray:
    """Seattle then San Francisco, hourly, 2010, as float64 degrees Fahrenheit."""
    try:
        data = resources.files("vega_datasets") / "_data"
    except ModuleNotFoundError:
        sys.exit("zdt demo: the demo data come with vega_datasets; pip install 'zdt[demo]'")
    values = []
    for name in ("seattle-temps.csv", "sf-temps.csv"):
        rows = csv.DictReader(io.StringIO((data / name).read_text()))
        values += [float(r["temp"]) for r in rows]
    return np.array(values, dtype=np.float64)


CONFIGS = [
    ("float32", {"data_type": "float32"}),
    ("float16", {"data_type": "float16"}),
    ("uint8, whole degrees", {"data_type": "uint8", "rounding": "nearest-even", "out_of_range": "clamp",
                              "scalar_map": {"encode": [["NaN", 0]], "decode": [[0, "NaN"]]}}),
]


def _write_read(path: Path, data: np.ndarray, config: dict, impl: str | None,
                repeat: int = 5) -> tuple[np.ndarray, float]:
    """Create, write and read back the array; best time of `repeat` runs."""
    import zarr

    settings = {"codecs.cast_value": impl} if impl else {}
    best = float("inf")
    with zarr.config.set(settings):
        for _ in range(repeat):
            t0 = time.perf_counter()
            # one chunk per city
            arr = zarr.create_array(store=path, shape=data.shape, chunks=(data.size // 2,),
                                    dtype="float64", fill_value=np.nan, compressors=None,
                                    filters=[{"name": "cast_value", "configuration": config}],
                                    overwrite=True)
            arr[:] = data
            back = zarr.open_array(path)[:]
            best = min(best, time.perf_counter() - t0)
    return back, best


def _stored_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in (path / "c").rglob("*") if p.is_file())


def main() -> None:
    import zarr

    from zdt import _compat

    data = load_temperatures()
    builtin = _compat.zarr_builtin("cast_value")
    try:
        import cast_value_rs  # noqa: F401  zarr's built-in needs it
    except ImportError:
        builtin = None
    print(f"zdt demo: {data.size} hourly temperatures (Seattle and San Francisco, 2010), "
          f"{data.min():.1f} to {data.max():.1f} F, float64 = {data.nbytes} bytes")
    print(f"zarr {zarr.__version__}; zarr's own cast_value: {builtin or 'not available'}\n")
    tmp = Path(tempfile.mkdtemp(prefix="zdt-demo-"))
    try:
        for label, config in CONFIGS:
            path = tmp / label.split(",")[0]
            back, seconds = _write_read(path, data, config, None)
            meta = json.loads((path / "zarr.json").read_text())
            stored = _stored_bytes(path)
            err = float(np.max(np.abs(back - data)))
            print(f"== {label}")
            print(f"   codecs: {json.dumps(meta['codecs'])}")
            print(f"   stored {stored} bytes, saved {1 - stored / data.nbytes:.1%}; "
                  f"max error {err:.3g} F")
            line = f"   create+write+read (best of 5): zdt {seconds * 1e3:.2f} ms"
            if builtin:
                other = tmp / f"{path.name}-zarr"
                theirs, their_seconds = _write_read(other, data, config, builtin)
                same = np.array_equal(theirs, back, equal_nan=True)
                line += (f", zarr built-in {their_seconds * 1e3:.2f} ms "
                         f"({'same values' if same else 'DIFFERENT values'})")
            print(line)
        print(f"\narrays were written under {tmp} (removed now)")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
