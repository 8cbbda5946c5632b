"""Where a store is: a local path, a URL, or a store object given in Python, opened through
zarr's own store classes.

    PATH, file://PATH           zarr.storage.LocalStore
    PATH.zip                    zarr.storage.ZipStore (a zip file)
    s3:// gs:// az:// abfs://   zarr.storage.FsspecStore (s3fs, gcsfs, adlfs)
    http:// https://            FsspecStore, read only
    memory://                   FsspecStore over fsspec's in-process memory file system
    icechunk://PATH             an Icechunk repository on the local file system (a branch of it:
                                --branch, default main)
    icechunk+s3://BUCKET/PREFIX an Icechunk repository in S3 (endpoint and credentials as for s3://)
    a zarr.abc.store.Store      itself (zdt.suggest / zdt.convert take store objects, zarr Groups
                                and Icechunk sessions' stores as zarr does)

``--storage-options JSON`` goes to fsspec as zarr and xarray pass it; without it the file
systems read their usual configuration (for S3: ``AWS_ENDPOINT_URL``, ``AWS_ACCESS_KEY_ID``,
``AWS_SECRET_ACCESS_KEY``, ``AWS_DEFAULT_REGION``, ``~/.aws``). Writing a local directory or a
zip file goes to ``DST.zdt-partial`` first and is renamed when complete; an object store has
no rename, so there the copy is written in place with a marker object (``PARTIAL_MARKER``) that
is removed last, and removed on any error or interrupt; a store object is written in place
the same way (zdt.stores.destination).
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from zdt.errors import InputError, JobError, MissingPackage, StorageError, UsageError

PARTIAL = ".zdt-partial"
PARTIAL_MARKER = "zdt-partial.json"
_SCHEME = re.compile(r"^([a-zA-Z][a-zA-Z0-9+.-]*)://")
READ_ONLY_SCHEMES = ("http", "https")
FSSPEC_SCHEMES = ("s3", "s3a", "gs", "gcs", "az", "abfs", "abfss", "http", "https", "memory")
ICECHUNK_SCHEMES = ("icechunk", "icechunk+s3")
STORE = "store"                     # the scheme of a store object given in Python


def parse_storage_options(text: str | None) -> dict:
    if text is None:
        return {}
    try:
        options = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(f"storage_options= is not JSON: {exc}") from None
    if not isinstance(options, dict):
        raise UsageError('--storage-options must be a JSON object, like {"anon": true}')
    return options


@dataclass(frozen=True)
class Location:
    """One store's address, as the user gave it (`text`, used in every message)."""

    text: str
    scheme: str                     # "" for a local path, "zip" for a local zip file, STORE for
                                    # a zarr store object given in Python
    storage_options: dict = field(default_factory=dict, compare=False)
    branch: str = "main"            # for Icechunk repositories
    store: Any = field(default=None, compare=False)     # scheme STORE: the store object

    @classmethod
    def of(cls, target: Any, storage_options: dict | None = None, branch: str = "main", *,
           check_options: bool = True) -> tuple[Location, str]:
        """Whatever zarr takes as a store -> (its location, the path of a node inside it, ""
        for the root): a path or URL (``STORE:ARRAY`` names a node), a ``zarr.abc.store.Store``
        (an Icechunk session's store included), a ``zarr.Group`` or ``zarr.Array`` (its store
        and path). `storage_options` given for a local path is a mistake named here (unless
        `check_options` is false: a caller with two locations checks them together)."""
        if isinstance(target, (str, os.PathLike)):
            loc, inner = cls.parse(os.fspath(target), storage_options, branch).split_array()
            if check_options:
                check_options_used(storage_options or {}, loc)
            return loc, inner
        store, inner = target, ""
        store_path = getattr(target, "store_path", None)
        if store_path is not None:                      # a zarr Group or Array
            store, inner = store_path.store, store_path.path
        from zarr.abc.store import Store

        if not isinstance(store, Store):
            raise UsageError(f"{type(target).__name__} is not a store: give a path, a URL, a "
                             "zarr store, a zarr.Group or an Icechunk session's store")
        if storage_options and check_options:
            raise UsageError("storage_options are for URLs; this is a store object already")
        return cls(describe_store(store), STORE, {}, branch, store), inner

    @classmethod
    def parse(cls, text: str, storage_options: dict | None = None, branch: str = "main") -> Location:
        m = _SCHEME.match(text)
        scheme = m.group(1).lower() if m else ""
        if scheme == "file":
            text = text[len("file://"):]
            scheme = ""
        elif scheme and scheme not in FSSPEC_SCHEMES + ICECHUNK_SCHEMES:
            raise UsageError(f"{text}: zdt does not read {scheme}:// stores (it reads local paths, "
                               f"file://, .zip files, "
                               f"{', '.join(s + '://' for s in FSSPEC_SCHEMES + ICECHUNK_SCHEMES)})")
        if not scheme and text.lower().endswith(".zip"):
            scheme = "zip"
        if scheme in ("", "zip"):
            return cls(text, scheme, {})             # the options are for URLs only
        if scheme in ICECHUNK_SCHEMES and not text[len(scheme) + 3:].strip("/"):
            raise UsageError(f"{text}: no repository path after {scheme}://")
        return cls(text.rstrip("/"), scheme, storage_options or {}, branch)

    def split_array(self) -> tuple[Location, str]:
        """``STORE:ARRAY`` -> (the store, the array's path inside it). In a URL the separator
        is a ':' after the host (a port's ':' is not one); a local path with a ':' that exists
        is a path."""
        if self.is_local:
            path, sep, inner = self.text.partition(":")
            if sep and not Path(self.text).exists():
                return Location.parse(path), inner.strip("/")
            return self, ""
        head = len(self.scheme) + 3
        slash = self.text.find("/", head)
        colon = self.text.rfind(":", slash) if slash >= 0 else -1
        if colon < 0:
            return self, ""
        return (Location(self.text[:colon].rstrip("/"), self.scheme, self.storage_options, self.branch),
                self.text[colon + 1:].strip("/"))

    @property
    def is_local(self) -> bool:
        """A directory or zip file on this machine (it can be renamed into place)."""
        return self.scheme in ("", "zip")

    @property
    def path(self) -> Path:
        return Path(self.text)

    @property
    def is_icechunk(self) -> bool:
        return self.scheme in ICECHUNK_SCHEMES

    def with_suffix(self, suffix: str) -> Location:
        return Location(self.text + suffix, self.scheme, self.storage_options, self.branch)

    def describe(self) -> str:
        """The store as messages name it (an Icechunk store with its branch)."""
        return f"{self.text} (branch {self.branch})" if self.is_icechunk else self.text

    def _icechunk_storage(self) -> Any:
        icechunk = _icechunk()
        rest = self.text[len(self.scheme) + 3:]
        if self.scheme == "icechunk":
            return icechunk.local_filesystem_storage(str(Path(rest).absolute()))
        bucket, _, prefix = rest.partition("/")
        return icechunk.s3_storage(bucket=bucket, prefix=prefix.strip("/") or None,
                                   **_icechunk_s3_options(self.storage_options))

    def icechunk_exists(self) -> bool:
        try:
            return bool(_icechunk().Repository.exists(self._icechunk_storage()))
        except JobError:
            raise
        except Exception as exc:
            raise StorageError(f"{self.text}: cannot reach the Icechunk repository ({reason(exc)})"
                               f"{environment_note(self)}") from None

    def icechunk_repository(self, *, create: bool = False) -> Any:
        """The Icechunk repository (created if missing and `create`)."""
        icechunk = _icechunk()
        try:
            storage = self._icechunk_storage()
            if create:
                return icechunk.Repository.open_or_create(storage)
            if not icechunk.Repository.exists(storage):
                raise InputError(f"{self.text}: no Icechunk repository there")
            return icechunk.Repository.open(storage)
        except JobError:
            raise
        except Exception as exc:
            raise StorageError(f"{self.text}: cannot open the Icechunk repository ({reason(exc)})"
                               f"{environment_note(self)}") from None

    def branches(self, repo: Any) -> list[str]:
        return sorted(repo.list_branches())

    def open(self, *, write: bool = False) -> Any:
        """The zarr store (read-only unless `write`)."""
        from zarr.storage import FsspecStore, LocalStore, ZipStore

        if self.scheme == STORE:
            return self.store
        if self.scheme == "":
            return LocalStore(self.text, read_only=not write)
        if self.scheme == "zip":
            return ZipStore(self.text, mode="w" if write else "r")
        if self.is_icechunk:
            if write:       # writing goes through a session: zdt.stores.icechunk
                raise UsageError(f"{self.text}: an Icechunk destination is written through a session")
            repo = self.icechunk_repository()
            if self.branch not in self.branches(repo):
                raise InputError(f"{self.text}: no branch {self.branch!r} (branches: "
                                   f"{', '.join(self.branches(repo))})")
            return repo.readonly_session(branch=self.branch).store
        if write and self.scheme in READ_ONLY_SCHEMES:
            raise InputError(f"{self.text}: {self.scheme}:// stores are read only")
        try:
            return FsspecStore.from_url(self.text, storage_options=dict(self.storage_options),
                                        read_only=not write)
        except ImportError as exc:
            raise MissingPackage(f"{self.text}: {self.scheme}:// needs a package that is not "
                               f"installed ({exc.name or exc}); pip install 'zdt[stores]'") from None
        except Exception as exc:
            raise StorageError(f"{self.text}: cannot open it ({reason(exc)})") from None

    def _root_or_store(self) -> Any:
        """What _same_store compares: the store object, or a local directory's path."""
        if self.scheme == STORE:
            return self.store
        return self.path if self.scheme == "" else self.text

    def inside(self, other: Location) -> bool:
        """Whether this store lies in `other` (or is it)."""
        if STORE in (self.scheme, other.scheme):
            return _same_store(self._root_or_store(), other._root_or_store())
        if self.is_local and other.is_local:
            s, o = self.path.resolve(), other.path.resolve()
            return s == o or s.is_relative_to(o)
        if self.scheme != other.scheme or self.branch != other.branch:
            return False
        a, b = self.text.rstrip("/") + "/", other.text.rstrip("/") + "/"
        return a.startswith(b)


def _icechunk() -> Any:
    try:
        import icechunk
    except ImportError:
        raise MissingPackage("icechunk:// stores need the icechunk package: pip install 'zdt[stores]'") from None
    if "ICECHUNK_LOG" not in os.environ:
        icechunk.set_logs_filter("error")        # its warnings would break the one-line rule
    return icechunk


def _icechunk_s3_options(options: dict) -> dict:
    """--storage-options (s3fs's names) and the environment -> icechunk.s3_storage's."""
    endpoint = (options.get("endpoint_url") or (options.get("client_kwargs") or {}).get("endpoint_url")
                or os.environ.get("AWS_ENDPOINT_URL_S3") or os.environ.get("AWS_ENDPOINT_URL"))
    region = (options.get("region_name") or (options.get("client_kwargs") or {}).get("region_name")
              or os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION"))
    out: dict[str, Any] = {"region": region}
    if endpoint:
        out.update(endpoint_url=endpoint, allow_http=endpoint.startswith("http://"), force_path_style=True)
    if options.get("anon"):
        out["anonymous"] = True
    elif options.get("key"):
        out.update(access_key_id=options["key"], secret_access_key=options.get("secret"),
                   session_token=options.get("token"))
    else:
        out["from_env"] = True
    return out


def check_options_used(options: dict, *locations: Location) -> None:
    """--storage-options given where no store is a URL is a mistake worth naming."""
    if options and all(loc.is_local for loc in locations):
        names = " and ".join(loc.text for loc in locations)
        raise UsageError(f"storage_options=: {names} {'is a local path' if len(locations) == 1 else 'are local paths'} "
                           f"(the options are for URLs)")


def reason(exc: BaseException) -> str:
    """One line naming what failed, for errors from fsspec and the object-store clients."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    name = type(exc).__name__
    return f"{name}: {text}" if text else name


def environment_note(loc: Location) -> str:
    """For S3 errors: the endpoint the options or the environment point at, if any."""
    if loc.scheme not in ("s3", "s3a", "icechunk+s3"):
        return ""
    endpoint = (loc.storage_options.get("endpoint_url")
                or (loc.storage_options.get("client_kwargs") or {}).get("endpoint_url")
                or os.environ.get("AWS_ENDPOINT_URL_S3") or os.environ.get("AWS_ENDPOINT_URL"))
    return f" [endpoint {endpoint}]" if endpoint else ""


def describe_store(store: Any) -> str:
    """A store object as messages name it: its URL where zarr gives one (file://, memory://,
    s3://), that of the store a wrapper (zarr's WrapperStore: a cache, a logger) wraps, else
    its class."""
    name = type(store).__name__
    for _ in range(8):
        text = str(store)
        fs, path = getattr(store, "fs", None), getattr(store, "path", None)
        if fs is not None and isinstance(path, str):        # an FsspecStore: its URL
            protocol = getattr(fs, "protocol", None)
            protocol = protocol[0] if isinstance(protocol, (tuple, list)) else protocol
            if isinstance(protocol, str) and protocol != "file":
                text = f"{protocol}://{path}"
        if "://" in text and len(text) < 200:
            return text.removeprefix("wrapping-")
        inner = getattr(store, "_store", None)
        if inner is None or inner is store:
            break
        store = inner
    return f"<{name}>"


def _same_store(a: Any, b: Any) -> bool:
    """Whether two stores (objects, or a local directory's Path) are one store or one holds the
    other: a destination must not be its own source."""
    if a is b:
        return True

    def root(x: Any) -> Path | None:
        r = x if isinstance(x, Path) else getattr(x, "root", None)
        return Path(r).resolve() if isinstance(r, (str, os.PathLike)) else None

    ra, rb = root(a), root(b)
    if ra is None or rb is None:
        return False
    return ra == rb or ra.is_relative_to(rb) or rb.is_relative_to(ra)
