"""pytest plugin for zarr's own test suite with zdt installed (.ci/zarr-suite).

zdt's 16 data types join zarr's data-type examples (tests/test_dtype/conftest.py), so zarr's
data-type tests run against them too. One expectation cannot hold for them, and is marked
xfail(strict: a pass fails the run, so the list stays true):

* test_dtype_forms: it needs parse_dtype(zdtype.to_native_dtype().str) to name the data type
  again. These are ml_dtypes dtypes, whose .str is '<V1' / '<V2' (raw bytes to NumPy and zarr)
  or '<f1' (float8_e5m2, which NumPy cannot parse); zdt cannot change ml_dtypes' dtypes.

Every other test must pass as it does without zdt.

zarr's property tests draw 300 examples each by default (7 of the suite's 14 CPU minutes on 2
cores); CI runs them with 25 (HYPOTHESIS_PROFILE=zdt-ci, registered here before zarr's
conftest loads the profile the variable names): every property and every data type still
runs through zarr's machinery with zdt installed, in the time CI has.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile("zdt-ci", max_examples=25, derandomize=True, deadline=None,
                          suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow])

XFAIL = {
    "test_dtype_forms": "ml_dtypes' dtype.str ('<V1', '<V2', '<f1') does not name the data type",
}


def pytest_collection_modifyitems(config, items):
    for item in items:
        name = getattr(item, "originalname", item.name)
        params = getattr(getattr(item, "callspec", None), "params", {})
        zdt_type = any(type(v).__module__.startswith("zdt.") for v in params.values())
        if name in XFAIL and zdt_type:
            item.add_marker(pytest.mark.xfail(reason=XFAIL[name], strict=True))
