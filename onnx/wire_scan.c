/* olla-onnx: a structural scan of the protobuf wire format before protobuf-c
 * unpacks it. It tells "not an ONNX file" from "truncated", names where the
 * bytes go wrong (graph.node[3].attribute[0].g ...), and bounds the nesting of
 * subgraphs so that unpacking can never exhaust the stack. */
#include "onnx/olla_wire.h"

#include <stdio.h>
#include <string.h>

enum { MSG_NONE, MSG_MODEL, MSG_GRAPH, MSG_NODE, MSG_ATTR, MSG_FUNCTION, MSG_TRAINING, MSG_VALUE_INFO, MSG_TYPE,
       MSG_TYPE_WRAP };

/* Any message nesting deeper than this is refused (types can nest too). */
#define WIRE_MAX_NESTING 512

typedef struct {
    int msg;
    int field;
    int child;
    const char *name;
} wire_child;

/* The containment chain that can nest graphs inside graphs. */
static const wire_child children[] = {
    {MSG_MODEL, 7, MSG_GRAPH, "graph"},
    {MSG_MODEL, 20, MSG_TRAINING, "training_info"},
    {MSG_MODEL, 25, MSG_FUNCTION, "functions"},
    {MSG_TRAINING, 1, MSG_GRAPH, "initialization"},
    {MSG_TRAINING, 2, MSG_GRAPH, "algorithm"},
    {MSG_GRAPH, 1, MSG_NODE, "node"},
    {MSG_FUNCTION, 7, MSG_NODE, "node"},
    {MSG_NODE, 5, MSG_ATTR, "attribute"},
    {MSG_ATTR, 6, MSG_GRAPH, "g"},
    {MSG_ATTR, 11, MSG_GRAPH, "graphs"},
    {MSG_ATTR, 14, MSG_TYPE, "tp"},
    {MSG_ATTR, 15, MSG_TYPE, "type_protos"},
    {MSG_GRAPH, 11, MSG_VALUE_INFO, "input"},
    {MSG_GRAPH, 12, MSG_VALUE_INFO, "output"},
    {MSG_GRAPH, 13, MSG_VALUE_INFO, "value_info"},
    {MSG_VALUE_INFO, 2, MSG_TYPE, "type"},
    {MSG_TYPE, 4, MSG_TYPE_WRAP, "sequence_type"},
    {MSG_TYPE, 5, MSG_TYPE_WRAP, "map_type"},
    {MSG_TYPE, 9, MSG_TYPE_WRAP, "optional_type"},
    {MSG_TYPE_WRAP, 1, MSG_TYPE, "elem_type"}, /* sequence and optional */
    {MSG_TYPE_WRAP, 2, MSG_TYPE, "value_type"}, /* map */
};

typedef struct {
    const uint8_t *base;
    size_t len;
    int max_graph_depth;
    int nesting;
    olla_error *err;
    const char *file;
    char path[512];
} wire_ctx;

static int read_varint(const uint8_t *p, size_t n, size_t *used, uint64_t *out)
{
    uint64_t v = 0;
    for (size_t i = 0; i < n && i < 10; i++) {
        v |= (uint64_t)(p[i] & 0x7f) << (7 * i);
        if (!(p[i] & 0x80)) {
            *used = i + 1;
            *out = v;
            return 1;
        }
    }
    return n < 10 ? 0 /* ran off the end */ : -1 /* too long */;
}

static const char *where(const wire_ctx *c)
{
    return c->path[0] ? c->path : "the model";
}

static olla_status scan(wire_ctx *c, size_t start, size_t end, int msg, int graph_depth);

static olla_status scan_child(wire_ctx *c, const wire_child *ch, int index, size_t start, size_t end,
                              int graph_depth)
{
    size_t keep = strlen(c->path);
    char seg[64];
    if (index >= 0)
        snprintf(seg, sizeof seg, "%s%s[%d]", keep ? "." : "", ch->name, index);
    else
        snprintf(seg, sizeof seg, "%s%s", keep ? "." : "", ch->name);
    if (keep + strlen(seg) < sizeof c->path)
        strcat(c->path, seg);
    int depth = graph_depth + (ch->child == MSG_GRAPH);
    if (depth > c->max_graph_depth) {
        return olla_error_set(c->err, OLLA_ERR_INPUT,
                              "%s: subgraphs are nested more than %d deep at %s; olla-onnx refuses such models",
                              c->file, c->max_graph_depth, where(c));
    }
    if (c->nesting >= WIRE_MAX_NESTING)
        return olla_error_set(c->err, OLLA_ERR_INPUT,
                              "%s: messages are nested more than %d deep at %s; olla-onnx refuses such models",
                              c->file, WIRE_MAX_NESTING, where(c));
    c->nesting++;
    olla_status st = scan(c, start, end, ch->child, depth);
    c->nesting--;
    c->path[keep] = '\0';
    return st;
}

static olla_status scan(wire_ctx *c, size_t start, size_t end, int msg, int graph_depth)
{
    int counts[32] = {0};
    size_t pos = start;
    int known_fields = 0;
    while (pos < end) {
        size_t used;
        uint64_t key;
        int r = read_varint(c->base + pos, end - pos, &used, &key);
        if (r == 0)
            return olla_error_set(c->err, OLLA_ERR_INPUT, "%s: truncated: a field key at byte %zu in %s runs past the end",
                                  c->file, pos, where(c));
        if (r < 0 || (key >> 3) == 0)
            return olla_error_set(c->err, OLLA_ERR_INPUT, "%s: %s: invalid protobuf field key at byte %zu in %s",
                                  c->file, msg == MSG_MODEL && pos == 0 ? "not an ONNX model" : "malformed model",
                                  pos, where(c));
        size_t field_at = pos;
        pos += used;
        uint64_t field = key >> 3;
        unsigned wt = (unsigned)(key & 7);
        switch (wt) {
        case 0: {
            uint64_t v;
            r = read_varint(c->base + pos, end - pos, &used, &v);
            if (r == 0)
                return olla_error_set(c->err, OLLA_ERR_INPUT, "%s: truncated: field %llu at byte %zu in %s runs past the end",
                                      c->file, (unsigned long long)field, field_at, where(c));
            if (r < 0)
                return olla_error_set(c->err, OLLA_ERR_INPUT, "%s: malformed model: bad varint at byte %zu in %s",
                                      c->file, pos, where(c));
            pos += used;
            break;
        }
        case 1:
            if (end - pos < 8)
                return olla_error_set(c->err, OLLA_ERR_INPUT, "%s: truncated: field %llu at byte %zu in %s runs past the end",
                                      c->file, (unsigned long long)field, field_at, where(c));
            pos += 8;
            break;
        case 5:
            if (end - pos < 4)
                return olla_error_set(c->err, OLLA_ERR_INPUT, "%s: truncated: field %llu at byte %zu in %s runs past the end",
                                      c->file, (unsigned long long)field, field_at, where(c));
            pos += 4;
            break;
        case 2: {
            uint64_t n;
            r = read_varint(c->base + pos, end - pos, &used, &n);
            if (r == 0)
                return olla_error_set(c->err, OLLA_ERR_INPUT, "%s: truncated: field %llu at byte %zu in %s runs past the end",
                                      c->file, (unsigned long long)field, field_at, where(c));
            if (r < 0)
                return olla_error_set(c->err, OLLA_ERR_INPUT, "%s: malformed model: bad length at byte %zu in %s",
                                      c->file, pos, where(c));
            pos += used;
            if (n > end - pos) {
                if (end == c->len)
                    return olla_error_set(c->err, OLLA_ERR_INPUT,
                                          "%s: truncated: field %llu at byte %zu in %s needs %llu bytes, only %zu remain in the file",
                                          c->file, (unsigned long long)field, field_at, where(c),
                                          (unsigned long long)n, end - pos);
                return olla_error_set(c->err, OLLA_ERR_INPUT,
                                      "%s: malformed model: field %llu at byte %zu in %s is longer than its enclosing message",
                                      c->file, (unsigned long long)field, field_at, where(c));
            }
            for (size_t i = 0; i < sizeof children / sizeof children[0]; i++) {
                if (children[i].msg == msg && (uint64_t)children[i].field == field) {
                    int repeated = !(msg == MSG_MODEL && field == 7) && !(msg == MSG_ATTR && field == 6) &&
                                   !(msg == MSG_ATTR && field == 14) && msg != MSG_VALUE_INFO &&
                                   msg != MSG_TYPE && msg != MSG_TYPE_WRAP;
                    int idx = repeated ? counts[field & 31]++ : -1;
                    olla_status st = scan_child(c, &children[i], idx, pos, pos + (size_t)n, graph_depth);
                    if (st != OLLA_OK)
                        return st;
                    break;
                }
            }
            pos += (size_t)n;
            break;
        }
        default:
            return olla_error_set(c->err, OLLA_ERR_INPUT, "%s: %s: unsupported protobuf wire type %u at byte %zu in %s",
                                  c->file, msg == MSG_MODEL && known_fields == 0 ? "not an ONNX model" : "malformed model",
                                  wt, field_at, where(c));
        }
        if (msg == MSG_MODEL && (field == 1 || field == 7 || field == 8))
            known_fields++;
    }
    if (msg == MSG_MODEL && known_fields == 0)
        return olla_error_set(c->err, OLLA_ERR_INPUT,
                              "%s: not an ONNX model: no ir_version, opset_import or graph field found", c->file);
    return OLLA_OK;
}

olla_status olla_wire_scan_model(const uint8_t *data, size_t len, const char *file, int max_graph_depth,
                                 olla_error *err)
{
    wire_ctx c;
    memset(&c, 0, sizeof c);
    c.base = data;
    c.len = len;
    c.max_graph_depth = max_graph_depth;
    c.err = err;
    c.file = file;
    if (len == 0)
        return olla_error_set(err, OLLA_ERR_INPUT, "%s: not an ONNX model: the file is empty", file);
    return scan(&c, 0, len, MSG_MODEL, 0);
}
