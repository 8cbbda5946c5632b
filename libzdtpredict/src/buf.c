/* The encoder's growable byte buffer, and its large arrays' allocation. */
#if defined(__linux__)
#define _DEFAULT_SOURCE 1       /* madvise (before any system header) */
#include <sys/mman.h>
#endif

#include "encode.h"

void *zdt__alloc_large(size_t bytes) {
    void *p = malloc(bytes ? bytes : 1);
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    /* (as NumPy does for its arrays of 4 MiB and more: transparent huge pages where the
       system gives them only to who asks, one page fault for 2 MiB, not 512; the pages of
       an array of this size come fresh from the system when the heap was trimmed since the
       last call, as it is where the caller frees as much as the encoder took) */
    if (p != NULL && bytes >= ((size_t)4 << 20)) {
        uintptr_t at = ((uintptr_t)p + 4095) & ~(uintptr_t)4095;
        madvise((void *)at, ((uintptr_t)p + bytes - at) & ~(uintptr_t)4095, MADV_HUGEPAGE);
    }
#endif
    return p;
}

void zdt__buf_free(zdt__buf *b) {
    free(b->p);
    b->p = NULL;
    b->len = b->cap = 0;
}

int zdt__buf_reserve(zdt__buf *b, size_t more) {
    size_t cap;
    uint8_t *p;
    if (b->oom)
        return -1;
    if (more <= b->cap - b->len)
        return 0;
    cap = b->cap ? b->cap : 256;
    while (cap - b->len < more) {
        if (cap > SIZE_MAX / 2) {
            b->oom = 1;
            return -1;
        }
        cap *= 2;
    }
    p = (uint8_t *)realloc(b->p, cap);
    if (p == NULL) {
        b->oom = 1;
        return -1;
    }
    b->p = p;
    b->cap = cap;
    return 0;
}

void zdt__buf_put(zdt__buf *b, const void *src, size_t len) {
    if (len == 0 || zdt__buf_reserve(b, len) < 0)
        return;
    memcpy(b->p + b->len, src, len);
    b->len += len;
}

void zdt__buf_u8(zdt__buf *b, unsigned v) {
    uint8_t c = (uint8_t)v;
    zdt__buf_put(b, &c, 1);
}
void zdt__buf_u16(zdt__buf *b, unsigned v) {
    uint8_t c[2];
    zdt__st16(c, v);
    zdt__buf_put(b, c, 2);
}
void zdt__buf_u32(zdt__buf *b, uint32_t v) {
    uint8_t c[4];
    zdt__st32(c, v);
    zdt__buf_put(b, c, 4);
}
void zdt__buf_u64(zdt__buf *b, uint64_t v) {
    uint8_t c[8];
    zdt__st64(c, v);
    zdt__buf_put(b, c, 8);
}
void zdt__buf_f64(zdt__buf *b, double v) { zdt__buf_u64(b, zdt__bits_of_f64(v)); }
