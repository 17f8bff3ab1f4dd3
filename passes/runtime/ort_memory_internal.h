/* olla-onnx: the state of the model of ONNX Runtime's allocations, shared
 * by ort_memory.c (one run, arena off) and ort_session.c (runs of a session
 * under other settings); internal to passes/runtime. */
#ifndef OLLA_ORT_MEMORY_INTERNAL_H
#define OLLA_ORT_MEMORY_INTERNAL_H

#include "passes/runtime/olla_ort_memory.h"

/* Bytes per entry of ORT's per-run bookkeeping (measured, olla_ort_memory.h). */
enum {
    FRAME_BYTES_PER_VALUE = 24,  /* ExecutionFrame's OrtValue per value */
    TRACE_BYTES_PER_ALLOC = 40,  /* MemPatternPlanner's record per traced allocation */
    PATTERN_SLOT_BYTES = 24,     /* the memory pattern's hash slot (value index, block) */
    VALUE_SET_SLOT_BYTES = 16    /* the hash over the frame's values at the start of a run */
};

enum { OP_PLAIN = 0, OP_CONSTANT, OP_CAST, OP_SUBGRAPH };

/* Control flow (ort_control.c): how an If, Loop or Scan runs its subgraphs.
 * Each subgraph has a model of its own (its graph built on its own, planned
 * once for the order ORT runs it in). */
enum { CF_IF = 1, CF_LOOP, CF_SCAN };

typedef struct ort_cf {
    int kind;
    int n_bodies;               /* If: 2 (then, else); Loop, Scan: 1 */
    olla_ort_memory *body[2];
    int *order[2], n_order[2];  /* the order ORT runs each body in */
    int branch;                 /* If: the branch counted (0 then, 1 else) */
    int64_t trips;              /* Loop: iterations; Scan: the sequence length */
    int n_state;                /* Loop: carried values; Scan: state values */
    int n_scan_in;              /* Scan: scan inputs */
    unsigned char *out_static;  /* per output of the op: the body's output has a static declared shape */
    int64_t *in_temp;           /* Scan: per scan input, bytes of its transposed copy (0: scanned on axis 0) */
    unsigned char *out_temp;    /* Scan: per scan output, written to a temporary and transposed (axis != 0) */
    unsigned char *body_static[2]; /* per body output: its declared shape is static */
    int64_t peak[2];            /* each body's first execution on its own (If: the larger one is counted) */
} ort_cf;

struct olla_ort_memory {
    const olla_graph *g; /* sized */
    olla_ort_memory_options opt;
    int n_classes;
    int *shape_class;           /* per tensor: class of (element size, declared shape), -1 matches none */
    unsigned char *freelist_ok; /* per tensor: may take a freed buffer (class known, rank > 0) */
    unsigned char *is_tensor;   /* per tensor: a tensor value (not a sequence, map or optional) */
    unsigned char *op_kind;     /* per op: OP_* */
    int *alias_in, *inplace_in; /* per g->output_list entry: the explicit input slot it may share, or -1 */
    int64_t *scratch;           /* per op: counted kernel scratch */
    int64_t *scratch_all;       /* per op: kernel scratch, every block (what an arena serves) */
    int pattern_on;             /* ORT traces the first run for a memory pattern */
    int64_t start_book;         /* counted feed and fetch lists */
    int is_subgraph;            /* the graph of a subgraph: no feed and fetch lists, no output copies */
    int loop_body;              /* the body of a Loop (an Identity of a value passed in is no copy) */
    olla_graph *own_sized;      /* a subgraph's graph, owned */
    int *out_index;             /* per tensor: its index among the graph outputs, -1 */
    ort_cf **cf;                /* per op: its control flow, NULL when none (or not modelled) */
    int n_cf;                   /* ops with a modelled control flow */
    char cf_note[1000];          /* why the subgraphs are not counted, "" when they are (or none) */
    /* work arrays of one evaluation */
    int *pos;                   /* per op: position in the order, -1 when not run */
    int *value;                 /* per tensor: the value ORT sees (-1 unresolved) */
    int *use, *readers, *buffer, *last_read, *free_next; /* per tensor */
    unsigned char *kind;        /* per tensor: olla_ort_buffer_kind */
    int *free_top;              /* per class: most recently freed buffer, -1 */
    int64_t *release_at;        /* per position: counted bytes freed after that node */
};

/* The planning pass of an evaluation (ort_memory.c): ORT's allocation
 * planner over the executed order; result gets n_subgraph_ops. */
olla_status olla_ort__plan(olla_ort_memory *m, const int *executed, int n, olla_ort_memory_result *result,
                           olla_error *err);
/* Replays the runs of a session over the last planned order (ort_session.c). */
olla_status olla_ort__replay(olla_ort_memory *m, const int *executed, int n, const olla_ort_settings *s,
                             olla_ort_session_result *result, olla_error *err);
/* Builds the models of m's subgraphs (ort_control.c); a subgraph that cannot
 * be modelled leaves m->cf_note set (errors: out of memory only). */
olla_status olla_ort__control_new(olla_ort_memory *m, const olla_graph *declared, olla_error *err);
void olla_ort__control_free(olla_ort_memory *m);
/* olla_ort_memory_new for a subgraph's graph (is_subgraph set). */
olla_status olla_ort__memory_new(const olla_graph *sized, const olla_graph *declared, const olla_ort_memory_options *opt,
                                 int is_subgraph, olla_ort_memory **out, olla_error *err);

int64_t olla_ort_flat_hash_bytes(int64_t n, int64_t slot);
int64_t olla_ort_run_lists_bytes(const olla_ort_memory *m, int64_t entries);
int64_t olla_ort_frame_values(const olla_ort_memory *m);
int olla_ort_is_preexisting(const olla_ort_memory *m, int v);

#endif
