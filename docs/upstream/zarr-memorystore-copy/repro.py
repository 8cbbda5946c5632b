"""zarr-python's MemoryStore copies every buffer it is given: the cost on whole-array writes.

    python repro.py        (zarr >= 3.4, numpy; nothing of zdt)

Writes 50M float32 into a MemoryStore in chunks of 1M with a compressor (zstd level 1, blosc
lz4), with zarr's own pipeline, as is and with zarr.storage._memory._copy_buffer replaced by
the identity (what a store that took ownership of the compressor's output would do). Without a
compressor the copy is needed (the encoded chunk is a view of the caller's array), so that case
is not measured. Medians of 7 interleaved runs.
"""

from __future__ import annotations

import statistics
import time

import numpy as np
import zarr
import zarr.storage._memory as memory
from zarr.codecs import BloscCodec, ZstdCodec
from zarr.storage import MemoryStore

N, CHUNK, RUNS = 50_000_000, 1_000_000, 7


def main() -> None:
    data = np.random.default_rng(0).normal(0, 50, N).astype(np.float32)
    copy = memory._copy_buffer
    print(f"zarr {zarr.__version__}: {N:,} float32 in chunks of {CHUNK:,} into a MemoryStore")
    for name, compressors in (("zstd level 1", [ZstdCodec(level=1)]),
                              ("blosc lz4", [BloscCodec(cname="lz4", clevel=5, shuffle="shuffle")])):
        times: dict[str, list[float]] = {"as is (copied)": [], "not copied": []}
        for _ in range(RUNS):
            for label, fn in (("as is (copied)", copy), ("not copied", lambda value: value)):
                memory._copy_buffer = fn
                a = zarr.create_array(MemoryStore(), shape=(N,), chunks=(CHUNK,), dtype="float32",
                                      compressors=compressors)
                t0 = time.perf_counter()
                a[:] = data
                times[label].append(time.perf_counter() - t0)
                assert np.array_equal(a[:], data)
        memory._copy_buffer = copy
        med = {k: statistics.median(v) * 1e3 for k, v in times.items()}
        print(f"  {name:14s} write {med['as is (copied)']:7.1f} ms, without the copy "
              f"{med['not copied']:7.1f} ms ({med['as is (copied)'] / med['not copied']:.2f}x)")


if __name__ == "__main__":
    main()
