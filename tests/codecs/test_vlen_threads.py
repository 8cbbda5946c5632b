"""Strings encoded on several threads: chunks of one StringDType array (which share its
allocator lock) encode the same bytes as one thread does, the per-thread scratch grows and is
let go correctly, and another thread writing to the array meanwhile never crashes an encode
nor mixes anything but old and new values into a chunk."""

from __future__ import annotations

import functools
import threading
from concurrent.futures import ThreadPoolExecutor

import numcodecs
import numpy as np
import pytest

from zdt.codecs import vlen

SDT = np.dtypes.StringDType()


@functools.cache
def _pool(seed: int, longest: int) -> tuple[str, ...]:
    rng = np.random.default_rng(seed)
    alphabet = list("abcdefghijklmnopqrstuvwxyz 0123456789") + list("éß日本🙂")
    return tuple("".join(rng.choice(alphabet, rng.integers(0, longest + 1))) for _ in range(997))


def strings(n: int, seed: int, longest: int = 40) -> list[str]:
    """n strings of 0..longest characters, some not ASCII (drawn from 997 distinct ones)."""
    pool = _pool(seed, longest)
    pick = np.random.default_rng(seed + 1).integers(0, len(pool), n)
    return [pool[j] for j in pick]


def numcodecs_bytes(items: list[str]) -> bytes:
    return bytes(numcodecs.VLenUTF8().encode(np.array(items + [""], dtype=object)[:-1]))


@pytest.mark.parametrize(("layout", "width"), [(vlen.VLEN, 4), (vlen.ARROW, 4), (vlen.ARROW, 8)])
def test_chunks_of_one_array_on_threads_match_one_thread(layout, width):
    items = strings(40_000, seed=1)
    arr = np.array(items, dtype=SDT)
    bounds = [(i, min(i + 2_500, len(items))) for i in range(0, len(items), 2_500)]

    def enc(b):
        return vlen.encode(arr[b[0]:b[1]], utf8=True, layout=layout, width=width).tobytes()

    serial = [enc(b) for b in bounds]
    with ThreadPoolExecutor(4) as pool:
        threaded = list(pool.map(enc, bounds * 3))
    assert threaded == serial * 3
    if layout == vlen.VLEN:
        assert serial[0] == numcodecs_bytes(items[:2_500])


def test_scratch_grows_for_bigger_chunks_and_is_let_go(monkeypatch):
    small = strings(50, seed=2, longest=5)
    big = ["x" * 10_000 + s for s in strings(300, seed=3)]      # 3 MB: beyond any earlier scratch
    mixed = strings(2_000, seed=4, longest=200)
    for items in (small, big, small, mixed, big):
        assert vlen.encode(np.array(items, dtype=SDT), utf8=True).tobytes() == numcodecs_bytes(items)
    monkeypatch.setattr(vlen, "SCRATCH_KEEP_BYTES", 0)          # let it go after every chunk
    for items in (big, small, mixed):
        assert vlen.encode(np.array(items, dtype=SDT), utf8=True).tobytes() == numcodecs_bytes(items)


def test_strings_of_exactly_sixteen_bytes_at_the_end_of_the_chunk():
    # the short-string copy moves 16 bytes at a time: the last elements must stay in bounds
    for tail in (["a" * 16], ["a" * 15, "b" * 16], ["", "c" * 16], ["é" * 8], ["d" * 17]):
        items = strings(30, seed=5, longest=16) + tail
        assert vlen.encode(np.array(items, dtype=SDT), utf8=True).tobytes() == numcodecs_bytes(items)


def test_a_writer_thread_never_crashes_an_encode_and_chunks_hold_old_or_new_values():
    n = 20_000
    old = [f"old-{i}" for i in range(n)]
    new = [f"new-{i}-" + "y" * (i % 300) for i in range(n)]    # long ones grow the arena
    arr = np.array(old, dtype=SDT)
    stop = threading.Event()

    def writer():
        rng = np.random.default_rng(6)
        while not stop.is_set():
            for i in rng.integers(0, n, 500):
                arr[i] = new[i]

    def reader(_):
        seen = 0
        while not stop.is_set():
            for lo in range(0, n, 4_000):
                try:
                    chunk = vlen.encode(arr[lo:lo + 4_000], utf8=True)
                except RuntimeError as e:     # the two-pass path may see the array change
                    assert "changed while it was being encoded" in str(e)
                    continue
                got = vlen.decode(chunk, (4_000,), utf8=True).tolist()
                for k, value in enumerate(got):
                    assert value in (old[lo + k], new[lo + k]), (lo + k, value)
                seen += 1
        return seen

    w = threading.Thread(target=writer)
    w.start()
    try:
        with ThreadPoolExecutor(2) as pool:
            futures = [pool.submit(reader, r) for r in range(2)]
            threading.Event().wait(1.0)
            stop.set()
            counts = [f.result() for f in futures]
    finally:
        stop.set()
        w.join()
    assert all(c > 0 for c in counts)
