/* olla-onnx: shape rules for sequence and optional values. These values are
 * not planned (their kind is not tensor); the table keeps their kind and the
 * element type of their tensors. Tensors taken out of a sequence have an
 * unknown shape. */
#include "passes/shapes/olla_shape_rules.h"

/* Element type of input i whatever its kind. */
static int32_t elem_of(olla_shape_ctx *c, int i)
{
    const olla_value_type *t = olla_shape_in(c, i);
    return t ? t->elem_type : 0;
}

static olla_status rule_sequence_empty(olla_shape_ctx *c)
{
    return olla_shape_set_out_kind(c, 0, OLLA_VALUE_SEQUENCE,
                                   (int32_t)olla_shape_attr_int(c, "dtype", OLLA_DT_FLOAT));
}

/* SequenceConstruct, SplitToSequence: a sequence of input 0's element type. */
static olla_status rule_sequence_of_input(olla_shape_ctx *c)
{
    return olla_shape_set_out_kind(c, 0, OLLA_VALUE_SEQUENCE, elem_of(c, 0));
}

static olla_status rule_sequence_insert(olla_shape_ctx *c)
{
    int32_t e = elem_of(c, 0);
    if (!e) e = elem_of(c, 1);
    return olla_shape_set_out_kind(c, 0, OLLA_VALUE_SEQUENCE, e);
}

static olla_status rule_sequence_at(olla_shape_ctx *c)
{
    olla_status st = olla_shape_set_out(c, 0, elem_of(c, 0), -1, NULL);
    if (st == OLLA_OK)
        olla_shape_set_unknown(c, 0, "element of sequence '%s' (element shapes are not tracked)",
                               olla_shape_input_name(c, 0));
    return st;
}

static olla_status rule_sequence_length(olla_shape_ctx *c)
{
    return olla_shape_set_out(c, 0, OLLA_DT_INT64, 0, NULL);
}

static olla_status rule_concat_from_sequence(olla_shape_ctx *c)
{
    olla_status st = olla_shape_set_out(c, 0, elem_of(c, 0), -1, NULL);
    if (st == OLLA_OK)
        olla_shape_set_unknown(c, 0, "concatenation of the elements of sequence '%s'",
                               olla_shape_input_name(c, 0));
    return st;
}

/* Optional: wraps input 0, or is empty of the type given by 'type'. */
static olla_status rule_optional(olla_shape_ctx *c)
{
    int32_t e = olla_shape_has_input(c, 0) ? elem_of(c, 0) : 0;
    const Onnx__AttributeProto *a = olla_shape_attr(c, "type");
    if (!e && a && a->tp) {
        const Onnx__TypeProto *tp = a->tp;
        if (tp->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE && tp->tensor_type)
            e = tp->tensor_type->elem_type;
        else if (tp->value_case == ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE && tp->sequence_type &&
                 tp->sequence_type->elem_type &&
                 tp->sequence_type->elem_type->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE &&
                 tp->sequence_type->elem_type->tensor_type)
            e = tp->sequence_type->elem_type->tensor_type->elem_type;
    }
    return olla_shape_set_out_kind(c, 0, OLLA_VALUE_OPTIONAL, e);
}

static olla_status rule_optional_has_element(olla_shape_ctx *c)
{
    return olla_shape_set_out(c, 0, OLLA_DT_BOOL, 0, NULL);
}

/* OptionalGetElement: a tensor or sequence passes through (opset 18); the
 * content of an optional is a tensor of its element type. */
static olla_status rule_optional_get_element(olla_shape_ctx *c)
{
    const olla_value_type *t = olla_shape_in(c, 0);
    if (t && t->kind != OLLA_VALUE_OPTIONAL) return olla_shape_pass(c, 0, 0);
    olla_status st = olla_shape_set_out(c, 0, t ? t->elem_type : 0, -1, NULL);
    if (st == OLLA_OK)
        olla_shape_set_unknown(c, 0, "content of optional '%s' (its shape is not tracked)",
                               olla_shape_input_name(c, 0));
    return st;
}

/* SequenceMap: runs the body on one element of each sequence input (tensor
 * inputs as they are); every output is a sequence of the body output's type. */
static olla_status rule_sequence_map(olla_shape_ctx *c)
{
    const Onnx__GraphProto *body = olla_shape_attr_graph(c, "body");
    if (!body) return olla_shape_fail(c, "attribute 'body' is missing");
    int n = olla_shape_n_inputs(c);
    const olla_value_type **in = olla_shape_scratch(c, sizeof *in * (size_t)(n ? n : 1));
    olla_value_type *elems = olla_shape_scratch(c, sizeof *elems * (size_t)(n ? n : 1));
    if (!in || !elems) return OLLA_ERR_INTERNAL;
    for (int i = 0; i < n; i++) {
        const olla_value_type *t = olla_shape_in(c, i);
        if (t && t->kind == OLLA_VALUE_SEQUENCE) {
            elems[i].kind = OLLA_VALUE_TENSOR;
            elems[i].elem_type = t->elem_type;
            elems[i].rank = -1;
            elems[i].dims = NULL;
            in[i] = &elems[i];
        } else {
            in[i] = t;
        }
    }
    const olla_value_type **outs = NULL;
    olla_status st = olla_shape_infer_subgraph(c, body, in, n, &outs);
    if (st != OLLA_OK) return st;
    for (int o = 0; o < olla_shape_n_outputs(c) && st == OLLA_OK; o++) {
        int32_t e = (outs && (size_t)o < body->n_output && outs[o]) ? outs[o]->elem_type : 0;
        st = olla_shape_set_out_kind(c, o, OLLA_VALUE_SEQUENCE, e);
    }
    return st;
}

const olla_shape_rule_entry olla_shape_rules_seq[] = {
    {"", "SequenceEmpty", rule_sequence_empty},
    {"", "SequenceConstruct", rule_sequence_of_input},
    {"", "SplitToSequence", rule_sequence_of_input},
    {"", "SequenceInsert", rule_sequence_insert},
    {"", "SequenceErase", rule_sequence_insert},
    {"", "SequenceAt", rule_sequence_at},
    {"", "SequenceLength", rule_sequence_length},
    {"", "ConcatFromSequence", rule_concat_from_sequence},
    {"", "Optional", rule_optional},
    {"", "OptionalHasElement", rule_optional_has_element},
    {"", "OptionalGetElement", rule_optional_get_element},
    {"", "SequenceMap", rule_sequence_map},
    {NULL, NULL, NULL}};
