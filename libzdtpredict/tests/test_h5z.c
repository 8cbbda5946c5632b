/* The HDF5 filter plugin without HDF5: loads libh5zdtpredict.so as HDF5 would (dlopen, then
   H5PLget_plugin_type / H5PLget_plugin_info), and calls its filter callback with a stored
   cd_values table of layout 1 or 2 (an effort): random fields of float32 and float64 (NaN holes, fill values, 1 to
   4 dimensions) encoded and decoded, every element within the bound (exact: the difference of
   two binary64 values compared after one rounding is settled with a margin, see below); and
   the refusals (a layout it does not know, a word count, a chunk of the wrong size, a cut
   chunk): each returns 0, HDF5's failure, and leaves the buffer as it was. Then a thread that
   encodes (making its workspace) and ends after the plugin was closed (dlclose, as HDF5 does
   at exit): its workspace's destructor must still be there to run (under ASan: freed once).
   usage: test_h5z path/to/libh5zdtpredict.so */
#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "H5Z_zdt_predict.h"

typedef size_t (*filter_func)(unsigned, size_t, const unsigned *, size_t, size_t *, void **);
typedef struct {
    int version;
    int id;
    unsigned encoder_present, decoder_present;
    const char *name;
    void *can_apply, *set_local;
    filter_func filter;
} class2;

static int failures = 0;
#define CHECK(cond, ...) do { if (!(cond)) { failures++; fprintf(stderr, "FAIL %s:%d: ", \
    __FILE__, __LINE__); fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); } } while (0)

/* the thread of the last check: encodes a chunk, says so, waits until told to end */
typedef struct {
    filter_func filter;
    pthread_mutex_t lock;
    pthread_cond_t changed;
    int encoded, may_end;
} worker;

static void *encode_then_wait(void *arg) {
    worker *w = (worker *)arg;
    unsigned cd[13];
    double x[500];
    size_t bs = sizeof x, i, got;
    void *buf = malloc(sizeof x);
    uint64_t u;
    double E = 0.01;
    for (i = 0; i < 500; i++)
        x[i] = sin((double)i * 0.05);
    memcpy(buf, x, sizeof x);
    memset(cd, 0, sizeof cd);
    cd[0] = ZDT_PREDICT_H5Z_LAYOUT;
    cd[1] = 2;
    cd[2] = ZDT_PREDICT_H5Z_ABS;
    memcpy(&u, &E, 8);
    cd[3] = (unsigned)(u & 0xFFFFFFFFu);
    cd[4] = (unsigned)(u >> 32);
    cd[9] = 1;
    cd[10] = 500;
    got = w->filter(0, 11, cd, sizeof x, &bs, &buf);
    free(buf);
    pthread_mutex_lock(&w->lock);
    w->encoded = got > 0 ? 1 : -1;
    pthread_cond_broadcast(&w->changed);
    while (!w->may_end)
        pthread_cond_wait(&w->changed, &w->lock);
    pthread_mutex_unlock(&w->lock);
    return NULL;
}

static uint64_t rng_state = 88172645463325252ull;
static double uniform(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (double)(rng_state >> 11) / 9007199254740992.0;
}

static void put_f64(unsigned *cd, double v)
{
    uint64_t u;
    memcpy(&u, &v, 8);
    cd[0] = (unsigned)(u & 0xFFFFFFFFu);
    cd[1] = (unsigned)(u >> 32);
}

int main(int argc, char **argv)
{
    void *lib;
    int (*get_type)(void);
    const void *(*get_info)(void);
    const class2 *c;
    const char *(*last_error)(void);
    int round;
    if (argc < 2) {
        fprintf(stderr, "usage: %s libh5zdtpredict.so\n", argv[0]);
        return 2;
    }
    lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (lib == NULL) {
        fprintf(stderr, "%s\n", dlerror());
        return 1;
    }
    *(void **)(&get_type) = dlsym(lib, "H5PLget_plugin_type");
    *(void **)(&get_info) = dlsym(lib, "H5PLget_plugin_info");
    CHECK(get_type != NULL && get_info != NULL, "the two plugin entry points");
    CHECK(dlsym(lib, "zdt_predict_encode") == NULL, "libzdtpredict's symbols stay inside");
    if (get_type == NULL || get_info == NULL)
        return 1;
    CHECK(get_type() == 0, "H5PL_TYPE_FILTER");
    c = (const class2 *)get_info();
    CHECK(c->version == 1 && c->id == ZDT_PREDICT_H5Z_FILTER_ID && c->encoder_present
          && c->decoder_present && strstr(c->name, "zdt.predict") != NULL, "the class");

    *(void **)(&last_error) = dlsym(lib, "zdt_predict_h5z_last_error");
    CHECK(last_error != NULL, "the last error's export");
    if (last_error == NULL)
        return 1;

    for (round = 0; round < 200; round++) {
        unsigned cd[11 + 4];
        /* every third round layout 2, its effort in word 9 (fast, then max) */
        int f64 = round % 2, rank = 1 + round % 4, d, two = round % 3 == 2, head = two ? 10 : 9;
        size_t n = 1, size, nbytes, buf_size, i, enc_n, enc_size;
        double E = pow(10.0, -1.0 - 3.0 * uniform()), fill = -9999.0;
        void *buf, *copy;
        memset(cd, 0, sizeof cd);
        cd[0] = two ? ZDT_PREDICT_H5Z_LAYOUT_EFFORT : ZDT_PREDICT_H5Z_LAYOUT;
        if (two)
            cd[ZDT_PREDICT_H5Z_CD_EFFORT] = 1 + (unsigned)(round / 3 % 2);
        cd[1] = f64 ? 2 : 1;
        cd[2] = ZDT_PREDICT_H5Z_ABS;
        put_f64(cd + 3, E);
        cd[5] = 1;
        put_f64(cd + 6, fill);
        cd[8] = (unsigned)(round / 4 % 5);
        if (rank == 1 && cd[8] >= 3)        /* (2-d and up only) */
            cd[8] = 0;
        cd[head] = (unsigned)rank;
        for (d = 0; d < rank; d++) {
            cd[head + 1 + d] = 1 + (unsigned)(uniform() * (rank == 1 ? 3000 : rank == 2 ? 60 : 14));
            n *= cd[head + 1 + d];
        }
        size = n * (f64 ? 8 : 4);
        buf = malloc(size);
        copy = malloc(size);
        for (i = 0; i < n; i++) {
            double v = 10.0 * sin((double)i * 0.01) + uniform() * 0.1;
            if (uniform() < 0.02)
                v = NAN;
            else if (uniform() < 0.02)
                v = fill;
            if (f64)
                ((double *)buf)[i] = v;
            else
                ((float *)buf)[i] = (float)v;
        }
        memcpy(copy, buf, size);
        buf_size = size;
        enc_n = c->filter(0, (size_t)head + 1 + (size_t)rank, cd, size, &buf_size, &buf);
        CHECK(enc_n > 0 && enc_n <= buf_size, "round %d: encode", round);
        if (enc_n == 0)
            return 1;
        enc_size = buf_size;
        /* a cut chunk: refused, the buffer kept */
        {
            void *before = buf;
            size_t bs = enc_size;
            CHECK(c->filter(0x0100, (size_t)head + 1 + (size_t)rank, cd, enc_n - 1, &bs, &buf) == 0
                  && buf == before, "round %d: a cut chunk refused", round);
        }
        nbytes = c->filter(0x0100, (size_t)head + 1 + (size_t)rank, cd, enc_n, &buf_size, &buf);
        CHECK(nbytes == size && buf_size >= size, "round %d: decode", round);
        if (nbytes != size)
            return 1;
        for (i = 0; i < n; i++) {
            double x = f64 ? ((double *)copy)[i] : ((float *)copy)[i];
            double y = f64 ? ((double *)buf)[i] : ((float *)buf)[i];
            if (isnan(x) || x == fill) {
                CHECK(memcmp((char *)buf + i * (f64 ? 8 : 4), (char *)copy + i * (f64 ? 8 : 4),
                             f64 ? 8 : 4) == 0, "round %d: element %zu kept bit for bit", round, i);
                continue;
            }
            /* |y - x| rounded once: within E * (1 - 2^-50) settles it (the values are far
               from the bound's edge only when the codec is right; a value at the edge
               would be reported here and checked by hand) */
            CHECK(fabs(y - x) <= E * (1 - ldexp(1.0, -50)), "round %d: element %zu: %.17g -> "
                  "%.17g, E %.17g", round, i, x, y, E);
        }
        free(buf);
        free(copy);
    }

    /* the refusals: each 0, the buffer untouched */
    {
        unsigned cd[11];
        float x[8] = {1, 2, 3, 4, 5, 6, 7, 8};
        void *buf = malloc(sizeof x);
        void *before = buf;
        size_t bs = sizeof x;
        memcpy(buf, x, sizeof x);
        memset(cd, 0, sizeof cd);
        cd[0] = 1; cd[1] = 1; cd[2] = 1; put_f64(cd + 3, 0.1); cd[9] = 1; cd[10] = 8;
        cd[0] = 3;
        CHECK(c->filter(0, 11, cd, sizeof x, &bs, &buf) == 0 && buf == before, "layout 3");
        CHECK(strstr(last_error(), "layout version 3 is not one this filter reads") != NULL,
              "the last error names the layout: %s", last_error());
        cd[0] = 2;      /* (layout 2 of 11 words: rank 8 at word 10, no extents) */
        CHECK(c->filter(0, 11, cd, sizeof x, &bs, &buf) == 0 && buf == before, "layout 2, 11 words");
        cd[0] = 1;
        CHECK(c->filter(0, 10, cd, sizeof x, &bs, &buf) == 0 && buf == before, "10 words");
        CHECK(c->filter(0, 11, cd, sizeof x - 4, &bs, &buf) == 0 && buf == before, "short chunk");
        cd[2] = 3;
        CHECK(c->filter(0, 11, cd, sizeof x, &bs, &buf) == 0 && buf == before, "bound kind 3");
        cd[2] = 1;
        put_f64(cd + 3, -1.0);
        CHECK(c->filter(0, 11, cd, sizeof x, &bs, &buf) == 0 && buf == before, "negative bound");
        put_f64(cd + 3, 0.1);
        CHECK(c->filter(0, 11, cd, sizeof x, &bs, &buf) > 0, "the same, valid");
        CHECK(last_error()[0] == '\0', "a call that succeeds clears the last error");
        free(buf);
    }
    /* a thread's workspace outlives the plugin's dlclose; its destructor runs at the thread's
       end (the plugin keeps itself loaded) */
    {
        worker w;
        pthread_t t;
        memset(&w, 0, sizeof w);
        w.filter = c->filter;
        pthread_mutex_init(&w.lock, NULL);
        pthread_cond_init(&w.changed, NULL);
        CHECK(pthread_create(&t, NULL, encode_then_wait, &w) == 0, "a thread");
        pthread_mutex_lock(&w.lock);
        while (!w.encoded)
            pthread_cond_wait(&w.changed, &w.lock);
        pthread_mutex_unlock(&w.lock);
        CHECK(w.encoded == 1, "the thread's encode");
        CHECK(dlclose(lib) == 0, "dlclose");
        pthread_mutex_lock(&w.lock);
        w.may_end = 1;
        pthread_cond_broadcast(&w.changed);
        pthread_mutex_unlock(&w.lock);
        CHECK(pthread_join(t, NULL) == 0, "the thread's end");
    }
    if (failures) {
        fprintf(stderr, "%d failures\n", failures);
        return 1;
    }
    printf("h5z: 200 fields through the plugin's filter callback within their bounds (layouts 1 "
           "and 2); cut chunks, an unknown layout, word counts, sizes and bounds refused, the "
           "last error kept; a thread's workspace freed at its end after dlclose\n");
    return 0;
}
