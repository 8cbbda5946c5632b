"""What an element-wise codec does to a chunk, as one step per direction.

Every zdt array -> array codec is element-wise: it gives, for the data type it will see, an
encode and a decode `Stage` (None where the direction changes nothing). A stage pairs the
kernel step (zdt.kernels: a block function of the current kernel build, see
zdt/kernels/_steps.pxd) with what is needed to explain a failing element: its source format
(to read the value the step was given) and the codec's own error for it. The same stage runs
one codec over an array (`apply`) and, chained with its neighbours, a whole fused chain in the
pipeline (`run`): both raise the failing codec's own error, naming the element's index and
its value at that stage.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from zdt import kernels
from zdt.codecs import layout
from zdt.formats import NumberFormat

# (nd index, value at this stage, kernel status, how the element is named) -> the exception
Explain = Callable[[tuple[int, ...], np.generic, int, str], Exception]


@dataclass(frozen=True, eq=False)
class Stage:
    """One direction of one element-wise codec on one data type."""

    source: np.dtype                      # what the step reads (native byte order)
    target: np.dtype                      # what it writes
    make: Callable[[], kernels.BlockStep]  # the step of the current kernel build
    explain: Explain
    codec: str                            # the codec's name, for messages
    in_place: bool = False                # the step may write over its own input
    fmt: NumberFormat | None = None       # the source's number format (how to read a value)
    _steps: dict = field(default_factory=dict, repr=False)

    def step(self) -> kernels.BlockStep:
        """The kernel step of the build in use (made once per build)."""
        build = kernels.build()
        step = self._steps.get(build)
        if step is None:
            step = self._steps[build] = self.make()
        return step

    def value(self, raw: bytes) -> np.generic:
        """An element of the source from its bytes (high bits a sub-byte format does not use
        are ignored)."""
        if self.fmt is not None:
            return self.fmt.value_of(int.from_bytes(raw, sys.byteorder))
        return np.frombuffer(raw, dtype=self.source)[0]


class Stages(NamedTuple):
    """A codec's two directions on one data type (None: nothing to do in that direction)."""

    encode: Stage | None
    decode: Stage | None


def run(stages: Sequence[Stage], src: np.ndarray, dst: np.ndarray, *, where: str,
        nd_index: Callable[[int], tuple[int, ...]] | None = None) -> None:
    """src -> dst through every stage, block by block (src and dst: native order, aligned,
    any strides, the same shape, not overlapping). A failing element raises its stage's error;
    `nd_index` turns the C-order flat index in src into the index the error should name
    (default: the index in src)."""
    index, k, status, raw = kernels.run_steps([s.step() for s in stages], src, dst)
    if index >= 0:
        stage = stages[k]
        nd = nd_index(index) if nd_index else _unravel(index, src.shape)
        raise stage.explain(nd, stage.value(raw), status, where)


def apply(stage: Stage, arr: np.ndarray, *, out: np.ndarray | None = None,
          where: str = "element", step: kernels.BlockStep | None = None) -> np.ndarray:
    """One stage over any NumPy array (any layout and byte order; shape and element order
    kept, the result native-order, C- or F-ordered like the input). A failing element is the
    first in the order the array is stored; `out`, if given, receives the result (its contents
    are unspecified after an error). `step` replaces the stage's own kernel step (tests run the
    exact path with it)."""
    walk = layout.prepare(arr, stage.source, stage.target, out, stage.codec,
                          in_place_ok=stage.in_place)
    index, _, status, raw = kernels.run_steps([step or stage.step()], walk.flat_in, walk.flat_out)
    if index >= 0:
        raise stage.explain(walk.nd_index(index), walk.value_at(index), status, where)
    return walk.finish()


def _unravel(flat: int, shape: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(int(i) for i in np.unravel_index(flat, shape)) if shape else ()
