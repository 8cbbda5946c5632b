"""Type stub of zdt/kernels/_steps.pyx (the per-block step interface, see _steps.pxd)."""

from collections.abc import Sequence
from typing import Any

from typing_extensions import disjoint_base

import numpy as np

@disjoint_base
class BlockStep:
    @property
    def spec(self) -> Any: ...
    @property
    def build(self) -> str: ...
    @property
    def in_itemsize(self) -> int: ...
    @property
    def out_itemsize(self) -> int: ...
    @property
    def in_place(self) -> bool: ...
    @property
    def streams(self) -> bool: ...

def run_steps(
    steps: Sequence[BlockStep], src: np.ndarray, dst: np.ndarray, stream: bool | None = None
) -> tuple[int, int, int, bytes]: ...
