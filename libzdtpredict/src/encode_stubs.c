/* The parts of the encoder not written yet. */
#include "encode.h"

int zdt__encode_integers(const void *src, const zdt_predict_params *p, const zdt__grid *g,
                         zdt__buf *out, zdt_predict_error *err) {
    (void)src, (void)p, (void)g, (void)out;
    return zdt__fail(err, ZDT_PREDICT_E_UNSUPPORTED, "", "integer arrays: the C encoder does "
                     "not write them yet");
}
