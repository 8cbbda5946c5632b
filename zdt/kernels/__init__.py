"""Which build of the element-wise kernels (cast_value, scale_offset, bitround) runs.

Those kernels (zdt/kernels/_cast.pxi, _scale_offset.pxi, _bitround.pxi) are compiled once per
instruction set (see setup.py): "baseline" everywhere (x86-64-v2 on x86-64, the baseline NumPy requires), and on
x86-64 also "avx2" (x86-64-v3) and "avx512" (x86-64-v4). The best build the CPU runs is used;
``ZDT_KERNELS=baseline|avx2|avx512`` in the environment caps it (for comparison, or a
misbehaving CPU), and `use` switches it in-process (the tests run every build the machine runs).
Every build reads the same spec objects (zdt.kernels._types), so a plan built once runs on any of them.
The other compiled modules have one build each: _types, _steps (running the per-block steps),
_packbits, _vlen (strings), _predict_core (zdt.predict: the C library libzdtpredict compiled in,
and its Python face).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from importlib import import_module
from types import ModuleType

from zdt.kernels import _baseline

BUILDS = ("baseline", "avx2", "avx512")     # weakest first


def available() -> list[str]:
    """Builds that are installed and that this CPU runs, weakest first."""
    found = []
    for name in _baseline.supported_builds():
        try:
            import_module(f"zdt.kernels._{name}")
        except ImportError:
            continue
        found.append(name)
    return found


def _initial() -> str:
    builds = available()
    cap = os.environ.get("ZDT_KERNELS")
    if cap:
        if cap not in BUILDS:
            raise ImportError(f"ZDT_KERNELS={cap!r} is not one of {', '.join(BUILDS)}")
        builds = [b for b in builds if BUILDS.index(b) <= BUILDS.index(cap)]
    return builds[-1]


_build = _initial()
_module: ModuleType = import_module(f"zdt.kernels._{_build}")


def build() -> str:
    """The name of the build in use."""
    return _build


def module() -> ModuleType:
    return _module


@contextmanager
def use(name: str) -> Iterator[ModuleType]:
    """Run the kernels of build `name` inside the block (not thread-safe: tests use it)."""
    global _build, _module
    if name not in available():
        raise ValueError(f"kernel build {name!r} is not available here ({', '.join(available())})")
    old = _build, _module
    _build, _module = name, import_module(f"zdt.kernels._{name}")
    try:
        yield _module
    finally:
        _build, _module = old


BLOCK_SIZE: int = _baseline.BLOCK_SIZE


from zdt.kernels._steps import BlockStep, run_steps  # noqa: E402  (compiled once, for every build)

__all__ = ["BLOCK_SIZE", "BlockStep", "available", "build", "module", "run_steps", "use"]
