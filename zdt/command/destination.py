"""How a conversion's output comes into being, so that a DST that exists is complete.

* a local directory: written as ``DST.zdt-partial`` and renamed to DST at the end;
* a zip file: written as a directory ``DST.zdt-partial`` (zarr's ZipStore cannot replace an
  entry, and a conversion writes some documents twice), then copied key by key into a
  ZipStore at ``DST.zdt-partial.zip`` and renamed to DST;
* an object store (no rename there): written in place, after a marker object
  (``zdt-partial.json``, naming the source) that is removed last; the root's metadata
  document is held as ``zdt-partial.root.<name>`` until the end (``root_last``), so the prefix
  is not a zarr store before the copy is complete; an error or an interrupt removes everything
  written. A store holding the marker is an unfinished conversion;
* an Icechunk repository (created if missing; the branch too, from main): written on a
  scratch branch with checkpoints and landed on the branch as one commit whose message names
  the source and the plan (zdt.command.icechunk_copy); a conversion that does not finish lands
  nothing on the branch.

Ctrl-C, SIGTERM and errors remove what was written; SIGKILL leaves the partial output, named
for what it is, and ``--resume`` finishes it. The partial output carries its own record: the
marker object (``zdt-partial.json``: the source, a fingerprint of its metadata, and the plan
once it is decided) and one empty object per storage unit written
(``zdt-partial.d/<array>/<unit>``, written after the unit's chunks). Into Icechunk the record
is the metadata of the scratch branch's checkpoint commit.
"""

from __future__ import annotations

import functools
import json
import os
import re
import shutil
from typing import Any

from zdt.command.errors import CommandError
from zdt.command.icechunk_copy import IcechunkCopy
from zdt.command.store import METADATA_KEYS
from zdt.command.location import PARTIAL, PARTIAL_MARKER, Location, environment_note, reason


DONE = "zdt-partial.d"
_ZARR_TEMP = re.compile(r"\.[0-9a-f]{32}\.partial$")


def _buffer(data: bytes) -> Any:
    from zarr.core.buffer import default_buffer_prototype

    return default_buffer_prototype().buffer.from_bytes(data)


def _sync(coro: Any) -> Any:
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
                data = await src.get(key, proto)
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

    _sync(copy_all())


def mark_unit(store: Any, array: str, unit: str) -> None:
    """The record that unit `unit` of `array` is written (zdt-partial.d/<array>/<unit>)."""
    _sync(store.set(f"{DONE}/{array.strip('/') or '_root'}/{unit}", _buffer(b"")))


def same_keys(src: Any, src_prefix: str, dst: Any, dst_prefix: str) -> bool:
    """Whether dst_prefix of dst holds exactly the objects under src_prefix of src."""
    from zarr.core.buffer import default_buffer_prototype

    proto = default_buffer_prototype()
    head = f"{src_prefix}/" if src_prefix else ""
    dhead = f"{dst_prefix}/" if dst_prefix else ""

    async def compare() -> bool:
        keys = sorted([k[len(head):] async for k in src.list_prefix(head)])
        held = HELD if hasattr(dst, "unveil") else None     # RootLast: root documents renamed
        others = sorted([(k[len(held):] if held and k.startswith(held) else k)[len(dhead):]
                         async for k in dst.list_prefix(dhead)
                         if not k.startswith(DONE) and k != PARTIAL_MARKER])
        if keys != others:
            return False
        for k in keys:
            a, b = await src.get(head + k, proto), await dst.get(dhead + k, proto)
            if a is None or b is None or a.to_bytes() != b.to_bytes():
                return False
        return True

    return _sync(compare())


HELD = "zdt-partial.root."         # RootLast's prefix for the root's metadata documents


@functools.cache
def _root_last_class() -> type:
    """RootLast, made on first use (zarr is imported only when a store is opened)."""
    from zarr.core.buffer import default_buffer_prototype
    from zarr.storage import WrapperStore

    class RootLast(WrapperStore):
        """An object store whose root metadata documents (zarr.json, .zgroup, .zattrs,
        .zarray, .zmetadata) are kept under other names until `unveil`: zarr finds no store at
        the prefix until the copy is complete. Everything else passes through."""

        HELD = HELD

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

            _sync(move())

    return RootLast


def root_last(store: Any) -> Any:
    """`store` with its root metadata documents held back until `unveil()` (see RootLast)."""
    return _root_last_class()(store)


class Destination:
    """The output of one conversion (see the module docstring)."""

    def __init__(self, loc: Location, resume: bool = False) -> None:
        self.loc = loc
        self.resume = resume
        self.staging = loc.with_suffix(PARTIAL) if loc.is_local else None
        self._store: Any = None
        self.icechunk = IcechunkCopy(loc) if loc.is_icechunk else None

    @property
    def store(self) -> Any:
        """The zarr store written (into Icechunk: the current session's, new at each checkpoint)."""
        return self.icechunk.store if self.icechunk is not None and self.icechunk.session else self._store

    @property
    def session(self) -> Any:
        """The Icechunk session written (None for other stores)."""
        return self.icechunk.session if self.icechunk is not None else None

    def partial_name(self) -> str:
        """The partial copy as messages name it."""
        if self.icechunk is not None:
            return self.icechunk.describe_scratch()
        return self.staging.text if self.staging is not None else self.loc.text

    def check(self, src: Location) -> None:
        """Refuse what cannot be written, before anything is read or written."""
        loc = self.loc
        if self.resume:
            self._check_resumable(src)
            return
        if loc.is_icechunk:
            self._check_icechunk()
        if loc.is_local:
            self._check_local_exists()
        if loc.inside(src):
            raise CommandError(f"{loc.text} is inside the source {src.text}: write the copy elsewhere")
        if src.inside(loc):
            raise CommandError(f"the source {src.text} is inside {loc.text}: write the copy elsewhere")
        if loc.is_local:
            self._check_local_parent()
            return
        if loc.is_icechunk:
            return
        store = loc.open(write=True)
        try:
            empty = _sync(store.is_empty(""))
            marked = not empty and _sync(store.exists(PARTIAL_MARKER))
        except CommandError:
            raise
        except Exception as exc:
            raise CommandError(f"{loc.text}: cannot reach it ({reason(exc)}){environment_note(loc)}") from None
        if marked:
            raise CommandError(f"{loc.text} holds {PARTIAL_MARKER}: an earlier convert was stopped; "
                               f"finish it with --resume, or remove what is there")
        if not empty:
            raise CommandError(f"{loc.text} exists; zdt convert writes a new store")

    def _check_resumable(self, src: Location) -> None:
        loc = self.loc
        if loc.inside(src) or src.inside(loc):
            raise CommandError(f"--resume: {loc.text} and the source {src.text} overlap")
        if self.icechunk is not None:
            self.icechunk.check_resume()
            return
        if loc.is_local:
            if loc.path.exists():
                raise CommandError(f"--resume: {loc.text} exists: that conversion finished")
            if not (self.staging.path / PARTIAL_MARKER).is_file():
                raise CommandError(f"--resume: nothing to resume at {loc.text} (no {self.staging.text})")
            return
        store = loc.open(write=True)
        try:
            marked = _sync(store.exists(PARTIAL_MARKER))
        except Exception as exc:
            raise CommandError(f"{loc.text}: cannot reach it ({reason(exc)}){environment_note(loc)}") from None
        if not marked:
            raise CommandError(f"--resume: nothing to resume at {loc.text} (no {PARTIAL_MARKER})")

    def _check_icechunk(self) -> None:
        loc = self.loc
        if not loc.icechunk_exists():
            return
        repo = loc.icechunk_repository()
        self.icechunk.check_new(repo)
        # a missing branch starts as main
        start = loc.branch if loc.branch in loc.branches(repo) else "main"
        if not _sync(repo.readonly_session(branch=start).store.is_empty("")):
            also = "" if start == loc.branch else ", and it would start as main, which is not empty"
            raise CommandError(f"{loc.describe()} is not empty{also}; zdt convert writes a new store")

    def _check_local_exists(self) -> None:
        dst, partial = self.loc.path, self.staging.path
        if dst.exists():
            raise CommandError(f"{self.loc.text} exists; zdt convert writes a new store")
        if partial.exists():
            raise CommandError(f"{partial} exists: an earlier convert was stopped; finish it with "
                               f"--resume, or remove it")

    def _check_local_parent(self) -> None:
        dst = self.loc.path
        parent = dst.resolve().parent
        if not parent.exists():
            raise CommandError(f"{dst.parent}: no such directory")
        if not parent.is_dir():
            raise CommandError(f"{dst.parent}: not a directory")
        # access() answers for the file system too (read-only mounts), and for root
        if not os.access(parent, os.W_OK | os.X_OK):
            raise CommandError(f"{dst.parent}: not writable")

    def begin(self, record: dict) -> Any:
        """The zarr store to write the copy into: a new one holding `record` in its marker, or
        with --resume the partial one (its record: `record_of`)."""
        from zarr.storage import LocalStore

        if self.staging is not None:
            if not self.resume:
                self.staging.path.mkdir()
            self._store = LocalStore(self.staging.text, read_only=False)
            if not self.resume:
                self.write_record(record)
            return self.store
        if self.icechunk is not None:
            self.icechunk.begin(self.resume)
            if not self.resume:
                self.write_record(record)
            return self.store
        self._store = root_last(self.loc.open(write=True))
        if not self.resume:
            self.write_record(record)
        return self.store

    def checkpoint_due(self) -> bool:
        """Whether to stop starting units and `checkpoint` (Icechunk only)."""
        return self.icechunk is not None and self.icechunk.checkpoint_due()

    def checkpoint(self) -> None:
        """Record what is written (no unit in flight); `store` changes."""
        self.icechunk.checkpoint()

    def remove_torn_files(self) -> None:
        """Resuming, once the partial copy is accepted: zarr's LocalStore writes a file as
        NAME.<uuid hex>.partial and renames it; a kill in between leaves that file, which is
        no key of the copy."""
        if self.staging is not None:
            for leftover in self.staging.path.rglob("*.partial"):
                if _ZARR_TEMP.search(leftover.name):
                    leftover.unlink()

    # --- the record of a conversion in progress --------------------------------------------
    def write_record(self, record: dict) -> None:
        if self.icechunk is not None:           # written with the next checkpoint
            self.icechunk.record.update(record)
            return
        data = json.dumps({"zdt convert": "unfinished", **record}).encode()
        try:
            _sync(self.store.set(PARTIAL_MARKER, _buffer(data)))
        except Exception as exc:
            raise CommandError(f"{self.loc.text}: cannot write there ({reason(exc)})"
                               f"{environment_note(self.loc)}") from None

    def record_of(self) -> dict | None:
        """The record an earlier, stopped run left (--resume); None if it recorded nothing (a
        conversion into Icechunk stopped before its first checkpoint)."""
        from zarr.core.buffer import default_buffer_prototype

        if self.icechunk is not None:
            return dict(self.icechunk.record) if self.icechunk.checkpointed else None

        data = _sync(self.store.get(PARTIAL_MARKER, default_buffer_prototype()))
        try:
            record = json.loads(data.to_bytes())
        except (AttributeError, ValueError):
            record = None
        if not isinstance(record, dict) or record.get("zdt convert") != "unfinished":
            raise CommandError(f"--resume: {PARTIAL_MARKER} in {self.loc.text} is not a zdt record")
        return record

    def mark(self, array: str, unit: str) -> None:
        """Unit `unit` of `array` is written (after its chunks)."""
        if self.icechunk is not None:
            self.icechunk.mark(array, unit)
        else:
            mark_unit(self.store, array, unit)

    def done(self, array: str) -> set[str]:
        """The units of `array` an earlier run wrote (empty unless resuming)."""
        if not self.resume:
            return set()
        if self.icechunk is not None:
            return self.icechunk.done(array)
        head = f"{DONE}/{array.strip('/') or '_root'}/"

        async def names() -> set[str]:
            # (a record torn by a kill, NAME.<uuid>.partial, records nothing)
            return {k[len(head):] async for k in self.store.list_prefix(head)
                    if not _ZARR_TEMP.search(k)}

        return _sync(names())

    def finish(self, message: str) -> None:
        """Make the copy the destination (`message`: an Icechunk commit's)."""
        if self.icechunk is not None:
            self.icechunk.finish(message)
            return
        # on an object store the root's document goes into place, then removing the marker is
        # the commit point (what a kill leaves after it is inert); a staged copy drops its
        # record before it is moved into place
        if hasattr(self.store, "unveil"):
            self.store.unveil()
        _sync(self.store.delete(PARTIAL_MARKER))
        _sync(self.store.delete_dir(DONE))
        if self.staging is None:
            return
        if self.loc.scheme == "":
            os.replace(self.staging.path, self.loc.path)
        elif self.loc.scheme == "zip":
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
        """Remove what this conversion wrote (the destination was empty before it)."""
        if self.staging is not None:
            shutil.rmtree(self.staging.path, ignore_errors=True)
            if self.loc.scheme == "zip":
                self.staging.with_suffix(".zip").path.unlink(missing_ok=True)
            return
        if self.icechunk is not None:
            self.icechunk.abandon()         # the branch itself was never changed
            return
        if self.store is None:
            return
        try:
            _sync(self.store.delete_dir(""))
        except Exception:       # what cannot be removed keeps the marker: recognisable
            pass
