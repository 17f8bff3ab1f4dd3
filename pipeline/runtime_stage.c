/* olla-onnx: making the chosen runtime execute a plan.
 *
 * The order stage finds the best order in our memory model. A runtime that
 * follows the file (listed) runs it as written. ONNX Runtime does not: it runs
 * its own depth-first order of the file (passes/runtime/olla_exec_order.h),
 * and the listing only steers it. For ort this stage searches the orders a
 * listing can make ORT run for the one of the fewest bytes, what ORT
 * allocates (ORT's planner, passes/runtime/olla_ort_memory.h) plus our peak,
 * without letting our peak or that sum rise above their figures for ORT's
 * order of the input (nor ORT's figure by more than 0.1%), and writes the
 * listing that makes ORT run it (where that listing would make ORT hold
 * more with its arena on, the search runs again refusing such listings,
 * and the input's listing is written if its listing still would, or if
 * it would make ORT hold 1% less under no setting and more, beyond 0.1%,
 * under some); with
 * PRIORITY_BASED (ort-priority) the listing is the planned order and
 * ORT's Kahn's sort decides the rest. Either way the plan is then made for
 * the order the runtime executes, completed with the ops it does not run
 * (Constants, dropped Casts), so that the offsets and the runtime agree. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx/olla_model.h"
#include "passes/runtime/olla_exec_order.h"
#include "passes/runtime/olla_ort_memory.h"
#include "passes/shapes/olla_shapes.h"
#include "pipeline/olla_pipeline.h"
#include "solver/olla_schedule.h"

/* The cost of an executed order: the bytes ORT allocates for it (when the
 * model of ORT's planner applies) plus our peak, each a byte someone
 * allocates (ORT running the file, a runtime following the plan). Ranking
 * ORT's figure first let a few KiB of its bookkeeping (the memory pattern's
 * table, a step in its size) outweigh a peak hundreds of MiB lower. Orders
 * whose peak would pass peak_cap, or ORT's figure ort_cap, are refused. */
typedef struct {
    const olla_exec_graph *eg;
    const olla_dag *dag;
    olla_ort_memory *ort;             /* NULL: our peak alone */
    olla_shape_table *declared_types; /* the types ORT plans on (ort's subgraphs need them) */
    int64_t peak_cap;                 /* < 0: none */
    int64_t ort_cap;                  /* < 0: none */
    olla_order_judge *judge;          /* NULL: orders of equal cost are not judged */
    /* with arena_caps set, orders for which ORT with its arena on would
     * hold more than arena_first[k] (first run) or arena_steady[k] (over
     * three runs) under setting k (OLLA_ORT_*) are refused too */
    int arena_caps;
    int64_t arena_first[OLLA_ORT_N_SETTINGS], arena_steady[OLLA_ORT_N_SETTINGS];
    int64_t arena_best; /* the least cost of an order that passed them; orders of a higher cost, which
                           the search will not keep, are not replayed */
    int arena_checks;   /* replays left (ARENA_CHECKS); an order that would need one more is refused */
    int *full, *step, *first, *last;  /* scratch */
    int64_t *delta, *live;
    int peak_op;                      /* the op at the peak of the order peak_of() saw last, or -1 */
} exec_cost;

static int64_t peak_of(exec_cost *c, const int *executed)
{
    olla_error err = {0};
    c->peak_op = -1;
    if (olla_exec_complete_order(c->eg, executed, c->full, &err) != OLLA_OK)
        return -1;
    for (int t = 0; t < c->dag->n_nodes; t++)
        c->step[c->full[t]] = t;
    int64_t peak = olla_dag_profile(c->dag, c->step, c->first, c->last, c->delta, c->live);
    int at = 0;
    while (at + 1 < c->dag->n_nodes && c->live[at] < peak)
        at++;
    c->peak_op = c->dag->n_nodes > 0 ? c->full[at] : -1;
    return peak;
}

/* The op at the peak of the order cost_of() saw last (olla_ort_problem's peak_op). */
static int peak_op_of(void *ctx)
{
    return ((exec_cost *)ctx)->peak_op;
}

static int arena_over(exec_cost *c, const int *executed, int n);
/* The search that refuses what the arena would hold more for replays at
 * most this many orders' sessions (two each): where every better order
 * fails, as on an Inception v3 step where any change of order costs the
 * arena a region, it would replay every order it tries. */
#define ARENA_CHECKS 256

static int64_t cost_of(void *ctx, const int *executed, int n)
{
    exec_cost *c = ctx;
    int64_t peak = peak_of(c, executed);
    if (peak < 0 || (c->peak_cap >= 0 && peak > c->peak_cap))
        return INT64_MAX / 2;
    if (!c->ort)
        return peak;
    olla_ort_memory_result res;
    olla_error err = {0};
    if (olla_ort_memory_eval(c->ort, executed, n, &res, &err) != OLLA_OK ||
        (c->ort_cap >= 0 && res.peak_bytes > c->ort_cap))
        return INT64_MAX / 2;
    int64_t cost = res.peak_bytes + peak;
    if (c->arena_caps && cost <= c->arena_best) {
        if (c->arena_checks <= 0 || (c->arena_checks--, arena_over(c, executed, n)))
            return INT64_MAX / 2;
        c->arena_best = cost;
    }
    return cost;
}

/* The judge's score of an executed order (olla_order_judge_score of the
 * whole order), or -1. */
static int64_t judge_executed(void *ctx, const int *executed, int n)
{
    exec_cost *c = ctx;
    olla_error err = {0};
    (void)n;
    if (olla_exec_complete_order(c->eg, executed, c->full, &err) != OLLA_OK)
        return -1;
    return olla_order_judge_score(c->judge, c->full);
}

static olla_status cost_init(exec_cost *c, const olla_exec_graph *eg, const olla_dag *dag, olla_error *err)
{
    size_t n = (size_t)dag->n_nodes + 1, nt = (size_t)dag->n_tensors + 1;
    memset(c, 0, sizeof *c);
    c->eg = eg;
    c->dag = dag;
    c->peak_cap = c->ort_cap = -1;
    c->peak_op = -1;
    c->full = malloc(n * sizeof(int));
    c->step = malloc(n * sizeof(int));
    c->first = malloc(nt * sizeof(int));
    c->last = malloc(nt * sizeof(int));
    c->delta = malloc(n * sizeof(int64_t));
    c->live = malloc(n * sizeof(int64_t));
    if (!c->full || !c->step || !c->first || !c->last || !c->delta || !c->live)
        return olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory choosing the runtime's order");
    return OLLA_OK;
}

static void cost_free(exec_cost *c)
{
    free(c->full);
    free(c->step);
    free(c->first);
    free(c->last);
    free(c->delta);
    free(c->live);
    olla_ort_memory_free(c->ort);
    olla_shape_table_free(c->declared_types);
}

/* The model of ORT's planner needs the static shapes ORT plans on: the
 * file's, with symbolic dims kept as names. Fails (and the search then
 * judges orders by our peak alone) where the model cannot size a value.
 * It counts what the process of onnxruntime-node holds: blocks of 4 KiB and
 * more, the run's bookkeeping, the binding's copies of the outputs; with the
 * types of both (sized, those g was built from), the subgraphs of If, Loop
 * and Scan too. The declared types stay in c for the subgraphs' models. */
static olla_status ort_memory_for(exec_cost *c, const olla_graph *g, const olla_shape_table *sized_types,
                                  olla_error *err)
{
    olla_shape_options so = {0};
    olla_graph *declared = NULL;
    olla_ort_memory_options mo = olla_ort_memory_measured();
    olla_status st = olla_infer_shapes(g->model->proto, &so, &c->declared_types, err);
    olla_type_source src = olla_shape_type_source(c->declared_types);
    if (st == OLLA_OK)
        st = olla_graph_build(g->model, &src, &declared, err);
    mo.sized_types = sized_types;
    mo.declared_types = sized_types ? c->declared_types : NULL;
    if (st == OLLA_OK)
        st = olla_ort_memory_new(g, declared, &mo, &c->ort, err);
    olla_graph_free(declared);
    return st;
}

/* ORT's memory settings as olla.h numbers them. */
static const olla_ort_settings SETTINGS[OLLA_ORT_N_SETTINGS] = {
    [OLLA_ORT_ARENA_OFF] = {0, 0, 1, 3},
    [OLLA_ORT_ARENA_OFF_NO_PATTERN] = {0, 0, 0, 3},
    [OLLA_ORT_DEFAULTS] = {1, 0, 1, 3},
    [OLLA_ORT_ARENA_NO_PATTERN] = {1, 0, 0, 3},
};

/* 1 when ORT with its arena on (its defaults, and the memory pattern off)
 * would hold more for the executed order than c's arena caps allow. */
static int arena_over(exec_cost *c, const int *executed, int n)
{
    static const int ON[] = {OLLA_ORT_DEFAULTS, OLLA_ORT_ARENA_NO_PATTERN};
    for (size_t e = 0; e < sizeof ON / sizeof *ON; e++) {
        int k = ON[e];
        olla_ort_session_result sr;
        olla_error err = {0};
        if (olla_ort_memory_session(c->ort, executed, n, &SETTINGS[k], &sr, &err) != OLLA_OK ||
            sr.first_run_bytes > c->arena_first[k] || sr.peak_bytes > c->arena_steady[k])
            return 1;
    }
    return 0;
}

/* Why ORT's figures are not given: the first reason found is kept. */
static void note(olla_runtime_outcome *out, const char *why)
{
    if (!out->ort_model_note[0])
        snprintf(out->ort_model_note, sizeof out->ort_model_note, "%s", why);
}

/* ORT's figures for one executed order under every memory setting; side 0
 * the input, 1 the written model. */
static void setting_figures(exec_cost *c, const int *executed, int n, int side, olla_runtime_outcome *out)
{
    for (int k = 0; k < OLLA_ORT_N_SETTINGS; k++) {
        olla_ort_setting_figures *f = &out->settings[k];
        f->arena = SETTINGS[k].arena;
        f->mem_pattern = SETTINGS[k].mem_pattern;
        olla_ort_session_result sr;
        olla_error err = {0};
        int ok = c->ort && !out->ort_model_note[0] &&
                 olla_ort_memory_session(c->ort, executed, n, &SETTINGS[k], &sr, &err) == OLLA_OK;
        if (c->ort && !ok && err.message[0])
            note(out, err.message);
        *(side ? &f->first_run_bytes : &f->input_first_run_bytes) = ok ? sr.first_run_bytes : -1;
        *(side ? &f->steady_bytes : &f->input_steady_bytes) = ok ? sr.peak_bytes : -1;
    }
}

/* The order in->runtime executes for a listing (into executed), our peak
 * for it and ORT's figure: into out's input side (side 0:
 * input_executed_peak_bytes, input_ort_allocated_bytes) or the written
 * model's (side 1: executed_peak_bytes, ort_allocated_bytes); ORT's figures
 * under every setting on both sides. */
static olla_status figures(const olla_runtime_input *in, exec_cost *c, const int *listing, int *executed, int side,
                           olla_runtime_outcome *out, olla_error *err)
{
    int64_t *peak = side ? &out->executed_peak_bytes : &out->input_executed_peak_bytes;
    int64_t *ort_bytes = side ? &out->ort_allocated_bytes : &out->input_ort_allocated_bytes;
    int n_executed = 0;
    olla_status st = olla_exec_order_of(c->eg, in->runtime, listing, executed, &n_executed, err);
    if (st != OLLA_OK)
        return st;
    if ((*peak = peak_of(c, executed)) < 0)
        return olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory evaluating the runtime's order");
    *ort_bytes = -1;
    olla_ort_memory_result res;
    olla_error oerr = {0};
    if (c->ort && olla_ort_memory_eval(c->ort, executed, n_executed, &res, &oerr) != OLLA_OK) {
        note(out, oerr.message);
    } else if (c->ort && res.n_subgraph_ops > 0 && !res.subgraphs_counted) {
        char why[sizeof out->ort_model_note];
        snprintf(why, sizeof why, "the model of ONNX Runtime's planner cannot count a subgraph: %s",
                 olla_ort_memory_note(c->ort));
        note(out, why);
    }
    if (c->ort && !out->ort_model_note[0])
        *ort_bytes = res.peak_bytes;
    setting_figures(c, executed, n_executed, side, out);
    return OLLA_OK;
}

/* ORT's figure for the written model may pass the input's by 1 / ORT_SLACK
 * of it (a few KiB of bookkeeping on a training step), no more. */
#define ORT_SLACK 1000

/* The most the written model may hold where the input holds input bytes. */
static int64_t slack_cap(int64_t input)
{
    return input + input / ORT_SLACK;
}

/* ort: the search among the orders ORT can be made to run, judged by what
 * ORT allocates plus our peak, never above the input's peak or sum, nor
 * ORT's figure above the input's beyond ORT_SLACK;
 * the input listing when the search cannot run (--keep-order, or it
 * failed: out of memory, or a listing whose constraints are cyclic). */
static olla_status steer_ort(const olla_runtime_input *in, exec_cost *c, const int *input_listing, int *listing,
                             int *executed, olla_runtime_outcome *out, olla_error *err)
{
    int n = in->g->n_ops;
    olla_ort_search_result sr;
    olla_ort_search_options so = {in->search_budget, in->deadline, -1, 1};
    olla_error serr = {0};
    c->peak_cap = out->input_executed_peak_bytes;
    c->ort_cap = out->input_ort_allocated_bytes < 0 ? -1
                 : slack_cap(out->input_ort_allocated_bytes);
    if (in->peak_limit >= 0 && in->peak_limit < c->peak_cap)
        c->peak_cap = in->peak_limit;
    olla_ort_problem p = {c->eg,     input_listing,          in->target, cost_of, c, in->alternatives,
                          in->n_alternatives, c->judge ? judge_executed : NULL, c, peak_op_of};
    if (!in->keep_listing && olla_schedule_for_ort(&p, &so, listing, executed, &sr, &serr) == OLLA_OK) {
        out->search = sr.kept_input                               ? "input kept"
                      : sr.target_runs && !sr.judge_chose_tie ? "plan runs"
                                                                : sr.stopped_by;
        out->judged = sr.judged;
        out->chose_other = sr.judge_chose_tie;
        return OLLA_OK;
    }
    memcpy(listing, input_listing, (size_t)n * sizeof(int));
    out->search = in->keep_listing ? "kept" : "search failed";
    int n_exec = 0;
    return olla_exec_order_of(c->eg, OLLA_RUNTIME_ORT, listing, executed, &n_exec, err);
}

/* What ORT's planner allocates for an executed order (0 when it is not
 * modelled: every order the same), or -1 when it cannot say. */
static int64_t ort_bytes(exec_cost *c, const int *executed, int n)
{
    olla_ort_memory_result res;
    olla_error err = {0};
    if (!c->ort)
        return 0;
    return olla_ort_memory_eval(c->ort, executed, n, &res, &err) == OLLA_OK ? res.peak_bytes : -1;
}

/* Candidate k of the listings to judge: the target, then the alternatives. */
static const int *candidate_listing(const olla_runtime_input *in, int k)
{
    return k ? in->alternatives + (size_t)(k - 1) * (size_t)in->g->n_ops : in->target;
}

/* The target and its alternatives as the runtime executes them (whole
 * orders; for ort-priority only those ORT allocates no more for than the
 * target), at most OLLA_ORDER_JUDGE_MAX, judged: the listing chosen (the
 * target when nothing is judged). */
static const int *judged_target(const olla_runtime_input *in, exec_cost *c, int *executed,
                                olla_runtime_outcome *out)
{
    size_t n = (size_t)in->g->n_ops;
    int *full = in->judge && in->n_alternatives > 0 ? malloc(OLLA_ORDER_JUDGE_MAX * (n + 1) * sizeof(int)) : NULL;
    int from[OLLA_ORDER_JUDGE_MAX], m = 0, ok = full != NULL, n_exec = 0;
    int64_t first_bytes = 0;
    olla_error err = {0};
    for (int k = 0; ok && k <= in->n_alternatives && m < OLLA_ORDER_JUDGE_MAX; k++) {
        int *f = full + (size_t)m * n;
        if (in->runtime == OLLA_RUNTIME_LISTED) {
            memcpy(f, candidate_listing(in, k), n * sizeof(int));
        } else {
            ok = olla_exec_order_of(c->eg, in->runtime, candidate_listing(in, k), executed, &n_exec, &err) == OLLA_OK &&
                 olla_exec_complete_order(c->eg, executed, f, &err) == OLLA_OK;
            int64_t bytes = ok ? ort_bytes(c, executed, n_exec) : -1;
            ok = k > 0 || bytes >= 0; /* the target's unknown: judge nothing */
            first_bytes = k ? first_bytes : bytes;
            if (k > 0 && (bytes < 0 || bytes > first_bytes))
                continue; /* ORT would allocate more */
        }
        from[m++] = k;
    }
    int pick = ok && m > 1 ? olla_order_judge_pick(in->judge, full, full + n, m - 1) : 0;
    free(full);
    out->judged = olla_order_judge_count(in->judge);
    out->chose_other = pick > 0;
    return candidate_listing(in, pick ? from[pick] : 0);
}

/* A figure of the written side above the input's beyond ORT_SLACK (both
 * known). */
static int above(int64_t input, int64_t written)
{
    return input >= 0 && written >= 0 && written > slack_cap(input);
}

/* 1 when ORT would hold more for the written listing than for the input's
 * with its arena on (its default; with the memory pattern on or off), on
 * the first run or over three runs: the arena's regions and the pattern's
 * block magnify a change of order that the search's figure (arena off,
 * first run) does not show, and an increase there is what a user running
 * ORT's defaults would pay. *worst gets the largest increase relative to
 * the input's figure. With the arena off, the search holds the first run
 * within ORT_SLACK; the pattern's second run is reported, and refused only
 * where the listing saves at least 1% under no setting (dominated). */
static int holds_more(const olla_runtime_outcome *out, olla_ort_increase *worst)
{
    double most = 0.0;
    for (int k = 0; k < OLLA_ORT_N_SETTINGS; k++) {
        const olla_ort_setting_figures *f = &out->settings[k];
        for (int steady = 0; steady < 2 && f->arena; steady++) {
            int64_t in = steady ? f->input_steady_bytes : f->input_first_run_bytes;
            int64_t wr = steady ? f->steady_bytes : f->first_run_bytes;
            double by = in > 0 ? (double)(wr - in) / (double)in : 0.0;
            if (above(in, wr) && by > most) {
                most = by;
                *worst = (olla_ort_increase){k, steady, in, wr};
            }
        }
    }
    return most > 0.0;
}

/* A figure of the written side at least this fraction below the input's
 * is a saving a listing is kept for (olla_ort_listing_dominated). */
#define ORT_SAVING_KEPT 0.01

int olla_ort_listing_dominated(const olla_ort_setting_figures *settings, olla_ort_increase *worst)
{
    double most = 0.0;
    for (int k = 0; k < OLLA_ORT_N_SETTINGS; k++) {
        const olla_ort_setting_figures *f = &settings[k];
        for (int steady = 0; steady < 2; steady++) {
            int64_t in = steady ? f->input_steady_bytes : f->input_first_run_bytes;
            int64_t wr = steady ? f->steady_bytes : f->first_run_bytes;
            if (in < 0 || wr < 0)
                continue;
            if (wr < in && (double)wr <= (1.0 - ORT_SAVING_KEPT) * (double)in)
                return 0;
            double by = in > 0 ? (double)(wr - in) / (double)in : 1.0;
            if (above(in, wr) && by > most) {
                most = by;
                *worst = (olla_ort_increase){k, steady, in, wr};
            }
        }
    }
    return most > 0.0;
}

/* ort-priority: ORT follows the listing but for Shape and Size, which run as
 * soon as they can; the input listing when that would peak higher. */
static olla_status steer_priority(const olla_runtime_input *in, exec_cost *c, const int *input_listing,
                                  int *listing, int *executed, olla_runtime_outcome *out, olla_error *err)
{
    int n = in->g->n_ops, n_exec = 0;
    memcpy(listing, judged_target(in, c, executed, out), (size_t)n * sizeof(int));
    olla_status st = olla_exec_order_of(c->eg, in->runtime, listing, executed, &n_exec, err);
    out->search = "listed";
    if (st == OLLA_OK && peak_of(c, executed) > out->input_executed_peak_bytes) {
        memcpy(listing, input_listing, (size_t)n * sizeof(int));
        st = olla_exec_order_of(c->eg, in->runtime, listing, executed, &n_exec, err);
        out->search = "input kept";
    }
    return st;
}

olla_status olla_stage_runtime(const olla_runtime_input *in, int *listing, int *order, olla_runtime_outcome *out,
                               olla_error *err)
{
    const olla_graph *g = in->g;
    int n = g->n_ops;
    memset(out, 0, sizeof *out);
    out->input_ort_allocated_bytes = out->ort_allocated_bytes = -1;
    out->held_more_setting = -1;
    out->held_more_input_bytes = out->held_more_bytes = -1;
    out->arena_searched = 0;
    for (int k = 0; k < OLLA_ORT_N_SETTINGS; k++)
        out->settings[k] = (olla_ort_setting_figures){SETTINGS[k].arena, SETTINGS[k].mem_pattern, -1, -1, -1, -1};
    out->search = "none";
    if (in->runtime == OLLA_RUNTIME_LISTED) {
        const int *chosen = judged_target(in, NULL, NULL, out);
        memcpy(listing, chosen, (size_t)n * sizeof(int));
        memcpy(order, chosen, (size_t)n * sizeof(int));
        return OLLA_OK;
    }
    const olla_exec_graph *eg = in->eg;
    exec_cost c;
    int *executed = malloc(((size_t)n + 1) * sizeof(int)), *input_listing = malloc(((size_t)n + 1) * sizeof(int));
    olla_status st = cost_init(&c, eg, in->dag, err);
    c.judge = in->judge;
    if (st == OLLA_OK && (!executed || !input_listing))
        st = olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory choosing the runtime's order");
    for (int i = 0; st == OLLA_OK && i < n; i++)
        input_listing[i] = i;
    olla_error oerr = {0};
    if (st == OLLA_OK && ort_memory_for(&c, g, in->types, &oerr) != OLLA_OK)
        note(out, oerr.message);
    if (st == OLLA_OK)
        st = figures(in, &c, input_listing, executed, 0, out, err);
    if (st == OLLA_OK && in->input_executed)
        st = olla_exec_complete_order(eg, executed, in->input_executed, err);
    if (st == OLLA_OK)
        st = in->runtime == OLLA_RUNTIME_ORT ? steer_ort(in, &c, input_listing, listing, executed, out, err)
                                             : steer_priority(in, &c, input_listing, listing, executed, out, err);
    if (st == OLLA_OK)
        st = figures(in, &c, listing, executed, 1, out, err);
    /* where the chosen listing would make ORT hold more with its arena on:
     * for ort, the search again, refusing such listings (each candidate
     * then also replays two sessions); then, or for ort-priority, the
     * input's listing if that still holds more. Not where the input's
     * order passes a memory limit. (The plan's own order as the listing
     * was tried too: on 18 traced training steps ORT ran it as it runs the
     * input's.) Then the input's listing too where the chosen one would make
     * ORT hold more under some setting and 1% less under none. The report
     * gives the increase of the listing found first. */
    olla_ort_increase first = {-1, 0, -1, -1}, again, worse;
    int judged = st == OLLA_OK && !in->keep_listing && !out->ort_model_note[0] &&
                 (in->peak_limit < 0 || out->input_executed_peak_bytes <= in->peak_limit);
    int more = judged && holds_more(out, &first);
    if (more && in->runtime == OLLA_RUNTIME_ORT) {
        for (int k = 0; k < OLLA_ORT_N_SETTINGS; k++) {
            const olla_ort_setting_figures *f = &out->settings[k];
            c.arena_first[k] = slack_cap(f->input_first_run_bytes);
            c.arena_steady[k] = slack_cap(f->input_steady_bytes);
        }
        c.arena_caps = 1;
        c.arena_best = INT64_MAX;
        c.arena_checks = ARENA_CHECKS;
        st = steer_ort(in, &c, input_listing, listing, executed, out, err);
        if (st == OLLA_OK)
            st = figures(in, &c, listing, executed, 1, out, err);
        out->arena_searched = 1;
        more = st == OLLA_OK && holds_more(out, &again);
    }
    /* a listing that saves at least 1% nowhere in ORT and costs somewhere is not kept */
    if (judged && st == OLLA_OK && !more && olla_ort_listing_dominated(out->settings, &worse)) {
        more = 1;
        if (first.setting < 0)
            first = worse;
    }
    if (more) {
        int n_exec = 0;
        memcpy(listing, input_listing, (size_t)n * sizeof(int));
        st = olla_exec_order_of(eg, in->runtime, listing, executed, &n_exec, err);
        if (st == OLLA_OK)
            st = figures(in, &c, listing, executed, 1, out, err);
        out->search = "held more";
        out->chose_other = 0;
    }
    out->held_more_setting = first.setting;
    out->held_more_steady = first.steady;
    out->held_more_input_bytes = first.input_bytes;
    out->held_more_bytes = first.bytes;
    if (out->ort_model_note[0]) /* a reason found late voids both sides */
        out->input_ort_allocated_bytes = out->ort_allocated_bytes = -1;
    for (int k = 0; out->ort_model_note[0] && k < OLLA_ORT_N_SETTINGS; k++)
        out->settings[k].input_first_run_bytes = out->settings[k].first_run_bytes =
            out->settings[k].input_steady_bytes = out->settings[k].steady_bytes = -1;
    if (st == OLLA_OK)
        st = olla_exec_complete_order(eg, executed, order, err);
    cost_free(&c);
    free(executed);
    free(input_listing);
    return st;
}
