/* olla-onnx: what to pass when sizes are unknown (olla_shape_size_advice).
 *
 * Sizes that wait on a graph input are the common case: an exporter leaves
 * the input's batch, height or width open, and every size downstream stays
 * open with it. The advice follows the unknown sizes back, through values
 * of unknown size only, to the graph inputs they start from, and names
 * those inputs, their open dimensions and the flag that closes all of them
 * at once, written from the declared shape (--input-shape x=N,3,H,W), with
 * the --dim names that do the same. Dimensions that only a declaration
 * names (a graph output's, a value_info's) are never offered for a size
 * that waits on an input: binding the input sizes them.
 *
 * Names are never split ("/" belongs to a name, as in olla_dim_param_eval)
 * nor cut: the text is built from whole pieces (util/olla_line.h), and
 * what does not fit is counted ("and 2 more graph inputs"), never
 * truncated. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "passes/shapes/shape_engine.h"
#include "util/olla_line.h"

/* ---- the graph inputs behind unknown sizes ---- */

static int unknown_size(const olla_shape_entry *e)
{
    return olla_value_bytes(&e->type) < 0;
}

/* A graph input whose shape a flag can give: a tensor of known element
 * type with an unknown rank or an unknown dimension. */
static int open_input(const olla_shape_entry *e)
{
    if (e->producer || e->type.source != OLLA_SRC_INPUT || e->type.kind != OLLA_VALUE_TENSOR || !e->type.elem_type)
        return 0;
    if (e->type.rank < 0)
        return 1;
    for (int d = 0; d < e->type.rank; d++)
        if (e->type.dims[d].value < 0)
            return 1;
    return 0;
}

typedef struct {
    const olla_shape_table *t;
    unsigned char *seen; /* per main entry */
    size_t *stack, n;
} dep_walk;

static void visit(const char *name, void *ud)
{
    dep_walk *w = ud;
    size_t i;
    if (!name || !name[0] || !olla_strmap_find(&w->t->main.map, name, &i) || w->seen[i] ||
        !unknown_size(&w->t->main.entries[i]))
        return;
    w->seen[i] = 1;
    w->stack[w->n++] = i;
}

/* Marks in `behind` (one flag per main entry) the open graph inputs that the
 * unknown sizes of names[0..n) depend on. 0 when out of memory. */
static int mark_inputs(const olla_shape_table *t, const char *const *names, size_t n, unsigned char *behind)
{
    dep_walk w = {t, calloc(t->main.n + 1, 1), malloc((t->main.n + 1) * sizeof(size_t)), 0};
    if (!w.seen || !w.stack) {
        free(w.seen);
        free(w.stack);
        return 0;
    }
    for (size_t k = 0; k < n; k++)
        visit(names[k], &w);
    while (w.n > 0) {
        size_t i = w.stack[--w.n];
        const olla_shape_entry *e = &t->main.entries[i];
        if (e->producer)
            olla_shape__for_each_dep(e->producer, visit, &w);
        else if (open_input(e))
            behind[i] = 1;
    }
    free(w.seen);
    free(w.stack);
    return 1;
}

/* ---- the text ---- */

#define MAX_NAMED 64 /* graph inputs spelled out; more are counted */

/* "D3": the placeholder of dimension d (0-based) when it has no name. */
static void dim_text(const olla_dim *dim, int d, char *buf, size_t size)
{
    if (dim->value >= 0)
        snprintf(buf, size, "%lld", (long long)dim->value);
    else if (dim->param)
        snprintf(buf, size, "%s", dim->param);
    else
        snprintf(buf, size, "D%d", d + 1);
}

/* The value graph input `name` declares for dimension d when it declares
 * one below -1 (which reads as unknown; -1 is the usual way to say so),
 * else 0. */
static int64_t declared_negative(const olla_shape_table *t, const char *name, int d)
{
    int64_t v;
    return olla_shape__input_dim(t->model->graph, name, d, INT64_MIN, -2, &v) ? v : 0;
}

/* Appends the open dimensions of e ("A, B and D3"); 0 when they do not fit. */
static int add_open_dims(olla_line *l, const olla_shape_table *t, const olla_shape_entry *e, size_t reserve)
{
    const olla_value_type *ty = &e->type;
    int n_open = 0, k = 0;
    for (int d = 0; d < ty->rank; d++)
        n_open += ty->dims[d].value < 0;
    for (int d = 0; d < ty->rank; d++) {
        if (ty->dims[d].value >= 0)
            continue;
        const char *sep = k == 0 ? "" : k == n_open - 1 ? " and " : ", ";
        int64_t neg = ty->dims[d].param ? 0 : declared_negative(t, e->name, d);
        if (ty->dims[d].param ? !olla_line_add(l, reserve, "%s%s", sep, ty->dims[d].param)
            : neg ? !olla_line_add(l, reserve, "%sD%d [declared %lld]", sep, d + 1, (long long)neg)
                  : !olla_line_add(l, reserve, "%sD%d", sep, d + 1))
            return 0;
        k++;
    }
    return 1;
}

/* Appends " --input-shape x=A,3,B" (or x=D1,D2,... without a rank). */
static int add_template(olla_line *l, const olla_shape_entry *e, size_t reserve)
{
    if (!olla_line_add(l, reserve, " --input-shape %s=", e->name))
        return 0;
    if (e->type.rank < 0)
        return olla_line_add(l, reserve, "D1,D2,...");
    for (int d = 0; d < e->type.rank; d++) {
        char v[32];
        if (e->type.dims[d].param && e->type.dims[d].value < 0) {
            if (!olla_line_add(l, reserve, "%s%s", d ? "," : "", e->type.dims[d].param))
                return 0;
            continue;
        }
        dim_text(&e->type.dims[d], d, v, sizeof v);
        if (!olla_line_add(l, reserve, "%s%s", d ? "," : "", v))
            return 0;
    }
    return 1;
}

/* 1 when --dim can bind every open dimension of e (each has a name). */
static int all_named(const olla_shape_entry *e)
{
    if (e->type.rank < 0)
        return 0;
    for (int d = 0; d < e->type.rank; d++)
        if (e->type.dims[d].value < 0 && !e->type.dims[d].param)
            return 0;
    return 1;
}

/* The names a dimension parameter uses: what lies between + - * ( ) and
 * spaces and does not start with a digit. Appends " --dim NAME=N" for each
 * not already in the line. */
static int add_dim_flags(olla_line *l, const char *param, size_t reserve)
{
    for (const char *p = param; *p;) {
        size_t len = strcspn(p, "+-*() ");
        if (len && !(p[0] >= '0' && p[0] <= '9')) {
            char flag[24 + 512];
            if (len >= 512)
                return 0;
            snprintf(flag, sizeof flag, " --dim %.*s=N", (int)len, p);
            const char *hit = strstr(l->buf, flag);
            if (!hit && !olla_line_add(l, reserve, "%s", flag))
                return 0;
        }
        p += len ? len : 1;
    }
    return 1;
}

/* The clause for the first k of the inputs in[0..n): "graph input 'x',
 * whose dimensions A and B have no value; pass --input-shape x=A,3,B with a
 * size in place of each name, or --dim A=N --dim B=N" (and for several, the
 * inputs listed with their dimensions). 0 when it does not fit. */
static int compose(olla_line *l, const olla_shape_table *t, const olla_shape_entry *const *in, size_t n, size_t k)
{
    const size_t more = 96; /* room for the count of the inputs left out */
    size_t reserve = k < n ? more : 0;
    int named = 1;
    if (k == 1) {
        const olla_shape_entry *e = in[0];
        int n_open = 0;
        for (int d = 0; d < e->type.rank; d++)
            n_open += e->type.dims[d].value < 0;
        if (e->type.rank < 0) {
            if (!olla_line_add(l, reserve, "graph input '%s', whose shape is not declared", e->name))
                return 0;
        } else if (!olla_line_add(l, reserve, "graph input '%s', whose dimension%s ", e->name, n_open == 1 ? "" : "s") ||
                   !add_open_dims(l, t, e, reserve) ||
                   !olla_line_add(l, reserve, " %s no value", n_open == 1 ? "has" : "have")) {
            return 0;
        }
    } else {
        if (!olla_line_add(l, reserve, "graph inputs "))
            return 0;
        for (size_t i = 0; i < k; i++) {
            const olla_shape_entry *e = in[i];
            int n_open = 0;
            for (int d = 0; d < e->type.rank; d++)
                n_open += e->type.dims[d].value < 0;
            const char *sep = i == 0 ? "" : i == k - 1 ? " and " : ", ";
            if (e->type.rank < 0 ? !olla_line_add(l, reserve, "%s'%s' (no declared shape)", sep, e->name)
                                 : !olla_line_add(l, reserve, "%s'%s' (dimension%s ", sep, e->name,
                                                  n_open == 1 ? "" : "s") ||
                                       !add_open_dims(l, t, e, reserve) || !olla_line_add(l, reserve, ")"))
                return 0;
        }
        if (!olla_line_add(l, reserve, " with no value"))
            return 0;
    }
    if (!olla_line_add(l, reserve, "; pass"))
        return 0;
    for (size_t i = 0; i < k; i++) {
        if (!add_template(l, in[i], reserve))
            return 0;
        named &= all_named(in[i]);
    }
    int ranked = 0;
    for (size_t i = 0; i < k; i++)
        ranked |= in[i]->type.rank >= 0;
    if (!olla_line_add(l, reserve, ranked ? " with a size in place of each name" : " with %s sizes",
                       k == 1 ? "its" : "their"))
        return 0;
    if (named) {
        /* the --dim alternative, only when it fits whole */
        size_t at = l->len;
        int fits = olla_line_add(l, reserve, ", or");
        for (size_t i = 0; fits && i < k; i++)
            for (int d = 0; fits && d < in[i]->type.rank; d++)
                if (in[i]->type.dims[d].value < 0)
                    fits = add_dim_flags(l, in[i]->type.dims[d].param, reserve);
        if (!fits) {
            l->len = at;
            l->buf[at] = '\0';
        }
    }
    if (k < n)
        return olla_line_add(l, 0, "; and %zu more graph input%s (olla-onnx shapes names %s)", n - k,
                             n - k == 1 ? "" : "s", n - k == 1 ? "it" : "them");
    return 1;
}

/* The inputs clause into buf; the number of inputs it names (0: none). */
static size_t inputs_clause(const olla_shape_table *t, const unsigned char *behind, char *buf, size_t size)
{
    const Onnx__GraphProto *g = t->model->graph;
    const olla_shape_entry *in[MAX_NAMED];
    size_t n = 0, total = 0;
    for (size_t k = 0; k < g->n_input; k++) {
        size_t i;
        if (!g->input[k] || !g->input[k]->name || !olla_strmap_find(&t->main.map, g->input[k]->name, &i) ||
            !behind[i])
            continue;
        if (n < MAX_NAMED)
            in[n++] = &t->main.entries[i];
        total++;
    }
    for (size_t k = n; k >= 1; k--) {
        olla_line l;
        olla_line_init(&l, buf, size);
        if (compose(&l, t, in, total, k))
            return k;
    }
    olla_line l;
    olla_line_init(&l, buf, size);
    if (total && olla_line_add(&l, 0, "%zu graph input%s with dimensions of no value; pass --input-shape for %s "
                                      "(olla-onnx shapes names %s)",
                               total, total == 1 ? "" : "s", total == 1 ? "it" : "each", total == 1 ? "it" : "them"))
        return total;
    return 0;
}

/* 1 when value i of the main graph has a symbolic dimension with no value. */
static int has_symbolic(const olla_shape_table *t, const char *name)
{
    size_t i;
    if (!name || !olla_strmap_find(&t->main.map, name, &i))
        return 0;
    const olla_value_type *ty = &t->main.entries[i].type;
    for (int d = 0; ty->kind == OLLA_VALUE_TENSOR && d < ty->rank; d++)
        if (ty->dims[d].value < 0 && ty->dims[d].param)
            return 1;
    return 0;
}

/* " --dim A=N --dim B=N" for the symbolic dimensions of the values named,
 * as many as fit, then how to see the rest. */
static void symbolic_flags(const olla_shape_table *t, const char *const *names, size_t n, olla_line *l)
{
    const size_t tail = 64;
    int left = 0;
    for (size_t k = 0; k < n; k++) {
        size_t i;
        if (!names[k] || !olla_strmap_find(&t->main.map, names[k], &i))
            continue;
        const olla_value_type *ty = &t->main.entries[i].type;
        for (int d = 0; ty->kind == OLLA_VALUE_TENSOR && d < ty->rank; d++)
            if (ty->dims[d].value < 0 && ty->dims[d].param && !add_dim_flags(l, ty->dims[d].param, tail))
                left = 1;
    }
    if (left)
        olla_line_add(l, 0, " (and more: olla-onnx shapes lists them)");
}

/* " ('a', 'b', 'c', ...)": the first names, as many as fit leaving reserve
 * free; nothing when not even one does. */
static void add_names(olla_line *l, const char *const *names, size_t n, size_t reserve)
{
    size_t at = l->len, shown = 0;
    if (!olla_line_add(l, reserve, " ("))
        return;
    while (shown < n && shown < 3 && olla_line_add(l, reserve + 6, "%s'%s'", shown ? ", " : "", names[shown]))
        shown++;
    if (shown == 0 || !olla_line_add(l, 0, "%s)", shown < n ? ", ..." : "")) {
        l->len = at;
        l->buf[at] = '\0';
    }
}

int olla_shape_size_advice(const olla_shape_table *t, const char *const *names, size_t n, char *buf, size_t size)
{
    if (size)
        buf[0] = '\0';
    if (!t || n == 0 || size < 64)
        return 0;
    unsigned char *behind = calloc(t->main.n + 1, 1);
    char *clause = malloc(size);
    const char **sym = malloc((n + 1) * sizeof *sym);
    size_t n_inputs = 0, n_sym = 0;
    if (behind && clause && sym && mark_inputs(t, names, n, behind))
        n_inputs = inputs_clause(t, behind, clause, size);
    olla_line l;
    olla_line_init(&l, buf, size);
    if (n_inputs > 0) {
        size_t reserve = strlen(clause) + 40; /* the clause is written whole */
        olla_line_add(&l, reserve, "%zu tensor%s", n, n == 1 ? "" : "s");
        add_names(&l, names, n, reserve);
        olla_line_add(&l, 0, " %s no size: %s on %s", n == 1 ? "has" : "have",
                      n == 1 ? "it depends" : "they depend", clause);
    } else if (sym) {
        /* none waits on a graph input: the symbolic dimensions a --dim binds */
        for (size_t k = 0; k < n; k++)
            if (has_symbolic(t, names[k]))
                sym[n_sym++] = names[k];
        /* the count, the names as room allows (leaving room for the first flags), then the flags */
        if (n_sym > 0 && olla_line_add(&l, 0, "%zu tensor%s", n_sym, n_sym == 1 ? "" : "s")) {
            add_names(&l, sym, n_sym, size / 2);
            olla_line_add(&l, 0, " %s symbolic dimensions with no value; pass", n_sym == 1 ? "has" : "have");
            symbolic_flags(t, sym, n_sym, &l);
        }
    }
    free(behind);
    free(clause);
    free(sym);
    return l.len > 0;
}

size_t olla_shape__input_advice(const olla_shape_table *t, const olla_shape_entry *e, char *buf, size_t size)
{
    olla_line l;
    olla_line_init(&l, buf, size);
    const olla_shape_entry *in[1] = {e};
    if (open_input(e) && compose(&l, t, in, 1, 1))
        return l.len;
    olla_line_init(&l, buf, size);
    return 0;
}
