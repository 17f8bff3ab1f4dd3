/* olla-onnx: what an ONNX Runtime session holds over several runs under its
 * memory settings (olla_ort_memory.h, "sessions", states the rules).
 *
 * The planning pass of olla_ort_memory_eval decides which tensors get a
 * buffer of their own and after which node each is freed; this file replays
 * the runs against a heap: malloc (arena off) or the BFC arena (ort_bfc.h),
 * with ORT's memory-pattern planner tracing the first run and serving the
 * later ones from one block. The counted bytes are those the process holds:
 * with the arena, its regions (held from the moment they are taken), not
 * the chunks in use. */
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

/* ORT's MemPatternPlanner: blocks live at the moment, in offset order. */
typedef struct pattern_planner {
    int64_t *offset, *size; /* per tensor */
    int *live;              /* tensors, in list order */
    int n_live;
    int64_t buffer;         /* the pattern's size so far */
} pattern_planner;

typedef struct session {
    const olla_ort_memory *m;
    const olla_ort_settings *s;
    olla_bfc *arena;        /* NULL: arena off */
    heap_ref *ref;          /* per tensor: its buffer in this run */
    int *rel_head, *rel_next; /* per position: the buffers freed after it (linked by tensor) */
    pattern_planner pp;
    int64_t live;           /* counted bytes held */
    int64_t peak, run_peak;
    int64_t kept;           /* the memory pattern's table, held from the first run's end on */
} session;

static int64_t counted(const olla_ort_memory *m, int64_t bytes)
{
    return bytes > 0 && bytes >= m->opt.min_block_bytes ? bytes : 0;
}

static void seen(session *x, int64_t bytes)
{
    if (bytes > x->run_peak)
        x->run_peak = bytes;
}

/* ------------------------------------------------------------ the heap */

static int heap_alloc(session *x, int64_t bytes, int64_t malloc_counted, heap_ref *r)
{
    r->handle = -1;
    r->counted = NO_BLOCK;
    if (!x->arena) {
        r->counted = malloc_counted;
        x->live += malloc_counted;
        seen(x, x->live);
        return 1;
    }
    int64_t grown, transient;
    r->handle = olla_bfc_alloc(x->arena, bytes, &grown, &transient);
    seen(x, x->live + grown + transient);
    x->live += grown;
    seen(x, x->live);
    return r->handle >= 0;
}

static void heap_release(session *x, heap_ref *r)
{
    if (r->handle >= 0)
        olla_bfc_release(x->arena, r->handle);
    else if (r->counted != NO_BLOCK)
        x->live -= r->counted;
    r->handle = -1;
    r->counted = NO_BLOCK;
}

/* ------------------------------------------------------------ the memory pattern */

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

/* ------------------------------------------------------------ one run */

/* A tensor the memory pattern covers: its own buffer, a tensor, not a string. */
static int traced(const olla_ort_memory *m, int t)
{
    return m->kind[t] == OLLA_ORT_OWN && m->is_tensor[t] &&
           m->g->tensors[t].type.elem_type != 8 /* TensorProto.STRING */;
}

typedef struct run_ctx {
    int tracing, use_pattern;
    int64_t book;              /* counted bookkeeping live during the run */
    int64_t traced, trace_cap; /* the first run's trace vector */
} run_ctx;

static void trace_grow(session *x, run_ctx *rc)
{
    const olla_ort_memory *m = x->m;
    if (!m->opt.count_bookkeeping)
        return;
    if (rc->traced == rc->trace_cap) {
        int64_t old = counted(m, TRACE_BYTES_PER_ALLOC * rc->trace_cap);
        int64_t cap = rc->trace_cap ? 2 * rc->trace_cap : 1;
        int64_t grown = counted(m, TRACE_BYTES_PER_ALLOC * cap);
        seen(x, x->live + grown);
        x->live += grown - old;
        rc->book += grown - old;
        rc->trace_cap = cap;
    }
    rc->traced++;
}

static int run_outputs_of(session *x, run_ctx *rc, int op)
{
    const olla_ort_memory *m = x->m;
    const olla_graph *g = m->g;
    for (int k = 0; k < g->ops[op].n_outputs; k++) {
        int t = g->output_list[g->ops[op].first_output + k];
        if (t < 0 || (m->kind[t] != OLLA_ORT_OWN && m->kind[t] != OLLA_ORT_OUTPUT))
            continue;
        int64_t bytes = g->tensors[t].bytes;
        int is_traced = traced(m, t);
        if (!(rc->use_pattern && is_traced) && !heap_alloc(x, bytes, counted(m, bytes), &x->ref[t]))
            return 0;
        if (rc->tracing && is_traced) {
            trace_grow(x, rc);
            pattern_trace(&x->pp, t, (bytes + ALLOC_ALIGNMENT - 1) / ALLOC_ALIGNMENT * ALLOC_ALIGNMENT);
        }
    }
    return 1;
}

static int run_node(session *x, run_ctx *rc, int op, int pos)
{
    const olla_ort_memory *m = x->m;
    if (!run_outputs_of(x, rc, op))
        return 0;
    int64_t scratch = x->arena ? m->scratch_all[op] : m->scratch[op];
    if (scratch > 0) {
        heap_ref r;
        if (!heap_alloc(x, scratch, scratch, &r))
            return 0;
        heap_release(x, &r);
    }
    for (int t = x->rel_head[pos]; t >= 0; t = x->rel_next[t]) {
        heap_release(x, &x->ref[t]);
        if (rc->tracing && traced(m, t))
            pattern_free(&x->pp, t);
    }
    return 1;
}

/* Graph outputs that no node produces in this run (initializers, Constants):
 * copied into a new buffer when the run starts. */
static int copy_preexisting_outputs(session *x)
{
    const olla_graph *g = x->m->g;
    for (int i = 0; i < g->n_graph_outputs; i++) {
        int t = g->graph_outputs[i];
        if (!g->tensors[t].is_input && olla_ort_is_preexisting(x->m, t) && x->ref[t].handle < 0 &&
            x->ref[t].counted == NO_BLOCK &&
            !heap_alloc(x, g->tensors[t].bytes, counted(x->m, g->tensors[t].bytes), &x->ref[t]))
            return 0;
    }
    return 1;
}

/* The run's end: the pattern is made (first run), the frame goes with its
 * bookkeeping and the pattern block, and the caller copies the outputs
 * while ORT's still live; then everything is given back. */
static void run_end(session *x, run_ctx *rc, heap_ref *block)
{
    const olla_ort_memory *m = x->m;
    const olla_graph *g = m->g;
    if (rc->tracing && m->opt.count_bookkeeping) {
        int64_t table = counted(m, olla_ort_flat_hash_bytes(rc->traced, PATTERN_SLOT_BYTES));
        x->live += table;
        x->kept += table;
        seen(x, x->live);
    }
    x->live -= rc->book;
    heap_release(x, block);
    int64_t copies = 0;
    for (int t = 0; t < g->n_tensors; t++)
        if (!g->tensors[t].is_output)
            heap_release(x, &x->ref[t]);
    for (int i = 0; i < g->n_graph_outputs; i++)
        copies += m->opt.copy_outputs ? counted(m, g->tensors[g->graph_outputs[i]].bytes) : 0;
    seen(x, x->live + copies);
    for (int i = 0; i < g->n_graph_outputs; i++)
        heap_release(x, &x->ref[g->graph_outputs[i]]);
}

static int run_once(session *x, const int *executed, int n, int r)
{
    const olla_ort_memory *m = x->m;
    run_ctx rc = {0};
    int pattern = x->s->mem_pattern && m->pattern_on;
    rc.tracing = pattern && r == 0;
    rc.use_pattern = pattern && r > 0 && x->pp.buffer > 0;
    x->run_peak = x->live;
    if (m->opt.count_bookkeeping) {
        int64_t values = olla_ort_frame_values(m);
        rc.book = m->start_book + counted(m, FRAME_BYTES_PER_VALUE * values);
        seen(x, x->live + rc.book + counted(m, olla_ort_flat_hash_bytes(values, VALUE_SET_SLOT_BYTES)));
        x->live += rc.book;
    }
    heap_ref block = {-1, NO_BLOCK};
    if (!copy_preexisting_outputs(x) ||
        (rc.use_pattern && !heap_alloc(x, x->pp.buffer, counted(m, x->pp.buffer), &block)))
        return 0;
    if (rc.tracing)
        x->pp.n_live = 0;
    for (int i = 0; i < n; i++)
        if (m->op_kind[executed[i]] != OP_CONSTANT && !run_node(x, &rc, executed[i], i))
            return 0;
    run_end(x, &rc, &block);
    if (x->run_peak > x->peak)
        x->peak = x->run_peak;
    return 1;
}

/* ------------------------------------------------------------ the session */

static void session_free(session *x)
{
    olla_bfc_free_arena(x->arena);
    free(x->ref);
    free(x->rel_head);
    free(x->rel_next);
    free(x->pp.offset);
    free(x->pp.size);
    free(x->pp.live);
}

static int session_init(session *x, const olla_ort_memory *m, const olla_ort_settings *s, int n)
{
    const olla_graph *g = m->g;
    size_t nt = (size_t)g->n_tensors + 1;
    memset(x, 0, sizeof *x);
    x->m = m;
    x->s = s;
    x->ref = malloc(nt * sizeof *x->ref);
    x->rel_head = malloc(((size_t)n + 1) * sizeof(int));
    x->rel_next = malloc(nt * sizeof(int));
    x->pp.offset = calloc(nt, sizeof(int64_t));
    x->pp.size = calloc(nt, sizeof(int64_t));
    x->pp.live = malloc(nt * sizeof(int));
    if (s->arena)
        x->arena = olla_bfc_new(s->extend_same ? OLLA_BFC_SAME_AS_REQUESTED : OLLA_BFC_NEXT_POWER_OF_TWO,
                                m->opt.min_block_bytes);
    if (!x->ref || !x->rel_head || !x->rel_next || !x->pp.offset || !x->pp.size || !x->pp.live ||
        (s->arena && !x->arena))
        return 0;
    for (int t = 0; t < g->n_tensors; t++)
        x->ref[t] = (heap_ref){-1, NO_BLOCK};
    for (int i = 0; i <= n; i++)
        x->rel_head[i] = -1;
    for (int t = 0; t < g->n_tensors; t++) {
        int at = m->kind[t] == OLLA_ORT_OWN ? m->last_read[t] : -1;
        if (at >= 0 && at < n) {
            x->rel_next[t] = x->rel_head[at];
            x->rel_head[at] = t;
        }
    }
    return 1;
}

olla_status olla_ort_memory_session(olla_ort_memory *m, const int *executed, int n_executed,
                                    const olla_ort_settings *s, olla_ort_session_result *result, olla_error *err)
{
    memset(result, 0, sizeof *result);
    olla_ort_memory_result one;
    olla_status st = olla_ort_memory_eval(m, executed, n_executed, &one, err);
    if (st != OLLA_OK)
        return st;
    session x;
    int ok = session_init(&x, m, s, n_executed);
    for (int r = 0; ok && r < (s->runs > 0 ? s->runs : 1); r++) {
        ok = run_once(&x, executed, n_executed, r);
        if (r == 0)
            result->first_run_bytes = x.run_peak;
    }
    if (ok) {
        result->peak_bytes = x.peak;
        result->arena_bytes = x.arena ? olla_bfc_region_bytes(x.arena) : 0;
        result->arena_regions = x.arena ? olla_bfc_regions(x.arena) : 0;
        result->pattern_bytes = s->mem_pattern && m->pattern_on && (s->runs > 1) ? x.pp.buffer : 0;
    }
    session_free(&x);
    return ok ? OLLA_OK : olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory replaying an ONNX Runtime session");
}
