/* olla-onnx fuzz target: shape inference on any model that loads, with and
 * without value_info, and every inferred size read back. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/fuzz_common.h"
#include "olla.h"
#include "passes/shapes/olla_shapes.h"

static void read_table(const olla_shape_table *t)
{
    size_t n = olla_shape_count(t);
    for (size_t i = 0; i < n; i++) {
        const char *name = olla_shape_name_at(t, i);
        const olla_value_type *vt = olla_shape_at(t, i);
        if (!name || !vt)
            olla_fuzz_fail("shapes", "a table entry without a name or type", NULL);
        if (vt->rank > 0 && !vt->dims)
            olla_fuzz_fail("shapes", "a ranked type without dimensions", NULL);
        int64_t b = olla_value_bytes(vt);
        if (b < -2)
            olla_fuzz_fail("shapes", "a size below -2", NULL);
        const char *why = olla_shape_unknown_reason(t, name);
        if (why && strchr(why, '\n'))
            olla_fuzz_fail("shapes", "a reason of more than one line", NULL);
        if (olla_shape_lookup(t, name) == NULL)
            olla_fuzz_fail("shapes", "a listed name that lookup does not find", NULL);
    }
    for (size_t i = 0; i < olla_shape_warning_count(t); i++)
        if (!olla_shape_warning_at(t, i))
            olla_fuzz_fail("shapes", "a missing warning", NULL);
}

int olla_fuzz_shapes(const uint8_t *data, size_t size)
{
    olla_error err = {0};
    olla_model *m = NULL;
    if (olla_model_load_buffer(data, size, "fuzz.onnx", NULL, &m, &err) != OLLA_OK)
        return 0;
    static const olla_dim_binding dims[] = {{"batch", 2}, {"N", 3}, {"seq", 5}, {"batch_size", 2}};
    for (int pass = 0; pass < 2; pass++) {
        olla_shape_options so = {.dims = pass ? NULL : dims, .n_dims = pass ? 0 : 4, .ignore_value_info = pass};
        olla_shape_table *t = NULL;
        olla_error serr = {0};
        olla_status st = olla_infer_shapes(m->proto, &so, &t, &serr);
        olla_fuzz_status(st, &serr, "shapes");
        if (st == OLLA_OK)
            read_table(t);
        olla_shape_table_free(t);
    }
    olla_model_free(m);
    return 0;
}

#ifndef OLLA_FUZZ_NO_ENTRY
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return olla_fuzz_shapes(data, size);
}
#endif
