"""Which arrays are data, and which bound each gets.

* coordinates and what describes them are copied as they are, unless a bound given for their
  path names them: 1-d arrays named like a dimension (zarr v3 ``dimension_names``, or the
  ``_ARRAY_DIMENSIONS`` attribute xarray writes in format 2); arrays named in a
  ``coordinates``, ``bounds``, ``climatology``, ``formula_terms`` (the terms of a
  parametric vertical coordinate) or ``cell_measures`` attribute; CF flag variables
  (``flag_values``, ``flag_masks``, ``flag_meanings``: codes, not quantities); arrays with an
  ``axis`` attribute, a latitude / longitude / time ``standard_name`` or latitude / longitude
  units; CF and UGRID indices (``compress``, ``sample_dimension``, ``instance_dimension``,
  a mesh's connectivities and node / face / edge coordinates);
* arrays ``exclude`` matches, or ``include`` does not, are copied;
* under a relative bound integer arrays are copied (they are exact, and a relative error has
  no meaning for an index or a count);
* strings, booleans, the low-precision types, empty and 0-d arrays are copied.

Per array, a bound given for its path (a glob) overrides the bound given for everything. A
path or glob given in ``bounds`` / ``include`` / ``exclude`` that matches no array is an error
naming the nearest paths (a typo would otherwise leave the array as it is, silently).

Messages name the Python API's parameters (``abs_error=``, ``bounds=``); the command shows
them as its options (zdt.errors.for_command).
"""

from __future__ import annotations

import difflib
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


# attributes whose value names other variables of the group that describe it (CF 1.11, UGRID
# 1.0): "name name" lists, or "term: name term: name" where every second word is a name
NAMING = (("coordinates", "named in the 'coordinates' of"), ("bounds", "the CF bounds of"),
          ("climatology", "the CF climatology bounds of"),
          ("formula_terms", "a term of the 'formula_terms' of"),
          ("cell_measures", "a cell measure of"),
          ("node_coordinates", "a mesh's node coordinates ("),
          ("face_coordinates", "a mesh's face coordinates ("),
          ("edge_coordinates", "a mesh's edge coordinates ("),
          ("face_node_connectivity", "a mesh's connectivity ("),
          ("edge_node_connectivity", "a mesh's connectivity ("),
          ("face_edge_connectivity", "a mesh's connectivity ("),
          ("face_face_connectivity", "a mesh's connectivity ("),
          ("edge_face_connectivity", "a mesh's connectivity ("),
          ("boundary_node_connectivity", "a mesh's connectivity ("))
# what an array's own attributes say about it: why it is kept exact, or None
OWN = (("flag_masks", "a CF flag variable (bit masks, not a quantity)"),
       ("flag_values", "a CF flag variable (codes with meanings, not a quantity)"),
       ("flag_meanings", "a CF flag variable (codes with meanings, not a quantity)"),
       ("compress", "a CF index of a compressed dimension"),
       ("sample_dimension", "a CF count of a ragged array"),
       ("instance_dimension", "a CF index of a ragged array"),
       ("axis", "a coordinate (it has an 'axis' attribute)"))
COORDINATE_NAMES = {"latitude", "longitude", "grid_latitude", "grid_longitude", "time",
                    "projection_x_coordinate", "projection_y_coordinate"}
COORDINATE_UNITS = {"degrees_north", "degree_north", "degrees_N", "degreesN", "degrees_east",
                    "degree_east", "degrees_E", "degreesE"}


def _names_in(key: str, value: str) -> list[str]:
    words = value.split()
    if key in ("formula_terms", "cell_measures"):     # "a: name b: name", "area: name"
        return [w for w in words if not w.endswith(":")]
    return words


def own_reason(a: Any) -> str | None:
    """Why an array's own attributes make it coordinate-like (kept exact), or None."""
    attrs = a.attrs
    for key, why in OWN:
        if key in attrs:
            return why
    if attrs.get("standard_name") in COORDINATE_NAMES:
        return f"a coordinate (standard_name {attrs['standard_name']!r})"
    if attrs.get("units") in COORDINATE_UNITS:
        return f"a coordinate (units {attrs['units']!r})"
    if isinstance(attrs.get("cf_role"), str) and attrs["cf_role"].endswith("_id"):
        return f"an identifier (cf_role {attrs['cf_role']!r})"
    return None


def coordinates(arrays: list[Any]) -> dict[str, str]:
    """path -> why it is kept exact, for the arrays that describe others or are codes: see the
    module's first point."""
    out: dict[str, str] = {}
    by_group: dict[str, list[Any]] = {}
    for a in arrays:
        parent = "/" + a.path.rpartition("/")[0]
        by_group.setdefault(parent, []).append(a)
    for group, members in by_group.items():
        dims = {d for a in members for d in dimension_names(a)}
        named: dict[str, str] = {}
        for a in members:
            for key, why in NAMING:
                value = a.attrs.get(key)
                if isinstance(value, str):
                    own = a.path.rpartition("/")[2]
                    for name in _names_in(key, value):
                        named.setdefault(name, f"{why}{own})" if why.endswith("(") else f"{why} {own}")
        for a in members:
            name = a.path.rpartition("/")[2]
            path = "/" + a.path
            if len(a.shape) == 1 and name in dims:
                out[path] = "a coordinate (1-d, named like a dimension)"
            elif name in named:
                what = named[name]
                out[path] = what if what.startswith("a mesh") else f"a coordinate ({what})"
            else:
                why = own_reason(a)
                if why is not None:
                    out[path] = why
    return out


@dataclass
class Selection:
    """--include / --exclude / --bound as given."""

    include: list[str] = field(default_factory=list)
    exclude: list[str] = field(default_factory=list)
    bounds: dict[str, Bound] = field(default_factory=dict)      # PATH or GLOB -> bound
    default: Bound | None = None
    force: bool = False     # a bound that looks like a mistake (in the wrong units) is used
    effort: str = "default"     # zdt.predict's `effort` in the encodings the engine measures

    @classmethod
    def parse(cls, include: list[str] | None, exclude: list[str] | None,
              bounds: list[str] | None, default: Bound | None, force: bool = False) -> Selection:
        parsed: dict[str, Bound] = {}
        for text in bounds or []:
            path, sep, spec = text.rpartition("=")
            if not sep or not path:
                raise UsageError(f"bounds= {text!r}: give PATH: 'abs:E' or 'rel:R' "
                                 "(e.g. {'/temperature': 'abs:0.05'})",
                                 command=f"--bound {text!r}: write PATH=abs:E or PATH=rel:R "
                                         "(e.g. --bound /temperature=abs:0.05)")
            parsed[_norm(path)] = Bound.parse(spec, what=f"bounds= {path!r}:")
        out = cls([_norm(p) for p in include or []], [_norm(p) for p in exclude or []],
                  parsed, default, force)
        for bound in [default, *parsed.values()]:
            if bound is not None:
                out.check_relative(bound)
        return out

    def check_relative(self, bound: Bound) -> None:
        """A relative bound of 1 or more lets a value become 0 or twice itself: a mistake,
        unless confirmed."""
        if bound.relative and bound.value >= 1 and not self.force:
            raise UsageError(f"rel_error={bound.value:g} lets every value become 0 or "
                             f"{1 + bound.value:g} times itself (relative bounds are fractions: "
                             f"rel_error=0.01 is 1%); give force=True to use it")

    def check_names(self, paths: Sequence[str], described: Mapping[str, str] = {}) -> None:
        """Every path or glob in bounds= / include= / exclude= matches some array of `paths`
        (else a UsageError naming it and the nearest paths: those containing its last name,
        then data arrays before the ones in `described` (coordinates), each by similarity)."""
        for param, patterns in (("bounds", list(self.bounds)), ("include", self.include),
                                ("exclude", self.exclude)):
            for pattern in patterns:
                if any(fnmatch.fnmatchcase(p, pattern) for p in paths):
                    continue
                tail = pattern.rpartition("/")[2].lower().strip("*?[]")

                def rank(p: str) -> tuple:
                    name = p.rpartition("/")[2].lower()
                    return (bool(tail) and tail in name, p not in described,
                            difflib.SequenceMatcher(None, tail, name).ratio())
                near = sorted(paths, key=rank, reverse=True)[:3]
                raise UsageError(f"{param}= names {pattern}, which matches no array "
                                 f"(nearest: {', '.join(near)})")

    def bound_for(self, path: str) -> tuple[Bound | None, bool]:
        """(the bound for an array, whether bounds= named it)."""
        for pattern, bound in self.bounds.items():
            if fnmatch.fnmatchcase(path, pattern):
                return bound, True
        return self.default, False

    def excluded(self, path: str) -> str | None:
        if any(fnmatch.fnmatchcase(path, p) for p in self.exclude):
            return "excluded (an exclude glob matches it)"
        if self.include and not any(fnmatch.fnmatchcase(path, p) for p in self.include):
            return "not included (no include glob matches it)"
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
        return f"{coords[path]}: kept exact (a bound given for its path encodes it)"
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
                 *, required: bool = True, force: bool = False,
                 effort: str = "default") -> Selection:
    """The arrays chosen and the bound of each, from the arguments the three functions share.

    `bounds` maps a path or glob to a bound (``"abs:0.05"``, ``"rel:1e-3"``, ``{"abs": 0.05}``,
    a `Bound`, or a number: an absolute bound in the array's units); the command's ``--bound
    PATH=abs:E`` strings are taken too. `effort`: zdt.predict's, in every encoding with it."""
    if abs_error is not None and rel_error is not None:
        raise UsageError("give at most one of abs_error= and rel_error=")
    from zdt.codecs.predict_config import EFFORTS

    if not isinstance(effort, str) or effort not in EFFORTS:
        raise UsageError(f"effort= must be one of {', '.join(EFFORTS)}, not {effort!r}")
    default = None
    for kind, value in (("abs", abs_error), ("rel", rel_error)):
        if value is not None:
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise UsageError(f"{kind}_error= must be a positive finite number, not {value!r}")
            default = Bound(kind, float(value))
    if isinstance(bounds, Mapping):
        texts = []
        for path, spec in bounds.items():
            if isinstance(spec, Bound):
                bound = spec
            elif isinstance(spec, Mapping):
                bound = Bound.from_json(spec)
            elif isinstance(spec, (int, float)) and not isinstance(spec, bool):
                bound = Bound("abs", float(spec))       # a number: absolute, in the data's units
            else:
                bound = Bound.parse(str(spec), f"bounds= {path!r}:")
            texts.append(f"{path}={bound}")
        bounds = texts
    as_list = (lambda v: [v] if isinstance(v, str) else list(v or []))
    selection = Selection.parse(as_list(include), as_list(exclude), as_list(bounds), default,
                                bool(force))
    selection.effort = effort
    if required and default is None and not selection.bounds:
        raise UsageError("give a bound: abs_error=E, rel_error=R or bounds={PATH: 'abs:E'}",
                         command="give a bound: --abs-error E, --rel-error R or --bound PATH=abs:E")
    return selection


def check_sample(sample: int | None) -> None:
    if sample is not None and (isinstance(sample, bool) or not isinstance(sample, int) or sample < 1):
        raise UsageError(f"sample= must be at least 1, not {sample!r}")
