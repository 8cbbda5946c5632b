"""What the store tests share (tests/stores/): the S3 API server's credentials, the command run
in-process, free ports, the contents of a store (a local directory, an S3 prefix, an Icechunk
branch) and a digest of a directory tree. The S3 server itself and a fresh bucket per test are
fixtures: tests/stores/conftest.py."""

from __future__ import annotations

import hashlib
import socket
from pathlib import Path

from zdt.command import main

KEY, SECRET = "zdt-test-key", "zdt-test-secret"


def run_cmd(capsys, *argv: str) -> tuple[int, str, str]:
    try:
        rc = main(list(argv))
    except SystemExit as exc:           # argparse usage errors
        rc = exc.code
    out = capsys.readouterr()
    return rc, out.out, out.err


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def store_bytes(path: Path) -> dict[str, bytes]:
    return {str(p.relative_to(path)): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()}


def s3_bytes(fs, prefix: str) -> dict[str, bytes]:
    return {k[len(prefix) + 1:]: fs.cat_file(k) for k in sorted(fs.find(prefix))}


def icechunk_contents(repo, branch: str = "main") -> dict[str, bytes]:
    from zarr.core.buffer import default_buffer_prototype
    from zarr.core.sync import sync

    store = repo.readonly_session(branch=branch).store

    async def read_all() -> dict:
        keys = sorted([k async for k in store.list_prefix("")])
        return {k: (await store.get(k, default_buffer_prototype())).to_bytes() for k in keys}

    return sync(read_all())


def tree_digest(root: Path) -> str:
    h = hashlib.sha256()
    for p in sorted(root.rglob("*")):
        h.update(str(p.relative_to(root)).encode())
        if p.is_file():
            h.update(p.read_bytes())
    return h.hexdigest()
