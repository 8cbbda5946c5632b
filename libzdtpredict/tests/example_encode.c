/* The README's encoding example: a smooth 200 x 300 float64 field with a hole of missing
   values (NaN, the array's fill value) encoded within 0.01, decoded, every element checked;
   then a cut copy of the chunk, refused with an error naming the part. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <zdt_predict.h>

#define ROWS 200
#define COLS 300

int main(void) {
    zdt_predict_params p;
    zdt_predict_error err;
    size_t cap, written, bytes, i, masked = 0;
    double *field, *back, worst = 0.0;
    unsigned char *chunk;
    int status;

    field = (double *)malloc(sizeof(double) * ROWS * COLS);
    for (i = 0; i < (size_t)ROWS * COLS; i++) {
        double r = (double)(i / COLS), c = (double)(i % COLS);
        field[i] = 280.0 + 10.0 * sin(r / 17.0) * cos(c / 23.0);
        if ((r - 100) * (r - 100) + (c - 150) * (c - 150) < 900.0)
            field[i] = NAN;         /* land */
    }

    zdt_predict_params_init(&p);
    p.dtype = ZDT_PREDICT_FLOAT64;
    p.ndim = 2;
    p.shape[0] = ROWS;
    p.shape[1] = COLS;
    p.abs_error = 0.01;             /* the bound: every element within 0.01 */
    p.has_fill = 1;                 /* the array's fill value: NaN, coded as a mask */
    p.fill = NAN;

    cap = zdt_predict_encode_bound(&p);     /* the caller owns the output buffer */
    chunk = (unsigned char *)malloc(cap);
    status = zdt_predict_encode(field, sizeof(double) * ROWS * COLS, &p, chunk, cap, &written, &err);
    if (status != ZDT_PREDICT_OK) {
        fprintf(stderr, "%s (%s)\n", err.message, zdt_predict_status_string(err.status));
        return 1;
    }

    if (zdt_predict_decoded_size(&p, &bytes, &err) != ZDT_PREDICT_OK)
        return 1;
    back = (double *)malloc(bytes);
    if (zdt_predict_decode(chunk, written, &p, back, bytes, &err) != ZDT_PREDICT_OK) {
        fprintf(stderr, "%s (part %s)\n", err.message, err.part);
        return 1;
    }
    for (i = 0; i < (size_t)ROWS * COLS; i++) {
        if (isnan(field[i])) {
            if (!isnan(back[i]))
                return 1;       /* a missing value must come back missing */
            masked++;
        } else if (fabs(back[i] - field[i]) > worst) {
            worst = fabs(back[i] - field[i]);
        }
    }
    if (worst > 0.01)
        return 1;
    printf("%zu bytes for %zu float64 values (%zu missing); largest error %.6f\n",
           written, (size_t)ROWS * COLS, masked, worst);

    /* a chunk cut short: an error naming the part, never a crash */
    status = zdt_predict_decode(chunk, written / 2, &p, back, bytes, &err);
    if (status == ZDT_PREDICT_OK)
        return 1;
    printf("cut chunk: %s: %s (part \"%s\")\n", zdt_predict_status_string(status), err.message, err.part);

    free(field);
    free(back);
    free(chunk);
    return 0;
}
