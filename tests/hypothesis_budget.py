"""How many examples a property test draws: `@settings(max_examples=examples(n))`.

The README's test command draws n (the "ci" profile). CI's legs that run a test file again after
the README's leg has run it (Python 3.12 against the installed wheel; the sanitizer build) set
ZDT_HYPOTHESIS_PROFILE=repeat and draw a quarter of n, at least 10: what those legs look for (a
Python, zarr or ecosystem version that changes a result; a memory error the sanitizers see) shows
on any input, and the sanitizer leg's coverage-guided fuzzing feeds the same decoders thousands
of inputs a second. "thorough" draws at least 1000 for every test."""

from __future__ import annotations

import os

PROFILE = os.environ.get("ZDT_HYPOTHESIS_PROFILE", "ci")


def examples(n: int) -> int:
    if PROFILE == "repeat":
        return max(10, n // 4)
    if PROFILE == "thorough":
        return max(n, 1000)
    return n
