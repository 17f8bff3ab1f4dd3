/* olla-onnx tests: recomputation under a memory limit. The operator rules,
 * the limit parser, and the solver on random small graphs against a brute
 * force over every plan (Dijkstra over the sets of present tensors and of
 * nodes run): the plans it finds are plans of the problem and stay under
 * the limit, never cost less than the optimum, the exact program's proven
 * plans cost exactly the optimum, an impossible limit is refused, and the
 * peak bound never passes the smallest peak any plan reaches. */
#include <float.h>
#include <math.h>

#include "olla.h"
#include "olla_test.h"
#include "passes/runtime/olla_recompute.h"
#include "solver/olla_remat.h"
#include "solver/remat_sim.h"
#include "test_sched_util.h"

OLLA_TEST(recompute_rules)
{
    static const struct {
        const char *domain, *op, *aten;
        int allowed;
    } cases[] = {
        {"", "Conv", NULL, 1},
        {"ai.onnx", "Relu", NULL, 1},
        {"", "MatMul", NULL, 1},
        {"", "LayerNormalization", NULL, 1},
        {"", "BatchNormalization", NULL, 1},
        {"", "Softmax", NULL, 1},
        {"", "Reshape", NULL, 1},
        {"", "MaxPool", NULL, 1},
        {"", "AveragePoolGrad", NULL, 1},
        {"", "MaxPoolGrad", NULL, 1},
        {"com.microsoft", "ReluGrad", NULL, 1},
        {"com.microsoft", "Gelu", NULL, 1},
        {"com.microsoft", "GeluGrad", NULL, 1},
        {"com.microsoft", "SoftmaxGrad_13", NULL, 1},
        {"com.microsoft", "ConvGrad", NULL, 1},
        {"com.microsoft", "FusedMatMul", NULL, 1},
        {"org.pytorch.aten", "ATen", "baddbmm", 1},
        {"org.pytorch.aten", "ATen", "fill.Scalar", 1},
        {"org.pytorch.aten", "ATen", "silu", 1},
        {"", "Dropout", NULL, 0},
        {"", "RandomNormal", NULL, 0},
        {"", "RandomUniformLike", NULL, 0},
        {"", "Bernoulli", NULL, 0},
        {"", "Multinomial", NULL, 0},
        {"", "If", NULL, 0},
        {"", "Loop", NULL, 0},
        {"", "Scan", NULL, 0},
        {"", "Constant", NULL, 0},
        {"", "SequenceConstruct", NULL, 0},
        {"", "NoSuchOp", NULL, 0},
        {"com.microsoft", "BitmaskDropout", NULL, 0},
        {"com.microsoft", "BiasDropout", NULL, 0},
        {"com.microsoft", "AdamWOptimizer", NULL, 0},
        {"com.microsoft", "AdamOptimizer", NULL, 0},
        {"com.microsoft", "SGDOptimizer", NULL, 0},
        {"com.microsoft", "InPlaceAccumulatorV2", NULL, 0},
        {"com.microsoft", "ZeroGradient", NULL, 0},
        {"com.microsoft", "PassThrough", NULL, 0},
        {"com.microsoft", "BatchNormInternal", NULL, 0},
        {"org.pytorch.aten", "ATen", "bernoulli", 0},
        {"org.pytorch.aten", "ATen", "native_dropout", 0},
        {"org.pytorch.aten", "ATen", "empty_like", 0},
        {"org.pytorch.aten", "ATen", "empty", 0},
        {"org.pytorch.aten", "ATen", "randn", 0},
        {"org.pytorch.aten", "ATen", NULL, 0},
        {"com.example", "Relu", NULL, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int got = olla_op_recomputable(cases[i].domain, cases[i].op, cases[i].aten);
        if (got != cases[i].allowed)
            fprintf(stderr, "%s %s %s: %d, want %d\n", cases[i].domain, cases[i].op,
                    cases[i].aten ? cases[i].aten : "", got, cases[i].allowed);
        OLLA_CHECK(got == cases[i].allowed);
    }
    OLLA_CHECK(olla_op_required_outputs("", "MaxPool", 2) == 1);
    OLLA_CHECK(olla_op_required_outputs("", "BatchNormalization", 5) == 1);
    OLLA_CHECK(olla_op_required_outputs("", "Split", 3) == 3);
    OLLA_CHECK(olla_op_required_outputs("com.microsoft", "BatchNormInternal", 5) == 1);
}

OLLA_TEST(memory_limit_parse)
{
    static const struct {
        const char *text;
        int64_t bytes;
        double fraction;
    } ok[] = {
        {"1", 1, 0},       {"123456", 123456, 0}, {"2K", 2000, 0},        {"1.5M", 1500000, 0},
        {"3G", 3000000000LL, 0}, {"1Ki", 1024, 0}, {"1.5Mi", 1572864, 0}, {"2Gi", 2147483648LL, 0},
        {"60%", 0, 0.6},  {"100%", 0, 1.0},      {"0.5%", 0, 0.005},     {"12.5%", 0, 0.125},
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        olla_memory_limit lim;
        olla_error err = {0};
        OLLA_CHECK(olla_memory_limit_parse(ok[i].text, &lim, &err) == OLLA_OK);
        OLLA_CHECK_EQ_I64(lim.bytes, ok[i].bytes);
        OLLA_CHECK(fabs(lim.fraction - ok[i].fraction) < 1e-12);
    }
    static const char *const bad[] = {"", "abc", "0", "-5", "-5%", "0%", "101%", "100.5%", "1.5", "12KB", "1e3",
                                      "0x10", " 12", "+12", "12 ", "%", "1..2M", "K", "99999999999G", "1k"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        olla_memory_limit lim;
        olla_error err = {0};
        OLLA_CHECK(olla_memory_limit_parse(bad[i], &lim, &err) == OLLA_ERR_USAGE);
        OLLA_CHECK_STR_CONTAINS(err.message, "--memory-limit");
    }
    olla_memory_limit lim;
    olla_error err = {0};
    OLLA_CHECK(olla_memory_limit_parse(NULL, &lim, &err) == OLLA_ERR_USAGE);
}

/* ---- the brute force ---- */

typedef struct problem {
    olla_dag dag;
    int order[16];
    double cost[16];
    unsigned char copyable[16], keep[32];
    int buffer[32];
    olla_remat_problem p;
} problem;

static int run_once(const problem *pr, int v)
{
    const olla_dag *d = &pr->dag;
    if (!pr->copyable[v])
        return 1;
    for (int k = d->out_start[v]; k < d->out_start[v + 1]; k++)
        if (d->is_output[d->out_list[k]] || pr->keep[d->out_list[k]])
            return 1;
    return 0;
}

/* A min-heap of (distance, state) for the brute force's Dijkstra. */
typedef struct qitem {
    double d;
    size_t s;
} qitem;

typedef struct queue {
    qitem *a;
    size_t n, cap;
} queue;

static void q_push(queue *q, double d, size_t st)
{
    if (q->n == q->cap) {
        q->cap = q->cap ? q->cap * 2 : 1024;
        q->a = realloc(q->a, q->cap * sizeof *q->a);
        if (!q->a)
            exit(2);
    }
    size_t i = q->n++;
    while (i > 0 && q->a[(i - 1) / 2].d > d) {
        q->a[i] = q->a[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    q->a[i] = (qitem){d, st};
}

static qitem q_pop(queue *q)
{
    qitem top = q->a[0], last = q->a[--q->n];
    size_t i = 0;
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        double md = last.d;
        if (l < q->n && q->a[l].d < md) {
            m = l;
            md = q->a[l].d;
        }
        if (r < q->n && q->a[r].d < md)
            m = r;
        if (m == i)
            break;
        q->a[i] = q->a[m];
        i = m;
    }
    if (q->n)
        q->a[i] = last;
    return top;
}

/* The least extra cost of a plan under limit (DBL_MAX: none), or with
 * min_peak the smallest peak of any plan (as a double). Dijkstra over the
 * states: present tensors (bits), nodes run (bits); moves: free a tensor
 * that is no graph output, or run a node whose inputs are present (a node
 * that may not be copied runs once), all its outputs written. */
static double brute(const problem *pr, int64_t limit, int min_peak)
{
    const olla_dag *d = &pr->dag;
    int n = d->n_nodes, nt = d->n_tensors;
    size_t states = (size_t)1 << (nt + n);
    double *dist = malloc(states * sizeof(double));
    unsigned char *done = calloc(states, 1);
    queue q = {0};
    if (!dist || !done)
        exit(2);
    for (size_t s = 0; s < states; s++)
        dist[s] = DBL_MAX;
    dist[0] = 0;
    q_push(&q, 0, 0);
    unsigned all_nodes = (1u << n) - 1, outputs = 0;
    for (int e = 0; e < nt; e++)
        if (d->is_output[e])
            outputs |= 1u << e;
    double base = 0, answer = DBL_MAX;
    for (int v = 0; v < n; v++)
        base += pr->cost[v];
    while (q.n > 0) {
        qitem it = q_pop(&q);
        size_t best = it.s;
        double bd = it.d;
        if (done[best] || bd > dist[best])
            continue;
        done[best] = 1;
        unsigned present = (unsigned)(best & ((1u << nt) - 1)), ran = (unsigned)(best >> nt);
        if (ran == all_nodes && (present & outputs) == outputs) {
            answer = min_peak ? bd : bd - base;
            break;
        }
        int64_t held = 0;
        for (int e = 0; e < nt; e++)
            if (present >> e & 1)
                held += d->bytes[e];
        for (int e = 0; e < nt; e++) /* free one */
            if ((present >> e & 1) && !d->is_output[e]) {
                size_t to = (size_t)(present & ~(1u << e)) | ((size_t)ran << nt);
                if (bd < dist[to]) {
                    dist[to] = bd;
                    q_push(&q, bd, to);
                }
            }
        for (int v = 0; v < n; v++) { /* run one */
            if ((ran >> v & 1) && run_once(pr, v))
                continue;
            int ok = 1;
            for (int j = d->in_start[v]; j < d->in_start[v + 1]; j++)
                ok &= (int)(present >> d->in_list[j] & 1);
            if (!ok)
                continue;
            int64_t mem = held;
            unsigned made = 0;
            for (int k = d->out_start[v]; k < d->out_start[v + 1]; k++) {
                mem += d->bytes[d->out_list[k]];
                made |= 1u << d->out_list[k];
            }
            if (!min_peak && mem > limit)
                continue;
            size_t to = (size_t)(present | made) | ((size_t)(ran | 1u << v) << nt);
            double nd = min_peak ? (bd > (double)mem ? bd : (double)mem) : bd + pr->cost[v];
            if (nd < dist[to]) {
                dist[to] = nd;
                q_push(&q, nd, to);
            }
        }
    }
    free(q.a);
    free(dist);
    free(done);
    return answer;
}

static int make_problem(problem *pr, uint64_t seed, int n)
{
    memset(pr, 0, sizeof *pr);
    if (!tsu_random_dag(seed, n, 45, &pr->dag))
        return 0;
    if (pr->dag.n_tensors > 11) {
        olla_dag_free(&pr->dag);
        return 0;
    }
    for (int v = 0; v < n; v++) {
        pr->order[v] = v;
        pr->cost[v] = 1 + (double)(tsu_rand() % 9);
        pr->copyable[v] = tsu_rand() % 5 != 0;
    }
    for (int e = 0; e < pr->dag.n_tensors; e++) {
        pr->buffer[e] = pr->dag.bytes[e] > 0 ? e : -1;
        pr->keep[e] = tsu_rand() % 9 == 0;
    }
    pr->p = (olla_remat_problem){&pr->dag, pr->order, pr->cost, pr->copyable, pr->buffer, pr->keep, NULL, 0, 0, 0};
    return 1;
}

static void check_plan(const problem *pr, const olla_remat_plan *plan, int64_t limit)
{
    olla_error err = {0};
    OLLA_CHECK(olla_remat_plan_check(&pr->p, plan, &err) == OLLA_OK);
    if (err.message[0])
        fprintf(stderr, "%s\n", err.message);
    OLLA_CHECK(plan->peak <= limit);
    double copies = 0;
    for (int r = 0; r < plan->n_runs; r++)
        if (plan->copy[r])
            copies += pr->cost[plan->node[r]];
    OLLA_CHECK(fabs(copies - plan->extra_cost) < 1e-9);
}

OLLA_TEST(random_graphs_against_brute_force)
{
    int cases = 0, proven = 0, refused = 0, with_copies = 0;
    for (uint64_t seed = 1; seed < 400 && cases < 40; seed++) {
        problem pr;
        int n = 4 + (int)(seed % 3);
        if (!make_problem(&pr, seed, n))
            continue;
        olla_remat_plan ident;
        olla_error err = {0};
        OLLA_CHECK(olla_remat_plan_identity(&pr.p, &ident, &err) == OLLA_OK);
        OLLA_CHECK_EQ_I64(ident.peak, peak_of(&pr.dag, pr.order));
        double least = brute(&pr, 0, 1);
        int64_t bound = olla_remat_peak_bound(&pr.p);
        OLLA_CHECK((double)bound <= least);
        int64_t limits[4] = {(int64_t)least, (int64_t)least + (ident.peak - (int64_t)least) / 2, ident.peak,
                             (int64_t)least - 1};
        for (int i = 0; i < 4; i++) {
            int64_t lim = limits[i];
            double opt = brute(&pr, lim, 0);
            pr.p.limit = lim;
            olla_remat_plan plan;
            olla_remat_result res;
            OLLA_CHECK(olla_remat_solve(&pr.p, i == 3, &plan, &res, &err) == OLLA_OK);
            if (opt == DBL_MAX) {
                OLLA_CHECK(res.outcome == OLLA_REMAT_NOT_FOUND);
                refused++;
                if (i == 3) /* the smallest peak found is a peak some plan reaches */
                    OLLA_CHECK(res.smallest_peak < 0 || (double)res.smallest_peak >= least);
            } else if (res.outcome == OLLA_REMAT_FITS) {
                check_plan(&pr, &plan, lim);
                OLLA_CHECK(plan.extra_cost >= opt - 1e-9);
                if (res.optimal) {
                    OLLA_CHECK(fabs(plan.extra_cost - opt) < 1e-9);
                    proven++;
                }
                OLLA_CHECK(res.cost_bound <= opt + 1e-6);
                with_copies += plan.n_copies > 0;
            } else {
                fprintf(stderr, "seed %llu limit %lld: a plan costing %g exists, none found\n",
                        (unsigned long long)seed, (long long)lim, opt);
                OLLA_CHECK(0);
            }
            /* the exact program alone */
            olla_remat_plan exact;
            olla_remat_ilp_result ir = {0};
            OLLA_CHECK(olla_remat_ilp(&pr.p, NULL, pr.dag.n_nodes * 2, 0, &exact, &ir, &err) == OLLA_OK);
            int found = ir.found, optimal = ir.optimal;
            if (opt == DBL_MAX) {
                OLLA_CHECK(!found);
            } else if (found) {
                check_plan(&pr, &exact, lim);
                OLLA_CHECK(exact.extra_cost >= opt - 1e-9);
                if (optimal)
                    OLLA_CHECK(fabs(exact.extra_cost - opt) < 1e-9);
            }
            olla_remat_plan_free(&exact);
            olla_remat_plan_free(&plan);
        }
        olla_remat_plan_free(&ident);
        olla_dag_free(&pr.dag);
        cases++;
    }
    fprintf(stderr, "remat: %d graphs, %d proven optimal, %d limits refused, %d plans with copies\n", cases, proven,
            refused, with_copies);
    OLLA_CHECK(cases >= 40);
    OLLA_CHECK(proven >= 20);
    OLLA_CHECK(refused >= 20);
    OLLA_CHECK(with_copies >= 10);
}

/* ---- larger graphs with views and in-place writes: the search alone ---- */

typedef struct big {
    olla_dag dag;
    int n, *order, *buffer;
    double *cost;
    unsigned char *copyable, *keep;
    olla_remat_problem p;
} big;

/* n nodes in id order: plain nodes (one or two outputs), views of an
 * earlier tensor's buffer (0 bytes; their readers read the buffer too), and
 * nodes that may write their output over an input of the same size. */
static int make_big(big *g, uint64_t seed, int n)
{
    memset(g, 0, sizeof *g);
    tsu_state = seed * 7919u + 17u;
    olla_dag_builder *b = olla_dag_builder_new(n, 2 * n);
    int cap = 2 * n + 2, nt = 0;
    int *buffer = malloc((size_t)cap * sizeof(int));
    int64_t *bytes = malloc((size_t)cap * sizeof(int64_t));
    unsigned char *is_out = calloc((size_t)cap, 1);
    if (!b || !buffer || !bytes || !is_out)
        exit(2);
    for (int v = 0; v < n; v++) {
        int kind = nt == 0 ? 0 : (int)(tsu_rand() % 6); /* 0-3 plain, 4 view, 5 in place */
        int reads[3], nr = 0;
        for (int k = 0; k < 1 + (int)(tsu_rand() % 3) && nt > 0; k++) {
            /* mostly recent tensors, sometimes an old one (a skip connection) */
            int span = tsu_rand() % 4 == 0 ? nt : (nt < 4 ? nt : 4);
            reads[nr++] = nt - 1 - (int)(tsu_rand() % (unsigned)span);
        }
        for (int k = 0; k < nr; k++) {
            olla_dag_builder_use(b, v, reads[k]);
            if (buffer[reads[k]] >= 0 && buffer[reads[k]] != reads[k])
                olla_dag_builder_use(b, v, buffer[reads[k]]);
        }
        if (kind == 4 && nr > 0 && buffer[reads[0]] >= 0) {
            int e = olla_dag_builder_tensor(b, v, 0, 0);
            buffer[e] = buffer[reads[0]];
            bytes[e] = 0;
            nt++;
            continue;
        }
        int outs = 1 + (tsu_rand() % 4 == 0);
        for (int k = 0; k < outs; k++) {
            int64_t sz = 8 * (1 + (int64_t)(tsu_rand() % 64));
            int over = kind == 5 && k == 0 && nr > 0 && buffer[reads[0]] == reads[0] && !is_out[reads[0]];
            if (over)
                sz = bytes[reads[0]];
            int out = tsu_rand() % 40 == 0;
            int e = olla_dag_builder_tensor(b, v, sz, out);
            is_out[e] = (unsigned char)out;
            buffer[e] = e;
            bytes[e] = sz;
            nt++;
            if (over)
                olla_dag_builder_inplace(b, v, reads[0], e);
        }
    }
    olla_error err = {0};
    if (olla_dag_build(b, n, &g->dag, &err) != OLLA_OK) {
        fprintf(stderr, "make_big: %s\n", err.message);
        exit(2);
    }
    free(bytes);
    free(is_out);
    g->n = n;
    g->buffer = buffer;
    g->order = malloc((size_t)n * sizeof(int));
    g->cost = malloc((size_t)n * sizeof(double));
    g->copyable = malloc((size_t)n);
    g->keep = calloc((size_t)g->dag.n_tensors + 1, 1);
    for (int v = 0; v < n; v++) {
        g->order[v] = v;
        g->copyable[v] = tsu_rand() % 8 != 0;
        int view = g->dag.out_start[v + 1] > g->dag.out_start[v] && g->dag.bytes[g->dag.out_list[g->dag.out_start[v]]] == 0;
        g->cost[v] = view ? 0 : 1 + (double)(tsu_rand() % 50);
    }
    for (int e = 0; e < g->dag.n_tensors; e++)
        g->keep[e] = tsu_rand() % 50 == 0;
    g->p = (olla_remat_problem){&g->dag, g->order, g->cost, g->copyable, g->buffer, g->keep, NULL, 0, 2000000L, 0};
    return 1;
}

static void big_free(big *g)
{
    olla_dag_free(&g->dag);
    free(g->order);
    free(g->buffer);
    free(g->cost);
    free(g->copyable);
    free(g->keep);
}

OLLA_TEST(search_with_views_and_in_place)
{
    int plans = 0, copies = 0, inplace = 0, tried = 0;
    for (uint64_t seed = 1; seed <= 40; seed++) {
        big g;
        make_big(&g, seed, 45 + (int)(seed % 40));
        inplace += g.dag.n_inplace > 0;
        olla_remat_plan ident;
        olla_error err = {0};
        OLLA_CHECK(olla_remat_plan_identity(&g.p, &ident, &err) == OLLA_OK);
        OLLA_CHECK(olla_remat_plan_check(&g.p, &ident, &err) == OLLA_OK);
        int64_t bound = olla_remat_peak_bound(&g.p);
        OLLA_CHECK(bound <= ident.peak);
        /* limits from the smallest peak the search reaches up to the base order's */
        olla_remat_plan none;
        olla_remat_result first;
        g.p.limit = ident.peak;
        OLLA_CHECK(olla_remat_solve(&g.p, 1, &none, &first, &err) == OLLA_OK);
        OLLA_CHECK(first.outcome == OLLA_REMAT_FITS && none.n_copies == 0);
        OLLA_CHECK(first.smallest_peak >= bound && first.smallest_peak <= ident.peak);
        olla_remat_plan_free(&none);
        for (int i = 0; i < 4; i++) {
            int64_t lim = first.smallest_peak + (ident.peak - first.smallest_peak) * i / 4;
            tried++;
            g.p.limit = lim;
            olla_remat_plan plan;
            olla_remat_result res;
            OLLA_CHECK(olla_remat_solve(&g.p, 0, &plan, &res, &err) == OLLA_OK);
            if (res.outcome != OLLA_REMAT_FITS)
                continue;
            OLLA_CHECK(olla_remat_plan_check(&g.p, &plan, &err) == OLLA_OK);
            if (err.message[0]) {
                fprintf(stderr, "seed %llu: %s\n", (unsigned long long)seed, err.message);
                err.message[0] = '\0';
            }
            OLLA_CHECK(plan.peak <= lim);
            /* the plan's DAG gives the same peak under the identity order */
            olla_dag pd;
            OLLA_CHECK(olla_remat_plan_dag(&g.p, &plan, &pd, NULL, &err) == OLLA_OK);
            int *ident_order = malloc((size_t)plan.n_runs * sizeof(int));
            for (int r = 0; r < plan.n_runs; r++)
                ident_order[r] = r;
            OLLA_CHECK_EQ_I64(peak_of(&pd, ident_order), plan.peak);
            OLLA_CHECK(olla_dag_is_topological(&pd, ident_order));
            free(ident_order);
            olla_dag_free(&pd);
            plans++;
            copies += plan.n_copies > 0;
            olla_remat_plan_free(&plan);
        }
        olla_remat_plan_free(&ident);
        big_free(&g);
    }
    fprintf(stderr, "remat search: %d plans, %d with copies, %d graphs with in-place candidates\n", plans, copies,
            inplace);
    OLLA_CHECK(plans >= tried * 9 / 10);
    OLLA_CHECK(copies >= tried / 2);
    OLLA_CHECK(inplace >= 20);
}

OLLA_TEST_MAIN(OLLA_T(recompute_rules), OLLA_T(memory_limit_parse), OLLA_T(random_graphs_against_brute_force),
               OLLA_T(search_with_views_and_in_place))
