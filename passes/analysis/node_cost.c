/* olla-onnx: estimated cost of a node (olla_node_cost.h). */
#include "passes/analysis/olla_node_cost.h"

#include <string.h>

/* The type of slot k of op's explicit inputs (or outputs), NULL when
 * absent or not a tensor of known rank. */
static const olla_value_type *slot_type(const olla_graph *g, int op, int k, int output)
{
    const olla_op *o = &g->ops[op];
    int n = output ? o->n_outputs : o->n_explicit_inputs;
    if (k < 0 || k >= n)
        return NULL;
    int t = output ? g->output_list[o->first_output + k] : g->input_list[o->first_input + k];
    if (t < 0)
        return NULL;
    const olla_value_type *ty = &g->tensors[t].type;
    return ty->kind == OLLA_VALUE_TENSOR && ty->rank >= 0 ? ty : NULL;
}

/* Elements of a type; -1 when a dimension is unknown. */
static double elements(const olla_value_type *t)
{
    if (!t)
        return -1;
    double n = 1;
    for (int d = 0; d < t->rank; d++) {
        if (t->dims[d].value < 0)
            return -1;
        n *= (double)t->dims[d].value;
    }
    return n;
}

/* Dimension d of a type, counting from the end when d < 0; -1 unknown. */
static double dim_at(const olla_value_type *t, int d)
{
    if (!t)
        return -1;
    int i = d < 0 ? t->rank + d : d;
    return i >= 0 && i < t->rank && t->dims[i].value >= 0 ? (double)t->dims[i].value : -1;
}

/* The contracted length of a matrix product A x B: A's last dimension, or
 * its second last when A is used transposed (the one that matches B). */
static double contracted(const olla_value_type *a, const olla_value_type *b)
{
    double last = dim_at(a, -1), second = a && a->rank >= 2 ? dim_at(a, -2) : -1;
    if (b && b->rank >= 2 && second >= 0 && last != dim_at(b, -2) && last != dim_at(b, -1) &&
        (second == dim_at(b, -2) || second == dim_at(b, -1)))
        return second;
    return last;
}

static int is(const olla_op *o, const char *domain, const char *type)
{
    const char *d = o->domain && strcmp(o->domain, "ai.onnx") != 0 ? o->domain : "";
    return strcmp(d, domain) == 0 && strcmp(o->op_type, type) == 0;
}

/* 2 x output elements x the weights each output element reads: Conv's
 * weight is [Cout, Cin/group, k...]. */
static double conv_flops(const olla_value_type *y, const olla_value_type *w)
{
    double ny = elements(y), nw = elements(w), cout = dim_at(w, 0);
    return ny < 0 || nw < 0 || cout <= 0 ? -1 : 2.0 * ny * (nw / cout);
}

static double product_flops(const olla_graph *g, int op)
{
    const olla_op *o = &g->ops[op];
    const olla_value_type *a = slot_type(g, op, 0, 0), *b = slot_type(g, op, 1, 0), *y = slot_type(g, op, 0, 1);
    double ny = elements(y);
    if (is(o, "", "Conv") || is(o, "com.microsoft", "FusedConv"))
        return conv_flops(y, b);
    if (is(o, "", "ConvTranspose")) { /* weight [Cin, Cout/group, k...]: each input element meets Cout/g*k */
        double nx = elements(a), nw = elements(b), cin = dim_at(b, 0);
        return nx < 0 || nw < 0 || cin <= 0 ? -1 : 2.0 * nx * (nw / cin);
    }
    if (is(o, "com.microsoft", "ConvGrad")) /* dY, X, W: the input's and the weights' gradients */
        return 2.0 * conv_flops(a, slot_type(g, op, 2, 0));
    if (is(o, "", "MatMul") || is(o, "", "MatMulInteger") || is(o, "com.microsoft", "FusedMatMul") ||
        is(o, "com.microsoft", "TransposeMatMul") || is(o, "", "Gemm") || is(o, "com.microsoft", "FusedGemm")) {
        double k = contracted(a, b);
        return ny < 0 || k < 0 ? -1 : 2.0 * ny * k;
    }
    if (is(o, "org.pytorch.aten", "ATen")) { /* baddbmm(self, batch1, batch2): batch1 [b, n, m] */
        const olla_value_type *b1 = slot_type(g, op, 1, 0), *b2 = slot_type(g, op, 2, 0);
        if (b1 && b2 && b1->rank == 3 && b2->rank == 3 && dim_at(b1, 2) == dim_at(b2, 1)) {
            double k = dim_at(b1, 2);
            return ny < 0 || k < 0 ? -1 : 2.0 * ny * k;
        }
        return -1;
    }
    if (is(o, "", "Attention") || is(o, "com.microsoft", "MultiHeadAttention")) {
        /* Q [.., S, D] against K [.., S_kv, D]: Q K^T and then P V, 2 flops each */
        const olla_value_type *k = b;
        double nq = elements(a), skv = k && k->rank >= 3 ? dim_at(k, k->rank == 4 ? -2 : 1) : -1;
        return nq < 0 || skv < 0 ? -1 : 4.0 * nq * skv;
    }
    return -1;
}

double olla_node_cost(const olla_graph *g, int op)
{
    double flops = product_flops(g, op);
    if (flops >= 1)
        return flops;
    const olla_op *o = &g->ops[op];
    double written = 0;
    for (int k = 0; k < o->n_outputs; k++) {
        double n = elements(slot_type(g, op, k, 1));
        if (n > 0)
            written += n;
    }
    return written >= 1 ? written : 1;
}
