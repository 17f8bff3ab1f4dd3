/* olla-onnx fuzz target: a minimalloc CSV table -> olla_place with a tiny
 * time limit, with and without a capacity; every placement returned is
 * checked by the independent validator. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/fuzz_common.h"
#include "solver/olla_place.h"

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
