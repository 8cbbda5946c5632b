/* example_netcdf.c: a netCDF-4 variable written through zdt.predict's HDF5 filter with
   netCDF-C's nc_def_var_filter, then read back and checked against the bound.

     cc example_netcdf.c -I. $(nc-config --cflags) $(nc-config --libs) -o example_netcdf
     HDF5_PLUGIN_PATH=<the directory of libh5zdtpredict.so> ./example_netcdf out.nc

   The filter's parameters are cd_values layout 1 (docs/codecs/predict.md, "HDF5 face"): the
   words a user gives, set_local completes them when the variable is created. tests/hdf5 builds
   and runs this program. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <netcdf.h>
#include <netcdf_filter.h>

#include "H5Z_zdt_predict.h"

#define NY 40
#define NX 50
#define CHECK(call) do { int s_ = (call); if (s_ != NC_NOERR) { \
    fprintf(stderr, "%s: %s\n", #call, nc_strerror(s_)); return 1; } } while (0)

int main(int argc, char **argv)
{
    static float x[NY][NX], y[NY][NX];
    const double E = 0.01;
    const float missing = 1e20f;
    size_t chunks[2] = {16, 32};
    unsigned params[ZDT_PREDICT_H5Z_CD_USER];
    int ncid, varid, dims[2], i, j;
    uint64_t u;
    double worst = 0;
    if (argc != 2) {
        fprintf(stderr, "usage: %s out.nc\n", argv[0]);
        return 2;
    }
    for (i = 0; i < NY; i++)
        for (j = 0; j < NX; j++)
            x[i][j] = i < 4 ? missing : (float)(280.0 + (i * i + 3 * j) / 64.0);     /* (exact) */

    /* layout 1; data type from the variable; abs_error E (binary64, low word first); the
       variable's _FillValue as the fill; predictor auto */
    memcpy(&u, &E, sizeof u);
    params[ZDT_PREDICT_H5Z_CD_LAYOUT] = ZDT_PREDICT_H5Z_LAYOUT;
    params[ZDT_PREDICT_H5Z_CD_DTYPE] = 0;
    params[ZDT_PREDICT_H5Z_CD_BOUND_KIND] = ZDT_PREDICT_H5Z_ABS;
    params[ZDT_PREDICT_H5Z_CD_BOUND] = (unsigned)(u & 0xFFFFFFFFu);
    params[ZDT_PREDICT_H5Z_CD_BOUND + 1] = (unsigned)(u >> 32);
    params[ZDT_PREDICT_H5Z_CD_FILL] = ZDT_PREDICT_H5Z_FILL_DATASET;
    params[ZDT_PREDICT_H5Z_CD_FILL_VALUE] = 0;
    params[ZDT_PREDICT_H5Z_CD_FILL_VALUE + 1] = 0;
    params[ZDT_PREDICT_H5Z_CD_PREDICTOR] = 0;

    CHECK(nc_create(argv[1], NC_NETCDF4 | NC_CLOBBER, &ncid));
    CHECK(nc_def_dim(ncid, "lat", NY, &dims[0]));
    CHECK(nc_def_dim(ncid, "lon", NX, &dims[1]));
    CHECK(nc_def_var(ncid, "t", NC_FLOAT, 2, dims, &varid));
    CHECK(nc_def_var_chunking(ncid, varid, NC_CHUNKED, chunks));
    CHECK(nc_def_var_fill(ncid, varid, 0, &missing));
    CHECK(nc_def_var_filter(ncid, varid, ZDT_PREDICT_H5Z_FILTER_ID, ZDT_PREDICT_H5Z_CD_USER,
                            params));
    CHECK(nc_enddef(ncid));
    CHECK(nc_put_var_float(ncid, varid, &x[0][0]));
    CHECK(nc_close(ncid));

    CHECK(nc_open(argv[1], NC_NOWRITE, &ncid));
    CHECK(nc_inq_varid(ncid, "t", &varid));
    CHECK(nc_get_var_float(ncid, varid, &y[0][0]));
    CHECK(nc_close(ncid));
    for (i = 0; i < NY; i++)
        for (j = 0; j < NX; j++) {
            double d = fabs((double)y[i][j] - (double)x[i][j]);
            if (x[i][j] == missing ? y[i][j] != missing : !(d <= E)) {
                fprintf(stderr, "t[%d][%d]: %.9g read back as %.9g\n", i, j, x[i][j], y[i][j]);
                return 1;
            }
            if (x[i][j] != missing && d > worst)
                worst = d;
        }
    printf("%s: t written through zdt.predict (filter %d), read back: largest error %.6g <= %g\n",
           argv[1], ZDT_PREDICT_H5Z_FILTER_ID, worst, E);
    return 0;
}
