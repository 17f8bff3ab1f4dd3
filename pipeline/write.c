/* olla-onnx: the pipeline's last stage. The planned model is the input
 * model with its nodes in the plan's order and the plan in three
 * metadata_props entries (olla.version, olla.arena_bytes, olla.plan); a model
 * planned again gets its olla.* entries replaced. The same bytes go to a
 * file or, for callers that keep models in memory, to a buffer; models are
 * read from memory here too. */
#include <stdio.h>
#include <stdlib.h>

#include "olla.h"
#include "onnx/olla_external.h"
#include "onnx/olla_model.h"
#include "plan/olla_check.h"
#include "plan/olla_plan_json.h"
#include "util/olla_file.h"

/* The model with its nodes in the plan's listing and the plan's three
 * metadata entries, written to out_path, or packed into *buf when out_path
 * is NULL (name is what a message calls it). */
static olla_status write_planned(const olla_model *m, const olla_plan *plan, const char *out_path, const char *name,
                                 uint8_t **buf, size_t *len, olla_error *err)
{
    char *plan_json = olla_plan_to_json(plan);
    if (!plan_json)
        return olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory writing %s", name);
    char arena[32];
    snprintf(arena, sizeof arena, "%lld", (long long)plan->arena_bytes);
    const olla_meta_entry meta[] = {
        {OLLA_META_VERSION, OLLA_VERSION_STRING}, {OLLA_META_ARENA, arena}, {OLLA_META_PLAN, plan_json}};
    const olla_model *src = plan->rewritten ? plan->rewritten : m;
    const olla_model_edit edit = {plan->listing, plan->n_nodes, meta, 3, "olla."};
    olla_status st = out_path ? olla_model_write(src, &edit, out_path, err)
                              : olla_model_pack(src, &edit, name, buf, len, err);
    free(plan_json);
    return st;
}

olla_status olla_write_model(const olla_model *m, const olla_plan *plan, const char *out_path, olla_error *err)
{
    return write_planned(m, plan, out_path, out_path, NULL, NULL, err);
}

olla_status olla_write_model_bytes(const olla_model *m, const olla_plan *plan, uint8_t **bytes, size_t *len,
                                   olla_error *err)
{
    *bytes = NULL;
    *len = 0;
    return write_planned(m, plan, NULL, m->path, bytes, len, err);
}

void olla_write_abandon(void)
{
    olla_file_abandon();
    olla_external_abandon();
}

void olla_write_forget(void)
{
    olla_file_forget();
}

olla_status olla_model_load(const char *path, olla_model **out, olla_error *err)
{
    return olla_model_load_file(path, out, err);
}

void olla_model_free(olla_model *m)
{
    olla_model_destroy(m);
}

size_t olla_model_node_count(const olla_model *m)
{
    return m->proto->graph->n_node;
}

const char *olla_model_node(const olla_model *m, size_t i, size_t *n_inputs, const char *const **inputs,
                            size_t *n_outputs, const char *const **outputs)
{
    const Onnx__GraphProto *g = m->proto->graph;
    if (i >= g->n_node)
        return NULL;
    const Onnx__NodeProto *node = g->node[i];
    *n_inputs = node->n_input;
    *inputs = (const char *const *)node->input;
    *n_outputs = node->n_output;
    *outputs = (const char *const *)node->output;
    return node->op_type ? node->op_type : "";
}

size_t olla_model_output_count(const olla_model *m)
{
    return m->proto->graph->n_output;
}

const char *olla_model_output_name(const olla_model *m, size_t i)
{
    const Onnx__GraphProto *g = m->proto->graph;
    return i < g->n_output && g->output[i]->name ? g->output[i]->name : NULL;
}

olla_status olla_model_load_bytes(const void *data, size_t len, const char *name, const char *dir, olla_model **out,
                                  olla_error *err)
{
    return olla_model_load_buffer(data ? data : (const void *)"", len, name ? name : "<memory>", dir, out, err);
}

olla_status olla_check_model(const olla_model *m, const olla_options *opt, olla_error *err)
{
    olla_check_options co = {.dims = opt->dims,
                             .n_dims = opt->n_dims,
                             .strict_shapes = opt->strict_shapes,
                             .input_shapes = opt->input_shapes,
                             .n_input_shapes = opt->n_input_shapes};
    return olla_plan_check(m, &co, err);
}
