"""Which arrays are data, and which bound each gets.

* coordinate variables: 1-d arrays named like a dimension (zarr v3 ``dimension_names``, or the
  ``_ARRAY_DIMENSIONS`` attribute xarray writes in format 2), arrays named in a
  ``coordinates`` attribute, and CF bounds variables (named in a ``bounds`` attribute) are
  copied as they are, unless a bound given for their path names them;
* arrays ``exclude`` matches, or ``include`` does not, are copied;
* under a relative bound integer arrays are copied (they are exact, and a relative error has
  no meaning for an index or a count);
* strings, booleans, the low-precision types, empty and 0-d arrays are copied.

Per array, a bound given for its path (a glob) overrides the bound given for everything.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from zdt.engine.arrays import is_numeric
from zdt.engine.bounds import Bound
from zdt.engine.packing import Packing
from zdt.errors import UsageError
from zdt.formats import LOW_PRECISION
from zdt.stores.nodes import array_type_name


def dimension_names(arr: Any) -> tuple[str, ...]:
    meta = arr.metadata
    names = getattr(meta, "dimension_names", None)
    if names:
        return tuple(n for n in names if n)
    dims = arr.attrs.get("_ARRAY_DIMENSIONS")
    return tuple(dims) if isinstance(dims, list) else ()


def coordinates(arrays: list[Any]) -> dict[str, str]:
    """path -> why it is a coordinate, for the arrays that describe other arrays' axes."""
    out: dict[str, str] = {}
    by_group: dict[str, list[Any]] = {}
    for a in arrays:
        parent = "/" + a.path.rpartition("/")[0]
        by_group.setdefault(parent, []).append(a)
    for group, members in by_group.items():
        dims = {d for a in members for d in dimension_names(a)}
        named: dict[str, str] = {}
        for a in members:
            for key, why in (("coordinates", "named in the 'coordinates' of"),
                             ("bounds", "the CF bounds of"),
                             ("climatology", "the CF climatology bounds of")):
                value = a.attrs.get(key)
                if isinstance(value, str):
                    for name in value.split():
                        named.setdefault(name, f"{why} {a.path.rpartition('/')[2]}")
        for a in members:
            name = a.path.rpartition("/")[2]
            path = "/" + a.path
            if len(a.shape) == 1 and name in dims:
                out[path] = "a coordinate (1-d, named like a dimension)"
            elif name in named:
                out[path] = f"a coordinate ({named[name]})"
    return out


@dataclass
class Selection:
    """--include / --exclude / --bound as given."""

    include: list[str] = field(default_factory=list)
    exclude: list[str] = field(default_factory=list)
    bounds: dict[str, Bound] = field(default_factory=dict)      # PATH or GLOB -> bound
    default: Bound | None = None

    @classmethod
    def parse(cls, include: list[str] | None, exclude: list[str] | None,
              bounds: list[str] | None, default: Bound | None) -> Selection:
        parsed: dict[str, Bound] = {}
        for text in bounds or []:
            path, sep, spec = text.rpartition("=")
            if not sep or not path:
                raise UsageError(f"--bound {text!r}: write PATH=abs:E or PATH=rel:R "
                                   "(e.g. --bound /temperature=abs:0.05)")
            parsed[_norm(path)] = Bound.parse(spec, what=f"--bound {text!r}:")
        return cls([_norm(p) for p in include or []], [_norm(p) for p in exclude or []],
                   parsed, default)

    def bound_for(self, path: str) -> tuple[Bound | None, bool]:
        """(the bound for an array, whether --bound named it)."""
        for pattern, bound in self.bounds.items():
            if fnmatch.fnmatchcase(path, pattern):
                return bound, True
        return self.default, False

    def excluded(self, path: str) -> str | None:
        if any(fnmatch.fnmatchcase(path, p) for p in self.exclude):
            return "excluded (--exclude)"
        if self.include and not any(fnmatch.fnmatchcase(path, p) for p in self.include):
            return "not included (--include)"
        return None


def _norm(path: str) -> str:
    return "/" + path.strip().strip("/")


def fixed_reason(arr: Any, bound: Bound | None, named: bool, coords: dict[str, str],
                 selection: Selection) -> str | None:
    """Why the array is copied as it is without looking at its values, or None."""
    path = "/" + arr.path
    excluded = selection.excluded(path)
    if excluded:
        return excluded
    if path in coords and not named:
        return f"{coords[path]}: kept exact (give --bound {path}=... to encode it)"
    if not is_numeric(arr):
        return f"{array_type_name(arr)} data: kept as it is"
    if array_type_name(arr) in LOW_PRECISION:
        return f"already {array_type_name(arr)}: kept as it is"
    if bound is None:
        return "no bound given for it"
    if arr.size == 0:
        return "no elements: nothing to gain"
    if arr.ndim == 0:
        return "a 0-d array (one value): nothing to gain"
    dtype = np.dtype(arr.dtype)
    if bound.relative and dtype.kind in "iu" and Packing.of(arr) is None:
        return "integers under a relative bound: kept exact"
    if dtype.kind == "f" and dtype.itemsize < 4:
        return "float16 data: kept as it is"
    return None


def selection_of(abs_error: float | None, rel_error: float | None,
                 bounds: Mapping[str, Any] | Sequence[str] | None,
                 include: Sequence[str] | str | None, exclude: Sequence[str] | str | None,
                 *, required: bool = True) -> Selection:
    """The arrays chosen and the bound of each, from the arguments the three functions share.

    `bounds` maps a path or glob to a bound (``"abs:0.05"``, ``"rel:1e-3"``, ``{"abs": 0.05}``
    or a `Bound`); the command's ``--bound PATH=abs:E`` strings are taken too."""
    if abs_error is not None and rel_error is not None:
        raise UsageError("give at most one of abs_error (--abs-error) and rel_error (--rel-error)")
    default = None
    for kind, value in (("abs", abs_error), ("rel", rel_error)):
        if value is not None:
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise UsageError(f"{'--abs-error' if kind == 'abs' else '--rel-error'} must be a "
                                 f"positive finite number, not {value!r}")
            default = Bound(kind, float(value))
    if isinstance(bounds, Mapping):
        texts = []
        for path, spec in bounds.items():
            bound = spec if isinstance(spec, Bound) else (
                Bound.from_json(spec) if isinstance(spec, Mapping) else Bound.parse(str(spec), f"bound for {path!r}:"))
            texts.append(f"{path}={bound}")
        bounds = texts
    as_list = (lambda v: [v] if isinstance(v, str) else list(v or []))
    selection = Selection.parse(as_list(include), as_list(exclude), as_list(bounds), default)
    if required and default is None and not selection.bounds:
        raise UsageError("give a bound: abs_error=E (--abs-error E), rel_error=R (--rel-error R), "
                         "or bounds={PATH: 'abs:E'} (--bound PATH=abs:E)")
    return selection


def check_sample(sample: int | None) -> None:
    if sample is not None and (isinstance(sample, bool) or not isinstance(sample, int) or sample < 1):
        raise UsageError(f"sample (--sample) must be at least 1, not {sample!r}")
