"""What ``zdt suggest`` decides for every array of a store and ``zdt convert`` carries out: a
plan, written as JSON by ``zdt suggest --json`` and applied as written by ``zdt convert
--plan FILE`` (so a user can review and edit it).

Which arrays are data and which stay exact:

* coordinate variables: 1-d arrays named like a dimension (zarr v3 ``dimension_names``, or the
  ``_ARRAY_DIMENSIONS`` attribute xarray writes in format 2), arrays named in a
  ``coordinates`` attribute, and CF bounds variables (named in a ``bounds`` attribute) are
  copied as they are, unless a ``--bound`` names them;
* arrays ``--exclude`` matches, or ``--include`` does not, are copied;
* under a relative bound integer arrays are copied (they are exact, and a relative error has
  no meaning for an index or a count);
* strings, booleans, the low-precision types, empty and 0-d arrays are copied.

Per array, ``--bound PATH=abs:E`` (or ``rel:R``) overrides the bound given for everything.
"""

from __future__ import annotations

import fnmatch
import json
from dataclasses import dataclass, field
from typing import Any


from zdt.command import store
from zdt.command.bounds import Bound
from zdt.command.errors import CommandError

PLAN_VERSION = 1


@dataclass
class Decision:
    """One array's line of the plan."""

    path: str
    action: str                     # "encode" or "copy"
    why: str = ""                   # for a copy: why; for an encoding: what it is
    bound: Bound | None = None
    codecs: list | None = None      # action "encode": the zarr v3 JSON codec chain
    data_type: str = ""
    shape: tuple = ()
    measured: dict = field(default_factory=dict)    # bytes, runner-up, error, what was measured

    def to_json(self) -> dict:
        out: dict[str, Any] = {"path": self.path, "action": self.action,
                               "data_type": self.data_type, "shape": list(self.shape)}
        if self.bound is not None:
            out["bound"] = self.bound.to_json()
        if self.codecs is not None:
            out["codecs"] = self.codecs
        if self.why:
            out["why"] = self.why
        if self.measured:
            out["measured"] = self.measured
        return out

    @classmethod
    def from_json(cls, data: Any, where: str) -> Decision:
        if not isinstance(data, dict) or not isinstance(data.get("path"), str):
            raise CommandError(f"{where}: each entry of 'arrays' needs a 'path'")
        path = data["path"]
        action = data.get("action")
        if action not in ("encode", "copy"):
            raise CommandError(f"{where}: {path}: 'action' is 'encode' or 'copy', not {action!r}")
        unknown = set(data) - {"path", "action", "data_type", "shape", "bound", "codecs", "why",
                               "measured"}
        if unknown:
            raise CommandError(f"{where}: {path}: unknown key(s) {', '.join(sorted(unknown))}")
        codecs = data.get("codecs")
        if action == "encode" and not (isinstance(codecs, list) and codecs
                                       and all(isinstance(c, dict) and "name" in c for c in codecs)):
            raise CommandError(f"{where}: {path}: an 'encode' entry needs 'codecs', a list of "
                               'codecs like {"name": ..., "configuration": {...}}')
        bound = Bound.from_json(data["bound"]) if "bound" in data else None
        return cls(path, action, data.get("why", ""), bound, codecs, data.get("data_type", ""),
                   tuple(data.get("shape", ())), data.get("measured", {}))


@dataclass
class Plan:
    source: str
    compressor: Any                 # "keep", "none", or zarr v3 codec JSON (a list)
    decisions: list[Decision]

    def to_json(self) -> dict:
        import zdt

        return {"zdt_plan": PLAN_VERSION, "zdt": zdt.__version__, "source": self.source,
                "compressor": self.compressor, "arrays": [d.to_json() for d in self.decisions]}

    def dumps(self) -> str:
        return json.dumps(self.to_json(), indent=1)

    @classmethod
    def load(cls, path: str) -> Plan:
        try:
            with open(path) as f:
                data = json.load(f)
        except FileNotFoundError:
            raise CommandError(f"--plan {path}: no such file") from None
        except json.JSONDecodeError as exc:
            raise CommandError(f"--plan {path}: not JSON ({exc})") from None
        except OSError as exc:
            raise CommandError(f"--plan {path}: {exc.strerror}") from None
        return cls.from_json(data, f"--plan {path}")

    @classmethod
    def from_json(cls, data: Any, where: str) -> Plan:
        if not isinstance(data, dict) or data.get("zdt_plan") != PLAN_VERSION:
            raise CommandError(f"{where}: not a zdt plan (write one with zdt suggest --json)")
        arrays = data.get("arrays")
        if not isinstance(arrays, list):
            raise CommandError(f"{where}: 'arrays' must be a list")
        decisions = [Decision.from_json(a, where) for a in arrays]
        paths = [d.path for d in decisions]
        dup = {p for p in paths if paths.count(p) > 1}
        if dup:
            raise CommandError(f"{where}: {', '.join(sorted(dup))} listed twice")
        return cls(data.get("source", ""), data.get("compressor", "keep"), decisions)

    def check_against(self, arrays: list[Any], where: str) -> dict[str, Decision]:
        """The plan's decisions by path, checked against the store's arrays: one for each, of
        the same data type and shape (a plan made for another store, or the store changed)."""
        by_path = {d.path: d for d in self.decisions}
        for arr in arrays:
            path = "/" + arr.path
            d = by_path.get(path)
            if d is None:
                raise CommandError(f"{where}: the plan has no entry for {path}")
            if d.data_type and d.data_type != store.data_type_name(arr):
                raise CommandError(f"{where}: {path} is {store.data_type_name(arr)} in the store but "
                                   f"{d.data_type} in the plan")
            if d.shape and tuple(d.shape) != tuple(arr.shape):
                raise CommandError(f"{where}: {path} has shape {tuple(arr.shape)} in the store but "
                                   f"{tuple(d.shape)} in the plan")
        extra = set(by_path) - {"/" + a.path for a in arrays}
        if extra:
            raise CommandError(f"{where}: the store has no array {sorted(extra)[0]} the plan names")
        return by_path


# --- which arrays are data -------------------------------------------------------------------

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
                raise CommandError(f"--bound {text!r}: write PATH=abs:E or PATH=rel:R "
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
