/* olla-onnx: loading and writing ONNX model files (protobuf-c). The model
 * keeps every field it was read with, unknown ones included. */
#ifndef OLLA_MODEL_H
#define OLLA_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "olla_error.h"
#include "onnx.pb-c.h"

typedef struct olla_model {
    Onnx__ModelProto *proto; /* owned; unknown fields kept by protobuf-c */
    char *path;              /* as given, or "<memory>" */
    char *dir;               /* folder external data is relative to */
} olla_model;

/* The loading behind the public olla_model_load(), olla_model_load_bytes()
 * and olla_model_free() (include/olla.h, which declares those once; the
 * pipeline defines them over these). Reads and validates a model file:
 * protobuf well-formed, a graph present, external data references safe and
 * present (never read). */
olla_status olla_model_load_file(const char *path, olla_model **out, olla_error *err);
/* Same from bytes in memory; dir is the folder for external data (may be NULL:
 * then any external reference is an error). */
olla_status olla_model_load_buffer(const uint8_t *data, size_t len, const char *name, const char *dir,
                                   olla_model **out, olla_error *err);
void olla_model_destroy(olla_model *m);

/* One metadata_props entry. */
typedef struct olla_meta_entry {
    const char *key, *value;
} olla_meta_entry;

/* What writing a model changes: graph.node in node_order (n_nodes proto
 * indices, a permutation), and metadata_props without the entries whose key
 * starts with meta_prefix (NULL: none removed) plus meta[0..n_meta). */
typedef struct olla_model_edit {
    const int *node_order;
    int n_nodes;
    const olla_meta_entry *meta;
    int n_meta;
    const char *meta_prefix;
} olla_model_edit;

/* The bytes olla_model_write writes, in memory (*buf malloc'd), with the
 * edit applied; name is what a message calls the output. */
olla_status olla_model_pack(const olla_model *m, const olla_model_edit *edit, const char *name, uint8_t **buf,
                            size_t *len, olla_error *err);

/* Writes the model with the edit applied to out_path. External data is made
 * available beside out_path when it goes to another folder. The file is
 * written whole or not at all (util/olla_file.h). */
olla_status olla_model_write(const olla_model *m, const olla_model_edit *edit, const char *out_path, olla_error *err);

/* One node of a rebuilt graph: the model's node `source` as it is, or with
 * another name, other input names or other output names (NULL: the
 * source's; the arrays have the source's counts; "" leaves an optional
 * input or output out). Attributes and every other field are the source's. */
typedef struct olla_node_spec {
    int source;
    const char *name;
    const char *const *inputs;
    const char *const *outputs;
} olla_node_spec;

/* A value_info entry for `name` with the type the graph declares for
 * `like` (value_info, graph output or input); nothing when it declares none. */
typedef struct olla_value_alias {
    const char *name, *like;
} olla_value_alias;

/* A new model, independent of m: m with graph.node replaced by nodes (in
 * that order; a source may appear more than once, as copies under other
 * output names) and value_info extended by aliases. Everything else, unknown
 * fields included, is m's; external data references stay relative to m's
 * folder. The caller checks that the graph it describes is well formed: the
 * result is loaded back as any model is. */
olla_status olla_model_rebuild(const olla_model *m, const olla_node_spec *nodes, int n_nodes,
                               const olla_value_alias *aliases, int n_aliases, olla_model **out, olla_error *err);

/* Opset version imported for a domain ("" or "ai.onnx" = default domain);
 * 0 when the domain is not imported. */
int64_t olla_model_opset(const Onnx__ModelProto *m, const char *domain);

#endif
