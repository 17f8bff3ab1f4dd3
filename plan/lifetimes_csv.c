/* olla-onnx: the plan's buffers in minimalloc's CSV format, so the
 * placement can be studied or redone with `olla-onnx place`. One row per
 * buffer: tensors that share a buffer (views, in-place writes) lie inside
 * their owner's row, whose lifetime spans them all. The file is written
 * whole or not at all (util/olla_file.h). */
#include <stdio.h>
#include <stdlib.h>

#include "olla_plan.h"
#include "util/olla_file.h"

olla_status olla_plan_write_lifetimes(const olla_plan *plan, const char *path, olla_error *err)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory writing %s", path);
    fprintf(f, "id,lower,upper,size,offset\n");
    for (int i = 0, id = 0; i < plan->n_entries; i++) {
        const olla_plan_entry *e = &plan->entries[i];
        if (e->share != OLLA_BUFFER_OWN)
            continue;
        fprintf(f, "%d,%d,%d,%lld,%lld\n", id++, e->first_step, e->last_step + 1, (long long)e->bytes,
                (long long)e->offset);
    }
    olla_status st;
    if (ferror(f) | (fclose(f) != 0))
        st = olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory writing %s", path);
    else
        st = olla_write_file_atomic(path, buf, len, err);
    free(buf);
    return st;
}
