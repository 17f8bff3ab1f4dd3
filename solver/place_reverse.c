/* olla-onnx: the placement searches run backwards in time. Mirroring every
 * lifetime ([lower, upper) becomes [T - upper, T - lower), T the latest
 * end) keeps exactly the same pairs of buffers live together, so a
 * placement of the mirrored buffers is one of the buffers themselves, and
 * a proof that none exists within a capacity holds for both. The searches
 * are not symmetric in time, though: the split stacks the busiest time and
 * places the side before it first, and the exact search takes sections
 * from the left on ties. A training step is not symmetric either (the
 * forward pass allocates what the backward pass frees in another pattern),
 * so the mirrored run finds placements the forward one misses within the
 * same budget (traced Inception v3 steps at batch 32 and generated
 * DenseNet-style steps reach max live only backwards). */
#include <stdlib.h>

#include "solver/place_internal.h"

/* The buffers mirrored in time, in order of mirrored start (then end, then
 * index: the order in which the driver hands a part to the searches, whose
 * ties follow the buffers' order): m[k] is it[ord[k]] mirrored. Returns 0,
 * or -1 when out of memory. */
static int mirror(const olla_pitem *it, size_t n, olla_pitem **m, int **ord, int64_t **moff)
{
    olla_pkey *keys = malloc((n + 1) * sizeof *keys);
    *m = malloc((n + 1) * sizeof **m);
    *ord = malloc((n + 1) * sizeof **ord);
    *moff = malloc((n + 1) * sizeof **moff);
    if (!keys || !*m || !*ord || !*moff) {
        free(keys);
        free(*m);
        free(*ord);
        free(*moff);
        return -1;
    }
    int64_t end = 0;
    for (size_t i = 0; i < n; i++)
        if (it[i].upper > end)
            end = it[i].upper;
    for (size_t i = 0; i < n; i++)
        keys[i] = (olla_pkey){end - it[i].upper, end - it[i].lower, (int)i};
    olla_place_sort_keys(keys, n);
    for (size_t k = 0; k < n; k++) {
        (*ord)[k] = keys[k].idx;
        (*m)[k] = (olla_pitem){keys[k].k1, keys[k].k2, it[keys[k].idx].size};
    }
    free(keys);
    return 0;
}

/* Frees the mirror; when found, copies its offsets back to off. */
static void unmirror(olla_pitem *m, int *ord, int64_t *moff, size_t n, int found, int64_t *off)
{
    if (found)
        for (size_t k = 0; k < n; k++)
            off[ord[k]] = moff[k];
    free(m);
    free(ord);
    free(moff);
}

int olla_place_search_reversed(const olla_pitem *it, size_t n, int64_t capacity, olla_pwork *w,
                               int64_t *off)
{
    olla_pitem *m;
    int *ord;
    int64_t *moff;
    if (mirror(it, n, &m, &ord, &moff) < 0)
        return OLLA_SEARCH_NOMEM;
    int r = olla_place_search(m, n, capacity, w, moff);
    unmirror(m, ord, moff, n, r == OLLA_SEARCH_FOUND, off);
    return r;
}

int olla_place_split_reversed(const olla_pitem *it, size_t n, int64_t capacity, olla_pwork *w,
                              int64_t *off, const olla_logger *log)
{
    olla_pitem *m;
    int *ord;
    int64_t *moff;
    if (mirror(it, n, &m, &ord, &moff) < 0)
        return OLLA_SEARCH_NOMEM;
    int r = olla_place_split(m, n, capacity, w, moff, log);
    unmirror(m, ord, moff, n, r == OLLA_SEARCH_FOUND, off);
    return r;
}
