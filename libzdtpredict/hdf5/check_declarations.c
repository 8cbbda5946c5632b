/* Compiles the plugin's own HDF5 declarations (H5Z_zdt_predict.c declares what it needs, so
   that it builds without HDF5's headers) against HDF5's headers: any mismatch in a constant, a
   struct's layout or a function's type stops the build. CMake builds it where HDF5's headers
   are found (Debian: libhdf5-dev); it is never linked. */
#define _GNU_SOURCE 1           /* (before any system header: the plugin needs dladdr) */
#include <stddef.h>
#include <hdf5.h>
#include "H5Z_zdt_predict.c"


#define ZH5_CHECK(name, cond) typedef char zh5_check_##name[(cond) ? 1 : -1]

ZH5_CHECK(hid, sizeof(zh5_hid_t) == sizeof(hid_t));
ZH5_CHECK(herr, sizeof(zh5_herr_t) == sizeof(herr_t));
ZH5_CHECK(hsize, sizeof(zh5_hsize_t) == sizeof(hsize_t));
ZH5_CHECK(filter_t, sizeof(zh5_filter_t) == sizeof(H5Z_filter_t));
ZH5_CHECK(class_size, sizeof(zh5_class2) == sizeof(H5Z_class2_t));
ZH5_CHECK(class_name, offsetof(zh5_class2, name) == offsetof(H5Z_class2_t, name));
ZH5_CHECK(class_filter, offsetof(zh5_class2, filter) == offsetof(H5Z_class2_t, filter));
ZH5_CHECK(class_vers, ZH5_CLASS_T_VERS == H5Z_CLASS_T_VERS);
ZH5_CHECK(mandatory, ZH5_FLAG_MANDATORY == H5Z_FLAG_MANDATORY);
ZH5_CHECK(reverse, ZH5_FLAG_REVERSE == H5Z_FLAG_REVERSE);
ZH5_CHECK(pl_filter, ZH5_PL_TYPE_FILTER == H5PL_TYPE_FILTER);
ZH5_CHECK(t_integer, ZH5_T_INTEGER == H5T_INTEGER);
ZH5_CHECK(t_float, ZH5_T_FLOAT == H5T_FLOAT);
ZH5_CHECK(order_le, ZH5_T_ORDER_LE == H5T_ORDER_LE);
ZH5_CHECK(order_be, ZH5_T_ORDER_BE == H5T_ORDER_BE);
ZH5_CHECK(sgn_none, ZH5_T_SGN_NONE == H5T_SGN_NONE);
ZH5_CHECK(sgn_2, ZH5_T_SGN_2 == H5T_SGN_2);
ZH5_CHECK(fill_undefined, ZH5_D_FILL_VALUE_UNDEFINED == H5D_FILL_VALUE_UNDEFINED);
ZH5_CHECK(e_default, ZH5_E_DEFAULT == H5E_DEFAULT);
ZH5_CHECK(max_rank, ZH5_MAX_RANK == H5S_MAX_RANK);

/* the callbacks' types, and each function pointer the plugin fills with dlsym */
void zh5_check_types(zh5_api *api, zh5_class2 *c, H5Z_class2_t *h);
void zh5_check_types(zh5_api *api, zh5_class2 *c, H5Z_class2_t *h)
{
    h->can_apply = c->can_apply;
    h->set_local = c->set_local;
    h->filter = c->filter;
    api->tget_class = (int (*)(zh5_hid_t))H5Tget_class;     /* (enums: int-sized) */
    api->tget_size = H5Tget_size;
    api->tget_order = (int (*)(zh5_hid_t))H5Tget_order;
    api->tget_sign = (int (*)(zh5_hid_t))H5Tget_sign;
    /* (hsize_t: unsigned long long in 1.10, uint64_t since 1.13: the same 64 bits) */
    api->pget_chunk = (int (*)(zh5_hid_t, int, zh5_hsize_t *))H5Pget_chunk;
    api->pget_filter_by_id2 = H5Pget_filter_by_id2;
    api->pget_nfilters = H5Pget_nfilters;
    api->pget_filter2 = H5Pget_filter2;
    api->pmodify_filter = H5Pmodify_filter;
    api->pfill_value_defined = (zh5_herr_t (*)(zh5_hid_t, int *))H5Pfill_value_defined;
    api->pget_fill_value = H5Pget_fill_value;
    api->epush2 = H5Epush2;
}
