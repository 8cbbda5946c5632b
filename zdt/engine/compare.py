"""What an encoding did to the data: ``zdt.compare(source, decoded)`` and ``zdt compare``.

For every array present in both stores (or the ones named), the decoded values against the
source's, in float64, in the data's units (CF-packed arrays unpacked, each with its own
scale_factor / add_offset and in its reader's arithmetic: zdt.engine.packing), over the elements that hold a value in the source: NaN, the
infinities and the declared missing values (_FillValue, missing_value; a format 2 array's fill
value) are compared by position and never averaged over (a NaN and a missing value alike:
CF readers read both as NaN). docs/compare.md defines each figure
and says where it follows ClimateBenchPress and ldcpy and where it differs.

Memory is bounded: the pointwise figures are sums over storage units, read a few at a time
(one per thread); the figures of 2-d slices (DSSIM, the spectral error) read at most
MAX_SLICES slices, each cropped to its central MAX_SIDE x MAX_SIDE window.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from zdt.engine.bounds import Bound, error_of, sentinel_mask
from zdt.errors import InputError

# ClimateBenchPress's pass/fail thresholds
REL_THRESHOLD = 1e-4        # "spatial relative error": a point counts above 1e-4 ...
REL_SHARE = 0.05            # ... and fewer than 5% of points may
R2_MIN = 0.99999            # R^2 above this

# the 2-d figures: how many slices, how large
MAX_SLICES = 16
MAX_SIDE = 2048

# DSSIM (Baker, Pinard and Hammerling 2023, as ldcpy's ssim_value_fp_fast computes it): both
# slices scaled to [0, 1] by their common range and quantised to 1/255, a Gaussian window of
# sigma 1.5 and radius 5 (11 x 11), C1 = C2 = 1e-8, the map cropped by the radius and averaged
SSIM_RADIUS = 5
SSIM_SIGMA = 1.5
SSIM_C = 1e-8
SSIM_LEVELS = 255

KEYS = ("max_abs_error", "max_rel_error", "mean_abs_error", "rmse", "psnr", "r2", "bias", "dssim",
        "spectral_error", "rel_error_share", "checks")

Progress = Callable[[str, int], Callable[[int], None]]

# an element's kind: a value, or a special that must sit at the same place in both arrays
VALUE, NAN, POS_INF, NEG_INF, MISSING = 0, 1, 2, 3, 4
_KIND_TEXT = {NAN: "NaN", POS_INF: "+inf", NEG_INF: "-inf", MISSING: "a missing value"}


# --- one array as compare reads it ---------------------------------------------------------------
class _Side:
    """One array: its values in float64 and data units, and the kind of each element."""

    def __init__(self, arr: Any) -> None:
        from zdt.engine.arrays import reader, sentinels_of
        from zdt.engine.packing import Packing

        self.arr = arr
        self.read = reader(arr)
        self.packing = Packing.of(arr)
        self.masking = sentinels_of(arr).masking

    def values(self, region: tuple[slice, ...]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(values as float64 in data units, kinds, the stored numbers) of `region`."""
        stored = np.asarray(self.read(region))
        v, kinds = self.of(stored)
        return v, (np.zeros(stored.shape, dtype=np.int8) if kinds is None else kinds), stored

    def of(self, stored: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
        """(values as float64 in data units, kinds) of stored numbers; kinds None when every
        element is a value."""
        kinds = None
        if self.masking:
            missing = sentinel_mask(stored, self.masking)
            if missing.any():
                kinds = np.zeros(stored.shape, dtype=np.int8)
                kinds[missing] = MISSING
        if self.packing is not None:
            v = self.packing.unpack(stored)     # (as a reader of this array unpacks it)
        else:
            v = stored.astype(np.float64, copy=False)
        if stored.dtype.kind == "f":
            special = ~np.isfinite(v)
            if special.any():
                if kinds is None:
                    kinds = np.zeros(stored.shape, dtype=np.int8)
                free = kinds == VALUE
                kinds[np.isnan(v) & free] = NAN
                kinds[(v == np.inf) & free] = POS_INF
                kinds[(v == -np.inf) & free] = NEG_INF
        return v, kinds


def as_cf_reads(kinds: np.ndarray) -> np.ndarray:
    """The kinds as a CF reader tells them apart: a NaN and a declared missing value are both
    NaN once xarray masks (a file's _FillValue 1e20 and its copy's NaN are the same gap)."""
    return np.where(kinds == NAN, np.int8(MISSING), kinds)


def _same_kinds(name: str, region: tuple[slice, ...], a: tuple, b: tuple) -> None:
    """One error naming the first element whose kind differs (the masks differ)."""
    (va, ka), (vb, kb) = a[:2], b[:2]
    differ = as_cf_reads(ka) != as_cf_reads(kb)
    if not differ.any():
        return
    local = np.unravel_index(int(np.flatnonzero(differ)[0]), ka.shape)
    index = tuple(int(s.start + j) for s, j in zip(region, local, strict=True))

    def what(v: np.ndarray, k: np.ndarray) -> str:
        return _KIND_TEXT.get(int(k[local]), f"the value {float(v[local])!r}")

    raise InputError(f"{name}: the masks differ: element {index} is {what(va, ka)} in the source "
                     f"and {what(vb, kb)} in the decoded copy ({int(differ.sum())} such elements "
                     f"in the storage unit at {_region_text(region)})")


def _region_text(region: tuple[slice, ...]) -> str:
    return "[" + ", ".join(f"{s.start}:{s.stop}" for s in region) + "]"


# --- the pointwise figures: sums over storage units ---------------------------------------------
@dataclass
class _Sums:
    """What the pointwise figures need, over some elements (the values only)."""

    n: int = 0
    abs_sum: float = 0.0
    sq_sum: float = 0.0
    err_sum: float = 0.0
    max_abs: float = 0.0
    max_rel: float = 0.0
    above: int = 0              # elements whose relative error exceeds REL_THRESHOLD
    lo: float = math.inf        # the source's smallest and largest value
    hi: float = -math.inf
    mean: float = 0.0           # the source's mean and sum of squared deviations from it
    m2: float = 0.0
    bound_error: float = 0.0    # the largest error in the bound's terms
    bound_kept: bool = True     # ... and whether every element keeps it, decided exactly

    @classmethod
    def of(cls, x: np.ndarray, y: np.ndarray, bound: Bound | None,
           stored: tuple | None = None, unpacked: bool = False) -> _Sums:
        """x, y: the source's and the copy's values (float64, 1-d, no specials). stored: their
        integers, when the bound is checked on those exactly (plain integers); `unpacked` (either
        side CF-packed): the bound is checked on x and y as readers unpack them, with NumPy's
        own subtraction (and division), the very figures reported."""
        if x.size == 0:
            return cls()
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            d = y - x
            a = np.abs(d)
            # ClimateBenchPress's relative error: 0 where the copy is exact, else |d| / |x|
            # (infinite where x is 0 and the copy is not)
            rel = np.divide(a, np.abs(x), out=np.zeros_like(a), where=d != 0)
        if bound is None:
            error, kept = 0.0, True
        elif unpacked:
            # CF-packed: the bound as a reader computes it, on the values it unpacks (x, y:
            # stored x scale + offset, each in its reader's float type), the figures reported
            error = float(rel.max() if bound.relative else a.max())
            kept = error <= bound.value
        else:
            error = error_of(*(stored if stored is not None else (x, y)), bound)
            kept = error <= bound.value
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            mean = float(x.mean())
            dev = x - mean
            return cls(int(x.size), float(a.sum()), float(np.dot(d, d)), float(d.sum()),
                       float(a.max()), float(rel.max()), int(np.count_nonzero(rel > REL_THRESHOLD)),
                       float(x.min()), float(x.max()), mean, float(np.dot(dev, dev)), error, kept)

    def merge(self, o: _Sums) -> _Sums:
        if o.n == 0:
            return self
        if self.n == 0:
            return o
        n = self.n + o.n
        delta = o.mean - self.mean          # (Chan et al.'s update of the mean and M2)
        return _Sums(n, self.abs_sum + o.abs_sum, self.sq_sum + o.sq_sum, self.err_sum + o.err_sum,
                     max(self.max_abs, o.max_abs), max(self.max_rel, o.max_rel), self.above + o.above,
                     min(self.lo, o.lo), max(self.hi, o.hi), self.mean + delta * o.n / n,
                     self.m2 + o.m2 + delta * delta * self.n * o.n / n,
                     max(self.bound_error, o.bound_error), self.bound_kept and o.bound_kept)


def _gauss_weights() -> np.ndarray:
    i = np.arange(-SSIM_RADIUS, SSIM_RADIUS + 1, dtype=np.float64)
    w = np.exp(-(i * i) / (2 * SSIM_SIGMA ** 2))
    return w / w.sum()


BAND = 64                       # output rows per band of the window sums (cache-sized)


def _window_sums(q: np.ndarray, w: np.ndarray) -> np.ndarray:
    """q (m, n) convolved with the separable window w x w, only where the window lies inside q
    (shape (m - 2r, n - 2r)); in bands of BAND rows, whose temporaries stay in cache (3x
    faster than whole-array passes on a 721 x 1440 slice, the same sums in the same order)."""
    k = len(w)
    m, n = q.shape
    out = np.empty((m - k + 1, n - k + 1))
    for s in range(0, m - k + 1, BAND):
        e = min(m - k + 1, s + BAND)
        rows = sum(w[i] * q[s + i:e + i, :] for i in range(k))
        out[s:e] = sum(w[j] * rows[:, j:n - k + 1 + j] for j in range(k))
    return out


def dssim(a: np.ndarray, b: np.ndarray) -> float | None:
    """Baker et al.'s data SSIM of a 2-d slice and its copy (1: the same; NaN where the slice
    has no value); None when the slice is smaller than the window or holds no value."""
    k = 2 * SSIM_RADIUS + 1
    if a.ndim != 2 or a.shape[0] < k or a.shape[1] < k:
        return None
    valid = ~np.isnan(a)
    inner = valid[SSIM_RADIUS:-SSIM_RADIUS, SSIM_RADIUS:-SSIM_RADIUS]
    if not inner.any():
        return None
    lo = min(float(a[valid].min()), float(b[valid].min()))
    hi = max(float(a[valid].max()), float(b[valid].max()))
    if hi > lo:
        sa, sb = (a - lo) / (hi - lo), (b - lo) / (hi - lo)
    elif hi != 0:
        sa, sb = a / hi, b / hi
    else:
        sa, sb = a, b
    gaps = not valid.all()
    sa = np.round(sa * SSIM_LEVELS) / SSIM_LEVELS
    sb = np.round(sb * SSIM_LEVELS) / SSIM_LEVELS
    if gaps:
        sa, sb = np.where(valid, sa, 0.0), np.where(valid, sb, 0.0)
    w = _gauss_weights()
    sums = [_window_sums(f, w) for f in (sa, sb, sa * sa, sb * sb, sa * sb)]
    with np.errstate(invalid="ignore", divide="ignore"):
        if gaps:                # NaN neighbours leave the window; its weights renormalised
            norm = _window_sums(valid.astype(np.float64), w)
            sums = [f / norm for f in sums]
        mu1, mu2, e11, e22, e12 = sums
        s11, s22, s12 = e11 - mu1 * mu1, e22 - mu2 * mu2, e12 - mu1 * mu2
        ssim = ((2 * mu1 * mu2 + SSIM_C) / (mu1 * mu1 + mu2 * mu2 + SSIM_C)
                * (2 * s12 + SSIM_C) / (s11 + s22 + SSIM_C))
    return float(ssim[inner].mean()) if gaps else float(ssim.mean())


def radial_spectrum(a: np.ndarray) -> np.ndarray:
    """The radially averaged power spectrum of a 2-d field (ClimateBenchPress, after pySTEPS'
    rapsd): |FFT|^2 / (m n), averaged over the frequencies of each integer radius
    0 .. ceil(max(m, n) / 2) - 1. From the real FFT's half plane: the frequency (k, -l) has
    the power and radius of (-k, l), so each column l of the half plane but the first (and a
    last one at n / 2) stands for two."""
    m, n = a.shape
    power = np.abs(np.fft.rfft2(a)) ** 2 / (m * n)
    fy = np.rint(np.fft.fftfreq(m) * m)
    fx = np.arange(power.shape[1], dtype=np.float64)
    radius = np.rint(np.sqrt(fy[:, None] ** 2 + fx[None, :] ** 2)).astype(np.int64).ravel()
    twice = np.full(power.shape[1], 2.0)
    twice[0] = 1.0
    if n % 2 == 0:
        twice[-1] = 1.0
    weight = np.broadcast_to(twice, power.shape).ravel()
    bins = (max(m, n) + 1) // 2
    sums = np.bincount(radius, weights=power.ravel() * weight, minlength=bins)[:bins]
    counts = np.bincount(radius, weights=weight, minlength=bins)[:bins]
    return sums / counts


def spectral_error(a: np.ndarray, b: np.ndarray) -> float | None:
    """The mean squared difference of the two radially averaged power spectra; None when the
    slice holds a NaN (the FFT needs every element)."""
    if a.ndim != 2 or a.size == 0 or np.isnan(a).any() or np.isnan(b).any():
        return None
    d = radial_spectrum(a) - radial_spectrum(b)
    return float(np.mean(d * d))


def slice_indices(shape: tuple[int, ...], most: int) -> list[tuple[int, ...]]:
    """The leading indices of the 2-d slices (last two axes) the slice figures read: every one
    when there are at most `most`, else `most` evenly spread, the first and last included."""
    lead = shape[:-2]
    count = int(np.prod(lead, dtype=np.int64))
    if count == 0 or most < 1:
        return []
    picks = sorted({int(round(i)) for i in np.linspace(0, count - 1, min(most, count))})
    return [tuple(int(j) for j in np.unravel_index(p, lead)) for p in picks]


def crop_window(m: int, side: int = MAX_SIDE) -> slice:
    """The central `side` elements of an axis of m (all of it when m <= side)."""
    start = max(0, (m - side) // 2)
    return slice(start, min(m, start + side))


# --- one array ------------------------------------------------------------------------------------
@dataclass
class Views:
    """What a report draws of one array (zdt.engine.report)."""

    where: str                  # the slice or window drawn, as an index expression
    source: np.ndarray          # that slice (2-d) or window (1-d) of both arrays, NaN where
    decoded: np.ndarray         # the source holds no value
    errors: np.ndarray          # decoded - source over an even sample of every storage unit
    spectra: tuple | None       # (source's, copy's) radially averaged power spectrum, the mean
                                # over the slices read (those without NaN); None if none
    bound: Bound | None
    grid: Grid | None           # the axes of a 2-d slice (None: 1-d)


@dataclass
class MapAxis:
    """One axis of the slice drawn: a 1-d coordinate's values over it, or its indices."""

    label: str                  # "latitude (degrees_north)", or "y (index)"
    values: np.ndarray          # per row (column) of the slice, strictly monotonic
    indices: bool = False       # values are the array's indices: no coordinate found
    north: bool = False         # a latitude or Y axis, and
    east: bool = False          # a longitude or X axis (stored x, y: drawn with y upward)
    down: bool = False          # drawn increasing downward (positive="down", or row 0 north)


@dataclass
class Grid:
    """The axes a map is drawn on; `note` says why an axis shows indices (None: both show a
    coordinate's values)."""

    rows: MapAxis
    cols: MapAxis
    note: str | None


# CF's ways of saying an axis points north, or east
_POINTS = {"Y": ({"latitude", "grid_latitude", "projection_y_coordinate"}, "north"),
           "X": ({"longitude", "grid_longitude", "projection_x_coordinate"}, "east")}


def _points(attrs: Any, axis: str) -> bool:
    names, way = _POINTS[axis]
    units = str(attrs.get("units", "")).lower().replace(" ", "_")
    return (str(attrs.get("axis", "")).upper() == axis
            or str(attrs.get("standard_name", "")).lower() in names
            or units in {f"degrees_{way}", f"degree_{way}", f"degrees_{way[0]}", f"degree_{way[0]}",
                         f"degrees{way[0]}", f"degree{way[0]}"})


def _dimensions(arr: Any) -> tuple[str | None, ...] | None:
    """The name of each axis (None where unnamed), or None when the array does not name one
    per axis: zarr v3 ``dimension_names``, or format 2's ``_ARRAY_DIMENSIONS`` (xarray's)."""
    names = getattr(arr.metadata, "dimension_names", None) or arr.attrs.get("_ARRAY_DIMENSIONS")
    if not isinstance(names, (list, tuple)) or len(names) != arr.ndim:
        return None
    return tuple(n if isinstance(n, str) and n else None for n in names)


def _coordinate_values(arr: Any, region: tuple[slice, ...]) -> np.ndarray:
    """A coordinate's values at `region` in float64, unpacked; NaN stays NaN. (Not compare's
    masking: a format 2 fill value of 0 is a real latitude or longitude there.)"""
    from zdt.engine.arrays import reader
    from zdt.engine.packing import Packing

    v = np.asarray(reader(arr)(region))
    packing = Packing.of(arr)
    return v.astype(np.float64) if packing is None else packing.unpack(v)


class Coordinates:
    """The arrays that describe another's axes, by name: in its group or the nearest group
    above it (netCDF's scoping of dimensions), among the arrays compare opened, else opened
    from the store (a single array given: its group was not walked)."""

    def __init__(self, node: Any, arrays: Sequence[Any]) -> None:
        from zdt.stores.nodes import is_array

        self.walked = None if is_array(node) else node.path    # every array under it is known
        self.known = {a.path: a for a in arrays}
        self.opened: dict[str, Any] = {}

    def find(self, arr: Any, name: str) -> Any | None:
        parts = arr.path.split("/")[:-1]
        for k in range(len(parts), -1, -1):
            found = self._array(arr, "/".join([*parts[:k], name]))
            if found is not None:
                return found
        return None

    def _array(self, arr: Any, path: str) -> Any | None:
        if path in self.known:
            return self.known[path]
        if self.walked is not None and (self.walked == "" or path.startswith(self.walked + "/")):
            return None
        if path not in self.opened:
            from zdt.stores.nodes import _open, is_array, reading_metadata, store_text

            with reading_metadata(store_text(arr)):     # (a store's own error: one line)
                try:
                    node = _open(arr.store_path.store, path)
                except (FileNotFoundError, KeyError):   # (zarr's NodeNotFoundError among them)
                    node = None
            self.opened[path] = node if node is not None and is_array(node) else None
        return self.opened[path]


def map_grid(arr: Any, region: tuple[slice, ...], coords: Coordinates | None) -> Grid:
    """The axes of the 2-d slice `region` of `arr` (its last two): each the values of the 1-d
    coordinate named like its dimension, over the slice; else its indices, and a note why."""
    dims = _dimensions(arr)
    axes: list[MapAxis] = []
    notes: list[str] = []
    for axis in (arr.ndim - 2, arr.ndim - 1):
        r = region[axis]
        name = dims[axis] if dims else None
        coord = coords.find(arr, name) if name and coords is not None else None
        if name is None:
            why = "the array names no dimensions" if dims is None else f"axis {axis} has no name"
        elif coord is None:
            why = f"no 1-d coordinate named {name}"
        elif coord.ndim != 1 or coord.shape[0] != arr.shape[axis] or np.dtype(coord.dtype).kind not in "iuf":
            why = f"{name} is not a 1-d numeric array of {arr.shape[axis]}"
        else:
            v = _coordinate_values(coord, (r,))
            step = np.diff(v)
            if not ((step > 0).all() or (step < 0).all()):     # (NaN fails both)
                why = f"{name} is not strictly monotonic"
            else:
                units = coord.attrs.get("units")
                axes.append(MapAxis(f"{name} ({units})" if isinstance(units, str) and units else name, v,
                                    north=_points(coord.attrs, "Y"), east=_points(coord.attrs, "X"),
                                    down=str(coord.attrs.get("positive", "")).lower() == "down"))
                continue
        axes.append(MapAxis(f"{name or f'axis {axis}'} (index)", np.arange(r.start, r.stop, dtype=np.float64),
                            indices=True))
        notes.append(why)
    rows, cols = axes
    if not notes:
        return Grid(rows, cols, None)
    curvilinear = _curvilinear(arr, region, coords)
    if curvilinear is not None:
        names, north_first = curvilinear
        notes = [f"{' and '.join(names)} are 2-d (a curvilinear grid)"]
        rows.down = rows.down or (rows.indices and north_first)
    return Grid(rows, cols, "index axes: " + "; ".join(dict.fromkeys(notes)))


def _curvilinear(arr: Any, region: tuple[slice, ...],
                 coords: Coordinates | None) -> tuple[list[str], bool] | None:
    """(the 2-d coordinates over the array's last two axes that its ``coordinates`` attribute
    names, whether their latitude is larger in the slice's first row than in its last), or
    None when it names none."""
    named = arr.attrs.get("coordinates")
    if coords is None or not isinstance(named, str):
        return None
    found, north_first = [], False
    rows, cols = region[-2], region[-1]
    for name in named.split():
        c = coords.find(arr, name)
        if c is None or c.ndim != 2 or tuple(c.shape) != tuple(arr.shape[-2:]):
            continue
        found.append(name)
        if _points(c.attrs, "Y") and np.dtype(c.dtype).kind in "iuf":
            first = _coordinate_values(c, (slice(rows.start, rows.start + 1), cols))
            last = _coordinate_values(c, (slice(rows.stop - 1, rows.stop), cols))
            if np.isfinite(first).any() and np.isfinite(last).any():
                north_first = float(np.nanmean(first)) > float(np.nanmean(last))
    return (found, north_first) if found else None


BLOCK = 1 << 18                 # elements per block of the pointwise figures (2 MB of float64)
ERROR_SAMPLE = 200_000          # errors kept for the report's histogram, over all units
WINDOW_1D = 4096                # values of a 1-d array drawn


def _compare_array(name: str, src: Any, dst: Any, bound: Bound | None, slices: int,
                   progress: Progress | None, views: bool,
                   coords: Coordinates | None = None) -> tuple[dict[str, Any], Views | None]:
    """The figures and checks of one array and its decoded copy (zarr arrays), and with
    `views` what the report draws of them (None for a copy whose every value is the
    source's: nothing to draw); `coords` finds the arrays that give a map its axes."""
    from zdt.engine.arrays import storage_units
    from zdt.engine.report import identical
    from zdt.pipeline import workers
    from zdt.stores.nodes import array_type_name

    if tuple(src.shape) != tuple(dst.shape):
        raise InputError(f"{name}: the shapes differ: {tuple(src.shape)} in the source, "
                         f"{tuple(dst.shape)} in the decoded copy")
    if np.dtype(src.dtype) != np.dtype(dst.dtype):
        raise InputError(f"{name}: the data types differ: {array_type_name(src)} in the "
                         f"source, {array_type_name(dst)} in the decoded copy")
    a, b = _Side(src), _Side(dst)
    units = storage_units(src)
    picks = slice_indices(tuple(src.shape), slices) if src.ndim >= 2 else []
    advance = (progress or _no_progress)(f"compare {name}", len(units) + len(picks))
    quota = max(1, ERROR_SAMPLE // max(1, len(units))) if views else 0

    # plain integers are checked against the bound on the stored numbers, exactly (float64
    # holds integers exactly only up to 2^53); CF-packed ones on what readers unpack
    unpacked = a.packing is not None or b.packing is not None
    on_stored = not unpacked and np.dtype(src.dtype).kind in "iu"
    crop = (crop_window(src.shape[-2]), crop_window(src.shape[-1])) if src.ndim >= 2 else ()
    middle = picks[len(picks) // 2] if picks else None
    per_slice: dict[tuple, tuple] = {}          # pick -> (dssim, spectral error, spectra, drawn)

    def one_slice(lead: tuple, x: np.ndarray, y: np.ndarray, region: tuple) -> None:
        """The slice figures of the pick `lead` (x, y: its values, NaN where none)."""
        e = spectral_error(x, y)
        power = (radial_spectrum(x), radial_spectrum(y)) if views and e is not None else None
        per_slice[lead] = (dssim(x, y), e, power, (region, x, y) if views and lead == middle else None)

    def unit(region: tuple[slice, ...]) -> tuple[_Sums, np.ndarray | None]:
        xs, ys = np.asarray(a.read(region)), np.asarray(b.read(region))
        fx, fy = xs.reshape(-1), ys.reshape(-1)
        sums, samples = _Sums(), []
        for start in range(0, fx.size, BLOCK):      # (blocks: temporaries of a cache's size)
            bx, by = fx[start:start + BLOCK], fy[start:start + BLOCK]
            (vx, kx), (vy, ky) = a.of(bx), b.of(by)
            if kx is not None or ky is not None:
                if not np.array_equal(as_cf_reads(kx) if kx is not None else 0,
                                      as_cf_reads(ky) if ky is not None else 0):
                    _same_kinds(name, region, a.values(region), b.values(region))
                keep = kx == VALUE
                vx, vy, bx, by = vx[keep], vy[keep], bx[keep], by[keep]
            sums = sums.merge(_Sums.of(vx, vy, bound, (bx, by) if on_stored else None, unpacked))
            if quota and vx.size:
                samples.append((vy - vx)[::-(-fx.size // quota)])
        # the picked slices this unit holds whole (their crop window): their figures from here
        if crop and all(r.start <= c.start and c.stop <= r.stop for r, c in zip(region[-2:], crop, strict=True)):
            for lead in picks:
                if all(r.start <= i < r.stop for r, i in zip(region, lead, strict=False)):
                    at = (*(i - r.start for r, i in zip(region, lead, strict=False)),
                          *(slice(c.start - r.start, c.stop - r.start) for r, c in zip(region[-2:], crop, strict=True)))
                    (x, kx), (y, _) = a.of(xs[at]), b.of(ys[at])
                    if kx is not None:
                        x, y = np.where(kx != VALUE, np.nan, x), np.where(kx != VALUE, np.nan, y)
                    one_slice(lead, x, y, (*(slice(i, i + 1) for i in lead), *crop))
        return sums, (np.concatenate(samples) if samples else None)

    total = _Sums()
    samples: list[np.ndarray] = []
    n_threads = workers(most=8)
    with ThreadPoolExecutor(n_threads, thread_name_prefix="zdt-compare") as pool:
        window = 2 * n_threads
        for start in range(0, len(units), window):        # (a few units in memory at a time)
            for sums, sample in pool.map(unit, units[start:start + window]):
                total = total.merge(sums)
                if sample is not None:
                    samples.append(sample)
                advance(1)
        # the picks no unit held whole (units smaller than a slice's window): read apart
        rest = [lead for lead in picks if lead not in per_slice]

        def apart(lead: tuple) -> None:
            region = (*(slice(i, i + 1) for i in lead), *crop)
            one_slice(lead, *_slice_values(name, region, a, b), region)

        for _ in pool.map(apart, rest):
            pass
    advance(len(picks))
    found = [per_slice[lead] for lead in picks]
    ssims = [f[0] for f in found if f[0] is not None]
    spectra = [f[1] for f in found if f[1] is not None]
    power = [f[2] for f in found if f[2] is not None]
    drawn = next((f[3] for f in found if f[3] is not None), None)
    figures = _figures(total, bound, ssims, spectra)
    if not views:
        return figures, None
    if src.size == 0 or src.ndim == 0 or identical(figures):     # (nothing to draw)
        return figures, None
    if drawn is None:                   # a 1-d array: its middle window; else the first slice
        region = ((crop_window(src.shape[0], WINDOW_1D),) if src.ndim == 1
                  else (*(slice(0, 1) for _ in src.shape[:-2]), *crop))
        drawn = (region, *_slice_values(name, region, a, b))
    region, x, y = drawn
    where = "[" + ", ".join(str(r.start) if r.stop - r.start == 1 and i < len(region) - 2
                            else f"{r.start}:{r.stop}" for i, r in enumerate(region)) + "]"
    spectrum = (np.mean([p for p, _ in power], axis=0), np.mean([q for _, q in power], axis=0)) if power else None
    errors = np.concatenate(samples) if samples else np.zeros(0)
    if errors.size > ERROR_SAMPLE:      # (a unit gives at least one value per block)
        errors = errors[np.linspace(0, errors.size - 1, ERROR_SAMPLE).astype(np.int64)]
    grid = map_grid(src, region, coords) if src.ndim >= 2 else None
    return figures, Views(where, x, y, errors, spectrum, bound, grid)



def _slice_values(name: str, region: tuple[slice, ...], a: _Side, b: _Side) -> tuple[np.ndarray, np.ndarray]:
    """Both arrays' values at `region`, NaN where the source holds no value, with the unit
    axes of the leading indices dropped."""
    (x, kx, _), (y, ky, _) = a.values(region), b.values(region)
    _same_kinds(name, region, (x, kx), (y, ky))
    keep = tuple(i for i, r in enumerate(region) if i >= len(region) - 2 or r.stop - r.start != 1)
    shape = tuple(x.shape[i] for i in keep)
    special = (kx != VALUE).reshape(shape)
    return np.where(special, np.nan, x.reshape(shape)), np.where(special, np.nan, y.reshape(shape))


def _no_progress(label: str, total: int) -> Callable[[int], None]:
    return lambda n=1: None


def _figures(t: _Sums, bound: Bound | None, ssims: list[float], spectra: list[float]) -> dict[str, Any]:
    out: dict[str, Any] = dict.fromkeys(KEYS)
    out["dssim"] = float(np.mean(ssims)) if ssims else None
    out["spectral_error"] = float(np.mean(spectra)) if spectra else None
    if t.n == 0:
        out["checks"] = _checks(None, None, bound, None)
        return out
    mse = t.sq_sum / t.n
    out.update(max_abs_error=t.max_abs, max_rel_error=t.max_rel, mean_abs_error=t.abs_sum / t.n,
               rmse=math.sqrt(mse), bias=t.err_sum / t.n, rel_error_share=t.above / t.n)
    if mse == 0:
        out["psnr"] = math.inf
    elif t.hi > t.lo and math.isfinite(mse):
        out["psnr"] = 20 * math.log10(t.hi - t.lo) - 10 * math.log10(mse)
    if t.hi > t.lo and t.m2 > 0:        # (a constant source: m2 is rounding, not variance)
        out["r2"] = 1 - t.sq_sum / t.m2
    elif t.sq_sum == 0:
        out["r2"] = 1.0
    out["checks"] = _checks(out["rel_error_share"], out["r2"], bound, t)
    return out


def _checks(share: float | None, r2: float | None, bound: Bound | None,
            t: _Sums | None) -> dict[str, Any]:
    """ClimateBenchPress's pass/fail checks (passed None: not decidable here)."""
    decided = bound is not None and t is not None
    return {
        "bound": {"bound": str(bound) if bound is not None else None,
                  "largest_error": t.bound_error if decided else None,
                  "passed": t.bound_kept if decided else None},
        "rel_error_share": {"threshold": REL_THRESHOLD, "most": REL_SHARE, "value": share,
                            "passed": share < REL_SHARE if share is not None else None},
        "r2": {"least": R2_MIN, "value": r2, "passed": (r2 > R2_MIN) if r2 is not None else None},
    }


# --- stores ---------------------------------------------------------------------------------------
def compare(source: Any, decoded: Any, arrays: Sequence[str] | None = None, *,
            abs_error: float | None = None, rel_error: float | None = None,
            bounds: Any = None, slices: int = MAX_SLICES, html: Any = None,
            storage_options: dict | None = None, branch: str = "main",
            progress: Progress | None = None) -> dict[str, Any]:
    """The figures of every numeric array present in both stores (or of `arrays`, paths such as
    ``"/t2m"``), as ``{"arrays": {PATH: {figure: value, ..., "checks": {...}}}}``: the dict
    ``zdt compare --json`` prints (docs/compare.md defines each figure and check).

    Parameters
    ----------
    source, decoded
        Stores as zdt.convert takes them (paths, URLs, zarr stores or groups), or two arrays.
    arrays
        Array paths to compare (default: every numeric array in both).
    abs_error, rel_error, bounds
        The bound of the "bound" check, as zdt.suggest takes them (none: that check is
        not decided, ``passed`` is None).
    slices
        How many 2-d slices (the last two axes) DSSIM and the spectral error read, at most.
    html
        A file to write the report page to (maps, histograms, spectra; needs matplotlib,
        ``pip install 'zdt[report]'``).

    Returns
    -------
    dict
        Figures are Python floats (``inf`` where the definition gives it, None where it is
        undefined: an array with no values, DSSIM of a slice smaller than its window, the
        spectral error of slices with NaN). An array whose shape, data type or mask (the
        places of NaN, infinities and missing values) differs raises InputError naming it.
    """
    from zdt.engine.selection import selection_of

    selection = selection_of(abs_error, rel_error, bounds, None, None, required=False)
    return compare_and_report(source, decoded, arrays, lambda name: selection.bound_for(name)[0],
                              slices, html, None, storage_options, branch, progress)


def compare_and_report(source: Any, decoded: Any, arrays: Sequence[str] | None,
                       bound_for: Callable[[str], Bound | None], slices: int, html: Any,
                       measured: dict[str, dict] | None, storage_options: dict | None,
                       branch: str, progress: Progress | None) -> dict[str, Any]:
    """compare, and the report page at `html` (with the plan's measurements, `measured`, when
    a conversion asks)."""
    from zdt.engine.arrays import is_numeric
    from zdt.engine import sources
    from zdt.errors import UsageError
    from zdt.stores import nodes

    if isinstance(slices, bool) or not isinstance(slices, int) or slices < 0:
        raise UsageError(f"slices must be a whole number >= 0, not {slices!r}")
    if html is not None:
        from zdt.engine.report import require_matplotlib

        require_matplotlib()            # (before the reading, not after)
    _, a_node, a_text = sources.open_source(source, storage_options, branch)
    _, b_node, b_text = sources.open_source(decoded, storage_options, branch)

    def arrays_of(node: Any) -> dict[str, Any]:
        """PATH (inside the node opened, as zdt inspect names them from there) -> array."""
        if nodes.is_array(node):
            return {"/" + node.path.rpartition("/")[2]: node}
        base = node.path
        out = {}
        for path, n in nodes.walk(node):
            if nodes.is_array(n):
                rel = path[len(base):].strip("/") if base and path.startswith(base) else path
                out["/" + rel] = n
        return out

    in_a, in_b = arrays_of(a_node), arrays_of(b_node)
    if nodes.is_array(a_node) and nodes.is_array(b_node):
        in_b = {name: b_node for name in in_a}      # two arrays named: compared whatever their names
    if isinstance(arrays, str):
        arrays = [arrays]
    if arrays is not None:
        names = ["/" + str(p).strip().strip("/") for p in arrays]
        for name in names:
            for have, text in ((in_a, a_text), (in_b, b_text)):
                if name not in have:
                    raise InputError(f"{name}: no such array in {text}")
            if not is_numeric(in_a[name]):
                raise InputError(f"{name}: {in_a[name].dtype} data: compare reads numbers only")
    else:
        names = [p for p in in_a if p in in_b and is_numeric(in_a[p])]
    figures: dict[str, Any] = {}
    views: dict[str, Views] = {}
    coords = Coordinates(a_node, list(in_a.values())) if html is not None else None
    for name in names:
        figures[name], v = _compare_array(name, in_a[name], in_b[name], bound_for(name), slices,
                                          progress, views=html is not None, coords=coords)
        if v is not None:
            views[name] = v
    result = {"arrays": figures}
    if html is not None:
        from zdt.engine import report

        report.write(html, report.page(f"{a_text} against {b_text}", result, json.dumps(to_json(result)),
                                       views, measured, progress))
    return result


def to_json(result: dict[str, Any]) -> Any:
    """The result with infinities as the strings "inf" / "-inf" (JSON has no numbers for them)."""
    if isinstance(result, dict):
        return {k: to_json(v) for k, v in result.items()}
    if isinstance(result, float) and not math.isfinite(result):
        return "nan" if math.isnan(result) else ("inf" if result > 0 else "-inf")
    return result
