/* olla-onnx: the runtime side of the plan. */
#include "olla_plan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan/olla_plan_json.h"
#include "util/olla_strmap.h"
#include "onnx/olla_model.h"

struct olla_runtime_plan {
    olla_stored_plan stored;
    olla_allocation *allocs;
    olla_strmap by_name;
};

void olla_runtime_plan_free(olla_runtime_plan *p)
{
    if (!p)
        return;
    olla_strmap_free(&p->by_name);
    free(p->allocs);
    olla_stored_plan_free(&p->stored);
    free(p);
}

olla_status olla_runtime_plan_parse(const char *plan_json, olla_runtime_plan **out, olla_error *err)
{
    *out = NULL;
    olla_runtime_plan *p = calloc(1, sizeof *p);
    if (!p)
        return olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory reading the plan");
    olla_status st = olla_plan_from_json(plan_json, &p->stored, err);
    if (st != OLLA_OK) {
        free(p);
        return st;
    }
    int n = p->stored.n_entries;
    p->allocs = malloc(((size_t)n + 1) * sizeof *p->allocs);
    if (!p->allocs || !olla_strmap_init(&p->by_name, (size_t)n)) {
        olla_runtime_plan_free(p);
        return olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory reading the plan");
    }
    for (int i = 0; i < n; i++) {
        const olla_stored_entry *e = &p->stored.entries[i];
        if (e->offset > p->stored.arena_bytes || e->bytes > p->stored.arena_bytes - e->offset) {
            olla_status s = olla_error_set(err, OLLA_ERR_INPUT, "plan entry '%s' lies beyond the arena", e->name);
            olla_runtime_plan_free(p);
            return s;
        }
        p->allocs[i].name = e->name;
        p->allocs[i].offset = e->offset;
        p->allocs[i].bytes = e->bytes;
        p->allocs[i].share = e->share;
        p->allocs[i].shares = e->shares;
        if (e->shares && olla_strmap_get(&p->by_name, e->shares) < 0) {
            olla_status s = olla_error_set(err, OLLA_ERR_INPUT,
                                           "plan entry '%s' shares '%s', which no earlier entry allocates", e->name,
                                           e->shares);
            olla_runtime_plan_free(p);
            return s;
        }
        if (!olla_strmap_put(&p->by_name, e->name, i)) {
            olla_runtime_plan_free(p);
            return olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory reading the plan");
        }
    }
    *out = p;
    return OLLA_OK;
}

olla_status olla_runtime_plan_load(const char *model_path, olla_runtime_plan **out, olla_error *err)
{
    *out = NULL;
    olla_model *m = NULL;
    olla_status st = olla_model_load_file(model_path, &m, err);
    if (st != OLLA_OK)
        return st;
    const char *json = NULL;
    for (size_t i = 0; i < m->proto->n_metadata_props; i++) {
        const Onnx__StringStringEntryProto *kv = m->proto->metadata_props[i];
        if (kv->key && strcmp(kv->key, OLLA_META_PLAN) == 0)
            json = kv->value ? kv->value : "";
    }
    if (!json)
        st = olla_error_set(err, OLLA_ERR_INPUT, "%s: no olla.plan metadata; plan the model with olla-onnx first",
                            model_path);
    else
        st = olla_runtime_plan_parse(json, out, err);
    olla_model_destroy(m);
    return st;
}

int64_t olla_runtime_plan_arena_bytes(const olla_runtime_plan *p)
{
    return p->stored.arena_bytes;
}

olla_runtime olla_runtime_plan_runtime(const olla_runtime_plan *p)
{
    return p->stored.runtime;
}

const int *olla_runtime_plan_order(const olla_runtime_plan *p, size_t *n)
{
    *n = p->stored.order ? (size_t)p->stored.n_order : 0;
    return p->stored.order;
}

int olla_runtime_plan_sharing(const olla_runtime_plan *p)
{
    return p->stored.sharing;
}

int64_t olla_runtime_plan_alignment(const olla_runtime_plan *p)
{
    return p->stored.alignment;
}

int64_t olla_runtime_plan_offset(const olla_runtime_plan *p, const char *name)
{
    int i = olla_strmap_get(&p->by_name, name);
    return i >= 0 ? p->allocs[i].offset : -1;
}

size_t olla_runtime_plan_allocation_count(const olla_runtime_plan *p)
{
    return (size_t)p->stored.n_entries;
}

const olla_allocation *olla_runtime_plan_allocation(const olla_runtime_plan *p, size_t k)
{
    return k < (size_t)p->stored.n_entries ? &p->allocs[k] : NULL;
}

/* ---- what the plan was made for ---- */

size_t olla_runtime_plan_dim_count(const olla_runtime_plan *p)
{
    return (size_t)p->stored.n_dims;
}

const char *olla_runtime_plan_dim_at(const olla_runtime_plan *p, size_t i, int64_t *value)
{
    if (i >= (size_t)p->stored.n_dims)
        return NULL;
    if (value)
        *value = p->stored.dims[i].value;
    return p->stored.dims[i].name;
}

int64_t olla_runtime_plan_dim(const olla_runtime_plan *p, const char *name)
{
    for (int i = 0; name && i < p->stored.n_dims; i++)
        if (strcmp(p->stored.dims[i].name, name) == 0)
            return p->stored.dims[i].value;
    return -1;
}

size_t olla_runtime_plan_input_count(const olla_runtime_plan *p)
{
    return (size_t)p->stored.n_inputs;
}

const char *olla_runtime_plan_input_at(const olla_runtime_plan *p, size_t i, int *rank, const int64_t **dims)
{
    if (i >= (size_t)p->stored.n_inputs)
        return NULL;
    if (rank)
        *rank = p->stored.inputs[i].rank;
    if (dims)
        *dims = p->stored.inputs[i].dims;
    return p->stored.inputs[i].name;
}

/* "[8,3,224,224]" into buf. */
static void format_shape(int rank, const int64_t *dims, char *buf, size_t size)
{
    size_t at = (size_t)snprintf(buf, size, "[");
    for (int d = 0; d < rank && at < size; d++)
        at += (size_t)snprintf(buf + at, size - at, "%s%lld", d ? "," : "", (long long)dims[d]);
    if (at < size)
        snprintf(buf + at, size - at, "]");
}

static int same_shape(const olla_input_shape *a, const olla_input_shape *b)
{
    if (a->rank != b->rank)
        return 0;
    for (int d = 0; d < a->rank; d++)
        if (a->dims[d] != b->dims[d])
            return 0;
    return 1;
}

olla_status olla_runtime_plan_check_inputs(const olla_runtime_plan *p, const olla_input_shape *shapes, size_t n,
                                           olla_error *err)
{
    if (n > 0 && p->stored.n_inputs == 0)
        return olla_error_set(err, OLLA_ERR_INPUT,
                              "the plan records no input shapes (an older olla-onnx wrote it); plan the model again");
    for (size_t k = 0; k < n; k++) {
        const olla_input_shape *given = &shapes[k], *planned = NULL;
        for (int i = 0; i < p->stored.n_inputs && !planned; i++)
            if (given->name && strcmp(p->stored.inputs[i].name, given->name) == 0)
                planned = &p->stored.inputs[i];
        char a[256], b[256];
        format_shape(given->rank, given->dims, a, sizeof a);
        if (!planned)
            return olla_error_set(err, OLLA_ERR_INPUT, "input '%s' %s: the plan records no such input",
                                  given->name ? given->name : "", a);
        if (same_shape(given, planned))
            continue;
        format_shape(planned->rank, planned->dims, b, sizeof b);
        return olla_error_set(err, OLLA_ERR_INPUT,
                              "input '%s' has shape %s but the plan was made for %s; plan the model again for these "
                              "shapes",
                              given->name, a, b);
    }
    return OLLA_OK;
}
