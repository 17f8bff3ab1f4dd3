/* olla-onnx: writing a model back. Only the order of graph.node and the
 * metadata entries the caller owns change; everything else, unknown fields
 * included, is packed back as it was read. */
#include <stdlib.h>
#include <string.h>

#include "onnx/olla_external.h"
#include "onnx/olla_model.h"
#include "util/olla_file.h"

static char *parent_dir(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return strdup(".");
    if (slash == path)
        return strdup("/");
    return strndup(path, (size_t)(slash - path));
}

/* The fields a written model has in place of the read ones: graph.node
 * (as many as the model has) and metadata_props. */
typedef struct swapped_fields {
    Onnx__NodeProto **nodes;
    Onnx__StringStringEntryProto **props;
    size_t n_props;
} swapped_fields;

/* The packed model with the fields of f swapped in for the time of
 * packing; *buf is malloc'd. */
static olla_status pack_with(Onnx__ModelProto *mp, const swapped_fields *f, const char *out_path, uint8_t **buf,
                             size_t *len, olla_error *err)
{
    Onnx__GraphProto *g = mp->graph;
    Onnx__NodeProto **old_nodes = g->node;
    Onnx__StringStringEntryProto **old_props = mp->metadata_props;
    size_t old_np = mp->n_metadata_props;
    g->node = f->nodes;
    mp->metadata_props = f->props;
    mp->n_metadata_props = f->n_props;
    olla_status st = OLLA_OK;
    *len = onnx__model_proto__get_packed_size(mp);
    if (*len > (size_t)INT32_MAX)
        st = olla_error_set(err, OLLA_ERR_INPUT,
                            "%s would be %zu bytes, over protobuf's 2 GiB limit; store the weights as external data",
                            out_path, *len);
    else if (!(*buf = malloc(*len ? *len : 1)))
        st = olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory writing %s", out_path);
    else
        onnx__model_proto__pack(mp, *buf);
    g->node = old_nodes;
    mp->metadata_props = old_props;
    mp->n_metadata_props = old_np;
    return st;
}

olla_status olla_model_pack(const olla_model *m, const olla_model_edit *edit, const char *name, uint8_t **buf,
                            size_t *len, olla_error *err)
{
    const int *node_order = edit->node_order;
    int n_nodes = edit->n_nodes, n_meta = edit->n_meta;
    const olla_meta_entry *meta = edit->meta;
    const char *meta_prefix = edit->meta_prefix;
    Onnx__ModelProto *mp = m->proto; /* swapped fields are restored by pack_with */
    Onnx__GraphProto *g = mp->graph;
    *buf = NULL;
    *len = 0;
    if (n_nodes != (int)g->n_node)
        return olla_error_set(err, OLLA_ERR_INTERNAL, "internal error: the order lists %d nodes, the model has %zu",
                              n_nodes, g->n_node);
    Onnx__NodeProto **nodes = malloc((g->n_node + 1) * sizeof *nodes);
    Onnx__StringStringEntryProto **props = malloc((mp->n_metadata_props + (size_t)n_meta + 1) * sizeof *props);
    Onnx__StringStringEntryProto *kv = malloc(((size_t)n_meta + 1) * sizeof *kv);
    size_t np = 0, prefix_len = meta_prefix ? strlen(meta_prefix) : 0;
    olla_status st = OLLA_OK;
    if (!nodes || !props || !kv) {
        st = olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory writing %s", name);
        goto done;
    }
    for (int i = 0; i < n_nodes; i++)
        nodes[i] = g->node[node_order[i]];
    for (size_t i = 0; i < mp->n_metadata_props; i++) {
        const char *k = mp->metadata_props[i]->key;
        if (prefix_len && k && strncmp(k, meta_prefix, prefix_len) == 0)
            continue; /* the caller's entries are replaced */
        props[np++] = mp->metadata_props[i];
    }
    for (int i = 0; i < n_meta; i++) {
        onnx__string_string_entry_proto__init(&kv[i]);
        kv[i].key = (char *)meta[i].key;
        kv[i].value = (char *)meta[i].value;
        props[np++] = &kv[i];
    }
    swapped_fields f = {nodes, props, np};
    st = pack_with(mp, &f, name, buf, len, err);
done:
    free(nodes);
    free(props);
    free(kv);
    return st;
}

olla_status olla_model_write(const olla_model *m, const olla_model_edit *edit, const char *out_path, olla_error *err)
{
    uint8_t *buf = NULL;
    size_t len = 0;
    olla_status st = olla_model_pack(m, edit, out_path, &buf, &len, err);
    if (st != OLLA_OK)
        return st;
    char *dir = parent_dir(out_path);
    if (!dir)
        st = olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory writing %s", out_path);
    if (st == OLLA_OK)
        st = olla_external_mirror(m, dir, err);
    free(dir);
    if (st == OLLA_OK)
        st = olla_write_file_atomic(out_path, buf, len, err);
    free(buf);
    return st;
}
