"""The layers of the package hold: what runs without zarr, what runs without numcodecs, a stub
beside every compiled module (CI checks them with mypy's stubtest), the bench scripts
installed with the package."""

from __future__ import annotations

import json
import subprocess
import sys
from importlib.machinery import EXTENSION_SUFFIXES
from pathlib import Path

import pytest

import zdt

PACKAGE = Path(zdt.__file__).parent

# modules that must import without zarr (the numcodecs face and everything under it)
WITHOUT_ZARR = ["zdt", "zdt.kernels", "zdt.formats", "zdt.formats.json_scalar",
                "zdt.formats.fast_path", "zdt.codecs", "zdt.codecs.cast", "zdt.codecs.scale_offset",
                "zdt.codecs.packbits", "zdt.codecs.vlen", "zdt.codecs.arrow",
                "zdt.codecs.fixedscaleoffset", "zdt.codecs.steps", "zdt.codecs.layout",
                "zdt.codecs.config_json", "zdt.codecs.numcodecs", "zdt.errors", "zdt.command"]
# ... and without numcodecs (the kernels and the semantics above them)
WITHOUT_NUMCODECS = ["zdt.kernels", "zdt.formats", "zdt.codecs.cast", "zdt.codecs.scale_offset",
                     "zdt.codecs.steps"]


def importable_without(blocked: str, modules: list[str], tmp_path) -> dict:
    script = (f"import json, importlib, sys\nsys.modules[{blocked!r}] = None\nfailed = {{}}\n"
              f"for m in {modules!r}:\n"
              "    try:\n        importlib.import_module(m)\n"
              "    except ImportError as e:\n        failed[m] = str(e)\n"
              "print(json.dumps(failed))\n")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         cwd=tmp_path, timeout=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_the_numcodecs_face_and_everything_below_it_import_without_zarr(tmp_path):
    assert importable_without("zarr", WITHOUT_ZARR, tmp_path) == {}


def test_the_kernels_and_codec_semantics_import_without_numcodecs(tmp_path):
    assert importable_without("numcodecs", WITHOUT_NUMCODECS, tmp_path) == {}


def test_the_zarr_face_does_need_zarr(tmp_path):
    """(the check above would pass if nothing were blocked)"""
    failed = importable_without("zarr", ["zdt.codecs.zarr", "zdt.pipeline", "zdt.dtypes"], tmp_path)
    assert sorted(failed) == ["zdt.codecs.zarr", "zdt.dtypes", "zdt.pipeline"]


def test_every_compiled_module_has_a_stub():
    compiled = sorted({p.name.split(".")[0] for suffix in EXTENSION_SUFFIXES
                       for p in (PACKAGE / "kernels").glob(f"*{suffix}")})
    assert {"_baseline", "_packbits", "_steps", "_types", "_vlen"} <= set(compiled)
    missing = [m for m in compiled if m != "_cyutility" and not (PACKAGE / "kernels" / f"{m}.pyi").exists()]
    assert missing == []


def test_zdt_bench_finds_its_scripts():
    """Installed, they are the package zdt.bench (bench/ of the repository; CI checks the wheel
    holds them); run from the source tree, the checkout's bench/."""
    from zdt.command.bench import FAMILIES, find_bench_dir

    bench = find_bench_dir(None)
    assert {script for script, _, _ in FAMILIES.values()} <= {p.name for p in bench.glob("bench_*.py")}
    assert (bench / "_common.py").is_file()


@pytest.mark.parametrize("module", ["zdt.codecs.zarr", "zdt.pipeline", "zdt.dtypes"])
def test_zarr_face_modules_register_nothing_on_import(module, tmp_path):
    """(the whole package at once: tests/pipeline/test_zarr_citizen.py)"""
    script = ("import json, zarr\nfrom zarr.core.dtype import data_type_registry\n"
              "before = dict(data_type_registry.contents)\n"
              f"import {module}\n"
              "print(json.dumps(before == dict(data_type_registry.contents)))\n")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         cwd=tmp_path, timeout=120)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) is True


# The floors of the package, bottom first: a module imports only from its own floor and below
# (at the top of the file or inside a function alike), so the engine can be used without the
# command, the stores without the engine, the codecs without any of them.
LAYERS = [
    ("ground", ["zdt.errors"]),
    ("kernels", ["zdt.kernels"]),
    ("formats", ["zdt.formats"]),
    ("codecs", ["zdt.codecs", "zdt.dtypes", "zdt.zarr_compat", "zdt.hdf5", "zdt.hdf5_layout"]),
    ("pipeline", ["zdt.pipeline"]),
    ("stores", ["zdt.stores"]),
    ("engine", ["zdt.engine"]),
    ("command", ["zdt.command", "zdt.__main__"]),
]


def _floor(module: str) -> int | None:
    for i, (_, prefixes) in enumerate(LAYERS):
        if any(module == p or module.startswith(p + ".") for p in prefixes):
            return i
    return None


def _imports(path: Path, module: str) -> list[str]:
    import ast

    tree = ast.parse(path.read_text())
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:                       # relative: resolve against the package
                base = module.rsplit(".", node.level)[0]
                out.append(f"{base}.{node.module}" if node.module else base)
            elif node.module == "zdt":          # a module, or one of the package's lazy names
                out += [zdt._LAZY.get(a.name, "zdt.errors" if a.name == "__version__" else f"zdt.{a.name}")
                        for a in node.names]
            elif node.module:
                out += [node.module] + [f"{node.module}.{a.name}" for a in node.names]
    return [m for m in out if m == "zdt" or m.startswith("zdt.")]


def test_every_module_imports_only_from_its_floor_and_below():
    source = Path(__file__).resolve().parents[2] / "zdt"
    upward, unplaced = [], []
    for path in sorted(source.rglob("*.py")):
        rel = path.relative_to(source.parent).with_suffix("")
        module = ".".join(rel.parts[:-1] if rel.name == "__init__" else rel.parts)
        here = _floor(module)
        if module == "zdt":
            continue                    # the package's lazy names reach every floor on purpose
        if here is None:
            unplaced.append(module)
            continue
        for target in _imports(path, module):
            there = _floor(target)
            if target == "zdt" or (there is not None and there > here):
                upward.append(f"{module} imports {target}")
    assert unplaced == []
    assert upward == []


def _edges(path: Path, module: str, names: set[str]) -> set[str]:
    """The modules of `names` that `module` imports (`from P import m` of a module m: P.m)."""
    import ast

    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            out.add(node.module)
            out |= {f"{node.module}.{a.name}" for a in node.names}
    return (out & names) - {module}


def test_the_engine_the_stores_and_the_command_have_no_import_cycle():
    """No two modules of the engine, the stores or the command import each other, directly or
    through others (imports inside functions count)."""
    source = Path(__file__).resolve().parents[2] / "zdt"
    paths = {}
    for package in ("engine", "stores", "command"):
        for path in (source / package).glob("*.py"):
            paths[f"zdt.{package}" + ("" if path.stem == "__init__" else f".{path.stem}")] = path
    edges = {m: _edges(p, m, set(paths)) for m, p in paths.items()}
    state: dict[str, int] = {}
    cycle: list[str] = []

    def visit(m: str, trail: list[str]) -> bool:
        state[m] = 1
        for t in sorted(edges[m]):
            if state.get(t) == 1:
                cycle.extend(trail + [m, t])
                return True
            if t not in state and visit(t, trail + [m]):
                return True
        state[m] = 2
        return False

    for m in sorted(edges):
        if m not in state and visit(m, []):
            break
    assert cycle == []


def test_no_kernel_source_switches_bounds_checks_off():
    """Bounds checks are the build's to set: off in a release build, on with ZDT_CYTHON_DEBUG=1
    (the sanitizer leg's build; setup.py). A directive in a source file (its `# cython:`
    header, a decorator, a `with cython.boundscheck(False)` block) would override the build
    for that file, the debug build included."""
    import re

    kernels = Path(__file__).resolve().parents[2] / "zdt" / "kernels"
    directive = re.compile(r"(boundscheck|wraparound|initializedcheck)\s*[=(]\s*False")
    found = [f"{p.name}:{n}" for p in sorted(kernels.glob("*.p[yx][xdi]"))
             for n, line in enumerate(p.read_text().splitlines(), 1) if directive.search(line)]
    assert sorted(kernels.glob("*.p[yx][xdi]")) and found == []


def test_the_codecs_import_no_circle():
    """No two modules of zdt.codecs import each other, directly or around a circle (at the top
    of the file or inside a function alike): each codec's modules are laid out by job, the
    configuration below the chunk calls below the faces."""
    root = Path(__file__).resolve().parents[2]
    graph: dict[str, set[str]] = {}
    for path in sorted((root / "zdt" / "codecs").rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        module = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        graph[module] = set()
    for module in graph:
        path = root / Path(*module.split("."))
        path = path / "__init__.py" if path.is_dir() else path.with_suffix(".py")
        graph[module] = {m for m in _imports(path, module) if m in graph and m != module}
    state: dict[str, int] = {}

    def visit(m: str, trail: list[str]) -> None:
        state[m] = 1
        for n in sorted(graph[m]):
            if state.get(n) == 1 and not module_is_package_of(n, m):
                raise AssertionError(f"an import circle: {' -> '.join(trail + [m, n])}")
            if n not in state:
                visit(n, trail + [m])
        state[m] = 2

    def module_is_package_of(package: str, module: str) -> bool:
        # (a package's __init__ re-exporting its modules, which import their siblings)
        return module.startswith(package + ".")

    for m in sorted(graph):
        if m not in state:
            visit(m, [])
