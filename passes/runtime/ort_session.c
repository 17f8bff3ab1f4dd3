/* olla-onnx: what an ONNX Runtime session holds over several runs under its
 * memory settings (olla_ort_memory.h, "sessions", states the rules).
 *
 * The planning pass of olla_ort_memory_eval decides which tensors get a
 * buffer of their own and after which node each is freed; this file replays
 * the runs against a heap: malloc (arena off) or the BFC arena (ort_bfc.h),
 * with ORT's memory-pattern planner tracing the first run and serving the
 * later ones from one block. The counted bytes are those the process holds:
 * with the arena, its regions (held from the moment they are taken), not
 * the chunks in use.
 *
 * A graph runs in a frame: the main graph once per run, a subgraph each
 * time its If, Loop or Scan runs it (ort_control.c builds their models).
 * Every frame has its own buffers, release lists and memory pattern, which
 * stays with the session. A subgraph's output gets its buffer where its
 * node says (out_target): in the subgraph's frame, handed over to the node
 * afterwards (Loop); from the node, which provides it (If's static outputs,
 * Scan's state buffers and output slices); or, when the subgraph's node
 * produces it, as the node's own output in the graph around it (If's other
 * outputs, Scan's outputs on the first iteration). */
#include <stdlib.h>
#include <string.h>

#include "passes/runtime/ort_bfc.h"
#include "passes/runtime/ort_memory_internal.h"

#define ALLOC_ALIGNMENT 64 /* kAllocAlignment: the memory pattern's sizes */
#define NO_BLOCK INT64_MIN

typedef struct heap_ref {
    int handle;      /* the arena's chunk, -1 none */
    int64_t counted; /* malloc'd counted bytes, NO_BLOCK none */
} heap_ref;

static const heap_ref NO_REF = {-1, NO_BLOCK};

/* ORT's MemPatternPlanner: blocks live at the moment, in offset order. */
typedef struct pattern_planner {
    int64_t *offset, *size; /* per tensor */
    int *live;              /* tensors, in list order */
    int n_live;
    int64_t buffer;         /* the pattern's size so far */
} pattern_planner;

typedef struct frame frame;

/* Where a subgraph's output gets its buffer in one execution. */
enum { OUT_OWN = 0, OUT_GIVEN, OUT_PARENT, OUT_TEMP };

typedef struct out_target {
    int mode;
    frame *pf;        /* OUT_PARENT: the node's output pt in the frame pf around it */
    int pt;
    heap_ref *tmp;    /* OUT_TEMP: a buffer of the node's own, of tmp_bytes */
    int64_t tmp_bytes;
} out_target;

/* A Loop's values between iterations. */
typedef struct loop_state {
    heap_ref *feed;   /* per carried value: the buffer fed to the running iteration */
    heap_ref *fetch;  /* per body output: the last iteration's */
    heap_ref *scans;  /* per scan output and iteration */
    heap_ref scalars[2]; /* the iteration number and the condition it feeds the body */
} loop_state;

struct frame {
    const olla_ort_memory *m;
    const int *order;
    int n;
    int is_main;
    heap_ref *ref;            /* per tensor: its buffer in this execution */
    int *rel_head, *rel_next; /* per position: the buffers freed after it (linked by tensor) */
    pattern_planner pp;
    int executed;             /* executions so far in the session */
    /* one execution */
    int tracing, use_pattern;
    int64_t book;             /* counted bookkeeping live during it */
    int64_t traced, trace_cap;
    out_target *target;       /* per graph output (a subgraph's frame) */
    /* the frames of the subgraphs, per op (2 per op: If's then and else) */
    frame **sub;
    loop_state *loops;        /* per op: a Loop's values */
    heap_ref *temps;          /* per op: Scan's temporaries (n_scan_in + 2 * n_state + scan outputs) */
};

typedef struct session {
    const olla_ort_settings *s;
    olla_bfc *arena;        /* NULL: arena off */
    int64_t live;           /* counted bytes held */
    int64_t peak, run_peak;
    int step, run_peak_step; /* the main graph's position, and where the run's peak was */
    int64_t kept;           /* the memory patterns' tables, held from the end of their first execution on */
    frame main;
    olla_error *err;
    int failed;
} session;

static int64_t counted(const olla_ort_memory *m, int64_t bytes)
{
    return bytes > 0 && bytes >= m->opt.min_block_bytes ? bytes : 0;
}

static void seen(session *x, int64_t bytes)
{
    if (bytes > x->run_peak) {
        x->run_peak = bytes;
        x->run_peak_step = x->step;
    }
}

static int fail_oom(session *x)
{
    if (!x->failed)
        olla_error_set(x->err, OLLA_ERR_INTERNAL, "out of memory replaying an ONNX Runtime session");
    x->failed = 1;
    return 0;
}

/* ---- the heap ---- */

static int heap_alloc(session *x, int64_t bytes, int64_t malloc_counted, heap_ref *r)
{
    *r = NO_REF;
    if (!x->arena) {
        r->counted = malloc_counted;
        x->live += malloc_counted;
        seen(x, x->live);
        return 1;
    }
    if (bytes <= 0) {
        r->counted = 0;
        return 1;
    }
    int64_t grown, transient;
    r->handle = olla_bfc_alloc(x->arena, bytes, &grown, &transient);
    seen(x, x->live + grown + transient);
    x->live += grown;
    seen(x, x->live);
    return r->handle >= 0 ? 1 : fail_oom(x);
}

static void heap_release(session *x, heap_ref *r)
{
    if (r->handle >= 0)
        olla_bfc_release(x->arena, r->handle);
    else if (r->counted != NO_BLOCK)
        x->live -= r->counted;
    *r = NO_REF;
}

/* A buffer of bytes a node allocates for itself (not a planned tensor). */
static int temp_alloc(session *x, const olla_ort_memory *m, int64_t bytes, heap_ref *r)
{
    return heap_alloc(x, bytes, counted(m, bytes), r);
}

/* ---- the memory pattern ---- */

static void pattern_trace(pattern_planner *p, int t, int64_t size)
{
    p->offset[t] = 0;
    p->size[t] = size;
    if (size == 0)
        return;
    int64_t current = 0, waste = INT64_MAX, best = 0;
    int found = 0;
    for (int i = 0; i < p->n_live; i++) {
        int b = p->live[i];
        if (p->offset[b] >= current) {
            int64_t gap = p->offset[b] - current;
            if (gap >= size && gap - size < waste) {
                waste = gap - size;
                best = current;
                found = 1;
            }
        }
        if (p->offset[b] + p->size[b] > current)
            current = p->offset[b] + p->size[b];
    }
    if (current < p->buffer && p->buffer - current >= size && p->buffer - current - size < waste) {
        best = current;
        found = 1;
    }
    if (!found)
        best = current;
    if (best + size > p->buffer)
        p->buffer = best + size;
    p->offset[t] = best;
    int at = p->n_live;
    for (int i = 0; i < p->n_live; i++) {
        int b = p->live[i];
        if (p->offset[b] > best || (p->offset[b] == best && p->size[b] >= size)) {
            at = i;
            break;
        }
    }
    memmove(p->live + at + 1, p->live + at, (size_t)(p->n_live - at) * sizeof(int));
    p->live[at] = t;
    p->n_live++;
}

static void pattern_free(pattern_planner *p, int t)
{
    for (int i = 0; i < p->n_live; i++)
        if (p->live[i] == t) {
            memmove(p->live + i, p->live + i + 1, (size_t)(p->n_live - i - 1) * sizeof(int));
            p->n_live--;
            return;
        }
}

/* ---- tensors ---- */

/* A tensor the memory pattern covers: its own buffer, a tensor, not a string. */
static int traced(const olla_ort_memory *m, int t)
{
    return m->kind[t] == OLLA_ORT_OWN && m->is_tensor[t] &&
           m->g->tensors[t].type.elem_type != 8 /* TensorProto.STRING */;
}

/* One more allocation in the memory-pattern trace, whose vector doubles in
 * ORT when full (old and new live at once while it moves): a model of what
 * ORT allocates, not an array of ours (so not olla_grow). */
static void trace_grow(session *x, frame *f)
{
    const olla_ort_memory *m = f->m;
    if (!m->opt.count_bookkeeping)
        return;
    if (f->traced == f->trace_cap) {
        int64_t old = counted(m, TRACE_BYTES_PER_ALLOC * f->trace_cap);
        int64_t cap = f->trace_cap ? 2 * f->trace_cap : 1;
        int64_t grown = counted(m, TRACE_BYTES_PER_ALLOC * cap);
        seen(x, x->live + grown);
        x->live += grown - old;
        f->book += grown - old;
        f->trace_cap = cap;
    }
    f->traced++;
}

static int unknown_size(session *x, const olla_ort_memory *m, int t)
{
    if (!x->failed) {
        const olla_graph *g = m->g;
        char label[256];
        int p = g->tensors[t].producer;
        olla_error_set(x->err, OLLA_ERR_INPUT,
                       "ORT memory model: the size of '%s' (output of %s) is unknown; bind every symbolic "
                       "dim, and note that data-dependent sizes cannot be predicted",
                       g->tensors[t].name, p >= 0 ? olla_op_label(g, p, label, sizeof label) : "a graph input");
    }
    x->failed = 1;
    return 0;
}

/* Gives tensor t of frame f its buffer, as its plan says: a buffer of its
 * own (in the memory pattern's block when the frame uses one), nothing for
 * a view, an in-place write or a reused buffer; a subgraph's output where
 * its node says. */
static int alloc_value(session *x, frame *f, int t)
{
    const olla_ort_memory *m = f->m;
    int kind = m->kind[t];
    if (kind != OLLA_ORT_OWN && kind != OLLA_ORT_OUTPUT)
        return 1;
    int64_t bytes = m->g->tensors[t].bytes;
    if (kind == OLLA_ORT_OUTPUT && !f->is_main) {
        const out_target *o = &f->target[m->out_index[t]];
        if (o->mode == OUT_GIVEN)
            return 1;
        if (o->mode == OUT_PARENT)
            return alloc_value(x, o->pf, o->pt);
        if (o->mode == OUT_TEMP)
            return o->tmp_bytes < 0 ? unknown_size(x, o->pf->m, o->pt) : temp_alloc(x, m, o->tmp_bytes, o->tmp);
    }
    if (bytes < 0)
        return unknown_size(x, m, t);
    int is_traced = traced(m, t);
    if (!(f->use_pattern && is_traced) && !heap_alloc(x, bytes, counted(m, bytes), &f->ref[t]))
        return 0;
    if (f->tracing && is_traced) {
        trace_grow(x, f);
        pattern_trace(&f->pp, t, (bytes + ALLOC_ALIGNMENT - 1) / ALLOC_ALIGNMENT * ALLOC_ALIGNMENT);
    }
    return 1;
}

/* The buffers freed after position pos of frame f. */
static void release_after(session *x, frame *f, int pos)
{
    for (int t = f->rel_head[pos]; t >= 0; t = f->rel_next[t]) {
        heap_release(x, &f->ref[t]);
        if (f->tracing && traced(f->m, t))
            pattern_free(&f->pp, t);
    }
}

static int run_frame(session *x, frame *f, int run);

/* ---- control flow ---- */

static int op_out(const olla_ort_memory *m, int op, int k)
{
    const olla_graph *g = m->g;
    return k < g->ops[op].n_outputs ? g->output_list[g->ops[op].first_output + k] : -1;
}

static int op_in(const olla_ort_memory *m, int op, int k)
{
    const olla_graph *g = m->g;
    return k < g->ops[op].n_explicit_inputs ? g->input_list[g->ops[op].first_input + k] : -1;
}

static int64_t tensor_bytes(const olla_ort_memory *m, int t)
{
    return t >= 0 ? m->g->tensors[t].bytes : 0;
}

/* Runs the subgraph in frame c with every output's target set. */
static int run_body(session *x, frame *c)
{
    return run_frame(x, c, -1);
}

/* The body's output i as its node wants it: given, or the node's output k. */
static void target_given(frame *c, int i)
{
    c->target[i] = (out_target){OUT_GIVEN, NULL, -1, NULL, 0};
}

static void target_parent(frame *c, int i, frame *f, int t)
{
    c->target[i] = t >= 0 ? (out_target){OUT_PARENT, f, t, NULL, 0} : (out_target){OUT_GIVEN, NULL, -1, NULL, 0};
}

static int run_if(session *x, frame *f, int op)
{
    const ort_cf *cf = f->m->cf[op];
    frame *c = f->sub[2 * op + cf->branch];
    const olla_graph *cg = c->m->g;
    for (int k = 0; k < cg->n_graph_outputs; k++) {
        int t = op_out(f->m, op, k);
        if (cf->out_static[k]) {
            if (t >= 0 && !alloc_value(x, f, t))
                return 0;
            target_given(c, k);
        } else {
            target_parent(c, k, f, t);
        }
    }
    return run_body(x, c);
}

static int run_loop(session *x, frame *f, int op)
{
    const olla_ort_memory *m = f->m;
    const ort_cf *cf = m->cf[op];
    frame *c = f->sub[2 * op];
    loop_state *ls = &f->loops[op];
    const olla_graph *cg = c->m->g;
    int n_out = cg->n_graph_outputs, n_scan = n_out - 1 - cf->n_state;
    for (int i = 0; i < n_out; i++)
        c->target[i] = (out_target){OUT_OWN, NULL, -1, NULL, 0};
    /* the iteration number (int64) and the condition (bool) fed to the body:
     * tiny, but with the arena they can be what takes its first region */
    if (!temp_alloc(x, m, 8, &ls->scalars[0]) || !temp_alloc(x, m, 1, &ls->scalars[1]))
        return 0;
    for (int64_t it = 0; it < cf->trips; it++) {
        if (it > 0)
            for (int i = 0; i < cf->n_state; i++) { /* the feeds become the last iteration's outputs */
                heap_release(x, &ls->feed[i]);
                ls->feed[i] = ls->fetch[1 + i];
                ls->fetch[1 + i] = NO_REF;
            }
        heap_release(x, &ls->fetch[0]);
        if (!run_body(x, c))
            return 0;
        for (int i = 0; i < n_out; i++) { /* the body's outputs, handed to the Loop */
            int t = cg->graph_outputs[i];
            heap_ref r = c->ref[t];
            c->ref[t] = NO_REF;
            if (i >= 1 + cf->n_state)
                ls->scans[(int64_t)(i - 1 - cf->n_state) * cf->trips + it] = r;
            else
                ls->fetch[i] = r;
        }
    }
    /* the Loop's outputs, the carried values then the scan outputs, copied in */
    for (int k = 0; k < cf->n_state + n_scan; k++) {
        int t = op_out(m, op, k);
        if (t >= 0 && !alloc_value(x, f, t))
            return 0;
    }
    for (int i = 0; i < cf->n_state; i++)
        heap_release(x, &ls->feed[i]);
    for (int i = 0; i < n_out; i++)
        heap_release(x, &ls->fetch[i]);
    for (int64_t j = 0; j < (int64_t)n_scan * cf->trips; j++)
        heap_release(x, &ls->scans[j]);
    heap_release(x, &ls->scalars[0]);
    heap_release(x, &ls->scalars[1]);
    return 1;
}

static int run_scan(session *x, frame *f, int op)
{
    const olla_ort_memory *m = f->m;
    const ort_cf *cf = m->cf[op];
    frame *c = f->sub[2 * op];
    const olla_graph *cg = c->m->g;
    int n_scan_out = cg->n_graph_outputs - cf->n_state;
    heap_ref *in_tmp = f->temps + 0, *state_tmp = in_tmp + cf->n_scan_in, *out_tmp = state_tmp + 2 * cf->n_state;
    /* scan inputs on another axis: transposed copies */
    for (int j = 0; j < cf->n_scan_in; j++)
        if (cf->in_temp[j] > 0 && !temp_alloc(x, m, cf->in_temp[j], &in_tmp[j]))
            return 0;
    /* the outputs: the state outputs, then the scan outputs whose shape is static */
    for (int i = 0; i < cf->n_state; i++)
        if (!alloc_value(x, f, op_out(m, op, i)))
            return 0;
    for (int j = 0; j < n_scan_out; j++) {
        int k = cf->n_state + j, t = op_out(m, op, k);
        if (!cf->out_static[k])
            continue;
        if (cf->out_temp[j] ? !temp_alloc(x, m, tensor_bytes(m, t), &out_tmp[j]) : !alloc_value(x, f, t))
            return 0;
    }
    /* the state values' temporaries */
    for (int i = 0; i < cf->n_state; i++) {
        int64_t b = tensor_bytes(m, op_in(m, op, i));
        if ((cf->trips > 1 && !temp_alloc(x, m, b, &state_tmp[2 * i])) ||
            (cf->trips > 2 && !temp_alloc(x, m, b, &state_tmp[2 * i + 1])))
            return 0;
    }
    for (int64_t it = 0; it < cf->trips; it++) {
        for (int i = 0; i < cf->n_state; i++)
            target_given(c, i);
        for (int j = 0; j < n_scan_out; j++) {
            int k = cf->n_state + j, t = op_out(m, op, k);
            if (cf->out_static[k] || it > 0)
                target_given(c, k);
            else if (cf->out_temp[j])
                c->target[k] = (out_target){OUT_TEMP, f, t, &out_tmp[j], tensor_bytes(m, t)};
            else
                target_parent(c, k, f, t);
        }
        if (!run_body(x, c))
            return 0;
    }
    /* outputs on another axis: transposed into the Scan's output */
    for (int j = 0; j < n_scan_out; j++)
        if (cf->out_temp[j] && !alloc_value(x, f, op_out(m, op, cf->n_state + j)))
            return 0;
    for (int i = 0; i < cf->n_scan_in + 2 * cf->n_state + n_scan_out; i++)
        heap_release(x, &f->temps[i]);
    return 1;
}

/* ---- one execution of a frame ---- */

static int run_node(session *x, frame *f, int op, int pos)
{
    const olla_ort_memory *m = f->m;
    const ort_cf *cf = m->cf ? m->cf[op] : NULL;
    if (cf) {
        int ok = cf->kind == CF_IF ? run_if(x, f, op) : cf->kind == CF_LOOP ? run_loop(x, f, op) : run_scan(x, f, op);
        if (!ok)
            return 0;
    } else {
        const olla_graph *g = m->g;
        for (int k = 0; k < g->ops[op].n_outputs; k++) {
            int t = g->output_list[g->ops[op].first_output + k];
            if (t >= 0 && !alloc_value(x, f, t))
                return 0;
        }
        int64_t scratch = x->arena ? m->scratch_all[op] : m->scratch[op];
        if (scratch > 0) {
            heap_ref r;
            if (!heap_alloc(x, scratch, scratch, &r))
                return 0;
            heap_release(x, &r);
        }
    }
    release_after(x, f, pos);
    return 1;
}

/* Graph outputs that no node produces in this run (initializers, Constants):
 * copied into a new buffer when the run starts. */
static int copy_preexisting_outputs(session *x, frame *f)
{
    const olla_graph *g = f->m->g;
    for (int i = 0; i < g->n_graph_outputs; i++) {
        int t = g->graph_outputs[i];
        if (!g->tensors[t].is_input && olla_ort_is_preexisting(f->m, t) && f->ref[t].handle < 0 &&
            f->ref[t].counted == NO_BLOCK &&
            !heap_alloc(x, g->tensors[t].bytes, counted(f->m, g->tensors[t].bytes), &f->ref[t]))
            return 0;
    }
    return 1;
}

/* The main graph's end: the caller copies the outputs while ORT's still
 * live; then everything is given back. */
static void main_end(session *x, frame *f)
{
    const olla_ort_memory *m = f->m;
    const olla_graph *g = m->g;
    int64_t copies = 0;
    for (int t = 0; t < g->n_tensors; t++)
        if (!g->tensors[t].is_output)
            heap_release(x, &f->ref[t]);
    for (int i = 0; i < g->n_graph_outputs; i++)
        copies += m->opt.copy_outputs ? counted(m, g->tensors[g->graph_outputs[i]].bytes) : 0;
    seen(x, x->live + copies);
    for (int i = 0; i < g->n_graph_outputs; i++)
        heap_release(x, &f->ref[g->graph_outputs[i]]);
}

/* One execution of frame f: run r of the session for the main graph (-1 for
 * a subgraph, whose memory pattern is made by its first execution). */
static int run_frame(session *x, frame *f, int run)
{
    const olla_ort_memory *m = f->m;
    int pattern = x->s->mem_pattern && m->pattern_on;
    int first = f->is_main ? run == 0 : f->executed == 0;
    f->tracing = pattern && first;
    f->use_pattern = pattern && !first && f->pp.buffer > 0;
    f->book = f->traced = f->trace_cap = 0;
    if (m->opt.count_bookkeeping) {
        int64_t values = olla_ort_frame_values(m);
        f->book = m->start_book + counted(m, FRAME_BYTES_PER_VALUE * values);
        if (f->tracing) /* the pattern planner's hash over the values, built and dropped */
            seen(x, x->live + f->book + counted(m, olla_ort_flat_hash_bytes(values, VALUE_SET_SLOT_BYTES)));
        x->live += f->book;
    }
    heap_ref block = NO_REF;
    if ((f->is_main && !copy_preexisting_outputs(x, f)) ||
        (f->use_pattern && !heap_alloc(x, f->pp.buffer, counted(m, f->pp.buffer), &block)))
        return 0;
    if (f->tracing) {
        f->pp.n_live = 0;
        f->pp.buffer = 0;
    }
    for (int i = 0; i < f->n; i++) {
        if (f->is_main)
            x->step = i;
        if (m->op_kind[f->order[i]] != OP_CONSTANT && !run_node(x, f, f->order[i], i))
            return 0;
    }
    if (f->is_main)
        x->step = f->n;
    if (f->tracing && m->opt.count_bookkeeping) { /* the pattern's table stays with the session */
        int64_t table = counted(m, olla_ort_flat_hash_bytes(f->traced, PATTERN_SLOT_BYTES));
        x->live += table;
        x->kept += table;
        seen(x, x->live);
    }
    x->live -= f->book;
    heap_release(x, &block);
    if (f->is_main) {
        main_end(x, f);
    } else {
        const olla_graph *g = m->g;
        for (int t = 0; t < g->n_tensors; t++) /* a subgraph's outputs of its own go to its node */
            if (m->out_index[t] < 0 || f->target[m->out_index[t]].mode != OUT_OWN)
                heap_release(x, &f->ref[t]);
    }
    f->executed++;
    return 1;
}

/* ---- the frames ---- */

static void frame_free(frame *f)
{
    if (!f)
        return;
    const olla_ort_memory *m = f->m;
    if (f->sub && m)
        for (int i = 0; i < 2 * m->g->n_ops; i++)
            if (f->sub[i]) {
                frame_free(f->sub[i]);
                free(f->sub[i]);
            }
    if (f->loops && m)
        for (int op = 0; op < m->g->n_ops; op++) {
            free(f->loops[op].feed);
            free(f->loops[op].fetch);
            free(f->loops[op].scans);
        }
    free(f->sub);
    free(f->loops);
    free(f->temps);
    free(f->target);
    free(f->ref);
    free(f->rel_head);
    free(f->rel_next);
    free(f->pp.offset);
    free(f->pp.size);
    free(f->pp.live);
    memset(f, 0, sizeof *f);
}

static heap_ref *refs(int64_t n)
{
    heap_ref *r = malloc((size_t)(n > 0 ? n : 1) * sizeof *r);
    for (int64_t i = 0; r && i < n; i++)
        r[i] = NO_REF;
    return r;
}

static int frame_init(frame *f, const olla_ort_memory *m, const int *order, int n, int is_main);

/* The frames of op's subgraphs and what its control flow keeps. */
static int frame_control(frame *f, int op)
{
    const ort_cf *cf = f->m->cf[op];
    for (int b = 0; b < cf->n_bodies; b++) {
        if (!cf->body[b])
            continue;
        frame *c = calloc(1, sizeof *c);
        f->sub[2 * op + b] = c;
        if (!c || !frame_init(c, cf->body[b], cf->order[b], cf->n_order[b], 0))
            return 0;
    }
    if (cf->kind == CF_LOOP) {
        int n_out = cf->body[0]->g->n_graph_outputs;
        loop_state *ls = &f->loops[op];
        int64_t n_scan = n_out - 1 - cf->n_state;
        ls->feed = refs(cf->n_state);
        ls->fetch = refs(n_out);
        ls->scans = refs(n_scan * cf->trips);
        ls->scalars[0] = ls->scalars[1] = NO_REF;
        return ls->feed && ls->fetch && ls->scans;
    }
    return 1;
}

static int frame_init(frame *f, const olla_ort_memory *m, const int *order, int n, int is_main)
{
    const olla_graph *g = m->g;
    size_t nt = (size_t)g->n_tensors + 1;
    memset(f, 0, sizeof *f);
    f->m = m;
    f->order = order;
    f->n = n;
    f->is_main = is_main;
    f->ref = refs(g->n_tensors);
    f->rel_head = malloc(((size_t)n + 1) * sizeof(int));
    f->rel_next = malloc(nt * sizeof(int));
    f->pp.offset = calloc(nt, sizeof(int64_t));
    f->pp.size = calloc(nt, sizeof(int64_t));
    f->pp.live = malloc(nt * sizeof(int));
    f->target = calloc((size_t)g->n_graph_outputs + 1, sizeof *f->target);
    if (!f->ref || !f->rel_head || !f->rel_next || !f->pp.offset || !f->pp.size || !f->pp.live || !f->target)
        return 0;
    for (int i = 0; i <= n; i++)
        f->rel_head[i] = -1;
    for (int t = 0; t < g->n_tensors; t++) {
        int at = m->kind[t] == OLLA_ORT_OWN ? m->last_read[t] : -1;
        if (at >= 0 && at < n) {
            f->rel_next[t] = f->rel_head[at];
            f->rel_head[at] = t;
        }
    }
    if (!m->cf || m->n_cf == 0)
        return 1;
    int temps = 0;
    for (int op = 0; op < g->n_ops; op++)
        if (m->cf[op] && m->cf[op]->kind == CF_SCAN) {
            const ort_cf *cf = m->cf[op];
            int k = cf->n_scan_in + 2 * cf->n_state + cf->body[0]->g->n_graph_outputs;
            temps = k > temps ? k : temps;
        }
    f->sub = calloc(2 * (size_t)g->n_ops + 1, sizeof *f->sub);
    f->loops = calloc((size_t)g->n_ops + 1, sizeof *f->loops);
    f->temps = refs(temps);
    if (!f->sub || !f->loops || !f->temps)
        return 0;
    for (int op = 0; op < g->n_ops; op++)
        if (m->cf[op] && !frame_control(f, op))
            return 0;
    return 1;
}

/* ---- the session ---- */

olla_status olla_ort__replay(olla_ort_memory *m, const int *executed, int n_executed, const olla_ort_settings *s,
                             olla_ort_session_result *result, olla_error *err)
{
    memset(result, 0, sizeof *result);
    session x;
    memset(&x, 0, sizeof x);
    x.s = s;
    x.err = err;
    int ok = frame_init(&x.main, m, executed, n_executed, 1) || fail_oom(&x);
    if (ok && s->arena &&
        !(x.arena = olla_bfc_new(s->extend_same ? OLLA_BFC_SAME_AS_REQUESTED : OLLA_BFC_NEXT_POWER_OF_TWO,
                                 m->opt.min_block_bytes)))
        ok = fail_oom(&x);
    for (int r = 0; ok && r < (s->runs > 0 ? s->runs : 1); r++) {
        x.run_peak = x.live;
        x.run_peak_step = -1;
        x.step = -1;
        ok = run_frame(&x, &x.main, r);
        if (x.run_peak > x.peak)
            x.peak = x.run_peak;
        if (r == 0) {
            result->first_run_bytes = x.run_peak;
            result->first_run_step = x.run_peak_step;
        }
    }
    if (ok) {
        result->peak_bytes = x.peak;
        result->arena_bytes = x.arena ? olla_bfc_region_bytes(x.arena) : 0;
        result->arena_regions = x.arena ? olla_bfc_regions(x.arena) : 0;
        result->pattern_bytes = s->mem_pattern && m->pattern_on && (s->runs > 1) ? x.main.pp.buffer : 0;
    }
    frame_free(&x.main);
    olla_bfc_free_arena(x.arena);
    if (!ok && !x.failed)
        fail_oom(&x);
    return ok ? OLLA_OK : err->code;
}

olla_status olla_ort_memory_session(olla_ort_memory *m, const int *executed, int n_executed,
                                    const olla_ort_settings *s, olla_ort_session_result *result, olla_error *err)
{
    olla_ort_memory_result one;
    olla_status st = olla_ort__plan(m, executed, n_executed, &one, err);
    if (st != OLLA_OK) {
        memset(result, 0, sizeof *result);
        return st;
    }
    return olla_ort__replay(m, executed, n_executed, s, result, err);
}
