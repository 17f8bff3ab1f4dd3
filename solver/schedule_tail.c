/* olla-onnx: the groups of nodes an order runs last, put in reverse order of
 * the buffers they free.
 *
 * A training step's order often ends with many small independent groups:
 * the weight updates deferred to the end, each reading one gradient made
 * somewhere in the backward pass. Where they run from the last layer's
 * parameters to the first's, the gradients made first are freed first, so
 * their lifetimes cross: each starts before and ends before the next. Run in
 * reverse order of the gradients' starts, the lifetimes nest, which a
 * placement can stack without holes. Which group runs first changes what is
 * live only between the groups, so the caller keeps the result only where
 * the peak is not higher. */
#include "solver/olla_schedule.h"

#include <stdlib.h>
#include <string.h>

/* The tail ends (going back in time) where a group would pass this many
 * nodes. */
#define TAIL_GROUP_MAX 16

static int group_root(int *parent, int v)
{
    while (parent[v] != v) {
        parent[v] = parent[parent[v]];
        v = parent[v];
    }
    return v;
}

typedef struct {
    int root, latest_start, first_step;
} tail_group;

/* The group freeing the latest-made buffer first; ties in their order. */
static int by_latest_start(const void *a, const void *b)
{
    const tail_group *x = a, *y = b;
    if (x->latest_start != y->latest_start)
        return x->latest_start > y->latest_start ? -1 : 1;
    return (x->first_step > y->first_step) - (x->first_step < y->first_step);
}

/* The group node v joins going back in time: that of the readers of its
 * outputs and of the tail nodes that read a planned tensor it reads too.
 * -1: none (v starts a group of its own); -2: two groups, or a group that
 * would pass TAIL_GROUP_MAX nodes. A node that joins two feeds both, as a
 * backward node feeds the next backward node and its weight's update: the
 * tail ends there, and the groups stay apart. */
static int group_joined(const olla_dag *dag, int *parent, const int *group_size, const int *reader, int v)
{
    int joined = -1;
    for (int i = dag->out_start[v]; i < dag->out_start[v + 1]; i++) {
        int e = dag->out_list[i];
        for (int k = dag->sink_start[e]; k < dag->sink_start[e + 1]; k++) {
            int r = group_root(parent, dag->sink_list[k]);
            if (joined >= 0 && r != joined)
                return -2;
            joined = r;
        }
    }
    for (int i = dag->in_start[v]; i < dag->in_start[v + 1]; i++) {
        int e = dag->in_list[i];
        if (reader[e] < 0)
            continue;
        int r = group_root(parent, reader[e]);
        if (joined >= 0 && r != joined)
            return -2;
        joined = r;
    }
    return joined >= 0 && group_size[joined] + 1 > TAIL_GROUP_MAX ? -2 : joined;
}

olla_status olla_sched_nest_tail(const olla_dag *dag, const int *order, int *out, int *groups, olla_error *err)
{
    int n = dag->n_nodes, nt = dag->n_tensors;
    *groups = 0;
    memcpy(out, order, (size_t)n * sizeof *out);
    if (n < 2)
        return OLLA_OK;
    int *parent = malloc((size_t)n * sizeof *parent), *group_size = malloc((size_t)n * sizeof *group_size);
    int *pos = malloc((size_t)n * sizeof *pos), *reader = malloc((size_t)(nt > 0 ? nt : 1) * sizeof *reader);
    tail_group *g = malloc((size_t)n * sizeof *g);
    int *rank = malloc((size_t)n * sizeof *rank), *fill = malloc(((size_t)n + 1) * sizeof *fill);
    if (!parent || !group_size || !pos || !reader || !g || !rank || !fill) {
        free(parent), free(group_size), free(pos), free(reader), free(g), free(rank), free(fill);
        return olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory nesting the order's tail (%d nodes)", n);
    }
    for (int t = 0; t < n; t++) {
        pos[order[t]] = t;
        parent[t] = t;
        group_size[t] = 1;
    }
    for (int e = 0; e < nt; e++)
        reader[e] = -1;
    /* grow the tail back in time while its groups stay small */
    int start = n;
    while (start > 0) {
        int v = order[start - 1], r = group_joined(dag, parent, group_size, reader, v);
        if (r == -2)
            break;
        if (r >= 0) {
            parent[v] = r;
            group_size[r]++;
        }
        for (int i = dag->in_start[v]; i < dag->in_start[v + 1]; i++) {
            int e = dag->in_list[i];
            if (dag->bytes[e] > 0 && reader[e] < 0)
                reader[e] = v;
        }
        start--;
    }
    /* each group's key: the latest start among the planned buffers made
     * before the tail that it reads */
    int ng = 0;
    for (int t = start; t < n; t++)
        rank[order[t]] = -1;
    for (int t = start; t < n; t++) {
        int r = group_root(parent, order[t]);
        if (rank[r] < 0) {
            rank[r] = ng;
            g[ng++] = (tail_group){r, -1, t};
        }
    }
    if (ng >= 2) {
        for (int t = start; t < n; t++) {
            int v = order[t];
            tail_group *gv = &g[rank[group_root(parent, v)]];
            for (int i = dag->in_start[v]; i < dag->in_start[v + 1]; i++) {
                int e = dag->in_list[i], p = dag->producer[e];
                if (dag->bytes[e] > 0 && pos[p] < start && pos[p] > gv->latest_start)
                    gv->latest_start = pos[p];
            }
        }
        qsort(g, (size_t)ng, sizeof *g, by_latest_start);
        for (int k = 0; k < ng; k++)
            rank[g[k].root] = k;
        /* counting sort of the tail by its group's rank, stable */
        memset(fill, 0, ((size_t)ng + 1) * sizeof *fill);
        for (int t = start; t < n; t++)
            fill[rank[group_root(parent, order[t])] + 1]++;
        for (int k = 0; k < ng; k++)
            fill[k + 1] += fill[k];
        for (int t = start; t < n; t++) {
            int v = order[t];
            out[start + fill[rank[group_root(parent, v)]]++] = v;
        }
        if (memcmp(out, order, (size_t)n * sizeof *out) != 0)
            *groups = ng;
    }
    free(parent), free(group_size), free(pos), free(reader), free(g), free(rank), free(fill);
    return OLLA_OK;
}
