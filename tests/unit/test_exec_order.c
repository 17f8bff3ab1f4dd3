/* How runtimes order execution (passes/runtime/olla_exec_order.h): ONNX
 * Runtime's rewrites and orders on hand-built models with orders worked out
 * by hand from ORT's rule, and, on small random graphs, every topological
 * listing against an independent recursive model of the rule, and the
 * listings written for chosen orders against brute force. */
#include <stdint.h>

/* this file uses part of the builder */
#pragma GCC diagnostic ignored "-Wunused-function"
#include "model_builder.h"
#include "olla.h"
#include "olla_test.h"
#include "onnx/olla_graph.h"
#include "onnx/olla_model.h"
#include "passes/analysis/olla_dag.h"
#include "passes/runtime/olla_exec_order.h"
#include "passes/shapes/olla_shapes.h"

/* ---- Models ---- */

typedef struct test_model {
    mb_model mb;
    olla_model *m;
    olla_shape_table *types;
    olla_graph *g;
} test_model;

static int build(test_model *t)
{
    olla_error err = {0};
    size_t len;
    uint8_t *buf = mb_pack(&t->mb, &len);
    olla_status st = olla_model_load_buffer(buf, len, "test.onnx", ".", &t->m, &err);
    free(buf);
    if (st == OLLA_OK)
        st = olla_infer_shapes(t->m->proto, NULL, &t->types, &err);
    if (st == OLLA_OK) {
        olla_type_source src = olla_shape_type_source(t->types);
        st = olla_graph_build(t->m, &src, &t->g, &err);
    }
    if (st != OLLA_OK)
        fprintf(stderr, "building the test model: %s\n", err.message);
    return st == OLLA_OK;
}

static void release(test_model *t)
{
    olla_graph_free(t->g);
    olla_shape_table_free(t->types);
    olla_model_free(t->m);
    mb_free(&t->mb);
}

static void typed_input(mb_model *mb, const char *name, int elem)
{
    long long n = 4;
    mb_push(mb, &mb->graph.n_input, (void ***)&mb->graph.input, mb_value(mb, name, elem, 1, &n));
}

static void typed_output(mb_model *mb, const char *name, int elem)
{
    long long n = 4;
    mb_push(mb, &mb->graph.n_output, (void ***)&mb->graph.output, mb_value(mb, name, elem, 1, &n));
}

static void cast_node(mb_model *mb, const char *name, const char *in, const char *out, int to)
{
    Onnx__NodeProto *n = mb_node(mb, "Cast", name, in, out);
    Onnx__AttributeProto *a = mb_alloc(mb, sizeof *a);
    onnx__attribute_proto__init(a);
    a->name = mb_str(mb, "to");
    a->has_type = 1;
    a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
    a->has_i = 1;
    a->i = to;
    mb_push(mb, &n->n_attribute, (void ***)&n->attribute, a);
}

/* A Constant of 2 floats. */
static void constant_node(mb_model *mb, const char *name, const char *out)
{
    Onnx__NodeProto *n = mb_node(mb, "Constant", name, "", out);
    Onnx__AttributeProto *a = mb_alloc(mb, sizeof *a);
    Onnx__TensorProto *t = mb_alloc(mb, sizeof *t);
    onnx__attribute_proto__init(a);
    onnx__tensor_proto__init(t);
    t->has_data_type = 1;
    t->data_type = 1;
    t->n_dims = 1;
    t->dims = mb_alloc(mb, sizeof(int64_t));
    t->dims[0] = 2;
    t->n_float_data = 2;
    t->float_data = mb_alloc(mb, 2 * sizeof(float));
    a->name = mb_str(mb, "value");
    a->has_type = 1;
    a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR;
    a->t = t;
    mb_push(mb, &n->n_attribute, (void ***)&n->attribute, a);
}

static int op_named(const olla_graph *g, const char *name)
{
    for (int v = 0; v < g->n_ops; v++)
        if (strcmp(g->ops[v].name, name) == 0)
            return v;
    return -1;
}

/* The order as "name name ...", for messages and comparisons. */
static const char *names_of(const olla_graph *g, const int *order, int n)
{
    static char buf[1024];
    buf[0] = '\0';
    for (int i = 0; i < n; i++) {
        size_t len = strlen(buf);
        snprintf(buf + len, sizeof buf - len, "%s%s", i ? " " : "", g->ops[order[i]].name);
    }
    return buf;
}

#define CHECK_ORDER(g, order, n, want)                                                        \
    do {                                                                                      \
        const char *got_ = names_of((g), (order), (n));                                      \
        if (strcmp(got_, (want)) != 0) {                                                      \
            fprintf(stderr, "%s:%d: order '%s', expected '%s'\n", __FILE__, __LINE__, got_, (want)); \
            olla_test_failures++;                                                             \
        }                                                                                     \
    } while (0)

/* relu -> split -> (sig, tanh) -> add -> addk(+Constant k) ; relu -> sq ;
 * relu -> shape. Listed in that order: relu split k sig tanh add addk sq
 * shape. */
static void branches_model(test_model *t)
{
    mb_model *mb = &t->mb;
    mb_init(mb, 17);
    mb_input(mb, "x", 4);
    mb_node(mb, "Relu", "relu", "x", "a");
    mb_node(mb, "Split", "split", "a", "p,q");
    constant_node(mb, "k", "kc");
    mb_node(mb, "Sigmoid", "sig", "p", "p1");
    mb_node(mb, "Tanh", "tanh", "q", "q1");
    mb_node(mb, "Add", "add", "p1,q1", "s");
    mb_node(mb, "Add", "addk", "s,kc", "y1");
    mb_node(mb, "Mul", "sq", "a,a", "y2");
    mb_node(mb, "Shape", "shape", "a", "sh");
    mb_output(mb, "y1", 2);
    mb_output(mb, "y2", 4);
    long long one = 1;
    mb_push(mb, &mb->graph.n_output, (void ***)&mb->graph.output, mb_value(mb, "sh", 7, 1, &one));
}

/* Runs rt on the listing given by names; returns the number executed. */
static int run_named(const olla_graph *g, olla_runtime rt, const char *const *names, int *executed)
{
    int listing[32], n = 0;
    olla_error err = {0};
    for (int i = 0; i < g->n_ops; i++)
        listing[i] = op_named(g, names[i]);
    if (olla_exec_order(g, rt, listing, executed, &n, &err) != OLLA_OK) {
        fprintf(stderr, "olla_exec_order: %s\n", err.message);
        olla_test_failures++;
        return 0;
    }
    return n;
}

/* ---- Hand-built models ---- */

OLLA_TEST(test_ort_order_by_hand)
{
    test_model t = {0};
    branches_model(&t);
    if (!build(&t)) {
        olla_test_failures++;
        release(&t);
        return;
    }
    const olla_graph *g = t.g;
    int ex[32], n;
    /* leaves by falling index: shape, sq, then addk; tanh (listed after sig) first */
    const char *listed[] = {"relu", "split", "k", "sig", "tanh", "add", "addk", "sq", "shape"};
    n = run_named(g, OLLA_RUNTIME_ORT, listed, ex);
    CHECK_ORDER(g, ex, n, "relu shape sq split tanh sig add addk");
    /* sig after tanh in the listing: sig is visited first */
    const char *swapped[] = {"relu", "split", "k", "tanh", "sig", "add", "addk", "sq", "shape"};
    n = run_named(g, OLLA_RUNTIME_ORT, swapped, ex);
    CHECK_ORDER(g, ex, n, "relu shape sq split sig tanh add addk");
    /* addk listed last: its block runs first, the Constant never runs */
    const char *late[] = {"relu", "sq", "k", "shape", "split", "sig", "tanh", "add", "addk"};
    n = run_named(g, OLLA_RUNTIME_ORT, late, ex);
    CHECK_ORDER(g, ex, n, "relu split tanh sig add addk shape sq");
    /* PRIORITY_BASED: Shape first among ready nodes, then the lowest index */
    n = run_named(g, OLLA_RUNTIME_ORT_PRIORITY, listed, ex);
    CHECK_ORDER(g, ex, n, "relu shape split sig tanh add addk sq");
    /* listed: every node, Constant included, as listed */
    n = run_named(g, OLLA_RUNTIME_LISTED, late, ex);
    CHECK_ORDER(g, ex, n, "relu sq k shape split sig tanh add addk");
    /* a wanted order of all ops, the Constant included: the Constant is
     * ignored; this one ORT can run (sq's block, then shape's, then addk's) */
    olla_exec_graph eg;
    olla_error err = {0};
    int wanted[9], listing[9], found = -1;
    const char *want[] = {"relu", "sq", "k", "shape", "split", "sig", "tanh", "add", "addk"};
    for (int i = 0; i < 9; i++)
        wanted[i] = op_named(g, want[i]);
    OLLA_CHECK(olla_exec_graph_build(g, OLLA_RUNTIME_ORT, NULL, &eg, &err) == OLLA_OK);
    OLLA_CHECK(olla_exec_listing_for(&eg, wanted, 9, NULL, listing, &found, &err) == OLLA_OK && found == 1);
    OLLA_CHECK(olla_exec_order_of(&eg, OLLA_RUNTIME_ORT, listing, ex, &n, &err) == OLLA_OK);
    CHECK_ORDER(g, ex, n, "relu sq shape split sig tanh add addk");
    /* split between relu and sq interleaves the blocks of two leaves */
    const char *bad[] = {"relu", "split", "sq", "k", "shape", "sig", "tanh", "add", "addk"};
    for (int i = 0; i < 9; i++)
        wanted[i] = op_named(g, bad[i]);
    OLLA_CHECK(olla_exec_listing_for(&eg, wanted, 9, NULL, listing, &found, &err) == OLLA_OK && found == 0);
    olla_exec_graph_free(&eg);
    release(&t);
}

OLLA_TEST(test_listing_must_be_a_permutation)
{
    test_model t = {0};
    branches_model(&t);
    if (!build(&t)) {
        olla_test_failures++;
        release(&t);
        return;
    }
    int listing[9] = {0, 1, 2, 3, 4, 5, 6, 7, 7}, ex[9], n;
    olla_error err = {0};
    OLLA_CHECK(olla_exec_order(t.g, OLLA_RUNTIME_ORT, listing, ex, &n, &err) == OLLA_ERR_INPUT);
    OLLA_CHECK_STR_CONTAINS(err.message, "names op 7 twice");
    olla_error_clear(&err);
    int backwards[9] = {8, 7, 6, 5, 4, 3, 2, 1, 0};
    OLLA_CHECK(olla_exec_order(t.g, OLLA_RUNTIME_LISTED, backwards, ex, &n, &err) == OLLA_ERR_INPUT);
    OLLA_CHECK_STR_CONTAINS(err.message, "which produces one of its inputs");
    /* ORT sorts any listing itself */
    OLLA_CHECK(olla_exec_order(t.g, OLLA_RUNTIME_ORT, backwards, ex, &n, &err) == OLLA_OK);
    release(&t);
}

/* Every case of RemoveDuplicateCastTransformer (checked against ORT by
 * tests/cli/test_exec_order_ort.sh). */
OLLA_TEST(test_cast_removal)
{
    enum { F = 1, I32 = 6, I64 = 7, BOOL = 9, DBL = 11 };
    test_model t = {0};
    mb_model *mb = &t.mb;
    mb_init(mb, 17);
    mb_input(mb, "x", 4);
    typed_input(mb, "i", I32);
    mb_node(mb, "Relu", "relu", "x", "r");
    cast_node(mb, "pair_up", "r", "d", DBL); /* float->double->float: both vanish */
    cast_node(mb, "pair_down", "d", "pf", F);
    cast_node(mb, "widen", "i", "i64", I64); /* read only by a Cast: vanishes */
    cast_node(mb, "to_float", "i64", "if", F);
    cast_node(mb, "lossy_down", "r", "ri", I32); /* lossy pair: both run */
    cast_node(mb, "lossy_up", "ri", "rf", F);
    cast_node(mb, "to_int", "r", "bi", I32); /* lossy, read by a Cast to bool: both run */
    cast_node(mb, "to_bool", "bi", "bb", BOOL);
    cast_node(mb, "gout_up", "r", "gd", DBL); /* a graph output: runs; its reader vanishes */
    cast_node(mb, "gout_down", "gd", "gf", F);
    cast_node(mb, "same", "r", "sm", F); /* a lone Cast runs */
    mb_node(mb, "Sum", "sum", "pf,if,rf,gf,sm", "y");
    mb_node(mb, "Not", "not", "bb", "yb");
    mb_output(mb, "y", 4);
    typed_output(mb, "yb", BOOL);
    typed_output(mb, "gd", DBL);
    if (!build(&t)) {
        olla_test_failures++;
        release(&t);
        return;
    }
    const olla_graph *g = t.g;
    olla_exec_graph eg;
    olla_error err = {0};
    OLLA_CHECK(olla_exec_graph_build(g, OLLA_RUNTIME_ORT, NULL, &eg, &err) == OLLA_OK);
    const char *gone[] = {"pair_up", "pair_down", "widen", "gout_down"};
    const char *run[] = {"relu", "to_float", "lossy_down", "lossy_up", "to_int", "to_bool", "gout_up", "same",
                         "sum", "not"};
    for (int i = 0; i < 4; i++)
        OLLA_CHECK(!eg.runs[op_named(g, gone[i])]);
    for (int i = 0; i < 10; i++)
        OLLA_CHECK(eg.runs[op_named(g, run[i])]);
    OLLA_CHECK_EQ_I64(eg.n_running, 10);
    /* sum reads relu directly (twice over removed Casts), to_float, lossy_up, same */
    int sum = op_named(g, "sum"), relu = op_named(g, "relu"), found_relu = 0, n_preds = 0;
    for (int j = eg.pred_start[sum]; j < eg.pred_start[sum + 1]; j++, n_preds++)
        found_relu |= eg.pred_list[j] == relu;
    OLLA_CHECK(found_relu);
    OLLA_CHECK_EQ_I64(n_preds, 4);
    /* to_float reads the graph input i: no producer left */
    int tf = op_named(g, "to_float");
    OLLA_CHECK_EQ_I64(eg.pred_start[tf + 1] - eg.pred_start[tf], 0);
    /* listed runs every node */
    olla_exec_graph el;
    OLLA_CHECK(olla_exec_graph_build(g, OLLA_RUNTIME_LISTED, NULL, &el, &err) == OLLA_OK);
    OLLA_CHECK_EQ_I64(el.n_running, g->n_ops);
    /* the completed order puts each removed Cast right before its first needer */
    int ex[32], n = 0, full[32], listing[32];
    for (int v = 0; v < g->n_ops; v++)
        listing[v] = v;
    OLLA_CHECK(olla_exec_order_of(&eg, OLLA_RUNTIME_ORT, listing, ex, &n, &err) == OLLA_OK);
    OLLA_CHECK(olla_exec_complete_order(&eg, ex, full, &err) == OLLA_OK);
    int pos[32];
    for (int i = 0; i < g->n_ops; i++)
        pos[full[i]] = i;
    /* topological for the file, but for gout_down, whose producer gout_up
     * (a leaf) runs after gout_down's reader: it goes at the end */
    int gout_down = op_named(g, "gout_down");
    for (int v = 0; v < g->n_ops; v++)
        for (int j = el.dep_start[v]; j < el.dep_start[v + 1]; j++)
            OLLA_CHECK(pos[el.dep_list[j]] < pos[v] || v == sum);
    OLLA_CHECK_EQ_I64(pos[gout_down], g->n_ops - 1);
    OLLA_CHECK(pos[op_named(g, "gout_up")] < pos[gout_down]);
    OLLA_CHECK_EQ_I64(pos[op_named(g, "pair_up")], pos[sum] - 2);
    OLLA_CHECK_EQ_I64(pos[op_named(g, "pair_down")], pos[sum] - 1);
    OLLA_CHECK_EQ_I64(pos[op_named(g, "widen")], pos[tf] - 1);
    /* the runtime's DAG: sum reads r itself; no tensor of a removed Cast */
    olla_dag dag;
    int *gt = NULL;
    OLLA_CHECK(olla_exec_dag(g, &eg, 1, &dag, &gt, &err) == OLLA_OK);
    if (gt) {
        int r_tensor = -1, reads_r = 0;
        for (int e = 0; e < dag.n_tensors; e++) {
            OLLA_CHECK(eg.runs[dag.producer[e]]);
            if (strcmp(g->tensors[gt[e]].name, "r") == 0)
                r_tensor = e;
        }
        OLLA_CHECK_EQ_I64(dag.n_tensors, 10); /* one output per running op */
        for (int k = dag.in_start[sum]; k < dag.in_start[sum + 1]; k++)
            reads_r |= dag.in_list[k] == r_tensor;
        OLLA_CHECK(reads_r);
        olla_dag_free(&dag);
        free(gt);
    }
    olla_exec_graph_free(&el);
    olla_exec_graph_free(&eg);
    release(&t);
}

OLLA_TEST(test_runtime_names)
{
    olla_runtime rt;
    olla_error err = {0};
    OLLA_CHECK(olla_runtime_parse("ort-priority", &rt, &err) == OLLA_OK && rt == OLLA_RUNTIME_ORT_PRIORITY);
    OLLA_CHECK(strcmp(olla_runtime_name(OLLA_RUNTIME_ORT), "ort") == 0);
    OLLA_CHECK(olla_runtime_parse("tvm", &rt, &err) == OLLA_ERR_USAGE);
    OLLA_CHECK_STR_CONTAINS(err.message, "unknown runtime 'tvm'; choose ort, ort-priority or listed");
}

/* ---- Brute force on small random graphs ---- */

#define MAXN 8

typedef struct small_dag {
    int n;
    int pred_start[MAXN + 1], preds[MAXN * MAXN];
} small_dag;

static uint64_t rng_state;
static int rnd(int k)
{
    rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (int)((rng_state >> 33) % (uint64_t)k);
}

static void random_dag(small_dag *s, int n, int percent)
{
    s->n = n;
    int m = 0;
    for (int v = 0; v < n; v++) {
        s->pred_start[v] = m;
        for (int u = 0; u < v; u++)
            if (rnd(100) < percent)
                s->preds[m++] = u;
    }
    s->pred_start[n] = m;
}

static int has_pred(const small_dag *s, int v, int u)
{
    for (int j = s->pred_start[v]; j < s->pred_start[v + 1]; j++)
        if (s->preds[j] == u)
            return 1;
    return 0;
}

/* The rule written recursively, independently of the library: leaves by
 * falling position, producers by falling position, post-order. */
static void ref_visit(const small_dag *s, const int *pos, int v, int *seen, int *out, int *k)
{
    seen[v] = 1;
    for (;;) {
        int best = -1;
        for (int j = s->pred_start[v]; j < s->pred_start[v + 1]; j++) {
            int u = s->preds[j];
            if (!seen[u] && (best < 0 || pos[u] > pos[best]))
                best = u;
        }
        if (best < 0)
            break;
        ref_visit(s, pos, best, seen, out, k);
    }
    out[(*k)++] = v;
}

static void ref_order(const small_dag *s, const int *listing, int *out)
{
    int pos[MAXN], seen[MAXN] = {0}, k = 0;
    for (int i = 0; i < s->n; i++)
        pos[listing[i]] = i;
    for (int i = s->n - 1; i >= 0; i--) {
        int v = listing[i], leaf = 1;
        for (int w = 0; w < s->n; w++)
            leaf &= !has_pred(s, w, v);
        if (leaf && !seen[v])
            ref_visit(s, pos, v, seen, out, &k);
    }
}

static int perm_rank(const int *p, int n)
{
    int rank = 0;
    for (int i = 0; i < n; i++) {
        int smaller = 0;
        for (int j = i + 1; j < n; j++)
            smaller += p[j] < p[i];
        rank = rank * (n - i) + smaller;
    }
    return rank;
}

/* All topological orders of s, each passed to fn. */
typedef void (*topo_fn)(void *ctx, const int *order);
static void each_topo(const small_dag *s, int *cur, int depth, int *used, topo_fn fn, void *ctx)
{
    if (depth == s->n) {
        fn(ctx, cur);
        return;
    }
    for (int v = 0; v < s->n; v++) {
        if (used[v])
            continue;
        int ready = 1;
        for (int j = s->pred_start[v]; j < s->pred_start[v + 1]; j++)
            ready &= used[s->preds[j]];
        if (!ready)
            continue;
        used[v] = 1;
        cur[depth] = v;
        each_topo(s, cur, depth + 1, used, fn, ctx);
        used[v] = 0;
    }
}

typedef struct brute_ctx {
    const small_dag *s;
    olla_exec_graph *eg;
    unsigned char producible[40320];
    int n_listings, n_producible, n_refused;
} brute_ctx;

/* For every listing: the library's order is the reference order, a
 * topological order of all nodes. */
static void check_listing(void *vctx, const int *listing)
{
    brute_ctx *c = vctx;
    int ex[MAXN], ref[MAXN], n = 0, pos[MAXN];
    olla_error err = {0};
    OLLA_CHECK(olla_exec_order_of(c->eg, OLLA_RUNTIME_ORT, listing, ex, &n, &err) == OLLA_OK);
    OLLA_CHECK_EQ_I64(n, c->s->n);
    ref_order(c->s, listing, ref);
    OLLA_CHECK(memcmp(ex, ref, (size_t)n * sizeof(int)) == 0);
    for (int i = 0; i < n; i++)
        pos[ex[i]] = i;
    for (int v = 0; v < n; v++)
        for (int j = c->s->pred_start[v]; j < c->s->pred_start[v + 1]; j++)
            OLLA_CHECK(pos[c->s->preds[j]] < pos[v]);
    c->producible[perm_rank(ex, n)] = 1;
    c->n_listings++;
}

/* For every topological order as a wanted order: a listing exactly when
 * some listing runs it, and the listing is topological and runs it. */
static void check_wanted(void *vctx, const int *wanted)
{
    brute_ctx *c = vctx;
    int n = c->s->n, listing[MAXN], found = -1, ex[MAXN], n_ex = 0, pos[MAXN];
    olla_error err = {0};
    OLLA_CHECK(olla_exec_listing_for(c->eg, wanted, n, NULL, listing, &found, &err) == OLLA_OK);
    OLLA_CHECK_EQ_I64(found, c->producible[perm_rank(wanted, n)]);
    if (found != 1) {
        c->n_refused++;
        return;
    }
    c->n_producible++;
    OLLA_CHECK(olla_exec_order_of(c->eg, OLLA_RUNTIME_ORT, listing, ex, &n_ex, &err) == OLLA_OK);
    OLLA_CHECK(n_ex == n && memcmp(ex, wanted, (size_t)n * sizeof(int)) == 0);
    for (int i = 0; i < n; i++)
        pos[listing[i]] = i;
    for (int v = 0; v < n; v++)
        for (int j = c->s->pred_start[v]; j < c->s->pred_start[v + 1]; j++)
            OLLA_CHECK(pos[c->s->preds[j]] < pos[v]);
}

OLLA_TEST(test_brute_force_random_dags)
{
    rng_state = 42;
    static brute_ctx c;
    int total_refused = 0, total_producible = 0;
    for (int trial = 0; trial < 400; trial++) {
        small_dag s;
        random_dag(&s, 2 + rnd(MAXN - 2), 15 + rnd(60));
        olla_exec_graph eg;
        olla_error err = {0};
        OLLA_CHECK(olla_exec_graph_from_edges(s.n, s.pred_start, s.preds, NULL, &eg, &err) == OLLA_OK);
        memset(&c, 0, sizeof c);
        c.s = &s;
        c.eg = &eg;
        int cur[MAXN], used[MAXN] = {0};
        each_topo(&s, cur, 0, used, check_listing, &c);
        each_topo(&s, cur, 0, used, check_wanted, &c);
        total_refused += c.n_refused;
        total_producible += c.n_producible;
        olla_exec_graph_free(&eg);
    }
    /* both kinds occur, so both answers were tested */
    OLLA_CHECK(total_refused > 1000);
    OLLA_CHECK(total_producible > 1000);
    printf("random graphs: %d orders written for, %d refused\n", total_producible, total_refused);
}

/* With file edges the runtime does not follow (a Cast removed below a kept
 * Cast), listing_for still answers exactly: every listing of the file is
 * tried, and every order of the running ops is asked for. */
typedef struct file_ctx {
    olla_exec_graph *eg;
    const olla_graph *g;
    unsigned char producible[40320];
    int run_ops[MAXN], n_run;
    int n_found, n_refused;
} file_ctx;

static int dense_rank(const file_ctx *c, const int *order)
{
    int dense[MAXN];
    for (int i = 0; i < c->n_run; i++)
        for (int k = 0; k < c->n_run; k++)
            if (c->run_ops[k] == order[i])
                dense[i] = k;
    return perm_rank(dense, c->n_run);
}

static void file_listing(void *vctx, const int *listing)
{
    file_ctx *c = vctx;
    int ex[MAXN], n = 0;
    olla_error err = {0};
    OLLA_CHECK(olla_exec_order_of(c->eg, OLLA_RUNTIME_ORT, listing, ex, &n, &err) == OLLA_OK);
    OLLA_CHECK_EQ_I64(n, c->n_run);
    c->producible[dense_rank(c, ex)] = 1;
}

static void file_wanted(void *vctx, const int *dense_order)
{
    file_ctx *c = vctx;
    int wanted[MAXN], listing[MAXN], found = -1, ex[MAXN], n = 0;
    olla_error err = {0};
    for (int i = 0; i < c->n_run; i++)
        wanted[i] = c->run_ops[dense_order[i]];
    OLLA_CHECK(olla_exec_listing_for(c->eg, wanted, c->n_run, NULL, listing, &found, &err) == OLLA_OK);
    OLLA_CHECK_EQ_I64(found, c->producible[perm_rank(dense_order, c->n_run)]);
    if (found != 1) {
        c->n_refused++;
        return;
    }
    c->n_found++;
    OLLA_CHECK(olla_exec_order_of(c->eg, OLLA_RUNTIME_ORT, listing, ex, &n, &err) == OLLA_OK);
    OLLA_CHECK(memcmp(ex, wanted, (size_t)n * sizeof(int)) == 0);
    olla_exec_graph file;
    OLLA_CHECK(olla_exec_graph_build(c->g, OLLA_RUNTIME_LISTED, NULL, &file, &err) == OLLA_OK);
    OLLA_CHECK(olla_exec_order_of(&file, OLLA_RUNTIME_LISTED, listing, ex, &n, &err) == OLLA_OK); /* topological */
    olla_exec_graph_free(&file);
}

OLLA_TEST(test_brute_force_file_edges)
{
    enum { F = 1, DBL = 11 };
    test_model t = {0};
    mb_model *mb = &t.mb;
    mb_init(mb, 17);
    mb_input(mb, "x", 4);
    mb_node(mb, "Relu", "relu", "x", "r");
    cast_node(mb, "up", "r", "gd", DBL);
    cast_node(mb, "down", "gd", "gf", F);
    mb_node(mb, "Neg", "neg", "r", "a");
    mb_node(mb, "Add", "add", "gf,a", "y1");
    mb_node(mb, "Abs", "abs", "r", "y2");
    mb_node(mb, "Exp", "exp", "a", "y3");
    mb_output(mb, "y1", 4);
    mb_output(mb, "y2", 4);
    mb_output(mb, "y3", 4);
    typed_output(mb, "gd", DBL);
    if (!build(&t)) {
        olla_test_failures++;
        release(&t);
        return;
    }
    static file_ctx c;
    memset(&c, 0, sizeof c);
    olla_exec_graph eg, file;
    olla_error err = {0};
    OLLA_CHECK(olla_exec_graph_build(t.g, OLLA_RUNTIME_ORT, NULL, &eg, &err) == OLLA_OK);
    OLLA_CHECK(olla_exec_graph_build(t.g, OLLA_RUNTIME_LISTED, NULL, &file, &err) == OLLA_OK);
    OLLA_CHECK(!eg.runs[op_named(t.g, "down")] && eg.runs[op_named(t.g, "up")]);
    c.eg = &eg;
    c.g = t.g;
    for (int v = 0; v < t.g->n_ops; v++)
        if (eg.runs[v])
            c.run_ops[c.n_run++] = v;
    /* every listing of the file */
    small_dag s = {.n = t.g->n_ops};
    for (int v = 0; v <= s.n; v++)
        s.pred_start[v] = file.dep_start[v];
    memcpy(s.preds, file.dep_list, (size_t)file.dep_start[s.n] * sizeof(int));
    int cur[MAXN], used[MAXN] = {0};
    each_topo(&s, cur, 0, used, file_listing, &c);
    /* every order of the running ops that respects the runtime's edges */
    small_dag r = {.n = c.n_run};
    int m = 0;
    for (int i = 0; i < c.n_run; i++) {
        r.pred_start[i] = m;
        int v = c.run_ops[i];
        for (int j = eg.pred_start[v]; j < eg.pred_start[v + 1]; j++)
            for (int k = 0; k < c.n_run; k++)
                if (c.run_ops[k] == eg.pred_list[j])
                    r.preds[m++] = k;
    }
    r.pred_start[c.n_run] = m;
    memset(used, 0, sizeof used);
    each_topo(&r, cur, 0, used, file_wanted, &c);
    OLLA_CHECK(c.n_found > 0 && c.n_refused > 0);
    olla_exec_graph_free(&file);
    olla_exec_graph_free(&eg);
    release(&t);
}

/* Where the depth-first search entered each op (olla_exec_dfs_entry), on
 * random graphs of up to 60 ops under random keys, checked against what
 * entering means: a leaf is entered from the roots and any other op from
 * one of its readers; the ops entered from v, and from those in turn (v's
 * block), run right before v, one after another; an op has a choice point
 * exactly when it entered two or more ops, and the point lists them in the
 * order they ran. */
#define BIGN 60

static void check_entries(olla_exec_dfs *d, int n, const int *pred_start, const int *preds, const int *ex)
{
    int pos[BIGN], from[BIGN], size[BIGN], entered[BIGN + 1] = {0}, is_read[BIGN] = {0};
    for (int i = 0; i < n; i++)
        pos[ex[i]] = i;
    for (int j = 0; j < pred_start[n]; j++)
        is_read[preds[j]] = 1;
    for (int v = 0; v < n; v++) {
        int p;
        from[v] = olla_exec_dfs_entry(d, v, &p);
        OLLA_CHECK(from[v] >= -1 && from[v] < n);
        entered[from[v] + 1]++;
        int reads = 0;
        for (int j = from[v] >= 0 ? pred_start[from[v]] : 0; from[v] >= 0 && j < pred_start[from[v] + 1]; j++)
            reads |= preds[j] == v;
        OLLA_CHECK(from[v] >= 0 ? reads : !is_read[v]);
        size[v] = 1;
    }
    for (int i = 0; i < n; i++) /* producers run first: a block's size is known when its op runs */
        if (from[ex[i]] >= 0)
            size[from[ex[i]]] += size[ex[i]];
    for (int v = 0; v < n; v++) {
        OLLA_CHECK(pos[v] - size[v] + 1 >= 0);
        for (int i = pos[v] - size[v] + 1; i < pos[v]; i++) { /* the block: v's tree of entries */
            int w = ex[i];
            while (w >= 0 && w != v)
                w = from[w];
            OLLA_CHECK_EQ_I64(w, v);
        }
        int p;
        olla_exec_dfs_entry(d, v, &p);
        OLLA_CHECK_EQ_I64(p >= 0, entered[from[v] + 1] >= 2);
        if (p < 0)
            continue;
        const int *children;
        int node, k = olla_exec_dfs_point(d, p, &children, &node), seen = 0;
        OLLA_CHECK_EQ_I64(node, from[v]);
        OLLA_CHECK_EQ_I64(k, entered[from[v] + 1]);
        for (int j = 0; j < k; j++) {
            seen += children[j] == v;
            OLLA_CHECK(j == 0 || pos[children[j - 1]] < pos[children[j]]);
        }
        OLLA_CHECK_EQ_I64(seen, 1);
    }
}

OLLA_TEST(test_dfs_entries)
{
    rng_state = 8;
    int points = 0;
    for (int trial = 0; trial < 300; trial++) {
        int n = 2 + rnd(BIGN - 1), percent = 2 + rnd(30), pred_start[BIGN + 1], m = 0;
        static int preds[BIGN * BIGN];
        for (int v = 0; v < n; v++) {
            pred_start[v] = m;
            for (int u = 0; u < v; u++)
                if (rnd(100) < percent)
                    preds[m++] = u;
        }
        pred_start[n] = m;
        olla_exec_graph eg;
        olla_exec_dfs *d = NULL;
        olla_error err = {0};
        OLLA_CHECK(olla_exec_graph_from_edges(n, pred_start, preds, NULL, &eg, &err) == OLLA_OK);
        OLLA_CHECK(olla_exec_dfs_new(&eg, &d, &err) == OLLA_OK);
        int64_t key[BIGN];
        int ex[BIGN];
        for (int round = 0; d && round < 4; round++) {
            for (int v = 0; v < n; v++)
                key[v] = rnd(1000);
            olla_exec_dfs_run(d, key, ex);
            check_entries(d, n, pred_start, preds, ex);
            points += olla_exec_dfs_points(d);
        }
        olla_exec_dfs_free(d);
        olla_exec_graph_free(&eg);
    }
    OLLA_CHECK(points > 1000); /* choice points were there to check */
}

OLLA_TEST_MAIN(OLLA_T(test_ort_order_by_hand), OLLA_T(test_listing_must_be_a_permutation), OLLA_T(test_cast_removal),
               OLLA_T(test_runtime_names), OLLA_T(test_brute_force_random_dags), OLLA_T(test_brute_force_file_edges),
               OLLA_T(test_dfs_entries))
