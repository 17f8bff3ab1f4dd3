/* olla-onnx: a model of what ONNX Runtime allocates for one executed order
 * (olla_ort_memory.h states the rules and the configuration).
 *
 * An evaluation makes two passes over the order. The planning pass replays
 * ORT's allocation planner: use counts, graph outputs, aliases, in-place
 * writes, and the free list, kept as one stack per class of (element size,
 * declared shape): ORT scans its free list from the most recently freed
 * buffer and takes the first of the same class, which is the top of that
 * class's stack. It also records, per buffer, the last node that reads any
 * tensor sharing it, which is where ORT's run-time release plan frees it.
 * The sweep then walks the order once more, adding what each node allocates
 * (new buffers, the memory-pattern trace, kernel scratch) and subtracting
 * what is freed after it, and keeps the peak. Both passes are linear in
 * nodes and edges and allocate nothing. */
#include "passes/runtime/olla_ort_memory.h"
#include "passes/runtime/ort_memory_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx.pb-c.h"
#include "passes/runtime/olla_graph_shares.h"
#include "passes/runtime/ort_scratch.h"
#include "util/olla_strmap.h"

/* The vectors one Run call keeps per feed and per fetch: names (twice),
 * OrtValues, and a 40-byte record. */
static const int64_t RUN_LIST_ENTRY_BYTES[] = {32, 32, 24, 40};

/* ---- helpers ---- */

static int64_t counted(const olla_ort_memory *m, int64_t bytes)
{
    return bytes > 0 && bytes >= m->opt.min_block_bytes ? bytes : 0;
}

/* Bytes of an absl flat hash table reserved for n entries of slot bytes
 * (its capacity 2^k - 1 grows as absl's does: a model, not an array). */
int64_t olla_ort_flat_hash_bytes(int64_t n, int64_t slot)
{
    if (n <= 0)
        return 0;
    int64_t want = n + (n - 1) / 7, cap = 1;
    while (cap < want)
        cap = 2 * cap + 1;
    return (cap + 24 + 7) / 8 * 8 + cap * slot;
}

static int graph_tensor_out(const olla_graph *g, int op, int k)
{
    return g->output_list[g->ops[op].first_output + k];
}

static int graph_tensor_in(const olla_graph *g, int op, int k)
{
    return g->input_list[g->ops[op].first_input + k];
}

olla_ort_memory_options olla_ort_memory_measured(void)
{
    return (olla_ort_memory_options){4096, 1, 1, NULL, NULL};
}

olla_ort_memory_options olla_ort_memory_tensors_only(void)
{
    return (olla_ort_memory_options){0, 0, 0, NULL, NULL};
}

/* ---- context ---- */

/* The class key of a declared type: element size, rank, each dim as a value
 * or a name; NULL (matches nothing) for non-tensors, strings, unknown ranks
 * or dims. Writes into buf. */
static const char *class_key(const olla_value_type *t, char *buf, size_t len)
{
    int bits = olla_elem_type_bits(t->elem_type);
    if (t->kind != OLLA_VALUE_TENSOR || t->rank < 0 || bits <= 0)
        return NULL;
    size_t n = (size_t)snprintf(buf, len, "%d:%d", (bits + 7) / 8, t->rank);
    for (int i = 0; i < t->rank && n < len; i++) {
        const olla_dim *d = &t->dims[i];
        if (d->value >= 0)
            n += (size_t)snprintf(buf + n, len - n, "\x1fv%lld", (long long)d->value);
        else if (d->param && d->param[0])
            n += (size_t)snprintf(buf + n, len - n, "\x1fp%s", d->param);
        else
            return NULL;
    }
    return n < len ? buf : NULL;
}

/* Numbers the classes of the declared shapes. Keys live in one list freed here. */
static olla_status number_classes(olla_ort_memory *m, const olla_graph *declared, olla_error *err)
{
    olla_strmap map;
    char **keys = calloc((size_t)declared->n_tensors + 1, sizeof *keys);
    if (!keys || !olla_strmap_init(&map, (size_t)declared->n_tensors + 1)) {
        free(keys);
        return olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory numbering tensor shapes for the ORT model");
    }
    olla_status st = OLLA_OK;
    char buf[2048];
    for (int t = 0; t < declared->n_tensors && st == OLLA_OK; t++) {
        const olla_value_type *ty = &declared->tensors[t].type;
        m->is_tensor[t] = ty->kind == OLLA_VALUE_TENSOR;
        const char *key = class_key(ty, buf, sizeof buf);
        m->shape_class[t] = key ? olla_strmap_get(&map, key) : -1;
        if (key && m->shape_class[t] < 0) {
            keys[m->n_classes] = strdup(key);
            if (!keys[m->n_classes] || !olla_strmap_put(&map, keys[m->n_classes], m->n_classes))
                st = olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory numbering tensor shapes for the ORT model");
            else
                m->shape_class[t] = m->n_classes++;
        }
        m->freelist_ok[t] = m->shape_class[t] >= 0 && ty->rank > 0;
    }
    olla_strmap_free(&map);
    for (int i = 0; i < m->n_classes; i++)
        free(keys[i]);
    free(keys);
    return st;
}

static int has_subgraph(const olla_graph *g, int op)
{
    const Onnx__NodeProto *n = olla_graph_node_proto(g, op);
    for (size_t i = 0; i < n->n_attribute; i++)
        if (n->attribute[i]->n_graphs > 0 || n->attribute[i]->g)
            return 1;
    return 0;
}

static int is_default_domain(const char *d)
{
    return !d || !d[0] || strcmp(d, "ai.onnx") == 0;
}

/* Per op: its kind and scratch; per output slot: the shares its kernel declares. */
static olla_status describe_ops(olla_ort_memory *m, olla_error *err)
{
    const olla_graph *g = m->g;
    for (int op = 0; op < g->n_ops; op++) {
        const olla_op *o = &g->ops[op];
        int dflt = is_default_domain(o->domain);
        m->op_kind[op] = has_subgraph(g, op)                           ? OP_SUBGRAPH
                         : dflt && strcmp(o->op_type, "Constant") == 0 ? OP_CONSTANT
                         : dflt && strcmp(o->op_type, "Cast") == 0     ? OP_CAST
                                                                       : OP_PLAIN;
        m->scratch[op] = olla_ort_kernel_scratch(g, op, m->opt.min_block_bytes);
        m->scratch_all[op] = olla_ort_kernel_scratch(g, op, 0);
    }
    int n_slots = 0;
    for (int op = 0; op < g->n_ops; op++)
        n_slots = g->ops[op].first_output + g->ops[op].n_outputs > n_slots ? g->ops[op].first_output + g->ops[op].n_outputs
                                                                           : n_slots;
    for (int i = 0; i < n_slots; i++)
        m->alias_in[i] = m->inplace_in[i] = -1;
    olla_op_share *shares;
    int n_shares;
    olla_status st = olla_graph_shares(g, &shares, &n_shares, err);
    if (st != OLLA_OK)
        return st;
    for (int i = 0; i < n_shares; i++) {
        int slot = g->ops[shares[i].op].first_output + shares[i].output;
        int *to = shares[i].inplace ? &m->inplace_in[slot] : &m->alias_in[slot];
        if (*to < 0 && shares[i].input < g->ops[shares[i].op].n_explicit_inputs)
            *to = shares[i].input;
    }
    free(shares);
    return OLLA_OK;
}

int64_t olla_ort_run_lists_bytes(const olla_ort_memory *m, int64_t entries)
{
    int64_t b = 0;
    for (size_t i = 0; i < sizeof RUN_LIST_ENTRY_BYTES / sizeof RUN_LIST_ENTRY_BYTES[0]; i++)
        b += counted(m, entries * RUN_LIST_ENTRY_BYTES[i]);
    return b;
}

/* Whether ORT traces the first run (every graph input has a declared shape)
 * and the bytes of the feed and fetch lists. */
static void describe_run(olla_ort_memory *m, const olla_graph *declared)
{
    int feeds = 0;
    m->pattern_on = 1;
    for (int i = 0; i < declared->n_graph_inputs; i++) {
        const olla_tensor *t = &declared->tensors[declared->graph_inputs[i]];
        if (t->is_initializer)
            continue;
        feeds++;
        if (t->type.rank < 0)
            m->pattern_on = 0;
    }
    m->start_book = m->opt.count_bookkeeping && !m->is_subgraph
                        ? olla_ort_run_lists_bytes(m, feeds) + olla_ort_run_lists_bytes(m, declared->n_graph_outputs)
                        : 0;
}

static olla_status check_same_graph(const olla_graph *a, const olla_graph *b, olla_error *err)
{
    int same = a->n_ops == b->n_ops && a->n_tensors == b->n_tensors;
    for (int t = 0; same && t < a->n_tensors; t++)
        same = strcmp(a->tensors[t].name, b->tensors[t].name) == 0;
    if (!same)
        return olla_error_set(err, OLLA_ERR_INPUT,
                              "ORT memory model: the sized and the declared graph differ (%d/%d ops, %d/%d tensors); "
                              "build both from the same model",
                              a->n_ops, b->n_ops, a->n_tensors, b->n_tensors);
    return OLLA_OK;
}

void olla_ort_memory_free(olla_ort_memory *m)
{
    if (!m)
        return;
    olla_ort__control_free(m);
    olla_graph_free(m->own_sized);
    free(m->out_index);
    free(m->shape_class);
    free(m->freelist_ok);
    free(m->is_tensor);
    free(m->op_kind);
    free(m->alias_in);
    free(m->inplace_in);
    free(m->scratch);
    free(m->scratch_all);
    free(m->pos);
    free(m->value);
    free(m->use);
    free(m->readers);
    free(m->buffer);
    free(m->last_read);
    free(m->free_next);
    free(m->kind);
    free(m->free_top);
    free(m->release_at);
    free(m);
}

static int allocate_arrays(olla_ort_memory *m)
{
    size_t nt = (size_t)m->g->n_tensors + 1, no = (size_t)m->g->n_ops + 1, ns = 1;
    for (int op = 0; op < m->g->n_ops; op++)
        if ((size_t)(m->g->ops[op].first_output + m->g->ops[op].n_outputs) >= ns)
            ns = (size_t)(m->g->ops[op].first_output + m->g->ops[op].n_outputs) + 1;
    m->shape_class = malloc(nt * sizeof(int));
    m->freelist_ok = malloc(nt);
    m->is_tensor = malloc(nt);
    m->op_kind = malloc(no);
    m->alias_in = malloc(ns * sizeof(int));
    m->inplace_in = malloc(ns * sizeof(int));
    m->scratch = malloc(no * sizeof(int64_t));
    m->scratch_all = malloc(no * sizeof(int64_t));
    m->pos = malloc(no * sizeof(int));
    m->value = malloc(nt * sizeof(int));
    m->use = malloc(nt * sizeof(int));
    m->readers = malloc(nt * sizeof(int));
    m->buffer = malloc(nt * sizeof(int));
    m->last_read = malloc(nt * sizeof(int));
    m->free_next = malloc(nt * sizeof(int));
    m->kind = malloc(nt);
    m->release_at = malloc((no + 1) * sizeof(int64_t));
    return m->shape_class && m->freelist_ok && m->is_tensor && m->op_kind && m->alias_in && m->inplace_in &&
           m->scratch && m->scratch_all && m->pos && m->value && m->use && m->readers && m->buffer && m->last_read && m->free_next &&
           m->kind && m->release_at;
}

/* Per tensor: its index among the graph outputs (the first), -1. */
static int number_outputs(olla_ort_memory *m)
{
    const olla_graph *g = m->g;
    m->out_index = malloc(((size_t)g->n_tensors + 1) * sizeof(int));
    if (!m->out_index)
        return 0;
    for (int t = 0; t < g->n_tensors; t++)
        m->out_index[t] = -1;
    for (int i = g->n_graph_outputs - 1; i >= 0; i--)
        m->out_index[g->graph_outputs[i]] = i;
    return 1;
}

/* The subgraphs: modelled when the types of their values are given. */
static olla_status describe_control_flow(olla_ort_memory *m, const olla_graph *declared, olla_error *err)
{
    int any = 0;
    for (int op = 0; op < m->g->n_ops && !any; op++)
        any = m->op_kind[op] == OP_SUBGRAPH;
    if (!any)
        return OLLA_OK;
    if (!m->opt.sized_types || !m->opt.declared_types) {
        snprintf(m->cf_note, sizeof m->cf_note,
                 "If/Loop/Scan nodes run subgraphs with memory of their own, and the types of the subgraphs' "
                 "values were not given to the model of ONNX Runtime's planner");
        return OLLA_OK;
    }
    return olla_ort__control_new(m, declared, err);
}

const char *olla_ort_memory_note(const olla_ort_memory *m)
{
    return m ? m->cf_note : "";
}

olla_status olla_ort_memory_new(const olla_graph *sized, const olla_graph *declared,
                                const olla_ort_memory_options *opt, olla_ort_memory **out, olla_error *err)
{
    return olla_ort__memory_new(sized, declared, opt, 0, out, err);
}

olla_status olla_ort__memory_new(const olla_graph *sized, const olla_graph *declared, const olla_ort_memory_options *opt,
                                 int is_subgraph, olla_ort_memory **out, olla_error *err)
{
    *out = NULL;
    olla_status st = check_same_graph(sized, declared, err);
    if (st != OLLA_OK)
        return st;
    olla_ort_memory *m = calloc(1, sizeof *m);
    if (!m)
        return olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory preparing the ORT memory model");
    m->g = sized;
    m->opt = opt ? *opt : olla_ort_memory_measured();
    m->is_subgraph = is_subgraph;
    if (!allocate_arrays(m) || !number_outputs(m)) {
        olla_ort_memory_free(m);
        return olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory preparing the ORT memory model");
    }
    if ((st = number_classes(m, declared, err)) == OLLA_OK && (st = describe_ops(m, err)) == OLLA_OK) {
        m->free_top = malloc(((size_t)m->n_classes + 1) * sizeof(int));
        if (!m->free_top)
            st = olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory preparing the ORT memory model");
    }
    if (st == OLLA_OK) {
        describe_run(m, declared);
        st = describe_control_flow(m, declared, err);
    }
    if (st != OLLA_OK) {
        olla_ort_memory_free(m);
        return st;
    }
    *out = m;
    return OLLA_OK;
}

/* ---- evaluation: setup ---- */

static olla_status order_error(const olla_ort_memory *m, olla_error *err, int op, const char *what)
{
    char label[256];
    return olla_error_set(err, OLLA_ERR_INPUT, "ORT memory model: %s %s in the executed order",
                          op >= 0 && op < m->g->n_ops ? olla_op_label(m->g, op, label, sizeof label) : "an op", what);
}

/* Positions in the order; every op left out must be one ORT does not run. */
static olla_status mark_positions(olla_ort_memory *m, const int *executed, int n, olla_error *err)
{
    const olla_graph *g = m->g;
    for (int op = 0; op < g->n_ops; op++)
        m->pos[op] = -1;
    for (int i = 0; i < n; i++) {
        int op = executed[i];
        if (op < 0 || op >= g->n_ops) {
            return olla_error_set(err, OLLA_ERR_INPUT, "ORT memory model: op index %d at position %d is out of range "
                                                       "(the graph has %d ops)", op, i, g->n_ops);
        }
        if (m->pos[op] >= 0)
            return order_error(m, err, op, "appears twice");
        m->pos[op] = i;
    }
    for (int op = 0; op < g->n_ops; op++)
        if (m->pos[op] < 0 && m->op_kind[op] != OP_CONSTANT && m->op_kind[op] != OP_CAST)
            return order_error(m, err, op, "is missing (only Constants and dropped Casts are left out)");
    return OLLA_OK;
}

/* The value ORT sees for tensor t: itself, or for the output of a dropped
 * Cast the value of the Cast's input. -1 with an error when t's producer is
 * left out of the order and ORT would run it. */
static int resolve(olla_ort_memory *m, int t, olla_error *err)
{
    const olla_graph *g = m->g;
    for (int depth = 0; depth <= g->n_ops; depth++) {
        int p = g->tensors[t].producer;
        if (p < 0 || m->pos[p] >= 0 || m->op_kind[p] == OP_CONSTANT)
            return t;
        if (m->op_kind[p] != OP_CAST || g->ops[p].n_inputs < 1 || graph_tensor_in(g, p, 0) < 0) {
            order_error(m, err, p, "is missing (only Constants and dropped Casts are left out)");
            return -1;
        }
        t = graph_tensor_in(g, p, 0);
    }
    return -1;
}

int olla_ort_is_preexisting(const olla_ort_memory *m, int v)
{
    int p = m->g->tensors[v].producer;
    return p < 0 || m->pos[p] < 0 || m->op_kind[p] == OP_CONSTANT;
}

static void reset_tensors(olla_ort_memory *m)
{
    const olla_graph *g = m->g;
    for (int t = 0; t < g->n_tensors; t++) {
        m->value[t] = -1;
        m->use[t] = m->readers[t] = 0;
        m->buffer[t] = m->last_read[t] = m->free_next[t] = -1;
        m->kind[t] = OLLA_ORT_NOT_PLANNED;
    }
    for (int c = 0; c < m->n_classes; c++)
        m->free_top[c] = -1;
}

/* Resolves every input an executed op reads and counts uses as ORT's
 * ComputeReuseCount does; checks producers come first. */
static olla_status count_uses(olla_ort_memory *m, const int *executed, int n, olla_error *err)
{
    const olla_graph *g = m->g;
    for (int t = 0; t < g->n_tensors; t++)
        if (g->tensors[t].producer < 0 || m->op_kind[g->tensors[t].producer] == OP_CONSTANT) {
            m->value[t] = t;
            m->use[t] = 1; /* graph inputs, initializers, Constants: never freed */
            m->buffer[t] = t;
        }
    for (int i = 0; i < n; i++) {
        int op = executed[i];
        if (m->op_kind[op] == OP_CONSTANT)
            continue;
        for (int k = 0; k < g->ops[op].n_inputs; k++) {
            int t = graph_tensor_in(g, op, k);
            if (t < 0)
                continue;
            int v = m->value[t] >= 0 ? m->value[t] : resolve(m, t, err);
            if (v < 0)
                return err->code;
            m->value[t] = v;
            int p = g->tensors[v].producer;
            if (p >= 0 && m->op_kind[p] != OP_CONSTANT && m->pos[p] >= i)
                return order_error(m, err, op, "runs before the producer of one of its inputs");
            m->use[v]++;
            m->readers[v]++;
        }
        for (int k = 0; k < g->ops[op].n_outputs; k++) {
            int t = graph_tensor_out(g, op, k);
            if (t >= 0) {
                m->value[t] = t;
                m->use[t]++;
            }
        }
    }
    for (int i = 0; i < g->n_graph_outputs; i++) {
        int v = m->value[g->graph_outputs[i]];
        if (v >= 0)
            m->use[v]++;
    }
    return OLLA_OK;
}

/* ---- evaluation: planning ---- */

/* ORT's Reuse(): t takes the buffer of value src. */
static void share(olla_ort_memory *m, int src, int t, olla_ort_buffer_kind kind)
{
    int root = m->buffer[src];
    m->buffer[t] = root;
    m->use[root] += m->use[t];
    m->kind[t] = (unsigned char)kind;
}

static void push_free(olla_ort_memory *m, int root)
{
    int c = m->shape_class[root];
    if (c < 0 || m->kind[root] == OLLA_ORT_NOT_PLANNED)
        return;
    m->free_next[root] = m->free_top[c];
    m->free_top[c] = root;
}

/* FindReusableInput's MayInplace branch: the input's buffer has this one use
 * left and the declared shapes match. */
static int can_write_in_place(const olla_ort_memory *m, int in, int t)
{
    int root = m->buffer[in];
    return m->use[root] == 1 && m->shape_class[in] >= 0 && m->shape_class[in] == m->shape_class[t] &&
           m->kind[root] != OLLA_ORT_NOT_PLANNED;
}

/* The value read at explicit input slot k of op, or -1 when omitted. */
static int input_value(const olla_ort_memory *m, int op, int k)
{
    if (k < 0 || k >= m->g->ops[op].n_explicit_inputs)
        return -1;
    int t = graph_tensor_in(m->g, op, k);
    return t >= 0 ? m->value[t] : -1;
}

/* ORT's planner gives a Loop body's output made by an Identity of a value
 * that exists before the body runs (a body input other than the iteration
 * number, a value of the graphs around it, a constant) the input's buffer
 * instead of a copy. */
static int passes_value_out(const olla_ort_memory *m, int op)
{
    const olla_graph *g = m->g;
    if (!m->loop_body || strcmp(g->ops[op].op_type, "Identity") != 0 || !is_default_domain(g->ops[op].domain))
        return 0;
    int v = input_value(m, op, 0);
    return v >= 0 && olla_ort_is_preexisting(m, v) && !(g->n_graph_inputs > 0 && v == g->graph_inputs[0]);
}

static void plan_output(olla_ort_memory *m, int op, int k)
{
    const olla_graph *g = m->g;
    int t = graph_tensor_out(g, op, k), slot = g->ops[op].first_output + k;
    int alias = input_value(m, op, m->alias_in[slot]), inplace = input_value(m, op, m->inplace_in[slot]);
    m->buffer[t] = t;
    if (g->tensors[t].is_output && passes_value_out(m, op)) {
        share(m, input_value(m, op, 0), t, OLLA_ORT_ALIAS);
    } else if (g->tensors[t].is_output) {
        m->kind[t] = OLLA_ORT_OUTPUT;
    } else if (alias >= 0) {
        share(m, alias, t, OLLA_ORT_ALIAS);
    } else if (inplace >= 0 && can_write_in_place(m, inplace, t)) {
        share(m, inplace, t, OLLA_ORT_INPLACE);
    } else if (m->is_tensor[t] && m->readers[t] > 0 && m->freelist_ok[t] &&
               m->free_top[m->shape_class[t]] >= 0) {
        int c = m->shape_class[t], root = m->free_top[c];
        m->free_top[c] = m->free_next[root];
        share(m, root, t, OLLA_ORT_REUSED);
    } else {
        m->kind[t] = OLLA_ORT_OWN;
    }
}

/* One node of ORT's ComputeSingleStreamReusePlan: plan the outputs, then
 * release the inputs and the outputs nobody reads. */
static void plan_node(olla_ort_memory *m, int op, int pc)
{
    const olla_graph *g = m->g;
    for (int k = 0; k < g->ops[op].n_outputs; k++)
        if (graph_tensor_out(g, op, k) >= 0)
            plan_output(m, op, k);
    for (int k = 0; k < g->ops[op].n_inputs; k++) {
        int t = graph_tensor_in(g, op, k);
        if (t < 0)
            continue;
        int root = m->buffer[m->value[t]];
        m->last_read[root] = pc;
        if (--m->use[root] == 0)
            push_free(m, root);
    }
    for (int k = 0; k < g->ops[op].n_outputs; k++) {
        int t = graph_tensor_out(g, op, k);
        if (t >= 0 && --m->use[m->buffer[t]] == 0)
            push_free(m, m->buffer[t]);
    }
}

/* ---- evaluation: the run ---- */

typedef struct run_state {
    int64_t tensors, book;     /* live counted bytes */
    int64_t traced, trace_cap; /* memory-pattern records and the vector's capacity */
    olla_ort_memory_result *r;
} run_state;

static void candidate(run_state *s, int step, int64_t tensors, int64_t scratch, int64_t book)
{
    if (tensors + scratch + book > s->r->peak_bytes) {
        s->r->peak_bytes = tensors + scratch + book;
        s->r->peak_step = step;
        s->r->tensor_bytes = tensors;
        s->r->scratch_bytes = scratch;
        s->r->bookkeeping_bytes = book;
    }
}

/* One traced allocation: ORT's trace vector doubles when full (old and new
 * live at once while it grows); a model of ORT's allocations, not an array
 * of ours (so not olla_grow). */
static void trace_allocation(const olla_ort_memory *m, run_state *s, int step)
{
    if (!m->pattern_on || !m->opt.count_bookkeeping)
        return;
    if (s->traced == s->trace_cap) {
        int64_t old = counted(m, TRACE_BYTES_PER_ALLOC * s->trace_cap);
        int64_t cap = s->trace_cap ? 2 * s->trace_cap : 1;
        int64_t grown = counted(m, TRACE_BYTES_PER_ALLOC * cap);
        candidate(s, step, s->tensors, 0, s->book + grown);
        s->book += grown - old;
        s->trace_cap = cap;
    }
    s->traced++;
}

static olla_status run_node(const olla_ort_memory *m, run_state *s, int op, int pc, olla_error *err)
{
    const olla_graph *g = m->g;
    for (int k = 0; k < g->ops[op].n_outputs; k++) {
        int t = graph_tensor_out(g, op, k);
        if (t < 0 || (m->kind[t] != OLLA_ORT_OWN && m->kind[t] != OLLA_ORT_OUTPUT))
            continue;
        if (g->tensors[t].bytes < 0) {
            char label[256];
            return olla_error_set(err, OLLA_ERR_INPUT,
                                  "ORT memory model: the size of '%s' (output of %s) is unknown; bind every symbolic "
                                  "dim, and note that data-dependent sizes cannot be predicted",
                                  g->tensors[t].name, olla_op_label(g, op, label, sizeof label));
        }
        s->tensors += counted(m, g->tensors[t].bytes);
        s->r->n_buffers++;
        if (m->kind[t] == OLLA_ORT_OWN && m->is_tensor[t])
            trace_allocation(m, s, pc);
    }
    candidate(s, pc, s->tensors, m->scratch[op], s->book);
    s->tensors -= m->release_at[pc];
    return OLLA_OK;
}

/* Values in ORT's frame: graph inputs, the initializers and Constants some
 * executed node reads or the graph outputs, and the outputs of executed ops. */
int64_t olla_ort_frame_values(const olla_ort_memory *m)
{
    const olla_graph *g = m->g;
    int64_t n = 0;
    for (int t = 0; t < g->n_tensors; t++) {
        const olla_tensor *x = &g->tensors[t];
        if (x->is_input && !x->is_initializer)
            n++;
        else if (m->value[t] == t && (x->is_output || m->readers[t] > 0 || (x->producer >= 0 && m->pos[x->producer] >= 0)))
            n++;
    }
    return n;
}

/* Counted bytes of the graph outputs: ORT's buffers that come from no node
 * (initializer or Constant outputs, copied when the run starts) in *copied,
 * and all outputs (what the caller copies at the end) in *all. */
static void output_bytes(const olla_ort_memory *m, int64_t *copied, int64_t *all)
{
    const olla_graph *g = m->g;
    *copied = *all = 0;
    for (int i = 0; i < g->n_graph_outputs; i++) {
        int t = g->graph_outputs[i];
        int64_t b = counted(m, g->tensors[t].bytes);
        *all += b;
        if (!g->tensors[t].is_input && olla_ort_is_preexisting(m, t))
            *copied += b;
    }
}

/* The run from its start: the feed and fetch lists, the frame and its
 * start-up hash, the copied initializer outputs. */
static void run_start(const olla_ort_memory *m, run_state *s, int64_t copied_outputs)
{
    int64_t values = olla_ort_frame_values(m);
    s->tensors = copied_outputs;
    s->book = 0;
    if (m->opt.count_bookkeeping) {
        s->book = m->start_book + counted(m, FRAME_BYTES_PER_VALUE * values);
        if (m->pattern_on) /* the first run traces: the pattern planner's hash over the values */
            candidate(s, -1, s->tensors, 0, s->book + counted(m, olla_ort_flat_hash_bytes(values, VALUE_SET_SLOT_BYTES)));
    }
    candidate(s, -1, s->tensors, 0, s->book);
}

/* The run's end: the memory pattern is kept while the frame still lives;
 * then only ORT's outputs and the pattern remain while the caller copies
 * the outputs. */
static void run_end(const olla_ort_memory *m, run_state *s, int n, int64_t all_outputs)
{
    int64_t pattern = m->pattern_on && m->opt.count_bookkeeping
                          ? counted(m, olla_ort_flat_hash_bytes(s->traced, PATTERN_SLOT_BYTES))
                          : 0;
    candidate(s, n, s->tensors, 0, s->book + pattern);
    int64_t outputs = 0;
    const olla_graph *g = m->g;
    for (int i = 0; i < g->n_graph_outputs; i++) {
        int t = g->graph_outputs[i];
        if (!g->tensors[t].is_input)
            outputs += counted(m, g->tensors[t].bytes);
    }
    candidate(s, n, outputs, 0, pattern + (m->opt.copy_outputs ? all_outputs : 0));
}

/* Where each buffer is freed: after the last node reading a tensor that
 * shares it; never when nobody reads it. */
static void schedule_releases(olla_ort_memory *m, int n)
{
    const olla_graph *g = m->g;
    for (int i = 0; i <= n; i++)
        m->release_at[i] = 0;
    for (int t = 0; t < g->n_tensors; t++)
        if (m->kind[t] == OLLA_ORT_OWN && m->last_read[t] >= 0)
            m->release_at[m->last_read[t]] += counted(m, g->tensors[t].bytes);
}

olla_status olla_ort__plan(olla_ort_memory *m, const int *executed, int n_executed, olla_ort_memory_result *result,
                           olla_error *err)
{
    memset(result, 0, sizeof *result);
    result->peak_step = -1;
    olla_status st = mark_positions(m, executed, n_executed, err);
    if (st != OLLA_OK)
        return st;
    reset_tensors(m);
    if ((st = count_uses(m, executed, n_executed, err)) != OLLA_OK)
        return st;
    for (int i = 0; i < n_executed; i++) {
        if (m->op_kind[executed[i]] == OP_CONSTANT)
            continue;
        plan_node(m, executed[i], i);
        result->n_subgraph_ops += m->op_kind[executed[i]] == OP_SUBGRAPH;
    }
    schedule_releases(m, n_executed);
    result->subgraphs_counted = result->n_subgraph_ops > 0 && !m->cf_note[0];
    return OLLA_OK;
}

/* The first run with counted subgraphs: the replay of a session of one run
 * with the arena off (what the sweep counts for a graph without them). */
static olla_status eval_replay(olla_ort_memory *m, const int *executed, int n_executed, olla_ort_memory_result *result,
                               olla_error *err)
{
    olla_ort_settings s = {0, 0, 1, 1};
    olla_ort_session_result sr;
    olla_status st = olla_ort__replay(m, executed, n_executed, &s, &sr, err);
    if (st == OLLA_OK) {
        result->peak_bytes = sr.first_run_bytes;
        result->peak_step = sr.first_run_step;
    }
    return st;
}

olla_status olla_ort_memory_eval(olla_ort_memory *m, const int *executed, int n_executed,
                                 olla_ort_memory_result *result, olla_error *err)
{
    olla_status st = olla_ort__plan(m, executed, n_executed, result, err);
    if (st != OLLA_OK)
        return st;
    if (result->subgraphs_counted)
        return eval_replay(m, executed, n_executed, result, err);
    int64_t copied, all;
    output_bytes(m, &copied, &all);
    run_state s = {0, 0, 0, 0, result};
    run_start(m, &s, copied);
    for (int i = 0; i < n_executed; i++)
        if (m->op_kind[executed[i]] != OP_CONSTANT && (st = run_node(m, &s, executed[i], i, err)) != OLLA_OK)
            return st;
    run_end(m, &s, n_executed, all);
    return OLLA_OK;
}

olla_ort_buffer_kind olla_ort_memory_buffer_kind(const olla_ort_memory *m, int t)
{
    return t >= 0 && t < m->g->n_tensors ? (olla_ort_buffer_kind)m->kind[t] : OLLA_ORT_NOT_PLANNED;
}

int olla_ort_memory_buffer_of(const olla_ort_memory *m, int t)
{
    if (t < 0 || t >= m->g->n_tensors || m->kind[t] == OLLA_ORT_NOT_PLANNED)
        return -1;
    return m->buffer[t];
}

int olla_ort_memory_release_step(const olla_ort_memory *m, int t)
{
    if (t < 0 || t >= m->g->n_tensors || m->kind[t] != OLLA_ORT_OWN)
        return -1;
    return m->last_read[t];
}

olla_status olla_ort_allocated_bytes(const olla_graph *sized, const olla_graph *declared, const int *executed,
                                     int n_executed, int64_t *peak, olla_error *err)
{
    olla_ort_memory *m;
    olla_ort_memory_options opt = olla_ort_memory_measured();
    olla_status st = olla_ort_memory_new(sized, declared, &opt, &m, err);
    if (st != OLLA_OK)
        return st;
    olla_ort_memory_result r;
    st = olla_ort_memory_eval(m, executed, n_executed, &r, err);
    olla_ort_memory_free(m);
    *peak = st == OLLA_OK ? r.peak_bytes : 0;
    return st;
}
