/* olla-onnx: the pipeline's last stage. The planned model is the input
 * model with its nodes in the plan's order and the plan in three
 * metadata_props entries (olla.version, olla.arena_bytes, olla.plan); a model
 * planned again gets its olla.* entries replaced. */
#include <stdio.h>
#include <stdlib.h>

#include "olla.h"
#include "onnx/olla_external.h"
#include "onnx/olla_model.h"
#include "plan/olla_check.h"
#include "plan/olla_plan_json.h"
#include "util/olla_file.h"

olla_status olla_write_model(const olla_model *m, const olla_plan *plan, const char *out_path, olla_error *err)
{
    char *plan_json = olla_plan_to_json(plan);
    if (!plan_json)
        return olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory writing %s", out_path);
    char arena[32];
    snprintf(arena, sizeof arena, "%lld", (long long)plan->arena_bytes);
    const olla_meta_entry meta[] = {
        {OLLA_META_VERSION, OLLA_VERSION_STRING}, {OLLA_META_ARENA, arena}, {OLLA_META_PLAN, plan_json}};
    const olla_model *src = plan->rewritten ? plan->rewritten : m;
    olla_status st = olla_model_write(src, plan->listing, plan->n_nodes, meta, 3, "olla.", out_path, err);
    free(plan_json);
    return st;
}

void olla_write_abandon(void)
{
    olla_file_abandon();
    olla_external_abandon();
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
