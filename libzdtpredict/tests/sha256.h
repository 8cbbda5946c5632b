/* SHA-256 (FIPS 180-4), for the golden chunks' decoded_sha256. */
#ifndef ZDT_TEST_SHA256_H
#define ZDT_TEST_SHA256_H
#include <stddef.h>
#include <stdint.h>

typedef struct {
    uint32_t h[8];
    uint64_t length;        /* bytes hashed so far */
    uint8_t block[64];
    size_t used;
} sha256_ctx;

void sha256_init(sha256_ctx *c);
void sha256_update(sha256_ctx *c, const void *data, size_t n);
void sha256_final(sha256_ctx *c, uint8_t digest[32]);
/* the hex digest of data[0 .. n) into hex[65] */
void sha256_hex(const void *data, size_t n, char hex[65]);
#endif
