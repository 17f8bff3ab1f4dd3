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
/* Steps of the exact program given to copies, per node, and its time. */
#define REMAT_ILP_COPIES_PER_NODE 1
#define REMAT_ILP_SECONDS 60.0
/* The relative slack within which the search's cost meets the ILP's bound. */
#define REMAT_COST_TOLERANCE 1e-9

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
    unsigned char *protect, *prefer, *drop; /* of the best plan's policy */
    int best_score;
    int stopped_by_time;
    int64_t least_peak; /* the least peak of any plan simulated that fit, or INT64_MAX */
    int64_t target;     /* the peak a plan must meet (the limit; the simulation may run under another) */
    int64_t best_limit; /* the simulation's limit of the best plan */
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

static void copy_set(unsigned char *to, const unsigned char *from, size_t n)
{
    if (from)
        memcpy(to, from, n);
    else
        memset(to, 0, n);
}

/* Simulates one policy at limit; keeps the plan when it is the best so far
 * (and its policy's sets, copied). *fits receives whether it fit. */
static olla_status try_policy(search *s, const remat_policy *pol, int64_t limit, int keep, int *fits,
                              olla_error *err)
{
    olla_remat_plan plan;
    long work = 0;
    olla_status st = remat_simulate(&s->c, pol, (remat_limits){limit, s->target}, &plan, fits, &work, err);
    s->work += work;
    if (st != OLLA_OK || !*fits)
        return st;
    if (plan.peak < s->least_peak)
        s->least_peak = plan.peak;
    if (keep && (!s->have_best || better(&plan, &s->best))) {
        olla_remat_plan_free(&s->best);
        s->best = plan;
        s->have_best = 1;
        size_t nt = (size_t)s->c.nt;
        if (pol->protect != s->protect)
            copy_set(s->protect, pol->protect, nt);
        if (pol->prefer != s->prefer)
            copy_set(s->prefer, pol->prefer, nt);
        if (pol->drop != s->drop)
            copy_set(s->drop, pol->drop, nt);
        s->best_score = pol->score;
        s->best_limit = limit;
        return OLLA_OK;
    }
    olla_remat_plan_free(&plan);
    return OLLA_OK;
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

/* ---- checkpoints chosen by covering the excess ----
 *
 * Dropping tensor e over its gap (olla_remat.h's base order, remat_sim.h's
 * gap_start/gap_end) lowers the live bytes of every step strictly inside
 * the gap by bytes(e), at about the cost of running its producer again.
 * Choosing what to drop so that every step's excess over the limit is
 * covered is a weighted covering problem over intervals; the greedy below
 * takes the step with the largest uncovered excess and covers it with the
 * candidate of least cost per byte among those whose gap spans it, until no
 * excess is left, then removes, most expensive first, every pick the cover
 * no longer needs. The simulation then runs the choice exactly (chains of
 * recomputation, the copies' own memory, in-place writes), freeing more
 * under pressure if it must. */

typedef struct cover {
    int64_t *deficit; /* per step: excess still uncovered */
    int *cand, m;     /* candidates */
    unsigned char *taken;
} cover;

static void cover_add(cover *cv, const remat_ctx *c, int e, int sign)
{
    for (int t = c->gap_start[e] + 1; t < c->gap_end[e]; t++)
        cv->deficit[t] -= sign * c->dag->bytes[e];
}

/* The drop set covering the excess over target (0 in drop when nothing
 * can cover some step: then what covers the rest). */
static olla_status cover_drop(search *s, int64_t target, unsigned char *drop, olla_error *err)
{
    const remat_ctx *c = &s->c;
    const olla_dag *dag = c->dag;
    int n = c->n;
    size_t nt = (size_t)c->nt;
    cover cv;
    cv.deficit = malloc(((size_t)n + 1) * sizeof(int64_t));
    cv.cand = malloc((nt + 1) * sizeof(int));
    cv.taken = calloc(nt + 1, 1);
    int *step = malloc(((size_t)n + 1) * sizeof(int)), *first = malloc((nt + 1) * sizeof(int)),
        *last = malloc((nt + 1) * sizeof(int));
    int64_t *delta = malloc(((size_t)n + 2) * sizeof(int64_t));
    charged *picked = malloc((nt + 1) * sizeof *picked);
    if (!cv.deficit || !cv.cand || !cv.taken || !step || !first || !last || !delta || !picked) {
        free(cv.deficit);
        free(cv.cand);
        free(cv.taken);
        free(step);
        free(first);
        free(last);
        free(delta);
        free(picked);
        return olla_error_set(err, OLLA_ERR_INTERNAL, OOM);
    }
    for (int t = 0; t < n; t++)
        step[s->p->order[t]] = t;
    olla_dag_profile(dag, step, first, last, delta, cv.deficit);
    for (int t = 0; t < n; t++)
        cv.deficit[t] -= target;
    cv.m = 0;
    for (int e = 0; e < c->nt; e++)
        if (c->gap_start[e] >= 0 && dag->bytes[e] > 0)
            cv.cand[cv.m++] = e;
    memset(drop, 0, nt);
    int n_picked = 0;
    for (;;) {
        int worst = -1;
        for (int t = 0; t < n; t++)
            if (cv.deficit[t] > 0 && (worst < 0 || cv.deficit[t] > cv.deficit[worst]))
                worst = t;
        if (worst < 0)
            break;
        int best = -1;
        double best_ratio = 0;
        for (int i = 0; i < cv.m; i++) {
            int e = cv.cand[i];
            if (cv.taken[e] || c->gap_start[e] >= worst || c->gap_end[e] <= worst)
                continue;
            double ratio = s->p->cost[dag->producer[e]] / (double)dag->bytes[e];
            if (best < 0 || ratio < best_ratio ||
                (ratio == best_ratio && c->gap_end[e] - c->gap_start[e] > c->gap_end[best] - c->gap_start[best])) {
                best = e;
                best_ratio = ratio;
            }
        }
        s->work += cv.m;
        if (best < 0)
            break; /* nothing spans this step: what covers the rest still helps */
        cv.taken[best] = 1;
        cover_add(&cv, c, best, 1);
        picked[n_picked++] = (charged){best, s->p->cost[dag->producer[best]]};
    }
    /* reverse delete: the most expensive pick first */
    qsort(picked, (size_t)n_picked, sizeof *picked, by_cost_desc);
    for (int i = 0; i < n_picked; i++) {
        int e = picked[i].tensor, needed = 0;
        for (int t = c->gap_start[e] + 1; t < c->gap_end[e] && !needed; t++)
            needed = cv.deficit[t] + dag->bytes[e] > 0;
        if (needed)
            drop[e] = 1;
        else
            cover_add(&cv, c, e, -1);
    }
    free(cv.deficit);
    free(cv.cand);
    free(cv.taken);
    free(step);
    free(first);
    free(last);
    free(delta);
    free(picked);
    return OLLA_OK;
}

/* Cover policies at the limit and at targets below it (the copies need
 * memory of their own when they run). */
static olla_status covers(search *s, int64_t limit, int keep, int *any_fits, olla_error *err)
{
    static const double below[] = {0, 0.01, 0.03, 0.06, 0.1};
    size_t nt = (size_t)s->c.nt;
    unsigned char *drop = malloc(nt + 1);
    if (!drop)
        return olla_error_set(err, OLLA_ERR_INTERNAL, OOM);
    olla_status st = OLLA_OK;
    for (size_t i = 0; st == OLLA_OK && i < sizeof below / sizeof below[0] && !out_of_work(s); i++) {
        if ((st = cover_drop(s, (int64_t)((double)limit * (1.0 - below[i])), drop, err)) != OLLA_OK)
            break;
        remat_policy pol = {REMAT_SCORE_COST, NULL, NULL, drop};
        int fits = 0;
        st = try_policy(s, &pol, limit, keep, &fits, err);
        *any_fits |= fits;
        if (fits && keep)
            break; /* a tighter target only costs more */
    }
    free(drop);
    return st;
}

/* The tensors worth checkpointing: eligible, with a gap, read by at least
 * min_readers nodes, in order of production. */
static int gap_tensors(const search *s, int min_readers, int *list)
{
    const remat_ctx *c = &s->c;
    const olla_dag *dag = c->dag;
    int m = 0;
    for (int t = 0; t < c->n; t++) {
        int v = s->p->order[t];
        for (int k = dag->out_start[v]; k < dag->out_start[v + 1]; k++) {
            int e = dag->out_list[k];
            if (c->gap_start[e] >= 0 && dag->bytes[e] > 0 &&
                dag->sink_start[e + 1] - dag->sink_start[e] >= min_readers)
                list[m++] = e;
        }
    }
    return m;
}

/* The portfolio: cost models freeing under pressure only; then
 * checkpointing (Chen et al.): every k-th tensor with a gap kept, the
 * others dropped over their gap, k around sqrt(m) and its multiples, and
 * all dropped. */
static olla_status portfolio(search *s, int64_t limit, int keep, int *any_fits, olla_error *err)
{
    static const int scores[] = {REMAT_SCORE_COST, REMAT_SCORE_COST_SQUARED, REMAT_SCORE_DISTANCE};
    size_t nt = (size_t)s->c.nt;
    *any_fits = 0;
    int fits_cover = 0;
    olla_status st = covers(s, limit, keep, &fits_cover, err);
    *any_fits |= fits_cover;
    for (size_t i = 0; st == OLLA_OK && i < sizeof scores / sizeof scores[0] && !out_of_work(s); i++) {
        remat_policy pol = {scores[i], NULL, NULL, NULL};
        int fits = 0;
        st = try_policy(s, &pol, limit, keep, &fits, err);
        *any_fits |= fits;
    }
    int *list = malloc((nt + 1) * sizeof(int));
    unsigned char *protect = calloc(nt + 1, 1), *drop = calloc(nt + 1, 1);
    if (!list || !protect || !drop) {
        free(list);
        free(protect);
        free(drop);
        return olla_error_set(err, OLLA_ERR_INTERNAL, OOM);
    }
    /* the activations read again (two readers or more), then every tensor with a gap */
    for (int min_readers = 2; min_readers >= 1; min_readers--) {
        int m = gap_tensors(s, min_readers, list);
        int r = 1;
        while (r * r < m)
            r++;
        int ks[] = {r / 2, r, 2 * r, 4 * r, m + 1};
        for (size_t i = 0; st == OLLA_OK && m > 0 && i < sizeof ks / sizeof ks[0] && !out_of_work(s); i++) {
            if (ks[i] < 2 || (i > 0 && ks[i] == ks[i - 1]))
                continue;
            memset(protect, 0, nt);
            memset(drop, 0, nt);
            for (int j = 0; j < m; j++) {
                if (j % ks[i] == 0 && ks[i] <= m)
                    protect[list[j]] = 1;
                else
                    drop[list[j]] = 1;
            }
            remat_policy pol = {REMAT_SCORE_COST, protect, NULL, drop};
            int fits = 0;
            st = try_policy(s, &pol, limit, keep, &fits, err);
            *any_fits |= fits;
        }
    }
    free(list);
    free(protect);
    free(drop);
    return st;
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

/* Local search: for a tensor the best plan recomputes, most expensive
 * first, stop dropping it early and keep it from being freed; take the
 * first change that makes the plan cheaper and still fits, and start over,
 * until a pass gains nothing or the budget ends. */
static olla_status improve(search *s, olla_error *err)
{
    size_t nt = (size_t)s->c.nt;
    charged *list = malloc((nt + 1) * sizeof *list);
    unsigned char *protect = malloc(nt + 1), *prefer = malloc(nt + 1), *drop = malloc(nt + 1);
    olla_status st = OLLA_OK;
    if (!list || !protect || !prefer || !drop)
        st = olla_error_set(err, OLLA_ERR_INTERNAL, OOM);
    for (int gained = 1; st == OLLA_OK && gained && !out_of_work(s);) {
        gained = 0;
        int m = charged_tensors(s, list);
        if (m < 0) {
            st = olla_error_set(err, OLLA_ERR_INTERNAL, OOM);
            break;
        }
        for (int i = 0; st == OLLA_OK && i < m && !gained && !out_of_work(s); i++) {
            int e = list[i].tensor;
            memcpy(protect, s->protect, nt);
            memcpy(prefer, s->prefer, nt);
            memcpy(drop, s->drop, nt);
            protect[e] = 1;
            prefer[e] = 0;
            drop[e] = 0;
            double before = s->best.extra_cost;
            remat_policy pol = {s->best_score, protect, prefer, drop};
            int fits = 0;
            st = try_policy(s, &pol, s->best_limit, 1, &fits, err);
            gained = st == OLLA_OK && s->best.extra_cost < before;
        }
    }
    free(list);
    free(protect);
    free(prefer);
    free(drop);
    return st;
}

/* The smallest limit the portfolio fits under, by bisection between the
 * bound and the base order's peak. */
static olla_status smallest_peak(search *s, int64_t lo, int64_t hi, int64_t *smallest, olla_error *err)
{
    long stop = s->work + (long)((double)s->budget * REMAT_SMALLEST_SHARE);
    long budget = s->budget;
    s->budget = stop; /* one probe may pass the share; the search after it starts afresh */
    int64_t found = hi;
    olla_status st = OLLA_OK;
    while (st == OLLA_OK && hi - lo > (int64_t)((double)hi * REMAT_BISECT_PRECISION) && hi - lo > 1 &&
           s->work < stop && !out_of_work(s)) {
        int64_t mid = lo + (hi - lo) / 2;
        int fits = 0;
        s->target = mid;
        st = portfolio(s, mid, 0, &fits, err);
        if (fits)
            hi = found = mid;
        else
            lo = mid;
    }
    /* the smallest peak is the plans' own, at or under found */
    *smallest = found < s->least_peak ? found : s->least_peak;
    s->budget = budget;
    return st;
}

static void search_free(search *s)
{
    remat_ctx_free(&s->c);
    olla_remat_plan_free(&s->best);
    free(s->protect);
    free(s->prefer);
    free(s->drop);
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
    s.least_peak = INT64_MAX;
    s.target = p->limit;
    olla_status st = remat_ctx_init(&s.c, p, err);
    if (st != OLLA_OK)
        return st;
    s.protect = calloc((size_t)s.c.nt + 1, 1);
    s.prefer = calloc((size_t)s.c.nt + 1, 1);
    s.drop = calloc((size_t)s.c.nt + 1, 1);
    if (!s.protect || !s.prefer || !s.drop) {
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
    res->work = s.work;
    s.work = 0; /* the search under the limit has a budget of its own */
    s.target = p->limit;
    if (base.peak <= p->limit) {
        *plan = base;
        res->outcome = OLLA_REMAT_FITS;
        res->optimal = 1;
        search_free(&s);
        return OLLA_OK;
    }
    olla_remat_plan_free(&base);
    int fits = 0;
    if (p->limit >= res->lower_bound)
        st = portfolio(&s, p->limit, 1, &fits, err);
    /* the simulation is neither monotone in its limit nor exact (it counts
     * what it frees under pressure until it frees it): other limits for it,
     * around the one to meet, may give a plan that meets it */
    static const double around[] = {-0.005, 0.01, -0.02, 0.03, -0.05, 0.06, -0.1, 0.1, 0.15, 0.25};
    for (size_t i = 0; st == OLLA_OK && !s.have_best && p->limit >= res->lower_bound &&
                       i < sizeof around / sizeof around[0] && !out_of_work(&s);
         i++)
        st = portfolio(&s, (int64_t)((double)p->limit * (1.0 + around[i])), 1, &fits, err);
    res->method = "greedy";
    if (st == OLLA_OK && p->limit >= res->lower_bound && p->dag->n_nodes <= OLLA_REMAT_ILP_MAX_NODES) {
        olla_remat_plan exact;
        olla_remat_ilp_result ir = {0};
        olla_error ierr = {0};
        if (olla_remat_ilp(p, s.have_best ? &s.best : NULL, REMAT_ILP_COPIES_PER_NODE * p->dag->n_nodes,
                           REMAT_ILP_SECONDS, &exact, &ir, &ierr) == OLLA_OK &&
            ir.found) {
            if (!s.have_best || better(&exact, &s.best)) {
                s.have_best = 1;
                olla_remat_plan_free(&s.best);
                s.best = exact;
            } else {
                olla_remat_plan_free(&exact);
            }
            res->method = "ilp";
            res->cost_bound = ir.cost_bound;
            res->optimal = ir.optimal && s.best.extra_cost <= ir.cost_bound + REMAT_COST_TOLERANCE * (ir.cost_bound + 1.0);
        }
    }
    if (st == OLLA_OK && s.have_best && !res->optimal) {
        st = improve(&s, err);
        if (strcmp(res->method, "greedy") == 0)
            res->method = "search";
    }
    res->work += s.work;
    res->stopped_by_time = p->deadline > 0 && olla_past(p->deadline);
    if (res->smallest_peak >= 0 && s.least_peak < res->smallest_peak)
        res->smallest_peak = s.least_peak;
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
