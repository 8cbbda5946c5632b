/* The golden zdt.predict chunks (tests/fixtures/predict/<version>/, written by zdt's
   tests/predict_golden.py: a manifest.json naming each case's data type, shape,
   configuration, fill value, face and the SHA-256 of its decoded bytes) decoded by the C
   library to their manifest's hash; the chunks of the pcodec stages refused naming the stage;
   and every chunk cut short and bit-flipped, each of which must end in an error or a decode,
   never a crash (run it under ASan + UBSan), every cut one in an error.

   usage: test_golden GOLDEN_DIR [FLIPS_PER_CHUNK]
   It prints one line per failure and closes with "N passed, M failed". */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "sha256.h"
#include "zdt_predict.h"

static int passed, failed;

static void fail(const char *version, const char *name, const char *fmt, const char *detail) {
    printf("FAIL %s/%s: ", version, name);
    printf(fmt, detail);
    printf("\n");
    failed++;
}

static uint8_t *read_file(const char *path, size_t *size) {
    FILE *f = fopen(path, "rb");
    uint8_t *data;
    long n;
    if (f == NULL)
        return NULL;
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fseek(f, 0, SEEK_SET);
    data = (uint8_t *)malloc((size_t)n + 1);
    if (data != NULL && fread(data, 1, (size_t)n, f) != (size_t)n) {
        free(data);
        data = NULL;
    }
    fclose(f);
    if (data != NULL)
        data[n] = 0;
    *size = (size_t)n;
    return data;
}

/* RFC 4648 base64 with padding; the decoded length, or -1 */
static long base64_decode(const char *text, uint8_t *out) {
    static const char *alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t n = strlen(text), i;
    long k = 0;
    if (n % 4)
        return -1;
    for (i = 0; i < n; i += 4) {
        uint32_t v = 0;
        int j, pad = 0;
        for (j = 0; j < 4; j++) {
            const char *at = strchr(alphabet, text[i + j]);
            if (text[i + j] == '=' && i + 4 == n && j >= 2) {
                pad++;
                v <<= 6;
                continue;
            }
            if (at == NULL || text[i + j] == '\0' || pad)
                return -1;
            v = (v << 6) | (uint32_t)(at - alphabet);
        }
        out[k++] = (uint8_t)(v >> 16);
        if (pad < 2)
            out[k++] = (uint8_t)(v >> 8);
        if (pad < 1)
            out[k++] = (uint8_t)v;
    }
    return k;
}

static uint32_t dtype_of(const char *name) {
    static const char *names[] = {"float32", "float64", "int8", "uint8", "int16", "uint16",
                                  "int32", "uint32"};
    uint32_t i;
    for (i = 0; i < 8; i++)
        if (strcmp(name, names[i]) == 0)
            return i + 1;
    return 0;
}

/* a fill value's JSON: a number, or "NaN", "Infinity", "-Infinity"; 0 for null */
static int fill_of(const json *j, double *fill) {
    if (j == NULL || j->kind == J_NULL)
        return 0;
    if (j->kind == J_NUMBER)
        *fill = j->number;
    else if (strcmp(j->string, "NaN") == 0)
        *fill = NAN;
    else
        *fill = j->string[0] == '-' ? -INFINITY : INFINITY;
    return 1;
}

/* decodes data as the case says (params: the zarr face's; numcodecs: from the buffer); the
   status; *out (malloc'd) and *out_size the decoded bytes on success */
static int decode(const uint8_t *data, size_t size, const zdt_predict_params *base, int numcodecs,
                  uint8_t **out, size_t *out_size, zdt_predict_error *err) {
    zdt_predict_params p = *base;
    size_t offset = 0, bytes;
    int rc;
    *out = NULL;
    if (numcodecs) {
        rc = zdt_predict_numcodecs_header(data, size, &p, &offset, err);
        if (rc != ZDT_PREDICT_OK)
            return rc;
    }
    rc = zdt_predict_decoded_size(&p, &bytes, err);
    if (rc != ZDT_PREDICT_OK)
        return rc;
    *out = (uint8_t *)malloc(bytes ? bytes : 1);
    *out_size = bytes;
    rc = zdt_predict_decode(data + offset, size - offset, &p, *out, bytes, err);
    if (rc != ZDT_PREDICT_OK) {
        free(*out);
        *out = NULL;
    }
    return rc;
}

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint64_t rng(void) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static long cuts, cuts_refused, flips, flips_refused;

/* every cut of the chunk refused; `n_flips` single-bit flips each decoded or refused */
static void mutate(const char *version, const char *name, const uint8_t *data, size_t size,
                   const zdt_predict_params *p, int numcodecs, int n_flips) {
    uint8_t *copy = (uint8_t *)malloc(size ? size : 1), *out;
    size_t cut, step = size > 300 ? size / 150 : 1, out_size;
    zdt_predict_error err;
    int k, ok = 1;
    for (cut = 0; cut < size; cut += cut < 64 ? 1 : step) {
        /* (a copy of exactly the cut's length: ASan sees any read past it) */
        uint8_t *head = (uint8_t *)malloc(cut ? cut : 1);
        memcpy(head, data, cut);
        cuts++;
        if (decode(head, cut, p, numcodecs, &out, &out_size, &err) == ZDT_PREDICT_OK) {
            char detail[64];
            snprintf(detail, sizeof(detail), "%zu of %zu bytes", cut, size);
            fail(version, name, "a chunk cut to %s decodes", detail);
            ok = 0;
            free(out);
        } else {
            cuts_refused++;
        }
        free(head);
    }
    for (k = 0; k < n_flips && size; k++) {
        size_t at = (size_t)(rng() % size);
        memcpy(copy, data, size);
        copy[at] ^= (uint8_t)(1u << (rng() % 8));
        flips++;
        if (decode(copy, size, p, numcodecs, &out, &out_size, &err) == ZDT_PREDICT_OK)
            free(out);
        else
            flips_refused++;
    }
    free(copy);
    if (ok)
        passed++;
}

static void run_case(const char *dir, const char *version, const json *c, int n_flips) {
    char path[4096], hex[65];
    const char *name = c->key;
    const json *config = json_get(c, "config"), *shape = json_get(c, "shape"), *item;
    const json *entropy = json_get(config, "entropy"), *mask = json_get(config, "mask");
    const json *bound = json_get(config, "abs_error");
    const char *expected = json_get(c, "decoded_sha256")->string;
    int numcodecs = strcmp(json_get(c, "face")->string, "numcodecs") == 0;
    int pcodec = entropy != NULL && strncmp(entropy->string, "pcodec", 6) == 0;
    zdt_predict_params p;
    zdt_predict_error err;
    uint8_t *data, *out, *reference = NULL;
    size_t size, out_size;
    int rc;
    zdt_predict_params_init(&p);
    p.dtype = dtype_of(json_get(c, "dtype")->string);
    p.ndim = 0;
    for (item = shape->child; item != NULL; item = item->next)
        p.shape[p.ndim++] = (uint64_t)item->number;
    p.abs_error = bound != NULL ? bound->number : 0.0;
    /* the codec's own fill where it has one, else the array's */
    p.has_fill = fill_of(json_get(config, "fill"), &p.fill);
    if (!p.has_fill)
        p.has_fill = fill_of(json_get(c, "fill"), &p.fill);
    if (mask != NULL) {
        const json *ms = json_get(mask, "shape");
        const char *text = json_get(mask, "stream")->string;
        uint8_t *stream = (uint8_t *)malloc(strlen(text) + 1);
        long length = base64_decode(text, stream);
        p.reference_shape[0] = (uint64_t)ms->child->number;
        p.reference_shape[1] = (uint64_t)ms->child->next->number;
        reference = (uint8_t *)malloc(p.reference_shape[0] * p.reference_shape[1]);
        if (length < 0 || zdt_predict_reference_decode(stream, (size_t)length,
                                                       p.reference_shape[0],
                                                       p.reference_shape[1], reference,
                                                       &err) != ZDT_PREDICT_OK) {
            fail(version, name, "its reference mask does not decode: %s",
                 length < 0 ? "base64" : err.message);
            free(stream);
            free(reference);
            return;
        }
        free(stream);
        p.reference = reference;
    }
    snprintf(path, sizeof(path), "%s/%s/%s.bin", dir, version, name);
    data = read_file(path, &size);
    if (data == NULL) {
        fail(version, name, "cannot read %s", path);
        free(reference);
        return;
    }
    rc = decode(data, size, &p, numcodecs, &out, &out_size, &err);
    if (pcodec) {
        if (rc != ZDT_PREDICT_E_UNSUPPORTED || strstr(err.message, "entropy stage") == NULL)
            fail(version, name, "a pcodec chunk is not refused as unsupported naming its stage "
                 "(%s)", rc == ZDT_PREDICT_OK ? "it decodes" : err.message);
        else
            passed++;
    } else if (rc != ZDT_PREDICT_OK) {
        char detail[400];
        snprintf(detail, sizeof(detail), "[%s] %s", err.part, err.message);
        fail(version, name, "does not decode: %s", detail);
    } else {
        sha256_hex(out, out_size, hex);
        if (strcmp(hex, expected) != 0)
            fail(version, name, "decodes to sha256 %s, not the manifest's", hex);
        else
            passed++;
        free(out);
    }
    mutate(version, name, data, size, &p, numcodecs, n_flips);
    free(data);
    free(reference);
}

static int by_name(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(int argc, char **argv) {
    const char *dir = argc > 1 ? argv[1] : "tests/fixtures/predict";
    int n_flips = argc > 2 ? atoi(argv[2]) : 200;
    char *versions[256];
    int n_versions = 0, v;
    struct dirent *e;
    DIR *d = opendir(dir);
    if (d == NULL) {
        printf("cannot open %s\n", dir);
        return 2;
    }
    while ((e = readdir(d)) != NULL && n_versions < 256)
        if (e->d_name[0] == 'v')
            versions[n_versions++] = strdup(e->d_name);
    closedir(d);
    qsort(versions, (size_t)n_versions, sizeof(char *), by_name);
    for (v = 0; v < n_versions; v++) {
        char path[4096];
        size_t size;
        char *text;
        json *manifest;
        const json *c;
        int before = passed + failed;
        snprintf(path, sizeof(path), "%s/%s/manifest.json", dir, versions[v]);
        text = (char *)read_file(path, &size);
        manifest = text != NULL ? json_parse(text) : NULL;
        if (manifest == NULL) {
            fail(versions[v], "manifest.json", "%s", "cannot be read");
            free(text);
            continue;
        }
        for (c = json_get(manifest, "cases")->child; c != NULL; c = c->next)
            run_case(dir, versions[v], c, n_flips);
        printf("%s: %zu cases, %d checks\n", versions[v],
               json_length(json_get(manifest, "cases")), passed + failed - before);
        json_free(manifest);
        free(text);
        free(versions[v]);
    }
    printf("cut chunks: %ld, %ld refused; bit-flipped chunks: %ld, %ld refused (the others "
           "decode to some values: a flip in a zstd literal or an ANS word can go unseen)\n",
           cuts, cuts_refused, flips, flips_refused);
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
