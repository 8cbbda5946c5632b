"""zdt.predict's encoder keeps each thread's large arrays for its next encode (the C library's
zdt_predict_workspace, one for each thread): the chunks must not depend on what the thread
encoded before, nor on other threads encoding at the same time.

The reference for each chunk is an encode in a thread of its own, started for it: its
workspace is new and empty, so it allocates every array afresh, as an encode without a
workspace does (the C tests compare zdt_predict_encode_with against zdt_predict_encode)."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from zdt.codecs.predict import PredictConfig


def fields() -> list[tuple[dict, np.ndarray, float | None]]:
    """Configurations and arrays of different sizes, types and kinds, in an order where each
    reuses arrays a larger or different one left: absolute, relative, masked, integers."""
    rng = np.random.default_rng(58)
    i, j = np.indices((300, 400))
    smooth = np.sin(i / 37.0) * np.cos(j / 23.0) * 100 + rng.normal(0, 0.3, i.shape)
    masked = smooth.copy()
    masked[(i - 150) ** 2 + (j - 100) ** 2 < 60 ** 2] = -9999.0
    positive = np.exp2(smooth / 20)
    positive.flat[::97] = 0.0
    return [
        ({"abs_error": 0.05}, smooth, None),
        ({"abs_error": 0.5, "effort": "fast"}, smooth[:50, :70].copy(), None),
        ({"rel_error": 1e-3}, positive, None),
        ({"abs_error": 0.01}, smooth.astype(np.float32), None),
        ({"abs_error": 0.05}, masked, -9999.0),
        ({"rel_error": 1e-2, "effort": "fast"}, positive[:120].astype(np.float32), None),
        ({"abs_error": 3}, np.round(smooth * 10).astype(np.int32), None),
        ({"abs_error": 0.001, "predictor": "lorenzo"}, smooth[:, :13].copy(), None),
        ({"abs_error": 1e-4, "effort": "max"}, smooth[:64, :64].copy(), None),
        ({"abs_error": 0.05}, smooth, None),
    ]


def encode(config: dict, x: np.ndarray, fill: float | None) -> bytes:
    return PredictConfig.create(**config).encode(x, fill)


def in_a_new_thread(config: dict, x: np.ndarray, fill: float | None) -> bytes:
    got: list[bytes] = []
    t = threading.Thread(target=lambda: got.append(encode(config, x, fill)))
    t.start()
    t.join()
    return got[0]


@pytest.fixture(scope="module")
def fresh() -> list[bytes]:
    return [in_a_new_thread(c, x, f) for c, x, f in fields()]


def test_a_thread_s_chunks_do_not_depend_on_what_it_encoded_before(fresh):
    """One thread encodes every field twice over, in order, then in reverse order: each chunk
    is the fresh thread's, byte for byte."""
    cases = fields()
    for order in (range(len(cases)), range(len(cases)), reversed(range(len(cases)))):
        for k in order:
            config, x, fill = cases[k]
            assert encode(config, x, fill) == fresh[k], (k, config)


def test_threads_encoding_at_once_write_the_same_chunks(fresh):
    """Four threads encode the fields over and over at the same time (the encoder runs
    without the GIL): every chunk is the fresh thread's."""
    cases = fields()
    work = [k for _ in range(6) for k in range(len(cases))]
    with ThreadPoolExecutor(4) as pool:
        got = list(pool.map(lambda k: (k, encode(*cases[k])), work))
    for k, chunk in got:
        assert chunk == fresh[k], (k, cases[k][0])


SCRIPT = """
import hashlib, sys
sys.path.insert(0, {here!r})
from test_predict_workspace import encode, fields
from zdt.kernels import _predict_core
print(_predict_core.WORKSPACE_LIMIT)
for config, x, fill in fields():
    print(hashlib.sha256(encode(config, x, fill)).hexdigest())
"""


def run(limit: str, where) -> subprocess.CompletedProcess:
    """The script under ZDT_PREDICT_WORKSPACE_MIB=limit, in the directory `where` (not the
    repository's root, whose source tree would hide the installed zdt from `python -c`)."""
    env = dict(os.environ, ZDT_PREDICT_WORKSPACE_MIB=limit)
    return subprocess.run([sys.executable, "-c", SCRIPT.format(here=os.path.dirname(__file__))],
                          env=env, capture_output=True, text=True, timeout=300, cwd=where)


@pytest.mark.parametrize("limit, kept", [("0", 0), ("1", 1 << 20), ("", 64 << 20)])
def test_the_environment_sets_what_a_thread_keeps_and_the_chunks_stay(fresh, limit, kept,
                                                                      tmp_path):
    """ZDT_PREDICT_WORKSPACE_MIB: 0 keeps nothing, 1 keeps at most a MiB (most arrays here
    are larger: freed, made again), unset or empty 64 MiB; the chunks are the fresh thread's
    whatever it keeps."""
    done = run(limit, tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.split()
    assert int(lines[0]) == kept
    assert lines[1:] == [hashlib.sha256(chunk).hexdigest() for chunk in fresh]


@pytest.mark.parametrize("limit", ["abc", "-1", "1.5"])
def test_a_bad_workspace_limit_is_refused_naming_the_variable(limit, tmp_path):
    done = run(limit, tmp_path)
    assert done.returncode != 0
    assert f"ZDT_PREDICT_WORKSPACE_MIB={limit!r} is not a whole number of MiB" in done.stderr
