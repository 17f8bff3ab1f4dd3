/* olla-onnx: a model with another node list (olla_model_rebuild). The new
 * nodes are shallow copies of the model's own NodeProtos with their names
 * and value lists swapped; the model is packed with them in place of
 * graph.node and unpacked again, so that the result owns all its memory and
 * the input model is left exactly as it was. */
#include <stdlib.h>
#include <string.h>

#include "onnx/olla_model.h"
#include "util/olla_strmap.h"

/* Every declared value of the main graph by name: value_info, then graph
 * outputs and inputs (the first declaration of a name wins). Values are
 * indices into one list of the three, in that order. */
static int index_declared(const Onnx__GraphProto *g, olla_strmap *map, const Onnx__ValueInfoProto ***all)
{
    size_t n = g->n_value_info + g->n_output + g->n_input, k = 0;
    const Onnx__ValueInfoProto **list = malloc((n + 1) * sizeof *list);
    if (!list || !olla_strmap_init(map, n + 1)) {
        free(list);
        return 0;
    }
    for (size_t i = 0; i < g->n_value_info; i++)
        list[k++] = g->value_info[i];
    for (size_t i = 0; i < g->n_output; i++)
        list[k++] = g->output[i];
    for (size_t i = 0; i < g->n_input; i++)
        list[k++] = g->input[i];
    for (size_t i = 0; i < k; i++)
        if (list[i]->name && !olla_strmap_find(map, list[i]->name, NULL) && !olla_strmap_put(map, list[i]->name, i)) {
            free(list);
            olla_strmap_free(map);
            return 0;
        }
    *all = list;
    return 1;
}

olla_status olla_model_rebuild(const olla_model *m, const olla_node_spec *nodes, int n_nodes,
                               const olla_value_alias *aliases, int n_aliases, olla_model **out, olla_error *err)
{
    Onnx__ModelProto *mp = m->proto; /* swapped fields are restored before returning */
    Onnx__GraphProto *g = mp->graph;
    *out = NULL;
    Onnx__NodeProto *made = calloc((size_t)n_nodes + 1, sizeof *made);
    Onnx__NodeProto **list = malloc(((size_t)n_nodes + 1) * sizeof *list);
    Onnx__ValueInfoProto *vi = calloc((size_t)n_aliases + 1, sizeof *vi);
    Onnx__ValueInfoProto **vlist = malloc((g->n_value_info + (size_t)n_aliases + 1) * sizeof *vlist);
    olla_strmap by_name = {0};
    const Onnx__ValueInfoProto **all = NULL;
    if (!made || !list || !vi || !vlist || !index_declared(g, &by_name, &all)) {
        free(made);
        free(list);
        free(vi);
        free(vlist);
        return olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory rewriting %s", m->path);
    }
    for (int i = 0; i < n_nodes; i++) {
        const olla_node_spec *s = &nodes[i];
        Onnx__NodeProto *src = g->node[s->source];
        if (!s->name && !s->inputs && !s->outputs) {
            list[i] = src;
            continue;
        }
        made[i] = *src;
        if (s->name)
            made[i].name = (char *)s->name;
        if (s->inputs)
            made[i].input = (char **)s->inputs;
        if (s->outputs)
            made[i].output = (char **)s->outputs;
        list[i] = &made[i];
    }
    size_t nv = g->n_value_info;
    memcpy(vlist, g->value_info, nv * sizeof *vlist);
    for (int i = 0; i < n_aliases; i++) {
        int at = olla_strmap_get(&by_name, aliases[i].like);
        const Onnx__ValueInfoProto *like = at >= 0 ? all[at] : NULL;
        if (!like || !like->type)
            continue;
        onnx__value_info_proto__init(&vi[i]);
        vi[i].name = (char *)aliases[i].name;
        vi[i].type = like->type;
        vlist[nv++] = &vi[i];
    }
    Onnx__NodeProto **old_nodes = g->node;
    size_t old_n = g->n_node;
    Onnx__ValueInfoProto **old_vi = g->value_info;
    size_t old_nv = g->n_value_info;
    g->node = list;
    g->n_node = (size_t)n_nodes;
    g->value_info = vlist;
    g->n_value_info = nv;
    size_t len = onnx__model_proto__get_packed_size(mp);
    uint8_t *buf = malloc(len ? len : 1);
    if (buf)
        onnx__model_proto__pack(mp, buf);
    g->node = old_nodes;
    g->n_node = old_n;
    g->value_info = old_vi;
    g->n_value_info = old_nv;
    free(made);
    free(list);
    free(vi);
    free(vlist);
    free(all);
    olla_strmap_free(&by_name);
    if (!buf)
        return olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory rewriting %s", m->path);
    olla_status st = olla_model_load_buffer(buf, len, m->path, m->dir, out, err);
    free(buf);
    return st;
}
