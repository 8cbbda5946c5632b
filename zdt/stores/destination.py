"""Where a conversion writes, so that a destination that exists is complete: one class per kind.

* ``StagedDirectory``: a local directory, written as ``DST.zdt-partial`` and renamed to DST at
  the end;
* ``StagedZip``: a zip file, written as a directory ``DST.zdt-partial`` (zarr's ZipStore cannot
  replace an entry, and a conversion writes some documents twice), then copied key by key into
  a ZipStore at ``DST.zdt-partial.zip`` and renamed to DST;
* ``InPlace``: an object store (no rename there), or a store object given in Python: written
  in place, after a marker object (``zdt-partial.json``, naming the source) that is removed
  last; the root's metadata documents are held as ``zdt-partial.root.<name>`` until the end
  (``root_last``), so the prefix is not a zarr store before the copy is complete; an error or an
  interrupt removes everything written. A store holding the marker is an unfinished conversion;
* ``zdt.stores.icechunk.IcechunkBranch``: a branch of an Icechunk repository (created if
  missing; the branch too, from main): written on a scratch branch with checkpoints and landed
  on the branch as one commit whose message names the source and the plan; a conversion that
  does not finish lands nothing on the branch.

``zdt.stores.destination_at(location)`` picks the class; nothing else asks which kind a
destination is.

Ctrl-C, SIGTERM and errors remove what was written; SIGKILL leaves the partial output, named
for what it is, and ``--resume`` finishes it. The partial output carries its own record: the
marker object (``zdt-partial.json``: the source, a fingerprint of its metadata, and the plan
once it is decided) and one empty object per storage unit written
(``zdt-partial.d/<array>/<unit>``, written after the unit's chunks). Into Icechunk the record
is the metadata of the scratch branch's checkpoint commit.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import re
import shutil
from typing import Any

from zdt.errors import InputError, JobError, StorageError
from zdt.stores.location import PARTIAL, PARTIAL_MARKER, Location, environment_note, reason
from zdt.stores.nodes import METADATA_KEYS

DONE = "zdt-partial.d"
_ZARR_TEMP = re.compile(r"\.[0-9a-f]{32}\.partial$")
HELD = "zdt-partial.root."         # RootLast's prefix for the root's metadata documents


def _buffer(data: bytes) -> Any:
    from zarr.core.buffer import default_buffer_prototype

    return default_buffer_prototype().buffer.from_bytes(data)


def _on_zarr_loop(coro: Any) -> Any:
    """Run a coroutine on zarr's event loop (its IO thread) and wait for its result."""
    from zarr.core.sync import sync

    return sync(coro)


def copy_keys(src: Any, src_prefix: str, dst: Any, dst_prefix: str) -> None:
    """Every object under src_prefix of the zarr store src, byte for byte, to dst_prefix of
    dst (through the stores' own get / set)."""
    import asyncio

    from zarr.core.buffer import default_buffer_prototype

    proto = default_buffer_prototype()
    head = f"{src_prefix}/" if src_prefix else ""

    async def copy_all() -> None:
        keys = [k async for k in src.list_prefix(head)]
        limit = asyncio.Semaphore(16)

        async def one(key: str) -> None:
            async with limit:
                try:
                    data = await src.get(key, proto)
                except OSError as exc:      # (resets and timeouts are OSErrors)
                    raise StorageError(f"reading {key_text(key)} from the source failed: "
                                       f"{reason(exc)}") from None
                if data is not None:
                    rel = key[len(head):]
                    await dst.set(f"{dst_prefix}/{rel}" if dst_prefix else rel, data)

        # metadata documents first, parents before children: a store that keeps a node per
        # array (Icechunk) takes no chunk before its array's metadata
        meta = sorted((k for k in keys if k.rsplit("/", 1)[-1] in METADATA_KEYS), key=lambda k: k.count("/"))
        for key in meta:
            await one(key)
        first = set(meta)
        await asyncio.gather(*(one(k) for k in keys if k not in first))

    _on_zarr_loop(copy_all())


def key_text(key: str) -> str:
    """A store key as messages name it: `/temp chunk c/0/1` for a chunk, `/temp/zarr.json`
    for a document."""
    array, sep, chunk = key.rpartition("c/") if ("/c/" in key or key.startswith("c/")) else ("", "", "")
    if sep and chunk[:1].isdigit():
        return f"/{array.rstrip('/')} chunk c/{chunk}"
    return "/" + key


@functools.cache
def _root_last_class() -> type:
    """RootLast, made on first use (zarr is imported only when a store is opened)."""
    from zarr.core.buffer import default_buffer_prototype
    from zarr.storage import WrapperStore

    class RootLast(WrapperStore):
        """A store whose root metadata documents (zarr.json, .zgroup, .zattrs, .zarray,
        .zmetadata) are kept under other names until `unveil`: zarr finds no store at the
        prefix until the copy is complete. Everything else passes through."""

        def _key(self, key: str) -> str:
            return HELD + key if key in METADATA_KEYS else key

        async def get(self, key: str, prototype: Any, byte_range: Any = None) -> Any:
            return await self._store.get(self._key(key), prototype, byte_range)

        async def exists(self, key: str) -> bool:
            return await self._store.exists(self._key(key))

        async def set(self, key: str, value: Any) -> None:
            await self._store.set(self._key(key), value)

        async def set_if_not_exists(self, key: str, value: Any) -> None:
            await self._store.set_if_not_exists(self._key(key), value)

        async def delete(self, key: str) -> None:
            await self._store.delete(self._key(key))

        @property
        def _supports_sync_io(self) -> bool:
            return False            # the sync methods would bypass the renaming

        def unveil(self) -> None:
            """Put the held root documents in place."""

            async def move() -> None:
                for name in METADATA_KEYS:
                    data = await self._store.get(HELD + name, default_buffer_prototype())
                    if data is not None:
                        await self._store.set(name, data)
                        await self._store.delete(HELD + name)

            _on_zarr_loop(move())

    return RootLast


def root_last(store: Any) -> Any:
    """`store` with its root metadata documents held back until `unveil()` (see RootLast)."""
    return _root_last_class()(store)


class Destination:
    """The output of one conversion; one subclass per kind of store says how each step of the
    conversion is done there. A conversion (zdt.engine.conversion.Conversion, whose docstring
    says what each step leaves here) calls only these methods, in this order: `check`;
    `begin`, or resuming `reopen` and `record_of`; resuming, `done` and `holds_copy_of`
    (verify), `remove_torn_files`; `write_record`; while writing `store`, `done`, `mark`,
    `checkpoint_due` and `checkpoint`; `finish`; on any failure `abandon`."""

    def __init__(self, loc: Location, resume: bool = False) -> None:
        self.loc = loc
        self.resume = resume

    @property
    def store(self) -> Any:
        """The zarr store written (into Icechunk: the current session's, new at each checkpoint)."""
        raise NotImplementedError

    def partial_name(self) -> str:
        """The partial copy as messages name it."""
        raise NotImplementedError

    # --- check ----------------------------------------------------------------------------
    def check(self, src: Location) -> None:
        """Refuse what cannot be written, before anything is read or written."""
        if self.resume:
            if self.loc.inside(src) or src.inside(self.loc):
                raise InputError(f"resume=True: {self.loc.text} and the source {src.text} overlap")
            self.check_resumable()
            return
        self.check_new()
        if self.loc.inside(src):
            raise InputError(f"{self.loc.text} is inside the source {src.text}: write the copy elsewhere")
        if src.inside(self.loc):
            raise InputError(f"the source {src.text} is inside {self.loc.text}: write the copy elsewhere")
        self.check_writable()

    def check_new(self) -> None:
        """Refuse a destination that is not empty (or holds a stopped conversion)."""

    def check_writable(self) -> None:
        """Refuse a destination that cannot be written."""

    def check_resumable(self) -> None:
        """Refuse --resume where there is nothing to resume."""
        raise NotImplementedError

    # --- begin ----------------------------------------------------------------------------
    def begin(self, record: dict) -> None:
        """Make the partial copy, holding `record`; `store` is where the copy is written."""
        raise NotImplementedError

    def reopen(self) -> None:
        """Resuming: open the partial copy a stopped run left (its record: `record_of`)."""
        raise NotImplementedError

    def record_of(self) -> dict | None:
        """The record an earlier, stopped run left (--resume); None if it recorded nothing."""
        raise NotImplementedError

    # --- verify (resuming) ----------------------------------------------------------------
    def done(self, array: str) -> set[str]:
        """The units of `array` an earlier run wrote (empty unless resuming)."""
        raise NotImplementedError

    def copy_key(self, key: str) -> str | None:
        """A key of `store` as the finished copy names it; None for an object of the record,
        which is no part of the copy."""
        return key

    def holds_copy_of(self, src: Any, src_prefix: str, prefix: str) -> bool:
        """Whether `prefix` of the copy holds exactly the objects under `src_prefix` of the
        zarr store `src`, byte for byte (a copied array, when resuming)."""
        from zarr.core.buffer import default_buffer_prototype

        proto = default_buffer_prototype()
        head = f"{src_prefix}/" if src_prefix else ""
        dhead = f"{prefix}/" if prefix else ""
        store = self.store

        async def compare() -> bool:
            keys = sorted([k[len(head):] async for k in src.list_prefix(head)])
            others = sorted([name[len(dhead):] async for k in store.list_prefix(dhead)
                             if (name := self.copy_key(k)) is not None])
            if keys != others:
                return False
            for k in keys:
                a, b = await src.get(head + k, proto), await store.get(dhead + k, proto)
                if a is None or b is None or a.to_bytes() != b.to_bytes():
                    return False
            return True

        return _on_zarr_loop(compare())

    def remove_torn_files(self) -> None:
        """Resuming, once the partial copy is accepted: remove what a kill left half-written."""

    # --- record and write -------------------------------------------------------------------
    def write_record(self, record: dict) -> None:
        """The partial copy's record is now `record` (the source, its digest and the plan)."""
        raise NotImplementedError

    def mark(self, array: str, unit: str) -> None:
        """Unit `unit` of `array` is written (after its chunks)."""
        raise NotImplementedError

    def checkpoint_due(self) -> bool:
        """Whether to stop starting units and `checkpoint` (Icechunk only)."""
        return False

    def checkpoint(self) -> None:
        """Record what is written (no unit in flight); `store` may change."""

    # --- finish, or abandon -----------------------------------------------------------------
    def finish(self, message: str) -> None:
        """Make the copy the destination, without its record (`message`: an Icechunk
        commit's)."""
        raise NotImplementedError

    def abandon(self) -> None:
        """Remove what this conversion wrote (the destination was empty before it)."""
        raise NotImplementedError

    def written_bytes(self) -> int | None:
        """The bytes the partial copy holds now, where that is cheap to know (else None)."""
        return None

    # --- writing from other processes (zdt.engine.cluster) ----------------------------------
    def for_worker(self) -> Any:
        """What a worker process writes into: a picklable object with a ``store`` property
        (here: the location it opens; into Icechunk: a fork of the session)."""
        return OpenedThere(self._worker_location())

    def take_back(self, written: Any) -> None:
        """What a worker returns after writing (into Icechunk: its fork, merged later)."""

    def gather(self) -> None:
        """Before a checkpoint and the end: fold in what workers wrote (Icechunk: merge)."""

    def _worker_location(self) -> Location:
        return self.loc


class OpenedThere:
    """A location a worker process opens for writing, once per process."""

    _opened: dict[tuple, Any] = {}

    def __init__(self, loc: Location) -> None:
        self.loc = loc

    @property
    def store(self) -> Any:
        key = (self.loc, repr(self.loc.storage_options))
        if key not in self._opened:
            if self.loc.scheme == "":
                from zarr.storage import LocalStore

                self._opened[key] = LocalStore(self.loc.text, read_only=False)
            else:
                self._opened[key] = root_last(self.loc.open(write=True))
        return self._opened[key]


class _MarkedStore(Destination):
    """A destination whose record lives in the zarr store written: the marker object and one
    empty object per unit written."""

    _store: Any = None

    @property
    def store(self) -> Any:
        return self._store

    def write_record(self, record: dict) -> None:
        data = json.dumps({"zdt convert": "unfinished", **record}).encode()
        try:
            _on_zarr_loop(self.store.set(PARTIAL_MARKER, _buffer(data)))
        except Exception as exc:
            raise StorageError(f"{self.loc.text}: cannot write there ({reason(exc)})"
                               f"{environment_note(self.loc)}") from None

    def record_of(self) -> dict | None:
        from zarr.core.buffer import default_buffer_prototype

        data = _on_zarr_loop(self.store.get(PARTIAL_MARKER, default_buffer_prototype()))
        try:
            record = json.loads(data.to_bytes())
        except (AttributeError, ValueError):
            record = None
        if not isinstance(record, dict) or record.get("zdt convert") != "unfinished":
            raise InputError(f"resume=True: {PARTIAL_MARKER} in {self.loc.text} is not a zdt record")
        return record

    def mark(self, array: str, unit: str) -> None:
        """An empty object, zdt-partial.d/<array>/<unit>."""
        _on_zarr_loop(self.store.set(f"{DONE}/{array.strip('/') or '_root'}/{unit}", _buffer(b"")))

    def copy_key(self, key: str) -> str | None:
        return None if key.startswith(DONE) or key == PARTIAL_MARKER else key

    def done(self, array: str) -> set[str]:
        if not self.resume:
            return set()
        head = f"{DONE}/{array.strip('/') or '_root'}/"

        async def names() -> set[str]:
            # (a record torn by a kill, NAME.<uuid>.partial, records nothing)
            return {k[len(head):] async for k in self.store.list_prefix(head)
                    if not _ZARR_TEMP.search(k)}

        return _on_zarr_loop(names())

    def _drop_record(self) -> None:
        _on_zarr_loop(self.store.delete(PARTIAL_MARKER))
        _on_zarr_loop(self.store.delete_dir(DONE))


class StagedDirectory(_MarkedStore):
    """A local directory, built as DST.zdt-partial and renamed into place."""

    def __init__(self, loc: Location, resume: bool = False) -> None:
        super().__init__(loc, resume)
        self.staging = loc.with_suffix(PARTIAL)

    def partial_name(self) -> str:
        return self.staging.text

    def check_new(self) -> None:
        dst, partial = self.loc.path, self.staging.path
        if dst.exists():
            raise InputError(f"{self.loc.text} exists; zdt convert writes a new store")
        if partial.exists():
            raise InputError(f"{partial} exists: an earlier convert was stopped; finish it with "
                             f"resume=True, or remove it")

    def check_writable(self) -> None:
        dst = self.loc.path
        parent = dst.resolve().parent
        if not parent.exists():
            raise InputError(f"{dst.parent}: no such directory")
        if not parent.is_dir():
            raise InputError(f"{dst.parent}: not a directory")
        # access() answers for the file system too (read-only mounts), and for root
        if not os.access(parent, os.W_OK | os.X_OK):
            try:
                read_only = bool(os.statvfs(parent).f_flag & os.ST_RDONLY)
            except OSError:
                read_only = False
            raise InputError(f"{dst.parent}: not writable"
                             + (" (a read-only file system)" if read_only else ""))

    def check_resumable(self) -> None:
        if self.loc.path.exists():
            raise InputError(f"resume=True: {self.loc.text} exists: that conversion finished")
        if not (self.staging.path / PARTIAL_MARKER).is_file():
            raise InputError(f"resume=True: nothing to resume at {self.loc.text} (no {self.staging.text})")

    def begin(self, record: dict) -> None:
        self.staging.path.mkdir()
        self.reopen()
        self.write_record(record)

    def reopen(self) -> None:
        from zarr.storage import LocalStore

        self._store = LocalStore(self.staging.text, read_only=False)

    def remove_torn_files(self) -> None:
        """zarr's LocalStore writes a file as NAME.<uuid hex>.partial and renames it; a kill in
        between leaves that file, which is no key of the copy."""
        for leftover in self.staging.path.rglob("*.partial"):
            if _ZARR_TEMP.search(leftover.name):
                leftover.unlink()

    def finish(self, message: str) -> None:
        # the staged copy drops its record before it is moved into place
        self._drop_record()
        self._move_into_place()

    def _move_into_place(self) -> None:
        os.replace(self.staging.path, self.loc.path)

    def abandon(self) -> None:
        shutil.rmtree(self.staging.path, ignore_errors=True)

    def written_bytes(self) -> int | None:
        total = 0
        for root, _, files in os.walk(self.staging.path):
            for name in files:
                with contextlib.suppress(OSError):
                    total += os.lstat(os.path.join(root, name)).st_size
        return total

    def _worker_location(self) -> Location:
        return self.staging


class StagedZip(StagedDirectory):
    """A zip file: staged as a directory, packed into DST.zdt-partial.zip, renamed into place."""

    def _move_into_place(self) -> None:
        from zarr.storage import ZipStore

        packed = self.staging.with_suffix(".zip")
        z = ZipStore(packed.text, mode="w")
        try:
            copy_keys(self.store, "", z, "")
        finally:
            z.close()
        os.replace(packed.path, self.loc.path)
        shutil.rmtree(self.staging.path, ignore_errors=True)

    def abandon(self) -> None:
        super().abandon()
        self.staging.with_suffix(".zip").path.unlink(missing_ok=True)


class InPlace(_MarkedStore):
    """An object store or a store object: written in place behind its marker, the root's
    documents held back until the end."""

    def partial_name(self) -> str:
        return self.loc.text

    def _open(self) -> Any:
        return self.loc.open(write=True)

    def check_new(self) -> None:
        store = self._open()
        try:
            empty = _on_zarr_loop(store.is_empty(""))
            marked = not empty and _on_zarr_loop(store.exists(PARTIAL_MARKER))
        except JobError:
            raise
        except Exception as exc:
            raise StorageError(f"{self.loc.text}: cannot reach it ({reason(exc)})"
                               f"{environment_note(self.loc)}") from None
        if marked:
            raise InputError(f"{self.loc.text} holds {PARTIAL_MARKER}: an earlier convert was "
                             f"stopped; finish it with resume=True, or remove what is there")
        if not empty:
            raise InputError(f"{self.loc.text} exists; zdt convert writes a new store")

    def check_resumable(self) -> None:
        store = self._open()
        try:
            marked = _on_zarr_loop(store.exists(PARTIAL_MARKER))
        except Exception as exc:
            raise StorageError(f"{self.loc.text}: cannot reach it ({reason(exc)})"
                               f"{environment_note(self.loc)}") from None
        if not marked:
            raise InputError(f"resume=True: nothing to resume at {self.loc.text} (no {PARTIAL_MARKER})")

    def begin(self, record: dict) -> None:
        self.reopen()
        self.write_record(record)

    def reopen(self) -> None:
        self._store = root_last(self._open())

    def copy_key(self, key: str) -> str | None:
        """(the root's documents, held back until `finish`, under their own names)"""
        name = super().copy_key(key)
        return name[len(HELD):] if name is not None and name.startswith(HELD) else name

    def finish(self, message: str) -> None:
        # the root's documents go into place, then removing the marker is the commit point
        # (what a kill leaves after it is inert)
        self.store.unveil()
        self._drop_record()

    def abandon(self) -> None:
        if self.store is None:
            return
        try:
            _on_zarr_loop(self.store.delete_dir(""))
        except Exception:       # what cannot be removed keeps the marker: recognisable
            pass
