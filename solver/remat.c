/* olla-onnx: the cheapest plan with recomputation under a memory limit
 * (olla_remat.h).
 *
 *   bound -> does the base order fit? -> portfolio of policies -> exact
 *   program (small graphs) -> local search -> (smallest peak: bisection)
 *
 * Every candidate plan comes from remat_simulate, whose plans stay under
 * the limit by construction (remat_sim.c) and are measured exactly; the
 * cheapest in copies wins, ties going to the lower peak. The search spends
 * a budget of work units (runs simulated, candidates scored), so the same
 * problem gives the same plan on a busy machine; the deadline is a safety
 * net only. */
#include <float.h>
#include <stdlib.h>
#include <string.h>

#include "solver/olla_remat.h"
#include "solver/remat_sim.h"

#define OOM "out of memory planning recomputation"

/* Default work budget: runs simulated plus candidates scored. */
#define REMAT_DEFAULT_BUDGET 400000000L
/* Share of the budget the bisection for the smallest peak may use. */
#define REMAT_SMALLEST_SHARE 0.3
/* The bisection stops when the interval is this fraction of its top. */
#define REMAT_BISECT_PRECISION 0.001
/* Checkpoint policies: tensors live for at least this fraction of the
 * order are the long-lived ones (the activations kept for the backward
 * pass), among which every k-th is kept. */
#define REMAT_LONG_LIVED_FRACTION 0.125
/* Steps of the exact program given to copies, per node, and its time. */
#define REMAT_ILP_COPIES_PER_NODE 1
#define REMAT_ILP_SECONDS 20.0

/* ---- the bound ---- */

/* Bytes node v needs while it runs: its inputs and outputs, an in-place
 * output counted once with its input. */
static int64_t node_need(const olla_dag *dag, int v, const unsigned char *skip)
{
    int64_t need = 0;
    for (int j = dag->in_start[v]; j < dag->in_start[v + 1]; j++)
        if (!skip || !skip[dag->in_list[j]])
            need += dag->bytes[dag->in_list[j]];
    for (int k = dag->out_start[v]; k < dag->out_start[v + 1]; k++)
        if (!skip || !skip[dag->out_list[k]])
            need += dag->bytes[dag->out_list[k]];
    for (int q = dag->n_inplace ? dag->inplace_start[v] : 0; dag->n_inplace && q < dag->inplace_start[v + 1]; q++)
        if (!skip || (!skip[dag->inplace_in[q]] && !skip[dag->inplace_out[q]]))
            need -= dag->bytes[dag->inplace_out[q]];
    return need;
}

int64_t olla_remat_peak_bound(const olla_remat_problem *p)
{
    const olla_dag *dag = p->dag;
    int64_t most = 0, outputs = 0, last_extra = INT64_MAX;
    for (int v = 0; v < dag->n_nodes; v++) {
        int64_t need = node_need(dag, v, NULL);
        if (need > most)
            most = need;
    }
    for (int e = 0; e < dag->n_tensors; e++)
        if (dag->is_output[e])
            outputs += dag->bytes[e];
    /* the run at the last step: a node none of whose outputs is read (or a
     * copy, which any copyable node may be); graph outputs counted once */
    for (int v = 0; v < dag->n_nodes; v++) {
        int sink = 1;
        for (int k = dag->out_start[v]; sink && k < dag->out_start[v + 1]; k++)
            sink = dag->sink_start[dag->out_list[k]] == dag->sink_start[dag->out_list[k] + 1];
        if (!sink && !p->copyable[v])
            continue;
        int64_t extra = node_need(dag, v, dag->is_output);
        if (extra < last_extra)
            last_extra = extra;
    }
    if (last_extra == INT64_MAX || last_extra < 0)
        last_extra = 0;
    return most > outputs + last_extra ? most : outputs + last_extra;
}

/* ---- the search ---- */

typedef struct search {
    const olla_remat_problem *p;
    remat_ctx c;
    long budget, work;
    olla_remat_plan best;
    int have_best;
    unsigned char *protect, *prefer; /* of the best plan's policy */
    int best_score;
    int stopped_by_time;
} search;

static int out_of_work(const search *s)
{
    if (s->p->deadline > 0 && olla_past(s->p->deadline))
        return 1;
    return s->work >= s->budget;
}

/* 1 when a is cheaper than b (fewer copies' cost, then lower peak). */
static int better(const olla_remat_plan *a, const olla_remat_plan *b)
{
    if (a->extra_cost != b->extra_cost)
        return a->extra_cost < b->extra_cost;
    return a->peak < b->peak;
}

/* Simulates one policy at limit; keeps the plan when it is the best so far
 * (and its policy's sets, copied). *fits receives whether it fit. */
static olla_status try_policy(search *s, const remat_policy *pol, int64_t limit, int keep, int *fits,
                              olla_error *err)
{
    olla_remat_plan plan;
    long work = 0;
    olla_status st = remat_simulate(&s->c, pol, limit, &plan, fits, &work, err);
    s->work += work;
    if (st != OLLA_OK || !*fits)
        return st;
    if (keep && (!s->have_best || better(&plan, &s->best))) {
        olla_remat_plan_free(&s->best);
        s->best = plan;
        s->have_best = 1;
        size_t nt = (size_t)s->c.nt;
        if (pol->protect != s->protect) {
            if (pol->protect)
                memcpy(s->protect, pol->protect, nt);
            else
                memset(s->protect, 0, nt);
        }
        if (pol->prefer != s->prefer) {
            if (pol->prefer)
                memcpy(s->prefer, pol->prefer, nt);
            else
                memset(s->prefer, 0, nt);
        }
        s->best_score = pol->score;
        return OLLA_OK;
    }
    olla_remat_plan_free(&plan);
    return OLLA_OK;
}

/* The long-lived eligible tensors in order of production. */
static int long_lived(const search *s, int *list)
{
    const remat_ctx *c = &s->c;
    const olla_dag *dag = c->dag;
    int m = 0, span = (int)((double)c->n * REMAT_LONG_LIVED_FRACTION);
    for (int t = 0; t < c->n; t++) {
        int v = s->p->order[t];
        for (int k = dag->out_start[v]; k < dag->out_start[v + 1]; k++) {
            int e = dag->out_list[k];
            if (c->eligible[e] && dag->bytes[e] > 0 && c->last_use[e] - t >= span)
                list[m++] = e;
        }
    }
    return m;
}

/* The portfolio: cost models, then checkpoints every k-th long-lived
 * tensor (the others freed first). */
static olla_status portfolio(search *s, int64_t limit, int keep, int *any_fits, olla_error *err)
{
    static const int scores[] = {REMAT_SCORE_COST, REMAT_SCORE_COST_SQUARED, REMAT_SCORE_DISTANCE};
    size_t nt = (size_t)s->c.nt;
    *any_fits = 0;
    olla_status st = OLLA_OK;
    for (size_t i = 0; st == OLLA_OK && i < sizeof scores / sizeof scores[0] && !out_of_work(s); i++) {
        remat_policy pol = {scores[i], NULL, NULL};
        int fits = 0;
        st = try_policy(s, &pol, limit, keep, &fits, err);
        *any_fits |= fits;
    }
    int *list = malloc((nt + 1) * sizeof(int));
    unsigned char *protect = calloc(nt + 1, 1), *prefer = calloc(nt + 1, 1);
    if (!list || !protect || !prefer) {
        free(list);
        free(protect);
        free(prefer);
        return olla_error_set(err, OLLA_ERR_INTERNAL, OOM);
    }
    int m = long_lived(s, list);
    /* every k-th kept, k around sqrt(m) and its multiples; k = m + 1 keeps none */
    int ks[8], nk = 0, r = 1;
    while (r * r < m)
        r++;
    int cands[] = {r / 2, r, 2 * r, 4 * r, m + 1};
    for (size_t i = 0; i < sizeof cands / sizeof cands[0]; i++)
        if (cands[i] >= 2 && (nk == 0 || ks[nk - 1] != cands[i]))
            ks[nk++] = cands[i];
    for (int i = 0; st == OLLA_OK && m > 0 && i < nk && !out_of_work(s); i++) {
        memset(protect, 0, nt);
        memset(prefer, 0, nt);
        for (int j = 0; j < m; j++) {
            if (j % ks[i] == 0 && ks[i] <= m)
                protect[list[j]] = 1;
            else
                prefer[list[j]] = 1;
        }
        remat_policy pol = {REMAT_SCORE_COST, protect, prefer};
        int fits = 0;
        st = try_policy(s, &pol, limit, keep, &fits, err);
        *any_fits |= fits;
    }
    free(list);
    free(protect);
    free(prefer);
    return st;
}

typedef struct charged {
    int tensor;
    double cost;
} charged;

static int by_cost_desc(const void *a, const void *b)
{
    const charged *x = a, *y = b;
    if (x->cost != y->cost)
        return x->cost > y->cost ? -1 : 1;
    return (x->tensor > y->tensor) - (x->tensor < y->tensor);
}

/* The tensors the best plan recomputes, most expensive first: each charged
 * the cost of the copies that wrote versions of it that were read. */
static int charged_tensors(const search *s, charged *out)
{
    const olla_dag *dag = s->c.dag;
    const olla_remat_plan *pl = &s->best;
    int n = 0;
    double *cost = calloc((size_t)dag->n_tensors + 1, sizeof(double));
    if (!cost)
        return -1;
    for (int r = 0; r < pl->n_runs; r++)
        if (pl->copy[r]) {
            int v = pl->node[r];
            for (int k = dag->out_start[v]; k < dag->out_start[v + 1]; k++)
                cost[dag->out_list[k]] += s->p->cost[v];
        }
    for (int e = 0; e < dag->n_tensors; e++)
        if (cost[e] > 0 && s->c.eligible[e] && dag->bytes[e] > 0)
            out[n++] = (charged){e, cost[e]};
    free(cost);
    qsort(out, (size_t)n, sizeof *out, by_cost_desc);
    return n;
}

/* Local search: keep (protect) a tensor the best plan recomputes, most
 * expensive first, while that makes the plan cheaper and it still fits;
 * repeated until a pass gains nothing or the budget ends. */
static olla_status improve(search *s, int64_t limit, olla_error *err)
{
    size_t nt = (size_t)s->c.nt;
    charged *list = malloc((nt + 1) * sizeof *list);
    unsigned char *protect = malloc(nt + 1), *prefer = malloc(nt + 1);
    olla_status st = OLLA_OK;
    if (!list || !protect || !prefer)
        st = olla_error_set(err, OLLA_ERR_INTERNAL, OOM);
    for (int gained = 1; st == OLLA_OK && gained && !out_of_work(s);) {
        gained = 0;
        int m = charged_tensors(s, list);
        if (m < 0) {
            st = olla_error_set(err, OLLA_ERR_INTERNAL, OOM);
            break;
        }
        for (int i = 0; st == OLLA_OK && i < m && !out_of_work(s); i++) {
            memcpy(protect, s->protect, nt);
            memcpy(prefer, s->prefer, nt);
            protect[list[i].tensor] = 1;
            prefer[list[i].tensor] = 0;
            double before = s->best.extra_cost;
            remat_policy pol = {s->best_score, protect, prefer};
            int fits = 0;
            st = try_policy(s, &pol, limit, 1, &fits, err);
            if (st == OLLA_OK && s->best.extra_cost < before) {
                gained = 1;
                break; /* the best plan changed: recount what it recomputes */
            }
        }
    }
    free(list);
    free(protect);
    free(prefer);
    return st;
}

/* The smallest limit the portfolio fits under, by bisection between the
 * bound and the base order's peak. */
static olla_status smallest_peak(search *s, int64_t lo, int64_t hi, int64_t *smallest, olla_error *err)
{
    long stop = s->work + (long)((double)s->budget * REMAT_SMALLEST_SHARE);
    int64_t found = hi;
    olla_status st = OLLA_OK;
    while (st == OLLA_OK && hi - lo > (int64_t)((double)hi * REMAT_BISECT_PRECISION) && hi - lo > 1 &&
           s->work < stop && !out_of_work(s)) {
        int64_t mid = lo + (hi - lo) / 2;
        int fits = 0;
        st = portfolio(s, mid, 0, &fits, err);
        if (fits)
            hi = found = mid;
        else
            lo = mid;
    }
    /* the smallest peak is the plans' own, at or under found */
    *smallest = found;
    return st;
}

static void search_free(search *s)
{
    remat_ctx_free(&s->c);
    olla_remat_plan_free(&s->best);
    free(s->protect);
    free(s->prefer);
}

olla_status olla_remat_solve(const olla_remat_problem *p, int find_smallest, olla_remat_plan *plan,
                             olla_remat_result *res, olla_error *err)
{
    memset(plan, 0, sizeof *plan);
    memset(res, 0, sizeof *res);
    res->smallest_peak = -1;
    res->method = "none";
    res->lower_bound = olla_remat_peak_bound(p);
    search s;
    memset(&s, 0, sizeof s);
    s.p = p;
    s.budget = p->budget > 0 ? p->budget : REMAT_DEFAULT_BUDGET;
    olla_status st = remat_ctx_init(&s.c, p, err);
    if (st != OLLA_OK)
        return st;
    s.protect = calloc((size_t)s.c.nt + 1, 1);
    s.prefer = calloc((size_t)s.c.nt + 1, 1);
    if (!s.protect || !s.prefer) {
        search_free(&s);
        return olla_error_set(err, OLLA_ERR_INTERNAL, OOM);
    }
    olla_remat_plan base;
    if ((st = olla_remat_plan_identity(p, &base, err)) != OLLA_OK) {
        search_free(&s);
        return st;
    }
    if (find_smallest && (st = smallest_peak(&s, res->lower_bound - 1, base.peak, &res->smallest_peak, err)) != OLLA_OK) {
        olla_remat_plan_free(&base);
        search_free(&s);
        return st;
    }
    if (base.peak <= p->limit) {
        *plan = base;
        res->outcome = OLLA_REMAT_FITS;
        res->optimal = 1;
        res->work = s.work;
        search_free(&s);
        return OLLA_OK;
    }
    olla_remat_plan_free(&base);
    int fits = 0;
    if (p->limit >= res->lower_bound)
        st = portfolio(&s, p->limit, 1, &fits, err);
    res->method = "greedy";
    if (st == OLLA_OK && p->limit >= res->lower_bound && p->dag->n_nodes <= OLLA_REMAT_ILP_MAX_NODES) {
        olla_remat_plan exact;
        int found = 0, optimal = 0;
        double bound = 0;
        olla_error ierr = {0};
        if (olla_remat_ilp(p, s.have_best ? &s.best : NULL, REMAT_ILP_COPIES_PER_NODE * p->dag->n_nodes,
                           REMAT_ILP_SECONDS, &exact, &found, &optimal, &bound, &ierr) == OLLA_OK &&
            found) {
            if (!s.have_best || better(&exact, &s.best)) {
                s.have_best = 1;
                olla_remat_plan_free(&s.best);
                s.best = exact;
            } else {
                olla_remat_plan_free(&exact);
            }
            res->method = "ilp";
            res->cost_bound = bound;
            res->optimal = optimal && s.best.extra_cost <= bound + 1e-9 * (bound + 1.0);
        }
    }
    if (st == OLLA_OK && s.have_best && !res->optimal) {
        st = improve(&s, p->limit, err);
        if (strcmp(res->method, "greedy") == 0)
            res->method = "search";
    }
    res->work = s.work;
    res->stopped_by_time = p->deadline > 0 && olla_past(p->deadline);
    if (st == OLLA_OK && s.have_best) {
        *plan = s.best;
        memset(&s.best, 0, sizeof s.best);
        res->outcome = OLLA_REMAT_FITS;
    } else if (st == OLLA_OK) {
        res->outcome = OLLA_REMAT_NOT_FOUND;
    }
    search_free(&s);
    return st;
}
