"""zdt.predict's HDF5 filter (zdt.hdf5) against hdf5plugin's SZ3 and ZFP filters, on the same
real field at the same absolute bound: the bytes each stores, the time h5py takes to write and
read the dataset through each filter (HDF5's in-memory file driver: no disk), and the largest
error of what each reads back (checked against the bound: SZ3's and ZFP's too). Beside them, the
C core through zdt's zarr codec on the same chunks (zdt.codecs.predict: encode and decode of each
chunk, no HDF5), which the filter's times should stay within 1.1x of.

    python bench/bench_hdf5.py [--file ostia_monthly.nc] [--var NAME] [--fraction 1e-3]
    (pip install h5py hdf5plugin netCDF4 iris-sample-data)

The field: the file's variable as netCDF4 decodes it (CF packing applied), its missing values
set to its fill value for every filter (SZ3 and ZFP do not keep NaN), which is the dataset's
fill value (zdt.predict keeps it exactly). The bound: a fraction of the field's range. The
error is over the field's values (the fill value's elements apart: "fill kept" says whether
they came back exactly). ZFP's accuracy mode is a tolerance, not a bound, and its blocks that
mix the fill value (1e20) with the field lose the field's values.

Measured here (2 cores, Debian 12, h5py 3.16 / HDF5 2.0.0, hdf5plugin 7.1.0; ostia_monthly.nc,
surface_temperature, float32 54 x 18 x 432, chunks 1 x 18 x 432, 26% fill; best of 7; the
filter's times beside SZ3's and ZFP's show HDF5's path as well):

    E = 1e-3 of the range   bytes     ratio  write s  read s  max err / E
    zdt.predict (filter)    150,560   11.16  0.0331   0.0045  0.999978
    zdt.predict (core)      150,560   11.16  0.0325   0.0051  0.999978
    SZ3                     234,968    7.15  0.1986   0.0275  0.999978
    ZFP accuracy            701,357    2.39  0.0124   0.0101  20025 (over)
    E = 1e-4 of the range
    zdt.predict (filter)    287,036    5.85  0.0585   0.0078  0.983914
    zdt.predict (core)      287,036    5.85  0.0555   0.0093  0.983914
    SZ3                     456,149    3.68  0.1895   0.0404  0.983914
    ZFP accuracy            811,637    2.07  0.0122   0.0102  200256 (over)

Filter / core on the same chunks (the last lines: the two alternating, best of 15; the
filter's write holds HDF5's own write path, shown apart as the same dataset unfiltered):

    file:variable (chunks)                 write  less HDF5's path  read   less HDF5's path
    ostia surface_temperature (1x18x432)   1.01x  0.97x             0.91x  0.85x
    ostia surface_temperature (54x18x432)  1.04x  0.98x             0.99x  0.93x
    orca2 nav_lat_bnds (1x180x4)           1.01x  0.95x             0.54x  0.41x
    orca2 nav_lat_bnds (148x180x4)         1.15x  0.96x             0.83x  0.72x
    A1B air_temperature (1x37x49)          0.95x  0.93x             0.77x  0.69x
    A1B air_temperature (240x37x49)        1.09x  0.99x             1.03x  0.98x

(the core's reads of many small chunks pay Python's call per chunk.)
"""

from __future__ import annotations

import argparse
import os

import _common  # noqa: F401  (sets BLAS threads before numpy starts)
from _common import fastest
import h5py
import hdf5plugin
import numpy as np

import zdt.hdf5 as zh5
from zdt.codecs.predict import PredictConfig


def load(name: str, var: str | None) -> tuple[str, np.ndarray, float]:
    import netCDF4

    path = name
    if not os.path.exists(path):
        import iris_sample_data

        path = os.path.join(os.path.dirname(iris_sample_data.__file__), "sample_data", name)
    with netCDF4.Dataset(path) as ds:
        if var is None:
            var = max((k for k, v in ds.variables.items() if v.ndim >= 2),
                      key=lambda k: ds.variables[k].size)
        v = ds.variables[var]
        x = v[...]
        dtype = np.float32 if x.dtype.itemsize <= 4 else np.float64
        fill = float(np.asarray(getattr(v, "_FillValue", 9.969209968386869e36), dtype))
        x = np.ma.filled(x.astype(dtype), fill)
        x[~np.isfinite(x)] = fill
    return f"{os.path.basename(path)}:{var}", np.ascontiguousarray(x), fill


class Hdf5Steps:
    """The dataset written through h5py with `kwargs`' filter (HDF5's in-memory file driver;
    no chunk cache: every read decodes every chunk), and read back."""

    def __init__(self, x, chunks, fill, kwargs) -> None:
        self.x, self.chunks, self.fill, self.kwargs = x, chunks, fill, kwargs
        self.f = None
        self.y = np.empty_like(x)
        self.write()

    def write(self) -> None:
        if self.f is not None:
            self.f.close()
        self.f = h5py.File(f"bench-{id(self)}.h5", "w", driver="core", backing_store=False,
                           rdcc_nbytes=0)
        self.f.create_dataset("v", data=self.x, chunks=self.chunks, fillvalue=self.fill,
                              **self.kwargs)
        self.f.flush()
        self.d = self.f["v"]

    def read(self) -> None:
        self.d.read_direct(self.y)

    def nbytes(self) -> int:
        return self.d.id.get_storage_size()

    def close(self) -> None:
        self.f.close()


class CoreSteps:
    """The same chunks (edge chunks padded with the fill value, as HDF5 hands them over) through
    zdt's zarr codec, the C core, with no HDF5."""

    def __init__(self, x, chunks, fill, E) -> None:
        self.x, self.chunks, self.fill = x, chunks, fill
        self.config = PredictConfig.create(abs_error=E)
        self.pieces = []
        for index in np.ndindex(*[-(-n // c) for n, c in zip(x.shape, chunks)]):
            where = tuple(slice(i * c, min((i + 1) * c, n)) for i, c, n in zip(index, chunks, x.shape))
            padded = np.full(chunks, fill, x.dtype)
            padded[tuple(slice(0, s.stop - s.start) for s in where)] = x[where]
            self.pieces.append((where, padded))
        self.write()

    def write(self) -> None:
        self.data = [self.config.encode(p, self.fill) for _, p in self.pieces]

    def read(self) -> None:
        y = np.empty_like(self.x)
        for (where, _), data in zip(self.pieces, self.data):
            z = self.config.decode(data, self.x.dtype, self.chunks, self.fill)
            y[where] = z[tuple(slice(0, s.stop - s.start) for s in where)]
        self.y = y

    def nbytes(self) -> int:
        return sum(len(d) for d in self.data)

    def close(self) -> None:
        pass


def timed(steps, repeat: int):
    """(bytes stored, write s, read s, what was read) of Hdf5Steps or CoreSteps, best of `repeat`."""
    t_write = fastest({"write": steps.write}, repeat)["write"]
    t_read = fastest({"read": steps.read}, repeat)["read"]
    out = steps.nbytes(), t_write, t_read, steps.y
    steps.close()
    return out


def filter_over_core(x, chunks, fill, E, rounds):
    """The filter's write and read against the core's encode and decode of the same chunks and
    HDF5's own path (the same dataset unfiltered), the three alternating in one loop (best of
    `rounds` each), so that a busy machine slows them alike: seconds of each."""
    runs = {"filter": Hdf5Steps(x, chunks, fill, zh5.Predict(abs_error=E)),
            "core": CoreSteps(x, chunks, fill, E), "hdf5": Hdf5Steps(x, chunks, fill, {})}
    out = {step: fastest({name: getattr(run, step) for name, run in runs.items()}, rounds)
           for step in ("write", "read")}
    for run in runs.values():
        run.close()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--file", default="ostia_monthly.nc")
    ap.add_argument("--var", default=None)
    ap.add_argument("--fraction", type=float, default=1e-3, help="the bound, of the range")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=15, help="of the filter / core ratio")
    args = ap.parse_args()
    key, x, fill = load(args.file, args.var)
    valid = x != fill
    span = float(x[valid].max() - x[valid].min())
    E = span * args.fraction
    chunks = (1,) * (x.ndim - 2) + x.shape[-2:]
    print(f"{key}: {x.dtype} {x.shape}, chunks {chunks}, {x.nbytes:,} bytes, "
          f"fill {fill:g} ({(~valid).mean():.1%} of elements), E = {E:.6g} ({args.fraction:g} of "
          f"the range {span:.6g})")
    rows = [
        ("zdt.predict (HDF5 filter)", lambda: Hdf5Steps(x, chunks, fill, zh5.Predict(abs_error=E))),
        ("zdt.predict (C core, zarr codec)", lambda: CoreSteps(x, chunks, fill, E)),
        ("SZ3 (hdf5plugin)", lambda: Hdf5Steps(x, chunks, fill, hdf5plugin.SZ3(absolute=E))),
        ("ZFP accuracy (hdf5plugin)", lambda: Hdf5Steps(x, chunks, fill, hdf5plugin.Zfp(accuracy=E))),
        ("none (HDF5 chunked)", lambda: Hdf5Steps(x, chunks, fill, {})),
    ]
    print(f"{'filter':34} {'bytes':>12} {'ratio':>7} {'write s':>8} {'read s':>8} "
          f"{'max err / E':>11} {'fill kept':>9}")
    for name, run in rows:
        nbytes, t_write, t_read, y = timed(run(), args.repeat)
        # the error of the field's values (the fill value's elements apart: kept or not)
        err = float(np.abs(y[valid].astype(np.float64) - x[valid].astype(np.float64)).max()) / E
        kept = bool((y[~valid] == fill).all())
        flag = "" if err <= 1 else "  ** over the bound **"
        print(f"{name:34} {nbytes:12,} {x.nbytes / nbytes:7.2f} {t_write:8.4f} {t_read:8.4f} "
              f"{err:11.6f} {str(kept):>9}{flag}")
    print(f"filter / core on the same chunks (alternating, best of {args.rounds}): the filter's "
          f"whole write and read through HDF5, and less HDF5's own path (the dataset unfiltered)")
    for layout in (chunks, x.shape):
        t = filter_over_core(x, layout, fill, E, args.rounds)
        cells = []
        for step in ("write", "read"):
            f, c, h = (t[step][k] for k in ("filter", "core", "hdf5"))
            cells.append(f"{step} {f / c:.2f}x ({(f - h) / c:.2f}x less HDF5's "
                         f"{h * 1e3:.2f} ms; core {c * 1e3:.2f} ms)")
        print(f"  chunks {'x'.join(map(str, layout)):>14}: " + ", ".join(cells))

if __name__ == "__main__":
    main()
