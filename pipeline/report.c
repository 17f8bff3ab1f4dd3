/* olla-onnx: the --report JSON. */
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "olla.h"
#include "pipeline/olla_pipeline.h"
#include "util/olla_file.h"

static json_object *opt_i64(int64_t v)
{
    return v < 0 ? NULL : json_object_new_int64(v);
}

void olla_report_set_saving(olla_report *r)
{
    if (r->runtime && strcmp(r->runtime, "listed") == 0) {
        r->saving_basis = "arena";
        r->saving_input_bytes = r->input_executed_peak_bytes;
        r->saving_planned_bytes = r->arena_bytes;
    } else if (r->input_ort_allocated_bytes >= 0 && r->ort_allocated_bytes >= 0) {
        r->saving_basis = "ort_allocated";
        r->saving_input_bytes = r->input_ort_allocated_bytes;
        r->saving_planned_bytes = r->ort_allocated_bytes;
    } else {
        r->saving_basis = "executed_peak";
        r->saving_input_bytes = r->input_executed_peak_bytes;
        r->saving_planned_bytes = r->executed_peak_bytes;
    }
}

int olla_report_held_more(const olla_report *r)
{
    if (!r->runtime || strcmp(r->runtime, "listed") == 0)
        return -1;
    int held = r->runtime_search && strcmp(r->runtime_search, "held more") == 0;
    if (!(held || r->arena_searched) || r->held_more_setting < 0 || r->held_more_setting >= OLLA_ORT_N_SETTINGS)
        return -1;
    return r->held_more_setting;
}

char *olla_report_to_json(const olla_report *r, int pretty)
{
    json_object *o = json_object_new_object();
    if (!o)
        return NULL;
    json_object_object_add(o, "model", json_object_new_string(r->model ? r->model : ""));
    json_object_object_add(o, "nodes", json_object_new_int(r->nodes));
    json_object_object_add(o, "tensors", json_object_new_int(r->tensors));
    json_object_object_add(o, "planned_tensors", json_object_new_int(r->planned_tensors));
    json_object_object_add(o, "constant_bytes", json_object_new_int64(r->constant_bytes));
    json_object_object_add(o, "sharing", json_object_new_string(r->sharing ? r->sharing : "runtime"));
    json_object_object_add(o, "input_order_peak_bytes", json_object_new_int64(r->input_order_peak_bytes));
    json_object_object_add(o, "input_order_shared_peak_bytes",
                           json_object_new_int64(r->input_order_shared_peak_bytes));
    json_object_object_add(o, "input_order_online_arena_bytes", json_object_new_int64(r->input_order_online_arena_bytes));
    json_object_object_add(o, "input_order_fragmentation", json_object_new_double(r->input_order_fragmentation));
    json_object_object_add(o, "heuristic_peak_bytes", json_object_new_int64(r->heuristic_peak_bytes));
    json_object_object_add(o, "peak_bytes", json_object_new_int64(r->peak_bytes));
    json_object_object_add(o, "arena_bytes", json_object_new_int64(r->arena_bytes));
    json_object_object_add(o, "lower_bound_bytes", opt_i64(r->lower_bound_bytes));
    json_object_object_add(o, "schedule_seconds", json_object_new_double(r->schedule_seconds));
    json_object_object_add(o, "placement_seconds", json_object_new_double(r->placement_seconds));
    json_object_object_add(o, "total_seconds", json_object_new_double(r->total_seconds));
    json_object_object_add(o, "schedule_status", json_object_new_string(r->schedule_status ? r->schedule_status : ""));
    json_object_object_add(o, "schedule_stopped_by",
                           json_object_new_string(r->schedule_stopped_by ? r->schedule_stopped_by : ""));
    json_object_object_add(o, "placement_status",
                           json_object_new_string(r->placement_status ? r->placement_status : ""));
    json_object_object_add(o, "placement_stopped_by",
                           json_object_new_string(r->placement_stopped_by ? r->placement_stopped_by : ""));
    json_object_object_add(o, "placement_work", json_object_new_int64(r->placement_work));
    json_object_object_add(o, "joint_used", json_object_new_boolean(r->joint_used != 0));
    json_object_object_add(o, "runtime", json_object_new_string(r->runtime ? r->runtime : "ort"));
    json_object_object_add(o, "unconstrained_peak_bytes", json_object_new_int64(r->unconstrained_peak_bytes));
    json_object_object_add(o, "input_executed_peak_bytes", json_object_new_int64(r->input_executed_peak_bytes));
    json_object_object_add(o, "executed_peak_bytes", json_object_new_int64(r->executed_peak_bytes));
    json_object_object_add(o, "input_ort_allocated_bytes", opt_i64(r->input_ort_allocated_bytes));
    json_object_object_add(o, "ort_allocated_bytes", opt_i64(r->ort_allocated_bytes));
    json_object_object_add(o, "input_ort_default_allocated_bytes", opt_i64(r->input_ort_default_allocated_bytes));
    json_object_object_add(o, "ort_default_allocated_bytes", opt_i64(r->ort_default_allocated_bytes));
    json_object_object_add(o, "input_ort_default_steady_bytes", opt_i64(r->input_ort_default_steady_bytes));
    json_object_object_add(o, "ort_default_steady_bytes", opt_i64(r->ort_default_steady_bytes));
    json_object *settings = json_object_new_array();
    for (int k = 0; k < OLLA_ORT_N_SETTINGS; k++) {
        const olla_ort_setting_figures *f = &r->ort_settings[k];
        json_object *e = json_object_new_object();
        json_object_object_add(e, "enableCpuMemArena", json_object_new_boolean(f->arena));
        json_object_object_add(e, "enableMemPattern", json_object_new_boolean(f->mem_pattern));
        json_object_object_add(e, "input_first_run_bytes", opt_i64(f->input_first_run_bytes));
        json_object_object_add(e, "first_run_bytes", opt_i64(f->first_run_bytes));
        json_object_object_add(e, "input_steady_bytes", opt_i64(f->input_steady_bytes));
        json_object_object_add(e, "steady_bytes", opt_i64(f->steady_bytes));
        json_object_array_add(settings, e);
    }
    json_object_object_add(o, "ort_settings", settings);
    json_object_object_add(o, "runtime_search", json_object_new_string(r->runtime_search ? r->runtime_search : ""));
    if (r->runtime && strcmp(r->runtime, "listed") != 0)
        json_object_object_add(o, "arena_searched", json_object_new_boolean(r->arena_searched != 0));
    int held_setting = olla_report_held_more(r);
    if (held_setting >= 0) {
        const olla_ort_setting_figures *f = &r->ort_settings[held_setting];
        json_object *h = json_object_new_object();
        json_object_object_add(h, "enableCpuMemArena", json_object_new_boolean(f->arena));
        json_object_object_add(h, "enableMemPattern", json_object_new_boolean(f->mem_pattern));
        json_object_object_add(h, "run", json_object_new_string(r->held_more_steady ? "three runs" : "first"));
        json_object_object_add(h, "input_bytes", json_object_new_int64(r->held_more_input_bytes));
        json_object_object_add(h, "bytes", json_object_new_int64(r->held_more_bytes));
        json_object_object_add(o, "held_more", h);
    }
    json_object_object_add(o, "saving_basis", json_object_new_string(r->saving_basis ? r->saving_basis : ""));
    json_object_object_add(o, "saving_input_bytes", json_object_new_int64(r->saving_input_bytes));
    json_object_object_add(o, "saving_planned_bytes", json_object_new_int64(r->saving_planned_bytes));
    if (r->ort_model_note[0])
        json_object_object_add(o, "ort_model_note", json_object_new_string(r->ort_model_note));
    json_object_object_add(o, "views", json_object_new_int(r->views));
    json_object_object_add(o, "inplace", json_object_new_int(r->inplace));
    json_object_object_add(o, "memory_limit_bytes", opt_i64(r->memory_limit_bytes));
    if (r->memory_limit_bytes >= 0) {
        json_object_object_add(o, "no_limit_peak_bytes", opt_i64(r->no_limit_peak_bytes));
        json_object_object_add(o, "recomputed_tensors", json_object_new_int(r->recomputed_tensors));
        json_object_object_add(o, "recomputed_nodes", json_object_new_int(r->recomputed_nodes));
        json_object_object_add(o, "recompute_extra_flops", json_object_new_int64(r->recompute_extra_flops));
        json_object_object_add(o, "recompute_extra_fraction", json_object_new_double(r->recompute_extra_fraction));
        json_object_object_add(o, "recompute_flops_bound", opt_i64(r->recompute_flops_bound));
        json_object_object_add(o, "recompute_status",
                               json_object_new_string(r->recompute_status ? r->recompute_status : ""));
        json_object_object_add(o, "recompute_method",
                               json_object_new_string(r->recompute_method ? r->recompute_method : ""));
        json_object_object_add(o, "recompute_peak_bound", opt_i64(r->recompute_peak_bound));
    }
    json_object *warnings = json_object_new_array();
    for (int i = 0; warnings && i < r->n_warnings; i++)
        json_object_array_add(warnings, json_object_new_string(r->warnings[i]));
    json_object_object_add(o, "warnings", warnings);
    json_object *unknown = json_object_new_array();
    for (int i = 0; i < r->n_unknown; i++) {
        json_object *u = json_object_new_object();
        json_object_object_add(u, "name", json_object_new_string(r->unknown_names[i]));
        json_object_object_add(u, "reason", json_object_new_string(r->unknown_reasons[i] ? r->unknown_reasons[i] : ""));
        json_object_array_add(unknown, u);
    }
    json_object_object_add(o, "unknown_tensors", unknown);
    const char *text = json_object_to_json_string_ext(
        o, (pretty ? JSON_C_TO_STRING_PRETTY : JSON_C_TO_STRING_PLAIN) | JSON_C_TO_STRING_NOSLASHESCAPE);
    char *copy = text ? strdup(text) : NULL;
    json_object_put(o);
    return copy;
}

olla_status olla_report_write_json(const olla_report *r, const char *path, olla_error *err)
{
    char *text = olla_report_to_json(r, 1);
    if (!text)
        return olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory writing the report");
    size_t n = strlen(text);
    text[n] = '\n'; /* replaces the terminator: written as n + 1 bytes */
    olla_status st = olla_write_file_atomic(path, text, n + 1, err);
    free(text);
    return st;
}
