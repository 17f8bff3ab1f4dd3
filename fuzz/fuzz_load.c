/* olla-onnx fuzz target: model bytes -> load -> graph -> plan.
 * The whole pipeline runs with a tiny time limit; every plan it returns is
 * checked again here against the graph. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/fuzz_common.h"
#include "olla.h"
#include "onnx/olla_graph.h"
#include "onnx/olla_model.h"

/* Every planned tensor lies inside the arena at an aligned offset, and the
 * order is a permutation of the nodes. */
static void check_plan(const olla_model *m, const olla_plan *p, int64_t align)
{
    size_t n = m->proto->graph->n_node;
    if (p->n_nodes < 0 || (size_t)p->n_nodes != n || p->arena_bytes < 0)
        olla_fuzz_fail("load", "the plan does not cover the nodes", NULL);
    unsigned char *seen = calloc(n + 1, 1);
    if (!seen)
        return;
    for (size_t i = 0; i < n; i++) {
        int v = p->order[i];
        if (v < 0 || (size_t)v >= n || seen[v]++)
            olla_fuzz_fail("load", "the order is not a permutation of the nodes", NULL);
    }
    free(seen);
    for (int i = 0; i < p->n_entries; i++) {
        const olla_plan_entry *e = &p->entries[i];
        if (e->offset < 0 || e->bytes < 0 || e->offset % align != 0 || e->offset > p->arena_bytes - e->bytes)
            olla_fuzz_fail("load", "a planned tensor lies outside the arena", NULL);
    }
}

/* The pipeline's options from the bits of flags: unknown sizes allowed
 * (1), alignment 1 rather than 64 (2), the input order kept (4). */
enum { FUZZ_LOAD_UNKNOWN = 1, FUZZ_LOAD_ALIGN_1 = 2, FUZZ_LOAD_KEEP_ORDER = 4, FUZZ_LOAD_FLAGS = 8 };

/* One input under the options of flags. */
static int fuzz_load_with(const uint8_t *data, size_t size, unsigned flags)
{
    olla_error err = {0};
    olla_model *m = NULL;
    olla_status st = olla_model_load_buffer(data, size, "fuzz.onnx", NULL, &m, &err);
    olla_fuzz_status(st, &err, "load");
    if (st != OLLA_OK)
        return 0;
    /* the graph on declared types alone */
    olla_graph *g = NULL;
    olla_error gerr = {0};
    olla_type_source none = {NULL, NULL, NULL};
    st = olla_graph_build(m, &none, &g, &gerr);
    olla_fuzz_status(st, &gerr, "graph");
    olla_graph_free(g);
    /* the pipeline, with unknown sizes allowed so more inputs reach the solvers */
    olla_options opt;
    olla_options_init(&opt);
    opt.time_limit = 0.01;
    opt.verbosity = 0;
    opt.allow_unknown_sizes = (flags & FUZZ_LOAD_UNKNOWN) != 0;
    opt.alignment = (flags & FUZZ_LOAD_ALIGN_1) ? 1 : 64;
    opt.keep_order = (flags & FUZZ_LOAD_KEEP_ORDER) != 0;
    olla_plan *plan = NULL;
    olla_report rep;
    olla_error oerr = {0};
    st = olla_optimize(m, &opt, &plan, &rep, &oerr);
    olla_fuzz_status(st, &oerr, "optimize");
    if (st == OLLA_OK) {
        check_plan(m, plan, opt.alignment);
        /* the order the runtime runs for the written model never peaks above
         * the one it runs for the input (each under the same sharing; the
         * input order's own peak is not that: ONNX Runtime runs the input's
         * listing in an order of its own) */
        if (rep.executed_peak_bytes > rep.input_executed_peak_bytes)
            olla_fuzz_fail("optimize", "the written model's order peaks above the input's as the runtime runs them",
                           NULL);
        char *json = olla_report_to_json(&rep, 0);
        free(json);
        olla_report_clear(&rep);
        olla_plan_free(plan);
    }
    olla_model_free(m);
    return 0;
}

/* The options from the input's size, so that each input keeps its own. */
int olla_fuzz_load(const uint8_t *data, size_t size)
{
    return fuzz_load_with(data, size, (unsigned)(size % FUZZ_LOAD_FLAGS));
}

#ifndef OLLA_FUZZ_NO_ENTRY
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return olla_fuzz_load(data, size);
}
#endif
