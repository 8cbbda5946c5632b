"""Hypothesis profiles: "ci" (default) keeps the suite within CI's budget; run
`ZDT_HYPOTHESIS_PROFILE=thorough pytest` for a long search."""

import os

from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci", max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow],
    print_blob=True,
)
settings.register_profile(
    "thorough", max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow],
    print_blob=True,
)
settings.load_profile(os.environ.get("ZDT_HYPOTHESIS_PROFILE", "ci"))
