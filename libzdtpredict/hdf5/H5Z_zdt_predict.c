/* H5Z_zdt_predict.c: zdt.predict as an HDF5 filter plugin (docs/codecs/predict.md, "HDF5 face").
 *
 * Links no libhdf5. HDF5 calls the filter's three callbacks; the few HDF5 functions they call
 * (set_local's H5P / H5T queries, H5Epush2, HDF5's allocator) are looked up with dlsym in the
 * very HDF5 that called them (the library holding the callback's return address, found with
 * dladdr), else in the process's global scope. So one build serves every HDF5 in a process:
 * h5py's bundled one, netCDF4-python's, a system's h5dump: linking a libhdf5 would bind it to
 * one of them ("two HDF5s in one process"), and an unresolved HDF5 symbol would kill a process
 * whose HDF5 is loaded RTLD_LOCAL (Python's extensions).
 *
 * The chunk bytes are exactly the zarr face's chunk: zdt_predict_encode_with / zdt_predict_decode
 * of libzdtpredict on the whole chunk HDF5 hands over, zstd from libzstd (the default provider).
 * The filter callback looks HDF5 up only to report an error (the lookup costs ~20 us a chunk);
 * its buffers are malloc / free, as HDF5's allocator is in release builds and as every
 * registered filter plugin assumes (hdf5plugin's, H5Z-ZFP, H5Z-SZ3).
 *
 * Reentrant: no mutable global state but each thread's last error message (thread-local; HDF5
 * 2.x may run filters in several threads) and each thread's encode workspace (below).
 */
#define _GNU_SOURCE 1           /* dladdr, RTLD_DEFAULT, RTLD_NOLOAD (glibc); macOS has them */

#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "zdt_predict.h"
#include "H5Z_zdt_predict.h"

/* --- the HDF5 declarations the plugin needs --------------------------------------------------
   Declared here, not taken from HDF5's headers, so the plugin builds without them. They match
   HDF5 1.10.0 .. 2.x (checked against the headers of 1.10.8 and the exports of 2.0.0 and
   2.2.0): hid_t is 64-bit since 1.10; H5Z_class2_t, the flags and the enums below have not
   changed since 1.8. (hdf5/check_declarations.c compiles them against HDF5's own headers.) */
typedef int64_t zh5_hid_t;
typedef int zh5_herr_t;
typedef int zh5_htri_t;
typedef uint64_t zh5_hsize_t;
typedef int zh5_filter_t;

#define ZH5_CLASS_T_VERS 1
#define ZH5_FLAG_MANDATORY 0x0000u
#define ZH5_FLAG_REVERSE 0x0100u
#define ZH5_PL_TYPE_FILTER 0
#define ZH5_T_INTEGER 0
#define ZH5_T_FLOAT 1
#define ZH5_T_ORDER_LE 0
#define ZH5_T_ORDER_BE 1
#define ZH5_T_SGN_NONE 0
#define ZH5_T_SGN_2 1
#define ZH5_D_FILL_VALUE_UNDEFINED 0
#define ZH5_E_DEFAULT ((zh5_hid_t)0)
#define ZH5_MAX_RANK 32

typedef zh5_htri_t (*zh5_can_apply_func)(zh5_hid_t dcpl, zh5_hid_t type, zh5_hid_t space);
typedef zh5_herr_t (*zh5_set_local_func)(zh5_hid_t dcpl, zh5_hid_t type, zh5_hid_t space);
typedef size_t (*zh5_filter_func)(unsigned flags, size_t cd_nelmts, const unsigned cd_values[],
                                  size_t nbytes, size_t *buf_size, void **buf);
typedef struct {                /* H5Z_class2_t */
    int version;
    zh5_filter_t id;
    unsigned encoder_present;
    unsigned decoder_present;
    const char *name;
    zh5_can_apply_func can_apply;
    zh5_set_local_func set_local;
    zh5_filter_func filter;
} zh5_class2;

/* --- HDF5 functions, found at run time ------------------------------------------------------ */

typedef struct {
    void *handle;               /* the calling HDF5's handle (dlopen RTLD_NOLOAD), or NULL */
    int (*tget_class)(zh5_hid_t);
    size_t (*tget_size)(zh5_hid_t);
    int (*tget_order)(zh5_hid_t);
    int (*tget_sign)(zh5_hid_t);
    int (*pget_chunk)(zh5_hid_t, int, zh5_hsize_t *);
    zh5_herr_t (*pget_filter_by_id2)(zh5_hid_t, zh5_filter_t, unsigned *, size_t *, unsigned *,
                                     size_t, char *, unsigned *);
    int (*pget_nfilters)(zh5_hid_t);
    zh5_filter_t (*pget_filter2)(zh5_hid_t, unsigned, unsigned *, size_t *, unsigned *, size_t,
                                 char *, unsigned *);
    zh5_herr_t (*pmodify_filter)(zh5_hid_t, zh5_filter_t, unsigned, size_t, const unsigned *);
    zh5_herr_t (*pfill_value_defined)(zh5_hid_t, int *);
    zh5_herr_t (*pget_fill_value)(zh5_hid_t, zh5_hid_t, void *);
    zh5_herr_t (*epush2)(zh5_hid_t, const char *, const char *, unsigned, zh5_hid_t, zh5_hid_t,
                         zh5_hid_t, const char *, ...);
    const zh5_hid_t *err_cls;           /* H5E_ERR_CLS_g */
    const zh5_hid_t *maj_pline;         /* H5E_PLINE_g */
    const zh5_hid_t *min_cantfilter;    /* H5E_CANTFILTER_g */
    const zh5_hid_t *min_canapply;      /* H5E_CANAPPLY_g */
} zh5_api;

static void *zh5_sym(const zh5_api *api, const char *name)
{
    void *p = NULL;
    if (api->handle != NULL)
        p = dlsym(api->handle, name);
    if (p == NULL)
        p = dlsym(RTLD_DEFAULT, name);
    return p;
}

/* (a function pointer from dlsym's void *: POSIX guarantees the conversion) */
#define ZH5_LOAD(api, field, name) (*(void **)(&(api)->field) = zh5_sym((api), (name)))

/* The HDF5 that holds `caller` (a return address inside it); `full`: set_local's functions
   too, else only the error stack's. */
static void zh5_open(zh5_api *api, const void *caller, int full)
{
    Dl_info info;
    memset(api, 0, sizeof *api);
    if (caller != NULL && dladdr(caller, &info) != 0 && info.dli_fname != NULL)
        api->handle = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
    ZH5_LOAD(api, epush2, "H5Epush2");
    api->err_cls = (const zh5_hid_t *)zh5_sym(api, "H5E_ERR_CLS_g");
    api->maj_pline = (const zh5_hid_t *)zh5_sym(api, "H5E_PLINE_g");
    api->min_cantfilter = (const zh5_hid_t *)zh5_sym(api, "H5E_CANTFILTER_g");
    api->min_canapply = (const zh5_hid_t *)zh5_sym(api, "H5E_CANAPPLY_g");
    if (!full)
        return;
    ZH5_LOAD(api, tget_class, "H5Tget_class");
    ZH5_LOAD(api, tget_size, "H5Tget_size");
    ZH5_LOAD(api, tget_order, "H5Tget_order");
    ZH5_LOAD(api, tget_sign, "H5Tget_sign");
    ZH5_LOAD(api, pget_chunk, "H5Pget_chunk");
    ZH5_LOAD(api, pget_filter_by_id2, "H5Pget_filter_by_id2");
    ZH5_LOAD(api, pget_nfilters, "H5Pget_nfilters");
    ZH5_LOAD(api, pget_filter2, "H5Pget_filter2");
    ZH5_LOAD(api, pmodify_filter, "H5Pmodify_filter");
    ZH5_LOAD(api, pfill_value_defined, "H5Pfill_value_defined");
    ZH5_LOAD(api, pget_fill_value, "H5Pget_fill_value");
}

static void zh5_close(zh5_api *api)
{
    if (api->handle != NULL)
        dlclose(api->handle);
    api->handle = NULL;
}

static int zh5_full(const zh5_api *api)
{
    return api->tget_class && api->tget_size && api->tget_order && api->tget_sign
        && api->pget_chunk && api->pget_filter_by_id2 && api->pget_nfilters && api->pget_filter2
        && api->pmodify_filter && api->pfill_value_defined && api->pget_fill_value;
}

/* --- each thread's encode workspace ----------------------------------------------------------
   The encoder's arrays kept for the thread's next chunk (zdt_predict_encode_with): fresh pages
   for each chunk cost up to a quarter of an encode. At most ZH5_WORKSPACE bytes a thread,
   freed when the thread ends (the key's destructor). The plugin first pins itself in memory
   (RTLD_NODELETE), so that HDF5 closing it cannot leave that destructor unmapped; where that
   or the key fails, chunks are encoded without a workspace. */
#define ZH5_WORKSPACE ((size_t)64 << 20)
static pthread_key_t zh5_key;
static pthread_once_t zh5_once = PTHREAD_ONCE_INIT;
static int zh5_key_made;        /* set once, inside pthread_once */

static void zh5_workspace_end(void *ws) { zdt_predict_workspace_free((zdt_predict_workspace *)ws); }

static void zh5_workspace_key(void) {
    static const char here = 0;
    Dl_info info;
    /* (the handle is kept: the one reference that is never closed) */
    if (dladdr(&here, &info) == 0 || info.dli_fname == NULL ||
        dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE) == NULL)
        return;
    zh5_key_made = pthread_key_create(&zh5_key, zh5_workspace_end) == 0;
}

/* the calling thread's workspace, made on its first encode; NULL: none */
static zdt_predict_workspace *zh5_workspace(void) {
    zdt_predict_workspace *ws;
    if (pthread_once(&zh5_once, zh5_workspace_key) != 0 || !zh5_key_made)
        return NULL;
    ws = (zdt_predict_workspace *)pthread_getspecific(zh5_key);
    if (ws == NULL) {
        ws = zdt_predict_workspace_new(ZH5_WORKSPACE);
        if (ws != NULL && pthread_setspecific(zh5_key, ws) != 0) {
            zdt_predict_workspace_free(ws);
            ws = NULL;
        }
    }
    return ws;
}

/* The message of this thread's last failed callback ("" after one that succeeded): HDF5 1.14.4
   and later drop what a filter pushes onto the error stack, so a caller asks for it here. */
static __thread char zh5_last[768];

/* An error onto the calling HDF5's error stack (when it has H5Epush2: 1.8 and later) and into
   zh5_last. `setup`: a dataset-creation error (H5E_CANAPPLY), else a filter error
   (H5E_CANTFILTER). */
static void zh5_error(const zh5_api *api, const char *func, unsigned line, int setup,
                      const char *fmt, ...)
{
    char *msg = zh5_last;
    va_list ap;
    const zh5_hid_t *minor = setup && api->min_canapply ? api->min_canapply : api->min_cantfilter;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof zh5_last, fmt, ap);
    va_end(ap);
    if (api->epush2 != NULL && api->err_cls != NULL && api->maj_pline != NULL && minor != NULL)
        api->epush2(ZH5_E_DEFAULT, __FILE__, func, line, *api->err_cls, *api->maj_pline, *minor,
                    "%s", msg);
}

#define ZH5_FAIL(api, setup, ...) zh5_error((api), __func__, __LINE__, (setup), __VA_ARGS__)

/* --- cd_values ------------------------------------------------------------------------------ */

static double zh5_get_f64(const unsigned *cd)
{
    uint64_t u = (uint64_t)(cd[0] & 0xFFFFFFFFu) | ((uint64_t)(cd[1] & 0xFFFFFFFFu) << 32);
    double v;
    memcpy(&v, &u, sizeof v);
    return v;
}

static void zh5_put_f64(unsigned *cd, double v)
{
    uint64_t u;
    memcpy(&u, &v, sizeof u);
    cd[0] = (unsigned)(u & 0xFFFFFFFFu);
    cd[1] = (unsigned)(u >> 32);
}

static const char *zh5_dtype_name(unsigned dtype)
{
    static const char *const names[] = {"?", "float32", "float64", "int8", "uint8", "int16",
                                        "uint16", "int32", "uint32"};
    return dtype <= 8 ? names[dtype] : "?";
}

/* The words before the rank in a table of `layout` (1 or 2). */
static size_t zh5_head(unsigned layout)
{
    return layout == 1 ? (size_t)ZDT_PREDICT_H5Z_CD_RANK : (size_t)ZDT_PREDICT_H5Z_CD_EFFORT + 1;
}

/* A layout-1 or layout-2 table (a user's or a stored one) into *p. 0, or -1 with the reason in
   why. `stored`: the whole table set_local writes. */
static int zh5_read_cd(size_t n, const unsigned *cd, int stored, zdt_predict_params *p,
                       unsigned *fill_word, char *why, size_t why_size)
{
    unsigned kind, fill, predictor, effort, layout;
    size_t head;
    double bound;
    zdt_predict_params_init(p);
    if (n < 1) {
        snprintf(why, why_size, "zdt.predict: the filter has no cd_values (it needs at least %d "
                 "words: docs/codecs/predict.md, HDF5 face)", ZDT_PREDICT_H5Z_CD_USER_MIN);
        return -1;
    }
    layout = cd[ZDT_PREDICT_H5Z_CD_LAYOUT];
    if (layout < 1 || layout > ZDT_PREDICT_H5Z_LAYOUT_NEWEST) {
        snprintf(why, why_size, "zdt.predict: cd_values layout version %u is not one this filter "
                 "reads (it reads layouts 1 .. %d)%s", layout, ZDT_PREDICT_H5Z_LAYOUT_NEWEST,
                 layout > ZDT_PREDICT_H5Z_LAYOUT_NEWEST ? "; a newer zdt wrote it: install a "
                 "newer zdt (pip install -U zdt)" : "");
        return -1;
    }
    head = zh5_head(layout);
    if (stored ? n < head + 2 : (n < ZDT_PREDICT_H5Z_CD_USER_MIN || n > head)) {
        snprintf(why, why_size, "zdt.predict: cd_values of %zu words, layout %u takes %s", n,
                 layout, stored ? (layout == 1 ? "10 + rank (set_local writes them)"
                                               : "11 + rank (set_local writes them)")
                                : (layout == 1 ? "5 to 9" : "5 to 10"));
        return -1;
    }
    kind = cd[ZDT_PREDICT_H5Z_CD_BOUND_KIND];
    bound = zh5_get_f64(cd + ZDT_PREDICT_H5Z_CD_BOUND);
    if (kind != ZDT_PREDICT_H5Z_ABS && kind != ZDT_PREDICT_H5Z_REL) {
        snprintf(why, why_size, "zdt.predict: cd_values word 2, the bound's kind, is %u: 1 "
                 "(abs_error) or 2 (rel_error)", kind);
        return -1;
    }
    if (!(bound > 0.0) || !isfinite(bound)) {
        snprintf(why, why_size, "zdt.predict: cd_values words 3, 4 (the %s, binary64, low word "
                 "first) hold %.17g: a finite number > 0", kind == 1 ? "abs_error" : "rel_error",
                 bound);
        return -1;
    }
    fill = n > ZDT_PREDICT_H5Z_CD_FILL ? cd[ZDT_PREDICT_H5Z_CD_FILL] : ZDT_PREDICT_H5Z_FILL_DATASET;
    if (fill > (stored ? 1u : 2u) || (!stored && fill == 1 && n < 8)) {
        snprintf(why, why_size, "zdt.predict: cd_values word 5, the fill, is %u: 0 (none), 1 (the "
                 "value in words 6, 7)%s", fill, stored ? "" : " or 2 (the dataset's fill value)");
        return -1;
    }
    predictor = n > ZDT_PREDICT_H5Z_CD_PREDICTOR ? cd[ZDT_PREDICT_H5Z_CD_PREDICTOR] : 0;
    if (predictor > 4) {
        snprintf(why, why_size, "zdt.predict: cd_values word 8, the predictor, is %u: 0 (auto) "
                 "or 1 .. 4", predictor);
        return -1;
    }
    effort = layout == ZDT_PREDICT_H5Z_LAYOUT_EFFORT && n > ZDT_PREDICT_H5Z_CD_EFFORT ? cd[ZDT_PREDICT_H5Z_CD_EFFORT] : 0;
    if (effort > ZDT_PREDICT_EFFORT_MAX) {
        snprintf(why, why_size, "zdt.predict: cd_values word 9, the effort, is %u: 0 (default), "
                 "1 (fast) or 2 (max)", effort);
        return -1;
    }
    p->effort = (int)effort;
    if (kind == ZDT_PREDICT_H5Z_ABS)
        p->abs_error = bound;
    else
        p->rel_error = bound;
    p->predictor = (int)predictor;
    *fill_word = fill;
    if (fill == ZDT_PREDICT_H5Z_FILL_VALUE) {
        p->has_fill = 1;
        p->fill = zh5_get_f64(cd + ZDT_PREDICT_H5Z_CD_FILL_VALUE);
    }
    if (stored) {
        unsigned dtype = cd[ZDT_PREDICT_H5Z_CD_DTYPE], rank = cd[head], d;
        if (dtype < ZDT_PREDICT_FLOAT32 || dtype > ZDT_PREDICT_UINT32) {
            snprintf(why, why_size, "zdt.predict: cd_values word 1, the data type, is %u: 1 .. 8",
                     dtype);
            return -1;
        }
        if (rank < 1 || rank > ZDT_PREDICT_MAX_DIMS || n != head + 1 + rank) {
            snprintf(why, why_size, "zdt.predict: cd_values of %zu words with rank %u (word %zu): "
                     "layout %u holds %zu + rank words, rank 1 .. %d", n, rank, head, layout,
                     head + 1, ZDT_PREDICT_MAX_DIMS);
            return -1;
        }
        if (kind == ZDT_PREDICT_H5Z_REL && dtype > ZDT_PREDICT_FLOAT64) {
            snprintf(why, why_size, "zdt.predict: rel_error with the data type %s (float32 and "
                     "float64 only)", zh5_dtype_name(dtype));
            return -1;
        }
        p->dtype = dtype;
        p->ndim = rank;
        for (d = 0; d < rank; d++)
            p->shape[d] = cd[head + 1 + d];
    }
    return 0;
}

/* --- the callbacks -------------------------------------------------------------------------- */

/* The dataset's type as a zdt_predict_dtype: 0, or -1 with the reason in why. */
static int zh5_dtype(const zh5_api *api, zh5_hid_t type_id, unsigned *dtype, char *why,
                     size_t why_size)
{
    const uint16_t one = 1;
    unsigned char host_le;
    int cls = api->tget_class(type_id), order = api->tget_order(type_id);
    int sign = api->tget_sign(type_id);
    size_t size = api->tget_size(type_id);
    memcpy(&host_le, &one, 1);
    *dtype = 0;
    if (cls == ZH5_T_FLOAT && size == 4)
        *dtype = ZDT_PREDICT_FLOAT32;
    else if (cls == ZH5_T_FLOAT && size == 8)
        *dtype = ZDT_PREDICT_FLOAT64;
    else if (cls == ZH5_T_INTEGER && (size == 1 || size == 2 || size == 4)
             && (sign == ZH5_T_SGN_2 || sign == ZH5_T_SGN_NONE))
        *dtype = (size == 1 ? ZDT_PREDICT_INT8 : size == 2 ? ZDT_PREDICT_INT16 : ZDT_PREDICT_INT32)
            + (sign == ZH5_T_SGN_NONE);
    if (*dtype == 0) {
        snprintf(why, why_size, "zdt.predict: the dataset's data type (HDF5 class %d, %zu bytes) "
                 "is not one zdt.predict codes: float32, float64, (u)int8, (u)int16, (u)int32",
                 cls, size);
        return -1;
    }
    if (size > 1 && order != (host_le ? ZH5_T_ORDER_LE : ZH5_T_ORDER_BE)) {
        snprintf(why, why_size, "zdt.predict: the dataset's data type is %s-endian, this machine "
                 "is %s-endian: zdt.predict codes the machine's byte order only",
                 order == ZH5_T_ORDER_BE ? "big" : "little", host_le ? "little" : "big");
        return -1;
    }
    return 0;
}

static zh5_htri_t zh5_can_apply(zh5_hid_t dcpl, zh5_hid_t type_id, zh5_hid_t space)
{
    zh5_api api;
    char why[512];
    unsigned dtype;
    zh5_htri_t ok = 1;
    (void)dcpl;
    (void)space;
    zh5_last[0] = '\0';
    zh5_open(&api, __builtin_return_address(0), 1);
    if (!zh5_full(&api)) {
        ZH5_FAIL(&api, 1, "zdt.predict: the HDF5 functions the filter calls were not found in "
                 "the HDF5 that loaded it");
        ok = -1;
    } else if (zh5_dtype(&api, type_id, &dtype, why, sizeof why) != 0) {
        /* an error, not "not applicable": h5py asks for an optional filter, which HDF5 would
           then leave out without a word */
        ZH5_FAIL(&api, 1, "%s", why);
        ok = -1;
    }
    zh5_close(&api);
    return ok;
}

static zh5_herr_t zh5_set_local(zh5_hid_t dcpl, zh5_hid_t type_id, zh5_hid_t space)
{
    zh5_api api;
    char why[512], name[256];
    unsigned user[64], cd[ZDT_PREDICT_H5Z_CD_EFFORT + 2 + ZH5_MAX_RANK], flags = 0, fill_word = 0;
    unsigned dtype, first_flags = 0, config = 0, layout;
    size_t n = sizeof user / sizeof user[0], first_n = 0, d, head;
    zh5_hsize_t dims[ZH5_MAX_RANK];
    zdt_predict_params p;
    int rank, status = -1;
    zh5_filter_t first;
    (void)space;
    zh5_last[0] = '\0';
    zh5_open(&api, __builtin_return_address(0), 1);
    if (!zh5_full(&api)) {
        ZH5_FAIL(&api, 1, "zdt.predict: the HDF5 functions the filter calls were not found in "
                 "the HDF5 that loaded it");
        goto done;
    }
    if (api.pget_filter_by_id2(dcpl, ZDT_PREDICT_H5Z_FILTER_ID, &flags, &n, user, 0, NULL,
                               &config) < 0) {
        ZH5_FAIL(&api, 1, "zdt.predict: the filter's cd_values could not be read");
        goto done;
    }
    if (n > sizeof user / sizeof user[0]) {
        ZH5_FAIL(&api, 1, "zdt.predict: cd_values of %zu words, layouts 1 and 2 take 5 to 10", n);
        goto done;
    }
    if (zh5_read_cd(n, user, 0, &p, &fill_word, why, sizeof why) != 0
            || zh5_dtype(&api, type_id, &dtype, why, sizeof why) != 0) {
        ZH5_FAIL(&api, 1, "%s", why);
        goto done;
    }
    first = api.pget_filter2(dcpl, 0, &first_flags, &first_n, NULL, sizeof name, name, &config);
    if (first != ZDT_PREDICT_H5Z_FILTER_ID) {
        name[sizeof name - 1] = '\0';
        ZH5_FAIL(&api, 1, "zdt.predict: the filter %d (%s) comes before zdt.predict in the "
                 "dataset's pipeline: zdt.predict takes the array's elements, so it must come "
                 "first (h5py: shuffle=False, no scaleoffset)", (int)first, name);
        goto done;
    }
    rank = api.pget_chunk(dcpl, ZH5_MAX_RANK, dims);
    if (rank < 1 || rank > ZH5_MAX_RANK) {
        ZH5_FAIL(&api, 1, "zdt.predict: the dataset is not chunked (HDF5 filters apply to "
                 "chunked datasets only)");
        goto done;
    }
    if (p.rel_error > 0 && dtype > ZDT_PREDICT_FLOAT64) {
        ZH5_FAIL(&api, 1, "zdt.predict: rel_error with the data type %s (float32 and float64 "
                 "only; integer arrays take abs_error)", zh5_dtype_name(dtype));
        goto done;
    }
    if (fill_word == ZDT_PREDICT_H5Z_FILL_VALUE && dtype > ZDT_PREDICT_FLOAT64) {
        ZH5_FAIL(&api, 1, "zdt.predict: a fill value in cd_values (word 5 = 1) with the data "
                 "type %s: float arrays only (an integer array's fill value is the dataset's)",
                 zh5_dtype_name(dtype));
        goto done;
    }
    if (fill_word == ZDT_PREDICT_H5Z_FILL_VALUE && dtype == ZDT_PREDICT_FLOAT32)
        p.fill = (double)(float)p.fill;     /* converted to the data type, as zarr's `fill` */
    if (fill_word == ZDT_PREDICT_H5Z_FILL_DATASET) {
        int defined = -1;
        union { float f32; double f64; int8_t i8; uint8_t u8; int16_t i16; uint16_t u16;
                int32_t i32; uint32_t u32; unsigned char bytes[16]; } v;
        memset(&v, 0, sizeof v);
        if (api.pfill_value_defined(dcpl, &defined) < 0) {
            ZH5_FAIL(&api, 1, "zdt.predict: the dataset's fill value could not be read");
            goto done;
        }
        p.has_fill = 0;
        if (defined != ZH5_D_FILL_VALUE_UNDEFINED) {
            if (api.pget_fill_value(dcpl, type_id, v.bytes) < 0) {
                ZH5_FAIL(&api, 1, "zdt.predict: the dataset's fill value could not be read");
                goto done;
            }
            p.has_fill = 1;
            switch (dtype) {
            case ZDT_PREDICT_FLOAT32: p.fill = v.f32; break;
            case ZDT_PREDICT_FLOAT64: p.fill = v.f64; break;
            case ZDT_PREDICT_INT8: p.fill = v.i8; break;
            case ZDT_PREDICT_UINT8: p.fill = v.u8; break;
            case ZDT_PREDICT_INT16: p.fill = v.i16; break;
            case ZDT_PREDICT_UINT16: p.fill = v.u16; break;
            case ZDT_PREDICT_INT32: p.fill = v.i32; break;
            default: p.fill = v.u32; break;
            }
        }
    }
    memset(cd, 0, sizeof cd);
    /* layout 1 unless an effort is asked for: filters that read only layout 1 read it */
    layout = p.effort != ZDT_PREDICT_EFFORT_DEFAULT ? ZDT_PREDICT_H5Z_LAYOUT_EFFORT
                                                    : ZDT_PREDICT_H5Z_LAYOUT;
    head = zh5_head(layout);
    cd[ZDT_PREDICT_H5Z_CD_LAYOUT] = layout;
    if (layout == ZDT_PREDICT_H5Z_LAYOUT_EFFORT)
        cd[ZDT_PREDICT_H5Z_CD_EFFORT] = (unsigned)p.effort;
    cd[ZDT_PREDICT_H5Z_CD_DTYPE] = dtype;
    cd[ZDT_PREDICT_H5Z_CD_BOUND_KIND] = p.rel_error > 0 ? ZDT_PREDICT_H5Z_REL : ZDT_PREDICT_H5Z_ABS;
    zh5_put_f64(cd + ZDT_PREDICT_H5Z_CD_BOUND, p.rel_error > 0 ? p.rel_error : p.abs_error);
    cd[ZDT_PREDICT_H5Z_CD_FILL] = p.has_fill ? ZDT_PREDICT_H5Z_FILL_VALUE : ZDT_PREDICT_H5Z_FILL_NONE;
    if (p.has_fill)
        zh5_put_f64(cd + ZDT_PREDICT_H5Z_CD_FILL_VALUE, p.fill);
    cd[ZDT_PREDICT_H5Z_CD_PREDICTOR] = (unsigned)p.predictor;
    cd[head] = (unsigned)rank;
    p.dtype = dtype;
    p.ndim = (uint32_t)rank;
    for (d = 0; d < (size_t)rank; d++) {
        if (dims[d] > 0xFFFFFFFFu) {
            ZH5_FAIL(&api, 1, "zdt.predict: a chunk extent of %llu", (unsigned long long)dims[d]);
            goto done;
        }
        cd[head + 1 + d] = (unsigned)dims[d];
        p.shape[d] = dims[d];
    }
    if (zdt_predict_encode_bound(&p) == 0) {
        ZH5_FAIL(&api, 1, "zdt.predict: the encoder does not take these parameters (data type "
                 "%s, %d dimensions)", zh5_dtype_name(dtype), rank);
        goto done;
    }
    /* mandatory: a write the filter fails must fail, never store the chunk unfiltered */
    if (api.pmodify_filter(dcpl, ZDT_PREDICT_H5Z_FILTER_ID, ZH5_FLAG_MANDATORY,
                           head + 1 + (size_t)rank, cd) < 0) {
        ZH5_FAIL(&api, 1, "zdt.predict: the filter's cd_values could not be written");
        goto done;
    }
    status = 0;
done:
    zh5_close(&api);
    return status;
}

static size_t zh5_filter(unsigned flags, size_t cd_nelmts, const unsigned cd_values[],
                         size_t nbytes, size_t *buf_size, void **buf)
{
    zh5_api api;
    zdt_predict_params p;
    zdt_predict_error err;
    char why[512];
    unsigned fill_word;
    size_t size = 0, out_n = 0;
    void *out = NULL;
    int status;
    const void *caller = __builtin_return_address(0);
    /* (HDF5 is looked up only to report an error: ZH5_FILTER_FAIL) */
#define ZH5_FILTER_FAIL(...) do { zh5_open(&api, caller, 0); ZH5_FAIL(&api, 0, __VA_ARGS__); \
                                  zh5_close(&api); } while (0)
    zh5_last[0] = '\0';
    if (zh5_read_cd(cd_nelmts, cd_values, 1, &p, &fill_word, why, sizeof why) != 0) {
        ZH5_FILTER_FAIL("%s", why);
        goto fail;
    }
    if (zdt_predict_decoded_size(&p, &size, &err) != ZDT_PREDICT_OK) {
        ZH5_FILTER_FAIL("%s", err.message);
        goto fail;
    }
    if (flags & ZH5_FLAG_REVERSE) {
        out = malloc(size > 0 ? size : 1);
        if (out == NULL) {
            ZH5_FILTER_FAIL("zdt.predict: no memory for a decoded chunk of %zu bytes", size);
            goto fail;
        }
        status = zdt_predict_decode(*buf, nbytes, &p, out, size, &err);
        if (status != ZDT_PREDICT_OK) {
            ZH5_FILTER_FAIL("%s%s%s%s", err.message, err.part[0] ? " (part " : "", err.part,
                            err.part[0] ? ")" : "");
            goto fail;
        }
        out_n = size;
        *buf_size = size;
    } else {
        size_t cap, written = 0;
        if (nbytes != size) {
            ZH5_FILTER_FAIL("zdt.predict: a chunk of %zu bytes, its shape in cd_values takes "
                            "%zu", nbytes, size);
            goto fail;
        }
        cap = zdt_predict_encode_bound(&p);
        if (cap == 0) {
            ZH5_FILTER_FAIL("zdt.predict: the encoder does not take these parameters");
            goto fail;
        }
        out = malloc(cap);
        if (out == NULL) {
            ZH5_FILTER_FAIL("zdt.predict: no memory for an encoded chunk of %zu bytes", cap);
            goto fail;
        }
        status = zdt_predict_encode_with(zh5_workspace(), *buf, nbytes, &p, out, cap, &written,
                                         &err);
        if (status != ZDT_PREDICT_OK) {
            ZH5_FILTER_FAIL("%s", err.message);
            goto fail;
        }
        out_n = written;
        *buf_size = cap;        /* (the buffer's size: HDF5 >= 2.2 checks it holds out_n) */
    }
    free(*buf);
    *buf = out;
    return out_n;
fail:
    free(out);
    return 0;
#undef ZH5_FILTER_FAIL
}

/* --- the plugin's two exports --------------------------------------------------------------- */

static const zh5_class2 zh5_class = {
    ZH5_CLASS_T_VERS,
    ZDT_PREDICT_H5Z_FILTER_ID,
    1, 1,
    /* HDF5 stores this name in each file, and names the filter with it when it is missing */
    "zdt.predict (pip install zdt; then import zdt.hdf5, or "
    "HDF5_PLUGIN_PATH=<zdt.hdf5.PLUGIN_PATH>)",
    zh5_can_apply,
    zh5_set_local,
    zh5_filter,
};

#if defined(__GNUC__) && __GNUC__ >= 4
#  define ZH5_EXPORT __attribute__((visibility("default")))
#else
#  define ZH5_EXPORT
#endif

ZH5_EXPORT int H5PLget_plugin_type(void);
ZH5_EXPORT const void *H5PLget_plugin_info(void);
ZH5_EXPORT const char *zdt_predict_h5z_last_error(void);

/* The message of the calling thread's last failed filter call, dataset creation included ("":
   its last call succeeded, or none failed); for callers whose HDF5 drops the filter's own
   errors (1.14.4 and later: "filter returned failure during read"). Found with dlsym. */
ZH5_EXPORT const char *zdt_predict_h5z_last_error(void)
{
    return zh5_last;
}

ZH5_EXPORT int H5PLget_plugin_type(void)
{
    return ZH5_PL_TYPE_FILTER;
}

ZH5_EXPORT const void *H5PLget_plugin_info(void)
{
    return &zh5_class;
}
