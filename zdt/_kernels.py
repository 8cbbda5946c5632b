"""Which build of the cast kernels runs.

The kernels (zdt/_cast.pxi, zdt/_scale_offset.pxi) are compiled three times on x86-64: for x86-64-v2 (the
baseline NumPy requires), v3 (AVX2) and v4 (AVX-512). The best level the CPU supports is used;
``ZDT_KERNEL_LEVEL=2|3|4`` in the environment caps it (for comparison or a misbehaving CPU),
and `use` switches it in-process (tests run every level the machine has).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from importlib import import_module
from types import ModuleType

from zdt import _kernels_v2

_MODULES = {2: "zdt._kernels_v2", 3: "zdt._kernels_v3", 4: "zdt._kernels_v4"}


def available() -> list[int]:
    """Levels that are built and that this CPU runs."""
    levels = []
    for level, name in _MODULES.items():
        if level > _kernels_v2.cpu_level():
            continue
        try:
            import_module(name)
        except ImportError:
            continue
        levels.append(level)
    return levels


def _initial() -> int:
    levels = available()
    cap = os.environ.get("ZDT_KERNEL_LEVEL")
    if cap:
        levels = [lv for lv in levels if lv <= int(cap)] or [2]
    return max(levels)


_level = _initial()
_module: ModuleType = import_module(_MODULES[_level])


def level() -> int:
    return _level


def module() -> ModuleType:
    return _module


@contextmanager
def use(new_level: int) -> Iterator[ModuleType]:
    """Run the kernels of `new_level` inside the block."""
    global _level, _module
    if new_level not in available():
        raise ValueError(f"kernel level {new_level} is not available here ({available()})")
    old = _level, _module
    _level, _module = new_level, import_module(_MODULES[new_level])
    try:
        yield _module
    finally:
        _level, _module = old


def cast_flat(*args: object) -> tuple[int, int]:
    return _module.cast_flat(*args)


BLOCK_SIZE = _kernels_v2.BLOCK_SIZE
