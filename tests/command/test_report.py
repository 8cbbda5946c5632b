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
from pathlib import Path

import numpy as np
import pytest
import zarr
from PIL import Image

import zdt
from store_helpers import run_cmd
from zdt.command import main
from zdt.engine import compare as cmp
from zdt.engine import report
from zdt.engine.bounds import Bound
from zdt.engine.compare import to_json

BITROUND = [{"name": "bitround", "configuration": {"keepbits": 12}},
            {"name": "bytes", "configuration": {"endian": "little"}},
            {"name": "zstd", "configuration": {"level": 3}}]
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


class Page(html.parser.HTMLParser):
    """What the page holds: each figure cell's (array, key, value), the images (and each by the
    array its section names), the links, the sections that say their array is identical."""

    def __init__(self) -> None:
        super().__init__()
        self.array = None
        self.cells: dict[str, dict[str, str]] = {}
        self.images: list[str] = []
        self.pictures: dict[str, str] = {}
        self.refs: list[str] = []
        self.sections = 0
        self.headings: list[str] = []
        self.identical: dict[str, str] = {}
        self.json_text = ""
        self._in = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "table" and "data-array" in a:
            self.array = a["data-array"]
            self.cells[self.array] = {}
        if tag == "td" and "data-key" in a:
            self.cells[self.array][a["data-key"]] = a["data-value"]
        if tag == "img":
            self.images.append(a["src"])
            self.pictures[self.headings[-1]] = a["src"]
        if tag == "section":
            self.sections += 1
        if tag == "h2":
            self.headings.append("")
            self._in = "h2"
        if tag == "p" and a.get("class") == "identical":
            self.identical[self.headings[-1]] = ""
            self._in = "identical"
        for k in ("src", "href"):
            if k in a and tag != "img":
                self.refs.append(a[k])
        if tag == "script" and a.get("id") == "zdt-figures":
            self._in = "json"

    def handle_endtag(self, tag):
        if tag in ("script", "h2", "p"):
            self._in = None

    def handle_data(self, data):
        if self._in == "json":
            self.json_text += data
        elif self._in == "h2":
            self.headings[-1] += data
        elif self._in == "identical":
            self.identical[self.headings[-1]] += data


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


@pytest.mark.slow
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


# --- the maps of real files: iris-sample-data's netCDF, written to zarr by xarray --------------
def sample_file(name: str) -> Path:
    import iris_sample_data

    return Path(iris_sample_data.__file__).parent / "sample_data" / name


def write_and_convert(root: Path, name: str, ds, zarr_format: int = 3, *args: str) -> None:
    """ds written by xarray at root/NAME.zarr, converted by the command to root/NAME.out with
    its report at root/NAME.html (args: the bound or codecs)."""
    ds.to_zarr(root / f"{name}.zarr", zarr_format=zarr_format, consolidated=False)
    assert main(["convert", str(root / f"{name}.zarr"), str(root / f"{name}.out"), *args,
                 "--report", str(root / f"{name}.html"), "--quiet"]) == 0


def drawn(src: Path, dst: Path, name: str, bound: Bound | None):
    """The figure the report draws of array `name` (as compare --html gathers it), drawn."""
    a, b = zarr.open_group(src, mode="r"), zarr.open_group(dst, mode="r")
    coords = cmp.Coordinates(a, [arr for _, arr in a.arrays()])
    _, views = cmp._compare_array(name, a[name[1:]], b[name[1:]], bound, cmp.MAX_SLICES, None, True, coords)
    fig = report.figure(name, views, None)
    fig.canvas.draw()
    return fig


def png_of(src: str) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(base64.b64decode(src.split(",", 1)[1]))).convert("RGB"))


def maps(fig) -> list:
    """The source, decoded and difference maps (the axes titled so)."""
    return [ax for ax in fig.axes if ax.get_title().startswith(("source ", "decoded ", "decoded - source"))]


def colour_at(png: np.ndarray, ax, x: float, y: float) -> np.ndarray:
    """The page picture's colour at the point (x, y) of ax's data coordinates."""
    px, py = ax.transData.transform((x, y))
    return png[png.shape[0] - 1 - int(py), int(px)].astype(int)


def colour_of(artist, value: float) -> np.ndarray:
    """The colour the map's artist gives a value (its "bad" colour to NaN)."""
    rgba = artist.cmap.get_bad() if np.isnan(value) else artist.to_rgba(value)
    return np.round(np.asarray(rgba[:3]) * 255).astype(int)


def same_colour_share(png: np.ndarray, ax, rows: np.ndarray, cols: np.ndarray, values: np.ndarray) -> float:
    """The share of the map's cells (centre of cell i, j at (cols[j], rows[i]) in ax's data
    coordinates) whose centre in the picture has the colour of values[i, j]."""
    artist = (ax.get_images() or ax.collections)[0]
    same = []
    for i, r in enumerate(rows):
        for j, c in enumerate(cols):
            same.append(np.abs(colour_at(png, ax, c, r) - colour_of(artist, values[i, j])).max() <= 1)
    return float(np.mean(same))


@pytest.fixture(scope="module")
def north_america(tmp_path_factory):
    """E1_north_america.nc's air temperature (latitude stored ascending, 15 to 60 N; 12 of its
    240 months) written as stored, with latitude descending, with its axes stored (longitude,
    latitude), and in zarr format 2 (_ARRAY_DIMENSIONS); each converted at abs:0.05 with a
    report."""
    import xarray as xr

    ds = xr.open_dataset(sample_file("E1_north_america.nc")).isel(time=slice(0, 12)).load()
    root = tmp_path_factory.mktemp("maps")
    for name, variant, zarr_format in (("ascending", ds, 3),
                                       ("descending", ds.isel(latitude=slice(None, None, -1)), 3),
                                       ("lon_lat", ds.transpose("time", "longitude", "latitude", ...), 3),
                                       ("format2", ds, 2)):
        write_and_convert(root, name, variant, zarr_format, "--abs-error", "0.05")
    return root, ds


@pytest.mark.parametrize("variant", ["ascending", "descending", "lon_lat", "format2"])
def test_maps_are_drawn_north_up_on_their_coordinates_however_latitude_is_stored(north_america, variant):
    """The report of a real regional field: latitude on the vertical axis, increasing upward,
    ticks in degrees; every cell found by its latitude and longitude in the page's picture has
    the colour of the netCDF file's value there (drawn by array index, none would)."""
    root, ds = north_america
    page = read_page(root / f"{variant}.html")
    png = png_of(page.pictures["/air_temperature"])
    fig = drawn(root / f"{variant}.zarr", root / f"{variant}.out", "/air_temperature", Bound("abs", 0.05))
    assert not [t.get_text() for t in fig.texts if "index" in t.get_text()]
    lat, lon = ds.latitude.values, ds.longitude.values          # 15 .. 60 N by 1.25, 225 .. 315 E
    for ax in maps(fig):
        assert ax.get_ylabel() == "latitude (degrees_north)" and ax.get_xlabel() == "longitude (degrees_east)"
        bottom, top = ax.get_ylim()
        assert bottom == pytest.approx(lat.min() - 0.625) and top == pytest.approx(lat.max() + 0.625)
        assert ax.get_xlim() == pytest.approx((lon.min() - 0.9375, lon.max() + 0.9375))
        shown = [(float(t.get_text().replace("\u2212", "-")), v)
                 for t, v in zip(ax.get_yticklabels(), ax.get_yticks(), strict=True) if bottom <= v <= top]
        assert len(shown) >= 3 and all(label == v and 15 <= v <= 60 for label, v in shown), shown
    source = maps(fig)[0]
    month = int(re.match(r"source \[(\d+), ", source.get_title()).group(1))
    t = ds.air_temperature.isel(time=month).transpose("latitude", "longitude").values
    assert same_colour_share(png, source, lat, lon, t) == 1.0
    # (not a uniform picture: its north-east and south-east corners differ)
    assert (colour_at(png, source, lon[-1], lat[-1]) != colour_at(png, source, lon[-1], lat[0])).any()


def test_an_array_compared_alone_finds_its_coordinates_in_its_group(north_america, tmp_path, capsys):
    """compare --html of STORE:ARRAY (its group not walked): the same picture as of the
    store, on the coordinates (the cells where the file's values are)."""
    root, ds = north_america
    src, dst = root / "descending.zarr", root / "descending.out"
    pngs = []
    for name, args in (("store", [str(src), str(dst), "/air_temperature"]),
                       ("alone", [f"{src}:air_temperature", f"{dst}:air_temperature"])):
        rc, _, err = run_cmd(capsys, "compare", *args, "--abs-error", "0.05",
                             "--html", str(tmp_path / f"{name}.html"), "--quiet")
        assert rc == 0, err
        pngs.append(png_of(read_page(tmp_path / f"{name}.html").pictures["/air_temperature"]))
    assert np.array_equal(*pngs)
    source = maps(drawn(src, dst, "/air_temperature", Bound("abs", 0.05)))[0]
    month = int(re.match(r"source \[(\d+), ", source.get_title()).group(1))
    t = ds.air_temperature.isel(time=month).values
    assert same_colour_share(pngs[0], source, ds.latitude.values, ds.longitude.values, t) == 1.0


def index_map_share(png: np.ndarray, ax, values: np.ndarray, step: int = 3) -> float:
    """For a map on index axes: the share of the picture's pixels (every `step`-th, inside the
    axes) whose colour is that of the element of `values` their centre falls in."""
    artist = (ax.get_images() or ax.collections)[0]
    box = ax.get_window_extent()
    to_data = ax.transData.inverted()
    same = []
    for py in range(int(box.y0) + 1, int(box.y1) - 1, step):
        for px in range(int(box.x0) + 1, int(box.x1) - 1, step):
            x, y = to_data.transform((px + 0.5, py + 0.5))
            i, j = int(np.floor(y + 0.5)), int(np.floor(x + 0.5))
            if 0 <= i < values.shape[0] and 0 <= j < values.shape[1]:
                got = png[png.shape[0] - 1 - py, px].astype(int)
                same.append(np.abs(got - colour_of(artist, values[i, j])).max() <= 1)
    return float(np.mean(same))


@pytest.mark.parametrize("flip", [False, True])
def test_a_curvilinear_grid_is_drawn_on_index_axes_with_a_note_north_up(tmp_path, capsys, flip):
    """NEMO's ORCA ocean grid (2-d nav_lat and nav_lon, no 1-d coordinates): index axes and a
    note saying why; the rows of larger nav_lat drawn higher, stored south to north (as NEMO
    writes it) or north to south."""
    import xarray as xr

    ds = xr.open_dataset(sample_file("NEMO/nemo_1m_20150101-20150201_grid-T.nc")).load()
    if flip:
        ds = ds.isel(y=slice(None, None, -1))
    write_and_convert(tmp_path, "nemo", ds, 3, "--abs-error", "0.05")
    page = read_page(tmp_path / "nemo.html")
    png = png_of(page.pictures["/tos"])
    fig = drawn(tmp_path / "nemo.zarr", tmp_path / "nemo.out", "/tos", Bound("abs", 0.05))
    assert "index axes: nav_lat and nav_lon are 2-d (a curvilinear grid)" in [t.get_text() for t in fig.texts]
    lat = ds.nav_lat.values.mean(axis=1)                # per row
    north, south = int(lat.argmax()), int(lat.argmin())
    for ax in maps(fig):
        assert (ax.get_ylabel(), ax.get_xlabel()) == ("y (index)", "x (index)")
        assert ax.transData.transform((0, north))[1] > ax.transData.transform((0, south))[1] + 100
    source = maps(fig)[0]
    tos = ds.tos.isel(time_counter=0).values
    assert index_map_share(png, source, tos) > 0.9
    assert index_map_share(png, source, tos[::-1]) < 0.6         # (the picture tells up from down)
    # the array alone (no coordinate named y or x in its group: looked for there, not found)
    pngs = []
    for name, args in (("store", [str(tmp_path / "nemo.zarr"), str(tmp_path / "nemo.out"), "/tos"]),
                       ("alone", [f"{tmp_path / 'nemo.zarr'}:tos", f"{tmp_path / 'nemo.out'}:tos"])):
        rc, _, err = run_cmd(capsys, "compare", *args, "--html", str(tmp_path / f"{name}.html"), "--quiet")
        assert rc == 0, err
        pngs.append(png_of(read_page(tmp_path / f"{name}.html").pictures["/tos"]))
    assert np.array_equal(*pngs)


def test_an_array_without_dimension_names_is_drawn_on_index_axes_row_zero_at_the_bottom(tmp_path):
    """Real values in an array that names no dimensions: index axes, a note, row 0 at the
    bottom, each cell where its indices say."""
    import xarray as xr

    t = xr.open_dataset(sample_file("E1_north_america.nc")).air_temperature.values[:6]
    g = zarr.open_group(tmp_path / "bare.zarr", mode="w", zarr_format=3)
    g.create_array("t", shape=t.shape, chunks=(1, *t.shape[1:]), dtype=t.dtype)[...] = t
    assert main(["convert", str(tmp_path / "bare.zarr"), str(tmp_path / "bare.out"), "--abs-error", "0.05",
                 "--report", str(tmp_path / "bare.html"), "--quiet"]) == 0
    png = png_of(read_page(tmp_path / "bare.html").pictures["/t"])
    fig = drawn(tmp_path / "bare.zarr", tmp_path / "bare.out", "/t", Bound("abs", 0.05))
    assert "index axes: the array names no dimensions" in [x.get_text() for x in fig.texts]
    source = maps(fig)[0]
    assert (source.get_ylabel(), source.get_xlabel()) == ("axis 1 (index)", "axis 2 (index)")
    assert source.get_ylim() == (-0.5, t.shape[1] - 0.5)
    i = int(re.match(r"source \[(\d+), ", source.get_title()).group(1))
    rows, cols = np.arange(t.shape[1]), np.arange(t.shape[2])
    assert same_colour_share(png, source, rows, cols, t[i]) == 1.0


@pytest.fixture(scope="module")
def ostia(tmp_path_factory):
    """OSTIA's monthly sea-surface temperature (5 S to 5 N, land as _FillValue; 6 months),
    converted at abs:0.00025 with a report."""
    import xarray as xr

    ds = xr.open_dataset(sample_file("ostia_monthly.nc")).isel(time=slice(0, 6)).load()
    root = tmp_path_factory.mktemp("ostia")
    write_and_convert(root, "ostia", ds, 3, "--abs-error", "0.00025")
    return root


def decimals_shown(label: str) -> float:
    """Half a unit of the label's last digit ("0.000125": 5e-7; "2.5e-07": 5e-9)."""
    mantissa, _, exponent = label.partition("e")
    digits = len(mantissa.partition(".")[2])
    return 0.5 * 10.0 ** (int(exponent or 0) - digits)


def shown_ticks(axis) -> list[tuple[str, float]]:
    """(label, tick) of the ticks inside the axis's view (minus signs as ASCII)."""
    lo, hi = sorted(axis.get_view_interval())
    return [(t.get_text().replace("\u2212", "-"), v)
            for t, v in zip(axis.get_ticklabels(), axis.get_ticklocs(), strict=True) if lo <= v <= hi]


@pytest.mark.parametrize("bound", [Bound("abs", 0.00025), Bound("rel", 1e-6), None])
def test_colour_bar_labels_are_distinct_and_read_their_ticks_and_the_ends(ostia, bound):
    """The colour bars of a real field (and the histogram's axis): every label a tick shows
    reads that tick to its last digit, no two alike. The difference's bar ends at the bound
    0.00025, its end labels reading it (not -0.0002); without an absolute bound, at the
    largest error rounded up to two digits."""
    fig = drawn(ostia / "ostia.zarr", ostia / "ostia.out", "/surface_temperature", bound)
    bars = [ax for ax in fig.axes if ax.get_label() == "<colorbar>"]
    assert len(bars) == 3
    hist = next(ax for ax in fig.axes if ax.get_title().startswith("errors"))
    for axis in [*(b.yaxis for b in bars), hist.xaxis]:
        labels = [t for t, _ in shown_ticks(axis)]
        assert len(labels) >= 3 and len(set(labels)) == len(labels), labels
        for text, v in shown_ticks(axis):
            assert abs(float(text) - v) <= decimals_shown(text) * (1 + 1e-9), (text, v)
    lo, hi = sorted(bars[2].yaxis.get_view_interval())
    ends = {float(t) for t, _ in shown_ticks(bars[2].yaxis)}
    assert lo == -hi and {lo, hi} <= ends, ends
    if bound is not None and not bound.relative:
        assert hi == 0.00025
    else:
        worst = zdt.compare(ostia / "ostia.zarr", ostia / "ostia.out", "/surface_temperature")
        worst = worst["arrays"]["/surface_temperature"]["max_abs_error"]
        assert worst <= hi < worst * 1.1 and float(f"{hi:.2g}") == hi, (worst, hi)


def test_tick_labels_have_the_digits_their_ticks_need():
    assert report.tick_labels([-0.00025, -0.000125, 0.0, 0.000125, 0.00025]) == [
        "-0.000250", "-0.000125", "0.000000", "0.000125", "0.000250"]
    assert report.tick_labels([287.999, 287.9995, 288.0, 288.0005]) == [
        "287.9990", "287.9995", "288.0000", "288.0005"]
    assert report.tick_labels([1.0, 1.000001, 1.000002]) == ["1.000000", "1.000001", "1.000002"]
    assert report.tick_labels([-2e-7, 0.0, 2e-7, 4e-7]) == ["-2e-07", "0", "2e-07", "4e-07"]
    assert report.tick_labels([1e20, 1.5e20]) == ["1.0e+20", "1.5e+20"]
    # a locator's ticks with rounding noise read as the round numbers they stand for
    assert report.tick_labels([-0.1 * 3, -1e-17, 0.1 + 0.2]) == ["-0.3", "0.0", "0.3"]


def test_arrays_copied_exactly_get_one_line_not_a_picture(ostia, tmp_path, capsys):
    """compare --html of a conversion: the coordinates it copied say so in one line (no
    figures, no picture), the field has its picture; the summary lists every array. A
    conversion with lossless codecs: every array it encoded is one line."""
    page = tmp_path / "compare.html"
    rc, _, err = run_cmd(capsys, "compare", str(ostia / "ostia.zarr"), str(ostia / "ostia.out"),
                         "--html", str(page), "--quiet")
    assert rc == 0, err
    p = read_page(page)
    figures = json.loads(p.json_text)["arrays"]
    exact = {name for name, f in figures.items() if f["max_abs_error"] == 0}
    assert {"/latitude", "/longitude", "/time"} <= exact and "/surface_temperature" not in exact
    assert set(p.identical) == exact and set(p.pictures) == {"/surface_temperature"}
    assert set(p.cells) == {"/surface_temperature"} and p.sections == len(figures)
    assert all(text.startswith("Identical to the source: every value equal") for text in p.identical.values())
    assert sorted(r for r in p.refs if r.startswith("#a")) == sorted(f"#a{i}" for i in range(len(figures)))
    lossless = json.dumps([{"name": "bytes", "configuration": {"endian": "little"}},
                           {"name": "zstd", "configuration": {"level": 3}}])
    rc, _, err = run_cmd(capsys, "convert", str(ostia / "ostia.zarr"), str(tmp_path / "exact.zarr"),
                         "--codecs", lossless, "--report", str(tmp_path / "exact.html"), "--quiet")
    assert rc == 0, err
    p = read_page(tmp_path / "exact.html")
    assert "/surface_temperature" in p.identical and p.images == [] and p.cells == {}
