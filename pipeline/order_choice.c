/* olla-onnx: choosing among orders of equal peak by how well their
 * lifetimes pack (olla_order_judge in olla_pipeline.h).
 *
 * The ordering stops at the first order of the best peak it finds, and the
 * runtime's order search at the first of the least cost; other orders of
 * the same peak are as good to them. They are not to the placement: one
 * order's lifetimes may nest so that the heuristic portfolio packs them at
 * the peak at once, another's leave it a few percent above, and the exact
 * search then spends its whole budget (seconds, on a training step of a few
 * thousand nodes) to close the gap, or fails to. A judge runs the
 * portfolio alone on each order (milliseconds; no clock, so the choice is
 * the same on any machine) and prefers the smallest arena; the first order,
 * the one chosen without it, wins every tie and is never replaced by one
 * of a higher peak. An order packed at its peak ends the judging, and its
 * placement is kept for the placement stage, which then has nothing left
 * to do (the same offsets it would find: its own first phase). */
#include <stdlib.h>
#include <string.h>

#include "pipeline/olla_pipeline.h"

/* A placement of the DAG's tensors (olla_stage_place's outputs). */
typedef struct placed {
    int64_t *offset;               /* n_tensors */
    int *holder, *buf_first, *buf_last; /* n_tensors */
    olla_place_outcome out;
} placed;

struct olla_order_judge {
    const olla_dag *dag;
    int64_t alignment;
    const olla_options *opt;
    int64_t reference; /* the first order's peak; -1 before it */
    int scored;
    int *step, *first, *last; /* scratch: n_nodes, n_tensors, n_tensors */
    unsigned char *applied;   /* n_inplace */
    placed scratch, packed;   /* the last order's placement; the packed order's */
    int *packed_order;        /* n_nodes: the order packed at the reference peak */
    int have_packed;
};

static int placed_alloc(placed *p, size_t nt)
{
    p->offset = malloc(nt * sizeof(int64_t));
    p->holder = malloc(nt * sizeof(int));
    p->buf_first = malloc(nt * sizeof(int));
    p->buf_last = malloc(nt * sizeof(int));
    return p->offset && p->holder && p->buf_first && p->buf_last;
}

static void placed_free(placed *p)
{
    free(p->offset);
    free(p->holder);
    free(p->buf_first);
    free(p->buf_last);
}

olla_status olla_order_judge_new(const olla_dag *dag, int64_t alignment, const olla_options *opt,
                                 olla_order_judge **out, olla_error *err)
{
    olla_order_judge *j = calloc(1, sizeof *j);
    size_t n = (size_t)dag->n_nodes + 1, nt = (size_t)dag->n_tensors + 1;
    *out = NULL;
    int ok = j != NULL;
    if (j) {
        j->dag = dag;
        j->alignment = alignment;
        j->opt = opt;
        j->reference = -1;
        j->step = malloc(n * sizeof(int));
        j->first = malloc(nt * sizeof(int));
        j->last = malloc(nt * sizeof(int));
        j->applied = malloc((size_t)dag->n_inplace + 1);
        j->packed_order = malloc(n * sizeof(int));
        ok = placed_alloc(&j->scratch, nt) & placed_alloc(&j->packed, nt);
        ok = ok && j->step && j->first && j->last && j->applied && j->packed_order;
    }
    if (!ok) {
        olla_order_judge_free(j);
        return olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory judging orders of equal peak");
    }
    *out = j;
    return OLLA_OK;
}

void olla_order_judge_free(olla_order_judge *j)
{
    if (!j)
        return;
    free(j->step);
    free(j->first);
    free(j->last);
    free(j->applied);
    free(j->packed_order);
    placed_free(&j->scratch);
    placed_free(&j->packed);
    free(j);
}

int olla_order_judge_count(const olla_order_judge *j)
{
    return j ? j->scored : 0;
}

int64_t olla_order_judge_score(olla_order_judge *j, const int *order)
{
    const olla_dag *dag = j->dag;
    olla_error err = {0};
    int64_t peak = 0, arena;
    j->scored++;
    if (olla_dag_peak(dag, order, &peak, NULL, NULL, &err) != OLLA_OK)
        return -1;
    if (j->reference < 0)
        j->reference = peak;
    if (peak > j->reference || olla_dag_lifetimes(dag, order, j->first, j->last, &err) != OLLA_OK)
        return -1;
    for (int t = 0; t < dag->n_nodes; t++)
        j->step[order[t]] = t;
    olla_dag_inplace_applied(dag, j->step, j->last, j->applied);
    olla_place_input in = {dag, j->first, j->last, j->applied, j->alignment, 0, 0, j->opt};
    placed *p = &j->scratch;
    if (olla_stage_place_heuristic(&in, p->offset, p->holder, p->buf_first, p->buf_last, &p->out, &err) != OLLA_OK)
        return -1;
    arena = p->out.arena_bytes;
    if (arena <= j->reference && !strcmp(p->out.status, "optimal")) { /* packed: keep it */
        placed t = j->packed;
        j->packed = j->scratch;
        j->scratch = t;
        memcpy(j->packed_order, order, (size_t)dag->n_nodes * sizeof(int));
        j->have_packed = 1;
    }
    return arena > j->reference ? arena - j->reference : 0;
}

int olla_order_judge_placed(const olla_order_judge *j, const int *order, int64_t *offset, int *holder,
                            int *buf_first, int *buf_last, olla_place_outcome *out)
{
    size_t nt = (size_t)(j ? j->dag->n_tensors : 0);
    if (!j || !j->have_packed || memcmp(order, j->packed_order, (size_t)j->dag->n_nodes * sizeof(int)) != 0)
        return 0;
    memcpy(offset, j->packed.offset, nt * sizeof(int64_t));
    memcpy(holder, j->packed.holder, nt * sizeof(int));
    memcpy(buf_first, j->packed.buf_first, nt * sizeof(int));
    memcpy(buf_last, j->packed.buf_last, nt * sizeof(int));
    *out = j->packed.out;
    return 1;
}

int olla_order_judge_pick(olla_order_judge *j, const int *first, const int *others, int n_others)
{
    int64_t low = olla_order_judge_score(j, first);
    int pick = 0;
    size_t n = (size_t)j->dag->n_nodes;
    for (int k = 0; k < n_others && k + 1 < OLLA_ORDER_JUDGE_MAX && low > 0; k++) {
        int64_t score = olla_order_judge_score(j, others + (size_t)k * n);
        if (score >= 0 && score < low) {
            low = score;
            pick = k + 1;
        }
    }
    return pick;
}
