/* libFuzzer target of the C decoder: any input ends in ZDT_PREDICT_OK or an error, never a
   read past the buffer, a crash or a hang (clang -fsanitize=fuzzer,address,undefined; CMake:
   -DZDT_PREDICT_FUZZ=ON). The input's first 16 bytes choose the decoder's parameters, the
   rest is the chunk (make_seeds.py writes the golden chunks so):
     0      flags: 1 numcodecs face (shape and type from the buffer), 2 a fill value,
            4 the golden chunks' reference mask of 17 x 23
     1      data type (1 .. 8, as zdt_predict_dtype)
     2      number of dimensions (0 .. 5)
     3..12  five extents, u16 little-endian
     13     abs_error: an index into BOUNDS
     14     fill value: an index into FILLS
     15     unused
   Shapes of more than 2^20 elements, or more than 65,536 elements a byte of the chunk, are
   skipped: a zarr-face shape is the caller's (trusted), a numcodecs one is capped. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "zdt_predict.h"

static const double BOUNDS[] = {0.01, 0.003, 0.001, 0.5, 2.0, 7.5, 0.004, 0.02, 0.05, 0.1,
                                4.0, 500.0, 0.0, 1e-300, 1e300, 0.25};
static const double FILLS[] = {-9999.0, NAN, 3.0, -7.0, 1.0000000200408773e+20, 0.0, -INFINITY};

/* the golden chunks' reference mask (17 x 23: tests/predict_golden.py's `reference`) */
static const uint8_t REFERENCE_STREAM[] = {0x29, 0x45, 0x0c, 0x02, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x4c, 0x8d, 0x2a, 0x6a, 0xe4, 0x8b, 0xb8, 0x17, 0x06, 0x2d, 0x23, 0x86, 0x82, 0xad, 0x7c, 0xb4};

static void reference(uint8_t *bits) {
    zdt_predict_error err;
    if (zdt_predict_reference_decode(REFERENCE_STREAM, sizeof(REFERENCE_STREAM), 17, 23, bits,
                                     &err) != ZDT_PREDICT_OK)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    zdt_predict_params p;
    zdt_predict_error err;
    uint8_t ref[17 * 23];
    size_t offset = 0, bytes, n = 1;
    void *out;
    uint32_t d;
    if (size < 16)
        return 0;
    zdt_predict_params_init(&p);
    p.dtype = 1 + data[1] % 8;
    p.ndim = data[2] % 6;
    for (d = 0; d < p.ndim; d++) {
        p.shape[d] = (uint64_t)(data[3 + 2 * d] | data[4 + 2 * d] << 8);
        n *= (size_t)p.shape[d];
    }
    p.abs_error = BOUNDS[data[13] % (sizeof(BOUNDS) / sizeof(BOUNDS[0]))];
    if (p.dtype >= ZDT_PREDICT_INT8 && p.abs_error == 0.0)
        p.abs_error = 1.0;
    p.has_fill = (data[0] & 2) != 0;
    p.fill = FILLS[data[14] % (sizeof(FILLS) / sizeof(FILLS[0]))];
    if (data[0] & 4) {
        reference(ref);
        p.reference = ref;
        p.reference_shape[0] = 17;
        p.reference_shape[1] = 23;
    }
    data += 16;
    size -= 16;
    if (data[-16] & 1) {
        if (zdt_predict_numcodecs_header(data, size, &p, &offset, &err) != ZDT_PREDICT_OK)
            return 0;
        for (n = 1, d = 0; d < p.ndim; d++)
            n = p.shape[d] && n > ((size_t)1 << 20) / p.shape[d] ? ((size_t)1 << 20) + 1
                                                                  : n * (size_t)p.shape[d];
    }
    if (n > ((size_t)1 << 20) || n > 65536 * (size + 1))
        return 0;
    if (zdt_predict_decoded_size(&p, &bytes, &err) != ZDT_PREDICT_OK)
        return 0;
    out = malloc(bytes ? bytes : 1);
    if (out == NULL)
        return 0;
    if (zdt_predict_decode(data + offset, size - offset, &p, out, bytes, &err) != ZDT_PREDICT_OK) {
        /* an error names its status and a message */
        if (err.status >= 0 || err.message[0] == '\0')
            abort();
    }
    free(out);
    return 0;
}
