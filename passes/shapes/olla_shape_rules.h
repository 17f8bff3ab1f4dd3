/* olla-onnx: the interface between the shape-inference engine
 * (passes/shapes/shapes.c) and the per-operator rules.
 *
 * How to add an operator family:
 *   1. Create passes/shapes/shape_<family>.c. Write one static rule per operator (or
 *      one shared by several operators) with the signature olla_shape_rule_fn.
 *   2. At the end of the file export the table
 *          const olla_shape_rule_entry olla_shape_rules_<family>[] = {
 *              {"", "Conv", rule_conv},            -- "" = default ONNX domain
 *              {"com.microsoft", "ConvGrad", rule_conv_grad},
 *              {NULL, NULL, NULL}};
 *   3. Declare it in the list below and add one line to the families[] array in
 *      passes/shapes/shape_registry.c.
 *
 * A rule reads the node through the olla_shape_ctx accessors below and sets
 * each output it can with olla_shape_set_out*(). Outputs it leaves unset
 * become unknown with a generic reason; call olla_shape_set_unknown() to give
 * a precise one (data-dependent output, unsupported attribute value...). A
 * rule returns OLLA_OK even when it cannot infer anything; it returns an error
 * only for malformed input (olla_shape_fail()) or out of memory. Attribute
 * getters never fail: an attribute of the wrong type records an input error
 * in the context (reported after the rule returns) and yields the default.
 *
 * Memory: every pointer handed to a rule (types, dims, values, strings) stays
 * valid until the rule returns. Setters copy. olla_shape_scratch() gives
 * memory freed automatically after the rule.
 *
 * Symbolic dimensions: an olla_dim with value < 0 and a param is symbolic;
 * param may be a name ("batch") or an expression built by the dim helpers
 * ("batch*4"). value < 0 and param NULL is unknown.
 *
 * Partially evaluated values: integer (and small float) tensors of at most
 * OLLA_SHAPE_MAX_VALUE elements carry their elements as olla_sval entries, so
 * shape arithmetic folds (Shape -> Gather -> Concat -> Reshape). */
#ifndef OLLA_SHAPE_RULES_H
#define OLLA_SHAPE_RULES_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "passes/shapes/olla_shapes.h"

#define OLLA_SHAPE_MAX_VALUE 1024

/* ONNX TensorProto.DataType values used by the rules. */
enum {
    OLLA_DT_UNDEFINED = 0, OLLA_DT_FLOAT = 1, OLLA_DT_UINT8 = 2, OLLA_DT_INT8 = 3,
    OLLA_DT_UINT16 = 4, OLLA_DT_INT16 = 5, OLLA_DT_INT32 = 6, OLLA_DT_INT64 = 7,
    OLLA_DT_STRING = 8, OLLA_DT_BOOL = 9, OLLA_DT_FLOAT16 = 10, OLLA_DT_DOUBLE = 11,
    OLLA_DT_UINT32 = 12, OLLA_DT_UINT64 = 13, OLLA_DT_COMPLEX64 = 14,
    OLLA_DT_COMPLEX128 = 15, OLLA_DT_BFLOAT16 = 16, OLLA_DT_FLOAT8E4M3FN = 17,
    OLLA_DT_FLOAT8E4M3FNUZ = 18, OLLA_DT_FLOAT8E5M2 = 19, OLLA_DT_FLOAT8E5M2FNUZ = 20,
    OLLA_DT_UINT4 = 21, OLLA_DT_INT4 = 22, OLLA_DT_FLOAT4E2M1 = 23,
    OLLA_DT_FLOAT8E8M0 = 24
};

/* One element of a partially evaluated value. */
typedef enum olla_sval_state {
    OLLA_SV_UNKNOWN = 0, /* not known */
    OLLA_SV_KNOWN,       /* i (and f) hold the value */
    OLLA_SV_SYMBOLIC     /* equals the symbolic dimension sym */
} olla_sval_state;

typedef struct olla_sval {
    olla_sval_state state;
    int64_t i;       /* integer value (truncated for floating values) */
    double f;        /* floating value (= i for integer values) */
    const char *sym; /* OLLA_SV_SYMBOLIC only */
} olla_sval;

/* A value: n elements in row-major order; the shape is the value's type. */
typedef struct olla_shape_value {
    int64_t n;
    const olla_sval *e;
} olla_shape_value;

typedef struct olla_shape_ctx olla_shape_ctx;
typedef olla_status (*olla_shape_rule_fn)(olla_shape_ctx *c);

typedef struct olla_shape_rule_entry {
    const char *domain; /* "" = default ONNX domain (also matches "ai.onnx") */
    const char *op_type;
    olla_shape_rule_fn rule;
} olla_shape_rule_entry;

/* ---- the node ---- */
const char *olla_shape_op(const olla_shape_ctx *c);
const char *olla_shape_domain(const olla_shape_ctx *c);  /* "" for the default domain */
const char *olla_shape_node_name(const olla_shape_ctx *c);  /* name or first output */
/* Opset version of the node's domain (0 when not imported; for com.microsoft
 * and other contrib domains it is usually 1). */
int64_t olla_shape_opset(const olla_shape_ctx *c);
int olla_shape_n_inputs(const olla_shape_ctx *c);  /* including trailing empty names */
int olla_shape_n_outputs(const olla_shape_ctx *c);
/* 1 when input i is present (index in range, name non-empty). */
int olla_shape_has_input(const olla_shape_ctx *c, int i);
/* 1 when output i is wanted (index in range, name non-empty). */
int olla_shape_has_output(const olla_shape_ctx *c, int i);
const char *olla_shape_input_name(const olla_shape_ctx *c, int i);
const char *olla_shape_output_name(const olla_shape_ctx *c, int i);

/* Type of input i; NULL when absent. When nothing is known of a present
 * input it is a tensor with elem_type 0 and rank -1. */
const olla_value_type *olla_shape_in(const olla_shape_ctx *c, int i);
/* Shortcuts: rank (-1 unknown or absent), elem type (0 unknown or absent). */
int olla_shape_in_rank(const olla_shape_ctx *c, int i);
int32_t olla_shape_in_elem(const olla_shape_ctx *c, int i);
/* Partially evaluated value of input i, or NULL. */
const olla_shape_value *olla_shape_in_value(const olla_shape_ctx *c, int i);
/* Reads input i as a fully known list of integers (any rank, at most max
 * elements). Returns the count, or -1 when not all elements are known. */
int64_t olla_shape_in_ints(const olla_shape_ctx *c, int i, int64_t *out, int64_t max);
/* Same as floating values (integer inputs converted). */
int64_t olla_shape_in_floats(const olla_shape_ctx *c, int i, double *out, int64_t max);
/* Input j of the node that produced input i: its type (NULL when input i is
 * not a node output or that node has no input j), and the producer's
 * op_type. For gradient ops whose result has the shape of a forward input. */
const olla_value_type *olla_shape_producer_input(const olla_shape_ctx *c, int i, int j);
const char *olla_shape_producer_op(const olla_shape_ctx *c, int i);
/* The constant tensor behind input i (an initializer or a Constant node's
 * value), or NULL. */
const Onnx__TensorProto *olla_shape_in_const(const olla_shape_ctx *c, int i);

/* ---- attributes (defaults when absent) ---- */
int olla_shape_attr_has(const olla_shape_ctx *c, const char *name);
int64_t olla_shape_attr_int(olla_shape_ctx *c, const char *name, int64_t dflt);
double olla_shape_attr_float(olla_shape_ctx *c, const char *name, double dflt);
/* NUL-terminated copy of a string attribute, or dflt. */
const char *olla_shape_attr_string(olla_shape_ctx *c, const char *name, const char *dflt);
/* Count of a list attribute and its items in *out; -1 when absent. */
int64_t olla_shape_attr_ints(olla_shape_ctx *c, const char *name, const int64_t **out);
int64_t olla_shape_attr_floats(olla_shape_ctx *c, const char *name, const float **out);
int64_t olla_shape_attr_strings(olla_shape_ctx *c, const char *name, const ProtobufCBinaryData **out);
const Onnx__TensorProto *olla_shape_attr_tensor(olla_shape_ctx *c, const char *name);
const Onnx__GraphProto *olla_shape_attr_graph(olla_shape_ctx *c, const char *name);
/* The raw attribute (NULL when absent), for unusual cases. */
const Onnx__AttributeProto *olla_shape_attr(const olla_shape_ctx *c, const char *name);

/* ---- outputs ---- */
/* Tensor output: element type (0 if unknown), rank (-1 if unknown), dims. */
olla_status olla_shape_set_out(olla_shape_ctx *c, int i, int32_t elem_type, int rank, const olla_dim *dims);
/* Copies a whole type (any kind). */
olla_status olla_shape_set_out_type(olla_shape_ctx *c, int i, const olla_value_type *t);
/* Output i has the type of input j (no-op when input j is absent). */
olla_status olla_shape_pass(olla_shape_ctx *c, int i, int j);
/* Non-tensor output (sequence, map, optional, sparse): kind and, for
 * sequences/optionals of tensors, the element type when known. */
olla_status olla_shape_set_out_kind(olla_shape_ctx *c, int i, olla_value_kind kind, int32_t elem_type);
/* Partially evaluated value of output i (set its type first; n must equal
 * the number of elements of that type). Ignored when n exceeds the limit. */
olla_status olla_shape_set_out_value(olla_shape_ctx *c, int i, const olla_sval *e, int64_t n);
/* Output i is the constant tensor tp (type and, when small, value). */
olla_status olla_shape_set_out_tensor(olla_shape_ctx *c, int i, const Onnx__TensorProto *tp);
/* Marks output i unknown with a reason ("data-dependent output of NonZero",
 * ...). The engine prefixes the tensor and node. printf-style. */
void olla_shape_set_unknown(olla_shape_ctx *c, int i, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Rejects the node as malformed: records an OLLA_ERR_INPUT naming the node;
 * returns OLLA_ERR_INPUT so a rule can `return olla_shape_fail(...)`. */
olla_status olla_shape_fail(olla_shape_ctx *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* ---- helpers ---- */
/* Memory freed after the rule returns (NULL on OOM; zeroed). */
void *olla_shape_scratch(olla_shape_ctx *c, size_t bytes);
/* A string that lives as long as the table. */
const char *olla_shape_intern(olla_shape_ctx *c, const char *s);

/* Shape values (passes/shapes/shape_ctx.c): unknown, a known integer, a
 * dim's value (known, symbolic or unknown), and a value as a dim (a known
 * negative value is an unknown dim). */
olla_sval olla_sval_unknown(void);
olla_sval olla_sval_int(int64_t v);
olla_sval olla_sval_of_dim(olla_dim d);
olla_dim olla_dim_of_sval(olla_sval s);

/* Dims (passes/shapes/dim_expr.c). */
olla_dim olla_dim_known(int64_t v);
olla_dim olla_dim_unknown(void);
int olla_dim_is_known(olla_dim d);
int olla_dim_equal(olla_dim a, olla_dim b); /* both known equal, or same symbol */
/* Arithmetic: known when both known; symbolic expressions otherwise when
 * possible (a*1 = a, a+0 = a, a*k/k = a, "batch*4"...), else unknown. */
olla_dim olla_dim_add(olla_shape_ctx *c, olla_dim a, olla_dim b);
olla_dim olla_dim_sub(olla_shape_ctx *c, olla_dim a, olla_dim b);
olla_dim olla_dim_mul(olla_shape_ctx *c, olla_dim a, olla_dim b);
olla_dim olla_dim_div(olla_shape_ctx *c, olla_dim a, olla_dim b); /* floor division */
olla_dim olla_dim_ceil_div(olla_shape_ctx *c, olla_dim a, olla_dim b);

/* Multidirectional (numpy) broadcasting of inputs idx[0..n) (absent inputs
 * skipped). Sets *rank (-1 when some rank is unknown) and fills dims (room
 * for OLLA_SHAPE_MAX_RANK). Returns 0 on success, -1 on incompatible static
 * dims (then call olla_shape_fail). */
#define OLLA_SHAPE_MAX_RANK 64
int olla_shape_broadcast(olla_shape_ctx *c, const int *idx, int n, int *rank, olla_dim *dims);
/* Normalizes axis into [0, rank) (negative counts from the end). Returns 1 on
 * success, 0 when out of range. */
int olla_shape_axis(int64_t axis, int rank, int64_t *out);
/* Flat index into input type `in` of element `flat` of `out`, which `in`
 * broadcasts to (both static). */
int64_t olla_shape_bcast_index(const olla_value_type *in, const olla_value_type *out, int64_t flat);
/* Reads the first element of a small constant tensor; 0 when unreadable. */
int olla_shape_tensor_scalar(const Onnx__TensorProto *tp, olla_sval *out);
/* double -> int64 without undefined behaviour: truncates, saturates at
 * +-9e18, NaN gives 0. */
int64_t olla_shape_f2i(double f);
/* Number of elements as a dim (product of dims). */
olla_dim olla_shape_numel(olla_shape_ctx *c, const olla_value_type *t);

/* Subgraph inference (If/Loop/Scan bodies and other graph attributes):
 * infers g with the given types for its formal inputs (n_in entries; NULL
 * entries mean "use the declared input type"), outer-scope values visible.
 * out_types receives g's n_output output types (valid until the rule
 * returns; entries may have rank -1). */
olla_status olla_shape_infer_subgraph(olla_shape_ctx *c, const Onnx__GraphProto *g,
                                      const olla_value_type *const *in_types, int n_in,
                                      const olla_value_type ***out_types);

/* Same, with each output's partially evaluated value (NULL if none) and the
 * reason it has no size (NULL when sized). */
typedef struct olla_shape_sub_out {
    const olla_value_type *type;
    const olla_shape_value *value;
    const char *reason;
} olla_shape_sub_out;
olla_status olla_shape_infer_subgraph_ex(olla_shape_ctx *c, const Onnx__GraphProto *g,
                                         const olla_value_type *const *in_types, int n_in,
                                         const olla_shape_sub_out **outs);

/* Runs the rule of another operator (domain, op at opset) on this node, for
 * contrib operators that behave like a standard one (ReduceSumTraining is
 * ReduceSum at opset 13). */
olla_status olla_shape_delegate(olla_shape_ctx *c, const char *domain, const char *op, int64_t opset);

/* ---- registry ---- */
/* Finds the rule for (domain, op_type); NULL when none. */
olla_shape_rule_fn olla_shape_find_rule(const char *domain, const char *op_type);
/* Every family table, for tests that walk all rules; *n gets the count. */
const olla_shape_rule_entry *const *olla_shape_rule_families(size_t *n);

/* Family tables (passes/shapes/shape_<family>.c). */
extern const olla_shape_rule_entry olla_shape_rules_elementwise[];
extern const olla_shape_rule_entry olla_shape_rules_manip[];
extern const olla_shape_rule_entry olla_shape_rules_linalg[];
extern const olla_shape_rule_entry olla_shape_rules_reduce[];
extern const olla_shape_rule_entry olla_shape_rules_control[];
extern const olla_shape_rule_entry olla_shape_rules_training[];
extern const olla_shape_rule_entry olla_shape_rules_conv[];
extern const olla_shape_rule_entry olla_shape_rules_norm[];
extern const olla_shape_rule_entry olla_shape_rules_rnn[];
extern const olla_shape_rule_entry olla_shape_rules_resize[];
extern const olla_shape_rule_entry olla_shape_rules_datadep[];
extern const olla_shape_rule_entry olla_shape_rules_quant[];
extern const olla_shape_rule_entry olla_shape_rules_random[];
extern const olla_shape_rule_entry olla_shape_rules_signal[];
extern const olla_shape_rule_entry olla_shape_rules_seq[];
extern const olla_shape_rule_entry olla_shape_rules_misc[];
extern const olla_shape_rule_entry olla_shape_rules_extra[];
extern const olla_shape_rule_entry olla_shape_rules_aten[];

#endif
