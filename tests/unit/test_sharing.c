/* Planning under buffer sharing, end to end on random small models: views
 * (Identity) alias their input, Relu and Sigmoid may write in place, Add and
 * Neg get buffers of their own. For every topological order the DAG's peak
 * must equal a naive runtime simulation written here from the rules alone;
 * the exact searches must reach the least of those peaks, and no lower bound
 * may exceed it. The checker must accept the planner's plans and reject each
 * kind of illegal share. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dag_eval.h"
#include "model_builder.h"
#include "olla.h"
#include "olla_test.h"
#include "onnx/olla_graph.h"
#include "onnx/olla_model.h"
#include "passes/analysis/olla_analysis.h"
#include "passes/analysis/olla_graph_dag.h"
#include "passes/runtime/olla_graph_shares.h"
#include "passes/shapes/olla_shapes.h"
#include "plan/olla_verify.h"
#include "solver/olla_schedule.h"
#include "test_sched_util.h"

typedef struct {
    mb_model mb;
    olla_model *m;
    olla_shape_table *types;
    olla_graph *g;
    olla_dag dag;
    olla_graph_dag_map map;
} fixture;

static void fixture_free(fixture *f)
{
    olla_graph_dag_map_free(&f->map);
    olla_dag_free(&f->dag);
    olla_graph_free(f->g);
    olla_shape_table_free(f->types);
    olla_model_free(f->m);
    mb_free(&f->mb);
}

/* Loads the built model and makes its DAG under the sharing rules. */
static int fixture_build(fixture *f)
{
    olla_error err = {0};
    size_t len;
    uint8_t *buf = mb_pack(&f->mb, &len);
    olla_status st = olla_model_load_buffer(buf, len, "sharing.onnx", ".", &f->m, &err);
    free(buf);
    if (st == OLLA_OK)
        st = olla_infer_shapes(f->m->proto, NULL, &f->types, &err);
    olla_type_source src = olla_shape_type_source(f->types);
    if (st == OLLA_OK)
        st = olla_graph_build(f->m, &src, &f->g, &err);
    olla_op_share *shares = NULL;
    int n_shares = 0;
    if (st == OLLA_OK)
        st = olla_graph_shares(f->g, &shares, &n_shares, &err);
    if (st == OLLA_OK)
        st = olla_graph_dag(f->g, 1, &(olla_dag_sharing){shares, n_shares, NULL}, &f->dag, &f->map, &err);
    free(shares);
    if (st != OLLA_OK)
        fprintf(stderr, "fixture: %s\n", err.message);
    return st == OLLA_OK;
}

static const char *const OPS[] = {"Relu", "Identity", "Add", "Neg", "Sigmoid"};

/* n nodes over two inputs of 10 and 25 floats; every tensor keeps its
 * input's size; some outputs are graph outputs. */
static void random_model(fixture *f, uint64_t seed, int n)
{
    tsu_state = seed * 7919u + 3u;
    mb_init(&f->mb, 17);
    mb_input(&f->mb, "x0", 10);
    mb_input(&f->mb, "x1", 25);
    char names[24][16];
    long long size[24];
    int count = 2;
    snprintf(names[0], 8, "x0");
    snprintf(names[1], 8, "x1");
    size[0] = 10;
    size[1] = 25;
    for (int v = 0; v < n; v++) {
        const char *op = OPS[tsu_rand() % 5];
        int a = (int)(tsu_rand() % (unsigned)count), b = a;
        for (int tries = 0; tries < 8 && (b == a || size[b] != size[a]); tries++)
            b = (int)(tsu_rand() % (unsigned)count);
        if (strcmp(op, "Add") == 0 && (b == a || size[b] != size[a]))
            op = "Neg";
        char ins[40], node[16];
        snprintf(ins, sizeof ins, strcmp(op, "Add") == 0 ? "%s,%s" : "%s", names[a], names[b]);
        snprintf(names[count], sizeof names[count], "t%d", v);
        snprintf(node, sizeof node, "n%d", v);
        size[count] = size[a];
        mb_node(&f->mb, op, node, ins, names[count]);
        if (tsu_rand() % 4 == 0)
            mb_output(&f->mb, names[count], size[count]);
        count++;
    }
    /* the last tensor is always an output, so that the graph ends somewhere */
    mb_output(&f->mb, names[count - 1], size[count - 1]);
}

/* ---- the naive runtime: executes an order of the graph's ops ---- */

typedef struct {
    const olla_graph *g;
    int *step, *buf, *last;
} naive;

static int op_is(const olla_graph *g, int op, const char *type)
{
    return strcmp(g->ops[op].op_type, type) == 0;
}

/* last step any reader of a tensor of buffer b runs (end for graph outputs) */
static int buffer_last(const naive *s, int b, int n_steps)
{
    const olla_graph *g = s->g;
    int last = -1;
    for (int t = 0; t < g->n_tensors; t++) {
        if (s->buf[t] != b)
            continue;
        if (g->tensors[t].is_output)
            return n_steps - 1;
        if (g->tensors[t].producer >= 0 && s->step[g->tensors[t].producer] > last)
            last = s->step[g->tensors[t].producer];
        for (int c = 0; c < g->tensors[t].n_consumers; c++) {
            int r = s->step[g->consumer_list[g->tensors[t].first_consumer + c]];
            if (r > last)
                last = r;
        }
    }
    return last;
}

/* Peak bytes of the order: an Identity output joins its input's buffer
 * (none when that is a graph input's); a Relu or Sigmoid output joins its
 * input's buffer when that buffer is a produced one holding no graph output
 * and no reader of it runs later; otherwise an output owns a buffer. A
 * buffer is live from its owner's step to its last reader's. */
static int64_t naive_peak(const olla_graph *g, const int *order)
{
    int n = g->n_ops, nt = g->n_tensors;
    naive s = {g, calloc((size_t)n, sizeof(int)), malloc((size_t)nt * sizeof(int)), NULL};
    int64_t *live = calloc((size_t)n + 1, sizeof(int64_t));
    for (int i = 0; i < n; i++)
        s.step[order[i]] = i;
    for (int t = 0; t < nt; t++)
        s.buf[t] = g->tensors[t].producer >= 0 ? t : -1; /* -1: caller-owned memory */
    for (int i = 0; i < n; i++) {
        int v = order[i];
        int in = g->input_list[g->ops[v].first_input], out = g->output_list[g->ops[v].first_output];
        if (op_is(g, v, "Identity")) {
            s.buf[out] = s.buf[in];
        } else if ((op_is(g, v, "Relu") || op_is(g, v, "Sigmoid")) && s.buf[in] >= 0) {
            int holds_output = 0;
            for (int t = 0; t < nt; t++)
                holds_output |= s.buf[t] == s.buf[in] && g->tensors[t].is_output;
            if (!holds_output && buffer_last(&s, s.buf[in], n) <= i)
                s.buf[out] = s.buf[in];
        }
    }
    for (int b = 0; b < nt; b++) {
        if (s.buf[b] != b)
            continue; /* only owners */
        int first = s.step[g->tensors[b].producer], last = buffer_last(&s, b, n);
        for (int i = first; i <= last; i++)
            live[i] += g->tensors[b].bytes;
    }
    int64_t peak = 0;
    for (int i = 0; i < n; i++)
        if (live[i] > peak)
            peak = live[i];
    free(s.step);
    free(s.buf);
    free(live);
    return peak;
}

typedef struct {
    const olla_graph *g;
    int mismatches;
    int64_t naive_best;
} order_visit;

static void visit(const olla_dag *dag, const int *order, void *ctx)
{
    order_visit *ov = ctx;
    int64_t a = peak_of(dag, order), b = naive_peak(ov->g, order);
    if (a != b && ov->mismatches++ < 3)
        fprintf(stderr, "order peak %lld, naive runtime %lld\n", (long long)a, (long long)b);
    if (ov->naive_best < 0 || b < ov->naive_best)
        ov->naive_best = b;
}

/* every bound at most the optimum, every exact search reaching it */
static void check_solvers(const olla_dag *dag, int64_t opt)
{
    olla_error err = {0};
    int order[16];
    int64_t peak = -1;
    int outcome = 0;
    OLLA_CHECK(olla_sched_exact_dp(dag, INT64_MAX, (olla_limit){1000000L, 0}, order, &peak, &outcome, &err) == OLLA_OK);
    OLLA_CHECK(outcome == OLLA_DP_FOUND);
    OLLA_CHECK_EQ_I64(peak, opt);
    OLLA_CHECK_EQ_I64(peak_of(dag, order), opt);
    olla_ilp_info info;
    OLLA_CHECK(olla_sched_ilp(&(olla_sched_ilp_problem){dag, NULL, 0}, &(olla_sched_ilp_settings){0, 0}, order, &info,
                              &err) == OLLA_OK);
    OLLA_CHECK(info.found && info.optimal);
    OLLA_CHECK_EQ_I64(peak_of(dag, order), opt);
    OLLA_CHECK(info.bound <= opt);
    olla_schedule_result res;
    OLLA_CHECK(olla_schedule(dag, NULL, NULL, order, &res, &err) == OLLA_OK);
    OLLA_CHECK_EQ_I64(res.peak_bytes, opt);
    OLLA_CHECK(res.lower_bound_bytes <= opt);
    OLLA_CHECK(olla_bound_node_io(dag) <= opt);
    olla_reach r;
    OLLA_CHECK(olla_reach_build(dag, &r, &err) == OLLA_OK);
    int64_t cb = 0, pb = 0;
    OLLA_CHECK(olla_bound_cut(dag, &r, NULL) <= opt);
    OLLA_CHECK(olla_bound_closure(dag, NULL, (olla_limit){0, 0}, &cb, NULL, &err) == OLLA_OK);
    OLLA_CHECK(cb <= opt);
    pb = cb;
    OLLA_CHECK(olla_bound_outputs(dag, NULL) <= opt);
    OLLA_CHECK(olla_bound_pairs(dag, order, opt, 16, (olla_limit){0, 0}, &pb, NULL, &err) == OLLA_OK);
    OLLA_CHECK(pb <= opt);
    olla_reach_free(&r);
}

OLLA_TEST(test_sharing_matches_naive_runtime_and_solvers_reach_it)
{
    int with_inplace = 0, with_views = 0, improved = 0;
    for (int seed = 0; seed < 60; seed++) {
        fixture f;
        memset(&f, 0, sizeof f);
        random_model(&f, (uint64_t)seed, 5 + seed % 4);
        if (!fixture_build(&f)) {
            OLLA_CHECK(0);
            fixture_free(&f);
            continue;
        }
        with_inplace += f.dag.n_inplace > 0;
        for (int e = 0; e < f.dag.n_tensors; e++)
            with_views += f.map.view_of[f.map.graph_tensor[e]] >= 0;
        order_visit ov = {f.g, 0, -1};
        int64_t opt = tsu_enumerate(&f.dag, NULL, NULL, visit, &ov);
        OLLA_CHECK_EQ_I64(ov.mismatches, 0);
        OLLA_CHECK_EQ_I64(opt, ov.naive_best);
        check_solvers(&f.dag, opt);
        int ident[16];
        olla_error err = {0};
        OLLA_CHECK(olla_dag_stable_topo(&f.dag, ident, &err) == OLLA_OK);
        improved += peak_of(&f.dag, ident) > opt;
        fixture_free(&f);
    }
    fprintf(stderr, "sharing: %d of 60 models with in-place candidates, %d views, %d improvable\n", with_inplace,
            with_views, improved);
    /* the generator must exercise what it tests */
    OLLA_CHECK(with_inplace > 20);
    OLLA_CHECK(with_views > 20);
    OLLA_CHECK(improved > 5);
}

/* x -> Relu(a) -> Relu(b) -> Neg(c); a is also read by Add(d) = a + c.
 * Listed order: the Add last, so Relu(b) cannot write over a. */
static void shared_model(fixture *f)
{
    memset(f, 0, sizeof *f);
    mb_init(&f->mb, 17);
    mb_input(&f->mb, "x", 16);
    mb_node(&f->mb, "Relu", "r1", "x", "a");
    mb_node(&f->mb, "Identity", "id", "a", "v");
    mb_node(&f->mb, "Relu", "r2", "v", "b");
    mb_node(&f->mb, "Neg", "ng", "b", "c");
    mb_node(&f->mb, "Add", "ad", "a,c", "d");
    mb_node(&f->mb, "Identity", "idx", "x", "xv");
    mb_node(&f->mb, "Relu", "r3", "xv", "e");
    mb_output(&f->mb, "d", 16);
    mb_output(&f->mb, "e", 16);
}

typedef struct {
    int64_t offset[16], bytes[16];
    unsigned char share[16];
    int shares[16];
} layout_arrays;

/* a plan laid out by hand: every tensor its own 64-byte slot, none shared */
static void own_slots(const olla_graph *g, layout_arrays *a)
{
    int n = g->n_tensors;
    OLLA_CHECK(n <= (int)(sizeof a->share / sizeof *a->share));
    if (n > (int)(sizeof a->share / sizeof *a->share))
        n = (int)(sizeof a->share / sizeof *a->share);
    memset(a->share, OLLA_BUFFER_OWN, sizeof a->share);
    for (int t = 0; t < n; t++) {
        a->offset[t] = g->tensors[t].producer >= 0 ? 64 * t : -1;
        a->bytes[t] = g->tensors[t].bytes;
        a->shares[t] = -1;
    }
}

static olla_status verify(const fixture *f, layout_arrays *a, int sharing, olla_error *err)
{
    int order[16];
    for (int i = 0; i < f->g->n_ops; i++)
        order[i] = i;
    olla_plan_layout lay = {order, a->offset, a->bytes, a->share, a->shares, 64 * 16, 1, sharing, NULL};
    olla_error_clear(err);
    return olla_plan_verify(f->g, &lay, NULL, err);
}

static int tensor(const olla_graph *g, const char *name)
{
    return olla_strmap_get(&g->by_name, name);
}

static void share(layout_arrays *a, int t, int s, olla_buffer_share kind)
{
    a->offset[t] = a->offset[s];
    a->share[t] = (unsigned char)kind;
    a->shares[t] = s;
}

OLLA_TEST(test_checker_judges_each_share)
{
    fixture f;
    shared_model(&f);
    OLLA_CHECK(fixture_build(&f));
    if (!f.g) {
        fixture_free(&f);
        return;
    }
    const olla_graph *g = f.g;
    int a = tensor(g, "a"), v = tensor(g, "v"), b = tensor(g, "b"), c = tensor(g, "c"), xv = tensor(g, "xv"),
        e = tensor(g, "e"), x = tensor(g, "x");
    olla_error err = {0};
    layout_arrays la;
    own_slots(g, &la);
    /* under sharing, a view of a graph input takes no arena memory */
    OLLA_CHECK(verify(&f, &la, 1, &err) == OLLA_ERR_INPUT);
    OLLA_CHECK_STR_CONTAINS(err.message, "'xv'");
    la.offset[xv] = -1;
    OLLA_CHECK(verify(&f, &la, 1, &err) == OLLA_OK);
    /* a legal view */
    share(&la, v, a, OLLA_BUFFER_VIEW);
    OLLA_CHECK(verify(&f, &la, 1, &err) == OLLA_OK);
    /* in place over an input read later (a is read by the Add, through v too) */
    share(&la, b, v, OLLA_BUFFER_INPLACE);
    OLLA_CHECK(verify(&f, &la, 1, &err) == OLLA_ERR_INPUT);
    OLLA_CHECK_STR_CONTAINS(err.message, "'b' is written in place over 'v'");
    OLLA_CHECK_STR_CONTAINS(err.message, "reads 'a' later");
    own_slots(g, &la);
    la.offset[xv] = -1;
    /* in place over a view of a graph input */
    share(&la, e, x, OLLA_BUFFER_INPLACE);
    OLLA_CHECK(verify(&f, &la, 1, &err) == OLLA_ERR_INPUT);
    own_slots(g, &la);
    la.offset[xv] = -1;
    /* an op with no rule: Neg does not run in place */
    share(&la, c, b, OLLA_BUFFER_INPLACE);
    OLLA_CHECK(verify(&f, &la, 1, &err) == OLLA_ERR_INPUT);
    OLLA_CHECK_STR_CONTAINS(err.message, "no sharing rule of node 'ng' (Neg)");
    own_slots(g, &la);
    la.offset[xv] = -1;
    /* a view at a different offset */
    share(&la, v, a, OLLA_BUFFER_VIEW);
    la.offset[v] = 64 * 15;
    OLLA_CHECK(verify(&f, &la, 1, &err) == OLLA_ERR_INPUT);
    OLLA_CHECK_STR_CONTAINS(err.message, "differ");
    /* an undeclared overlap is still an overlap */
    own_slots(g, &la);
    la.offset[xv] = -1;
    la.offset[b] = la.offset[a];
    OLLA_CHECK(verify(&f, &la, 1, &err) == OLLA_ERR_INPUT);
    OLLA_CHECK_STR_CONTAINS(err.message, "overlaps");
    fixture_free(&f);
}

/* in place over an input of another size: Relu of a 16-float tensor into a
 * view that declares 8 floats cannot happen, so build one with a Reshape */
OLLA_TEST(test_checker_rejects_share_of_other_size)
{
    fixture f;
    memset(&f, 0, sizeof f);
    mb_init(&f.mb, 17);
    mb_input(&f.mb, "x", 16);
    mb_node(&f.mb, "Relu", "r1", "x", "a");
    mb_node(&f.mb, "Neg", "n1", "a", "b");
    mb_node(&f.mb, "Relu", "r2", "b", "c");
    mb_info(&f.mb, "c", 8); /* declared smaller than its input */
    mb_output(&f.mb, "c", 8);
    OLLA_CHECK(fixture_build(&f));
    if (f.g) {
        layout_arrays la;
        own_slots(f.g, &la);
        int b = tensor(f.g, "b"), c = tensor(f.g, "c");
        olla_error err = {0};
        if (f.g->tensors[b].bytes != f.g->tensors[c].bytes) {
            share(&la, c, b, OLLA_BUFFER_INPLACE);
            OLLA_CHECK(verify(&f, &la, 1, &err) == OLLA_ERR_INPUT);
            OLLA_CHECK_STR_CONTAINS(err.message, "sizes");
        }
        /* the DAG never offers such a candidate */
        for (int k = 0; k < f.dag.n_inplace; k++)
            OLLA_CHECK(f.dag.bytes[f.dag.inplace_in[k]] == f.dag.bytes[f.dag.inplace_out[k]]);
    }
    fixture_free(&f);
}

/* The whole pipeline on a chain with a view and in-place writes: the plan
 * passes its own check, makes them, and is smaller than the same model
 * planned with every tensor in a buffer of its own. */
OLLA_TEST(test_pipeline_plans_shares)
{
    fixture f;
    memset(&f, 0, sizeof f);
    mb_init(&f.mb, 17);
    mb_input(&f.mb, "x", 16);
    mb_node(&f.mb, "Neg", "n1", "x", "a");
    mb_node(&f.mb, "Relu", "r1", "a", "b");
    mb_node(&f.mb, "Identity", "id", "b", "bv");
    mb_node(&f.mb, "Sigmoid", "s1", "bv", "c");
    mb_node(&f.mb, "Identity", "idx", "x", "xv");
    mb_output(&f.mb, "c", 16);
    mb_output(&f.mb, "xv", 16);
    size_t len;
    uint8_t *buf = mb_pack(&f.mb, &len);
    olla_error err = {0};
    OLLA_CHECK(olla_model_load_buffer(buf, len, "shared.onnx", ".", &f.m, &err) == OLLA_OK);
    free(buf);
    olla_options opt;
    olla_options_init(&opt);
    opt.alignment = 1;
    opt.verbosity = 0;
    olla_plan *plan = NULL, *plain = NULL;
    olla_report rep, rep_plain;
    OLLA_CHECK(olla_optimize(f.m, &opt, &plan, &rep, &err) == OLLA_OK);
    opt.sharing = OLLA_SHARING_NONE;
    OLLA_CHECK(olla_optimize(f.m, &opt, &plain, &rep_plain, &err) == OLLA_OK);
    if (plan && plain) {
        OLLA_CHECK(plan->sharing == 1 && plain->sharing == 0);
        OLLA_CHECK(rep.views >= 1 && rep.inplace >= 1);
        OLLA_CHECK_EQ_I64(rep_plain.views + rep_plain.inplace, 0);
        OLLA_CHECK(rep.arena_bytes < rep_plain.arena_bytes);
        OLLA_CHECK(rep.input_order_shared_peak_bytes < rep.input_order_peak_bytes);
        OLLA_CHECK_EQ_I64(rep.input_order_peak_bytes, rep_plain.input_order_peak_bytes);
        OLLA_CHECK(rep.peak_bytes <= rep.input_order_shared_peak_bytes);
        OLLA_CHECK_EQ_I64(rep.arena_bytes, 64);        /* one buffer throughout */
        OLLA_CHECK_EQ_I64(rep_plain.arena_bytes, 128); /* each node's input and output */
        /* xv, a view of the graph input, is not planned */
        for (int i = 0; i < plan->n_entries; i++)
            OLLA_CHECK(strcmp(plan->entries[i].name, "xv") != 0);
    }
    olla_plan_free(plan);
    olla_plan_free(plain);
    olla_report_clear(&rep);
    olla_report_clear(&rep_plain);
    olla_model_free(f.m);
    mb_free(&f.mb);
}

/* n nodes over two graph inputs (10 and 25 floats) and two Constants of the
 * same sizes, listed first; every tensor keeps its input's size. */
static void random_model_with_constants(mb_model *mb, uint64_t seed, int n, char names[][16], int *count)
{
    tsu_state = seed * 104729u + 11u;
    mb_init(mb, 17);
    mb_input(mb, "x0", 10);
    mb_input(mb, "x1", 25);
    mb_constant(mb, "c0", 10);
    mb_constant(mb, "c1", 25);
    long long size[32] = {10, 25, 10, 25};
    const char *first[] = {"x0", "x1", "c0", "c1"};
    for (int k = 0; k < 4; k++)
        snprintf(names[k], 16, "%s", first[k]);
    *count = 4;
    for (int v = 0; v < n; v++) {
        const char *op = OPS[tsu_rand() % 5];
        int a = (int)(tsu_rand() % (unsigned)*count), b = a;
        for (int tries = 0; tries < 8 && (b == a || size[b] != size[a]); tries++)
            b = (int)(tsu_rand() % (unsigned)*count);
        if (strcmp(op, "Add") == 0 && (b == a || size[b] != size[a]))
            op = "Neg";
        char ins[40], node[16];
        snprintf(ins, sizeof ins, strcmp(op, "Add") == 0 ? "%s,%s" : "%s", names[a], names[b]);
        snprintf(names[*count], 16, "t%d", v);
        snprintf(node, sizeof node, "n%d", v);
        size[*count] = size[a];
        mb_node(mb, op, node, ins, names[*count]);
        if (tsu_rand() % 4 == 0)
            mb_output(mb, names[*count], size[*count]);
        (*count)++;
    }
    mb_output(mb, names[*count - 1], size[*count - 1]);
}

/* 1 when tensor t is held outside any plan: a graph input, a Constant's
 * output, or an Identity of such a tensor (written from the README's rule,
 * not the planner's code). */
static int held(const olla_graph *g, int t)
{
    int p = g->tensors[t].producer;
    if (p < 0 || op_is(g, p, "Constant"))
        return 1;
    return op_is(g, p, "Identity") && held(g, g->input_list[g->ops[p].first_input]);
}

/* The listed order's peak with every tensor a buffer of its own but the
 * held ones. */
static int64_t naive_unshared_peak(const olla_graph *g)
{
    int64_t peak = 0;
    for (int s = 0; s < g->n_ops; s++) {
        int64_t live = 0;
        for (int t = 0; t < g->n_tensors; t++) {
            if (held(g, t))
                continue;
            int first = g->tensors[t].producer, last = g->tensors[t].is_output ? g->n_ops - 1 : first;
            for (int c = 0; c < g->tensors[t].n_consumers; c++)
                if (g->consumer_list[g->tensors[t].first_consumer + c] > last)
                    last = g->consumer_list[g->tensors[t].first_consumer + c];
            if (first <= s && s <= last)
                live += g->tensors[t].bytes;
        }
        if (live > peak)
            peak = live;
    }
    return peak;
}

/* Constants are constants and views of held tensors are no copies, in every
 * runtime and memory model: never in a plan, counted as constant bytes, and
 * in no figure of the input order. */
OLLA_TEST(test_constants_and_held_views_in_every_memory_model)
{
    int models = 0, held_views = 0;
    for (int seed = 0; seed < 40; seed++) {
        mb_model mb;
        char names[32][16];
        int count = 0;
        random_model_with_constants(&mb, (uint64_t)seed, 6 + seed % 5, names, &count);
        size_t len;
        uint8_t *buf = mb_pack(&mb, &len);
        olla_error err = {0};
        olla_model *m = NULL;
        olla_shape_table *types = NULL;
        olla_graph *g = NULL;
        OLLA_CHECK(olla_model_load_buffer(buf, len, "consts.onnx", ".", &m, &err) == OLLA_OK);
        free(buf);
        OLLA_CHECK(m && olla_infer_shapes(m->proto, NULL, &types, &err) == OLLA_OK);
        olla_type_source src = olla_shape_type_source(types);
        OLLA_CHECK(types && olla_graph_build(m, &src, &g, &err) == OLLA_OK);
        if (!g) {
            olla_shape_table_free(types);
            olla_model_free(m);
            mb_free(&mb);
            continue;
        }
        int64_t want = naive_unshared_peak(g);
        for (int t = 0; t < g->n_tensors; t++)
            held_views += g->tensors[t].producer >= 0 && op_is(g, g->tensors[t].producer, "Identity") && held(g, t);
        for (int rt = 0; rt < 2; rt++)
            for (int sh = 0; sh < 2; sh++) {
                olla_options opt;
                olla_options_init(&opt);
                opt.alignment = 1;
                opt.verbosity = 0;
                opt.time_limit = 5;
                opt.runtime = rt ? OLLA_RUNTIME_ORT : OLLA_RUNTIME_LISTED;
                opt.sharing = sh ? OLLA_SHARING_NONE : OLLA_SHARING_RUNTIME;
                olla_plan *plan = NULL;
                olla_report rep;
                olla_error_clear(&err);
                OLLA_CHECK(olla_optimize(m, &opt, &plan, &rep, &err) == OLLA_OK);
                if (!plan) {
                    fprintf(stderr, "seed %d: %s\n", seed, err.message);
                    continue;
                }
                OLLA_CHECK_EQ_I64(rep.constant_bytes, 4 * (10 + 25 + 10 + 25));
                OLLA_CHECK_EQ_I64(rep.input_order_peak_bytes, want);
                OLLA_CHECK(rep.input_order_shared_peak_bytes <= want);
                for (int i = 0; i < plan->n_entries; i++) {
                    int t = olla_strmap_get(&g->by_name, plan->entries[i].name);
                    OLLA_CHECK(t >= 0 && !held(g, t));
                }
                olla_plan_free(plan);
                olla_report_clear(&rep);
                models++;
            }
        olla_graph_free(g);
        olla_shape_table_free(types);
        olla_model_free(m);
        mb_free(&mb);
    }
    OLLA_CHECK(models == 160);
    OLLA_CHECK(held_views >= 5); /* the rule was exercised */
}

/* the next of a seeded sequence of pseudo-random numbers (an LCG's high bits) */
static uint64_t next_random(uint64_t *state)
{
    *state = *state * 6364136223846793005ULL + 1442695040888963407ULL;
    return *state >> 33;
}

/* The checker's overlap verdict on random offsets (every tensor its own
 * buffer, the listed order; views of graph inputs take no memory and are
 * not listed) against every pair of planned tensors: two
 * collide when their steps [producer, last reader or the end for a graph
 * output] meet and their byte ranges do. */
OLLA_TEST(test_checker_overlaps_match_every_pair)
{
    uint64_t rng = 4242;
    int valid = 0, invalid = 0;
    for (int seed = 0; seed < 150; seed++) {
        fixture f;
        memset(&f, 0, sizeof f);
        random_model(&f, (uint64_t)seed + 7000, 4 + seed % 19);
        if (!fixture_build(&f)) {
            OLLA_CHECK(0);
            fixture_free(&f);
            continue;
        }
        const olla_graph *g = f.g;
        int nt = g->n_tensors, order[32], first[32], last[32];
        int64_t offset[32], bytes[32];
        unsigned char share[32];
        int shares[32];
        OLLA_CHECK(nt <= 32 && g->n_ops <= 32);
        for (int i = 0; i < g->n_ops; i++)
            order[i] = i;
        for (int t = 0; t < nt; t++) {
            const olla_tensor *x = &g->tensors[t];
            first[t] = last[t] = x->producer;
            for (int k = 0; k < x->n_consumers; k++)
                if (g->consumer_list[x->first_consumer + k] > last[t])
                    last[t] = g->consumer_list[x->first_consumer + k];
            if (x->is_output)
                last[t] = g->n_ops - 1;
            bytes[t] = x->bytes;
            share[t] = OLLA_BUFFER_OWN;
            shares[t] = -1;
        }
        for (int trial = 0; trial < 40; trial++) {
            int64_t span = 1 + (int64_t)(next_random(&rng) % (uint64_t)(600 * nt));
            for (int t = 0; t < nt; t++)
                offset[t] = f.map.buffer[t] >= 0 ? (int64_t)(next_random(&rng) % (uint64_t)span) : -1;
            int collide = 0;
            for (int a = 0; a < nt; a++)
                for (int b = a + 1; b < nt; b++)
                    if (offset[a] >= 0 && offset[b] >= 0 && first[a] <= last[b] && first[b] <= last[a] &&
                        offset[a] < offset[b] + bytes[b] && offset[b] < offset[a] + bytes[a])
                        collide = 1;
            olla_plan_layout lay = {order, offset, bytes, share, shares, span + 4096, 1, 0, NULL};
            olla_error err = {0};
            olla_status st = olla_plan_verify(g, &lay, NULL, &err);
            OLLA_CHECK_EQ_I64(st, (collide ? OLLA_ERR_INPUT : OLLA_OK));
            if (collide)
                OLLA_CHECK_STR_CONTAINS(err.message, "overlaps");
            valid += !collide;
            invalid += collide;
        }
        fixture_free(&f);
    }
    fprintf(stderr, "overlaps: %d valid and %d overlapping layouts\n", valid, invalid);
    OLLA_CHECK(valid > 500);
    OLLA_CHECK(invalid > 500);
}

OLLA_TEST_MAIN(OLLA_T(test_checker_overlaps_match_every_pair),
               OLLA_T(test_sharing_matches_naive_runtime_and_solvers_reach_it), OLLA_T(test_checker_judges_each_share),
               OLLA_T(test_checker_rejects_share_of_other_size), OLLA_T(test_pipeline_plans_shares),
               OLLA_T(test_constants_and_held_views_in_every_memory_model))
