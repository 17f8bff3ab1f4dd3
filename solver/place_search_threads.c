/* olla-onnx: the two-thread schedule of the exact placement search: the
 * runs of both searches (the section search, place_search.c, and the
 * offset-order search, place_offset_search.c) in a fixed order, shared
 * between two workers, and the work budget shared between them.
 *
 * Determinism: the runs form a fixed schedule (round r, configuration k,
 * node budget max(4096, 3n / 2) * 2^r for n buffers) cut where the caller's
 * work budget ends. Two workers, the second on its own thread, take half of
 * each round's configurations: the section search in each candidate order
 * with one tie rule, then two orders of the offset-order search. The answer
 * is that of the earliest run in the schedule that finishes; a worker only
 * abandons a run that comes after a finished one, so every run before the
 * answer is done in full and the answer, the offsets and the work charged
 * are the same on every run, however the two threads are scheduled. A round
 * starts only when both workers have left the one before, each with an
 * equal share of the work left at its start. */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "solver/place_search_state.h"

/* ---- the schedule ---- */

/* A configuration is a candidate order (the three fixed ones and a random
 * one that changes every round) and a tie rule between sections: the
 * section with the most bytes still to place, or the rightmost one (the
 * mirror image in time of the leftmost). */
#define OLLA_SEARCH_CONFIGS (2 * (ORDER_COUNT + 1) + BYORDER_COUNT)
_Static_assert(BYORDER_COUNT == 4, "two offset-order search orders in each half of a round");
#define OLLA_SEARCH_ROUNDS 40
#define OLLA_SEARCH_FIRST_BUDGET 4096LL
/* The first round's node limit: the buffers and 1 / OLLA_SEARCH_FIRST_SLACK
 * of them more, at least OLLA_SEARCH_FIRST_BUDGET. */
#define OLLA_SEARCH_FIRST_SLACK 2
/* Stack per search thread and its recursion depth limit (a frame takes
 * under 0.5 KiB even in sanitizer builds; OLLA_SEARCH_DEPTH_CALLER on the
 * caller's stack). */
#define OLLA_SEARCH_STACK ((size_t)64 << 20)
#define OLLA_SEARCH_DEPTH_THREAD 60000

/* The shared schedule. A round starts only when every worker has left
 * the round before and the work of all earlier rounds is below the total:
 * the decision then depends on the work done, never on the threads'
 * timing. */
typedef struct schedule {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int workers;
    int left_round[OLLA_SEARCH_ROUNDS];    /* workers that have left each round */
    long long done;                        /* work of the rounds left so far */
    long long done_at[OLLA_SEARCH_ROUNDS]; /* done when the last worker left each round */
    long long total;                       /* work budget of the whole schedule */
    atomic_int stop_pos;                   /* earliest finished run */
    const search_input *in;                /* what every run searches */
} schedule;

typedef struct worker {
    sctx c;
    schedule *sch;
    int first, last;                                           /* runs the configurations [first, last) each round */
    int r, pos;                                                /* outcome of the last run and its place */
    int cut_pos;                                               /* the place of the run the clock cut, or INT32_MAX */
    long long units[OLLA_SEARCH_ROUNDS * OLLA_SEARCH_CONFIGS]; /* work of each run */
} worker;

/* ---- a worker's rounds ---- */

/* Records that the run at pos has finished, unless an earlier one has. */
static void finish_at(atomic_int *stop_pos, int pos)
{
    int cur = atomic_load(stop_pos);
    while (pos < cur && !atomic_compare_exchange_weak(stop_pos, &cur, pos)) {
    }
}

/* Leaves a round: adds this worker's work in it, waits for the others and
 * returns the work of all rounds so far. */
static long long leave_round(worker *w, int round)
{
    schedule *sch = w->sch;
    long long mine = 0;
    for (int k = w->first; k < w->last; k++)
        mine += w->units[round * OLLA_SEARCH_CONFIGS + k];
    pthread_mutex_lock(&sch->mu);
    sch->done += mine;
    if (++sch->left_round[round] == sch->workers) {
        /* a snapshot: a fast worker may add its next round's work to done
         * before a slow one wakes up here */
        sch->done_at[round] = sch->done;
        pthread_cond_broadcast(&sch->cv);
    }
    while (sch->left_round[round] < sch->workers)
        pthread_cond_wait(&sch->cv, &sch->mu);
    long long done = sch->done_at[round];
    pthread_mutex_unlock(&sch->mu);
    return done;
}

/* One round of the worker's runs, sharing share units in turn; returns 1
 * when the worker is done. */
static int run_round(worker *w, int round, long long share)
{
    sctx *c = &w->c;
    for (int k = w->first; k < w->last; k++) {
        int pos = round * OLLA_SEARCH_CONFIGS + k;
        if (atomic_load(c->stop_pos) < pos)
            return 1;
        /* each half of a round: two orders of the offset-order search (a
         * dive that rarely backtracks is cheap there), then the section
         * search with every candidate order and one tie rule */
        int half = OLLA_SEARCH_CONFIGS / 2, q = (k % half + ORDER_COUNT + 1) % half;
        int offset_order = q > ORDER_COUNT;
        if (offset_order && c->nfixed > 0)
            continue; /* the offset-order search knows no fixed buffers */
        int order = offset_order ? 2 * (k / half) + q - (ORDER_COUNT + 1) : q < ORDER_COUNT ? q : ORDER_COUNT + round;
        c->rightmost = k / half == 1;
        c->pos = pos;
        /* the reset and one node more than the limit must fit in what is
         * left of the share, else the round ends here for this worker */
        long long room = share - olla_search_node_units(c);
        if (room < olla_search_reset_units(c, offset_order))
            return 0;
        int r = olla_search_reset(c, offset_order, order);
        if (r == 0) {
            /* a run that places every buffer needs a node each: the first
             * round's limit covers that and half as many more for
             * backtracking (with twice as many, a run that failed on the
             * 48-layer Llama-like AdamW step cost more than the one that
             * placed everything, and cut the next run of its worker short
             * of its placement; a quarter more lost a chain of 6,000
             * buffers that a run of the first round places with 1.25 to
             * 1.5 nodes a buffer, test_place_search_split.c) */
            long long dive = (long long)c->n + (long long)c->n / OLLA_SEARCH_FIRST_SLACK;
            long long first = dive > OLLA_SEARCH_FIRST_BUDGET ? dive : OLLA_SEARCH_FIRST_BUDGET;
            c->node_limit = first << round;
            c->work_limit = room;
            r = offset_order ? olla_search_offset_run(c) : olla_search_section_run(c);
            if (offset_order && r == 0)
                r = OLLA_SEARCH_GAVE_UP; /* exhausted: no proof (see the offset-order search) */
            w->units[pos] = c->work;
            share -= c->work;
        }
        if (r != OLLA_SEARCH_GAVE_UP) {
            w->r = r;
            w->pos = pos;
            finish_at(c->stop_pos, pos);
            return 1;
        }
        if (c->timed_out) {
            w->cut_pos = pos;
            return 1;
        }
    }
    return 0;
}

/* The worker's runs in schedule order until one finishes (found, proven
 * none, out of memory), the budget ends, a run earlier in the schedule has
 * finished, or the deadline passes. A run stops at its round's node budget
 * or when the worker's equal share of the work left at the round's start
 * is spent (so only the last round is cut short). */
static void *run_worker(void *arg)
{
    worker *w = arg;
    long long done = 0;
    int round = 0;
    for (; round < OLLA_SEARCH_ROUNDS && done < w->sch->total; round++) {
        long long share = (w->sch->total - done) / w->sch->workers;
        int over = run_round(w, round, share > 0 ? share : 1);
        done = leave_round(w, round);
        if (over) {
            round++;
            break;
        }
    }
    /* leave every later round too, so no other worker waits for this one */
    pthread_mutex_lock(&w->sch->mu);
    for (; round < OLLA_SEARCH_ROUNDS; round++)
        w->sch->left_round[round]++;
    pthread_cond_broadcast(&w->sch->cv);
    pthread_mutex_unlock(&w->sch->mu);
    return NULL;
}

/* ---- the workers and their threads ---- */

/* Worker parity (0 or 1) of the schedule sch, taking that half of each
 * round's configurations and writing its offsets to off, with its state
 * built: 0, or the OLLA_SEARCH_ outcome that stopped the build. */
static int worker_init(worker *w, schedule *sch, int parity, int64_t *off)
{
    memset(w, 0, sizeof *w);
    olla_search_init(&w->c, sch->in, off, &sch->stop_pos);
    w->sch = sch;
    w->first = parity * (OLLA_SEARCH_CONFIGS / 2);
    w->last = w->first + OLLA_SEARCH_CONFIGS / 2;
    w->r = OLLA_SEARCH_GAVE_UP;
    w->pos = INT32_MAX;
    w->cut_pos = INT32_MAX;
    return olla_search_build(&w->c);
}

/* The schedule ready for a run of workers workers: no round left, no run
 * finished. */
static void schedule_reset(schedule *sch, int workers)
{
    sch->workers = workers;
    memset(sch->left_round, 0, sizeof sch->left_round);
    sch->done = 0;
    atomic_store(&sch->stop_pos, INT32_MAX);
}

/* Both workers on threads of their own with a large stack, so the
 * recursion can go deep. Returns 0 when the threads could not be started
 * (nothing is left running then). */
static int run_threads(worker *w, int64_t *off2)
{
    pthread_t th[2];
    pthread_attr_t attr;
    if (pthread_attr_init(&attr) != 0)
        return 0;
    int ok =
        pthread_attr_setstacksize(&attr, OLLA_SEARCH_STACK) == 0 && off2 && worker_init(&w[1], w[0].sch, 1, off2) == 0;
    /* the workers start with every signal blocked, so that signals (and
     * their handlers) stay the calling thread's */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    int started = 0;
    if (ok) {
        w[0].c.max_depth = w[1].c.max_depth = OLLA_SEARCH_DEPTH_THREAD;
        started = pthread_create(&th[0], &attr, run_worker, &w[0]) == 0;
        started += started && pthread_create(&th[1], &attr, run_worker, &w[1]) == 0;
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (started == 1) {
        /* the first runs alone: stop it, and let it pass every round */
        pthread_mutex_lock(&w[0].sch->mu);
        atomic_store(&w[0].sch->stop_pos, -1);
        for (int round = 0; round < OLLA_SEARCH_ROUNDS; round++)
            w[0].sch->left_round[round]++;
        pthread_cond_broadcast(&w[0].sch->cv);
        pthread_mutex_unlock(&w[0].sch->mu);
        pthread_join(th[0], NULL);
    } else if (started == 2) {
        pthread_join(th[1], NULL);
        pthread_join(th[0], NULL);
    }
    pthread_attr_destroy(&attr);
    return started == 2;
}

/* Runs the schedule on two threads; without threads, one worker takes
 * every configuration in the same order on the caller's stack (with a
 * shallower depth limit). */
static void run_schedule(worker *w, int64_t *off2)
{
    schedule_reset(w[0].sch, 2);
    if (run_threads(w, off2))
        return;
    olla_search_free(&w[1].c); /* all pointers NULL if never built */
    memset(&w[1], 0, sizeof w[1]);
    w[1].r = OLLA_SEARCH_GAVE_UP;
    w[1].pos = INT32_MAX;
    schedule_reset(w[0].sch, 1);
    memset(w[0].units, 0, sizeof w[0].units);
    w[0].r = OLLA_SEARCH_GAVE_UP;
    w[0].pos = INT32_MAX;
    w[0].c.timed_out = 0;
    w[0].c.max_depth = OLLA_SEARCH_DEPTH_CALLER;
    w[0].first = 0;
    w[0].last = OLLA_SEARCH_CONFIGS;
    run_worker(&w[0]);
}

/* ---- the answer and the budget ---- */

/* The answer: the earliest finished run, and the work of every run up to it. */
static int collect(worker *w, int64_t *off, const int64_t *off2, size_t n, olla_pwork *pw)
{
    int win = atomic_load(&w[0].sch->stop_pos);
    for (int k = 0; k < 2; k++)
        for (int p = 0; p < OLLA_SEARCH_ROUNDS * OLLA_SEARCH_CONFIGS && p <= win; p++)
            pw->used += w[k].units[p];
    if (win == INT32_MAX) {
        int timed = w[0].c.timed_out || w[1].c.timed_out;
        pw->stopped |= 1 << (timed ? OLLA_PLACE_STOPPED_TIME : OLLA_PLACE_STOPPED_BUDGET);
        return OLLA_SEARCH_GAVE_UP;
    }
    /* a run before the answer that the clock cut might have finished first:
     * the answer then depends on the load */
    if (w[0].cut_pos < win || w[1].cut_pos < win)
        pw->stopped |= 1 << OLLA_PLACE_STOPPED_TIME;
    worker *x = w[0].pos == win ? &w[0] : &w[1];
    if (x == &w[1] && x->r == OLLA_SEARCH_FOUND)
        memcpy(off, off2, n * sizeof *off);
    return x->r;
}

/* The schedule run from the input: built, checked against the capacity,
 * run, and its answer and work collected. */
int olla_search_schedule(const search_input *in, olla_pwork *pw, int64_t *off)
{
    size_t n = in->n;
    int64_t capacity = in->cap;
    schedule sch;
    memset(&sch, 0, sizeof sch);
    atomic_init(&sch.stop_pos, INT32_MAX);
    sch.in = in;
    worker w[2];
    memset(&w[1], 0, sizeof w[1]);
    int r = worker_init(&w[0], &sch, 0, off);
    if (r == 0 && (r = olla_search_reset(&w[0].c, 0, 0)) == 0) {
        for (size_t j = 0; j < w[0].c.nsec; j++)
            if (w[0].c.rem[j] + w[0].c.floor0[j] + olla_search_fixed_above(&w[0].c, j, w[0].c.floor0[j]) > capacity) {
                olla_search_free(&w[0].c);
                return OLLA_SEARCH_NONE; /* more bytes live at one time than the capacity */
            }
    }
    if (r != 0) {
        if (w[0].c.timed_out)
            pw->stopped |= 1 << OLLA_PLACE_STOPPED_TIME;
        if (w[0].c.over_budget)
            pw->stopped |= 1 << OLLA_PLACE_STOPPED_BUDGET;
        olla_search_free(&w[0].c);
        return r;
    }
    if (pthread_mutex_init(&sch.mu, NULL) != 0 || pthread_cond_init(&sch.cv, NULL) != 0) {
        olla_search_free(&w[0].c);
        return OLLA_SEARCH_NOMEM;
    }
    /* building the section lists and the fixed spans, for each worker (the
     * build checked that the budget pays for it); the runs share the rest */
    long long build = olla_search_build_units(&w[0].c, w[0].c.sec_start[w[0].c.nsec]);
    pw->used += build;
    sch.total = olla_pwork_left(pw);
    int64_t *off2 = malloc((n + 1) * sizeof *off2);
    run_schedule(w, off2);
    r = collect(w, off, off2, n, pw);
    pthread_mutex_destroy(&sch.mu);
    pthread_cond_destroy(&sch.cv);
    olla_search_free(&w[1].c);
    free(off2);
    olla_search_free(&w[0].c);
    return r;
}
