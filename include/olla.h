/* olla-onnx: reorder an ONNX model's nodes to minimise peak live memory and
 * give every planned tensor a static offset in one arena.
 *
 *   olla_model_load()  -> olla_optimize() -> olla_write_model()
 *
 * A planned tensor is every tensor a node produces (graph outputs included)
 * whose size is known. Graph inputs and initializers belong to the caller.
 *
 * Processes, threads and global state:
 * - One call at a time per process. The stop request (olla_stop_requested)
 *   and the record of the files olla_write_model() is writing or has written
 *   (olla_write_abandon(), olla_write_forget()) are process-wide, and a few
 *   calls keep scratch buffers in static storage. A host that plans several
 *   models at once uses processes, as `olla-onnx batch` does (the Python
 *   package holds a lock around each call).
 * - A time limit counts the process's CPU time as well as the wall clock,
 *   from the start of the call (a process-wide record), with a hard stop at
 *   10 times the limit on the wall clock.
 * - With a time limit, each ILP solve (CBC) runs in a child process the call
 *   fork()s and reaps before it returns, killed at its deadline; stdout and
 *   stderr are flushed first. The child ends with _exit().
 * - The placement's exact search runs on two threads that the call starts
 *   and joins before it returns; they start with every signal blocked, so
 *   signals and their handlers stay the calling thread's.
 * - The library prints nothing (olla_options.log, olla_error.h) and installs
 *   no signal handler. */
#ifndef OLLA_H
#define OLLA_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "olla_bindings.h"
#include "olla_error.h"
#include "olla_plan.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A loaded model (opaque). */
typedef struct olla_model olla_model;

/* Reads and validates a model file: protobuf well-formed, a graph present,
 * external data references safe and present (never read). */
OLLA_API olla_status olla_model_load(const char *path, olla_model **out, olla_error *err);
/* The same from a serialized ModelProto in memory (copied; data may go
 * once this returns). name is what messages and the report call the model
 * (NULL: "<memory>"); dir is the folder its external data is relative to,
 * or NULL: then a model that references external data is an error. */
OLLA_API olla_status olla_model_load_bytes(const void *data, size_t len, const char *name, const char *dir,
                                           olla_model **out, olla_error *err);
OLLA_API void olla_model_free(olla_model *m);

/* The main graph as the model lists it, for a host that executes a plan
 * without an ONNX reader of its own (the example runtime olla-arena-exec).
 * Strings are borrowed from the model: valid until olla_model_free(). */
OLLA_API size_t olla_model_node_count(const olla_model *m);
/* Node i of graph.node: returns its op_type and gives its input and output
 * names ("" for an optional one left out); NULL when i is out of range. */
OLLA_API const char *olla_model_node(const olla_model *m, size_t i, size_t *n_inputs, const char *const **inputs,
                                     size_t *n_outputs, const char *const **outputs);
OLLA_API size_t olla_model_output_count(const olla_model *m);
/* The name of graph output i, or NULL when i is out of range. */
OLLA_API const char *olla_model_output_name(const olla_model *m, size_t i);

/* Progress of a long run: the phase ("shapes", "graph", "ordering",
 * "placement", "checking"), seconds since the start, and for the solver
 * phases the best peak or arena so far and the proven bound (-1 unknown). */
typedef void (*olla_progress_fn)(void *ctx, const char *phase, double elapsed, int64_t best, int64_t bound);

/* --memory-limit: the written model's peak, in the memory model and the
 * execution order the plan is made for (olla_options.sharing, .runtime),
 * must be at most the limit; activations are recomputed (their producers
 * copied into the graph) to get there. Both fields 0: no limit. */
typedef struct olla_memory_limit {
    int64_t bytes;   /* > 0: the limit in bytes */
    double fraction; /* in (0, 1]: this fraction of the peak the plan reaches without a limit */
} olla_memory_limit;

/* Reads a limit as the command line takes it: bytes ("123456"), with a
 * K/M/G suffix (powers of 1000) or Ki/Mi/Gi (powers of 1024) after a whole
 * or decimal number ("1.5Gi"), or a percentage of the no-limit peak ("60%",
 * above 0 and at most 100). OLLA_ERR_USAGE with a one-line message for
 * anything else: empty, not a number, 0, negative, over 100%, a size that
 * overflows 64 bits. */
OLLA_API olla_status olla_memory_limit_parse(const char *text, olla_memory_limit *out, olla_error *err);

/* The placement's default work budget in the pipeline: about 15 s of the
 * exact search on a 2-core AMD EPYC virtual machine. */
#define OLLA_PLACEMENT_DEFAULT_WORK 15000000000LL

typedef struct olla_options {
    double time_limit;        /* seconds for ordering plus placement; default 30 (a safety net: both stop
                                 after work budgets of their own) */
    long long placement_work; /* the placement's work budget in units (about one entry of a section list
                                 visited by its exact search); 0: OLLA_PLACEMENT_DEFAULT_WORK. It does not
                                 depend on the time limit, so the same model and options give the same
                                 arena on a quiet or a busy machine unless the time limit cuts it first */
    int64_t alignment;        /* bytes; offsets are multiples, sizes rounded up; default 64 */
    int keep_order;           /* 1: keep the input order, only place */
    int joint;                /* 1: also try order and addresses in one ILP (small graphs) */
    int allow_unknown_sizes;  /* 1: leave tensors of unknown size out of the plan (else an error) */
    olla_sharing sharing;     /* default OLLA_SHARING_RUNTIME */
    olla_runtime runtime;     /* who executes the written model; default OLLA_RUNTIME_ORT */
    int strict_shapes;        /* 1: an inferred type that disagrees with a declared one is an error
                                 (by default the declared one is used, with a warning) */
    int verbosity;            /* which diagnostics reach log (olla_log_level): 0 none, 1 warnings (default),
                                 2 details too (olla-onnx -v); 3 also lets the scheduling ILP's solver
                                 (CBC) print its own log on stdout, the one output not routed through log */
    const olla_dim_binding *dims; /* --dim NAME=VALUE bindings */
    int n_dims;
    const olla_input_shape *input_shapes; /* --input-shape NAME=D1,D2,... */
    int n_input_shapes;
    olla_memory_limit memory_limit; /* no limit by default; not with keep_order */
    olla_progress_fn progress;    /* may be NULL */
    void *progress_ctx;
    olla_log_fn log;              /* diagnostics (olla_error.h); NULL: dropped. The library
                                     itself never prints */
    void *log_ctx;
} olla_options;

OLLA_API void olla_options_init(olla_options *opt);

/* What ONNX Runtime for Node holds for the input and the written model under
 * one choice of its two memory settings (a model of its allocation planner,
 * CPU memory arena and memory pattern), with
 * graph optimizations off, sequential, one thread. Bytes are -1 when not
 * modelled. */
typedef struct olla_ort_setting_figures {
    int arena;                      /* enableCpuMemArena (default true) */
    int mem_pattern;                /* enableMemPattern (default true) */
    int64_t input_first_run_bytes;  /* the peak during the first run of a session */
    int64_t first_run_bytes;
    int64_t input_steady_bytes;     /* the peak over the first three runs of a session */
    int64_t steady_bytes;
} olla_ort_setting_figures;

/* The settings in olla_report.ort_settings, in this order. */
enum {
    OLLA_ORT_ARENA_OFF = 0,         /* arena off, memory pattern on: input_ort_allocated_bytes */
    OLLA_ORT_ARENA_OFF_NO_PATTERN,  /* arena off, memory pattern off */
    OLLA_ORT_DEFAULTS,              /* arena on, memory pattern on: ORT's defaults */
    OLLA_ORT_ARENA_NO_PATTERN,      /* arena on, memory pattern off */
    OLLA_ORT_N_SETTINGS
};

/* What olla_optimize() found. Who owns its pointers:
 * - warnings, unknown_reasons and the unknown_names array belong to the
 *   report: olla_report_clear() frees them;
 * - model and the strings unknown_names points to are borrowed from the
 *   model planned: valid until olla_model_free();
 * - every other string (the statuses) is a constant of the library, valid
 *   for the life of the process; the values each can take are listed. */
typedef struct olla_report {
    const char *model;              /* the path the model was loaded from, or the name given to
                                       olla_model_load_bytes() ("<memory>" by default) */
    int nodes;
    int tensors;
    int planned_tensors;
    int64_t constant_bytes;         /* graph inputs, initializers and Constant outputs */
    int64_t input_order_peak_bytes;        /* every tensor its own buffer */
    int64_t input_order_shared_peak_bytes; /* under the sharing rules of opt->sharing (what the runtime itself
                                              needs in the input order) */
    int64_t input_order_online_arena_bytes; /* an online caching allocator on the input order */
    double input_order_fragmentation;       /* (its reserve - bytes in use at its peak) / its reserve */
    int64_t heuristic_peak_bytes;   /* best order of the fast heuristics */
    int64_t peak_bytes;             /* of the written order, under opt->sharing */
    int64_t arena_bytes;
    int64_t lower_bound_bytes;      /* -1 until computed */
    double schedule_seconds, placement_seconds, total_seconds;
    const char *schedule_status;    /* "kept", "heuristic", "feasible", "optimal" */
    const char *schedule_stopped_by; /* "proof", "budget" (the work budgets ended the search: the same
                                        result on any machine), "time" (the time limit did) or "kept" */
    const char *placement_status;   /* "heuristic" (nothing proven), "feasible" (improved by the search, not
                                       proven), "optimal" (the arena equals a proven lower bound, or the search
                                       was exhaustive) */
    const char *placement_stopped_by; /* "none" (proven optimal, or every phase finished), "budget" (the
                                         placement's work budget ended it: the same arena on any machine)
                                         or "time" (the time limit cut a search: the arena may depend on
                                         the load) */
    long long placement_work;       /* work units the placement spent */
    int joint_used;                 /* 1: the joint ILP's plan was smaller and is the one written */
    const char *sharing;            /* "runtime" or "none" (opt->sharing) */
    const char *runtime;            /* "listed", "ort" or "ort-priority" (opt->runtime) */
    int64_t unconstrained_peak_bytes;  /* the best order found in our model, whoever runs it */
    int64_t input_executed_peak_bytes; /* our peak of the order the runtime executes for the input */
    int64_t executed_peak_bytes;       /* ... for the written model: the plan's order (= peak_bytes) */
    int64_t input_ort_allocated_bytes; /* what ONNX Runtime allocates for those two orders (a model of its
                                          CPU planner); -1 unless ort */
    int64_t ort_allocated_bytes;
    /* ORT's default memory settings (arena and memory pattern on): the first
     * run and the peak over three runs; -1 unless ort */
    int64_t input_ort_default_allocated_bytes, ort_default_allocated_bytes;
    int64_t input_ort_default_steady_bytes, ort_default_steady_bytes;
    olla_ort_setting_figures ort_settings[OLLA_ORT_N_SETTINGS]; /* every setting (OLLA_ORT_*) */
    const char *runtime_search;     /* how the listing was chosen: "none" (runtime "listed": the plan's order
                                       is the listing); for "ort": "plan runs" (ONNX Runtime runs the plan's
                                       order itself), "input kept" (nothing better than the input's listing),
                                       "converged", "budget", "bound" or "deadline" (how the search over
                                       listings ended), "held more" (the input's listing: the one found
                                       would make ONNX Runtime hold more with its arena on, or more
                                       under some setting and 1% less under none, held_more_*), "kept"
                                       (keep_order), "search failed" (out of memory);
                                       for "ort-priority": "listed", "input kept" or "held more" */
    /* The saving as the runtime sees it: what it holds for the input and for the written model.
     * saving_basis "ort_allocated": ONNX Runtime's planner (input_ort_allocated_bytes,
     * ort_allocated_bytes); "executed_peak": the peaks of the orders the runtime executes, where
     * that planner is not modelled; "arena" (runtime listed): the input order's peak under the
     * sharing rules against the plan's arena. */
    const char *saving_basis;
    int64_t saving_input_bytes, saving_planned_bytes;
    char ort_model_note[1024];      /* why ONNX Runtime's allocation is not modelled, or "" */
    int views, inplace;             /* planned tensors that view another's buffer, or are written in place */
    int n_unknown;                  /* tensors left out of the plan: size unknown */
    const char **unknown_names;     /* n_unknown names (the array owned, the names borrowed) */
    char **unknown_reasons;         /* n_unknown one-line reasons (owned) */
    /* --memory-limit: all -1 (0 for the counts) without a limit */
    int64_t memory_limit_bytes;     /* the limit the written model's peak is under */
    int64_t no_limit_peak_bytes;    /* the peak of the plan made without a limit (what a percentage is of) */
    int recomputed_tensors;         /* distinct tensors whose late readers read a recomputed copy */
    int recomputed_nodes;           /* copies of nodes added to the graph */
    int64_t recompute_extra_flops;  /* their estimated cost: FLOPs for convolutions and products, elements
                                       written for the rest */
    double recompute_extra_fraction; /* of the estimated cost of the input's nodes, each run once */
    int64_t recompute_flops_bound;  /* no plan under the limit costs fewer extra FLOPs; -1 unknown */
    const char *recompute_status;   /* "not needed" (the plan fits without), "optimal" (the extra cost is
                                       proven the least), "feasible" (not proven; recompute_flops_bound says
                                       how far it may be); NULL without a limit */
    const char *recompute_method;   /* "none", "greedy", "search", "ilp"; NULL without a limit */
    int64_t recompute_peak_bound;   /* no plan, whatever it recomputes, peaks below this */
    int n_warnings;                 /* shape inference disagreeing with value_info; the first
                                       n_binding_warnings are caused by the bindings (--dim,
                                       --input-shape): a declared size they make differ from the
                                       inferred one, a dimension the model fixes changed */
    char **warnings;                /* n_warnings one-line messages (owned) */
    int n_binding_warnings;
    /* runtime_search "held more": the best listing the search found would make ONNX Runtime hold more
     * than the input's listing with its arena on, under ort_settings[held_more_setting] (OLLA_ORT_*), on
     * the first run (held_more_steady 0) or over three runs (1): held_more_bytes against
     * held_more_input_bytes, the largest such increase; so the input's listing was written. Or it
     * would make ONNX Runtime hold 1% less under no setting, on no run, and more than 0.1% more
     * under some (with its arena off too): held_more_* the largest increase, under any setting.
     * held_more_setting -1 otherwise. With arena_searched 1, the listing the search found first would
     * have (held_more_*), and the search ran again refusing every listing ORT would hold more for with
     * its arena on; its listing is written (runtime_search says how it ended), or the input's when
     * that one would still hold more ("held more"). */
    int held_more_setting, held_more_steady;
    int64_t held_more_input_bytes, held_more_bytes;
    int arena_searched;
} olla_report;

/* Plans a model. On success *plan and *report are filled; free with
 * olla_plan_free and olla_report_clear. */
OLLA_API olla_status olla_optimize(const olla_model *m, const olla_options *opt, olla_plan **plan, olla_report *report,
                                   olla_error *err);
OLLA_API void olla_plan_free(olla_plan *plan);
OLLA_API void olla_report_clear(olla_report *report);

/* Writes the model with its nodes in plan order and the plan in
 * metadata_props (olla.version, olla.arena_bytes, olla.plan), through a
 * temporary file and a rename. External data is made available next to
 * out_path when it goes to another folder. */
OLLA_API olla_status olla_write_model(const olla_model *m, const olla_plan *plan, const char *out_path,
                                      olla_error *err);

/* The bytes olla_write_model() writes, in memory (*bytes malloc'd): the
 * same bytes, byte for byte. External data is left where the model's
 * references point (nothing is copied). */
OLLA_API olla_status olla_write_model_bytes(const olla_model *m, const olla_plan *plan, uint8_t **bytes, size_t *len,
                                            olla_error *err);

/* Async-signal-safe: removes the temporary file olla_write_model() is
 * writing, if any, and the outputs this process already renamed into place,
 * so an interrupted run leaves no output behind. */
OLLA_API void olla_write_abandon(void);
/* Forgets the outputs written so far, so that a later olla_write_abandon()
 * leaves them in place: for a process that writes one model after another
 * (a Python session), once a run's outputs are complete. */
OLLA_API void olla_write_forget(void);

/* Set (from a signal handler, say) to ask long phases to stop early: every
 * call in progress in the process ends its searches as the time limit would
 * and returns its best plan so far. Process-wide; the library never clears
 * it, so a host that goes on after a stop sets it back to 0 itself. */
OLLA_API extern volatile sig_atomic_t olla_stop_requested;

/* Verifies a written model on its own: topological node order, every planned
 * tensor in the plan with its true (aligned) size, no two tensors live at the
 * same step overlapping, and the arena bounding every tensor. */
OLLA_API olla_status olla_check_model(const olla_model *m, const olla_options *opt, olla_error *err);

/* OLLA_ERR_USAGE naming the first binding whose name no symbolic dimension
 * of the model uses (a typo such as --dim bacth=32 would else be ignored);
 * cheap, meant to run right after loading, before any planning. */
OLLA_API olla_status olla_model_check_dim_names(const olla_model *m, const olla_dim_binding *dims, int n_dims,
                                                olla_error *err);

/* Which bindings a model can take, for a batch over models that name their
 * dimensions and inputs differently: dim_used[i] = 1 when a symbolic
 * dimension of m uses the name dims[i].name (as olla_model_check_dim_names
 * reads names), shape_used[j] = 1 when m has a graph input fed at run time
 * (not an initializer) named shapes[j].name whose declared rank (if any) is
 * shapes[j].rank, 2 when it has that input with another rank, else 0. */
OLLA_API void olla_model_bindings_used(const olla_model *m, const olla_dim_binding *dims, int n_dims,
                                       unsigned char *dim_used, const olla_input_shape *shapes, int n_shapes,
                                       unsigned char *shape_used);

/* What `olla-onnx shapes` prints: the element type, shape, bytes and source
 * of every tensor of the main graph as one JSON document (*json malloc'd),
 * inferred under opt's dims, input_shapes and strict_shapes; use_value_info
 * 0 ignores the model's value_info (what inference alone finds). A dims
 * name that no dimension of the model uses is OLLA_ERR_USAGE. */
OLLA_API olla_status olla_model_shapes_json(const olla_model *m, const olla_options *opt, int use_value_info,
                                            char **json, olla_error *err);

/* The curve of peak memory against extra compute: the plan made without a
 * limit, the smallest peak recomputation reaches, and n_points plans with
 * recomputation under limits evenly spaced between the two (at least 2). */
OLLA_API olla_status olla_tradeoff_curve(const olla_model *m, const olla_options *opt, int n_points, olla_tradeoff *out,
                                         olla_error *err);

/* Where the report says ONNX Runtime would hold more with its arena on for the best listing found
 * than for the input's (runtime_search "held more", or arena_searched; not for the listed runtime):
 * the index of that setting in ort_settings, with held_more_* its figures; -1 when it says none. */
OLLA_API int olla_report_held_more(const olla_report *r);
/* The report as JSON text (malloc'd; NULL when out of memory). */
OLLA_API char *olla_report_to_json(const olla_report *r, int pretty);
/* The --report JSON. */
OLLA_API olla_status olla_report_write_json(const olla_report *r, const char *path, olla_error *err);

#ifdef __cplusplus
}
#endif
#endif
