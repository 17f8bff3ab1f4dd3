/* olla-onnx: internals of shape inference shared by the engine
 * (passes/shapes/shapes.c), its scopes (passes/shapes/shape_scope.c), the
 * declarations (passes/shapes/shape_declared.c), the input table
 * (passes/shapes/shape_inputs.c), the rule context (passes/shapes/shape_ctx.c)
 * and the stores (passes/shapes/shape_store.c). Not for rules: they use
 * olla_shape_rules.h. */
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
    size_t n_rule_fns, cap_rule_fns;
    int depth;
    olla_arena spare; /* a reset scratch arena for the next node */
    size_t visits, max_visits; /* node inferences done / allowed (subgraphs re-inferred) */
    const char **input_reasons; /* the advice of each graph input with open dimensions (table arena) */
    size_t n_input_reasons;
    unsigned char *warning_binding; /* per warning: 1 when the bindings cause it */
    size_t cap_warning_binding;
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

/* ---- the table (passes/shapes/shapes.c) ---- */

/* Why output i of c's node, of type ty, has no size: the root cause, in the
 * table arena (NULL on OOM); has_rule 0 when its operator has no rule. */
const char *olla_shape__unknown_reason(olla_shape_table *t, olla_shape_ctx *c, int i, int has_rule,
                                       const olla_value_type *ty);
/* Adds msg (made one plain line) to the table's warnings; binding: 1 when
 * the bindings given cause it (listed first). */
olla_status olla_shape__add_warning(olla_shape_table *t, const char *msg, int binding);

/* ---- scopes (passes/shapes/shape_scope.c) ---- */

/* Finds a name in scope and its parents. */
olla_shape_entry *olla_shape__find(olla_shape_scope *s, const char *name);
void olla_shape__scope_free(olla_shape_scope *s);
/* Adds name to scope s, or finds it there; returns the entry or NULL on OOM. */
olla_shape_entry *olla_shape__scope_put(olla_shape_table *t, olla_shape_scope *s, const char *name);
/* Indexes the declarations (value_info, then graph outputs) of g into s,
 * unless value_info is ignored. */
olla_status olla_shape__scope_decls(olla_shape_table *t, olla_shape_scope *s, const Onnx__GraphProto *g);
/* Keeps s (moved out: s is left empty) as the last inference of its graph,
 * whose enclosing graph is parent, replacing an earlier one. */
olla_status olla_shape__keep_scope(olla_shape_table *t, const Onnx__GraphProto *parent, olla_shape_scope *s);

/* ---- declarations (passes/shapes/shape_declared.c) ---- */

/* The declared type of a value: type NULL when it has none. */
typedef struct olla_shape_decl {
    const olla_value_type *type;  /* with bindings applied */
    const Onnx__TypeProto *proto; /* as written (its dim_params) */
} olla_shape_decl;
/* A value declared twice in the main graph (value_info and graph output,
 * or twice in one list) with contradicting types: an input error. */
olla_status olla_shape__check_duplicate_decls(olla_shape_table *t, const Onnx__GraphProto *g, olla_error *err);
/* *dst = *src with the dims copied into the table arena. */
olla_status olla_shape__copy_type(olla_shape_table *t, olla_value_type *dst, const olla_value_type *src);
/* Output i of c's node into scope: its inferred type merged with its
 * declaration (the declaration wins a disagreement, with a warning, or an
 * error under --strict-shapes), its value while it stays valid, and the
 * reason when it has no size (has_rule 0: its operator has no rule). */
olla_status olla_shape__store_output(olla_shape_table *t, olla_shape_scope *scope, olla_shape_ctx *c, int i,
                                     int has_rule);

/* ---- the input table (passes/shapes/shape_inputs.c) ---- */

/* A dimension declared with a negative value reads as unknown; names it
 * (into buf) so the reason says so; what is "graph input" or "its
 * value_info". Returns 1 when tp has one. */
int olla_shape__negative_dim(const Onnx__TypeProto *tp, const char *name, const char *what, char *buf, size_t n);
/* The declarations, graph inputs, initializers and sparse initializers of
 * the main graph g into t->main; OLLA_ERR_INTERNAL when out of memory. */
olla_status olla_shape__main_values(olla_shape_table *t, const Onnx__GraphProto *g);
/* --input-shape: each given shape replaces its graph input's declared one. */
olla_status olla_shape__apply_input_shapes(olla_shape_table *t, const Onnx__GraphProto *g,
                                           const olla_shape_options *opt, olla_error *err);
/* Why each graph input has no size, naming the flag that gives it one;
 * OLLA_ERR_INTERNAL when out of memory. */
olla_status olla_shape__input_reasons(olla_shape_table *t);
/* The first value in [lo, hi] that a graph input named `name` declares for
 * its dimension d (a dim_value): 1 and *value, or 0 when none does. */
int olla_shape__input_dim(const Onnx__GraphProto *g, const char *name, int d, int64_t lo, int64_t hi,
                          int64_t *value);

#endif
