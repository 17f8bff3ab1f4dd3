/* olla-onnx: the planning pipeline's stages as olla_optimize() runs them:
 * checks on the graph, the order, the placement of the buffers. */
#ifndef OLLA_PIPELINE_H
#define OLLA_PIPELINE_H

#include "olla.h"
#include "onnx/olla_graph.h"
#include "passes/analysis/olla_dag.h"
#include "passes/analysis/olla_graph_dag.h"
#include "solver/olla_remat.h"
#include "util/olla_log.h"

/* Where opt's diagnostics go: opt->log, with the levels opt->verbosity
 * asks for, at most max_level. */
olla_logger olla_options_logger(const olla_options *opt, int max_level);

/* What a graph must satisfy before planning: no planned tensor waits on an
 * unbound symbolic dimension, none of unknown size (unless allowed), no size
 * overflowing 64 bits, all of them together below 2^61 bytes. A size that
 * waits on graph inputs is an error naming them and the flags that give
 * their shapes (olla_shape_size_advice over types, the graph's own). */
struct olla_shape_table;
olla_status olla_pipeline_check_graph(const olla_graph *g, const struct olla_shape_table *types,
                                      int allow_unknown_sizes, int64_t align, olla_error *err);

typedef struct olla_order_result {
    int64_t peak_bytes;
    int64_t heuristic_peak_bytes; /* best of the fast heuristics */
    int64_t lower_bound_bytes;    /* -1 when not computed */
    const char *status;
    const char *stopped_by;       /* "proof", "budget", "time" (olla_schedule_result) or "kept" */
    int *alternatives;            /* in: NULL, or room for max_alternatives orders of n_nodes */
    int max_alternatives;         /* in */
    int n_alternatives;           /* out: other orders found at the same peak (olla_schedule) */
} olla_order_result;

/* Fills order (n_nodes) with an order whose peak is never above
 * input_order's, and res->alternatives with other orders of that peak. */
olla_status olla_stage_order(const olla_dag *dag, const int *input_order, const olla_options *opt, int *order,
                             olla_order_result *res, olla_error *err);

typedef struct olla_place_input {
    const olla_dag *dag;
    const int *first, *last;      /* lifetimes of the DAG tensors, inclusive steps */
    const unsigned char *applied; /* the in-place candidates that apply under the order (dag->n_inplace), or NULL */
    int64_t alignment;
    double time_limit;            /* seconds left for placement (a safety net); <= 0: none */
    long long work_limit;         /* the work budget in units; <= 0: OLLA_PLACEMENT_DEFAULT_WORK */
    const olla_options *opt;
} olla_place_input;

typedef struct olla_place_outcome {
    int64_t arena_bytes;
    const char *status;
    const char *stopped_by;       /* olla_place_stop_name: "none", "budget", "time" */
    long long work;               /* work units spent */
} olla_place_outcome;

/* Places buffers. A DAG tensor of bytes > 0 and the tensors that take its
 * buffer in place, one after the other, form one buffer, live from the
 * first one's first step to the last one's last step. Fills offset (one per
 * DAG tensor; tensors of 0 bytes get 0), holder (per DAG tensor: the tensor
 * that owns its buffer, itself when it owns one) and the buffer's lifetime in
 * buf_first/buf_last (per DAG tensor, read at owners). */
olla_status olla_stage_place(const olla_place_input *in, int64_t *offset, int *holder, int *buf_first, int *buf_last,
                             olla_place_outcome *out, olla_error *err);

/* The same placed by the heuristic portfolio alone (no search, no clock,
 * quiet): what olla_stage_place's first phase reaches, and all of it when
 * that is max live (out->status "optimal"); in->time_limit is not used. */
olla_status olla_stage_place_heuristic(const olla_place_input *in, int64_t *offset, int *holder, int *buf_first,
                                       int *buf_last, olla_place_outcome *out, olla_error *err);

/* Choosing among orders of equal peak by how well their lifetimes pack
 * (pipeline/order_choice.c). The peak says nothing of fragmentation: two
 * orders of one peak can give the placement heuristics arenas a few
 * percent apart, and then the exact placement search must close the gap
 * (seconds) or cannot. A judge scores an order of the DAG's nodes by the
 * heuristic portfolio's arena (olla_stage_place_heuristic): the first order
 * it scores sets the reference peak; an order that peaks above it scores
 * -1, another the arena's excess over the reference (0 when the
 * heuristics pack it at the reference peak: nothing beats it, and the
 * judge keeps that placement for olla_order_judge_placed). */
typedef struct olla_order_judge olla_order_judge;
olla_status olla_order_judge_new(const olla_dag *dag, int64_t alignment, const olla_options *opt,
                                 olla_order_judge **out, olla_error *err);
int64_t olla_order_judge_score(olla_order_judge *j, const int *order);
/* Of first and the n_others orders after it (each n_nodes), the first of
 * the lowest score: 0 for first, k + 1 for others' k-th. At most
 * OLLA_ORDER_JUDGE_MAX orders are scored, in turn, until one scores 0. */
#define OLLA_ORDER_JUDGE_MAX 4
int olla_order_judge_pick(olla_order_judge *j, const int *first, const int *others, int n_others);
/* Orders scored so far. */
int olla_order_judge_count(const olla_order_judge *j);
/* 1 when order (n_nodes) is the order the judge packed at its peak: its
 * placement as olla_stage_place gives it (offsets, owners and buffer
 * lifetimes per DAG tensor, out) is copied out, and placing it again would
 * give the same; else 0. */
int olla_order_judge_placed(const olla_order_judge *j, const int *order, int64_t *offset, int *holder,
                            int *buf_first, int *buf_last, olla_place_outcome *out);
void olla_order_judge_free(olla_order_judge *j);

/* Making the chosen runtime execute the plan (pipeline/runtime_stage.c). */
struct olla_exec_graph;
typedef struct olla_runtime_input {
    const olla_graph *g;
    const struct olla_shape_table *types; /* the types g was built from, subgraphs included (If, Loop
                                             and Scan are modelled for ORT with them); NULL: not modelled */
    const struct olla_exec_graph *eg; /* the graph as the runtime runs it; NULL for listed */
    const olla_dag *dag;  /* the graph's DAG under the sharing rules: our peak */
    int runtime;          /* olla_runtime (passes/runtime/olla_exec_order.h) */
    const int *target;    /* the planned order, n_ops op indices */
    int keep_listing;     /* 1: write the input listing (--keep-order) */
    long search_budget;   /* evaluations for the ort search; <= 0: its default */
    double deadline;      /* a safety net (olla_now()); <= 0: none */
    int64_t peak_limit;   /* the executed order must peak at most this (a memory limit); < 0: none */
    int *input_executed;  /* n_ops, or NULL: receives the order the runtime executes for the input
                             listing (the ops it does not run placed where needed); not for listed */
    const int *alternatives; /* n_alternatives more orders (n_ops each) of the target's peak */
    int n_alternatives;
    olla_order_judge *judge; /* NULL, or how to choose among orders of equal cost */
} olla_runtime_input;

typedef struct olla_runtime_outcome {
    int64_t input_executed_peak_bytes; /* our peak of the order the runtime runs for the input */
    int64_t executed_peak_bytes;       /* ... for the written listing */
    int64_t input_ort_allocated_bytes; /* ORT's planner for those two orders; -1 when not modelled */
    int64_t ort_allocated_bytes;
    olla_ort_setting_figures settings[OLLA_ORT_N_SETTINGS]; /* ORT under each memory setting (olla.h) */
    const char *search;                /* how the listing was chosen */
    int judged;                        /* orders of equal cost the judge scored (0: none) */
    int chose_other;                   /* 1: the judge chose another order than the search's first */
    char ort_model_note[1024];         /* why ORT's planner could not be modelled, or "" */
    int held_more_setting, held_more_steady; /* the report's held_more_* */
    int64_t held_more_input_bytes, held_more_bytes;
    int arena_searched; /* 1: the search ran again refusing listings ORT would hold more for with its
                           arena on, and its listing is written (the report's arena_searched) */
} olla_runtime_outcome;

/* How much more ONNX Runtime would hold for the written listing than for
 * the input's: under setting (OLLA_ORT_*), on the first run (steady 0) or
 * over three runs (1), input_bytes -> bytes. */
typedef struct olla_ort_increase {
    int setting, steady;
    int64_t input_bytes, bytes;
} olla_ort_increase;

/* 1 when the written listing would make ORT hold 1% less under no setting
 * (settings[OLLA_ORT_N_SETTINGS]), on no run, and more than 0.1% more
 * under some (every figure known on both sides compared; -1 is unknown):
 * the input's listing is then within 1% everywhere and better there, and
 * olla_stage_runtime writes it. (On the traced ResNet-50 at batch 1, every
 * figure but one was the input's, and that one, the arena off with the
 * memory pattern over three runs, 21% above it; on ResNet-34 at batch 1,
 * 0.6-0.9% less with the arena on and 19.6% more there. That figure is
 * reported, not searched on.) *worst gets the largest increase relative
 * to the input's figure. */
int olla_ort_listing_dominated(const olla_ort_setting_figures *settings, olla_ort_increase *worst);

/* Fills listing (n_ops op indices: the graph.node order to write) and order
 * (n_ops: the order the runtime executes it, the ops it does not run placed
 * where they are needed; the plan is made for it). listed: both are the
 * target. ort: the listing ORT runs with the least allocation found, never
 * peaking above ORT's order of the input. ort-priority: the target as the
 * listing, or the input when that peaks higher. */
olla_status olla_stage_runtime(const olla_runtime_input *in, int *listing, int *order, olla_runtime_outcome *out,
                               olla_error *err);

/* The report's saving_* fields from its figures (pipeline/report.c). */
void olla_report_set_saving(olla_report *r);

/* Recomputation under a memory limit (pipeline/remat_stage.c). */
typedef struct olla_remat_input {
    const olla_graph *g;
    const olla_dag *dag;              /* the graph's DAG under the sharing rules, of what the runtime runs */
    const olla_graph_dag_map *map;
    const olla_runtime_view *view;    /* NULL: the file's graph */
    const int *order;                 /* n_ops: the order the runtime executes (the base of the search) */
    int64_t limit;
    long budget;                      /* work units; <= 0: the default */
    double deadline;                  /* a safety net (olla_now()); <= 0: none */
    int find_smallest;                /* also search the smallest peak reachable (res.smallest_peak) */
    int plan_only;                    /* 1: find the plan, write no model */
} olla_remat_input;

typedef struct olla_remat_stage_result {
    olla_remat_result res;
    olla_model *model;       /* the model with the copies, in the plan's order (owned; NULL when nothing is
                                recomputed or nothing fits) */
    int copies;              /* nodes added */
    int recomputed_tensors;  /* distinct tensors some reader reads from a copy */
    double extra_cost;       /* estimated cost of the copies (olla_node_cost) */
    double total_cost;       /* of every node of the input once */
    int64_t planned_peak;    /* the plan's peak in the order of its runs */
} olla_remat_stage_result;

/* The problem the stage poses: the arrays behind it and the problem
 * itself (for benchmarks and tools that run the solver themselves). */
typedef struct olla_remat_posed {
    olla_remat_problem problem;
    double *cost;
    unsigned char *copyable, *keep, *omittable, *mutated;
    int *buffer;
    double total_cost; /* of every node once */
} olla_remat_posed;
olla_status olla_remat_pose(const olla_remat_input *in, olla_remat_posed *out, olla_error *err);
void olla_remat_posed_free(olla_remat_posed *posed);

/* The remat stage of a model as olla_optimize poses it under a limit: the
 * plan made without one (its graph, DAG and the order the runtime executes
 * for it), and the problem posed on it (with limit 0: set it). */
typedef struct olla_remat_setup olla_remat_setup;
olla_status olla_remat_setup_model(const olla_model *m, const olla_options *opt, olla_remat_setup **out,
                                   olla_error *err);
const olla_remat_posed *olla_remat_setup_posed(const olla_remat_setup *s);
int64_t olla_remat_setup_peak(const olla_remat_setup *s); /* of the plan made without a limit */
void olla_remat_setup_free(olla_remat_setup *s);

/* Finds the cheapest plan under in->limit that recomputes tensors, and
 * writes it as a model (out->model) whose listing is the plan's order. */
olla_status olla_stage_remat(const olla_remat_input *in, olla_remat_stage_result *out, olla_error *err);

#endif
