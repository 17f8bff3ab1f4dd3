/* olla-onnx recomputation benchmark: for each model, the plan made without a
 * limit, Chen et al.'s sqrt(n) checkpointing as the baseline any user can
 * apply by hand, and olla-onnx's search under the baseline's own peak and
 * under 80%, 60% and 50% of the no-limit peak.
 *
 *   remat_bench [--runtime NAME] [--sharing MODE] [--dim NAME=VALUE ...] model.onnx ...
 *
 * The baseline (here only, as the thing to beat): in the order the runtime
 * executes, a tensor whose readers fall in two groups far apart (the
 * activations the backward pass reads again) is a candidate; every k-th
 * candidate in order of production is kept (a checkpoint), k = ceil(sqrt(m))
 * for m candidates (and k/2, 2k for two more points); every other one is
 * freed after its first group of readers and recomputed once, right before
 * its second group, together with the candidates it needs that are gone by
 * then; the recomputed versions serve the rest of the second group. Both
 * plans are measured by the same function (the peak of the plan's runs in
 * the memory model of --sharing) and costed by the same estimate.
 *
 * One line per row, tab-separated:
 *   baseline MODEL k PEAK EXTRA_PCT | OURS_EXTRA_PCT SECONDS STATUS
 *   limit MODEL PCT LIMIT FITS PEAK EXTRA_PCT SECONDS STATUS BOUND SMALLEST */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "olla.h"
#include "passes/runtime/olla_exec_order.h"
#include "pipeline/olla_pipeline.h"
#include "solver/remat_sim.h"
#include "util/olla_clock.h"

typedef struct split {
    int early_end;  /* position of the last reader of the first group */
    int late_start; /* position of the first reader of the second group, -1 when one group */
} split;

/* Readers of e at positions sorted; the widest gap splits them. */
static split split_of(const olla_dag *dag, const int *pos, int e, int n)
{
    split s = {-1, -1};
    int k = dag->sink_start[e + 1] - dag->sink_start[e];
    if (k < 2)
        return s;
    int *p = malloc((size_t)k * sizeof(int));
    for (int i = 0; i < k; i++)
        p[i] = pos[dag->sink_list[dag->sink_start[e] + i]];
    for (int i = 1; i < k; i++) /* insertion sort: reader lists are short */
        for (int j = i; j > 0 && p[j - 1] > p[j]; j--) {
            int t = p[j];
            p[j] = p[j - 1];
            p[j - 1] = t;
        }
    int best = 0, at = -1;
    for (int i = 1; i < k; i++)
        if (p[i] - p[i - 1] > best) {
            best = p[i] - p[i - 1];
            at = i;
        }
    if (at > 0 && best >= n / 8) {
        s.early_end = p[at - 1];
        s.late_start = p[at];
    }
    free(p);
    return s;
}

typedef struct chen {
    const olla_remat_problem *p;
    int *pos;
    split *sp;
    unsigned char *dropped, *redone;
    int *seq, n_seq;
} chen;

/* Appends copies that make e's recomputed version, inputs first. */
static void redo(chen *c, int e, int now)
{
    const olla_dag *dag = c->p->dag;
    if (c->redone[e])
        return;
    c->redone[e] = 1;
    int u = dag->producer[e];
    for (int j = dag->in_start[u]; j < dag->in_start[u + 1]; j++) {
        int x = dag->in_list[j];
        if (c->dropped[x] && now > c->sp[x].early_end)
            redo(c, x, now);
    }
    c->seq[c->n_seq++] = u;
}

/* The baseline plan with every k-th candidate kept. */
static int baseline(const olla_remat_problem *p, int k, olla_remat_plan *plan, int *n_candidates)
{
    const olla_dag *dag = p->dag;
    int n = dag->n_nodes, nt = dag->n_tensors;
    chen c = {p, malloc((size_t)n * sizeof(int)), malloc((size_t)nt * sizeof(split)), calloc((size_t)nt, 1),
              calloc((size_t)nt, 1), malloc(((size_t)n + (size_t)nt) * sizeof(int)), 0};
    for (int t = 0; t < n; t++)
        c.pos[p->order[t]] = t;
    int m = 0;
    for (int t = 0; t < n; t++) {
        int v = p->order[t];
        for (int q = dag->out_start[v]; q < dag->out_start[v + 1]; q++) {
            int e = dag->out_list[q];
            c.sp[e] = split_of(dag, c.pos, e, n);
            if (c.sp[e].late_start < 0 || dag->bytes[e] <= 0 || p->buffer[e] != e || !olla_remat_may_copy(p, v))
                continue;
            if (m++ % k != 0)
                c.dropped[e] = 1;
        }
    }
    *n_candidates = m;
    for (int t = 0; t < n; t++) {
        int v = p->order[t];
        for (int j = dag->in_start[v]; j < dag->in_start[v + 1]; j++) {
            int x = dag->in_list[j];
            if (c.dropped[x] && t >= c.sp[x].late_start)
                redo(&c, x, t);
        }
        c.seq[c.n_seq++] = v;
    }
    olla_error err = {0};
    int ok = remat_plan_from_runs(p, c.seq, c.n_seq, plan, &err) == OLLA_OK &&
             olla_remat_plan_check(p, plan, &err) == OLLA_OK;
    if (!ok)
        fprintf(stderr, "remat_bench: baseline k=%d: %s\n", k, err.message);
    free(c.pos);
    free(c.sp);
    free(c.dropped);
    free(c.redone);
    free(c.seq);
    return ok;
}

static const char *status_of(const olla_remat_result *r, const olla_remat_plan *pl)
{
    if (r->outcome != OLLA_REMAT_FITS)
        return "none found";
    if (pl->n_copies == 0)
        return "nothing recomputed";
    return r->optimal ? "optimal" : "feasible";
}

static void run_model(const char *path, const olla_options *opt)
{
    olla_model *m = NULL;
    olla_remat_setup *s = NULL;
    olla_error err = {0};
    if (olla_model_load(path, &m, &err) != OLLA_OK || olla_remat_setup_model(m, opt, &s, &err) != OLLA_OK) {
        fprintf(stderr, "remat_bench: %s\n", err.message);
        olla_model_free(m);
        return;
    }
    const olla_remat_posed *posed = olla_remat_setup_posed(s);
    olla_remat_problem p = posed->problem;
    int64_t p0 = olla_remat_setup_peak(s);
    const char *name = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    double total = posed->total_cost;
    int m_cand = 0;
    olla_remat_plan probe;
    if (baseline(&p, 1 << 30, &probe, &m_cand))
        olla_remat_plan_free(&probe);
    int root = (int)ceil(sqrt((double)m_cand));
    int ks[3] = {root, root / 2, 2 * root};
    for (int i = 0; i < 3; i++) {
        if (ks[i] < 2 || (i > 0 && ks[i] == ks[0]))
            continue;
        olla_remat_plan b;
        if (!baseline(&p, ks[i], &b, &m_cand))
            continue;
        p.limit = b.peak;
        olla_remat_plan ours;
        olla_remat_result res;
        double t0 = olla_now();
        olla_status st = olla_remat_solve(&p, 0, &ours, &res, &err);
        double secs = olla_now() - t0;
        if (st != OLLA_OK) {
            fprintf(stderr, "remat_bench: %s\n", err.message);
            olla_remat_plan_free(&b);
            continue;
        }
        printf("baseline\t%s\t%d\t%lld\t%.3f\t|\t%s\t%.3f\t%.2f\t%s\n", name, ks[i], (long long)b.peak,
               100.0 * b.extra_cost / total, res.outcome == OLLA_REMAT_FITS ? "fits" : "-",
               res.outcome == OLLA_REMAT_FITS ? 100.0 * ours.extra_cost / total : NAN, secs, status_of(&res, &ours));
        olla_remat_plan_free(&ours);
        olla_remat_plan_free(&b);
    }
    static const double pct[] = {0.8, 0.6, 0.5};
    for (int i = 0; i < 3; i++) {
        p.limit = (int64_t)(pct[i] * (double)p0);
        olla_remat_plan ours;
        olla_remat_result res;
        double t0 = olla_now();
        olla_status st = olla_remat_solve(&p, 1, &ours, &res, &err);
        double secs = olla_now() - t0;
        if (st != OLLA_OK) {
            fprintf(stderr, "remat_bench: %s\n", err.message);
            continue;
        }
        int fits = res.outcome == OLLA_REMAT_FITS;
        printf("limit\t%s\t%.0f%%\t%lld\t%s\t%lld\t%.3f\t%.2f\t%s\t%lld\t%lld\n", name, 100 * pct[i],
               (long long)p.limit, fits ? "yes" : "no", fits ? (long long)ours.peak : -1LL,
               fits ? 100.0 * ours.extra_cost / total : NAN, secs, status_of(&res, &ours),
               (long long)res.lower_bound, (long long)res.smallest_peak);
        olla_remat_plan_free(&ours);
    }
    olla_remat_setup_free(s);
    olla_model_free(m);
}

int main(int argc, char **argv)
{
    olla_options opt;
    olla_options_init(&opt);
    opt.verbosity = 0;
    olla_dim_binding dims[16];
    int first = 1;
    while (first < argc && argv[first][0] == '-') {
        if (strcmp(argv[first], "--runtime") == 0 && first + 1 < argc) {
            olla_error err = {0};
            if (olla_runtime_parse(argv[first + 1], &opt.runtime, &err) != OLLA_OK) {
                fprintf(stderr, "remat_bench: %s\n", err.message);
                return 2;
            }
        } else if (strcmp(argv[first], "--sharing") == 0 && first + 1 < argc) {
            opt.sharing = strcmp(argv[first + 1], "none") == 0 ? OLLA_SHARING_NONE : OLLA_SHARING_RUNTIME;
        } else if (strcmp(argv[first], "--dim") == 0 && first + 1 < argc && opt.n_dims < 16) {
            char *eq = strchr(argv[first + 1], '=');
            if (!eq)
                return 2;
            *eq = '\0';
            dims[opt.n_dims++] = (olla_dim_binding){argv[first + 1], atoll(eq + 1)};
            opt.dims = dims;
        } else {
            fprintf(stderr, "usage: remat_bench [--runtime NAME] [--sharing MODE] [--dim NAME=VALUE ...] model.onnx ...\n");
            return 2;
        }
        first += 2;
    }
    for (int i = first; i < argc; i++)
        run_model(argv[i], &opt);
    return 0;
}
