"""The safe range (zdt/formats/fast_path.py) against the fast loops' flag conditions (zdt/kernels/_cast.pxi).

When a fast loop flags a block, only the elements outside the safe range go through the exact
path; every other element keeps the loop's result. So the safe range must never contain a
value the loop flags. zdt makes it exactly the interval of values the loop never flags: both
ends run through the loop alone give no flag, and the next value beyond each end does. If a
flag condition in _cast.pxi or a bound in fast_path.py moves, one of these fails.
"""

from __future__ import annotations

import numpy as np
import pytest

from strategies import ALL_NAMES, LOW_FLOAT_NAMES, ROUNDINGS
from zdt import kernels
from zdt.codecs.cast import CastPlan
from zdt.formats import FORMATS
from zdt.kernels._types import TypeCode

BUILDS = kernels.available()
# the small floats the fast loops write (read as float32 by the loops from any source)
MINI_TARGETS = [n for n in LOW_FLOAT_NAMES if FORMATS[n].type_code == TypeCode.T_MINI]


def modes(target: str) -> list[tuple[str, str | None]]:
    oors = [None, "clamp", "wrap"] if FORMATS[target].is_int else [None, "clamp"]
    return [(r, o) for r in ROUNDINGS for o in oors]


def beyond(value: np.generic, direction: int) -> np.generic | None:
    """The next value of value's type past it in `direction` (None at the end of the type)."""
    dt = np.asarray(value).dtype
    if dt.kind == "f":
        if np.isinf(value):
            return None
        with np.errstate(over="ignore"):
            return np.nextafter(value, dt.type(direction * np.inf))
    info = np.iinfo(dt)
    nxt = int(value) + direction
    return dt.type(nxt) if info.min <= nxt <= info.max else None


def inside_sample(lo: np.generic, hi: np.generic, rng: np.random.Generator) -> np.ndarray:
    """Values from all over [lo, hi]: random bit patterns that fall inside, and the small ones."""
    dt = np.asarray(lo).dtype
    bits = rng.integers(0, 2 ** (8 * dt.itemsize), 4096, dtype=np.uint64, endpoint=False)
    vals = bits.astype(f"u{dt.itemsize}").view(dt)
    extra = np.array([0, 1, -1, 2, -2, 0.5, -0.5, 1.5, -1.5] if dt.kind == "f" else [0, 1, 2])
    with np.errstate(all="ignore"):
        vals = np.concatenate([vals, extra.astype(dt)])
        if dt.kind == "f":
            vals = np.concatenate([vals, np.array([-0.0], dt)])
        keep = (vals >= lo) & (vals <= hi)
    return vals[keep]


@pytest.mark.parametrize("target", ALL_NAMES + MINI_TARGETS)
@pytest.mark.parametrize("source", ALL_NAMES)
def test_safe_range_is_exactly_what_the_fast_loop_never_flags(source, target):
    rng = np.random.default_rng(abs(hash((source, target))) % 2**32)
    checked = 0
    for rounding, oor in modes(target):
        plan = CastPlan(FORMATS[source], FORMATS[target], rounding=rounding, out_of_range=oor)
        spec = plan.kernel
        if not spec.has_fast:
            continue
        # (float16 is read as float32; integers into a small float as float64)
        into_mini = FORMATS[target].type_code == TypeCode.T_MINI
        fast_source = FORMATS["float32"] if source == "float16" else (
            FORMATS["float64"] if into_mini and FORMATS[source].is_int else FORMATS[source])
        lo, hi = (fast_source.value_of(b) for b in spec.safe_range)
        assert lo <= 0 <= hi, (rounding, oor, lo, hi)
        edges = np.array([lo, hi], dtype=fast_source.dtype)
        outside = [v for v in (beyond(lo, -1), beyond(hi, +1)) if v is not None]
        inside = inside_sample(lo, hi, rng)
        for build in BUILDS:
            with kernels.use(build) as k:
                flags = k.fast_flags(spec, edges)
                assert not flags.any(), (build, rounding, oor, "flags an end of the safe range",
                                         edges[flags])
                if outside:
                    flags = k.fast_flags(spec, np.array(outside, dtype=fast_source.dtype))
                    assert flags.all(), (build, rounding, oor, "does not flag the value beyond "
                                         "the safe range", [v for v, f in zip(outside, flags) if not f])
                flags = k.fast_flags(spec, inside)
                assert not flags.any(), (build, rounding, oor, inside[flags][:5])
        checked += 1
    if source == "float16" or FORMATS[source].type_code >= 0:
        assert checked, "no fast loop was checked"


def test_a_hand_worked_safe_range():
    """A worked case, by hand: float64 -> int8 under nearest-even flags what rounds outside
    [-128, 127]. -128.5 is a tie that goes to the even -128 (kept), 127.5 one that goes to
    128 (flagged), so the range is [-128.5, the float below 127.5]."""
    plan = CastPlan(FORMATS["float64"], FORMATS["int8"])
    lo, hi = (FORMATS["float64"].value_of(b) for b in plan.kernel.safe_range)
    assert hi == np.nextafter(127.5, 0) and lo == -128.5
    flags = kernels.module().fast_flags(plan.kernel, np.array([lo, hi, np.nextafter(lo, -np.inf), 127.5]))
    assert flags.tolist() == [False, False, True, True]
