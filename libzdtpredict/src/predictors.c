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

int zdt__traverse(int predictor, zdt__walk *w, const zdt__grid *g, int is_f32) {
    if (g->count == 0)
        return 0;
    if (is_f32)
        return w->ans != NULL ? run_f32_ans(predictor, w, g) : run_f32(predictor, w, g);
    return w->ans != NULL ? run_f64_ans(predictor, w, g) : run_f64(predictor, w, g);
}
