/* olla-onnx: the cheapest order ONNX Runtime's DEFAULT rule can be made to
 * run (olla_schedule_for_ort in olla_schedule.h).
 *
 * The search space is the choices of ORT's depth-first search
 * (passes/runtime/olla_exec_order.h): one key per op, and at every choice the
 * allowed candidate with the smallest key is entered first. A state is a key
 * vector; evaluating it runs the search (an order ORT can be made to run) and
 * the cost. Moves change the key of one child of one choice point of the
 * current order so that it is entered earlier or later there. Only the
 * choices on the path from the op at the peak to the roots can lower the
 * peak: when the problem says where an order peaks, those (the aimed
 * moves) are tried first. The input's
 * own order is the first state, so the best never costs more. Orders of
 * the best cost that other targets give (one evaluation each, after the
 * search) are ties, and the problem's judge chooses among them and the
 * best (the pipeline: by how the placement heuristics pack them). */
#include <stdlib.h>
#include <string.h>

#include "solver/olla_schedule.h"
#include "util/olla_arith.h"

/* The default budget: DEFAULT_BUDGET evaluations, each a pass over the ops,
 * but no more than SEARCH_WORK ops evaluated in all (and at least
 * MIN_BUDGET evaluations), so that the search's time grows no faster than
 * the graph. */
#define DEFAULT_BUDGET 4000
#define SEARCH_WORK 12000000L
#define MIN_BUDGET 200
#define KEY_GAP 1024 /* keys start as position * KEY_GAP so that moves fit between them */
#define MAX_IDLE_RESTARTS 50
/* The key of an op missing from an order: after every position's, with
 * room above it. */
#define KEY_MISSING (INT64_MAX / 4)
/* A restart perturbs the best state with PERTURB_MIN_MOVES to
 * PERTURB_MIN_MOVES + PERTURB_EXTRA_MOVES - 1 random moves. */
#define PERTURB_MIN_MOVES 2
#define PERTURB_EXTRA_MOVES 4
/* The kinds of move at a choice point of k children, k - 1 of each (make_move). */
#define MOVE_KINDS 3
/* Each start a target gives descends with 1 / TARGET_SHARE of the budget. */
#define TARGET_SHARE 8
/* Orders of the best cost kept beside the best for the judge. */
#define MAX_TIES 3
/* Aimed moves are tried at this many choice points nearest the peak and as
 * many nearest the roots. */
#define AIMED_POINTS 4

/* The starts a target gives (target_keys). */
enum { TARGET_POSITIONS, TARGET_FIRST_READER, TARGET_BLOCK_START, TARGET_KINDS };

typedef struct ort_search {
    const olla_exec_graph *eg;
    olla_exec_dfs *dfs;
    olla_exec_cost_fn cost;
    void *cost_ctx;
    const olla_ort_search_options *opt;
    long budget, evaluations;
    const char *stopped_by;
    uint64_t rng;
    int n, n_run;
    int64_t *key, *trial_key, *best_key;
    int *exec, *trial_exec, *best_exec;
    int64_t cost_now, best_cost;
    int *listing_tmp; /* for the feasibility check under rule 4 */
    /* the choice points of the current order (copied: trial runs overwrite
     * the workspace's) */
    int n_points, best_n_points;
    int *point_start, *point_children;
    int *best_point_start, *best_point_children;
    /* orders of the best cost found by the alternative targets' starts:
     * their keys (MAX_TIES x n) and executed orders (MAX_TIES x n_run) */
    int n_ties, chose_tie;
    int64_t *tie_key;
    int *tie_exec;
    int (*peak_op)(void *cost_ctx); /* the problem's, or NULL */
    /* the path from the op at the current state's peak to the roots: the
     * choice points on it (nearest the peak first) and at each the index of
     * the child whose block holds the peak (keep_hot_path) */
    int n_path, best_n_path;
    int *path_point, *path_child, *best_path_point, *best_path_child;
} ort_search;

static uint64_t next_random(ort_search *s)
{
    s->rng = olla_lcg_next(s->rng);
    return olla_lcg_bits(s->rng);
}

/* ---- Evaluation ---- */

/* 1 when the search must stop: budget, bound or deadline (and says which). */
static int must_stop(ort_search *s)
{
    if (s->best_cost <= s->opt->stop_at && s->opt->stop_at >= 0)
        s->stopped_by = "bound";
    else if (s->evaluations >= s->budget)
        s->stopped_by = "budget";
    else if (olla_past(s->opt->deadline))
        s->stopped_by = "deadline";
    else
        return 0;
    return 1;
}

/* Runs the search for key into exec and returns the cost, or -1 when no
 * valid file runs that order (rule 4) or on out of memory. */
static int64_t evaluate(ort_search *s, const int64_t *key, int *exec, olla_error *err)
{
    s->evaluations++;
    olla_exec_dfs_run(s->dfs, key, exec);
    if (s->eg->has_file_only_edges) {
        int found = 0;
        if (olla_exec_dfs_listing(s->dfs, NULL, s->listing_tmp, &found, err) != OLLA_OK || !found)
            return -1;
    }
    return s->cost(s->cost_ctx, exec, s->n_run);
}

/* Copies the points of the last run as the current state's. */
static void keep_points(ort_search *s)
{
    int np = olla_exec_dfs_points(s->dfs), used = 0;
    for (int p = 0; p < np; p++) {
        const int *children;
        int node, k = olla_exec_dfs_point(s->dfs, p, &children, &node);
        s->point_start[p] = used;
        memcpy(s->point_children + used, children, (size_t)k * sizeof(int));
        used += k;
    }
    s->point_start[np] = used;
    s->n_points = np;
}

/* The path from the op at the peak of the last evaluated order to the
 * roots, through the last run's choice points (its points must be the
 * current ones: call right after keep_points). Empty without a peak_op. */
static void keep_hot_path(ort_search *s)
{
    int v = s->peak_op ? s->peak_op(s->cost_ctx) : -1;
    s->n_path = 0;
    while (v >= 0 && v < s->n && s->n_path < s->n) {
        int p, u = olla_exec_dfs_entry(s->dfs, v, &p);
        if (p >= 0) {
            const int *c = s->point_children + s->point_start[p];
            int j = 0;
            while (c[j] != v)
                j++;
            s->path_point[s->n_path] = p;
            s->path_child[s->n_path++] = j;
        }
        v = u;
    }
}

/* Makes exec (run with some keys) the current state, with cost c. The keys
 * become the positions in exec: they run the same order with the same
 * choice points, and choices that this order does not make (between
 * candidates that never meet) follow it too, instead of what earlier moves
 * left behind. */
static void accept(ort_search *s, int *exec, int64_t c)
{
    if (exec != s->exec)
        memcpy(s->exec, exec, (size_t)s->n_run * sizeof(int));
    for (int i = 0; i < s->n_run; i++)
        s->key[s->exec[i]] = (int64_t)i * KEY_GAP;
    s->cost_now = c;
    keep_points(s);
    keep_hot_path(s);
    if (c < s->best_cost) {
        s->n_ties = 0; /* they tied the old best */
        s->best_cost = c;
        memcpy(s->best_key, s->key, (size_t)s->n * sizeof(int64_t));
        memcpy(s->best_exec, s->exec, (size_t)s->n_run * sizeof(int));
        s->best_n_points = s->n_points;
        memcpy(s->best_point_start, s->point_start, ((size_t)s->n_points + 1) * sizeof(int));
        memcpy(s->best_point_children, s->point_children, (size_t)s->point_start[s->n_points] * sizeof(int));
        s->best_n_path = s->n_path;
        memcpy(s->best_path_point, s->path_point, (size_t)s->n_path * sizeof(int));
        memcpy(s->best_path_child, s->path_child, (size_t)s->n_path * sizeof(int));
    }
}

/* ---- Moves ---- */

/* Move m of point p (children c[0..k)): m < k-1 swaps c[m] and c[m+1]
 * (c[m+1] entered first); m = k-1 + j (j in 1..k-1) enters c[j] first; the
 * last k-1 moves, m = 2k-2 + j (j in 0..k-2), enter c[j] last. Writes the
 * moved keys into s->trial_key (a copy of s->key). Returns 0 when m is past
 * the moves of p. */
static int make_move(ort_search *s, int p, int m)
{
    const int *c = s->point_children + s->point_start[p];
    int k = s->point_start[p + 1] - s->point_start[p];
    int64_t *key = s->trial_key;
    memcpy(key, s->key, (size_t)s->n * sizeof(int64_t));
    if (m < k - 1) {
        int64_t t = key[c[m]];
        key[c[m]] = key[c[m + 1]];
        key[c[m + 1]] = t;
        return 1;
    }
    m -= k - 1;
    if (m < k - 1) {
        key[c[m + 1]] = key[c[0]] - 1;
        return 1;
    }
    m -= k - 1;
    if (m < k - 1) {
        key[c[m]] = key[c[k - 1]] + 1;
        return 1;
    }
    return 0;
}

/* Aimed move m at path entry e (point p, whose child j of k holds the
 * peak): that child entered first (m = 0), last (1), then 1, 1, 2, 2, 4,
 * 4... places earlier and later. Writes the moved keys into s->trial_key.
 * Returns 0 when m is past the moves, -1 when m's place is off the point
 * (nothing written). */
static int aimed_move(ort_search *s, int e, int m)
{
    int p = s->path_point[e], j = s->path_child[e], i;
    const int *c = s->point_children + s->point_start[p];
    int k = s->point_start[p + 1] - s->point_start[p];
    if (m < 2) {
        i = m ? k - 1 : 0;
    } else {
        int shift = (m - 2) / 2;
        if (shift > 30 || (1 << shift) >= k)
            return 0;
        i = m % 2 ? j + (1 << shift) : j - (1 << shift);
    }
    if (i < 0 || i >= k || i == j)
        return -1;
    memcpy(s->trial_key, s->key, (size_t)s->n * sizeof(int64_t));
    s->trial_key[c[j]] = i < j ? s->key[c[i]] - 1 : s->key[c[i]] + 1;
    return 1;
}

/* Whether path entry e is aimed at: the AIMED_POINTS nearest the peak and
 * the AIMED_POINTS nearest the roots. */
static int aimed_entry(const ort_search *s, int e)
{
    return e < AIMED_POINTS || e >= s->n_path - AIMED_POINTS;
}

/* One pass over the aimed moves of the current state, the points nearest
 * the roots first; 1 when one lowered the cost (it is then the current
 * state), 0 when none did or the search must stop. */
static int aimed_pass(ort_search *s, long cap, olla_error *err)
{
    for (int e = s->n_path - 1; e >= 0; e--) {
        if (!aimed_entry(s, e))
            continue;
        for (int m = 0, r; (r = aimed_move(s, e, m)) != 0; m++) {
            if (r < 0)
                continue;
            if (must_stop(s) || s->evaluations >= cap)
                return 0;
            int64_t c = evaluate(s, s->trial_key, s->trial_exec, err);
            if (c >= 0 && c < s->cost_now) {
                accept(s, s->trial_exec, c);
                return 1;
            }
        }
    }
    return 0;
}

/* First-improvement descent from the current state, until no move improves
 * or the evaluations reach cap; points are tried from a rotating start so
 * that early points do not take all the budget. */
static void descend(ort_search *s, long cap, olla_error *err)
{
    int start = 0;
    for (;;) {
        if (aimed_pass(s, cap, err))
            continue;
        int improved = 0;
        for (int q = 0; q < s->n_points && !improved; q++) {
            int p = (start + q) % s->n_points;
            for (int m = 0; make_move(s, p, m) && !improved; m++) {
                if (must_stop(s) || s->evaluations >= cap)
                    return;
                int64_t c = evaluate(s, s->trial_key, s->trial_exec, err);
                if (c >= 0 && c < s->cost_now) {
                    accept(s, s->trial_exec, c);
                    start = p;
                    improved = 1;
                }
            }
        }
        if (!improved)
            return;
    }
}

/* The best state back as the current one. */
static void restore_best(ort_search *s)
{
    memcpy(s->key, s->best_key, (size_t)s->n * sizeof(int64_t));
    memcpy(s->exec, s->best_exec, (size_t)s->n_run * sizeof(int));
    s->cost_now = s->best_cost;
    s->n_points = s->best_n_points;
    memcpy(s->point_start, s->best_point_start, ((size_t)s->n_points + 1) * sizeof(int));
    memcpy(s->point_children, s->best_point_children, (size_t)s->point_start[s->n_points] * sizeof(int));
    s->n_path = s->best_n_path;
    memcpy(s->path_point, s->best_path_point, (size_t)s->n_path * sizeof(int));
    memcpy(s->path_child, s->best_path_child, (size_t)s->n_path * sizeof(int));
}

/* A few random moves applied to the best state, as the new current state
 * (the best itself when the result cannot be written). */
static void perturb(ort_search *s, olla_error *err)
{
    restore_best(s);
    int moves = PERTURB_MIN_MOVES + (int)(next_random(s) % PERTURB_EXTRA_MOVES);
    for (int i = 0; i < moves; i++) {
        int p = (int)(next_random(s) % (uint64_t)s->n_points);
        int k = s->point_start[p + 1] - s->point_start[p];
        make_move(s, p, (int)(next_random(s) % (uint64_t)(MOVE_KINDS * (k - 1))));
        memcpy(s->key, s->trial_key, (size_t)s->n * sizeof(int64_t));
    }
    int64_t c = evaluate(s, s->key, s->trial_exec, err);
    if (c >= 0)
        accept(s, s->trial_exec, c);
    else
        restore_best(s);
}

/* ---- The driver ---- */

static void search_free(ort_search *s)
{
    olla_exec_dfs_free(s->dfs);
    free(s->key);
    free(s->trial_key);
    free(s->best_key);
    free(s->exec);
    free(s->trial_exec);
    free(s->best_exec);
    free(s->listing_tmp);
    free(s->point_start);
    free(s->point_children);
    free(s->best_point_start);
    free(s->best_point_children);
    free(s->tie_key);
    free(s->tie_exec);
    free(s->path_point);
}

static olla_status search_init(ort_search *s, const olla_exec_graph *eg, const olla_ort_search_options *opt,
                               olla_error *err)
{
    size_t n = (size_t)eg->n_ops + 1;
    s->eg = eg;
    s->opt = opt;
    s->n = eg->n_ops;
    s->n_run = eg->n_running;
    long by_size = SEARCH_WORK / (eg->n_ops > 0 ? eg->n_ops : 1);
    s->budget = opt->max_evaluations > 0 ? opt->max_evaluations
                : by_size > DEFAULT_BUDGET ? DEFAULT_BUDGET
                : by_size < MIN_BUDGET     ? MIN_BUDGET
                                           : by_size;
    s->rng = opt->seed ^ OLLA_GOLDEN_GAMMA;
    s->cost_now = -1;
    s->best_cost = INT64_MAX;
    s->stopped_by = "converged";
    s->key = malloc(n * sizeof(int64_t));
    for (size_t v = 0; s->key && v < n; v++)
        s->key[v] = KEY_MISSING;
    s->trial_key = malloc(n * sizeof(int64_t));
    s->best_key = malloc(n * sizeof(int64_t));
    s->exec = malloc(n * sizeof(int));
    s->trial_exec = malloc(n * sizeof(int));
    s->best_exec = malloc(n * sizeof(int));
    s->listing_tmp = malloc(n * sizeof(int));
    s->point_start = malloc((n + 1) * sizeof(int));
    s->point_children = malloc(n * sizeof(int));
    s->best_point_start = malloc((n + 1) * sizeof(int));
    s->best_point_children = malloc(n * sizeof(int));
    s->tie_key = malloc(MAX_TIES * n * sizeof(int64_t));
    s->tie_exec = malloc(MAX_TIES * n * sizeof(int));
    s->path_point = malloc(4 * n * sizeof(int)); /* with path_child and the best's: n each */
    s->path_child = s->path_point ? s->path_point + n : NULL;
    s->best_path_point = s->path_point ? s->path_point + 2 * n : NULL;
    s->best_path_child = s->path_point ? s->path_point + 3 * n : NULL;
    if (!s->path_point || !s->tie_key || !s->tie_exec || !s->best_point_start || !s->best_point_children || !s->key || !s->trial_key || !s->best_key || !s->exec || !s->trial_exec || !s->best_exec ||
        !s->listing_tmp || !s->point_start || !s->point_children)
        return olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory searching ONNX Runtime's orders");
    return olla_exec_dfs_new(eg, &s->dfs, err);
}

/* keys = position * KEY_GAP in order (n entries; ops missing from it keep
 * the largest keys). */
static void keys_from(ort_search *s, const int *order, int n, int64_t *key)
{
    for (int v = 0; v < s->n; v++)
        key[v] = KEY_MISSING;
    for (int i = 0; i < n; i++)
        key[order[i]] = (int64_t)i * KEY_GAP;
}

/* The input's own order: its cost, and the first state. */
static olla_status start_from_input(ort_search *s, const int *input_listing, olla_ort_search_result *res,
                                    olla_error *err)
{
    int n_ex = 0;
    olla_status st = olla_exec_order_of(s->eg, OLLA_RUNTIME_ORT, input_listing, s->trial_exec, &n_ex, err);
    if (st != OLLA_OK)
        return st;
    res->input_cost = s->cost(s->cost_ctx, s->trial_exec, n_ex);
    s->evaluations++;
    keys_from(s, s->trial_exec, n_ex, s->trial_key);
    olla_exec_dfs_run(s->dfs, s->trial_key, s->exec); /* the same order: its choice points */
    if (memcmp(s->exec, s->trial_exec, (size_t)n_ex * sizeof(int)) != 0)
        return olla_error_set(err, OLLA_ERR_INTERNAL, "the depth-first search does not reproduce ORT's own order");
    accept(s, s->trial_exec, res->input_cost);
    return OLLA_OK;
}

/* Writes the result: the input listing when nothing beat it. */
static olla_status finish(ort_search *s, const int *input_listing, int *listing_out, int *executed_out,
                          olla_ort_search_result *res, olla_error *err)
{
    res->best_cost = s->best_cost;
    res->evaluations = s->evaluations;
    res->stopped_by = s->stopped_by;
    res->kept_input = s->best_cost >= res->input_cost && !s->chose_tie;
    if (res->kept_input) {
        int n_ex = 0;
        memcpy(listing_out, input_listing, (size_t)s->n * sizeof(int));
        res->best_cost = res->input_cost;
        return olla_exec_order_of(s->eg, OLLA_RUNTIME_ORT, input_listing, executed_out, &n_ex, err);
    }
    int found = 0;
    olla_exec_dfs_run(s->dfs, s->best_key, s->trial_exec);
    olla_status st = olla_exec_dfs_listing(s->dfs, input_listing, listing_out, &found, err);
    if (st != OLLA_OK)
        return st;
    int n_ex = 0;
    if (found)
        st = olla_exec_order_of(s->eg, OLLA_RUNTIME_ORT, listing_out, executed_out, &n_ex, err);
    if (st == OLLA_OK && (!found || n_ex != s->n_run ||
                          memcmp(executed_out, s->best_exec, (size_t)n_ex * sizeof(int)) != 0))
        st = olla_error_set(err, OLLA_ERR_INTERNAL, "the listing written for the best order runs another order");
    return st;
}

/* The starts a target gives, each as key[] (n_ops): TARGET_POSITIONS its
 * positions; TARGET_FIRST_READER the position of each op's first reader in
 * target (when an op is needed); TARGET_BLOCK_START the earliest position
 * among its ancestors and itself (when its block would start). Ties: the
 * op's own position. */
static void target_keys(ort_search *s, const int *target, int kind, int64_t *key)
{
    const olla_exec_graph *eg = s->eg;
    int64_t n1 = s->n + 1;
    int *pos = s->listing_tmp;
    for (int i = 0; i < s->n; i++)
        pos[target[i]] = i;
    for (int i = 0; i < s->n; i++) {
        int v = target[i];
        int64_t first_reader = pos[v]; /* a leaf: itself */
        for (int j = eg->succ_start[v]; kind == TARGET_FIRST_READER && j < eg->succ_start[v + 1]; j++)
            if (first_reader == pos[v] || pos[eg->succ_list[j]] < first_reader)
                first_reader = pos[eg->succ_list[j]];
        key[v] = kind == TARGET_POSITIONS ? (int64_t)pos[v] : first_reader * n1 + pos[v];
    }
    if (kind != TARGET_BLOCK_START)
        return;
    for (int i = 0; i < s->n; i++) { /* target is topological: producers come first */
        int v = target[i];
        for (int j = eg->pred_start[v]; j < eg->pred_start[v + 1]; j++)
            if (key[eg->pred_list[j]] / n1 < key[v] / n1)
                key[v] = key[eg->pred_list[j]] / n1 * n1 + pos[v];
    }
}

/* Each target start, descended on its own with 1 / TARGET_SHARE of the budget. */
static olla_status starts_from_target(ort_search *s, const int *target, olla_ort_search_result *res,
                                      olla_error *err)
{
    for (int kind = TARGET_POSITIONS; kind < TARGET_KINDS && !must_stop(s); kind++) {
        target_keys(s, target, kind, s->trial_key);
        int64_t c = evaluate(s, s->trial_key, s->trial_exec, err);
        if (kind == TARGET_POSITIONS) {
            res->target_cost = c;
            int k = 0;
            for (int i = 0; i < s->n; i++)
                if (s->eg->runs[target[i]] && k < s->n_run && s->trial_exec[k] == target[i])
                    k++;
            res->target_runs = c >= 0 && k == s->n_run;
        }
        if (c < 0)
            continue;
        accept(s, s->trial_exec, c);
        descend(s, s->evaluations + s->budget / TARGET_SHARE, err);
    }
    restore_best(s);
    return OLLA_OK;
}

/* ---- Orders of equal cost ---- */

/* Keeps key (which runs exec) as a tie of the best, unless it runs the
 * best's order or a kept tie's, or there is no room. */
static void keep_tie(ort_search *s, const int64_t *key, const int *exec)
{
    size_t bytes = (size_t)s->n_run * sizeof(int);
    if (s->n_ties >= MAX_TIES || !memcmp(exec, s->best_exec, bytes))
        return;
    for (int k = 0; k < s->n_ties; k++)
        if (!memcmp(exec, s->tie_exec + (size_t)k * (size_t)s->n_run, bytes))
            return;
    memcpy(s->tie_key + (size_t)s->n_ties * (size_t)s->n, key, (size_t)s->n * sizeof(int64_t));
    memcpy(s->tie_exec + (size_t)s->n_ties++ * (size_t)s->n_run, exec, bytes);
}

/* The starts of the alternative targets, each evaluated once: a cheaper
 * one becomes the best, one of the best cost a tie. */
static void alternative_starts(ort_search *s, const olla_ort_problem *p, olla_error *err)
{
    for (int a = 0; a < p->n_alt_targets && !olla_past(s->opt->deadline); a++)
        for (int kind = TARGET_POSITIONS; kind < TARGET_KINDS; kind++) {
            target_keys(s, p->alt_targets + (size_t)a * (size_t)s->n, kind, s->trial_key);
            int64_t c = evaluate(s, s->trial_key, s->trial_exec, err);
            if (c >= 0 && c < s->best_cost)
                accept(s, s->trial_exec, c);
            else if (c >= 0 && c == s->best_cost)
                keep_tie(s, s->trial_key, s->trial_exec);
        }
}

/* The judge's choice among the best and its ties: the first of the lowest
 * score becomes the best (its cost is the same). */
static void judge_ties(ort_search *s, const olla_ort_problem *p, olla_ort_search_result *res)
{
    if (!p->judge || s->n_ties == 0)
        return;
    int64_t low = p->judge(p->judge_ctx, s->best_exec, s->n_run);
    int pick = -1;
    res->judged = 1;
    for (int k = 0; k < s->n_ties && low > 0; k++) { /* the best unjudged: it stays */
        int64_t score = p->judge(p->judge_ctx, s->tie_exec + (size_t)k * (size_t)s->n_run, s->n_run);
        res->judged++;
        if (score >= 0 && score < low) {
            low = score;
            pick = k;
        }
    }
    if (pick < 0)
        return;
    memcpy(s->best_key, s->tie_key + (size_t)pick * (size_t)s->n, (size_t)s->n * sizeof(int64_t));
    memcpy(s->best_exec, s->tie_exec + (size_t)pick * (size_t)s->n_run, (size_t)s->n_run * sizeof(int));
    s->chose_tie = res->judge_chose_tie = 1;
}

olla_status olla_schedule_for_ort(const olla_ort_problem *p, const olla_ort_search_options *opt, int *listing_out,
                                  int *executed_out, olla_ort_search_result *res, olla_error *err)
{
    const int *input_listing = p->input_listing;
    static const olla_ort_search_options defaults = {0, 0, -1, 0};
    double t0 = olla_now();
    ort_search s;
    memset(&s, 0, sizeof s);
    memset(res, 0, sizeof *res);
    s.cost = p->cost;
    s.cost_ctx = p->cost_ctx;
    s.peak_op = p->peak_op;
    olla_status st = search_init(&s, p->eg, opt ? opt : &defaults, err);
    if (st == OLLA_OK)
        st = start_from_input(&s, input_listing, res, err);
    if (st == OLLA_OK && p->target)
        st = starts_from_target(&s, p->target, res, err);
    /* descents from the best with random moves, until the budget, the bound
     * or the deadline, or until MAX_IDLE_RESTARTS restarts in a row gain
     * nothing */
    int idle = 0;
    while (st == OLLA_OK && !must_stop(&s) && s.best_n_points > 0 && idle < MAX_IDLE_RESTARTS) {
        int64_t before = s.best_cost;
        descend(&s, s.budget, err);
        if (!must_stop(&s))
            perturb(&s, err);
        idle = s.best_cost < before ? 0 : idle + 1;
    }
    if (st == OLLA_OK && p->n_alt_targets > 0 && strcmp(s.stopped_by, "deadline") != 0) {
        alternative_starts(&s, p, err);
        judge_ties(&s, p, res);
    }
    if (st == OLLA_OK)
        st = finish(&s, input_listing, listing_out, executed_out, res, err);
    res->seconds = olla_now() - t0;
    search_free(&s);
    return st;
}
