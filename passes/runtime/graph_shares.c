/* olla-onnx: the sharing rules applied to the nodes of a graph. */
#include "passes/runtime/olla_graph_shares.h"

#include <stdlib.h>
#include <string.h>

#include "passes/runtime/olla_sharing.h"
#include "util/olla_grow.h"

#define MAX_RULES_PER_NODE 16

/* The rules that apply to op; returns how many (at most max). */
static int rules_of(const olla_graph *g, int op, const olla_share_rule **out, int max)
{
    const olla_op *o = &g->ops[op];
    int first = o->n_outputs > 0 ? g->output_list[o->first_output] : -1;
    int32_t elem = first >= 0 ? g->tensors[first].type.elem_type : 0;
    int64_t opset = olla_model_opset(g->model->proto, o->domain);
    int n = olla_share_rules_for(o->domain, o->op_type, opset, elem, out, max);
    return n < max ? n : max;
}

olla_status olla_graph_shares(const olla_graph *g, olla_op_share **shares, int *n_shares, olla_error *err)
{
    *shares = NULL;
    *n_shares = 0;
    size_t cap = 0;
    for (int op = 0; op < g->n_ops; op++) {
        const olla_share_rule *r[MAX_RULES_PER_NODE];
        int nr = rules_of(g, op, r, MAX_RULES_PER_NODE);
        for (int i = 0; i < nr; i++)
            for (int out = 0; out < g->ops[op].n_outputs; out++) {
                int in = olla_share_rule_input(r[i], out);
                if (in < 0)
                    continue;
                olla_op_share *p = olla_grow(*shares, &cap, (size_t)*n_shares + 1, sizeof *p);
                if (!p) {
                    free(*shares);
                    *shares = NULL;
                    *n_shares = 0;
                    return olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory listing buffer shares");
                }
                *shares = p;
                (*shares)[(*n_shares)++] = (olla_op_share){op, in, out, r[i]->kind == OLLA_SHARE_INPLACE};
            }
    }
    return OLLA_OK;
}

const olla_share_rule *olla_graph_share_rule(const olla_graph *g, int op, int input, int output, int inplace)
{
    const olla_share_rule *r[MAX_RULES_PER_NODE];
    int nr = rules_of(g, op, r, MAX_RULES_PER_NODE);
    for (int i = 0; i < nr; i++)
        if ((r[i]->kind == OLLA_SHARE_INPLACE) == (inplace != 0) && olla_share_rule_input(r[i], output) == input)
            return r[i];
    return NULL;
}

/* The tensor in input slot k of op, or -1. */
static int share_input(const olla_graph *g, const olla_op_share *s)
{
    const olla_op *o = &g->ops[s->op];
    return s->input < o->n_explicit_inputs ? g->input_list[o->first_input + s->input] : -1;
}

static int share_output(const olla_graph *g, const olla_op_share *s)
{
    const olla_op *o = &g->ops[s->op];
    return s->output < o->n_outputs ? g->output_list[o->first_output + s->output] : -1;
}

int olla_graph_shares_held_views(const olla_graph *g, olla_op_share *shares, int n_shares)
{
    unsigned char *held = calloc((size_t)g->n_tensors + 1, 1), *keep = calloc((size_t)n_shares + 1, 1);
    int n = 0;
    if (!held || !keep) { /* keeping none only makes views copies: never below the truth */
        free(held);
        free(keep);
        return 0;
    }
    for (int t = 0; t < g->n_tensors; t++)
        held[t] = (unsigned char)olla_tensor_is_held(g, t);
    /* chains of views: until nothing changes (each pass follows one more link) */
    for (int changed = 1; changed;) {
        changed = 0;
        for (int i = 0; i < n_shares; i++) {
            int in = share_input(g, &shares[i]), out = share_output(g, &shares[i]);
            if (keep[i] || shares[i].inplace || in < 0 || out < 0 || !held[in] || g->tensors[in].bytes < 0 ||
                g->tensors[in].bytes != g->tensors[out].bytes)
                continue; /* the DAG takes a view only between equal known sizes */
            keep[i] = 1;
            changed |= !held[out];
            held[out] = 1;
        }
    }
    for (int i = 0; i < n_shares; i++)
        if (keep[i])
            shares[n++] = shares[i];
    free(held);
    free(keep);
    return n;
}
