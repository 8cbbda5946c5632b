"""zdt's casts on every path against the exact reference (tests/reference.py): the kernel
tests' shared check (test_cast_reference, test_lowprec_cast). A failure must be the reference's
first failing element, with the same reason."""

from __future__ import annotations

import numpy as np
import pytest

import reference
from zdt import kernels
from zdt.codecs.cast import CastPlan
from zdt.errors import CastError
from zdt.formats import FORMATS

# every build of the fast loops this machine runs (baseline, avx2, avx512), then the exact path
PATHS = [(build, True) for build in kernels.available()] + [(kernels.build(), False)]


def check_against_reference(arr, source, target, rounding, oor, pairs, direction="encode"):
    plan = CastPlan(FORMATS[source], FORMATS[target], rounding=rounding, out_of_range=oor,
                    scalar_map=pairs, direction=direction)
    expected = reference.cast_array(arr, np.dtype(target), rounding, oor,
                                    reference.compile_map(pairs, np.dtype(source), np.dtype(target)))
    for build, fast in PATHS:
        if isinstance(expected, tuple):
            flat_index, reason = expected
            with pytest.raises(CastError) as info, kernels.use(build):
                plan.cast(arr, fast=fast)
            nd = np.unravel_index(flat_index, arr.shape) if arr.ndim else ()
            assert info.value.index == tuple(int(i) for i in nd), (build, fast, info.value)
            assert info.value.reason == reason, (build, fast, info.value)
            assert info.value.source == source and info.value.target == target
        else:
            with kernels.use(build):
                got = plan.cast(arr, fast=fast)
            assert got.dtype == np.dtype(target) and got.shape == arr.shape
            same = reference.same_bits_or_nan(got, expected)
            if not same.all():
                i = np.argwhere(~same)[0] if arr.ndim else ()
                raise AssertionError(
                    f"build={build} fast={fast} {source}->{target} {rounding} {oor} map={pairs}: element {tuple(i)} "
                    f"= {arr[tuple(i)]!r} gave {got[tuple(i)]!r}, reference {expected[tuple(i)]!r}"
                )
