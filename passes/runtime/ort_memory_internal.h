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
    /* work arrays of one evaluation */
    int *pos;                   /* per op: position in the order, -1 when not run */
    int *value;                 /* per tensor: the value ORT sees (-1 unresolved) */
    int *use, *readers, *buffer, *last_read, *free_next; /* per tensor */
    unsigned char *kind;        /* per tensor: olla_ort_buffer_kind */
    int *free_top;              /* per class: most recently freed buffer, -1 */
    int64_t *release_at;        /* per position: counted bytes freed after that node */
};

int64_t olla_ort_flat_hash_bytes(int64_t n, int64_t slot);
int64_t olla_ort_run_lists_bytes(const olla_ort_memory *m, int64_t entries);
int64_t olla_ort_frame_values(const olla_ort_memory *m);
int olla_ort_is_preexisting(const olla_ort_memory *m, int v);

#endif
