/* olla-onnx: checking a written model's plan, from the file alone. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan/olla_check.h"
#include "passes/shapes/olla_shapes.h"
#include "plan/olla_plan_json.h"
#include "plan/olla_verify.h"

static const char *meta(const Onnx__ModelProto *m, const char *key)
{
    for (size_t i = 0; i < m->n_metadata_props; i++)
        if (m->metadata_props[i]->key && strcmp(m->metadata_props[i]->key, key) == 0)
            return m->metadata_props[i]->value ? m->metadata_props[i]->value : "";
    return NULL;
}

olla_status olla_plan_check(const olla_model *m, const olla_check_options *opt, olla_error *err)
{
    const char *file = m->path;
    const char *plan_text = meta(m->proto, OLLA_META_PLAN);
    const char *arena_text = meta(m->proto, OLLA_META_ARENA);
    if (!plan_text)
        return olla_error_set(err, OLLA_ERR_INPUT, "%s: no olla.plan metadata; this model has not been planned", file);
    olla_stored_plan sp;
    olla_status st = olla_plan_from_json(plan_text, &sp, err);
    if (st != OLLA_OK) {
        char msg[sizeof err->message];
        snprintf(msg, sizeof msg, "%s", err->message);
        olla_error_clear(err);
        return olla_error_set(err, st, "%s: %s", file, msg);
    }
    olla_shape_table *types = NULL;
    olla_graph *g = NULL;
    int64_t *offset = NULL, *bytes = NULL;
    int *order = NULL, *shares = NULL;
    unsigned char *share = NULL;
    char expect[32];
    snprintf(expect, sizeof expect, "%lld", (long long)sp.arena_bytes);
    if (!arena_text || strcmp(arena_text, expect) != 0) {
        st = olla_error_set(err, OLLA_ERR_INPUT, "%s: olla.arena_bytes (%s) differs from the plan's arena_bytes (%s)",
                            file, arena_text ? arena_text : "missing", expect);
        goto done;
    }
    olla_shape_options so = {opt->dims, opt->n_dims, 0};
    if ((st = olla_infer_shapes(m->proto, &so, &types, err)) != OLLA_OK)
        goto done;
    olla_type_source src = olla_shape_type_source(types);
    if ((st = olla_graph_build(m, &src, &g, err)) != OLLA_OK)
        goto done;
    offset = malloc(((size_t)g->n_tensors + 1) * sizeof *offset);
    bytes = calloc((size_t)g->n_tensors + 1, sizeof *bytes);
    order = malloc(((size_t)g->n_ops + 1) * sizeof *order);
    shares = malloc(((size_t)g->n_tensors + 1) * sizeof *shares);
    share = calloc((size_t)g->n_tensors + 1, 1);
    if (!offset || !bytes || !order || !shares || !share) {
        st = olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory checking %s", file);
        goto done;
    }
    for (int t = 0; t < g->n_tensors; t++) {
        offset[t] = -1;
        shares[t] = -1;
    }
    for (int i = 0; i < sp.n_entries; i++) {
        int t = olla_strmap_get(&g->by_name, sp.entries[i].name);
        if (t < 0) {
            st = olla_error_set(err, OLLA_ERR_INPUT, "%s: the plan lists '%s', which is not a tensor of the graph", file,
                                sp.entries[i].name);
            goto done;
        }
        if (offset[t] >= 0) {
            st = olla_error_set(err, OLLA_ERR_INPUT, "%s: the plan lists '%s' twice", file, sp.entries[i].name);
            goto done;
        }
        offset[t] = sp.entries[i].offset;
        bytes[t] = sp.entries[i].bytes;
        share[t] = (unsigned char)sp.entries[i].share;
        if (sp.entries[i].shares && (shares[t] = olla_strmap_get(&g->by_name, sp.entries[i].shares)) < 0) {
            st = olla_error_set(err, OLLA_ERR_INPUT, "%s: the plan says '%s' shares '%s', which is not a tensor of the graph",
                                file, sp.entries[i].name, sp.entries[i].shares);
            goto done;
        }
    }
    for (int i = 0; i < g->n_ops; i++)
        order[i] = i; /* the file's own node order */
    olla_plan_layout lay = {order, offset, bytes, share, shares, sp.arena_bytes, sp.alignment, sp.sharing};
    st = olla_plan_verify(g, &lay, err);
done:
    free(offset);
    free(bytes);
    free(order);
    free(shares);
    free(share);
    olla_graph_free(g);
    olla_shape_table_free(types);
    olla_stored_plan_free(&sp);
    return st;
}
