"""The full streaming pass over an array that every bound decision rests on.

It reads every storage unit once (a reduction at memory speed, units on a thread pool) and
learns the range of the finite values, the smallest non-zero magnitude, which of NaN /
+Infinity / -Infinity occur, and, for the decimal grids an absolute bound could use, how far
the data are from them. The values the store declares as sentinels (the fill value, CF
``_FillValue`` / ``missing_value``) are left out of all of that: they get codes of their own
and must not widen the range. It never samples: ``--sample`` only limits the size
measurement, which keeps the units it is told to (`keep`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from zdt.engine.bounds import sentinel_mask


@dataclass
class Survey:
    dtype: np.dtype
    count: int = 0                  # elements seen, sentinels included
    lo: float = math.inf            # finite data values (sentinels excluded); lo > hi: none
    hi: float = -math.inf
    min_abs: float = math.inf       # smallest non-zero magnitude
    has_zero: bool = False
    specials: set[str] = field(default_factory=set)     # "NaN", "Infinity", "-Infinity"
    sentinels_seen: set[float] = field(default_factory=set)
    grid_error: dict[int, float] = field(default_factory=dict)   # decimal digits -> largest miss
    # decimal digits d the data lie on (up to float rounding) -> (n0, g): every value is
    # (n0 + g k) 10**-d for whole k, n0 the smallest and g the largest such step (a DEM in
    # 28 m steps: g = 28 at d = 0); g = 0 when all values are one
    grid_gcd: dict[int, tuple[int, int]] = field(default_factory=dict)
    kept: dict[int, np.ndarray] = field(default_factory=dict)    # unit index -> its data

    @property
    def empty(self) -> bool:
        """No finite data value (only specials / sentinels, or no elements)."""
        return self.lo > self.hi

    @property
    def max_abs(self) -> float:
        return 0.0 if self.empty else max(abs(self.lo), abs(self.hi))

    def merge(self, other: Survey) -> None:
        if not other.empty:         # (a part without finite values says nothing of grids)
            if self.empty:
                self.grid_gcd = dict(other.grid_gcd)
            else:
                self.grid_gcd = {d: _joined(self.grid_gcd[d], other.grid_gcd[d])
                                 for d in self.grid_gcd if d in other.grid_gcd}
        self.count += other.count
        self.lo = min(self.lo, other.lo)
        self.hi = max(self.hi, other.hi)
        self.min_abs = min(self.min_abs, other.min_abs)
        self.has_zero |= other.has_zero
        self.specials |= other.specials
        self.sentinels_seen |= other.sentinels_seen
        for d, e in other.grid_error.items():
            self.grid_error[d] = max(self.grid_error.get(d, 0.0), e)
        self.kept.update(other.kept)


def _chunk_survey(x: np.ndarray, dtype: np.dtype, sentinels: Sequence[float],
                  grid_digits: Sequence[int]) -> Survey:
    s = Survey(dtype)
    flat = np.asarray(x).reshape(-1)
    s.count = flat.size
    if not flat.size:
        return s
    if flat.dtype.kind == "f":
        finite = np.isfinite(flat)
        if not finite.all():
            if np.isnan(flat).any():
                s.specials.add("NaN")
            if (flat == np.inf).any():
                s.specials.add("Infinity")
            if (flat == -np.inf).any():
                s.specials.add("-Infinity")
            flat = flat[finite]
    if sentinels and flat.size:
        at = sentinel_mask(flat, sentinels)
        if at.any():
            s.sentinels_seen |= {v for v in sentinels if (flat == v).any()}
            flat = flat[~at]
    if not flat.size:
        return s
    s.lo, s.hi = flat.min().item(), flat.max().item()
    if flat.dtype.kind == "f":
        mag = np.abs(flat)
        nonzero = mag[mag > 0]
        s.has_zero = nonzero.size < mag.size
        if nonzero.size:
            s.min_abs = float(nonzero.min())
        # the coarsest grid the values are on up to float rounding (not merely near: that is
        # the 1e-3 rule of fold()); on it, they are on every finer grid at least as nearly,
        # which needs no pass of its own
        held: list[int] = []
        for d in sorted(grid_digits):
            if held:
                s.grid_error[d] = s.grid_error[held[0]]
                held.append(d)
                continue
            scale = 10.0 ** d
            s.grid_error[d] = float(np.abs(np.rint(flat * scale) / scale - flat).max())
            if s.grid_error[d] <= 1e-9 * 10.0 ** -d:
                held.append(d)
        if held and max(abs(s.lo), abs(s.hi)) * 10.0 ** held[-1] < 2 ** 52:
            d0 = held[0]
            n = np.rint(flat * 10.0 ** d0).astype(np.int64)
            n0 = int(n.min())
            g = _gcd(n - n0)
            for d in held:      # (on 10**-d0, the finer grids follow by a power of ten)
                f = 10 ** (d - d0)
                s.grid_gcd[d] = (n0 * f, g * f)
    else:
        s.has_zero = bool((flat == 0).any())
        nonzero = flat[flat != 0]
        if nonzero.size:
            s.min_abs = float(np.abs(nonzero.astype(np.float64)).min())
    return s


def _gcd(diffs: np.ndarray) -> int:
    """The greatest common divisor of non-negative whole numbers (0 for none or all zero); a
    first look at a few thousand ends most searches (noisy data: 1) without the whole pass."""
    head = int(np.gcd.reduce(diffs[:4096])) if diffs.size else 0
    if head == 1 or diffs.size <= 4096:
        return head
    return math.gcd(head, int(np.gcd.reduce(diffs[4096:])))


def _joined(a: tuple[int, int], b: tuple[int, int]) -> tuple[int, int]:
    """Two parts' (n0, g) of one grid: the smallest start and the step both lie on."""
    return min(a[0], b[0]), math.gcd(a[1], b[1], abs(a[0] - b[0]))


def survey(read: Callable[[Any], np.ndarray], regions: Sequence[Any], dtype: np.dtype, *,
           sentinels: Sequence[float] = (), grid_digits: Iterable[int] = (),
           keep: Iterable[int] = (), workers: int = 2,
           progress: Callable[[int], None] | None = None) -> Survey:
    """Read every region (`read(region)` -> its data) and learn what the module docstring says;
    regions whose index is in `keep` are kept in memory for the size measurement. A decimal
    grid whose error grows beyond any use (> 1e-3 of the grid step) is no longer followed."""
    keep = set(keep)
    digits = list(grid_digits)
    total = Survey(np.dtype(dtype))

    def one(i: int) -> Survey:
        x = read(regions[i])
        part = _chunk_survey(x, total.dtype, sentinels, list(digits))
        if i in keep:
            part.kept[i] = x
        return part

    with ThreadPoolExecutor(max(1, workers), thread_name_prefix="zdt-survey") as pool:
        # in order, a few units ahead: memory stays bounded by the units in flight
        ahead = max(2, 2 * workers)
        futures: dict[int, Any] = {}
        for i in range(len(regions)):
            futures[i] = pool.submit(one, i)
            if i >= ahead:
                _take(futures.pop(i - ahead), total, digits, progress)
        for i in sorted(futures):
            _take(futures[i], total, digits, progress)
    return total


def survey_unit(x: np.ndarray, i: int, dtype: np.dtype, sentinels: Sequence[float],
                digits: Sequence[int], keep: bool) -> Survey:
    """One unit's part of the survey (what a task on a cluster returns)."""
    part = _chunk_survey(x, np.dtype(dtype), sentinels, list(digits))
    if keep:
        part.kept[i] = x
    return part


def _take(future: Any, total: Survey, digits: list[int], progress: Callable[[int], None] | None) -> None:
    fold(future.result(), total, digits, progress)


def fold(part: Survey, total: Survey, digits: list[int], progress: Callable[[int], None] | None) -> None:
    """Merge one unit's part into the total, in unit order; a decimal grid whose error grew
    beyond use is dropped from `digits`."""
    total.merge(part)
    for d in list(digits):
        if total.grid_error.get(d, 0.0) > 1e-3 * 10.0 ** -d:
            digits.remove(d)        # (the threads already at work still measure it: harmless)
    if progress is not None:
        progress(1)
