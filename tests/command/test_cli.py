"""The `zdt` command and the newcomer path: the console script, `python -m zdt`, and the message
an unbuilt source tree gives instead of an ImportError about a private module."""

from __future__ import annotations

import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import zdt

SCRIPTS = Path(sysconfig.get_path("scripts"))


def run(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(args, capture_output=True, text=True, cwd=cwd, timeout=120)


def test_console_script_is_installed_and_lists_its_commands(tmp_path):
    out = run([str(SCRIPTS / "zdt"), "--help"], tmp_path)
    assert out.returncode == 0, out.stderr
    assert "demo" in out.stdout and "usage: zdt" in out.stdout


def test_no_command_prints_usage_and_fails(tmp_path):
    out = run([str(SCRIPTS / "zdt")], tmp_path)
    assert out.returncode == 2 and "usage: zdt" in out.stderr


def test_python_dash_m_runs_the_same_command(tmp_path):
    out = run([sys.executable, "-m", "zdt", "demo", "--help"], tmp_path)
    assert out.returncode == 0, out.stderr
    assert "usage: zdt demo" in out.stdout


def test_an_unbuilt_source_tree_says_what_to_do(tmp_path):
    """What `python -m zdt demo` at the root of a fresh clone used to hit: Python imports the
    source tree (the current directory comes first on sys.path), which has no compiled
    extensions. A copy of the package's Python files beside a setup.py is such a tree."""
    package = Path(zdt.__file__).parent
    shutil.copytree(package, tmp_path / "zdt",
                    ignore=shutil.ignore_patterns("*.so", "*.pyd", "*.c", "__pycache__"))
    (tmp_path / "setup.py").write_text("")
    # -S: no site-packages, so not even an editable install's import hook can supply the real
    # package; the check runs before zdt imports anything else
    out = run([sys.executable, "-S", "-m", "zdt", "demo"], tmp_path)
    assert out.returncode != 0
    last = out.stderr.strip().splitlines()[-1]
    assert last.startswith("ImportError: zdt is being imported from its source tree"), out.stderr
    assert "zdt demo" in last and "pip install -e ." in last
    assert "_types" not in last and "_kernels" not in last


def test_the_demo_runs_the_main_job_on_real_data(tmp_path):
    """`zdt demo` (without its speed step): the codecs, the strings, and `zdt convert` shrinking
    a real store within its bounds (the demo checks every error again itself)."""
    out = run([str(Path(sysconfig.get_path("scripts")) / "zdt"), "demo", "--tiles", "0"], tmp_path)
    assert out.returncode == 0, out.stderr
    assert "== zdt convert: weather.zarr" in out.stdout
    assert "/time: copied (a coordinate" in out.stdout
    table = out.stdout.split("largest error (checked here)")[1].splitlines()[1:8]
    sizes = {line.split()[0]: (int(line.split()[1].replace(",", "")), int(line.split()[2].replace(",", "")))
             for line in table}
    assert sum(a for _, a in sizes.values()) < sum(b for b, _ in sizes.values())
    assert sizes["time"][0] == sizes["time"][1] and sizes["weather"][0] == sizes["weather"][1]
    # nothing but the demo's own output (zarr's note on numcodecs codecs in v3 used to land in
    # the middle of the table, once per array it opened)
    assert "Warning" not in out.stderr, out.stderr
