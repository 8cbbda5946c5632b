"""On PYTHONPATH while zarr's own tests run (.ci/zarr-suite): load zarr's pending
`zarr.data_type` entry points when the interpreter starts, before zarr's
tests/test_dtype/conftest.py iterates data_type_registry.contents (which would grow under it:
docs/upstream/zarr-registry-iteration/). Inherited by xdist workers and by multiprocessing
spawn / forkserver children through the environment."""

try:
    from zarr.core.dtype import data_type_registry

    data_type_registry._lazy_load()
except ImportError:
    pass
