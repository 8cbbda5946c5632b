"""The HDF5 face's filter id and cd_values layouts (docs/codecs/predict.md, "HDF5 face"): what
zdt.hdf5 writes and what `zdt inspect` reads from a file's filter pipeline. Imports neither
h5py nor the plugin, so a file's filters can be shown where the plugin is not built."""

from __future__ import annotations

import math
import struct
from typing import Any

# the filter id (unregistered range, 32768 .. 65535): here and in
# libzdtpredict/hdf5/H5Z_zdt_predict.h only
FILTER_ID = 55888
# the cd_values layouts (word 0): 1; 2 is 1 with the encoder's effort in word 9, written only
# when an effort other than the default is asked for (filters that read only 1 read the rest)
LAYOUT = 1
LAYOUT_EFFORT = 2

PREDICTOR_CODES = {"auto": 0, "lorenzo": 1, "interpolation": 2, "interpolation_reversed": 3,
                   "interpolation_slices": 4}
EFFORT_CODES = {"default": 0, "fast": 1, "max": 2}
DTYPES = {1: "float32", 2: "float64", 3: "int8", 4: "uint8", 5: "int16", 6: "uint16",
          7: "int32", 8: "uint32"}


def words(value: float) -> tuple[int, int]:
    """A binary64 as the two cd_values words: low word first (the spec's order)."""
    (u,) = struct.unpack("<Q", struct.pack("<d", value))
    return u & 0xFFFFFFFF, u >> 32


def binary64(low: int, high: int) -> float:
    """The binary64 two cd_values words hold (low word first)."""
    return struct.unpack("<d", struct.pack("<Q", (int(high) & 0xFFFFFFFF) << 32
                                           | (int(low) & 0xFFFFFFFF)))[0]


def user_words(kind: int, bound: float, fill: float | None, predictor: str,
               effort: str) -> tuple[int, ...]:
    """The words a user gives the filter (set_local completes them): layout 1, or 2 with an
    effort other than the default. `kind`: 1 abs_error, 2 rel_error."""
    fill_words = (2, 0, 0) if fill is None else (1, *words(float(fill)))
    head = (kind, *words(bound), *fill_words, PREDICTOR_CODES[predictor])
    if effort == "default":
        return (LAYOUT, 0, *head)
    return (LAYOUT_EFFORT, 0, *head, EFFORT_CODES[effort])


def describe(values: tuple[int, ...] | list[int]) -> dict[str, Any]:
    """What a stored (or user's) table says, as `zdt inspect` shows it: the bound, predictor,
    effort and fill; {"cd_values": [...]} alone for a layout this zdt does not know."""
    v = [int(w) & 0xFFFFFFFF for w in values]
    if len(v) < 5 or v[0] not in (LAYOUT, LAYOUT_EFFORT):
        return {"cd_values": v}
    out: dict[str, Any] = {}
    bound = binary64(v[3], v[4])
    out["abs_error" if v[2] == 1 else "rel_error" if v[2] == 2 else f"bound kind {v[2]}"] = bound
    if len(v) > 8:
        names = {c: n for n, c in PREDICTOR_CODES.items()}
        out["predictor"] = names.get(v[8], f"code {v[8]}")
    if v[0] == LAYOUT_EFFORT and len(v) > 9:
        names = {c: n for n, c in EFFORT_CODES.items()}
        out["effort"] = names.get(v[9], f"code {v[9]}")
    if len(v) > 7 and v[5] == 1:
        fill = binary64(v[6], v[7])
        out["fill"] = fill if math.isfinite(fill) else str(fill)
    if v[1] in DTYPES:
        out["data_type"] = DTYPES[v[1]]
    return out
