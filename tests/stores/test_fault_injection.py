"""Systematic fault injection: a real zarr Store (zarr's WrapperStore around a LocalStore, or
around the S3 store on a real S3 API server) that fails the N-th read or write of a small
conversion with a chosen error, for every N.

Whatever fails and wherever, the outcome is one of: the conversion finishes with the clean
run's bytes; or it raises one of zdt's errors, one line naming what failed, and leaves nothing
behind, after which the same conversion (fault gone) writes the clean run's bytes. The source
never changes. (A SIGKILL mid-run, which leaves a partial copy that --resume finishes, is
tests/stores/test_command_stores.py's and tests/stores/test_faults.py's.)"""

from __future__ import annotations

import errno

import numpy as np
import pytest
import zarr
from zarr.storage import LocalStore, WrapperStore

import zdt
from store_helpers import tree_digest as digest
from zdt.errors import InputError, JobError, StorageError


class Faults:
    """What to break: the `at`-th call (counting from 1) of the operations in `ops`."""

    def __init__(self, ops: tuple[str, ...], at: int = 0, error: object = None,
                 key: str | None = None) -> None:
        # (`key`: count only the calls on that key; zarr reads some keys concurrently, so the
        # position of a read among all of them changes from run to run)
        self.ops, self.at, self.error, self.calls, self.key = ops, at, error, 0, key
        self.fired: str | None = None
        self.keys: list[tuple[str, bool]] = []      # the keys of the calls counted, and whether
                                                    # the key was there (reads)

    def tick(self, op: str, key: str, value: bytes | None = None) -> bytes | None:
        """Raise the fault, or return the bytes to use instead (damaged bytes), or None."""
        if op not in self.ops or (self.key is not None and key != self.key):
            return None
        self.calls += 1
        self.keys.append((key, value is not None or op != "get"))
        if self.calls != self.at:
            return None
        self.fired = f"{op} {key}"
        if isinstance(self.error, BaseException):
            raise self.error
        if self.error == "truncate" and value is not None:
            return value[: len(value) // 2]
        if self.error == "flip" and value is not None:
            b = bytearray(value)
            b[len(b) // 2] ^= 0x5A
            return bytes(b)
        return None


class FaultyStore(WrapperStore):
    """A store that behaves as the one it wraps but for the fault `faults` names. (zarr makes
    copies of a store with other settings through type(self)(store): they share `faults`.)"""

    def __init__(self, store, faults: Faults | None = None) -> None:
        super().__init__(store)
        self.faults = faults if faults is not None else getattr(store, "faults", Faults(()))

    def _with_store(self, store):
        return type(self)(store, self.faults)

    async def get(self, key, prototype, byte_range=None):
        buf = await super().get(key, prototype, byte_range)
        if buf is not None:
            damaged = self.faults.tick("get", key, buf.to_bytes())
            if damaged is not None:
                return prototype.buffer.from_bytes(damaged)
        else:
            self.faults.tick("get", key)
        return buf

    async def set(self, key, value):
        self.faults.tick("set", key)
        return await super().set(key, value)

    async def delete(self, key):
        self.faults.tick("delete", key)
        return await super().delete(key)


@pytest.fixture(scope="module")
def source(tmp_path_factory):
    """Two arrays, one re-encoded and one copied (integers under a relative bound stay exact),
    each chunk with a crc32c checksum so that damaged bytes are caught."""
    root = tmp_path_factory.mktemp("faults") / "src.zarr"
    g = zarr.open_group(root, mode="w")
    rng = np.random.default_rng(7)
    t = g.create_array("temp", shape=(40, 30), chunks=(20, 15), dtype="f8",
                       compressors=[zarr.codecs.ZstdCodec(level=1), zarr.codecs.Crc32cCodec()])
    t[...] = np.round(15 + np.cumsum(rng.normal(0, 0.3, (40, 30)), axis=1), 3)
    c = g.create_array("count", shape=(30,), chunks=(10,), dtype="i4",
                       compressors=[zarr.codecs.ZstdCodec(level=1), zarr.codecs.Crc32cCodec()])
    c[...] = rng.integers(0, 1000, 30)
    SOURCE[:] = [root]
    PLANS.clear()
    return root


PLANS: dict = {}


def convert(src, dst_store):
    """The conversion every run makes: the plan for the bounds, decided once (each run then
    reads the source's metadata and chunks and writes the copy, without the search)."""
    if "plan" not in PLANS:
        PLANS["plan"] = zdt.suggest(str(SOURCE[0]), bounds={"/temp": "abs:0.01",
                                                          "/count": "rel:0.001"})
    return zdt.convert(src, dst_store, plan=PLANS["plan"])


SOURCE: list = []


@pytest.fixture(scope="module")
def clean(source, tmp_path_factory):
    """The fault-free run's bytes, and the keys of its reads and of its writes, in order."""
    out = tmp_path_factory.mktemp("clean") / "out.zarr"
    reads, writes = Faults(("get",)), Faults(("set", "delete"))
    convert(FaultyStore(LocalStore(source, read_only=True), reads),
            FaultyStore(LocalStore(out), writes))
    return digest(out), reads.keys, writes.keys


def outcome_is_clean(source, before, clean_digest, dst, run, rerun=False):
    """Run; either the clean bytes (returns None), or one of zdt's errors in one line and
    nothing left (returns the error; with `rerun`, the same conversion without the fault then
    writes the clean bytes: nothing in the way)."""
    try:
        run()
    except JobError as exc:
        message = str(exc)
        assert message and "\n" not in message, message
        assert digest(source) == before
        assert not dst.exists() or not any(p.is_file() for p in dst.rglob("*")), \
            f"{message}: left {sorted(str(p) for p in dst.rglob('*'))}"
        if rerun:
            convert(str(source), LocalStore(dst))
            assert digest(dst) == clean_digest, message
        return exc
    assert digest(source) == before
    assert digest(dst) == clean_digest
    return None


STORAGE = {
    "no space": OSError(errno.ENOSPC, "No space left on device"),
    "permission": PermissionError(errno.EACCES, "Permission denied"),
    "I/O": OSError(errno.EIO, "Input/output error"),
    "reset": ConnectionResetError(errno.ECONNRESET, "Connection reset by peer"),
    "timeout": TimeoutError("timed out"),
}


def test_every_write_failing_is_one_line_and_leaves_nothing(source, clean, tmp_path):
    """Every write of the conversion in turn fails (the kinds of error in rotation): one
    line naming the destination and the error, nothing left, and a rerun writes the clean
    bytes."""
    clean_digest, _, writes = clean
    before = digest(source)
    assert len(writes) > 10
    kinds = list(STORAGE)
    for n in range(1, len(writes) + 1):
        kind = kinds[n % len(kinds)]
        dst = tmp_path / f"w{n}"
        faults = Faults(("set", "delete"), n, STORAGE[kind])
        exc = outcome_is_clean(source, before, clean_digest, dst,
                               lambda: convert(str(source), FaultyStore(LocalStore(dst), faults)),
                               rerun=n == 1)
        assert faults.fired, n
        assert isinstance(exc, StorageError), (n, faults.fired, exc)   # never ignored
        error = STORAGE[kind]
        assert dst.name in str(exc), (kind, str(exc))
        reason = getattr(error, "strerror", None)
        assert type(error).__name__ in str(exc) or (reason and reason.lower() in str(exc).lower()), \
            (kind, str(exc))


DAMAGE = ("truncate", "flip")


def test_every_key_read_failing_or_damaged_is_one_line_naming_it(source, clean, tmp_path):
    """For the first read of every key of the source (metadata and chunks), a storage error
    (rotating) and damaged bytes (truncated, flipped): one line, nothing left, and the chunk's
    key named when it is a chunk. Damaged bytes are the data's fault (InputError, exit 1), a
    failed read the storage's (StorageError, exit 3)."""
    clean_digest, reads, _ = clean
    before = digest(source)
    there = dict(reads)             # key -> it exists (a get of a missing key reads nothing)
    assert sum(there.values()) >= 10
    storage = ["I/O", "reset", "timeout"]
    failed = 0
    for i, key in enumerate(sorted(there)):
        # (damaged bytes of /count's chunks are not tried: an array left as it is is copied
        # byte for byte, never decoded, so what a read gives is what is written)
        damage = there[key] and not key.startswith("count/c/")
        errors = [STORAGE[storage[i % len(storage)]]] + ([DAMAGE[i % len(DAMAGE)]] if damage else [])
        for error in errors:
            dst = tmp_path / f"r{i}-{isinstance(error, str)}"
            faults = Faults(("get",), 1, error, key)
            src = FaultyStore(LocalStore(source, read_only=True), faults)
            exc = outcome_is_clean(source, before, clean_digest, dst,
                                   lambda: convert(src, LocalStore(dst)), rerun=i == 0)
            assert faults.fired == f"get {key}", (faults.fired, key)
            if exc is None:
                # a metadata document read more than once (what the fault changed was not what
                # was used, or a flipped byte that still parses the same): the clean bytes
                assert "/c/" not in key, (key, error)
                continue
            failed += 1
            if "/c/" in key:
                array, chunk = key.split("/c/", 1)
                assert f"/{array} chunk c/{chunk}" in str(exc), (key, str(exc))
            assert isinstance(exc, InputError if isinstance(error, str) else StorageError), \
                (key, error, exc)
    assert failed >= len([k for k in there if "/c/" in k])


# --- the same around an S3 store (a real S3 API server, moto, on 127.0.0.1) ----------------------

def s3_store(endpoint: str, url: str, read_only: bool = False):
    from zarr.storage import FsspecStore

    from store_helpers import KEY, SECRET

    return FsspecStore.from_url(url, read_only=read_only, storage_options={
        "endpoint_url": endpoint, "key": KEY, "secret": SECRET})


@pytest.mark.slow
def test_every_write_to_s3_failing_is_one_line_and_leaves_nothing(source, clean, s3, s3_endpoint,
                                                                  tmp_path):
    """FaultyStore around the S3 store: every write of a conversion into S3 failing in turn
    (the kinds rotating) is one line naming the destination, and the bucket holds nothing of
    it afterwards; the fault-free run into S3 writes the local run's bytes."""
    from store_helpers import s3_bytes, store_bytes

    fs, bucket, _ = s3
    before = digest(source)
    ref = tmp_path / "ref.zarr"
    convert(str(source), LocalStore(ref))
    writes = Faults(("set", "delete"))
    convert(str(source), FaultyStore(s3_store(s3_endpoint, f"s3://{bucket}/clean.zarr"), writes))
    assert s3_bytes(fs, f"{bucket}/clean.zarr") == store_bytes(ref)
    assert len(writes.keys) > 10
    kinds = list(STORAGE)
    for n in range(1, len(writes.keys) + 1):
        kind = kinds[n % len(kinds)]
        faults = Faults(("set", "delete"), n, STORAGE[kind])
        prefix = f"{bucket}/w{n}.zarr"
        with pytest.raises(StorageError) as info:
            convert(str(source), FaultyStore(s3_store(s3_endpoint, f"s3://{prefix}"), faults))
        message = str(info.value)
        assert faults.fired, n
        assert message and "\n" not in message and f"w{n}.zarr" in message, message
        reason = getattr(STORAGE[kind], "strerror", None)
        assert type(STORAGE[kind]).__name__ in message or (reason and reason.lower() in message.lower()), \
            (kind, message)
        fs.invalidate_cache()
        assert fs.find(prefix) == [], (n, faults.fired, fs.find(prefix))
    assert digest(source) == before


def test_every_chunk_read_from_s3_failing_is_one_line_naming_it(source, s3, s3_endpoint, tmp_path):
    """The source in S3 behind FaultyStore: the first read of each chunk fails (a reset, a
    timeout) or comes back damaged: one line naming the array and the chunk; nothing left."""
    fs, bucket, _ = s3
    fs.put(str(source), f"{bucket}/src.zarr", recursive=True)
    url = f"s3://{bucket}/src.zarr"
    reads = Faults(("get",))
    ref = tmp_path / "ref.zarr"
    convert(FaultyStore(s3_store(s3_endpoint, url, read_only=True), reads), LocalStore(ref))
    chunks = sorted({k for k, there in reads.keys if there and "/c/" in k})
    assert len(chunks) >= 6
    errors = [STORAGE["reset"], STORAGE["timeout"], "truncate", "flip"]
    for i, key in enumerate(chunks):
        error = errors[i % len(errors)]
        if isinstance(error, str) and key.startswith("count/"):
            continue            # (copied byte for byte, never decoded: see above)
        dst = tmp_path / f"r{i}.zarr"
        faults = Faults(("get",), 1, error, key)
        with pytest.raises(JobError) as info:
            convert(FaultyStore(s3_store(s3_endpoint, url, read_only=True), faults), LocalStore(dst))
        assert faults.fired == f"get {key}"
        array, chunk = key.split("/c/", 1)
        message = str(info.value)
        assert "\n" not in message and f"/{array} chunk c/{chunk}" in message, (key, message)
        assert isinstance(info.value, InputError if isinstance(error, str) else StorageError), message
        assert not dst.exists() or not any(p.is_file() for p in dst.rglob("*"))
