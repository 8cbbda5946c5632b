/* The README's example: decode one zarr-face chunk of a float64 array of 19 x 27 (the golden
   chunk v1/float64-lorenzo-ans.bin: abs_error 0.01, fill value -9999), with error handling. */
#include <stdio.h>
#include <stdlib.h>

#include <zdt_predict.h>

int main(int argc, char **argv) {
    zdt_predict_params p;
    zdt_predict_error err;
    unsigned char chunk[1 << 16];
    size_t chunk_size, bytes;
    double *out;
    FILE *f;
    if (argc < 2 || (f = fopen(argv[1], "rb")) == NULL)
        return 2;
    chunk_size = fread(chunk, 1, sizeof(chunk), f);
    fclose(f);

    zdt_predict_params_init(&p);
    p.dtype = ZDT_PREDICT_FLOAT64;
    p.ndim = 2;
    p.shape[0] = 19;
    p.shape[1] = 27;
    p.abs_error = 0.01;         /* the codec's configuration */
    p.has_fill = 1;             /* the array's fill value */
    p.fill = -9999.0;
    if (zdt_predict_decoded_size(&p, &bytes, &err) != ZDT_PREDICT_OK) {
        fprintf(stderr, "%s\n", err.message);
        return 1;
    }
    out = (double *)malloc(bytes);
    if (zdt_predict_decode(chunk, chunk_size, &p, out, bytes, &err) != ZDT_PREDICT_OK) {
        fprintf(stderr, "%s (%s; part: %s)\n", err.message, zdt_predict_status_string(err.status),
                err.part);
        free(out);
        return 1;
    }
    printf("libzdt-predict %s: out[0][0] = %.17g, out[18][26] = %.17g\n",
           zdt_predict_version_string(), out[0], out[18 * 27 + 26]);
    /* a corrupt chunk: an error naming the part, never a crash */
    chunk[20] ^= 0xFF;
    if (zdt_predict_decode(chunk, chunk_size - 3, &p, out, bytes, &err) != ZDT_PREDICT_OK)
        printf("a corrupt chunk: %s (part \"%s\")\n", err.message, err.part);
    free(out);
    return 0;
}
