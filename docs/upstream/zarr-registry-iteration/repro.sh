#!/bin/sh
# zarr-python 3.4.2: with ANY installed package that declares a `zarr.data_type` entry point
# (./tinydtype: one trivial ZDType, registered only through its entry point, no import side
# effects), zarr's own tests cannot be collected:
#   tests/test_dtype/conftest.py:15  for wrapper_cls in data_type_registry.contents.values():
#   RuntimeError: dictionary changed size during iteration
# Usage: PYTHON=python3.12 sh repro.sh      (needs the network for pip)
set -e
here=$(cd "$(dirname "$0")" && pwd)
PYTHON=${PYTHON:-python3}
work=$(mktemp -d)
"$PYTHON" -m venv "$work/venv"
"$work/venv/bin/pip" install -q zarr==3.4.2 pytest==9.1.1 pytest-asyncio==1.4.0 \
    pytest-benchmark==5.3.0 hypothesis "$here/tinydtype"
"$work/venv/bin/pip" download -q --no-binary :all: --no-deps zarr==3.4.2 -d "$work"
tar xzf "$work"/zarr-3.4.2.tar.gz -C "$work"

echo "== 1. the loop of zarr's tests/test_dtype/conftest.py, alone"
"$work/venv/bin/python" "$here/repro.py" || true

echo "== 2. zarr's own tests against the installed zarr"
cd "$work/zarr-3.4.2" && "$work/venv/bin/python" -m pytest -p no:cacheprovider -q \
    tests/test_dtype_registry.py 2>&1 | tail -3 || true

echo "== 3. the same without the plugin: both pass"
"$work/venv/bin/pip" uninstall -q -y tinydtype
"$work/venv/bin/python" "$here/repro.py"
cd "$work/zarr-3.4.2" && "$work/venv/bin/python" -m pytest -p no:cacheprovider -q \
    tests/test_dtype_registry.py 2>&1 | tail -1
