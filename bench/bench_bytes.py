"""Bytes on disk: `zdt convert` against the recipes people use today, on real data, at the same
error bounds and the same zstd level.

    python bench/bench_bytes.py [--level 3] [--markdown]

The data ship with packages (whichever are installed): matplotlib's sample data (an elevation
and depth grid off Washington, float32; a fault-zone elevation model, int16; daily stock
prices, float64), pvlib's TMY3 hourly weather for Greensboro NC (temperature, wind speed,
irradiance, relative humidity), vega_datasets' hourly Seattle temperatures (the demo's data).

Per array and bound, the bytes of its chunks (metadata excluded):
- source: as stored with zstd at --level, no filter;
- zdt: `zdt convert --abs-error E | --rel-error R --compressor zstd:LEVEL` (the whole command);
- the numcodecs recipes, each then Zstd(LEVEL) on the same chunks: FixedScaleOffset (offset at
  the data's floor, scale 1/(2E), the narrowest unsigned type that holds the range),
  Quantize (the fewest digits whose step keeps E), BitRound (keepbits = ceil(-log2 R) - 1);
- reference points only, whole-array compressors no other zarr implementation reads:
  ZFP fixed accuracy (zfpy, tolerance E) and SZ3 (pysz, absolute bound E).

Every result's error is checked (zdt.engine.bounds.error_of, exact): one that breaks the
bound, or loses a NaN, is shown struck out (~~n~~) and is not a valid alternative.
"""

from __future__ import annotations

import argparse
import csv
import math
import tempfile
from pathlib import Path

import _common  # noqa: F401  (sets BLAS threads before numpy starts)
import numcodecs
import numpy as np

from _common import header

SEP = "|"


def datasets() -> list[tuple[str, np.ndarray, str, tuple[int, ...]]]:
    """(name, data, unit, chunks) from the packages installed."""
    out = []
    try:
        from matplotlib import cbook

        topo = cbook.get_sample_data("topobathy.npz")["topo"]
        out.append(("elevation/depth off Washington (matplotlib topobathy)", topo, "m", topo.shape))
        dem = cbook.get_sample_data("jacksboro_fault_dem.npz")["elevation"]
        out.append(("fault-zone elevation model (matplotlib jacksboro, int16)", dem, "m", (172, 403)))
        close = cbook.get_sample_data("goog.npz")["price_data"]["close"].astype(np.float64)
        out.append(("daily closing price (matplotlib goog)", close, "USD", close.shape))
    except ImportError:
        print("(matplotlib not installed: its sample data are left out)")
    try:
        import pvlib

        path = Path(pvlib.__file__).parent / "data" / "723170TYA.CSV"
        with open(path, newline="") as f:
            rows = list(csv.reader(f))[1:]
        head, body = rows[0], rows[1:]
        for col, label, unit in (("Dry-bulb (C)", "hourly temperature", "C"),
                                 ("Wspd (m/s)", "hourly wind speed", "m/s"),
                                 ("GHI (W/m^2)", "hourly irradiance", "W/m2"),
                                 ("RHum (%)", "hourly relative humidity", "%")):
            i = head.index(col)
            x = np.array([float(r[i]) for r in body])
            out.append((f"{label}, Greensboro NC (pvlib TMY3)", x, unit, (x.size,)))
    except ImportError:
        print("(pvlib not installed: its TMY3 weather is left out)")
    try:
        from importlib import resources

        text = (resources.files("vega_datasets") / "_data" / "seattle-temps.csv").read_text()
        temps = np.array([float(r["temp"]) for r in csv.DictReader(text.splitlines())])
        out.append(("hourly temperature, Seattle (vega_datasets)", temps, "F", (temps.size,)))
    except ModuleNotFoundError:
        print("(vega_datasets not installed: the demo's temperatures are left out)")
    return out


def chunk_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and p.name != "zarr.json")


def source_store(root: Path, x: np.ndarray, chunks: tuple[int, ...], level: int) -> Path:
    import zarr

    path = root / "src"
    fill = np.nan if x.dtype.kind == "f" else 0
    a = zarr.create_array(path, shape=x.shape, chunks=chunks, dtype=x.dtype, fill_value=fill,
                          compressors=[{"name": "zstd", "configuration": {"level": level}}])
    a[...] = x
    return path


def zdt_bytes(root: Path, src: Path, flag: str, value: float, level: int) -> tuple[int, np.ndarray, str]:
    import contextlib
    import io

    import zarr

    from zdt.command import main

    dst = root / f"zdt{flag}{value}"
    with contextlib.redirect_stdout(io.StringIO()):
        rc = main(["convert", str(src), str(dst), flag, str(value), "--compressor",
                   f"zstd:{level}", "--quiet"])
    assert rc == 0
    a = zarr.open_array(dst)
    parts = []
    for c in (c.to_dict() for c in a.metadata.codecs):
        conf = c.get("configuration", {})
        if c["name"] == "cast_value":
            parts.append(f"cast_value {conf['data_type']}")
        elif c["name"] == "bitround":
            parts.append(f"bitround {conf['keepbits']}")
        elif c["name"] == "scale_offset":
            parts.append("scale_offset")
    return chunk_bytes(dst), a[...], " + ".join(parts) or "copied"


def chunked(x: np.ndarray, chunks: tuple[int, ...]):
    """Every chunk of x, padded to the full chunk shape with the fill value (as zarr does)."""
    fill = np.nan if x.dtype.kind == "f" else 0
    grid = [range(0, n, c) for n, c in zip(x.shape, chunks, strict=True)]
    for start in np.ndindex(*[len(g) for g in grid]):
        sel = tuple(slice(g[i], g[i] + c) for g, i, c in zip(grid, start, chunks, strict=True))
        part = x[sel]
        full = np.full(chunks, fill, dtype=x.dtype)
        full[tuple(slice(0, k) for k in part.shape)] = part
        yield sel, part, full


def recipe(x: np.ndarray, chunks: tuple[int, ...], codec, level: int) -> tuple[int, np.ndarray]:
    zstd = numcodecs.Zstd(level=level)
    total, back = 0, np.empty_like(x)
    for sel, part, full in chunked(x, chunks):
        with np.errstate(all="ignore"):
            enc = codec.encode(full)
        total += len(zstd.encode(np.ascontiguousarray(enc)))
        dec = np.asarray(codec.decode(enc)).reshape(full.shape).view(x.dtype)
        back[sel] = dec[tuple(slice(0, k) for k in part.shape)]
    return total, back


def recipes(x: np.ndarray, chunks, kind: str, value: float, level: int) -> dict[str, tuple[int, np.ndarray]]:
    out = {}
    if x.dtype.kind != "f" and kind == "abs":     # integers: the one recipe that takes them
        offset, top = int(x.min()), (int(x.max()) - int(x.min())) / (2 * value)
        astype = next((t for t in ("u1", "u2", "u4") if top + 1 < np.iinfo(t).max), None)
        if astype and np.dtype(astype).itemsize <= x.dtype.itemsize:
            out["numcodecs FixedScaleOffset"] = recipe(x, chunks, numcodecs.FixedScaleOffset(
                offset=offset, scale=1 / (2 * value), dtype=x.dtype.str, astype=astype), level)
        return out
    if x.dtype.kind != "f":
        return out
    finite = x[np.isfinite(x)]
    if kind == "abs":
        offset = math.floor(finite.min())
        top = (finite.max() - offset) / (2 * value)
        astype = next((t for t in ("u1", "u2", "u4") if top + 1 < np.iinfo(t).max), None)
        if astype and np.dtype(astype).itemsize < x.dtype.itemsize:
            out["numcodecs FixedScaleOffset"] = recipe(x, chunks, numcodecs.FixedScaleOffset(
                offset=offset, scale=1 / (2 * value), dtype=x.dtype.str, astype=astype), level)
        digits = next(d for d in range(-20, 40)
                      if 2.0 ** -(math.ceil(math.log2(10.0 ** d)) + 1) <= value)
        out["numcodecs Quantize"] = recipe(x, chunks, numcodecs.Quantize(digits=digits, dtype=x.dtype), level)
        try:
            import zfpy

            z = zfpy.compress_numpy(np.ascontiguousarray(x), tolerance=value)
            out["ZFP (zfpy, fixed accuracy)"] = (len(z), zfpy.decompress_numpy(z))
        except ImportError:
            pass
        try:
            import pysz

            cfg = pysz.szConfig()
            cfg.errorBoundMode = pysz.szErrorBoundMode.ABS
            cfg.absErrorBound = value
            comp, _ = pysz.sz.compress(np.ascontiguousarray(x), cfg)
            out["SZ3 (pysz, absolute)"] = (len(comp), pysz.sz.decompress(comp, x.dtype, x.shape)[0])
        except ImportError:
            pass
    else:
        keepbits = max(1, math.ceil(-math.log2(value)) - 1)
        if keepbits < np.finfo(x.dtype).nmant:
            out[f"numcodecs BitRound({keepbits})"] = recipe(x, chunks, numcodecs.BitRound(keepbits=keepbits), level)
    return out


def bounds_for(name: str, x: np.ndarray) -> list[tuple[str, float]]:
    spread = float(np.nanmax(x) - np.nanmin(x))
    small = 10.0 ** math.floor(math.log10(spread / 1000))        # about 1/1000 of the range
    out = [("abs", small), ("abs", small * 10)]
    if x.dtype.kind == "f":
        out += [("rel", 1e-2), ("rel", 1e-3)]
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--level", type=int, default=3, help="zstd level for everything")
    args = p.parse_args()
    header("bytes on disk at the same bound")
    from zdt.engine.bounds import Bound, error_of

    total_zdt = total_best = 0
    print(f"\n{SEP} data {SEP} bound {SEP} source {SEP} zdt {SEP} zdt's encoding {SEP} numcodecs recipes "
          f"{SEP} ZFP / SZ3 (reference) {SEP}")
    print(f"{SEP}---{SEP}---{SEP}---:{SEP}---:{SEP}---{SEP}---{SEP}---{SEP}")
    for name, x, unit, chunks in datasets():
        for kind, value in bounds_for(name, x):
            with tempfile.TemporaryDirectory() as tmp:
                root = Path(tmp)
                src = source_store(root, x, chunks, args.level)
                flag = "--abs-error" if kind == "abs" else "--rel-error"
                ours, back, detail = zdt_bytes(root, src, flag, value, args.level)
                bound = Bound(kind, value)
                assert error_of(x, back, bound) <= value
                others, refs = [], []
                best = None
                for label, (n, y) in recipes(x, chunks, kind, value, args.level).items():
                    ok = error_of(x, np.asarray(y).reshape(x.shape), bound) <= value
                    text = f"{label.split(' (')[0].replace('numcodecs ', '')} {n:,}" if ok else \
                        f"{label.split(' (')[0].replace('numcodecs ', '')} ~~{n:,}~~"
                    (refs if "ZFP" in label or "SZ3" in label else others).append(text)
                    if ok and "numcodecs" in label:
                        best = n if best is None else min(best, n)
                if best is not None:
                    total_zdt += ours
                    total_best += best
                shown = f"{'abs' if kind == 'abs' else 'rel'} {value:g}{' ' + unit if kind == 'abs' else ''}"
                print(f"{SEP} {name} {SEP} {shown} {SEP} {chunk_bytes(src):,} {SEP} **{ours:,}** {SEP} "
                      f"{detail} {SEP} {'; '.join(others) or '-'} {SEP} {'; '.join(refs) or '-'} {SEP}")
    if total_best:
        print(f"\nwhere a numcodecs recipe keeps the bound: zdt writes {total_zdt:,} bytes, the "
              f"smallest recipe {total_best:,} ({total_zdt / total_best:.2f}x)")


if __name__ == "__main__":
    main()
