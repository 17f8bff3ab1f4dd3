/* olla-onnx: the plan. What the planner computes (olla_plan: the order of
 * the nodes and an arena offset for every planned tensor), and the runtime API
 * that reads the plan back from a written model and serves its allocations
 * from one arena.
 *
 *   olla_runtime_plan *p;
 *   olla_error err = {0};
 *   if (olla_runtime_plan_load("model.planned.onnx", &p, &err) != OLLA_OK) ...
 *   void *arena = aligned_alloc(olla_runtime_plan_alignment(p), olla_runtime_plan_arena_bytes(p));
 *   // refuse inputs of other shapes than the plan was made for
 *   olla_input_shape in[] = {{"x", 4, (int64_t[]){8, 3, 224, 224}}};
 *   if (olla_runtime_plan_check_inputs(p, in, 1, &err) != OLLA_OK) ...  // err.message names x and both shapes
 *   // run the nodes in the model's order; the k-th allocation request of an
 *   // iteration is olla_runtime_plan_allocation(p, k % n); frees are no-ops.
 *   // An allocation with share OLLA_BUFFER_VIEW is a view of the tensor it
 *   // names (no copy); OLLA_BUFFER_INPLACE runs its kernel in place over it.
 *   olla_runtime_plan_free(p);
 */
#ifndef OLLA_PLAN_H
#define OLLA_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "olla_bindings.h"
#include "olla_error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* How a planned tensor gets its memory. */
typedef enum olla_buffer_share {
    OLLA_BUFFER_OWN = 0,    /* a buffer of its own */
    OLLA_BUFFER_VIEW = 1,   /* a view of the buffer of the tensor it shares (its kernel makes no copy) */
    OLLA_BUFFER_INPLACE = 2 /* written over the tensor it shares, which dies at that node */
} olla_buffer_share;

/* The memory model a plan is made in (olla_options.sharing). */
typedef enum olla_sharing {
    OLLA_SHARING_RUNTIME = 0, /* the runtime's: views alias their input, kernels that allow it write in place
                                 (ONNX Runtime's CPU kernel declarations) */
    OLLA_SHARING_NONE = 1     /* every node output a buffer of its own (the OLLA paper's) */
} olla_sharing;

/* ---- the plan as the planner makes it ---- */
typedef struct olla_plan_entry {
    int tensor;       /* index in the graph */
    const char *name; /* borrowed from the model */
    int64_t offset;
    int64_t bytes;    /* rounded up to the alignment */
    int first_step, last_step; /* live on these steps of the planned order, inclusive: for a tensor
                                  with a buffer of its own, while that buffer is in use (by it and
                                  every tensor sharing it); for a sharing tensor, its own lifetime */
    olla_buffer_share share;
    int shares;       /* with share != OLLA_BUFFER_OWN: the entry whose buffer it takes; else -1 */
} olla_plan_entry;

typedef struct olla_plan {
    int n_nodes;
    int *order;              /* proto node indices in the order the runtime executes them: the
                                offsets are for it (the ops it does not run placed where needed) */
    int *listing;            /* proto node indices in the order written to graph.node */
    olla_runtime runtime;    /* who executes it */
    int n_entries;
    olla_plan_entry *entries; /* in allocation order */
    int64_t arena_bytes;
    int64_t alignment;
    int sharing;             /* 1: planned under the runtime's buffer sharing rules; 0: every tensor its own buffer */
    /* The picture (olla_plan_write_svg): its steps are the ones at which an op runs (not a
     * Constant, nor an op the runtime drops), in the order the runtime executes. */
    int n_steps;             /* of the plan's order */
    int *step_index;         /* per position of order: its step, or for an op that does not run the
                                step before it (0 at the start) */
    int n_input_steps;       /* of the input's order (other than n_steps when nodes were added) */
    int64_t *live_input;     /* n_input_steps: live bytes at each step, the input as the runtime executes it */
    int64_t *live_planned;   /* n_steps: ... the written model as the runtime executes it */
    int64_t input_peak_bytes, peak_bytes; /* the report's input_executed_peak_bytes and peak_bytes */
    int64_t lower_bound;     /* -1 when none was computed */
    /* what the plan was made for (olla.plan "dims" and "inputs"); owned */
    int n_dims;
    olla_dim_binding *dims;    /* the symbolic dimensions bound (--dim) */
    int n_inputs;
    olla_input_shape *inputs;  /* the concrete shape of every graph input */
    /* The model the plan is for when it is not the input: the input with
     * copies of nodes added to recompute tensors (--memory-limit); owned,
     * NULL when the plan is for the input itself. The indices above are
     * its nodes'. */
    struct olla_model *rewritten;
    int64_t memory_limit;      /* --memory-limit in bytes ("memory_limit" in olla.plan), or -1 */
} olla_plan;

/* Writes the planned tensors as minimalloc CSV: id (the allocation index),
 * lower, upper (live on [lower, upper) in planned steps), size, offset. */
OLLA_API olla_status olla_plan_write_lifetimes(const olla_plan *plan, const char *path, olla_error *err);

/* Draws the plan as SVG: live bytes over the steps for the input and the
 * planned order (peak and lower bound marked), and the arena layout. */
OLLA_API olla_status olla_plan_write_svg(const olla_plan *plan, const char *title, const char *path, olla_error *err);

/* ---- the curve of peak memory against extra compute (recomputation) ---- */
typedef struct olla_tradeoff_point {
    int64_t limit_bytes;     /* the limit the plan was searched under */
    int64_t peak_bytes;      /* the peak of the plan found (in the order of its runs) */
    int64_t extra_flops;     /* estimated cost of its copies */
    double extra_fraction;   /* of the input's nodes each run once */
    int copies;              /* nodes added */
    int recomputed_tensors;
    int optimal;             /* 1: the extra cost is proven the least under the limit */
} olla_tradeoff_point;

typedef struct olla_tradeoff {
    int64_t no_limit_peak_bytes; /* the peak of the plan made without a limit */
    int64_t smallest_peak_bytes; /* the smallest peak found at any cost */
    int64_t peak_bound_bytes;    /* no plan, whatever it recomputes, peaks below this */
    int n_points;
    olla_tradeoff_point *points; /* from the no-limit peak down to the smallest; owned */
} olla_tradeoff;

OLLA_API void olla_tradeoff_clear(olla_tradeoff *t);
/* One row per point: limit_bytes,peak_bytes,extra_flops,extra_fraction,copies,recomputed_tensors,status. */
OLLA_API olla_status olla_tradeoff_write_csv(const olla_tradeoff *t, const char *path, olla_error *err);
/* Peak memory (up) against extra compute (across), with the bound. */
OLLA_API olla_status olla_tradeoff_write_svg(const olla_tradeoff *t, const char *title, const char *path,
                                             olla_error *err);

/* ---- the runtime API: a written model's plan ---- */
typedef struct olla_runtime_plan olla_runtime_plan;

typedef struct olla_allocation {
    const char *name;       /* the tensor */
    int64_t offset;         /* from the start of the arena */
    int64_t bytes;          /* rounded up to the plan's alignment */
    olla_buffer_share share; /* OLLA_BUFFER_VIEW: make the tensor a view of `shares` (no memory of its own);
                               OLLA_BUFFER_INPLACE: run its kernel in place over `shares` */
    const char *shares;     /* the tensor whose buffer it takes, or NULL */
} olla_allocation;

/* Reads the olla.plan metadata of a model file (the rest of the model is
 * parsed but not kept). */
OLLA_API olla_status olla_runtime_plan_load(const char *model_path, olla_runtime_plan **out, olla_error *err);
/* The same from the olla.plan JSON text itself. */
OLLA_API olla_status olla_runtime_plan_parse(const char *plan_json, olla_runtime_plan **out, olla_error *err);
OLLA_API void olla_runtime_plan_free(olla_runtime_plan *p);

OLLA_API int64_t olla_runtime_plan_arena_bytes(const olla_runtime_plan *p);
OLLA_API int64_t olla_runtime_plan_alignment(const olla_runtime_plan *p);
/* 1 when the plan was made under the runtime's sharing rules: some
 * allocations are then views or in-place writes (olla_allocation.share). */
OLLA_API int olla_runtime_plan_sharing(const olla_runtime_plan *p);
/* The runtime the plan was made for, and the order it executes the model's
 * nodes in (positions in graph.node, *n of them): the allocations come in
 * that order. For OLLA_RUNTIME_LISTED the order is graph.node's own and
 * NULL is returned. */
OLLA_API olla_runtime olla_runtime_plan_runtime(const olla_runtime_plan *p);
OLLA_API const int *olla_runtime_plan_order(const olla_runtime_plan *p, size_t *n);
/* Offset of a tensor by name, or -1 when the plan does not place it. */
OLLA_API int64_t olla_runtime_plan_offset(const olla_runtime_plan *p, const char *name);
/* Allocation requests in execution order. */
OLLA_API size_t olla_runtime_plan_allocation_count(const olla_runtime_plan *p);
OLLA_API const olla_allocation *olla_runtime_plan_allocation(const olla_runtime_plan *p, size_t k);

/* What the plan was made for: the symbolic dimensions it bound (--dim) and
 * the shape of every graph input fed at run time. Plans written before
 * olla-onnx recorded them have none. */
OLLA_API size_t olla_runtime_plan_dim_count(const olla_runtime_plan *p);
/* Name and value of the i-th bound dimension; NULL when i is out of range. */
OLLA_API const char *olla_runtime_plan_dim_at(const olla_runtime_plan *p, size_t i, int64_t *value);
/* Value a dimension was bound to, or -1 when the plan records no such name. */
OLLA_API int64_t olla_runtime_plan_dim(const olla_runtime_plan *p, const char *name);
OLLA_API size_t olla_runtime_plan_input_count(const olla_runtime_plan *p);
/* Name, rank and sizes (borrowed) of the i-th graph input; NULL when out of range. */
OLLA_API const char *olla_runtime_plan_input_at(const olla_runtime_plan *p, size_t i, int *rank, const int64_t **dims);
/* The shapes a runtime is about to run with (n entries, by input name).
 * OLLA_ERR_INPUT, with a message naming the input and both shapes, when one
 * differs from the shape the plan was made for, names no input the plan
 * records, or when the plan records no input shapes at all: the arena would
 * be too small or laid out for other sizes. Inputs not given are not
 * checked. */
OLLA_API olla_status olla_runtime_plan_check_inputs(const olla_runtime_plan *p, const olla_input_shape *shapes,
                                                    size_t n, olla_error *err);

#ifdef __cplusplus
}
#endif
#endif
