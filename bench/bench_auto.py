"""zdt.predict's `predictor="auto"` against the best predictor chosen with hindsight, on real
fields auto was not tuned on: every float variable of iris-sample-data's netCDF files large
enough to be sampled (2^16 elements or more), at an absolute bound of 1e-2, 1e-3 and 1e-4 of
its range. For each row: the bytes of the chunk each predictor writes alone, the predictors
auto's samples keep, and auto's bytes (the least of those it keeps). Every chunk is decoded and
checked against the bound.

    python bench/bench_auto.py      (pip install netCDF4 iris-sample-data)

Prints the rows where auto writes more than 1% above the best, and the totals (auto's regret).
"""

from __future__ import annotations

import os

import _common  # noqa: F401  (sets BLAS threads before numpy starts)
import numpy as np

from zdt.codecs import predict as P

FILES = ["E1_north_america.nc", "A1B_north_america.nc", "space_weather.nc",
         "atlantic_profiles.nc", "rotated_pole.nc", "NEMO/nemo_1m_20150201-20150301_grid-T.nc",
         "NEMO/nemo_1m_20150301-20150401_grid-T.nc", "SOI_Darwin.nc",
         "mesh_C4_synthetic_float.nc", "ostia_monthly.nc"]
FRACTIONS = (1e-2, 1e-3, 1e-4)


def fields():
    import iris_sample_data
    import netCDF4

    base = os.path.join(os.path.dirname(iris_sample_data.__file__), "sample_data")
    for name in FILES:
        path = os.path.join(base, name)
        if not os.path.exists(path):
            continue
        with netCDF4.Dataset(path) as ds:
            for var, v in ds.variables.items():
                if v.dtype.kind != "f" or v.size < P.SAMPLE_FROM:
                    continue
                x = np.ma.filled(v[...].astype(v.dtype), np.nan)
                finite = x[np.isfinite(x)]
                if finite.size and finite.max() > finite.min():
                    yield f"{name}:{var}", x, float(finite.max() - finite.min())


def main() -> None:
    total_auto = total_best = 0
    rows = off = 0
    print("rows where auto writes more than 1% above the best predictor:")
    for key, x, span in fields():
        fills = P.fill_array(np.nan, x.dtype)
        for fraction in FRACTIONS:
            E = span * fraction
            sizes = {}
            for name in P.worth_trying(P.grid4(x.shape)):
                config = P.PredictConfig.create(abs_error=E, predictor=name)
                data = config.encode(x, np.nan)
                y = config.decode(data, x.dtype, x.shape, np.nan)
                assert np.array_equal(np.isnan(y), np.isnan(x))
                assert np.nanmax(np.abs(y.astype(np.float64) - x)) <= E
                sizes[name] = len(data)
            auto = P.PredictConfig.create(abs_error=E)
            kept = [n for n, _ in P.choose_predictors(auto, np.ascontiguousarray(x).reshape(-1),
                                                      P.grid4(x.shape), fills)]
            ours, best = min(sizes[n] for n in kept), min(sizes.values())
            total_auto += ours
            total_best += best
            rows += 1
            if ours > 1.01 * best:
                off += 1
                print(f"  {key} {x.shape} E = {fraction:g} of the range: auto {ours:,} "
                      f"({'/'.join(kept)}), best {best:,} ({min(sizes, key=sizes.get)}), "
                      f"{ours / best:.3f}x")
    print(f"{rows} rows: auto {total_auto:,} bytes, the best predictor of each row "
          f"{total_best:,} ({total_auto / total_best:.4f}x); {off} rows more than 1% above")


if __name__ == "__main__":
    main()
