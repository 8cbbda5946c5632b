"""A conversion into a branch of an Icechunk repository: one commit, or nothing, and a killed
one resumes.

The copy is written on a scratch branch, ``BRANCH.zdt-partial``, started at the tip of BRANCH
(of main when BRANCH does not exist yet). Between two storage units, once CHECKPOINT_SECONDS
have passed since the last checkpoint, the session is committed there with the record in the
commit's metadata: the source, the fingerprint of its metadata, the plan, the snapshot BRANCH
was at, and the units written. Every checkpoint after the first *amends* the one before, so the
scratch branch is always BRANCH's tip plus one commit. At the end that commit is amended a last
time (the message names the source and the plan), BRANCH is reset to it — only if BRANCH has
not moved since: the reset is conditional — or created at it, and the scratch branch is deleted.

So a conversion that stops lands nothing on BRANCH. SIGKILL leaves the scratch branch, and
``--resume`` continues it: the units its last checkpoint records are checked against the
source, the rest written (units written after the last checkpoint are written again). Errors,
Ctrl-C and SIGTERM delete the scratch branch (what it wrote is left to Icechunk's garbage
collection, like any abandoned session's chunks).

Icechunk 1 has no amend: there the copy is committed once, at the end, and a killed conversion
records nothing (its --resume starts over, and says so).
"""

from __future__ import annotations

import os
import threading
import time
from typing import Any

from zdt.errors import InputError, JobError, KeptError, MissingPackage, StorageError, UsageError
from zdt.stores.destination import Destination
from zdt.stores.location import Location, reason

SCRATCH = ".zdt-partial"            # BRANCH + SCRATCH: the branch a conversion is written on
RECORD = "zdt convert"              # the commit metadata key that holds the record
CHECKPOINT_SECONDS = 30.0           # ZDT_CHECKPOINT_SECONDS overrides it (0: after every unit)


def _ranges(units: set[str]) -> list:
    """Unit names -> a short JSON form: runs of numbers as [first, last], other names as is."""
    numbers = sorted(int(u) for u in units if u.isdigit())
    out: list = sorted(u for u in units if not u.isdigit())
    for n in numbers:
        if out and isinstance(out[-1], list) and out[-1][1] == n - 1:
            out[-1][1] = n
        else:
            out.append([n, n])
    return out


def _unranges(value: Any) -> set[str]:
    units: set[str] = set()
    for item in value if isinstance(value, list) else []:
        if isinstance(item, list) and len(item) == 2 and all(isinstance(n, int) for n in item):
            units.update(str(n) for n in range(item[0], item[1] + 1))
        elif isinstance(item, str):
            units.add(item)
    return units


class IcechunkBranch(Destination):
    """A conversion into a branch of the Icechunk repository at `loc`, written on its scratch
    branch (see the module docstring)."""

    def __init__(self, loc: Location, resume: bool = False) -> None:
        super().__init__(loc, resume)
        self.scratch = loc.branch + SCRATCH
        self.repo: Any = None
        self.session: Any = None
        self.base = ""                      # the snapshot BRANCH (or main) was at when it began
        self.checkpointed = False           # whether the scratch branch holds a commit of ours
        self.record: dict = {}              # source, fingerprint, plan
        self.earlier: dict[str, set[str]] = {}      # units the stopped run recorded
        self.written: dict[str, set[str]] = {}      # units written (recorded or by this run)
        self.lock = threading.Lock()
        text = os.environ.get("ZDT_CHECKPOINT_SECONDS", str(CHECKPOINT_SECONDS))
        try:
            self.interval = float(text)
        except ValueError:
            self.interval = -1.0
        if not self.interval >= 0:
            raise UsageError(f"ZDT_CHECKPOINT_SECONDS={text!r}: not a number of seconds >= 0")
        self.last = time.monotonic()
        self.created = False                # this run created the scratch branch
        self.landed = False                 # BRANCH is at the copy
        self.forks: list = []               # sessions written by workers, merged at checkpoints

    @property
    def can_amend(self) -> bool:
        return hasattr(self.session, "amend")

    @property
    def store(self) -> Any:
        return self.session.store if self.session is not None else None

    def partial_name(self) -> str:
        return f"{self.loc.text} (branch {self.scratch})"

    def _repository_call(self, what: str, call: Any, *args: Any, **kwargs: Any) -> Any:
        """An Icechunk call whose failure is one line naming the branch and what was done."""
        try:
            return call(*args, **kwargs)
        except JobError:
            raise
        except Exception as exc:
            raise StorageError(f"{self.partial_name()}: {what} failed ({reason(exc)})") from None

    # --- before anything is written ----------------------------------------------------------
    def check_new(self) -> None:
        loc = self.loc
        if not loc.icechunk_exists():
            return
        repo = loc.icechunk_repository()
        if self.scratch in self._repository_call("listing branches", repo.list_branches):
            raise InputError(f"{self.partial_name()} holds an earlier convert that was "
                             f"stopped; finish it with resume=True, or delete that branch")
        # a missing branch starts as main
        start = loc.branch if loc.branch in loc.branches(repo) else "main"
        store = repo.readonly_session(branch=start).store
        from zarr.core.sync import sync

        if not sync(store.is_empty("")):
            also = "" if start == loc.branch else ", and it would start as main, which is not empty"
            raise InputError(f"{loc.describe()} is not empty{also}; zdt convert writes a new store")

    def check_resumable(self) -> None:
        self._repository_call("reading the record", self._check_resume)

    def _check_resume(self) -> None:
        loc = self.loc
        repo = loc.icechunk_repository() if loc.icechunk_exists() else None
        branches = set(repo.list_branches()) if repo is not None else set()
        if self.scratch not in branches:
            raise InputError(f"resume=True: nothing to resume at {loc.describe()} (no branch "
                               f"{self.scratch})")
        tip = repo.lookup_branch(self.scratch)
        info = next(iter(repo.ancestry(branch=self.scratch)))
        record = (info.metadata or {}).get(RECORD)
        if (loc.branch in branches and repo.lookup_branch(loc.branch) == tip
                and isinstance(record, dict) and record.get("state") == "complete"):
            # killed after BRANCH was moved to the copy, before the scratch branch went
            repo.delete_branch(self.scratch)
            raise InputError(f"resume=True: {loc.describe()} is at the converted copy: that "
                               f"conversion finished (its leftover branch {self.scratch} is "
                               f"deleted now)")
        # where BRANCH was when the conversion began: recorded, or (before the first checkpoint)
        # where the scratch branch still is
        base = record.get("base") if isinstance(record, dict) else tip
        if loc.branch in branches and repo.lookup_branch(loc.branch) != base:
            raise InputError(f"resume=True: {loc.describe()} moved since the stopped conversion "
                               f"began: delete the branch {self.scratch} and convert again")

    # --- the session the copy is written in ---------------------------------------------------
    def begin(self, record: dict) -> None:
        """The scratch branch, made at BRANCH's tip (main's, when BRANCH does not exist yet),
        and a session on it; the record is written with the first checkpoint."""
        def start(repo: Any) -> None:
            branch = self.loc.branch if self.loc.branch in repo.list_branches() else "main"
            self.base = repo.lookup_branch(branch)
            repo.create_branch(self.scratch, self.base)
            self.created = True

        self._open_session(start)
        self.write_record(record)

    def reopen(self) -> None:
        """A session on the scratch branch a stopped run left, its record read from the last
        checkpoint's commit (none before the first)."""
        def resume(repo: Any) -> None:
            info = next(iter(repo.ancestry(branch=self.scratch)))
            record = (info.metadata or {}).get(RECORD)
            if isinstance(record, dict):
                self.checkpointed = True
                self.base = str(record.get("base", ""))
                self.record = {k: v for k, v in record.items() if k not in ("units", "base", "state")}
                units = record.get("units") if isinstance(record.get("units"), dict) else {}
                self.earlier = {a: _unranges(u) for a, u in units.items()}
            else:                           # stopped before its first checkpoint
                self.base = info.id

        self._open_session(resume)

    def _open_session(self, prepare: Any) -> None:
        """`prepare(repository)` (the scratch branch made or found), then a session on it."""
        repo = self.repo = self.loc.icechunk_repository(create=True)
        try:
            prepare(repo)
            self.written = {a: set(u) for a, u in self.earlier.items()}
            self.session = repo.writable_session(self.scratch)
            self.last = time.monotonic()
        except JobError:
            raise
        except Exception as exc:
            raise StorageError(f"{self.partial_name()}: cannot start the copy there "
                               f"({reason(exc)})") from None

    def record_of(self) -> dict | None:
        return dict(self.record) if self.checkpointed else None

    # --- writing ------------------------------------------------------------------------------
    def write_record(self, record: dict) -> None:
        """Written with the next checkpoint."""
        self.record.update(record)

    def mark(self, array: str, unit: str) -> None:
        with self.lock:
            self.written.setdefault(array, set()).add(unit)

    def done(self, array: str) -> set[str]:
        return set(self.earlier.get(array, ())) if self.resume else set()

    def checkpoint_due(self) -> bool:
        return self.can_amend and time.monotonic() - self.last >= self.interval

    def _commit(self, message: str, state: str) -> str:
        with self.lock:
            units = {a: _ranges(u) for a, u in sorted(self.written.items())}
        metadata = {RECORD: {**self.record, "state": state, "base": self.base, "units": units}}
        try:
            if self.checkpointed:
                snapshot = self.session.amend(message, metadata=metadata, allow_empty=True)
            elif self.can_amend:            # icechunk >= 2
                snapshot = self.session.commit(message, metadata, allow_empty=True)
            else:
                snapshot = self.session.commit(message, metadata)
        except Exception as exc:
            raise StorageError(f"{self.partial_name()}: the commit failed ({reason(exc)})") from None
        self.checkpointed = True
        return snapshot

    def checkpoint(self) -> None:
        """Commit what is written (no unit may be in flight; workers' forks merged first) and
        go on in a new session."""
        self.gather()
        self._commit(f"zdt convert from {self.record.get('source')}: unfinished (a checkpoint)",
                     "unfinished")
        self.session = self._repository_call("opening a session", self.repo.writable_session,
                                             self.scratch)
        self.last = time.monotonic()

    def finish(self, message: str) -> None:
        self.gather()
        snapshot = self._commit(message, "complete")
        repo = self.repo
        try:
            if self.loc.branch in repo.list_branches():
                repo.reset_branch(self.loc.branch, snapshot, from_snapshot_id=self.base)
            else:
                repo.create_branch(self.loc.branch, snapshot)
        except Exception as exc:
            raise KeptError(f"{self.loc.describe()}: cannot move the branch to the converted "
                       f"copy ({reason(exc)}; it moved since the conversion began?): the copy "
                       f"is on the branch {self.scratch}") from None
        # landed: from here on nothing undoes it (a leftover scratch branch is what --resume
        # recognises as finished, and a later convert refuses until it is deleted)
        self.landed = True
        try:
            repo.delete_branch(self.scratch)
        except Exception:
            pass

    def abandon(self) -> None:
        """Delete the scratch branch: one this run created, or the one it resumed (as a resumed
        local copy is removed on an error); never after the copy landed."""
        if self.repo is not None and not self.landed and (self.created or self.resume):
            try:
                self.repo.delete_branch(self.scratch)
            except Exception:       # what cannot be deleted stays recognisable by its name
                pass

    # --- writing from other processes (zdt.engine.cluster) -----------------------------------
    def for_worker(self) -> Any:
        """A fork of the session: workers write into forks, merged before each checkpoint."""
        try:
            return self.session.fork()
        except ValueError as exc:           # Icechunk 1 forks only unchanged sessions
            import icechunk

            raise MissingPackage(f"scheduler= into Icechunk needs icechunk >= 2 (here "
                                 f"{icechunk.__version__}: {str(exc).splitlines()[0]})") from None

    def take_back(self, written: Any) -> None:
        self.forks.append(written)

    def gather(self) -> None:
        if self.forks:
            self.session.merge(*self.forks)
            self.forks.clear()
