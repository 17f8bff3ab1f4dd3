/* olla-onnx: the scopes of shape inference: a graph's names and their
 * entries, looked up through the enclosing graphs' scopes, so that a
 * subgraph sees the values of the graphs around it. The scope of each
 * subgraph inferred is kept, so that the table answers lookups of its
 * values after the inference (olla_shape_lookup_in). */
#include <stdlib.h>
#include <string.h>

#include "passes/shapes/shape_engine.h"
#include "util/olla_grow.h"

/* ---- one scope ---- */

/* Finds a name in scope and its parents. */
olla_shape_entry *olla_shape__find(olla_shape_scope *s, const char *name)
{
    size_t i;
    for (; s; s = s->parent)
        if (olla_strmap_find(&s->map, name, &i))
            return &s->entries[i];
    return NULL;
}

/* Frees a scope's arrays and maps; s is left empty. */
void olla_shape__scope_free(olla_shape_scope *s)
{
    free(s->entries);
    free(s->decls);
    olla_strmap_free(&s->map);
    olla_strmap_free(&s->decl);
    memset(s, 0, sizeof *s);
}

/* Adds name to scope s, or finds it there; returns the entry or NULL on OOM. */
olla_shape_entry *olla_shape__scope_put(olla_shape_table *t, olla_shape_scope *s, const char *name)
{
    size_t i;
    const char *key = olla_shape__intern(t, name);
    if (!key)
        return NULL;
    if (olla_strmap_find(&s->map, key, &i))
        return &s->entries[i];
    olla_shape_entry *e = olla_grow(s->entries, &s->cap, s->n + 1, sizeof *e);
    if (!e)
        return NULL;
    s->entries = e;
    i = s->n++;
    memset(&s->entries[i], 0, sizeof s->entries[i]);
    s->entries[i].name = key;
    s->entries[i].type.rank = -1;
    if (!olla_strmap_put(&s->map, key, i))
        return NULL;
    return &s->entries[i];
}

/* Indexes the declarations (value_info, then graph outputs) of g into s,
 * unless value_info is ignored. */
olla_status olla_shape__scope_decls(olla_shape_table *t, olla_shape_scope *s, const Onnx__GraphProto *g)
{
    if (t->ignore_vi)
        return OLLA_OK;
    size_t n = g->n_value_info + g->n_output;
    s->decls = calloc(n ? n : 1, sizeof *s->decls);
    if (!s->decls)
        return OLLA_ERR_INTERNAL;
    for (size_t k = 0; k < n; k++) {
        const Onnx__ValueInfoProto *vi = k < g->n_value_info ? g->value_info[k] : g->output[k - g->n_value_info];
        if (!vi || !vi->name || !vi->name[0] || !vi->type)
            continue;
        s->decls[s->n_decls] = vi;
        if (!olla_strmap_put(&s->decl, vi->name, s->n_decls))
            return OLLA_ERR_INTERNAL;
        s->n_decls++;
    }
    return OLLA_OK;
}

/* ---- the scopes of subgraphs, kept ---- */

/* Keeps s (moved out: s is left empty) as the last inference of its graph,
 * replacing an earlier one. */
olla_status olla_shape__keep_scope(olla_shape_table *t, const Onnx__GraphProto *parent, olla_shape_scope *s)
{
    olla_shape_kept *k = NULL;
    for (size_t i = 0; i < t->n_kept && !k; i++)
        if (t->kept[i].scope.graph == s->graph)
            k = &t->kept[i];
    if (!k) {
        olla_shape_kept *p = olla_grow(t->kept, &t->cap_kept, t->n_kept + 1, sizeof *p);
        if (!p)
            return OLLA_ERR_INTERNAL;
        t->kept = p;
        k = &t->kept[t->n_kept++];
        memset(k, 0, sizeof *k);
    }
    olla_shape__scope_free(&k->scope);
    k->parent = parent;
    k->scope = *s;
    k->scope.parent = NULL;
    memset(s, 0, sizeof *s);
    return OLLA_OK;
}

/* ---- lookups in the main graph ---- */

const olla_value_type *olla_shape_lookup(const olla_shape_table *t, const char *name)
{
    size_t i;
    if (!t || !name || !olla_strmap_find(&t->main.map, name, &i))
        return NULL;
    return &t->main.entries[i].type;
}

const char *olla_shape_unknown_reason(const olla_shape_table *t, const char *name)
{
    size_t i;
    if (!t || !name || !olla_strmap_find(&t->main.map, name, &i))
        return NULL;
    const olla_shape_entry *e = &t->main.entries[i];
    if (olla_value_bytes(&e->type) >= 0)
        return NULL;
    return e->reason ? e->reason : "size unknown";
}

static const olla_value_type *type_source_lookup(void *ctx, const char *name)
{
    return olla_shape_lookup(ctx, name);
}

static const char *type_source_reason(void *ctx, const char *name)
{
    return olla_shape_unknown_reason(ctx, name);
}

olla_type_source olla_shape_type_source(olla_shape_table *t)
{
    olla_type_source s = {type_source_lookup, type_source_reason, t};
    return s;
}

/* ---- the values of subgraphs ---- */

/* The kept scope of subgraph g, or NULL when g was not inferred. */
static const olla_shape_kept *kept_of(const olla_shape_table *t, const Onnx__GraphProto *g)
{
    for (size_t i = 0; i < t->n_kept; i++)
        if (t->kept[i].scope.graph == g)
            return &t->kept[i];
    return NULL;
}

/* The entry of name as seen from graph g: g's own values, then those of the
 * graphs around it, up to the main graph. */
static const olla_shape_entry *entry_in(const olla_shape_table *t, const Onnx__GraphProto *g, const char *name)
{
    size_t i;
    if (!t || !name)
        return NULL;
    for (int depth = 0; g && g != t->main.graph && depth < 64; depth++) {
        const olla_shape_kept *k = kept_of(t, g);
        if (!k)
            return NULL;
        if (olla_strmap_find(&k->scope.map, name, &i))
            return &k->scope.entries[i];
        g = k->parent;
    }
    return olla_strmap_find(&t->main.map, name, &i) ? &t->main.entries[i] : NULL;
}

int olla_shape_has_graph(const olla_shape_table *t, const Onnx__GraphProto *g)
{
    return t && g && (g == t->main.graph || kept_of(t, g) != NULL);
}

const olla_value_type *olla_shape_lookup_in(const olla_shape_table *t, const Onnx__GraphProto *g, const char *name)
{
    const olla_shape_entry *e = entry_in(t, g, name);
    return e ? &e->type : NULL;
}

const char *olla_shape_unknown_reason_in(const olla_shape_table *t, const Onnx__GraphProto *g, const char *name)
{
    const olla_shape_entry *e = entry_in(t, g, name);
    if (!e || olla_value_bytes(&e->type) >= 0)
        return NULL;
    return e->reason ? e->reason : "size unknown";
}

int olla_shape_known_scalar(const olla_shape_table *t, const Onnx__GraphProto *g, const char *name, int64_t *value)
{
    const olla_shape_entry *e = entry_in(t, g, name);
    if (!e || !e->value.e || e->value.n != 1 || e->value.e[0].state != OLLA_SV_KNOWN)
        return 0;
    *value = e->value.e[0].i;
    return 1;
}

static const olla_value_type *graph_source_lookup(void *ctx, const char *name)
{
    const olla_shape_graph_source *s = ctx;
    return olla_shape_lookup_in(s->t, s->g, name);
}

static const char *graph_source_reason(void *ctx, const char *name)
{
    const olla_shape_graph_source *s = ctx;
    return olla_shape_unknown_reason_in(s->t, s->g, name);
}

olla_type_source olla_shape_type_source_in(olla_shape_graph_source *s)
{
    olla_type_source src = {graph_source_lookup, graph_source_reason, s};
    return src;
}
