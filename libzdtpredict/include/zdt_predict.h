/* zdt_predict.h: the C library of zdt.predict, the error-bounded prediction codec of zdt.
 *
 * The format is docs/codecs/predict.md of the zdt repository. This library is zdt's one
 * implementation of it: zdt's Python codecs call it. It encodes and decodes every chunk that
 * page defines (formats 1, 2 and 3: every predictor, masked chunks, reference masks,
 * pointwise-relative chunks, integer arrays). zstd and pcodec are providers the caller may
 * pass (zdt_predict_zstd: libzstd when NULL; zdt_predict_pcodec for entropy stages 1 and 2:
 * without one, those chunks return ZDT_PREDICT_E_UNSUPPORTED naming the stage).
 *
 * Contract:
 *  - every call is reentrant and thread-safe: no global mutable state, nothing printed; the
 *    one environment variable read is ZDT_PREDICT_SIMD ("avx2", "none"), by the encoder and
 *    the decoder: it narrows the vector path (the same bytes and bits on each); the library
 *    allocates only scratch memory it frees before returning, but for what a workspace the
 *    caller made keeps (zdt_predict_encode_with);
 *  - the caller owns every buffer: zdt_predict_decoded_size says how many bytes the output
 *    takes, zdt_predict_decode writes them;
 *  - any byte string handed to a decoder ends in ZDT_PREDICT_OK or in a negative status with
 *    the error struct filled: never a read past `src`, never a crash;
 *  - every decoder built from this source gives the same bits (C99, -ffp-contract=off, the
 *    spec's order of floating-point operations).
 */
#ifndef ZDT_PREDICT_H
#define ZDT_PREDICT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* the library's version (MAJOR * 10000 + MINOR * 100 + PATCH), and its ABI's: the ABI number
   changes whenever a struct below or a function's signature changes */
#define ZDT_PREDICT_VERSION_MAJOR 0
#define ZDT_PREDICT_VERSION_MINOR 4
#define ZDT_PREDICT_VERSION_PATCH 0
#define ZDT_PREDICT_VERSION_NUMBER \
    (ZDT_PREDICT_VERSION_MAJOR * 10000 + ZDT_PREDICT_VERSION_MINOR * 100 + ZDT_PREDICT_VERSION_PATCH)
#define ZDT_PREDICT_VERSION_STRING "0.4.0"
#define ZDT_PREDICT_ABI_VERSION 3
/* the newest chunk format this library reads (the fourth byte of a chunk's magic) */
#define ZDT_PREDICT_FORMAT_NEWEST 3

#if defined(_WIN32) && defined(ZDT_PREDICT_SHARED)
#  ifdef ZDT_PREDICT_BUILDING
#    define ZDT_PREDICT_API __declspec(dllexport)
#  else
#    define ZDT_PREDICT_API __declspec(dllimport)
#  endif
#elif defined(__GNUC__) && __GNUC__ >= 4
#  define ZDT_PREDICT_API __attribute__((visibility("default")))
#else
#  define ZDT_PREDICT_API
#endif

/* statuses: 0 or a negative value; pinned, only ever appended */
typedef enum {
    ZDT_PREDICT_OK = 0,
    ZDT_PREDICT_E_CORRUPT = -1,         /* the chunk is corrupt; the error's part names where */
    ZDT_PREDICT_E_PARAM = -2,           /* a parameter the library does not take */
    ZDT_PREDICT_E_DST_SIZE = -3,        /* the output buffer is too small or misaligned */
    ZDT_PREDICT_E_UNSUPPORTED = -4,     /* a valid chunk this library does not decode (pcodec) */
    ZDT_PREDICT_E_FORMAT_TOO_NEW = -5,  /* a chunk of a newer format than this library reads */
    ZDT_PREDICT_E_NOMEM = -6            /* no memory for the decoder's scratch buffers */
} zdt_predict_status;

/* data types: codes only ever appended */
typedef enum {
    ZDT_PREDICT_FLOAT32 = 1,
    ZDT_PREDICT_FLOAT64 = 2,
    ZDT_PREDICT_INT8 = 3,
    ZDT_PREDICT_UINT8 = 4,
    ZDT_PREDICT_INT16 = 5,
    ZDT_PREDICT_UINT16 = 6,
    ZDT_PREDICT_INT32 = 7,
    ZDT_PREDICT_UINT32 = 8
} zdt_predict_dtype;

#define ZDT_PREDICT_MAX_DIMS 32

/* --- providers: zstd, and pcodec for entropy stages 1 and 2 ---------------------------------- */

/* zstd as the library calls it: a frame compressed, a frame decompressed. The library parses
   and checks every frame's header itself (RFC 8878: the magic, the declared content size, the
   blocks up to the frame's end) before it calls decompress, so a provider only codes. NULL in
   the parameters: libzstd, when the library is built with it (CMake: always); built without
   it, a chunk that has a zstd frame gives ZDT_PREDICT_E_UNSUPPORTED. zdt's Python extension
   passes numcodecs' zstd (the bytes zdt writes come from it). A provider is called from the
   thread that called the library; `opaque` is passed back as given. */
typedef struct {
    uint32_t struct_size;           /* sizeof(zdt_predict_zstd) */
    void *opaque;
    /* one frame of src[0 .. src_size) at `level`, its content size declared, no checksum, into
       dst (dst_capacity >= zdt_predict_zstd_bound(src_size)); *written: its length. Returns 0,
       or nonzero on failure (then the call fails with ZDT_PREDICT_E_PARAM). */
    int (*compress)(void *opaque, const void *src, size_t src_size, int level, void *dst,
                    size_t dst_capacity, size_t *written);
    /* the one frame src[0 .. src_size) (checked: it declares dst_size bytes of content) into
       dst[0 .. dst_size). Returns 0 when it decodes to exactly dst_size bytes; else nonzero,
       with a reason in why[0 .. why_size) (the chunk is then corrupt, part "zstd frame", or
       as the caller's part says). */
    int (*decompress)(void *opaque, const void *src, size_t src_size, void *dst,
                      size_t dst_size, char *why, size_t why_size);
} zdt_predict_zstd;

/* the most bytes a zstd frame of src_size bytes takes (ZSTD_COMPRESSBOUND) */
ZDT_PREDICT_API size_t zdt_predict_zstd_bound(size_t src_size);

/* Entropy stages 1 and 2: the symbols in pcodec's standalone format (pcodec's own library or
   its Python package is the provider; this library frames them, orders stage 2's level
   groups and reconstructs the elements). NULL in the parameters: those stages give
   ZDT_PREDICT_E_UNSUPPORTED. */
typedef struct {
    uint32_t struct_size;           /* sizeof(zdt_predict_pcodec) */
    void *opaque;
    /* pcodec's standalone bytes of sym[0 .. n): *out, *out_size (the provider's memory, valid
       until its next call or the end of the library's call). 0, or nonzero on failure. */
    int (*compress)(void *opaque, const uint16_t *sym, size_t n, const void **out,
                    size_t *out_size);
    /* the n symbols src[0 .. src_size) holds into sym[0 .. n). ZDT_PREDICT_OK; or a negative
       status (ZDT_PREDICT_E_CORRUPT: the bytes do not hold exactly n symbols) with a reason in
       why[0 .. why_size). */
    int (*decompress)(void *opaque, const void *src, size_t src_size, uint16_t *sym, size_t n,
                      char *why, size_t why_size);
} zdt_predict_pcodec;

/* What a decoder must know besides the chunk: the array's data type and the chunk's shape (C
   order), and the codec's configuration. Fill in with zdt_predict_params_init (or
   ZDT_PREDICT_PARAMS_INIT), then set the fields. */
typedef struct {
    uint32_t struct_size;           /* sizeof(zdt_predict_params): set by the initialisers */
    uint32_t dtype;                 /* a zdt_predict_dtype (ZDT_PREDICT_FLOAT64) */
    uint32_t ndim;                  /* 0 .. ZDT_PREDICT_MAX_DIMS (0: one element) */
    uint64_t shape[ZDT_PREDICT_MAX_DIMS];
    /* the configuration's abs_error E (> 0, finite); 0 when the codec has rel_error instead
       (then only pointwise-relative chunks decode: the others' bound is not known) */
    double abs_error;
    /* the value the fill-value symbol stands for: the configuration's `fill` where it has one,
       else the array's fill value (a float32 one converted exactly to binary64); has_fill 0:
       none (a chunk that uses one is corrupt) */
    int has_fill;
    double fill;
    /* the configuration's reference mask (`mask`), decoded by zdt_predict_reference_decode:
       reference_shape[0] x reference_shape[1] bytes, 0 or 1, C order; NULL: none */
    const uint8_t *reference;
    uint64_t reference_shape[2];
    /* --- the encoder's configuration (a decoder ignores these) --- */
    /* the configuration's rel_error R (> 0, finite) in place of abs_error (then 0); 0: none */
    double rel_error;
    /* ZDT_PREDICT_PREDICTOR_AUTO (0, the default) or a chunk's predictor code 1 .. 4 */
    int predictor;
    /* ZDT_PREDICT_ENTROPY_AUTO (-1, the default), or a chunk's entropy stage: 0 zstd, 3 rANS
       with contexts, 1 and 2 pcodec (whole, by level group: with a pcodec provider, else
       ZDT_PREDICT_E_UNSUPPORTED) */
    int entropy;
    /* the zstd level, -7 .. 22 (3) */
    int level;
    /* integer arrays: the configuration's `keep`, values stored exactly (n_keep of them) */
    const int64_t *keep;
    size_t n_keep;
    /* --- providers (both directions) --- */
    const zdt_predict_zstd *zstd;       /* NULL: libzstd (see zdt_predict_zstd) */
    const zdt_predict_pcodec *pcodec;   /* NULL: entropy stages 1 and 2 unsupported */
    /* how hard `auto` looks for the smallest chunk: ZDT_PREDICT_EFFORT_DEFAULT (0), _FAST or
       _MAX (the encoder's configuration; a decoder ignores it) */
    int effort;
} zdt_predict_params;

/* predictor codes (the chunk header's), and auto */
#define ZDT_PREDICT_PREDICTOR_AUTO 0
#define ZDT_PREDICT_LORENZO 1
#define ZDT_PREDICT_INTERPOLATION 2
#define ZDT_PREDICT_INTERPOLATION_REVERSED 3
#define ZDT_PREDICT_INTERPOLATION_SLICES 4
/* entropy stages (the chunk header's), and auto */
#define ZDT_PREDICT_ENTROPY_AUTO (-1)
#define ZDT_PREDICT_ENTROPY_ZSTD 0
#define ZDT_PREDICT_ENTROPY_PCODEC 1
#define ZDT_PREDICT_ENTROPY_PCODEC_LEVELS 2
#define ZDT_PREDICT_ENTROPY_ANS 3

/* effort (the configuration's `effort`) */
#define ZDT_PREDICT_EFFORT_DEFAULT 0
#define ZDT_PREDICT_EFFORT_FAST 1
#define ZDT_PREDICT_EFFORT_MAX 2

#define ZDT_PREDICT_PARAMS_INIT \
    { sizeof(zdt_predict_params), ZDT_PREDICT_FLOAT64, 0, {0}, 0.0, 0, 0.0, NULL, {0, 0}, \
      0.0, ZDT_PREDICT_PREDICTOR_AUTO, ZDT_PREDICT_ENTROPY_AUTO, 3, NULL, 0, NULL, NULL, \
      ZDT_PREDICT_EFFORT_DEFAULT }

/* What went wrong: the status again, the part of the chunk found wrong (as zdt's
   CorruptChunkError.part: "header", "symbols", "ANS stream", "raw values", "zstd frame",
   "mask", "logarithms", "signs", "exact map", "exact values", "shape"; empty for errors that
   are not the chunk's), and a message that starts with "zdt.predict: ". */
typedef struct {
    int status;
    char part[32];
    char message[256];
} zdt_predict_error;

ZDT_PREDICT_API unsigned zdt_predict_version_number(void);     /* ZDT_PREDICT_VERSION_NUMBER */
ZDT_PREDICT_API const char *zdt_predict_version_string(void);
ZDT_PREDICT_API int zdt_predict_abi_version(void);              /* ZDT_PREDICT_ABI_VERSION */
/* a static string for a status (never NULL) */
ZDT_PREDICT_API const char *zdt_predict_status_string(int status);

ZDT_PREDICT_API void zdt_predict_params_init(zdt_predict_params *params);

/* The bytes a decoded chunk of these parameters takes (element count x element size), in
   *bytes; a negative status for parameters the library does not take. */
ZDT_PREDICT_API int zdt_predict_decoded_size(const zdt_predict_params *params, size_t *bytes,
                                             zdt_predict_error *err);

/* Decodes the chunk src[0 .. src_size) into dst (dst_size bytes, at least
   zdt_predict_decoded_size's, aligned for the data type), in C order. Returns ZDT_PREDICT_OK,
   or a negative status with *err filled (err may be NULL). dst's contents are unspecified
   after a failure. */
ZDT_PREDICT_API int zdt_predict_decode(const void *src, size_t src_size,
                                       const zdt_predict_params *params, void *dst,
                                       size_t dst_size, zdt_predict_error *err);

/* The numcodecs face's buffer (one byte D, D extents as little-endian u64, then a chunk):
   sets params->dtype (from the chunk's element size), ndim and shape and *chunk_offset (where
   the chunk starts), leaving the other fields as they are; the decode is then
   zdt_predict_decode(src + *chunk_offset, src_size - *chunk_offset, params, ...). A shape of
   more than 65,536 elements for each byte of the buffer is refused as corrupt (part "shape")
   before anything is allocated for it. */
ZDT_PREDICT_API int zdt_predict_numcodecs_header(const void *src, size_t src_size,
                                                 zdt_predict_params *params,
                                                 size_t *chunk_offset, zdt_predict_error *err);

/* The configuration's reference mask (`mask`: {"shape": [rows, cols], "stream": base64}):
   its stream (base64-decoded by the caller) decoded into bits[rows * cols] (1: masked).
   rows, cols >= 1 and rows * cols <= 2^31; ZDT_PREDICT_E_PARAM for a stream that does not
   decode to exactly that (the configuration is wrong, not a chunk). */
ZDT_PREDICT_API int zdt_predict_reference_decode(const void *stream, size_t stream_size,
                                                 uint64_t rows, uint64_t cols, uint8_t *bits,
                                                 zdt_predict_error *err);

/* --- encoding ------------------------------------------------------------------------------- */

/* The most bytes zdt_predict_encode writes for an array of these parameters (its shape, data
   type and bound); 0 for parameters the encoder does not take. */
ZDT_PREDICT_API size_t zdt_predict_encode_bound(const zdt_predict_params *params);

/* Encodes the array src (src_size bytes: the shape's elements of the data type, C order,
   native byte order, aligned for the type) into dst (dst_capacity bytes; the caller owns it):
   exactly the chunk zdt writes for this array and configuration (abs_error
   or rel_error, predictor, entropy, level, fill / has_fill: the configuration's `fill` where
   it has one, else the array's fill value; reference: the configuration's `mask`; keep).
   *written: the chunk's length, also on ZDT_PREDICT_E_DST_SIZE (then nothing is written).
   Returns ZDT_PREDICT_OK or a negative status with *err filled (err may be NULL). */
ZDT_PREDICT_API int zdt_predict_encode(const void *src, size_t src_size,
                                       const zdt_predict_params *params, void *dst,
                                       size_t dst_capacity, size_t *written,
                                       zdt_predict_error *err);

/* A workspace: the encoder's large arrays (13 to 52 bytes an element of a chunk) kept from one
   call to the next, so that a program encoding chunk after chunk writes into pages it already
   has instead of fresh ones from the system, which the system zeroes page by page (about a
   quarter of an encode's time where the C allocator hands freed memory back). It keeps at
   most `limit` bytes between calls (the smallest arrays freed first; 0: none kept). One call
   at a time: a thread of its own for each workspace, or a lock. NULL: no memory. */
typedef struct zdt_predict_workspace zdt_predict_workspace;
ZDT_PREDICT_API zdt_predict_workspace *zdt_predict_workspace_new(size_t limit);
ZDT_PREDICT_API void zdt_predict_workspace_free(zdt_predict_workspace *ws);   /* NULL: nothing */

/* zdt_predict_encode with the arrays of ws (NULL: zdt_predict_encode itself): the same chunk */
ZDT_PREDICT_API int zdt_predict_encode_with(zdt_predict_workspace *ws, const void *src,
                                            size_t src_size, const zdt_predict_params *params,
                                            void *dst, size_t dst_capacity, size_t *written,
                                            zdt_predict_error *err);

#ifdef __cplusplus
}
#endif

#endif /* ZDT_PREDICT_H */
