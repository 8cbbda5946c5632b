"""zdt.engine.predict_memo: the chunks convert's check encoded, taken by the write that
follows: only inside a session, only for the same configuration, type, shape, fill value and
values bit for bit, once, and nothing left when the session ends."""

from __future__ import annotations

import threading

import numpy as np

from zdt.engine import predict_memo
from zdt.codecs.predict import PredictConfig

CONFIG = PredictConfig.create(abs_error=0.01)


def chunk(seed: int = 0, shape=(40, 50)) -> np.ndarray:
    return np.random.default_rng(seed).normal(size=shape).cumsum(axis=1)


def test_nothing_is_kept_outside_a_session():
    x = chunk()
    predict_memo.keep(CONFIG, x, np.nan, b"bytes")
    assert predict_memo.take(CONFIG, x, np.nan) is None


def test_a_kept_chunk_is_taken_once_for_the_same_key_and_values_and_dropped_at_the_end():
    x = chunk()
    data = CONFIG.encode(x, np.nan)
    with predict_memo.session():
        predict_memo.keep(CONFIG, x, np.nan, data)
        assert predict_memo.take(CONFIG, x.copy(), np.nan) == data
        assert predict_memo.take(CONFIG, x, np.nan) is None         # (once)
        predict_memo.keep(CONFIG, x, np.nan, data)
        other = PredictConfig.create(abs_error=0.02)
        y = x.copy()
        y[17, 3] = np.nextafter(y[17, 3], np.inf)                   # (one ulp, one element)
        assert predict_memo.take(other, x, np.nan) is None
        assert predict_memo.take(CONFIG, x, -9999.0) is None
        assert predict_memo.take(CONFIG, x, None) is None
        assert predict_memo.take(CONFIG, x.astype(np.float32), np.nan) is None
        assert predict_memo.take(CONFIG, x.reshape(50, 40), np.nan) is None
        assert predict_memo.take(CONFIG, y, np.nan) is None
    assert predict_memo.take(CONFIG, x, np.nan) is None              # (dropped at the end)


def test_the_values_are_copied_when_kept():
    """Changing the caller's array after it was kept changes nothing: the changed values do
    not match the kept chunk, the old values do."""
    x = chunk()
    data = CONFIG.encode(x, np.nan)
    old = x.copy()
    with predict_memo.session():
        predict_memo.keep(CONFIG, x, np.nan, data)
        x[0, 0] += 1.0
        assert predict_memo.take(CONFIG, x, np.nan) is None
        assert predict_memo.take(CONFIG, old, np.nan) == data


def test_nan_payloads_and_signed_zeros_are_different_values_and_fill_values():
    x = chunk()
    x[3, 4] = 0.0
    data = CONFIG.encode(x, np.nan)
    y = x.copy()
    y[3, 4] = -0.0
    quiet = np.float64(np.nan)
    payload = np.array([0x7FF8000000000001], dtype=np.uint64).view(np.float64)[0]
    with predict_memo.session():
        predict_memo.keep(CONFIG, x, quiet, data)
        assert predict_memo.take(CONFIG, y, quiet) is None
        assert predict_memo.take(CONFIG, x, payload) is None
        assert predict_memo.take(CONFIG, x, quiet) == data


def test_another_thread_takes_what_a_session_kept_and_limit_bounds_what_is_kept(monkeypatch):
    x, z = chunk(1), chunk(2)
    data = CONFIG.encode(x, None)
    got = []
    monkeypatch.setattr(predict_memo, "LIMIT", x.nbytes + x.nbytes // 2)
    with predict_memo.session():
        predict_memo.keep(CONFIG, x, None, data)
        predict_memo.keep(CONFIG, z, None, b"z")                    # (over LIMIT: not kept)
        t = threading.Thread(target=lambda: got.append(
            (predict_memo.take(CONFIG, x, None), predict_memo.take(CONFIG, z, None))))
        t.start()
        t.join()
    assert got == [(data, None)]
