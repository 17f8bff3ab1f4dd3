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
    olla_status st = olla_model_load(model_path, &m, err);
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
    olla_model_free(m);
    return st;
}

int64_t olla_runtime_plan_arena_bytes(const olla_runtime_plan *p)
{
    return p->stored.arena_bytes;
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
