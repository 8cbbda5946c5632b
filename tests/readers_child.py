"""Reads arrays with one reader, in a Python environment without zdt (run by
tests/engine/test_readers_without_zdt.py with that environment's interpreter; it imports
nothing of zdt or of the test suite).

    python readers_child.py READER JOBS.json

READER is zarr-python, zarrs or tensorstore; JOBS.json a list of {"store", "array", "out"}:
each array is read whole and saved as .npy at "out", or its error recorded. For zarr-python
the store is also opened with xarray where it is installed (what a collaborator does: the
array must open through its CF decoding too). Prints one JSON line: {"versions": ..., "errors":
{out: "Type: message"}}.
"""

from __future__ import annotations

import importlib.util
import json
import sys
import warnings

import numpy as np


def main() -> None:
    reader, jobs_file = sys.argv[1], sys.argv[2]
    if importlib.util.find_spec("zdt") is not None:
        raise SystemExit("zdt is installed here: this environment cannot tell what readers "
                         "without it do")
    import zarr

    versions = {"zarr": zarr.__version__, "numpy": np.__version__}
    read = {"zarr-python": read_zarr, "zarrs": read_zarrs, "tensorstore": read_tensorstore}[reader]
    if reader == "zarrs":
        import zarrs
        versions["zarrs"] = getattr(zarrs, "__version__", "?")
    if reader == "tensorstore":
        import tensorstore
        from importlib.metadata import version
        versions["tensorstore"] = version("tensorstore")
    errors = {}
    with open(jobs_file) as f:
        jobs = json.load(f)
    for job in jobs:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")         # zarr's notes on numcodecs.* codecs
                np.save(job["out"], read(job["store"], job["array"]))
        except Exception as exc:                        # noqa: BLE001 (recorded, not raised)
            errors[job["out"]] = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
    print(json.dumps({"versions": versions, "errors": errors}))


def read_zarr(store: str, array: str) -> np.ndarray:
    import zarr

    values = zarr.open_array(store, path=array, mode="r")[...]
    if importlib.util.find_spec("xarray") is not None:
        import xarray as xr

        with xr.open_zarr(store, consolidated=False) as ds:
            ds[array].load()
    return values


def read_zarrs(store: str, array: str) -> np.ndarray:
    import zarr

    # zarrs' Rust pipeline, strictly: no fall-back to zarr-python's own codecs
    with zarr.config.set({"codec_pipeline.path": "zarrs.ZarrsCodecPipeline",
                          "codec_pipeline.strict": True}):
        return zarr.open_array(store, path=array, mode="r")[...]


def read_tensorstore(store: str, array: str) -> np.ndarray:
    import tensorstore as ts

    spec = {"driver": "zarr3", "kvstore": {"driver": "file", "path": f"{store}/{array}"}}
    return np.asarray(ts.open(spec).result().read().result())


if __name__ == "__main__":
    main()
