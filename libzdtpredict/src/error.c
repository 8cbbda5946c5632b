/* Statuses, the error struct, the version queries. */
#include <stdarg.h>
#include <stdio.h>

#include "internal.h"

int zdt__fail(zdt_predict_error *err, int status, const char *part, const char *fmt, ...) {
    va_list ap;
    int k;
    if (err == NULL)
        return status;
    err->status = status;
    strncpy(err->part, part, sizeof(err->part) - 1);
    err->part[sizeof(err->part) - 1] = '\0';
    k = snprintf(err->message, sizeof(err->message), "zdt.predict: ");
    if (k < 0 || (size_t)k >= sizeof(err->message))
        k = 0;
    va_start(ap, fmt);
    vsnprintf(err->message + k, sizeof(err->message) - (size_t)k, fmt, ap);
    va_end(ap);
    return status;
}

const char *zdt_predict_status_string(int status) {
    switch (status) {
    case ZDT_PREDICT_OK: return "ok";
    case ZDT_PREDICT_E_CORRUPT: return "corrupt chunk";
    case ZDT_PREDICT_E_PARAM: return "invalid parameter";
    case ZDT_PREDICT_E_DST_SIZE: return "output buffer too small or misaligned";
    case ZDT_PREDICT_E_UNSUPPORTED: return "chunk format not supported by this library";
    case ZDT_PREDICT_E_FORMAT_TOO_NEW: return "chunk of a newer format than this library reads";
    case ZDT_PREDICT_E_NOMEM: return "out of memory";
    default: return "unknown status";
    }
}

unsigned zdt_predict_version_number(void) { return ZDT_PREDICT_VERSION_NUMBER; }

const char *zdt_predict_version_string(void) { return ZDT_PREDICT_VERSION_STRING; }

int zdt_predict_abi_version(void) { return ZDT_PREDICT_ABI_VERSION; }

void zdt_predict_params_init(zdt_predict_params *params) {
    if (params == NULL)
        return;
    memset(params, 0, sizeof(*params));
    params->struct_size = (uint32_t)sizeof(*params);
    params->dtype = ZDT_PREDICT_FLOAT64;
    params->predictor = ZDT_PREDICT_PREDICTOR_AUTO;
    params->entropy = ZDT_PREDICT_ENTROPY_AUTO;
    params->level = 3;
}
