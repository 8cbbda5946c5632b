"""Progress bars: the command's, and the Python API's ``progress=`` (bars on a terminal by
default, as the command shows them; ``False`` none; a callable of one's own)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from zdt.errors import UsageError

Progress = Callable[[str, int], Callable[[int], None]]     # (label, total) -> advance(n)


def no_progress(label: str, total: int) -> Callable[[int], None]:
    return lambda n: None


@contextmanager
def progress_bars(quiet: bool, always: bool = False) -> Iterator[Progress]:
    """`make(label, total)` -> advance(n): one bar per pass (shown at once on a terminal,
    never when `quiet` or when stderr is not a terminal, always with `always`). Without tqdm
    installed (it comes with zdt[zarr]), no bars: a nicety, never a reason to fail."""
    try:
        from tqdm import tqdm
    except ImportError:
        yield no_progress
        return

    bars: list[Any] = []

    def make(label: str, total: int) -> Callable[[int], None]:
        for bar in bars:
            bar.close()
        bars.clear()
        bar = tqdm(total=total, desc=label, unit="unit",
                   disable=True if quiet else (False if always else None),
                   leave=False, mininterval=0.2)
        bars.append(bar)
        return bar.update

    try:
        yield make
    finally:
        for bar in bars:
            bar.close()


@contextmanager
def progress_for(progress: Any) -> Iterator[Progress]:
    """The API's ``progress=``: None (the default) bars on a terminal, True bars always,
    False none, or a callable ``progress(label, total)`` -> ``advance(n)``."""
    if progress is False:
        yield no_progress
    elif progress is None or progress is True:
        with progress_bars(quiet=False, always=progress is True) as make:
            yield make
    elif callable(progress):
        yield progress
    else:
        raise UsageError(f"progress={progress!r}: give None (bars on a terminal, the default), "
                         "True, False, or a callable (label, total) -> advance(n)")
