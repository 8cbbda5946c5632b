"""zdt.predict inside HDF5 and netCDF-4 files: the HDF5 filter (docs/codecs/predict.md, "HDF5 face").

    import h5py, zdt.hdf5
    with h5py.File("out.h5", "w") as f:
        f.create_dataset("t", data=x, chunks=(1, 180, 360), **zdt.hdf5.Predict(abs_error=0.01))

    ds.to_netcdf("out.nc", engine="h5netcdf",
                 encoding={"t": {**zdt.hdf5.Predict(abs_error=0.01), "chunksizes": (1, 180, 360)}})

`import zdt.hdf5` registers the filter with h5py's HDF5 (as hdf5plugin does: the plugin loaded
with ctypes, its H5Z class handed to h5py.h5z.register_filter). Other programs (h5dump,
ncdump, nccopy, h5repack, netCDF4-python) find it through HDF5_PLUGIN_PATH=zdt.hdf5.PLUGIN_PATH.

The plugin, libh5zdtpredict.so, is built with zdt (setup.py: libzdtpredict's sources and
hdf5/H5Z_zdt_predict.c, linked with libzstd) into zdt/hdf5_plugin/; ZDT_HDF5_PLUGIN_PATH
points at another directory holding one (libzdtpredict's CMake build: build/hdf5-plugin).
"""

from __future__ import annotations

import ctypes
import math
import os
import sys
from collections.abc import Iterator, Mapping
from typing import Any

from zdt.hdf5_layout import (  # noqa: F401  (FILTER_ID and the layouts: zdt.hdf5's names)
    EFFORT_CODES,
    FILTER_ID,
    LAYOUT,
    LAYOUT_EFFORT,
    PREDICTOR_CODES,
    user_words,
)

_SUFFIX = ".dll" if sys.platform == "win32" else ".so"
PLUGIN_NAME = "libh5zdtpredict" + _SUFFIX

# the directory holding the plugin (for HDF5_PLUGIN_PATH)
PLUGIN_PATH = os.environ.get("ZDT_HDF5_PLUGIN_PATH") or os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "hdf5_plugin")
PLUGIN_FILE = os.path.join(PLUGIN_PATH, PLUGIN_NAME)

MISSING = (
    f"zdt.hdf5: the HDF5 filter plugin {PLUGIN_NAME} is not in {PLUGIN_PATH}. zdt builds it "
    "when libzstd's headers are there at build time: install them (Debian/Ubuntu: apt-get "
    "install libzstd-dev; conda: conda install zstd) and reinstall zdt from source (pip install "
    "--no-binary zdt --force-reinstall zdt), or build libzdtpredict with CMake (cmake -S "
    "libzdtpredict -B build && cmake --build build) and set ZDT_HDF5_PLUGIN_PATH to its "
    "build/hdf5-plugin directory")


def _number(name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"zdt.hdf5.Predict: {name} must be a number, not {value!r}")
    v = float(value)
    if not (v > 0 and math.isfinite(v)):
        raise ValueError(f"zdt.hdf5.Predict: {name} must be finite and > 0, not {value!r}")
    return v


class Predict(Mapping[str, Any]):
    """zdt.predict as h5py's create_dataset keywords (``compression``, ``compression_opts``),
    like hdf5plugin's filter classes: ``**Predict(abs_error=0.01)``.

    abs_error: every element decodes within it (float and 8- to 32-bit integer datasets);
    rel_error: every element within it times its magnitude (float datasets; exactly one of
    the two). predictor: "auto", "lorenzo", "interpolation", "interpolation_reversed",
    "interpolation_slices". fill: the missing-data value the data hold, kept exactly and
    predicted around (float datasets), in place of the dataset's fill value (None: the
    dataset's, as the zarr face takes the array's). effort: "fast", "default" or "max", how
    hard `auto` looks for the smallest chunk (as the zarr face's key; not "default": cd_values
    layout 2, which filters from zdt before it cannot read).
    """

    filter_id = FILTER_ID

    def __init__(self, abs_error: float | None = None, *, rel_error: float | None = None,
                 predictor: str = "auto", fill: float | None = None,
                 effort: str = "default") -> None:
        if (abs_error is None) == (rel_error is None):
            raise ValueError("zdt.hdf5.Predict: give exactly one of abs_error and rel_error")
        if predictor not in PREDICTOR_CODES:
            raise ValueError(f"zdt.hdf5.Predict: predictor {predictor!r}: one of "
                             f"{', '.join(PREDICTOR_CODES)}")
        if not isinstance(effort, str) or effort not in EFFORT_CODES:
            raise ValueError(f"zdt.hdf5.Predict: effort {effort!r}: one of "
                             f"{', '.join(EFFORT_CODES)}")
        kind, bound = (1, _number("abs_error", abs_error)) if abs_error is not None \
            else (2, _number("rel_error", rel_error))
        if fill is not None and (isinstance(fill, bool) or not isinstance(fill, (int, float))):
            raise TypeError(f"zdt.hdf5.Predict: fill must be a number, not {fill!r}")
        self.abs_error = abs_error
        self.rel_error = rel_error
        self.predictor = predictor
        self.fill = fill
        self.effort = effort
        self.filter_options: tuple[int, ...] = user_words(kind, bound, fill, predictor, effort)
        self._kwargs = {"compression": FILTER_ID, "compression_opts": self.filter_options}

    def __getitem__(self, key: str) -> Any:
        return self._kwargs[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._kwargs)

    def __len__(self) -> int:
        return len(self._kwargs)

    def __repr__(self) -> str:
        bound = f"abs_error={self.abs_error!r}" if self.abs_error is not None \
            else f"rel_error={self.rel_error!r}"
        fill = f", fill={self.fill!r}" if self.fill is not None else ""
        effort = f", effort={self.effort!r}" if self.effort != "default" else ""
        return f"Predict({bound}, predictor={self.predictor!r}{fill}{effort})"

    def h5repack(self, dataset: str | None = None) -> str:
        """The filter as h5repack's -f argument: ``[dataset:]UD=id,flags,count,words``."""
        words = ",".join(str(w) for w in self.filter_options)
        head = f"{dataset}:" if dataset else ""
        return f"{head}UD={FILTER_ID},0,{len(self.filter_options)},{words}"

    def nccopy(self, variable: str) -> str:
        """The filter as nccopy's -F argument: ``variable,id,words``."""
        return ",".join([variable, str(FILTER_ID), *(str(w) for w in self.filter_options)])


def plugin_file() -> str:
    """The plugin's path; FileNotFoundError naming what to install when it is not there."""
    if not os.path.exists(PLUGIN_FILE):
        raise FileNotFoundError(MISSING)
    return PLUGIN_FILE


_LIB: ctypes.CDLL | None = None


def last_error() -> str | None:
    """The filter's own message for this thread's last failed call (None: it did not fail).
    HDF5 1.14.4 and later (h5py's) drop the message a filter puts on HDF5's error stack and
    raise only "filter returned failure during read"; this gives the reason ("... (part ANS
    stream)"). The plugin is the same library for h5py and for netCDF4-python reading through
    HDF5_PLUGIN_PATH=PLUGIN_PATH (one file, loaded once)."""
    global _LIB
    if _LIB is None:
        _LIB = ctypes.CDLL(plugin_file())
    get = _LIB.zdt_predict_h5z_last_error
    get.restype = ctypes.c_char_p
    get.argtypes = []
    message = get()
    return message.decode("utf-8", "replace") if message else None


def register() -> None:
    """Registers the filter with h5py's HDF5 (done by `import zdt.hdf5` when h5py is there)."""
    global _LIB
    import h5py

    lib = ctypes.CDLL(plugin_file())
    lib.H5PLget_plugin_info.restype = ctypes.c_void_p
    lib.H5PLget_plugin_info.argtypes = []
    info = lib.H5PLget_plugin_info()
    if h5py.h5z.filter_avail(FILTER_ID):
        h5py.h5z.unregister_filter(FILTER_ID)
    h5py.h5z.register_filter(info)
    _LIB = lib          # (kept loaded: HDF5 holds pointers into it)


if not os.path.exists(PLUGIN_FILE):
    raise ImportError(MISSING)

try:
    import h5py  # noqa: F401
except ImportError:     # no h5py: PLUGIN_PATH is still there for other programs
    pass
else:
    register()
