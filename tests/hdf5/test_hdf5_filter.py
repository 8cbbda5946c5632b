"""zdt.predict as an HDF5 filter (zdt.hdf5, libzdtpredict/hdf5; docs/codecs/predict.md, "HDF5
face"): h5py writes and reads it, float32 and float64, NaN and a fill value, chunks of 1 to 4
dimensions with edge chunks, int16; every element within the bound in exact arithmetic; the
chunk bytes in the file are the zarr face's chunks (both ways); xarray through h5netcdf;
Debian's h5dump, ncdump, h5repack and nccopy with HDF5_PLUGIN_PATH; netCDF4-python reads;
the errors (an unknown layout, a filter before it, a type it does not code, a corrupt chunk,
a reader without the plugin) are loud and name the filter."""

from __future__ import annotations

import os
import re
import shutil
import struct
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from exact import check_relative, check_within

h5py = pytest.importorskip("h5py")
try:
    import zdt.hdf5 as zh5
except ImportError as e:          # the plugin was not built (no libzstd-dev at build time)
    pytest.skip(str(e), allow_module_level=True)

from zdt.codecs.predict import PredictConfig  # noqa: E402

ID = zh5.FILTER_ID


def env_with_plugin(**extra: str) -> dict[str, str]:
    env = dict(os.environ, HDF5_PLUGIN_PATH=zh5.PLUGIN_PATH)
    env.update(extra)
    return env


def tool(name: str, package: str) -> str:
    path = shutil.which(name)
    if path is None:
        pytest.skip(f"{name} is not installed (Debian: apt-get install {package})")
    return path


def field(shape: tuple[int, ...], dtype: str, seed: int, nan: bool = True,
          fill: float | None = None) -> np.ndarray:
    """A smooth field with noise, a hole of NaN and a patch of the fill value."""
    rng = np.random.default_rng(seed)
    grids = np.meshgrid(*[np.linspace(0, 3, n) for n in shape], indexing="ij")
    x = sum(np.sin((k + 1) * g) for k, g in enumerate(grids)) * 10.0
    x = x + rng.normal(0, 0.05, shape)
    x = x.astype(dtype)
    flat = x.reshape(-1)
    if nan and flat.size > 8:
        flat[flat.size // 3: flat.size // 3 + max(1, flat.size // 20)] = np.nan
    if fill is not None and flat.size > 8:
        flat[-max(1, flat.size // 10):] = fill
    return x


CASES = [
    ((37,), (8,)),
    ((19, 27), (8, 10)),
    ((5, 23, 17), (2, 8, 7)),
    ((3, 6, 11, 9), (2, 4, 5, 4)),
]


def chunk_slices(shape, chunks):
    for index in np.ndindex(*[-(-n // c) for n, c in zip(shape, chunks)]):
        yield tuple(i * c for i, c in zip(index, chunks)), tuple(
            slice(i * c, min((i + 1) * c, n)) for i, c, n in zip(index, chunks, shape))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape,chunks", CASES)
def test_h5py_round_trip_and_zarr_face(tmp_path, dtype, shape, chunks):
    fill = -9999.0
    E = 0.01
    x = field(shape, dtype, seed=len(shape), fill=fill)
    path = tmp_path / "a.h5"
    with h5py.File(path, "w") as f:
        d = f.create_dataset("v", data=x, chunks=chunks, fillvalue=fill, **zh5.Predict(abs_error=E))
        fid, flags, cd, name = d.id.get_create_plist().get_filter(0)
        assert fid == ID and flags == 0            # mandatory, though h5py asks for optional
        assert b"zdt.predict" in name
        assert cd[0] == zh5.LAYOUT and cd[1] == (1 if dtype == "float32" else 2)
        assert len(cd) == 10 + len(shape) and tuple(cd[10:]) == chunks and cd[9] == len(shape)
        assert cd[5] == 1 and struct.unpack("<d", struct.pack("<II", cd[6], cd[7]))[0] == fill
    with h5py.File(path, "r") as f:
        d = f["v"]
        y = d[...]
        assert y.dtype == x.dtype
        check_within(x, y, E, np.asarray(fill, dtype))
        # every chunk in the file is the zarr face's chunk: it decodes to the same values, and
        # the zarr face encodes the chunk (padded with the fill value) to the same bytes
        config = PredictConfig.create(abs_error=E)
        for offset, where in chunk_slices(shape, chunks):
            mask, raw = d.id.read_direct_chunk(offset)
            assert mask == 0
            z = config.decode(np.frombuffer(raw, np.uint8), np.dtype(dtype), chunks, fill)
            inside = tuple(slice(0, s.stop - s.start) for s in where)
            assert z[inside].tobytes() == y[where].tobytes()
            padded = np.full(chunks, fill, dtype)
            padded[inside] = x[where]
            assert config.encode(padded, fill) == bytes(raw)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_relative_bound_and_no_fill(tmp_path, dtype):
    x = field((40, 50), dtype, seed=3)
    R = 1e-3
    path = tmp_path / "r.h5"
    with h5py.File(path, "w") as f:
        f.create_dataset("v", data=x, chunks=(16, 32),
                         **zh5.Predict(rel_error=R, predictor="lorenzo"))
    with h5py.File(path, "r") as f:
        y = f["v"][...]
        cd = f["v"].id.get_create_plist().get_filter(0)[2]
        assert cd[2] == 2 and cd[8] == 1
    check_relative(x, y, R, np.asarray(0, dtype))      # (h5py's default fill value: 0)


def test_explicit_fill_and_nan_fill_value(tmp_path):
    x = field((30, 40), "float32", seed=5, fill=1e20)
    path = tmp_path / "f.h5"
    with h5py.File(path, "w") as f:
        # the data's missing value (1e20) is not the dataset's fill value (NaN)
        f.create_dataset("v", data=x, chunks=(16, 16), fillvalue=np.nan,
                         **zh5.Predict(abs_error=0.05, fill=1e20))
    with h5py.File(path, "r") as f:
        y = f["v"][...]
    check_within(x, y, 0.05, np.float32(1e20))
    assert (y.view(np.uint32)[np.isnan(x)] == x.view(np.uint32)[np.isnan(x)]).all()


def test_int16_cf_packed(tmp_path):
    rng = np.random.default_rng(7)
    x = (np.cumsum(rng.integers(-3, 4, (60, 70)), axis=1) + 1000).astype(np.int16)
    x[:5, :] = -32767                                    # the _FillValue
    path = tmp_path / "i.h5"
    with h5py.File(path, "w") as f:
        f.create_dataset("v", data=x, chunks=(32, 32), fillvalue=-32767,
                         **zh5.Predict(abs_error=2))
    with h5py.File(path, "r") as f:
        y = f["v"][...]
    assert y.dtype == np.int16
    assert (y[:5] == -32767).all() and not (y[5:] == -32767).any()
    assert np.abs(y.astype(int) - x.astype(int)).max() <= 2


@pytest.mark.parametrize("effort", ["fast", "max"])
def test_effort_writes_layout_2(tmp_path, effort):
    # an effort other than the default: layout 2 (word 9 the effort, then rank and extents),
    # chunks the zarr face writes with that effort; the default stays layout 1
    x = field((40, 50), "float64", seed=8)
    E = 0.01
    path = tmp_path / "e.h5"
    with h5py.File(path, "w") as f:
        f.create_dataset("v", data=x, chunks=(40, 50), fillvalue=np.nan,
                         **zh5.Predict(abs_error=E, effort=effort))
        f.create_dataset("w", data=x, chunks=(40, 50), fillvalue=np.nan,
                         **zh5.Predict(abs_error=E))
    with h5py.File(path, "r") as f:
        cd = f["v"].id.get_create_plist().get_filter(0)[2]
        assert cd[0] == 2 and cd[9] == {"fast": 1, "max": 2}[effort]
        assert cd[10] == 2 and tuple(cd[11:]) == (40, 50) and len(cd) == 13
        assert f["w"].id.get_create_plist().get_filter(0)[2][0] == 1
        y = f["v"][...]
        check_within(x, y, E, np.asarray(np.nan))
        raw = f["v"].id.read_direct_chunk((0, 0))[1]
        config = PredictConfig.create(abs_error=E, effort=effort)
        assert config.encode(x, np.nan) == bytes(raw)
        assert config.decode(np.frombuffer(raw, np.uint8), x.dtype, x.shape, np.nan).tobytes() \
            == y.tobytes()
    assert "effort='fast'" in repr(zh5.Predict(abs_error=1, effort="fast"))
    with pytest.raises(ValueError, match="effort 'slow'"):
        zh5.Predict(abs_error=1, effort="slow")


def test_errors_are_loud(tmp_path):
    with h5py.File(tmp_path / "e.h5", "w") as f:
        opts = (3,) + zh5.Predict(abs_error=0.1).filter_options[1:]
        with pytest.raises(Exception, match="layout version 3"):
            f.create_dataset("a", shape=(10,), dtype="f4", chunks=(5,), compression=ID,
                             compression_opts=opts)
        assert "layout version 3 is not one this filter reads (it reads layouts 1 .. 2); a " \
            "newer zdt wrote it" in zh5.last_error()
        # layout 1 takes up to 9 words, layout 2 up to 10; effort codes 0 .. 2
        opts = zh5.Predict(abs_error=0.1).filter_options + (1,)
        with pytest.raises(Exception, match="layout 1 takes 5 to 9"):
            f.create_dataset("a1", shape=(10,), dtype="f4", chunks=(5,), compression=ID,
                             compression_opts=opts)
        opts = zh5.Predict(abs_error=0.1, effort="fast").filter_options[:-1] + (3,)
        with pytest.raises(Exception, match="word 9, the effort, is 3"):
            f.create_dataset("a2", shape=(10,), dtype="f4", chunks=(5,), compression=ID,
                             compression_opts=opts)
        with pytest.raises(Exception, match="must come first"):
            f.create_dataset("b", shape=(10,), dtype="f4", chunks=(5,), shuffle=True,
                             **zh5.Predict(abs_error=0.1))
        with pytest.raises(Exception, match="not one zdt.predict codes"):
            f.create_dataset("c", shape=(10,), dtype="i8", chunks=(5,), **zh5.Predict(abs_error=1))
        with pytest.raises(Exception, match="rel_error with the data type int16"):
            f.create_dataset("d", shape=(10,), dtype="i2", chunks=(5,),
                             **zh5.Predict(rel_error=0.1))
        with pytest.raises(Exception, match="big-endian"):
            f.create_dataset("e", shape=(10,), dtype=">f4", chunks=(5,),
                             **zh5.Predict(abs_error=0.1))
        # a corrupt chunk: an error, never a crash. (HDF5 1.14.4 and later, h5py's among them,
        # drop what a filter callback pushes onto the error stack, so h5py reports HDF5's own
        # message; HDF5 1.10 keeps the filter's: test_h5dump_names_a_corrupt_chunk.)
        d = f.create_dataset("g", shape=(10,), dtype="f8", chunks=(10,),
                             **zh5.Predict(abs_error=0.1))
        d[...] = np.arange(10.0)
        mask, raw = d.id.read_direct_chunk((0,))
        d.id.write_direct_chunk((0,), raw[:-3])
        with pytest.raises(Exception, match="zdt.predict|filter returned failure during read"):
            d[...]
        # the filter's own reason, which HDF5 >= 1.14.4 leaves out of the exception
        assert re.fullmatch(r"zdt\.predict: .* \(part [A-Za-z ]+\)", zh5.last_error()), \
            zh5.last_error()
    x = field((20, 30), "float64", seed=1)
    write_file(tmp_path / "ok.h5", x)
    with h5py.File(tmp_path / "ok.h5", "r") as f:
        f["v"][...]
    assert zh5.last_error() is None                # (a filter call that succeeds clears it)
    with pytest.raises(ValueError, match="exactly one"):
        zh5.Predict(abs_error=0.1, rel_error=0.1)
    with pytest.raises(ValueError, match="predictor"):
        zh5.Predict(abs_error=0.1, predictor="sz")


def write_file(path, x, E=0.01):
    with h5py.File(path, "w") as f:
        f.create_dataset("v", data=x, chunks=(8, 16), fillvalue=np.nan,
                         **zh5.Predict(abs_error=E))


def test_reading_without_the_plugin_names_it(tmp_path):
    x = field((20, 30), "float64", seed=1)
    write_file(tmp_path / "a.h5", x)
    empty = tmp_path / "no-plugins"
    empty.mkdir()
    # h5py's exception carries HDF5's innermost message only ("can't find plugin"); the
    # error stack above it names the filter by the name the file stores, with how to install it
    code = ("import h5py; h5py._errors.unsilence_errors(); "
            f"h5py.File({str(tmp_path / 'a.h5')!r}, 'r')['v'][...]")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       env=dict(os.environ, HDF5_PLUGIN_PATH=str(empty)))
    assert r.returncode != 0 and "can't find plugin" in r.stderr.splitlines()[-1]
    assert "required filter 'zdt.predict (pip install zdt; then import zdt.hdf5" in r.stderr, \
        r.stderr[-3000:]
    with h5py.File(tmp_path / "a.h5", "r") as f:        # (what any reader lists)
        assert b"pip install zdt" in f["v"].id.get_create_plist().get_filter(0)[3]


def test_netcdf4_python_reads(tmp_path):
    pytest.importorskip("netCDF4")
    x = field((20, 30), "float64", seed=2)
    write_file(tmp_path / "a.h5", x)
    code = textwrap.dedent(f"""
        import sys, numpy as np, netCDF4
        with netCDF4.Dataset({str(tmp_path / 'a.h5')!r}) as ds:
            v = ds['v']
            v.set_auto_mask(False)
            np.save(sys.argv[1], v[...])
    """)
    out = tmp_path / "y.npy"
    subprocess.run([sys.executable, "-c", code, str(out)], check=True, env=env_with_plugin())
    check_within(x, np.load(out), 0.01, np.float64(np.nan))


def test_xarray_h5netcdf_writes(tmp_path):
    xr = pytest.importorskip("xarray")
    pytest.importorskip("h5netcdf")
    x = field((6, 30, 40), "float32", seed=4)
    ds = xr.Dataset({"t": (("time", "lat", "lon"), x)},
                    coords={"lat": np.linspace(-60, 60, 30), "lon": np.linspace(0, 350, 40)})
    path = tmp_path / "x.nc"
    ds.to_netcdf(path, engine="h5netcdf",
                 encoding={"t": {**zh5.Predict(abs_error=0.02), "chunksizes": (1, 16, 16)}})
    with xr.open_dataset(path, engine="h5netcdf") as back:
        y = back["t"].values
    check_within(x, y, 0.02, np.float32(np.nan))
    with h5py.File(path, "r") as f:
        assert f["t"].id.get_create_plist().get_filter(0)[0] == ID
    # netCDF4 (its own HDF5, through HDF5_PLUGIN_PATH) reads the file xarray wrote
    pytest.importorskip("netCDF4")
    code = ("import sys, numpy as np, xarray as xr; "
            "np.save(sys.argv[1], xr.open_dataset(sys.argv[2], engine='netcdf4')['t'].values)")
    out = tmp_path / "y.npy"
    subprocess.run([sys.executable, "-c", code, str(out), str(path)], check=True,
                   env=env_with_plugin())
    check_within(x, np.load(out), 0.02, np.float32(np.nan))


def test_xarray_cf_packed_int16(tmp_path):
    # xarray packs floats into int16 (scale_factor, add_offset, _FillValue) before the filter
    # sees them: the bound is in stored steps, the missing values stay the _FillValue
    xr = pytest.importorskip("xarray")
    pytest.importorskip("h5netcdf")
    rng = np.random.default_rng(11)
    t = 280 + np.cumsum(rng.normal(0, 0.05, (5, 24, 36)), axis=2)
    t[:, :3, :] = np.nan                                           # missing rows
    ds = xr.Dataset({"t": (("time", "lat", "lon"), t)})
    packing = {"dtype": "int16", "scale_factor": 0.01, "add_offset": 280.0, "_FillValue": -32767}
    plain, zpath = tmp_path / "plain.nc", tmp_path / "z.nc"
    ds.to_netcdf(plain, engine="h5netcdf", encoding={"t": dict(packing, chunksizes=(2, 16, 16))})
    ds.to_netcdf(zpath, engine="h5netcdf", encoding={"t": {
        **packing, **zh5.Predict(abs_error=3), "chunksizes": (2, 16, 16)}})
    with h5py.File(plain, "r") as f:
        x = f["t"][...]
    with h5py.File(zpath, "r") as f:
        y = f["t"][...]
        assert f["t"].id.get_create_plist().get_filter(0)[0] == ID
    assert y.dtype == np.int16 and (x == -32767).sum() == 5 * 3 * 36
    assert ((y == -32767) == (x == -32767)).all()
    assert np.abs(y.astype(int) - x.astype(int)).max() <= 3
    with xr.open_dataset(zpath, engine="h5netcdf") as back:
        u = back["t"].values
    assert np.isnan(u[:, :3]).all() and not np.isnan(u[:, 3:]).any()
    # unpacked as xarray does, in float64: within three steps of the plain file's values
    with xr.open_dataset(plain, engine="h5netcdf") as ref:
        assert np.nanmax(np.abs(u - ref["t"].values)) <= 3 * 0.01 * (1 + 1e-12)


def test_h5dump_prints_the_data(tmp_path):
    h5dump = tool("h5dump", "hdf5-tools")
    x = field((20, 30), "float64", seed=6)
    write_file(tmp_path / "a.h5", x)
    with h5py.File(tmp_path / "a.h5", "r") as f:
        y = f["v"][...]
    r = subprocess.run([h5dump, "-p", "-H", "-d", "/v", str(tmp_path / "a.h5")], capture_output=True,
                       text=True, env=env_with_plugin(), check=True)
    assert f"FILTER_ID {ID}" in r.stdout and "zdt.predict" in r.stdout
    out = tmp_path / "v.bin"
    subprocess.run([h5dump, "-d", "/v", "-b", "LE", "-o", str(out), str(tmp_path / "a.h5")],
                   capture_output=True, env=env_with_plugin(), check=True)
    assert np.fromfile(out, "<f8").tobytes() == y.tobytes()
    # without the plugin: an error naming the filter
    r = subprocess.run([h5dump, "--enable-error-stack", "-d", "/v", str(tmp_path / "a.h5")],
                       capture_output=True, text=True,
                       env=dict(os.environ, HDF5_PLUGIN_PATH=str(tmp_path)))
    assert r.returncode != 0
    assert "required filter 'zdt.predict (pip install zdt" in r.stderr, r.stderr


def numbers_of(text: str, name: str) -> np.ndarray:
    body = text.split("data:", 1)[1]
    values = re.search(rf"\b{name} =(.*?);", body, re.S).group(1)
    return np.array([np.nan if v.strip() == "_" else float(v) for v in values.split(",")])


def test_ncdump_prints_the_data(tmp_path):
    ncdump = tool("ncdump", "netcdf-bin")
    x = field((20, 30), "float64", seed=8)
    write_file(tmp_path / "a.nc", x)      # (h5py's file: a netCDF-4 file to netCDF-C)
    r = subprocess.run([ncdump, "-p", "9,17", "-v", "v", str(tmp_path / "a.nc")],
                       capture_output=True, text=True, env=env_with_plugin(), check=True)
    got = numbers_of(r.stdout, "v")
    with h5py.File(tmp_path / "a.nc", "r") as f:
        y = f["v"][...].reshape(-1)
    assert np.array_equal(got, y, equal_nan=True)


def test_h5repack_writes(tmp_path):
    h5repack = tool("h5repack", "hdf5-tools")
    x = field((25, 33), "float32", seed=9)
    with h5py.File(tmp_path / "plain.h5", "w") as f:
        f.create_dataset("v", data=x, chunks=(10, 10), fillvalue=np.nan)
    p = zh5.Predict(abs_error=0.01)
    subprocess.run([h5repack, "-f", p.h5repack("v"), str(tmp_path / "plain.h5"),
                    str(tmp_path / "packed.h5")], check=True, env=env_with_plugin())
    with h5py.File(tmp_path / "packed.h5", "r") as f:
        fid, flags, cd, _ = f["v"].id.get_create_plist().get_filter(0)
        assert fid == ID and flags == 0 and cd[1] == 1 and tuple(cd[10:]) == (10, 10)
        y = f["v"][...]
    check_within(x, y, 0.01, np.float32(np.nan))


def test_nccopy_writes(tmp_path):
    nccopy = tool("nccopy", "netcdf-bin")
    pytest.importorskip("netCDF4")
    x = field((12, 30, 40), "float32", seed=10)
    src = tmp_path / "src.nc"
    code = textwrap.dedent(f"""
        import numpy as np, netCDF4
        x = np.load({str(tmp_path / 'x.npy')!r})
        with netCDF4.Dataset({str(src)!r}, 'w') as ds:
            for n, k in zip(('time', 'lat', 'lon'), x.shape):
                ds.createDimension(n, k)
            v = ds.createVariable('t', 'f4', ('time', 'lat', 'lon'), fill_value=np.float32(1e20))
            v.set_auto_mask(False)
            v[...] = x
    """)
    x[:, :3, :] = np.float32(1e20)                # missing values, as its _FillValue
    np.save(tmp_path / "x.npy", x)
    subprocess.run([sys.executable, "-c", code], check=True)
    p = zh5.Predict(abs_error=0.01)
    # the words as numbers, and the bound as netCDF-C's typed constant (a double: two words,
    # low first, as the spec's order)
    for i, spec in enumerate([p.nccopy("t"), f"t,{ID},1,0,1,0.01d,2,0,0,0"]):
        out = tmp_path / f"out{i}.nc"
        subprocess.run([nccopy, "-4", "-c", "time/1,lat/16,lon/16", "-F", spec, str(src), str(out)],
                       check=True, env=env_with_plugin())
        with h5py.File(out, "r") as f:
            fid, flags, cd, _ = f["t"].id.get_create_plist().get_filter(0)
            assert fid == ID and tuple(cd[2:5]) == tuple(p.filter_options[2:5]), cd
            assert cd[5] == 1 and cd[9] == 3 and len(cd) == 13
            y = f["t"][...]
        check_within(x, y, 0.01, np.float32(1e20))


def test_h5dump_names_a_corrupt_chunk(tmp_path):
    h5dump = tool("h5dump", "hdf5-tools")
    with h5py.File(tmp_path / "c.h5", "w") as f:
        d = f.create_dataset("g", shape=(10,), dtype="f8", chunks=(10,),
                             **zh5.Predict(abs_error=0.1))
        d[...] = np.arange(10.0)
        mask, raw = d.id.read_direct_chunk((0,))
        d.id.write_direct_chunk((0,), raw[:-3])
    r = subprocess.run([h5dump, "--enable-error-stack", "-d", "/g", str(tmp_path / "c.h5")],
                       capture_output=True, text=True, env=env_with_plugin())
    assert r.returncode != 0
    assert re.search(r"zh5_filter\(\): zdt\.predict: .*\(part ANS stream\)", r.stderr), r.stderr


def test_netcdf_c_program_writes(tmp_path):
    """libzdtpredict/hdf5/example_netcdf.c (nc_def_var_filter) compiled and run; h5py reads
    its file within the bound."""
    nc_config = tool("nc-config", "libnetcdf-dev")
    cc = shutil.which("cc") or shutil.which("gcc") or pytest.skip("no C compiler")
    root = os.path.join(os.path.dirname(__file__), "..", "..", "libzdtpredict", "hdf5")
    flags = subprocess.run([nc_config, "--cflags", "--libs"], capture_output=True, text=True,
                           check=True).stdout.split()
    exe = tmp_path / "example_netcdf"
    subprocess.run([cc, "-std=c99", "-Wall", "-Wextra", "-Werror", "-I", root,
                    os.path.join(root, "example_netcdf.c"), *flags, "-lm", "-o", str(exe)],
                   check=True)
    out = tmp_path / "ex.nc"
    r = subprocess.run([str(exe), str(out)], capture_output=True, text=True, env=env_with_plugin())
    assert r.returncode == 0, r.stderr
    with h5py.File(out, "r") as f:
        fid, flags_, cd, _ = f["t"].id.get_create_plist().get_filter(0)
        assert fid == ID and cd[1] == 1 and tuple(cd[9:]) == (2, 16, 32)
        y = f["t"][...]
    i, j = np.meshgrid(np.arange(40), np.arange(50), indexing="ij")
    x = (280.0 + (i * i + 3 * j) / 64.0).astype(np.float32)       # (exact, as the C's)
    x[:4] = np.float32(1e20)
    check_within(x, y, 0.01, np.float32(1e20))


def filtered_netcdf(path, seed: int, chunks: tuple[int, int]) -> None:
    """A 40 x 50 float64 variable /v written by xarray through h5netcdf with the filter at
    0.01 (the commands read it through netCDF4-python)."""
    pytest.importorskip("netCDF4")
    xr = pytest.importorskip("xarray")
    pytest.importorskip("h5netcdf")
    xr.Dataset({"v": (("a", "b"), field((40, 50), "float64", seed=seed))}).to_netcdf(
        path, engine="h5netcdf", encoding={"v": {**zh5.Predict(abs_error=0.01), "chunksizes": chunks}})


def test_zdt_convert_of_a_filtered_file_without_the_plugin_path_says_how(tmp_path):
    # netCDF4's own HDF5 looks for plugins only where HDF5_PLUGIN_PATH says
    src = tmp_path / "f.nc"
    filtered_netcdf(src, 9, (20, 25))
    env = {k: v for k, v in os.environ.items() if k != "HDF5_PLUGIN_PATH"}
    argv = [sys.executable, "-m", "zdt", "convert", str(src), str(tmp_path / "o.zarr"),
            "--abs-error", "0.01", "--quiet"]
    proc = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=tmp_path)
    assert proc.returncode == 1 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert "cannot read /v at (0:40, 0:50) from" in proc.stderr
    assert "HDF5_PLUGIN_PATH" in proc.stderr and "(bytes" not in proc.stderr
    proc = subprocess.run(argv[:5] + [str(tmp_path / "p.zarr")] + argv[6:], capture_output=True,
                          text=True, env=env_with_plugin(), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr


def test_zdt_names_the_filters_reason_for_a_corrupt_chunk(tmp_path):
    # HDF5 >= 1.14.4 (netCDF4-python's) raises "NetCDF: HDF error" only; zdt adds the filter's
    # own message (zdt.hdf5.last_error) to its one line
    src = tmp_path / "c.nc"
    filtered_netcdf(src, 10, (20, 50))
    with h5py.File(src, "r+") as f:
        d = f["v"]
        mask, raw = d.id.read_direct_chunk((20, 0))
        d.id.write_direct_chunk((20, 0), raw[:-5], mask)
    proc = subprocess.run([sys.executable, "-m", "zdt", "convert", str(src), str(tmp_path / "o.zarr"),
                           "--abs-error", "0.01", "--quiet"], capture_output=True, text=True,
                          env=env_with_plugin(), cwd=tmp_path)
    assert proc.returncode == 1 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert re.search(r"cannot read /v at .* from .*c\.nc: .*\(zdt\.predict: .*\(part ANS stream\)\)",
                     proc.stderr), proc.stderr


def test_zdt_inspect_lists_the_files_filters(tmp_path, capsys):
    # every filter of the pipeline as HDF5 stores it (xarray's encoding names none of these),
    # zdt.predict's parameters read from its cd_values (listing them reads no chunk)
    hdf5plugin = pytest.importorskip("hdf5plugin")
    x = field((50, 60), "float32", seed=11, nan=False)
    path = tmp_path / "m.h5"
    with h5py.File(path, "w") as f:
        f.create_dataset("a", data=x, chunks=(25, 60), **hdf5plugin.SZ3(absolute=0.01))
        f.create_dataset("b", data=x, chunks=(25, 60), compression="gzip", compression_opts=4,
                         shuffle=True, fletcher32=True)
        f.create_dataset("c", data=x, chunks=(25, 60),
                         **zh5.Predict(rel_error=0.01, effort="fast", fill=-9999.0))
    from zdt.command import main

    assert main(["inspect", str(path)]) == 0
    out = capsys.readouterr().out
    lines = [line.strip() for line in out.splitlines() if "filters" in line]
    assert lines == ["filters sz3", "filters shuffle -> zlib 4 -> fletcher32",
                     "filters zdt.predict (rel_error=0.01, predictor=auto, effort=fast, "
                     "fill=-9999.0)"], out
