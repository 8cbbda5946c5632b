"""The docs' own checks: the examples of README.md and docs/ run as tests (the root
conftest.py, with Sybil); a broken example fails them; the site builds in strict mode in CI
(.ci/run), so a broken link fails there."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def root_conftest():
    spec = importlib.util.spec_from_file_location("zdt_docs_conftest", ROOT / "conftest.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def outcomes(tmp_path: Path, text: str) -> list[str]:
    """Each example of a Markdown document run as the suite runs it: "ok" or "failed"."""
    doc = tmp_path / "example.md"
    doc.write_text(text)
    conf = root_conftest()
    document = conf.examples(["example.md"]).parse(doc)
    conf.setup(document.namespace)
    out = []
    try:
        for example in document.examples():
            try:
                example.evaluate()
            except Exception:            # noqa: BLE001 (any error fails the example)
                out.append("failed")
                continue
            out.append("ok")
    finally:
        conf.teardown(document.namespace)
    return out


def test_a_document_test_stops_at_its_first_broken_example_and_names_its_line(tmp_path):
    doc = tmp_path / "example.md"
    doc.write_text("<!-- skip: next -->\n```sh\nexit 1\n```\n\n```python\nx = 1\n```\n\n"
                   "```python\nassert x == 2\n```\n")
    with pytest.raises(AssertionError, match="example.md, the example at line 10: AssertionError"):
        root_conftest().run_document(doc)
    doc.write_text("<!-- skip: next -->\n```sh\nexit 1\n```\n\n```python\nx = 1\n```\n")
    root_conftest().run_document(doc)                    # the skipped block did not run


def test_a_broken_example_fails_and_a_sound_one_passes(tmp_path):
    text = ("```python\nx = 1\n```\n\n"
            "```python\nassert x == 2, 'the docs promise 2'\n```\n\n"
            "```sh\nzdt --help > /dev/null\n```\n\n"
            "```sh\nzdt suggest nowhere.zarr --abs-error 1\n```\n\n"
            "```python\nfrom pathlib import Path\nPath('made-here.txt').write_text('x')\n```\n\n"
            "```sh\ntest -f made-here.txt\n```\n")
    assert outcomes(tmp_path, text) == ["ok", "failed", "ok", "failed", "ok", "ok"]


def test_the_readme_and_docs_examples_are_collected(pytestconfig):
    """The suite's testpaths take in README.md and docs/ (so their examples run with the
    README's test command)."""
    paths = pytestconfig.getini("testpaths")
    assert "README.md" in paths and "docs" in paths
    conf = root_conftest()
    blocks = [e for e in conf.examples(["README.md"]).parse(ROOT / "README.md").examples()
              if isinstance(e.parsed, str)]
    assert len(blocks) >= 7
