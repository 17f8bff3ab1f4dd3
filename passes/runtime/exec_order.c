/* olla-onnx: which ops a runtime runs, its edges, and the order it runs them
 * in (the contract is in olla_exec_order.h). */
#include "passes/runtime/olla_exec_order.h"

#include <stdlib.h>
#include <string.h>

#include "passes/runtime/exec_heap.h"

/* ---- Runtime names ---- */

static const char *const runtime_names[] = {"listed", "ort", "ort-priority"};

const char *olla_runtime_name(olla_runtime rt)
{
    return rt >= OLLA_RUNTIME_LISTED && rt <= OLLA_RUNTIME_ORT_PRIORITY ? runtime_names[rt] : "unknown";
}

olla_status olla_runtime_parse(const char *name, olla_runtime *rt, olla_error *err)
{
    for (int i = 0; i < 3; i++)
        if (name && strcmp(name, runtime_names[i]) == 0) {
            *rt = (olla_runtime)i;
            return OLLA_OK;
        }
    return olla_error_set(err, OLLA_ERR_USAGE, "unknown runtime '%s'; choose ort, ort-priority or listed",
                          name ? name : "");
}

/* ---- The exec graph: allocation and CSR helpers ---- */

void olla_exec_graph_free(olla_exec_graph *eg)
{
    free(eg->runs);
    free(eg->first_priority);
    free(eg->pred_start);
    free(eg->pred_list);
    free(eg->succ_start);
    free(eg->succ_list);
    free(eg->dep_start);
    free(eg->dep_list);
    free(eg->reads_as);
    memset(eg, 0, sizeof *eg);
}

static olla_status oom(olla_error *err, const char *what)
{
    return olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory %s", what);
}

/* Consumers from producers: succ_* is the transpose of pred_*. */
static olla_status transpose_edges(olla_exec_graph *eg, olla_error *err)
{
    int n = eg->n_ops, m = eg->pred_start[n];
    eg->succ_start = calloc((size_t)n + 1, sizeof(int));
    eg->succ_list = malloc(((size_t)m + 1) * sizeof(int));
    int *fill = malloc(((size_t)n + 1) * sizeof(int));
    if (!eg->succ_start || !eg->succ_list || !fill) {
        free(fill);
        return oom(err, "building the runtime's edges");
    }
    for (int k = 0; k < m; k++)
        eg->succ_start[eg->pred_list[k] + 1]++;
    for (int v = 0; v < n; v++)
        eg->succ_start[v + 1] += eg->succ_start[v];
    memcpy(fill, eg->succ_start, (size_t)n * sizeof(int));
    for (int v = 0; v < n; v++)
        for (int k = eg->pred_start[v]; k < eg->pred_start[v + 1]; k++)
            eg->succ_list[fill[eg->pred_list[k]]++] = v;
    free(fill);
    return OLLA_OK;
}

olla_status olla_exec_graph_from_edges(int n_ops, const int *pred_start, const int *preds,
                                       const unsigned char *first_priority, olla_exec_graph *eg, olla_error *err)
{
    memset(eg, 0, sizeof *eg);
    int m = pred_start[n_ops];
    eg->n_ops = eg->n_running = n_ops;
    eg->runs = malloc((size_t)n_ops + 1);
    eg->first_priority = calloc((size_t)n_ops + 1, 1);
    eg->pred_start = malloc(((size_t)n_ops + 1) * sizeof(int));
    eg->pred_list = malloc(((size_t)m + 1) * sizeof(int));
    eg->dep_start = malloc(((size_t)n_ops + 1) * sizeof(int));
    eg->dep_list = malloc(((size_t)m + 1) * sizeof(int));
    if (!eg->runs || !eg->first_priority || !eg->pred_start || !eg->pred_list || !eg->dep_start || !eg->dep_list) {
        olla_exec_graph_free(eg);
        return oom(err, "building the runtime's graph");
    }
    memset(eg->runs, 1, (size_t)n_ops + 1);
    if (first_priority)
        memcpy(eg->first_priority, first_priority, (size_t)n_ops);
    for (int k = 0; k < m; k++)
        if (preds[k] < 0 || preds[k] >= n_ops) {
            olla_exec_graph_free(eg);
            return olla_error_set(err, OLLA_ERR_INPUT, "edge %d names op %d, outside 0..%d", k, preds[k], n_ops - 1);
        }
    memcpy(eg->pred_start, pred_start, ((size_t)n_ops + 1) * sizeof(int));
    memcpy(eg->pred_list, preds, (size_t)m * sizeof(int));
    memcpy(eg->dep_start, pred_start, ((size_t)n_ops + 1) * sizeof(int));
    memcpy(eg->dep_list, preds, (size_t)m * sizeof(int));
    olla_status st = transpose_edges(eg, err);
    if (st != OLLA_OK)
        olla_exec_graph_free(eg);
    return st;
}

/* ---- Load-time rewrites: Constants and RemoveDuplicateCastTransformer ---- */

enum type_group { GROUP_UNKNOWN = -1, GROUP_BOOL, GROUP_INTEGER, GROUP_UNSIGNED, GROUP_FLOAT };
enum { T_FLOAT = 1, T_UINT8, T_INT8, T_UINT16, T_INT16, T_INT32, T_INT64, T_STRING, T_BOOL, T_FLOAT16, T_DOUBLE,
       T_UINT32, T_UINT64, T_BFLOAT16 = 16 };

static int type_group(int32_t t)
{
    switch (t) {
    case T_BOOL: return GROUP_BOOL;
    case T_INT8: case T_INT16: case T_INT32: case T_INT64: return GROUP_INTEGER;
    case T_UINT8: case T_UINT16: case T_UINT32: case T_UINT64: return GROUP_UNSIGNED;
    case T_BFLOAT16: case T_DOUBLE: case T_FLOAT: case T_FLOAT16: return GROUP_FLOAT;
    default: return GROUP_UNKNOWN;
    }
}

static int type_bits(int32_t t)
{
    switch (t) {
    case T_BOOL: return 1;
    case T_UINT8: case T_INT8: return 8;
    case T_INT16: case T_UINT16: case T_BFLOAT16: case T_FLOAT16: return 16;
    case T_INT32: case T_UINT32: case T_FLOAT: return 32;
    case T_INT64: case T_UINT64: case T_DOUBLE: return 64;
    default: return -1;
    }
}

/* ORT's RemoveDuplicateCastTransformer::UnsafeCast, rule for rule. */
static int unsafe_cast(int32_t src, int32_t dst, const char *node_name)
{
    int gs = type_group(src), gd = type_group(dst);
    if (gs == GROUP_UNKNOWN || gd == GROUP_UNKNOWN)
        return 1;
    if (gs != GROUP_BOOL && gs != GROUP_UNSIGNED && gd == GROUP_UNSIGNED)
        return 1;
    if (gs == GROUP_FLOAT && gd != GROUP_FLOAT)
        return 1;
    int bs = type_bits(src), bd = type_bits(dst);
    if (gs == GROUP_UNSIGNED && gd == GROUP_INTEGER)
        return bd <= bs;
    if ((gs == GROUP_INTEGER || gs == GROUP_UNSIGNED) && gd == GROUP_FLOAT)
        return bd <= bs;
    if ((src == T_FLOAT16 && dst == T_BFLOAT16) || (src == T_BFLOAT16 && dst == T_FLOAT16))
        return 1;
    return bs > bd && strncmp(node_name ? node_name : "", "InsertedPrecisionFreeCast_", 26) != 0;
}

/* The mutable state of the rewrite: tensors merged into others (a reader of
 * a removed Cast reads its input instead) and, per tensor, the list of
 * (op, input slot) entries that read it. */
typedef struct cast_pass {
    const olla_graph *g;
    unsigned char *alive; /* n_ops: runs (not a Constant, not removed) */
    int *merged_into;     /* n_tensors: itself, or the tensor it was merged into */
    int *head, *tail;     /* n_tensors: reader entries, -1 = none */
    int *next, *entry_op; /* per entry */
} cast_pass;

static int resolve(cast_pass *cp, int t)
{
    int r = t;
    while (cp->merged_into[r] != r)
        r = cp->merged_into[r];
    while (cp->merged_into[t] != r) {
        int nx = cp->merged_into[t];
        cp->merged_into[t] = r;
        t = nx;
    }
    return r;
}

static void merge_tensor(cast_pass *cp, int from, int into)
{
    cp->merged_into[from] = into;
    if (cp->head[from] < 0)
        return;
    if (cp->head[into] < 0)
        cp->head[into] = cp->head[from];
    else
        cp->next[cp->tail[into]] = cp->head[from];
    cp->tail[into] = cp->tail[from];
    cp->head[from] = cp->tail[from] = -1;
}

static int32_t elem_of(const olla_graph *g, int t)
{
    return t >= 0 && g->tensors[t].type.kind == OLLA_VALUE_TENSOR ? g->tensors[t].type.elem_type : 0;
}

static int is_cast(const olla_graph *g, int op)
{
    const olla_op *o = &g->ops[op];
    return strcmp(o->op_type, "Cast") == 0 && o->n_explicit_inputs >= 1 && o->n_outputs >= 1 &&
           g->input_list[o->first_input] >= 0 && g->output_list[o->first_output] >= 0;
}

static int cast_out(const olla_graph *g, int op)
{
    return g->output_list[g->ops[op].first_output];
}

/* One Cast X as RemoveDuplicateCastTransformer treats it (header comment). */
static void visit_cast(cast_pass *cp, int x, int *removable, int *kept)
{
    const olla_graph *g = cp->g;
    int tin = resolve(cp, g->input_list[g->ops[x].first_input]), tout = cast_out(g, x);
    int32_t src = elem_of(g, tin), dst = elem_of(g, tout);
    int loss = unsafe_cast(src, dst, g->ops[x].name);
    int n_children = 0, n_remove = 0, n_keep = 0;
    for (int e = cp->head[tout]; e >= 0; e = cp->next[e]) {
        int c = cp->entry_op[e];
        if (!cp->alive[c])
            continue;
        n_children++;
        if (strcmp(g->ops[c].op_type, "Cast") != 0)
            continue;
        int32_t dst1 = elem_of(g, cast_out(g, c));
        if (loss && unsafe_cast(dst1, dst, g->ops[c].name))
            return;
        if (!g->tensors[cast_out(g, c)].is_output && src != 0 && src == dst1)
            removable[n_remove++] = c;
        else
            kept[n_keep++] = c;
    }
    for (int i = 0; i < n_remove; i++) {
        cp->alive[removable[i]] = 0;
        merge_tensor(cp, cast_out(g, removable[i]), tin);
    }
    if (n_children == 0 || n_remove + n_keep != n_children || g->tensors[tout].is_output)
        return;
    for (int i = 0; loss && i < n_keep; i++)
        if (elem_of(g, cast_out(g, kept[i])) == T_BOOL)
            return;
    cp->alive[x] = 0;
    merge_tensor(cp, tout, tin);
}

/* Reader entries of every tensor, for the ops that run. */
static int cast_pass_init(cast_pass *cp, const olla_graph *g, const unsigned char *runs)
{
    int nt = g->n_tensors, n_entries = 0;
    for (int v = 0; v < g->n_ops; v++)
        n_entries += g->ops[v].n_inputs;
    cp->g = g;
    cp->alive = malloc((size_t)g->n_ops + 1);
    cp->merged_into = malloc(((size_t)nt + 1) * sizeof(int));
    cp->head = malloc(((size_t)nt + 1) * sizeof(int));
    cp->tail = malloc(((size_t)nt + 1) * sizeof(int));
    cp->next = malloc(((size_t)n_entries + 1) * sizeof(int));
    cp->entry_op = malloc(((size_t)n_entries + 1) * sizeof(int));
    if (!cp->alive || !cp->merged_into || !cp->head || !cp->tail || !cp->next || !cp->entry_op)
        return 0;
    memcpy(cp->alive, runs, (size_t)g->n_ops);
    for (int t = 0; t < nt; t++) {
        cp->merged_into[t] = t;
        cp->head[t] = cp->tail[t] = -1;
    }
    int e = 0;
    for (int v = 0; v < g->n_ops; v++) {
        if (!runs[v])
            continue;
        for (int s = 0; s < g->ops[v].n_inputs; s++) {
            int t = g->input_list[g->ops[v].first_input + s];
            if (t < 0)
                continue;
            cp->entry_op[e] = v;
            cp->next[e] = -1;
            if (cp->head[t] < 0)
                cp->head[t] = e;
            else
                cp->next[cp->tail[t]] = e;
            cp->tail[t] = e++;
        }
    }
    return 1;
}

static void cast_pass_free(cast_pass *cp)
{
    free(cp->alive);
    free(cp->merged_into);
    free(cp->head);
    free(cp->tail);
    free(cp->next);
    free(cp->entry_op);
}

/* ---- Building the exec graph of an olla_graph ---- */

/* The CSR rows of producers of every op: of the tensors it reads after
 * resolving merges (cp, or NULL for the graph as read), keeping producers
 * for which keep[] is set (NULL: all), deduplicated. */
static olla_status producer_rows(const olla_graph *g, cast_pass *cp, const unsigned char *keep_op,
                                 const unsigned char *keep_producer, int **start_out, int **list_out,
                                 olla_error *err)
{
    int n = g->n_ops, m = 0;
    for (int v = 0; v < n; v++)
        m += g->ops[v].n_inputs;
    int *start = malloc(((size_t)n + 1) * sizeof(int)), *list = malloc(((size_t)m + 1) * sizeof(int));
    int *seen = malloc(((size_t)n + 1) * sizeof(int));
    if (!start || !list || !seen) {
        free(start);
        free(list);
        free(seen);
        return oom(err, "building the runtime's edges");
    }
    for (int v = 0; v < n; v++)
        seen[v] = -1;
    int k = 0;
    for (int v = 0; v < n; v++) {
        start[v] = k;
        for (int s = 0; keep_op[v] && s < g->ops[v].n_inputs; s++) {
            int t = g->input_list[g->ops[v].first_input + s];
            if (t < 0)
                continue;
            int p = g->tensors[cp ? resolve(cp, t) : t].producer;
            if (p < 0 || (keep_producer && !keep_producer[p]) || seen[p] == v)
                continue;
            seen[p] = v;
            list[k++] = p;
        }
    }
    start[n] = k;
    free(seen);
    *start_out = start;
    *list_out = list;
    return OLLA_OK;
}

static olla_status check_permutation(int n, const int *listing, int *pos, olla_error *err)
{
    for (int v = 0; v < n; v++)
        pos[v] = -1;
    for (int i = 0; i < n; i++) {
        int v = listing[i];
        if (v < 0 || v >= n)
            return olla_error_set(err, OLLA_ERR_INPUT, "listing entry %d is %d, not an op index 0..%d", i, v, n - 1);
        if (pos[v] >= 0)
            return olla_error_set(err, OLLA_ERR_INPUT, "listing names op %d twice (entries %d and %d)", v, pos[v], i);
        pos[v] = i;
    }
    return OLLA_OK;
}

/* Constants and removed Casts do not run; the edges are ORT's. */
static olla_status ort_rewrites(const olla_graph *g, const int *listing, olla_exec_graph *eg, olla_error *err)
{
    int n = g->n_ops;
    for (int v = 0; v < n; v++)
        eg->runs[v] = strcmp(g->ops[v].op_type, "Constant") != 0;
    cast_pass cp;
    memset(&cp, 0, sizeof cp);
    int *removable = malloc(((size_t)g->n_ops + 1) * sizeof(int));
    int *kept = malloc(((size_t)g->n_ops + 1) * sizeof(int));
    olla_status st = OLLA_OK;
    if (!removable || !kept || !cast_pass_init(&cp, g, eg->runs)) {
        st = oom(err, "modelling ONNX Runtime's load-time rewrites");
        goto done;
    }
    for (int i = 0; i < n; i++) {
        int v = listing ? listing[i] : i;
        if (cp.alive[v] && is_cast(g, v))
            visit_cast(&cp, v, removable, kept);
    }
    memcpy(eg->runs, cp.alive, (size_t)n);
    for (int t = 0; t < g->n_tensors; t++)
        eg->reads_as[t] = resolve(&cp, t);
    for (int v = 0; v < n; v++) /* a Cast removed below a kept Cast */
        if (!eg->runs[v] && is_cast(g, v) &&
            eg->reads_as[cast_out(g, v)] != eg->reads_as[g->input_list[g->ops[v].first_input]])
            eg->has_file_only_edges = 1;
    st = producer_rows(g, &cp, eg->runs, eg->runs, &eg->pred_start, &eg->pred_list, err);
done:
    cast_pass_free(&cp);
    free(removable);
    free(kept);
    return st;
}

olla_status olla_exec_graph_build(const olla_graph *g, olla_runtime rt, const int *listing, olla_exec_graph *eg,
                                  olla_error *err)
{
    memset(eg, 0, sizeof *eg);
    int n = g->n_ops;
    eg->n_ops = n;
    eg->n_tensors = g->n_tensors;
    eg->runs = malloc((size_t)n + 1);
    eg->first_priority = calloc((size_t)n + 1, 1);
    eg->reads_as = malloc(((size_t)g->n_tensors + 1) * sizeof(int));
    int *pos = malloc(((size_t)n + 1) * sizeof(int));
    olla_status st = OLLA_OK;
    if (!eg->runs || !eg->first_priority || !eg->reads_as || !pos) {
        st = oom(err, "building the runtime's graph");
        goto done;
    }
    if (listing && (st = check_permutation(n, listing, pos, err)) != OLLA_OK)
        goto done;
    memset(eg->runs, 1, (size_t)n + 1);
    for (int v = 0; v < n; v++)
        eg->first_priority[v] = strcmp(g->ops[v].op_type, "Shape") == 0 || strcmp(g->ops[v].op_type, "Size") == 0;
    if ((st = producer_rows(g, NULL, eg->runs, NULL, &eg->dep_start, &eg->dep_list, err)) != OLLA_OK)
        goto done;
    for (int t = 0; t < g->n_tensors; t++)
        eg->reads_as[t] = t;
    if (rt == OLLA_RUNTIME_LISTED)
        st = producer_rows(g, NULL, eg->runs, NULL, &eg->pred_start, &eg->pred_list, err);
    else
        st = ort_rewrites(g, listing, eg, err);
    if (st != OLLA_OK)
        goto done;
    for (int v = 0; v < n; v++)
        eg->n_running += eg->runs[v];
    st = transpose_edges(eg, err);
done:
    free(pos);
    if (st != OLLA_OK)
        olla_exec_graph_free(eg);
    return st;
}

/* ---- The orders ---- */

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* ExecutionOrder::DEFAULT, as ORT's Graph::ReverseDFSFrom runs it: a stack
 * of entries 2v (expand v) and 2v+1 (emit v). pos: op -> listing position;
 * by_pos: the listing. */
static olla_status ort_default(const olla_exec_graph *eg, const int *pos, const int *by_pos, int *executed,
                               int *n_executed, olla_error *err)
{
    int n = eg->n_ops;
    size_t cap = (size_t)eg->pred_start[n] + 2 * (size_t)n + 1;
    int *stack = malloc(cap * sizeof(int)), *tmp = malloc(((size_t)n + 1) * sizeof(int));
    unsigned char *visited = calloc((size_t)n + 1, 1);
    if (!stack || !tmp || !visited) {
        free(stack);
        free(tmp);
        free(visited);
        return oom(err, "simulating ONNX Runtime's order");
    }
    size_t sp = 0;
    for (int i = 0; i < n; i++) {
        int v = by_pos[i];
        if (eg->runs[v] && eg->succ_start[v] == eg->succ_start[v + 1])
            stack[sp++] = 2 * v;
    }
    int k = 0;
    while (sp > 0) {
        int e = stack[--sp], v = e >> 1;
        if (e & 1) {
            executed[k++] = v;
            continue;
        }
        if (visited[v])
            continue;
        visited[v] = 1;
        stack[sp++] = e | 1;
        int m = 0;
        for (int j = eg->pred_start[v]; j < eg->pred_start[v + 1]; j++)
            if (!visited[eg->pred_list[j]])
                tmp[m++] = pos[eg->pred_list[j]];
        qsort(tmp, (size_t)m, sizeof(int), cmp_int);
        for (int j = 0; j < m; j++)
            stack[sp++] = 2 * by_pos[tmp[j]];
    }
    *n_executed = k;
    free(stack);
    free(tmp);
    free(visited);
    return OLLA_OK;
}

/* ExecutionOrder::PRIORITY_BASED: Kahn's sort, Shape/Size first, then the
 * lowest position (every Node::Priority is 0 in a model read from a file). */
static olla_status ort_priority(const olla_exec_graph *eg, const int *pos, const int *by_pos, int *executed,
                                int *n_executed, olla_error *err)
{
    int n = eg->n_ops;
    int *indeg = malloc(((size_t)n + 1) * sizeof(int));
    int64_t *heap = malloc(((size_t)n + 1) * sizeof(int64_t));
    if (!indeg || !heap) {
        free(indeg);
        free(heap);
        return oom(err, "simulating ONNX Runtime's priority order");
    }
    int hn = 0, k = 0;
#define PRIORITY_KEY(v) (((int64_t)!eg->first_priority[v] << 32) | (int64_t)pos[v])
    for (int v = 0; v < n; v++) {
        indeg[v] = eg->pred_start[v + 1] - eg->pred_start[v];
        if (eg->runs[v] && indeg[v] == 0)
            exec_heap_push(heap, &hn, PRIORITY_KEY(v));
    }
    while (hn > 0) {
        int v = by_pos[exec_heap_pop(heap, &hn) & 0xffffffff];
        executed[k++] = v;
        for (int j = eg->succ_start[v]; j < eg->succ_start[v + 1]; j++)
            if (--indeg[eg->succ_list[j]] == 0)
                exec_heap_push(heap, &hn, PRIORITY_KEY(eg->succ_list[j]));
    }
#undef PRIORITY_KEY
    free(indeg);
    free(heap);
    *n_executed = k;
    if (k != eg->n_running)
        return olla_error_set(err, OLLA_ERR_INPUT, "the graph has a cycle: %d of %d running ops ordered", k,
                              eg->n_running);
    return OLLA_OK;
}

static olla_status check_topological(const olla_exec_graph *eg, const int *pos, olla_error *err)
{
    for (int v = 0; v < eg->n_ops; v++)
        for (int j = eg->dep_start[v]; j < eg->dep_start[v + 1]; j++)
            if (pos[eg->dep_list[j]] > pos[v])
                return olla_error_set(err, OLLA_ERR_INPUT,
                                      "the listing puts op %d before op %d, which produces one of its inputs", v,
                                      eg->dep_list[j]);
    return OLLA_OK;
}

olla_status olla_exec_order_of(const olla_exec_graph *eg, olla_runtime rt, const int *listing, int *executed,
                               int *n_executed, olla_error *err)
{
    int n = eg->n_ops;
    int *pos = malloc(((size_t)n + 1) * sizeof(int));
    if (!pos)
        return oom(err, "simulating a runtime's order");
    olla_status st = check_permutation(n, listing, pos, err);
    if (st == OLLA_OK && rt != OLLA_RUNTIME_ORT)
        st = check_topological(eg, pos, err);
    if (st == OLLA_OK) {
        if (rt == OLLA_RUNTIME_LISTED) {
            memcpy(executed, listing, (size_t)n * sizeof(int));
            *n_executed = n;
        } else if (rt == OLLA_RUNTIME_ORT) {
            st = ort_default(eg, pos, listing, executed, n_executed, err);
        } else {
            st = ort_priority(eg, pos, listing, executed, n_executed, err);
        }
    }
    free(pos);
    return st;
}

olla_status olla_exec_order(const olla_graph *g, olla_runtime rt, const int *listing, int *executed,
                            int *n_executed, olla_error *err)
{
    olla_exec_graph eg;
    olla_status st = olla_exec_graph_build(g, rt, listing, &eg, err);
    if (st != OLLA_OK)
        return st;
    st = olla_exec_order_of(&eg, rt, listing, executed, n_executed, err);
    olla_exec_graph_free(&eg);
    return st;
}

/* ---- Completing an executed order with the ops that do not run ---- */

/* Emits op v after the ops it needs that do not run and are not emitted
 * yet (depth first over dep lists, iteratively). Such an op is emitted only
 * once all of its own producers are; one whose producer runs later stays
 * for the end. stamp marks the ops entered by this call. */
typedef struct completion {
    const olla_exec_graph *eg;
    unsigned char *done;
    int *stamp, *stack, *it, *full;
    int k;
} completion;

static int deps_done(const completion *c, int u)
{
    for (int j = c->eg->dep_start[u]; j < c->eg->dep_start[u + 1]; j++)
        if (!c->done[c->eg->dep_list[j]])
            return 0;
    return 1;
}

static void emit_with_needs(completion *c, int v, int call)
{
    const olla_exec_graph *eg = c->eg;
    int sp = 0;
    c->stack[sp] = v;
    c->it[sp++] = eg->dep_start[v];
    c->stamp[v] = call;
    while (sp > 0) {
        int u = c->stack[sp - 1];
        if (c->it[sp - 1] < eg->dep_start[u + 1]) {
            int p = eg->dep_list[c->it[sp - 1]++];
            if (!c->done[p] && !eg->runs[p] && c->stamp[p] != call) {
                c->stamp[p] = call;
                c->stack[sp] = p;
                c->it[sp++] = eg->dep_start[p];
            }
            continue;
        }
        sp--;
        if (sp == 0 || deps_done(c, u)) {
            c->done[u] = 1;
            c->full[c->k++] = u;
        }
    }
}

olla_status olla_exec_complete_order(const olla_exec_graph *eg, const int *executed, int *full, olla_error *err)
{
    int n = eg->n_ops;
    completion c = {eg, calloc((size_t)n + 1, 1), malloc(((size_t)n + 1) * sizeof(int)),
                    malloc(((size_t)n + 1) * sizeof(int)), malloc(((size_t)n + 1) * sizeof(int)), full, 0};
    if (!c.done || !c.stamp || !c.stack || !c.it) {
        free(c.done);
        free(c.stamp);
        free(c.stack);
        free(c.it);
        return oom(err, "completing an executed order");
    }
    for (int v = 0; v < n; v++)
        c.stamp[v] = -1;
    int call = 0;
    for (int i = 0; i < eg->n_running; i++)
        emit_with_needs(&c, executed[i], call++);
    for (int v = 0; v < n; v++)
        if (!c.done[v])
            emit_with_needs(&c, v, call++);
    free(c.done);
    free(c.stamp);
    free(c.stack);
    free(c.it);
    return c.k == n ? OLLA_OK
                    : olla_error_set(err, OLLA_ERR_INTERNAL, "completing an executed order placed %d of %d ops", c.k,
                                     n);
}
