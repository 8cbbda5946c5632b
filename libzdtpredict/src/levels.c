/* Stage 2's level groups (docs/codecs/predict.md, "Entropy stage 2"): an element's group is the
   fewest trailing zero bits (capped at 3; index 0 has 3) of its indices along the dimensions
   the predictor interpolates along: every dimension of extent > 1, for predictor 4 all but the
   first of them (it slices along that one). */
#include "internal.h"

static unsigned level_of(size_t i) {
    if (i == 0 || (i & 7) == 0)
        return 3;
    return (i & 1) ? 0 : (i & 2) ? 1 : 2;
}

void zdt__level_groups(const zdt__grid *g, int predictor, uint8_t *group) {
    int along[4], d, first = 1;
    size_t i[4], at = 0;
    /* (no elements: no group; the loops below would still count up the other extents, which
       a chunk may give as anything, 2^51 say, where an optimiser does not drop the empty loop) */
    if (g->n[0] == 0 || g->n[1] == 0 || g->n[2] == 0 || g->n[3] == 0)
        return;
    for (d = 0; d < 4; d++) {
        along[d] = g->n[d] > 1;
        if (along[d] && predictor == 4 && first) {
            along[d] = 0;
            first = 0;
        }
    }
    for (i[0] = 0; i[0] < g->n[0]; i[0]++)
        for (i[1] = 0; i[1] < g->n[1]; i[1]++)
            for (i[2] = 0; i[2] < g->n[2]; i[2]++)
                for (i[3] = 0; i[3] < g->n[3]; i[3]++) {
                    unsigned least = 3, l;
                    for (d = 0; d < 4; d++)
                        if (along[d] && (l = level_of(i[d])) < least)
                            least = l;
                    group[at++] = (uint8_t)least;
                }
}
