/* olla-onnx: internals of shape inference shared by the engine
 * (passes/shapes/shapes.c), the rule context (passes/shapes/shape_ctx.c) and the stores
 * (passes/shapes/shape_store.c). Not for rules: they use olla_shape_rules.h. */
#ifndef OLLA_SHAPE_ENGINE_H
#define OLLA_SHAPE_ENGINE_H

#include "passes/shapes/olla_shape_rules.h"
#include "util/olla_strmap.h"

/* Bump allocator; everything is freed at once. */
typedef struct olla_arena_chunk olla_arena_chunk;
typedef struct olla_arena {
    olla_arena_chunk *head;
} olla_arena;
void *olla_arena_alloc(olla_arena *a, size_t bytes); /* zeroed; NULL on OOM */
char *olla_arena_strdup(olla_arena *a, const char *s);
char *olla_arena_strndup(olla_arena *a, const char *s, size_t n);
void olla_arena_free(olla_arena *a);
/* Frees all but the newest chunk and empties it, for reuse. */
void olla_arena_reset(olla_arena *a);

typedef struct olla_shape_entry {
    const char *name;
    olla_value_type type;            /* dims in the table arena */
    olla_shape_value value;          /* e == NULL when not evaluated */
    const Onnx__TensorProto *cnst;   /* initializer or Constant value */
    const char *reason;              /* why it has no size (root cause) */
    const Onnx__NodeProto *producer; /* node that produced it, or NULL */
} olla_shape_entry;

typedef struct olla_shape_scope {
    struct olla_shape_scope *parent;
    const Onnx__GraphProto *graph; /* the graph whose values it holds */
    olla_shape_entry *entries;
    size_t n, cap;
    olla_strmap map;   /* name -> entry index */
    olla_strmap decl;  /* name -> ValueInfoProto* index into decls */
    const Onnx__ValueInfoProto **decls;
    size_t n_decls;
} olla_shape_scope;

/* A subgraph's scope as it was last inferred, kept for the lookups of
 * olla_shape_lookup_in (its parent pointer cleared; parent names the graph
 * around it). */
typedef struct olla_shape_kept {
    const Onnx__GraphProto *parent;
    olla_shape_scope scope;
} olla_shape_kept;

struct olla_shape_table {
    olla_arena arena;
    olla_shape_kept *kept; /* one per subgraph inferred */
    size_t n_kept, cap_kept;
    olla_strmap strings; /* interned strings */
    olla_shape_scope main;
    size_t *order;       /* listing order: indices into main.entries */
    size_t n_order;
    char **warnings;
    size_t n_warnings, cap_warnings;
    olla_dim_binding *bind;
    int n_bind;
    int ignore_vi;
    int strict; /* every disagreement with a declaration is an error */
    const Onnx__ModelProto *model;
    olla_strmap rules; /* "domain\x1fop" -> index into rule_fns */
    olla_shape_rule_fn *rule_fns;
    size_t n_rule_fns;
    int depth;
    olla_arena spare; /* a reset scratch arena for the next node */
    size_t visits, max_visits; /* node inferences done / allowed (subgraphs re-inferred) */
    const char **input_reasons; /* the advice of each graph input with open dimensions (table arena) */
    size_t n_input_reasons;
    unsigned char *warning_binding; /* per warning: 1 when the bindings cause it */
    int64_t align;                  /* olla_shape_options.alignment, at least 1 */
    const char *overrides;          /* "--input-shape x=1,3,640,640 ..." applied, or NULL (table arena) */
};

struct olla_shape_ctx {
    olla_shape_table *t;
    olla_shape_scope *scope;
    const Onnx__NodeProto *node;
    const char *domain;
    int64_t opset;
    int n_in, n_out;
    const olla_shape_entry **in; /* NULL when absent */
    olla_value_type *out;
    int *out_set;
    olla_shape_value *out_val;
    const char **out_reason;
    olla_arena scratch;
    olla_error *err;
    const char *op_override; /* olla_shape_delegate() */
};

const char *olla_shape__intern(olla_shape_table *t, const char *s);
/* Type of a TypeProto with bindings applied; dims in the table arena. */
olla_status olla_shape__type_from_proto(olla_shape_table *t, const Onnx__TypeProto *tp, olla_value_type *out);
/* Type and (small) value of a constant tensor. */
olla_status olla_shape__from_tensor(olla_shape_table *t, const Onnx__TensorProto *tp, olla_value_type *type,
                                    olla_shape_value *value);
/* Reads the elements of a tensor as svals (NULL result when not readable or
 * too large); n set to the element count. Allocates in arena a. */
olla_sval *olla_shape__tensor_values(olla_arena *a, const Onnx__TensorProto *tp, int64_t *n);
/* Formats a type as "float32[1,batch,?]" into buf. */
void olla_shape__format(const olla_value_type *t, char *buf, size_t size);
/* Infers nodes of a graph into scope (already holding inputs/initializers). */
olla_status olla_shape__run_graph(olla_shape_table *t, olla_shape_scope *scope, const Onnx__GraphProto *g,
                                  olla_error *err);
/* Calls fn for every name node reads: its inputs and, at any depth, what
 * its subgraphs read (outer-scope names, and the subgraphs' own). */
void olla_shape__for_each_dep(const Onnx__NodeProto *node, void (*fn)(const char *name, void *ud), void *ud);
/* Into buf, the advice for graph input e of the main graph when it has
 * open dimensions (olla_shape_size_advice's text for one input: "graph
 * input 'x', whose dimensions ... have no value; pass --input-shape ...").
 * Returns its length, 0 when e is no such input or the text does not fit. */
size_t olla_shape__input_advice(const olla_shape_table *t, const olla_shape_entry *e, char *buf, size_t size);
/* " under --input-shape x=1,3,640,640 (...)" when input shapes override
 * the declared ones, for the messages of failures they may cause; "". */
const char *olla_shape__override_note(const olla_shape_table *t);
/* Finds a name in scope and its parents. */
olla_shape_entry *olla_shape__find(olla_shape_scope *s, const char *name);
void olla_shape__scope_free(olla_shape_scope *s);

#endif
