"""What ``zdt.suggest`` decides for every array of a store and ``zdt.convert`` carries out: a
plan. Printed, a plan is the report ``zdt suggest`` shows; as JSON (``Plan.dumps``) it is what
``zdt suggest --json`` writes and ``zdt convert --plan FILE`` applies as written (so a user can
review and edit it).
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from zdt.engine.arrays import fmt_bytes
from zdt.engine.bounds import Bound
from zdt.errors import InputError
from zdt.stores.nodes import array_type_name

PLAN_VERSION = 1


def _is_serializer(name: str) -> bool:
    """An array -> bytes codec, by zarr's registry (an unknown name is left to zarr to reject)."""
    from zarr.abc.codec import ArrayBytesCodec
    from zarr.registry import get_codec_class

    try:
        return issubclass(get_codec_class(name), ArrayBytesCodec)
    except (KeyError, ValueError):      # unknown codec: KeyError (zarr 3.1), ValueError (newer)
        return False


def split_codecs(codecs: list[dict]) -> tuple[list[dict], dict | None, list[dict]]:
    """A v3 codec list -> (array -> array codecs, serializer or None, compressors)."""
    for i, c in enumerate(codecs):
        if _is_serializer(c["name"]):
            return codecs[:i], c, codecs[i + 1:]
    return codecs, None, []


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
    # readers that decode no lossy filter: these array -> array codecs round the values in
    # memory (applied and undone) before they are written with `codecs`
    round_with: list | None = None
    # a CF-packed array: the bound on the stored numbers that keeps `bound` on the physical ones
    stored_bound: Bound | None = None

    @property
    def filters(self) -> list:
        """The array -> array codecs of the chain (before its serializer)."""
        return split_codecs(self.codecs or [])[0]

    @property
    def check(self) -> Bound | None:
        """The bound every written unit is checked against (in stored units)."""
        return self.stored_bound or self.bound

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
        if self.round_with:
            out["round_with"] = self.round_with
        if self.stored_bound is not None:
            out["stored_bound"] = self.stored_bound.to_json()
        return out

    @classmethod
    def from_json(cls, data: Any, where: str) -> Decision:
        if not isinstance(data, dict) or not isinstance(data.get("path"), str):
            raise InputError(f"{where}: each entry of 'arrays' needs a 'path'")
        path = data["path"]
        action = data.get("action")
        if action not in ("encode", "copy"):
            raise InputError(f"{where}: {path}: 'action' is 'encode' or 'copy', not {action!r}")
        unknown = set(data) - {"path", "action", "data_type", "shape", "bound", "codecs", "why",
                               "measured", "round_with", "stored_bound"}
        if unknown:
            raise InputError(f"{where}: {path}: unknown key(s) {', '.join(sorted(unknown))}")
        codecs = data.get("codecs")
        if action == "encode" and not (isinstance(codecs, list) and codecs
                                       and all(isinstance(c, dict) and "name" in c for c in codecs)):
            raise InputError(f"{where}: {path}: an 'encode' entry needs 'codecs', a list of "
                               'codecs like {"name": ..., "configuration": {...}}')
        bound = Bound.from_json(data["bound"]) if "bound" in data else None
        round_with = data.get("round_with")
        if round_with is not None and not (isinstance(round_with, list) and all(
                isinstance(c, dict) and "name" in c for c in round_with)):
            raise InputError(f"{where}: {path}: 'round_with' is a list of codecs like "
                             '{"name": ..., "configuration": {...}}')
        stored = Bound.from_json(data["stored_bound"]) if "stored_bound" in data else None
        return cls(path, action, data.get("why", ""), bound, codecs, data.get("data_type", ""),
                   tuple(data.get("shape", ())), data.get("measured", {}), round_with, stored)


    @property
    def unmet(self) -> bool:
        """An array that was to be encoded but no encoding kept its bound."""
        return self.action == "copy" and self.why.startswith("no encoding kept")

    def report(self, compressor: Any = "keep") -> list[str]:
        """The lines ``zdt suggest`` prints for this array."""
        size = _logical_bytes(self.data_type, self.shape)
        head = (f"{self.path}: {self.data_type} {tuple(self.shape)}"
                + (f", {fmt_bytes(size)}" if size is not None else ""))
        if self.action == "copy":
            return [f"{head}; copied: {self.why}"]
        m = self.measured
        if not m:                       # an entry written by hand (no measurement)
            return [f"{head}; {self.bound.describe() if self.bound else 'no bound'}",
                    f"  encode   {self.why}", f"  codecs   {_codecs_text(self.codecs)}"]
        now = m.get("bytes_now", 0)
        saved = (f" ({(now - m['bytes']) / now:.1%} fewer than the {fmt_bytes(now)} it holds now)"
                 if now else "")
        comp = ("" if compressor in ("keep", "auto")
                else f" with compressor {_compressor_text(compressor)}")
        lines = [
            f"{head}; {self.bound.describe()}",
            f"  encode   {self.why}",
            f"  codecs   {_codecs_text(self.codecs)}",
            f"  on disk  {fmt_bytes(m['bytes'])}{saved}{comp}",
        ]
        if "runner_up" in m:
            r = m["runner_up"]
            lines.append(f"  runner-up {r['label']}: {fmt_bytes(r['bytes'])}")
        lines.append(f"  error    {fmt_error(m['error'])} largest {self.bound.kind} error, measured "
                     f"on {m['on']} ({m['values_measured']:,} values); bound {self.bound.value:g}")
        return lines


def fmt_error(value: float) -> str:
    return "inf" if math.isinf(value) else f"{value:.3g}"


def _compressor_text(compressor: Any) -> str:
    return compressor if isinstance(compressor, str) else json.dumps(compressor)


def _logical_bytes(data_type: str, shape: tuple) -> int | None:
    """An array's bytes in memory from its data type's name, when that names a fixed size."""
    from zdt.formats import FORMATS

    try:
        itemsize = FORMATS[data_type].itemsize if data_type in FORMATS else np.dtype(data_type).itemsize
    except TypeError:
        return None
    if not itemsize:
        return None
    return int(np.prod(shape, dtype=np.int64)) * itemsize


@dataclass
class Plan:
    """Every array's decision. ``str(plan)`` is the report ``zdt suggest`` prints;
    ``plan.dumps()`` the JSON ``zdt suggest --json`` writes and ``zdt convert --plan`` reads;
    ``plan["/path"]`` one array's decision."""

    source: str
    compressor: Any                 # "auto", "keep", "none", "zstd:3", ... or zarr v3 codec JSON
    decisions: list[Decision]
    readers: str = "zarr-python"    # who reads the output (zdt.engine.readers)
    # suggest(..., on_damaged_chunk="fill"): the source's chunks that did not decode, read as
    # the fill value (zdt.engine.damage.Damage); not part of the plan's JSON
    damaged: list = field(default_factory=list, compare=False)

    def __str__(self) -> str:
        return "\n".join(line for d in self.decisions for line in d.report(self.compressor))

    def __iter__(self) -> Iterator[Decision]:
        return iter(self.decisions)

    def __getitem__(self, path: str) -> Decision:
        for d in self.decisions:
            if d.path == "/" + path.strip("/"):
                return d
        raise KeyError(path)

    @property
    def unmet(self) -> list[str]:
        """The arrays that were to be encoded but for which no encoding kept the bound."""
        return [d.path for d in self.decisions if d.unmet]

    def to_json(self) -> dict:
        from zdt import __version__

        return {"zdt_plan": PLAN_VERSION, "zdt": __version__, "source": self.source,
                "compressor": self.compressor, "readers": self.readers,
                "arrays": [d.to_json() for d in self.decisions]}

    def dumps(self) -> str:
        return json.dumps(self.to_json(), indent=1)

    @classmethod
    def load(cls, path: str | os.PathLike, where: str | None = None) -> Plan:
        """A plan from its JSON file (`where`: how messages name it; default "plan PATH")."""
        where = where or f"plan {os.fspath(path)}"
        try:
            with open(path) as f:
                data = json.load(f)
        except FileNotFoundError:
            raise InputError(f"{where}: no such file") from None
        except json.JSONDecodeError as exc:
            raise InputError(f"{where}: not JSON ({exc})") from None
        except OSError as exc:
            raise InputError(f"{where}: {exc.strerror}") from None
        return cls.from_json(data, where)

    @classmethod
    def from_json(cls, data: Any, where: str = "plan") -> Plan:
        if not isinstance(data, dict) or data.get("zdt_plan") != PLAN_VERSION:
            raise InputError(f"{where}: not a zdt plan (write one with zdt suggest --json)")
        arrays = data.get("arrays")
        if not isinstance(arrays, list):
            raise InputError(f"{where}: 'arrays' must be a list")
        decisions = [Decision.from_json(a, where) for a in arrays]
        paths = [d.path for d in decisions]
        dup = {p for p in paths if paths.count(p) > 1}
        if dup:
            raise InputError(f"{where}: {', '.join(sorted(dup))} listed twice")
        readers = data.get("readers", "zarr-python")
        if not isinstance(readers, str):
            raise InputError(f"{where}: 'readers' is a string like \"zarr-python,zarrs\"")
        return cls(data.get("source", ""), data.get("compressor", "keep"), decisions, readers)

    def check_against(self, arrays: list[Any], where: str) -> dict[str, Decision]:
        """The plan's decisions by path, checked against the store's arrays: one for each, of
        the same data type and shape (a plan made for another store, or the store changed)."""
        by_path = {d.path: d for d in self.decisions}
        for arr in arrays:
            path = "/" + arr.path
            d = by_path.get(path)
            if d is None:
                raise InputError(f"{where}: the plan has no entry for {path}")
            if d.data_type and d.data_type != array_type_name(arr):
                raise InputError(f"{where}: {path} is {array_type_name(arr)} in the store but "
                                   f"{d.data_type} in the plan")
            if d.shape and tuple(d.shape) != tuple(arr.shape):
                raise InputError(f"{where}: {path} has shape {tuple(arr.shape)} in the store but "
                                   f"{tuple(d.shape)} in the plan")
        extra = set(by_path) - {"/" + a.path for a in arrays}
        if extra:
            raise InputError(f"{where}: the store has no array {sorted(extra)[0]} the plan names")
        return by_path


def _codecs_text(codecs: Any) -> str:
    """The codec chain as JSON for a person to read: a zdt.predict reference mask's stream
    (base64 that may run to kilobytes) shown as its length; the plan file keeps it whole."""
    def short(codec: Any) -> Any:
        conf = codec.get("configuration") if isinstance(codec, dict) else None
        if not (isinstance(conf, dict) and isinstance(conf.get("mask"), dict)
                and isinstance(conf["mask"].get("stream"), str)):
            return codec
        mask = {**conf["mask"], "stream": f"<{len(conf['mask']['stream'])} base64 characters>"}
        return {**codec, "configuration": {**conf, "mask": mask}}
    return json.dumps([short(c) for c in codecs] if isinstance(codecs, list) else codecs)
