/* The predictors' traversals (docs/codecs/predict.md, "Lorenzo", "Multilevel interpolation",
   "Interpolation, dimensions reversed", "Interpolation by slices"): each visits every element
   once in its order, predicts it from the predictor values of elements visited before, and
   reconstructs it. Written once (predictors_walk.h), built for float32 and float64 chunks,
   each with the symbols read from an array (stages 0 to 2) or decoded from stage 3's stream
   where the element is visited. */
#if defined(__GNUC__) && !defined(__clang__)
/* (gcc's straight-line vectoriser packs the coder's two states, swapped after every symbol,
   into one vector register stored and reloaded for the next: the chain of a fine bound's
   symbols waits on memory, 1.7x the decode of a relative chunk at R = 1e-4) */
#pragma GCC optimize("no-tree-slp-vectorize")
#endif
#include <stdlib.h>

#include "reconstruct.h"

#define WALK(name) name##_f32
#define RECONSTRUCT zdt__reconstruct_f32
#define WALK_F32 1
#define WALK_ANS 0
#include "predictors_walk.h"
#undef WALK
#undef WALK_ANS

#define WALK(name) name##_f32_ans
#define WALK_ANS 1
#include "predictors_walk.h"
#undef WALK
#undef WALK_ANS
#undef WALK_F32
#undef RECONSTRUCT

#define WALK(name) name##_f64
#define RECONSTRUCT zdt__reconstruct_f64
#define WALK_F32 0
#define WALK_ANS 0
#include "predictors_walk.h"
#undef WALK
#undef WALK_ANS

#define WALK(name) name##_f64_ans
#define WALK_ANS 1
#include "predictors_walk.h"
#undef WALK
#undef WALK_ANS
#undef WALK_F32
#undef RECONSTRUCT

/* a queue for a chunk of n elements (sizes: blocks, their symbols and exceptions of a pass,
   at least one whole block each; a queue that fills is emptied early, in order): NULL
   without memory (the passes then run one after the other) */
static zdt__defer *defer_new(size_t n) {
    zdt__defer *q = (zdt__defer *)calloc(1, sizeof(zdt__defer));
    if (q == NULL)
        return NULL;
    q->cap = n / 256 + 64;
    q->cap_ks = n / 4 + ZDT_WALK_BLOCK;
    q->cap_kept = n / 64 + ZDT_WALK_BLOCK;
    q->blk = (zdt__deferred *)malloc(q->cap * sizeof(zdt__deferred));
    q->ks = (uint8_t *)malloc(q->cap_ks);
    q->kept = (zdt__kept *)malloc(q->cap_kept * sizeof(zdt__kept));
    if (q->blk == NULL || q->ks == NULL || q->kept == NULL) {
        free(q->blk);
        free(q->ks);
        free(q->kept);
        free(q);
        return NULL;
    }
    return q;
}

static void defer_free(zdt__defer *q) {
    if (q != NULL) {
        free(q->blk);
        free(q->ks);
        free(q->kept);
        free(q);
    }
}

/* (below it the queue is not worth its allocations: a chunk that small stays cached between
   passes) */
#define ZDT_DEFER_MIN 1024

int zdt__traverse(int predictor, zdt__walk *w, const zdt__grid *g, int is_f32) {
    int rc;
    if (g->count == 0)
        return 0;
    if (w->ans == NULL)
        return is_f32 ? run_f32(predictor, w, g) : run_f64(predictor, w, g);
    w->defer = predictor >= 2 && g->count >= ZDT_DEFER_MIN ? defer_new(g->count) : NULL;
    rc = is_f32 ? run_f32_ans(predictor, w, g) : run_f64_ans(predictor, w, g);
    defer_free(w->defer);
    w->defer = NULL;
    return rc;
}
