/* olla-onnx: the scopes of shape inference: a graph's names and their
 * entries, looked up through the enclosing graphs' scopes, so that a
 * subgraph sees the values of the graphs around it. */
#include <stdlib.h>
#include <string.h>

#include "passes/shapes/shape_engine.h"

olla_shape_entry *olla_shape__find(olla_shape_scope *s, const char *name)
{
    size_t i;
    for (; s; s = s->parent)
        if (olla_strmap_find(&s->map, name, &i))
            return &s->entries[i];
    return NULL;
}

void olla_shape__scope_free(olla_shape_scope *s)
{
    free(s->entries);
    free(s->decls);
    olla_strmap_free(&s->map);
    olla_strmap_free(&s->decl);
    memset(s, 0, sizeof *s);
}

