"""The examples of README.md and docs/ run as tests: each document is one test that runs its
```python and ```sh blocks in order (parsed by Sybil), in a fresh temporary directory of its
own (so the files one example writes are there for the next), the Python blocks sharing one
namespace, the shell blocks run by bash with the installed `zdt` on PATH. A block after
``<!-- skip: next -->`` is not run (the README's set-up commands: CI runs those on a clean
clone instead). A failure names the example's line and what it printed."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from unittest import SkipTest

import pytest
from sybil import Sybil
from sybil.parsers.markdown import CodeBlockParser, PythonCodeBlockParser, SkipParser

HERE = Path(__file__).resolve().parent
DOCUMENTS = ["README.md", "docs/*.md", "docs/codecs/*.md"]


def run_shell(example) -> None:
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    proc = subprocess.run(["bash", "-euo", "pipefail", "-c", example.parsed], cwd=os.getcwd(),
                          env=env, capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        raise AssertionError(f"exit status {proc.returncode}\n{example.parsed}\n--- stdout\n"
                             f"{proc.stdout[-3000:]}\n--- stderr\n{proc.stderr[-3000:]}")


def setup(namespace: dict) -> None:
    namespace["_previous_cwd"] = os.getcwd()
    namespace["_workdir"] = tempfile.mkdtemp(prefix="zdt-docs-")
    os.chdir(namespace["_workdir"])


def teardown(namespace: dict) -> None:
    os.chdir(namespace["_previous_cwd"])
    shutil.rmtree(namespace["_workdir"], ignore_errors=True)


def examples(patterns: list[str]) -> Sybil:
    return Sybil(parsers=[PythonCodeBlockParser(), CodeBlockParser("sh", run_shell), SkipParser()],
                 patterns=patterns)


def run_document(path: Path) -> None:
    """Every example of the document, in order; the first failure raises AssertionError
    naming the example's line."""
    document = examples([path.name]).parse(path)
    setup(document.namespace)
    try:
        for example in document.examples():
            try:
                example.evaluate()
            except SkipTest:
                continue
            except Exception as exc:            # noqa: BLE001 (any error fails the example)
                raise AssertionError(f"{path.name}, the example at line {example.line}: "
                                     f"{type(exc).__name__}: {exc}") from exc
    finally:
        teardown(document.namespace)


class Document(pytest.File):
    def collect(self):
        yield Examples.from_parent(self, name="examples")


class Examples(pytest.Item):
    def runtest(self) -> None:
        run_document(self.path)

    def repr_failure(self, excinfo, style=None):
        return str(excinfo.value) if isinstance(excinfo.value, AssertionError) else super().repr_failure(excinfo)

    def reportinfo(self):
        return self.path, 0, f"the examples of {self.path.name}"


def pytest_collect_file(parent, file_path: Path):
    if file_path.suffix == ".md" and any(file_path.match(str(HERE / p)) for p in DOCUMENTS):
        return Document.from_parent(parent, path=file_path)
    return None
