/* olla-onnx: the plan's buffers in minimalloc's CSV format, so the
 * placement can be studied or redone with `olla-onnx place`. One row per
 * buffer: tensors that share a buffer (views, in-place writes) lie inside
 * their owner's row, whose lifetime spans them all. Buffers of no bytes
 * (empty tensors) take no memory and get no row: minimalloc, which reads the
 * same format, finds no placement at all for an instance that holds one.
 * The file is written whole or not at all (util/olla_file.h). */
#include <stdio.h>
#include <stdlib.h>

#include "olla_plan.h"
#include "util/olla_file.h"

olla_status olla_plan_write_lifetimes(const olla_plan *plan, const char *path, olla_error *err)
{
    olla_text_file out;
    olla_status st = olla_text_file_open(&out, path, err);
    if (st != OLLA_OK)
        return st;
    fprintf(out.f, "id,lower,upper,size,offset\n");
    for (int i = 0, id = 0; i < plan->n_entries; i++) {
        const olla_plan_entry *e = &plan->entries[i];
        if (e->share != OLLA_BUFFER_OWN || e->bytes == 0)
            continue;
        fprintf(out.f, "%d,%d,%d,%lld,%lld\n", id++, e->first_step, e->last_step + 1, (long long)e->bytes,
                (long long)e->offset);
    }
    return olla_text_file_write(&out, path, 0, err);
}
