"""The report page (`zdt convert --report`, `zdt compare --html`): one self-contained HTML file
whose figures are compare's, with a picture per array, rendered by a real browser (headless
Chromium) and looked at: size, not blank, every array of a 20-array store there."""

from __future__ import annotations

import base64
import html.parser
import io
import json
import re
import shutil
import subprocess
import sys

import numpy as np
import pytest
import zarr
from PIL import Image

import zdt
from store_helpers import run_cmd
from zdt.engine.compare import to_json

BITROUND = [{"name": "bitround", "configuration": {"keepbits": 12}},
            {"name": "bytes", "configuration": {"endian": "little"}},
            {"name": "zstd", "configuration": {"level": 3}}]
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


class Page(html.parser.HTMLParser):
    """What the page holds: each figure cell's (array, key, value), the images, the links."""

    def __init__(self) -> None:
        super().__init__()
        self.array = None
        self.cells: dict[str, dict[str, str]] = {}
        self.images: list[str] = []
        self.refs: list[str] = []
        self.sections = 0
        self.json_text = ""
        self._in_json = False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "table" and "data-array" in a:
            self.array = a["data-array"]
            self.cells[self.array] = {}
        if tag == "td" and "data-key" in a:
            self.cells[self.array][a["data-key"]] = a["data-value"]
        if tag == "img":
            self.images.append(a["src"])
        if tag == "section":
            self.sections += 1
        for k in ("src", "href"):
            if k in a and tag != "img":
                self.refs.append(a[k])
        if tag == "script" and a.get("id") == "zdt-figures":
            self._in_json = True

    def handle_endtag(self, tag):
        if tag == "script":
            self._in_json = False

    def handle_data(self, data):
        if self._in_json:
            self.json_text += data


@pytest.fixture(scope="module")
def twenty(tmp_path_factory):
    """A store of 20 small arrays: 3-d fields (two with NaN gaps), 2-d maps and 1-d series."""
    root = tmp_path_factory.mktemp("report") / "src.zarr"
    rng = np.random.default_rng(7)
    g = zarr.open_group(root, mode="w", zarr_format=3)
    i, j = np.meshgrid(np.arange(24), np.arange(32), indexing="ij")
    for k in range(20):
        if k % 3 == 0:
            v = np.cumsum(rng.normal(0, 1, 600))
        elif k % 3 == 1:
            v = 10 * np.sin(i / (3 + k)) * np.cos(j / 5) + rng.normal(0, 0.05, i.shape)
        else:
            v = np.stack([np.sin(i / 4 + t) * 5 + k for t in range(4)]) + rng.normal(0, 0.05, (4, 24, 32))
            if k % 4 == 0:
                v[:, 5:9, 10:20] = np.nan
        g.create_array(f"v{k:02d}", shape=v.shape, chunks=v.shape, dtype="float64")[...] = v
    return root


def read_page(path) -> Page:
    p = Page()
    p.feed(path.read_text(encoding="utf-8"))
    return p


def test_convert_writes_a_page_that_shows_every_array_with_compares_figures(twenty, tmp_path, capsys):
    """The page of a 20-array store: the figures are compare --json's, each picture a PNG that
    is not blank, nothing fetched; then rendered by headless Chromium with no network and
    looked at: drawn down to the last array, no band of it empty."""
    out, page = tmp_path / "dst.zarr", tmp_path / "report.html"
    # (fixed codecs: no search per array; the decision's picture is the next test's)
    rc, _, err = run_cmd(capsys, "convert", str(twenty), str(out), "--codecs", json.dumps(BITROUND),
                         "--report", str(page), "--quiet")
    assert rc == 0, err
    p = read_page(page)
    rc, text, err = run_cmd(capsys, "compare", str(twenty), str(out), "--json", "--quiet")
    assert rc == 0, err
    figures = json.loads(text)["arrays"]
    assert len(figures) == 20 and set(p.cells) == set(figures) and p.sections == 20
    assert json.loads(p.json_text)["arrays"] == figures
    for name, cells in p.cells.items():
        for key, value in cells.items():
            want = figures[name][key]
            shown = eval(value, {"inf": float("inf"), "nan": float("nan")})     # (repr of a float)
            assert shown == (float(want) if isinstance(want, str) else want), (name, key)
    assert len(p.images) == 20
    for src in p.images:
        assert src.startswith("data:image/png;base64,")
        im = Image.open(io.BytesIO(base64.b64decode(src.split(",", 1)[1]))).convert("L")
        assert im.size[0] > 800 and np.asarray(im).std() > 20
    assert all(r.startswith("#") for r in p.refs), p.refs
    assert not re.search(r"(src|href)=\"(https?:)?//", page.read_text())
    if CHROMIUM is None:
        pytest.skip("the rendering needs Debian's chromium (apt-get install chromium; .ci/run installs it)")
    shot = tmp_path / "shot.png"
    # no network: a proxy nobody listens on, so any fetch the page made would fail
    subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                    "--proxy-server=127.0.0.1:9", "--window-size=1280,20000", f"--screenshot={shot}",
                    page.as_uri()], check=True, capture_output=True, timeout=120)
    im = np.asarray(Image.open(shot).convert("L"), dtype=np.float64)
    assert im.shape == (20000, 1280)
    # 20 sections of about 700 px: drawn down to the last one, no kilopixel band left empty
    rows = im.std(axis=1) > 5
    drawn = np.flatnonzero(rows)
    assert drawn.size > 5000 and drawn.max() > 20 * 600, (drawn.size, drawn.max())
    for band in range(0, 20 * 600, 1000):
        assert rows[band:band + 1000].any(), band


def test_a_conversion_with_a_bound_shows_its_decision_and_compare_the_arrays_named(twenty, tmp_path, capsys):
    """convert --report with a bound: the arrays encoded, each with every encoding measured
    (the decision's picture: bytes against error); compare --html of the arrays named."""
    out, page = tmp_path / "dst.zarr", tmp_path / "convert.html"
    rc, _, err = run_cmd(capsys, "convert", str(twenty), str(out), "--abs-error", "0.01", "--include", "/v0[12]",
                         "--report", str(page), "--quiet")
    assert rc == 0, err
    p = read_page(page)
    assert list(p.cells) == ["/v01", "/v02"] and p.sections == 2 and len(p.images) == 2
    plan = zdt.suggest(twenty, abs_error=0.01, include=["/v01"])
    m = plan["/v01"].measured
    chosen = [c for c in m["candidates"] if c["label"] == m["label"]]
    assert chosen == [{"label": m["label"], "bytes": m["bytes"], "error": m["error"]}]
    assert len(m["candidates"]) >= 2 and all(c["bytes"] > 0 for c in m["candidates"])
    page = tmp_path / "two.html"
    rc, text, err = run_cmd(capsys, "compare", str(twenty), str(out), "v01", "/v02", "--html", str(page),
                            "--abs-error", "0.01", "--quiet")
    assert rc == 0, err
    p = read_page(page)
    assert list(p.cells) == ["/v01", "/v02"] and p.sections == 2 and len(p.images) == 2
    assert text.splitlines()[0] == "/v01"           # (and the table on stdout, as without --html)
    assert "bound abs:0.01" in text and ": pass;" in text


def test_without_matplotlib_the_report_is_one_line_naming_the_extra(twenty, tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)        # (import matplotlib fails)
    rc, _, err = run_cmd(capsys, "compare", str(twenty), str(twenty), "--html", str(tmp_path / "p.html"))
    assert rc == 1 and err == ("zdt compare: the report is drawn with matplotlib, which is not installed: "
                               "pip install 'zdt[report]'\n"), err
    rc, _, err = run_cmd(capsys, "convert", str(twenty), str(tmp_path / "d.zarr"), "--abs-error", "0.1",
                         "--report", str(tmp_path / "p.html"))
    assert rc == 1 and "pip install 'zdt[report]'" in err and len(err.splitlines()) == 1
    assert not (tmp_path / "d.zarr").exists()           # (refused before converting)
    # the figures alone need no matplotlib
    assert to_json(zdt.compare(twenty, twenty, ["v00"]))["arrays"]["/v00"]["max_abs_error"] == 0


def test_a_conversion_that_encodes_nothing_writes_a_page_that_says_so(tmp_path, capsys):
    g = zarr.open_group(tmp_path / "half.zarr", mode="w", zarr_format=3)
    g.create_array("h", shape=(50,), dtype="float16")[...] = np.arange(50)
    page = tmp_path / "nothing.html"
    rc, _, err = run_cmd(capsys, "convert", str(tmp_path / "half.zarr"), str(tmp_path / "d.zarr"),
                         "--abs-error", "0.1", "--report", str(page), "--quiet")
    assert rc == 0, err
    p = read_page(page)
    assert p.sections == 0 and json.loads(p.json_text) == {"arrays": {}}
    assert "No array was compared" in page.read_text()
    # (compare itself looks at the copied array too: no error there)
    rc, out, err = run_cmd(capsys, "compare", str(tmp_path / "half.zarr"), str(tmp_path / "d.zarr"), "--json")
    assert rc == 0 and json.loads(out)["arrays"]["/h"]["max_abs_error"] == 0
    g.create_array("s", shape=(3,), dtype=str)[...] = ["a", "b", "c"]
    rc, out, err = run_cmd(capsys, "compare", str(tmp_path / "half.zarr"), str(tmp_path / "half.zarr"),
                           "--json", "--quiet", "--bound", "/h=abs:1")
    assert rc == 0 and list(json.loads(out)["arrays"]) == ["/h"]        # (strings left out)
    rc, out, err = run_cmd(capsys, "compare", str(tmp_path / "half.zarr:s"), str(tmp_path / "half.zarr:s"),
                           "--json")
    assert rc == 1 and json.loads(out) == {"arrays": {}}
    assert err == f"zdt compare: no numeric array is in both {tmp_path / 'half.zarr:s'} and {tmp_path / 'half.zarr:s'}\n"
