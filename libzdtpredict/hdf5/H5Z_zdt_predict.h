/* H5Z_zdt_predict.h: zdt.predict as an HDF5 filter (docs/codecs/predict.md, "HDF5 face").
 *
 * The filter id and the cd_values layout, for programs that set the filter themselves
 * (H5Pset_filter, nc_def_var_filter). The plugin (libh5zdtpredict.so) links no libhdf5; this
 * header needs no HDF5 header either.
 */
#ifndef H5Z_ZDT_PREDICT_H
#define H5Z_ZDT_PREDICT_H

/* the filter id: from the range HDF5 leaves to unregistered filters (32768 .. 65535), until a
   registered one replaces it. Named here and in zdt/hdf5.py (FILTER_ID) only. */
#define ZDT_PREDICT_H5Z_FILTER_ID 55888

/* the cd_values layouts (word 0): 1, and 2 (layout 1 with the encoder's effort in word 9). The
   plugin reads both and writes layout 1 unless an effort other than the default is asked for,
   so that every filter that reads layout 1 reads what it writes. */
#define ZDT_PREDICT_H5Z_LAYOUT 1
#define ZDT_PREDICT_H5Z_LAYOUT_EFFORT 2
#define ZDT_PREDICT_H5Z_LAYOUT_NEWEST 2

/* word indices of layouts 1 and 2 */
#define ZDT_PREDICT_H5Z_CD_LAYOUT 0
#define ZDT_PREDICT_H5Z_CD_DTYPE 1          /* a zdt_predict_dtype; 0 before set_local */
#define ZDT_PREDICT_H5Z_CD_BOUND_KIND 2     /* ZDT_PREDICT_H5Z_ABS or ZDT_PREDICT_H5Z_REL */
#define ZDT_PREDICT_H5Z_CD_BOUND 3          /* 2 words: binary64, low word first */
#define ZDT_PREDICT_H5Z_CD_FILL 5           /* ZDT_PREDICT_H5Z_FILL_* */
#define ZDT_PREDICT_H5Z_CD_FILL_VALUE 6     /* 2 words: binary64, low word first */
#define ZDT_PREDICT_H5Z_CD_PREDICTOR 8      /* 0 auto, 1 .. 4 */
#define ZDT_PREDICT_H5Z_CD_EFFORT 9         /* layout 2: ZDT_PREDICT_EFFORT_* (0 default, 1 fast, 2 max) */
/* then the rank (set_local) at word 9 (layout 1) or 10 (layout 2), and as many extents, slowest
   first (set_local) */
#define ZDT_PREDICT_H5Z_CD_RANK 9           /* layout 1 */
#define ZDT_PREDICT_H5Z_CD_EXTENTS 10       /* layout 1 */
/* what a user gives: words 0 .. 8 (layout 1) or 0 .. 9 (layout 2), or fewer down to 0 .. 4 (then
   the predictor auto, the dataset's fill value, the default effort) */
#define ZDT_PREDICT_H5Z_CD_USER 9
#define ZDT_PREDICT_H5Z_CD_USER_MIN 5

#define ZDT_PREDICT_H5Z_ABS 1
#define ZDT_PREDICT_H5Z_REL 2

#define ZDT_PREDICT_H5Z_FILL_NONE 0
#define ZDT_PREDICT_H5Z_FILL_VALUE 1
#define ZDT_PREDICT_H5Z_FILL_DATASET 2      /* asked for only: set_local resolves it */

#endif /* H5Z_ZDT_PREDICT_H */
