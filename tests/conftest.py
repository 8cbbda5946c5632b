"""Hypothesis profiles: "ci" (default) keeps the suite within CI's budget; run
`ZDT_HYPOTHESIS_PROFILE=thorough pytest` for a long search; "repeat" is for CI's legs that run
a test file the README's leg has run (tests/hypothesis_budget.py: a quarter of the examples)."""

import zdt
from hypothesis import HealthCheck, settings
from hypothesis_budget import PROFILE

settings.register_profile(
    "ci", max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow],
    print_blob=True,
)
settings.register_profile(
    "thorough", max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow],
    print_blob=True,
)
settings.register_profile(
    "repeat", max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow],
    print_blob=True,
)
settings.load_profile(PROFILE)

# What a zarr 3.1 user does before using zdt's data types (that zarr never loads the
# zarr.data_type entry points); on newer zarr the entry points register the same classes.
# tests/pipeline/test_zarr_citizen.py checks, in fresh interpreters, that nothing else is needed and
# that importing zdt changes nothing.
zdt.register()


def _has_zarr_builtin_cast_value() -> bool:
    try:
        import cast_value_rs  # noqa: F401
        from zarr.codecs.cast_value import CastValue  # noqa: F401
    except ImportError:
        return False
    return True


# The cross-implementation tests need zarr's own cast_value (zarr >= 3.2 with cast-value-rs,
# Python >= 3.12); .ci/run runs them in its Python 3.12 pass. Elsewhere they are not collected
# (rather than reported as 100+ skips) and the header says so.
collect_ignore = [] if _has_zarr_builtin_cast_value() else ["codecs/test_cross_zarr_builtin.py"]


def pytest_report_header(config):
    import zarr

    state = "run" if not collect_ignore else "not collected (no zarr built-in cast_value here)"
    return f"zarr {zarr.__version__}; cross-implementation tests: {state}"
