/* olla-onnx fuzz target: a minimalloc CSV table -> olla_place with a tiny
 * time limit, with and without a capacity; every placement returned is
 * checked by the independent validator. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/fuzz_common.h"
#include "solver/olla_place.h"

/* The lowest arena first fit reaches over every order of the buffers (up to
 * 7 of them): a real placement, so no proven bound may exceed it. */
static int64_t first_fit_all_orders(const olla_buffer *b, size_t n, int64_t align)
{
    int idx[7], perm[7], k = 0;
    for (size_t i = 0; i < n; i++)
        if (b[i].size > 0 && b[i].upper > b[i].lower)
            idx[k++] = (int)i;
    for (int i = 0; i < k; i++)
        perm[i] = i;
    int64_t best = INT64_MAX;
    for (;;) {
        int64_t off[7], arena = 0;
        for (int a = 0; a < k; a++) {
            const olla_buffer *x = &b[idx[perm[a]]];
            int64_t sx = (x->size + align - 1) / align * align, o = 0;
            for (int moved = 1; moved;) { /* lowest offset clear of every placed overlapping buffer */
                moved = 0;
                for (int q = 0; q < a; q++) {
                    const olla_buffer *y = &b[idx[perm[q]]];
                    int64_t sy = (y->size + align - 1) / align * align;
                    if (y->lower < x->upper && x->lower < y->upper && off[q] < o + sx && o < off[q] + sy) {
                        o = off[q] + sy;
                        moved = 1;
                    }
                }
            }
            off[a] = o;
            if (o + sx > arena)
                arena = o + sx;
        }
        if (arena < best)
            best = arena;
        int i = k - 2; /* next permutation */
        while (i >= 0 && perm[i] > perm[i + 1])
            i--;
        if (i < 0)
            break;
        int j = k - 1;
        while (perm[j] < perm[i])
            j--;
        int tmp = perm[i];
        perm[i] = perm[j];
        perm[j] = tmp;
        for (int l = i + 1, r = k - 1; l < r; l++, r--) {
            tmp = perm[l];
            perm[l] = perm[r];
            perm[r] = tmp;
        }
    }
    return k == 0 ? 0 : best;
}

int olla_fuzz_place_csv(const uint8_t *data, size_t size)
{
    olla_place_table t;
    olla_error err = {0};
    olla_status st = olla_place_csv_read_buffer((const char *)data, size, "fuzz.csv", &t, &err);
    olla_fuzz_status(st, &err, "csv");
    if (st != OLLA_OK)
        return 0;
    int64_t aligns[2] = {1, 64};
    for (int pass = 0; pass < 2; pass++) {
        olla_place_options po;
        memset(&po, 0, sizeof po);
        po.alignment = aligns[(size >> pass) & 1];
        po.time_limit = 0.01;
        int64_t max_live = olla_place_max_live(t.bufs, t.n, po.alignment);
        po.capacity = pass == 0 || max_live <= 0 ? 0 : max_live;
        olla_place_result res;
        olla_error perr = {0};
        st = olla_place(t.bufs, t.n, &po, &res, &perr);
        olla_fuzz_status(st, &perr, "place");
        if (st != OLLA_OK)
            continue;
        if (res.lower_bound > res.arena_bytes && res.status != OLLA_PLACE_NO_FIT &&
            res.status != OLLA_PLACE_NOT_FOUND)
            olla_fuzz_fail("place", "the lower bound exceeds the arena", NULL);
        if (res.status == OLLA_PLACE_OPTIMAL && pass == 0 && res.arena_bytes != res.lower_bound)
            olla_fuzz_fail("place", "optimal without reaching the bound", NULL);
        olla_error verr = {0};
        if (olla_place_validate(t.bufs, t.n, res.arena_bytes, po.alignment, &verr) != OLLA_OK)
            olla_fuzz_fail("place", "the placement does not validate", &verr);
        if (t.n <= 7) {
            int64_t ff = first_fit_all_orders(t.bufs, t.n, po.alignment);
            if (res.lower_bound > ff && res.status != OLLA_PLACE_NOT_FOUND)
                olla_fuzz_fail("place", "a proven bound above a placement that first fit finds", NULL);
            if (res.status == OLLA_PLACE_NO_FIT && ff <= po.capacity)
                olla_fuzz_fail("place", "no fit proven for a capacity that first fit meets", NULL);
        }
    }
    olla_place_table_free(&t);
    return 0;
}

#ifndef OLLA_FUZZ_NO_ENTRY
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return olla_fuzz_place_csv(data, size);
}
#endif
