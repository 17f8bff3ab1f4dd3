/* olla-onnx: the plan as JSON in the model's metadata (olla.plan): written
 * from an olla_plan, and read back, checked field by field, into an
 * olla_stored_plan. */
#include "plan/olla_plan_json.h"

#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

static const char *share_name(olla_buffer_share s)
{
    return s == OLLA_BUFFER_VIEW ? "alias" : s == OLLA_BUFFER_INPLACE ? "inplace" : NULL;
}

/* ---- what the plan was made for: "dims" and "inputs" ---- */

static json_object *dims_to_json(const olla_plan *plan)
{
    json_object *o = json_object_new_object();
    for (int i = 0; o && i < plan->n_dims; i++)
        json_object_object_add(o, plan->dims[i].name, json_object_new_int64(plan->dims[i].value));
    return o;
}

static json_object *inputs_to_json(const olla_plan *plan)
{
    json_object *o = json_object_new_object();
    for (int i = 0; o && i < plan->n_inputs; i++) {
        json_object *shape = json_object_new_array_ext(plan->inputs[i].rank);
        for (int d = 0; shape && d < plan->inputs[i].rank; d++)
            json_object_array_add(shape, json_object_new_int64(plan->inputs[i].dims[d]));
        json_object_object_add(o, plan->inputs[i].name, shape);
    }
    return o;
}

static olla_status parse_dims(json_object *root, olla_stored_plan *out, olla_error *err)
{
    json_object *o;
    if (!json_object_object_get_ex(root, "dims", &o))
        return OLLA_OK; /* a plan written before bindings were recorded */
    if (!json_object_is_type(o, json_type_object))
        return olla_error_set(err, OLLA_ERR_INPUT, "the olla.plan \"dims\" is not an object of NAME: VALUE");
    out->dims = calloc((size_t)json_object_object_length(o) + 1, sizeof *out->dims);
    if (!out->dims)
        return olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory parsing the plan");
    json_object_object_foreach(o, key, val)
    {
        olla_dim_binding *b = &out->dims[out->n_dims];
        if (!json_object_is_type(val, json_type_int) || (b->value = json_object_get_int64(val)) < 0)
            return olla_error_set(err, OLLA_ERR_INPUT, "the olla.plan dims entry '%s' is not an integer >= 0", key);
        if (!(b->name = strdup(key)))
            return olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory parsing the plan");
        out->n_dims++;
    }
    return OLLA_OK;
}

static olla_status parse_one_input(const char *key, json_object *val, olla_input_shape *in, olla_error *err)
{
    if (!json_object_is_type(val, json_type_array))
        return olla_error_set(err, OLLA_ERR_INPUT, "the olla.plan inputs entry '%s' is not an array of sizes", key);
    size_t rank = json_object_array_length(val);
    int64_t *dims = calloc(rank + 1, sizeof *dims);
    if (!dims)
        return olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory parsing the plan");
    in->dims = dims;
    for (size_t d = 0; d < rank; d++) {
        json_object *v = json_object_array_get_idx(val, d);
        if (!json_object_is_type(v, json_type_int) || (dims[d] = json_object_get_int64(v)) < 0)
            return olla_error_set(err, OLLA_ERR_INPUT, "the olla.plan inputs entry '%s' has a size that is not >= 0",
                                  key);
    }
    in->rank = (int)rank;
    in->name = strdup(key);
    return in->name ? OLLA_OK : olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory parsing the plan");
}

static olla_status parse_inputs(json_object *root, olla_stored_plan *out, olla_error *err)
{
    json_object *o;
    if (!json_object_object_get_ex(root, "inputs", &o))
        return OLLA_OK;
    if (!json_object_is_type(o, json_type_object))
        return olla_error_set(err, OLLA_ERR_INPUT, "the olla.plan \"inputs\" is not an object of NAME: [sizes]");
    out->inputs = calloc((size_t)json_object_object_length(o) + 1, sizeof *out->inputs);
    if (!out->inputs)
        return olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory parsing the plan");
    json_object_object_foreach(o, key, val)
    {
        olla_status st = parse_one_input(key, val, &out->inputs[out->n_inputs], err);
        if (out->inputs[out->n_inputs].name || out->inputs[out->n_inputs].dims)
            out->n_inputs++; /* owned from here, freed with the plan */
        if (st != OLLA_OK)
            return st;
    }
    return OLLA_OK;
}

/* ---- who executes it: "runtime" and "order" ---- */

static const char *const runtime_names[] = {"listed", "ort", "ort-priority"};

/* The order the runtime executes, as positions in the written graph.node;
 * absent for listed (the written order itself). */
static json_object *order_to_json(const olla_plan *plan)
{
    int *pos = malloc(((size_t)plan->n_nodes + 1) * sizeof(int));
    json_object *o = pos ? json_object_new_array_ext(plan->n_nodes) : NULL;
    for (int i = 0; o && i < plan->n_nodes; i++)
        pos[plan->listing[i]] = i;
    for (int i = 0; o && i < plan->n_nodes; i++)
        json_object_array_add(o, json_object_new_int(pos[plan->order[i]]));
    free(pos);
    return o;
}

static olla_status parse_runtime(json_object *root, olla_stored_plan *out, olla_error *err)
{
    json_object *rt, *order;
    out->runtime = OLLA_RUNTIME_LISTED;
    if (json_object_object_get_ex(root, "runtime", &rt)) {
        const char *name = json_object_is_type(rt, json_type_string) ? json_object_get_string(rt) : "";
        int found = 0;
        for (int k = 0; k < 3; k++)
            if (strcmp(name, runtime_names[k]) == 0) {
                out->runtime = (olla_runtime)k;
                found = 1;
            }
        if (!found)
            return olla_error_set(err, OLLA_ERR_INPUT,
                                  "the olla.plan \"runtime\" must be \"listed\", \"ort\" or \"ort-priority\"");
    }
    if (!json_object_object_get_ex(root, "order", &order))
        return OLLA_OK;
    size_t n = json_object_is_type(order, json_type_array) ? json_object_array_length(order) : 0;
    if (!json_object_is_type(order, json_type_array) || !(out->order = calloc(n + 1, sizeof(int))))
        return olla_error_set(err, json_object_is_type(order, json_type_array) ? OLLA_ERR_INTERNAL : OLLA_ERR_INPUT,
                              "the olla.plan \"order\" is not an array of node positions");
    for (size_t i = 0; i < n; i++) {
        json_object *v = json_object_array_get_idx(order, i);
        int64_t x = json_object_is_type(v, json_type_int) ? json_object_get_int64(v) : -1;
        if (x < 0 || x >= (int64_t)n)
            return olla_error_set(err, OLLA_ERR_INPUT, "the olla.plan \"order\" has an entry %zu that is no node position",
                                  i);
        out->order[i] = (int)x;
    }
    out->n_order = (int)n;
    return OLLA_OK;
}

/* ---- the plan ---- */

char *olla_plan_to_json(const olla_plan *plan)
{
    json_object *root = json_object_new_object();
    json_object *arr = json_object_new_array_ext(plan->n_entries);
    if (!root || !arr) {
        json_object_put(root);
        json_object_put(arr);
        return NULL;
    }
    json_object_object_add(root, "version", json_object_new_int(OLLA_PLAN_FORMAT_VERSION));
    json_object_object_add(root, "alignment", json_object_new_int64(plan->alignment));
    json_object_object_add(root, "arena_bytes", json_object_new_int64(plan->arena_bytes));
    json_object_object_add(root, "sharing", json_object_new_string(plan->sharing ? "runtime" : "none"));
    for (int i = 0; i < plan->n_entries; i++) {
        const olla_plan_entry *e = &plan->entries[i];
        json_object *o = json_object_new_object();
        json_object_object_add(o, "name", json_object_new_string(e->name));
        json_object_object_add(o, "offset", json_object_new_int64(e->offset));
        json_object_object_add(o, "bytes", json_object_new_int64(e->bytes));
        if (e->share != OLLA_BUFFER_OWN && e->shares >= 0) {
            json_object_object_add(o, "shares", json_object_new_string(plan->entries[e->shares].name));
            json_object_object_add(o, "sharing", json_object_new_string(share_name(e->share)));
        }
        json_object_array_add(arr, o);
    }
    json_object_object_add(root, "tensors", arr);
    json_object_object_add(root, "dims", dims_to_json(plan));
    json_object_object_add(root, "inputs", inputs_to_json(plan));
    if (plan->runtime != OLLA_RUNTIME_LISTED && plan->listing) {
        json_object_object_add(root, "runtime", json_object_new_string(runtime_names[plan->runtime]));
        json_object_object_add(root, "order", order_to_json(plan));
    }
    if (plan->memory_limit >= 0)
        json_object_object_add(root, "memory_limit", json_object_new_int64(plan->memory_limit));
    const char *s = json_object_to_json_string_ext(root, JSON_C_TO_STRING_PLAIN);
    char *copy = s ? strdup(s) : NULL;
    json_object_put(root);
    return copy;
}

void olla_stored_plan_free(olla_stored_plan *p)
{
    if (!p)
        return;
    for (int i = 0; i < p->n_entries; i++) {
        free(p->entries[i].name);
        free(p->entries[i].shares);
    }
    free(p->entries);
    for (int i = 0; i < p->n_dims; i++)
        free((char *)p->dims[i].name);
    free(p->dims);
    for (int i = 0; i < p->n_inputs; i++) {
        free((char *)p->inputs[i].name);
        free((int64_t *)p->inputs[i].dims);
    }
    free(p->inputs);
    free(p->order);
    memset(p, 0, sizeof *p);
}

/* The optional "shares"/"sharing" pair of entry i: both or neither. */
static olla_status read_share(json_object *o, size_t i, olla_stored_entry *e, olla_error *err)
{
    json_object *shares, *kind;
    int has_shares = json_object_object_get_ex(o, "shares", &shares);
    int has_kind = json_object_object_get_ex(o, "sharing", &kind);
    if (!has_shares && !has_kind)
        return OLLA_OK;
    const char *k = has_kind && json_object_is_type(kind, json_type_string) ? json_object_get_string(kind) : "";
    if (!has_shares || !json_object_is_type(shares, json_type_string) || !has_kind ||
        (strcmp(k, "alias") != 0 && strcmp(k, "inplace") != 0))
        return olla_error_set(err, OLLA_ERR_INPUT,
                              "entry %zu of the olla.plan tensors needs \"shares\" (a tensor name) and \"sharing\" "
                              "(\"alias\" or \"inplace\") together",
                              i);
    e->share = strcmp(k, "alias") == 0 ? OLLA_BUFFER_VIEW : OLLA_BUFFER_INPLACE;
    if (!(e->shares = strdup(json_object_get_string(shares))))
        return olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory parsing the plan");
    return OLLA_OK;
}

static int get_i64(json_object *o, const char *key, int64_t *out)
{
    json_object *v;
    if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_int))
        return 0;
    *out = json_object_get_int64(v);
    return *out >= 0;
}

olla_status olla_plan_from_json(const char *text, olla_stored_plan *out, olla_error *err)
{
    memset(out, 0, sizeof *out);
    json_tokener *tok = json_tokener_new();
    if (!tok)
        return olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory parsing the plan");
    json_object *root = json_tokener_parse_ex(tok, text, (int)strlen(text));
    enum json_tokener_error jerr = json_tokener_get_error(tok);
    json_tokener_free(tok);
    if (!root || jerr != json_tokener_success) {
        json_object_put(root);
        return olla_error_set(err, OLLA_ERR_INPUT, "the olla.plan metadata is not valid JSON (%s)",
                              jerr == json_tokener_continue ? "it ends early" : json_tokener_error_desc(jerr));
    }
    olla_status st = OLLA_OK;
    int64_t version;
    json_object *arr;
    if (!json_object_is_type(root, json_type_object) || !get_i64(root, "version", &version)) {
        st = olla_error_set(err, OLLA_ERR_INPUT, "the olla.plan metadata has no version");
        goto done;
    }
    if (version < 1 || version > OLLA_PLAN_FORMAT_VERSION) {
        st = olla_error_set(err, OLLA_ERR_INPUT,
                            "the olla.plan metadata is format version %lld; this build reads versions 1 to %d",
                            (long long)version, OLLA_PLAN_FORMAT_VERSION);
        goto done;
    }
    out->version = (int)version;
    json_object *sharing;
    if (version >= 2 && json_object_object_get_ex(root, "sharing", &sharing)) {
        const char *sv = json_object_is_type(sharing, json_type_string) ? json_object_get_string(sharing) : "";
        if (strcmp(sv, "runtime") != 0 && strcmp(sv, "none") != 0) {
            st = olla_error_set(err, OLLA_ERR_INPUT, "the olla.plan \"sharing\" must be \"runtime\" or \"none\"");
            goto done;
        }
        out->sharing = strcmp(sv, "runtime") == 0;
    }
    if (!get_i64(root, "alignment", &out->alignment) || out->alignment < 1 ||
        !get_i64(root, "arena_bytes", &out->arena_bytes)) {
        st = olla_error_set(err, OLLA_ERR_INPUT, "the olla.plan metadata lacks a valid alignment or arena_bytes");
        goto done;
    }
    if (!json_object_object_get_ex(root, "tensors", &arr) || !json_object_is_type(arr, json_type_array)) {
        st = olla_error_set(err, OLLA_ERR_INPUT, "the olla.plan metadata has no tensors array");
        goto done;
    }
    size_t n = json_object_array_length(arr);
    out->entries = calloc(n + 1, sizeof *out->entries);
    if (!out->entries) {
        st = olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory parsing the plan");
        goto done;
    }
    for (size_t i = 0; i < n; i++) {
        json_object *o = json_object_array_get_idx(arr, i), *name;
        olla_stored_entry *e = &out->entries[i];
        if (!json_object_is_type(o, json_type_object) || !json_object_object_get_ex(o, "name", &name) ||
            !json_object_is_type(name, json_type_string) || !get_i64(o, "offset", &e->offset) ||
            !get_i64(o, "bytes", &e->bytes)) {
            st = olla_error_set(err, OLLA_ERR_INPUT,
                                "entry %zu of the olla.plan tensors needs a name, a non-negative offset and bytes", i);
            goto done;
        }
        e->name = strdup(json_object_get_string(name));
        out->n_entries = (int)i + 1;
        if (!e->name) {
            st = olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory parsing the plan");
            goto done;
        }
        if (version >= 2 && (st = read_share(o, i, e, err)) != OLLA_OK)
            goto done;
    }
    if ((st = parse_dims(root, out, err)) == OLLA_OK && (st = parse_inputs(root, out, err)) == OLLA_OK)
        st = parse_runtime(root, out, err);
    out->memory_limit = -1;
    json_object *lim;
    if (st == OLLA_OK && json_object_object_get_ex(root, "memory_limit", &lim) &&
        (!get_i64(root, "memory_limit", &out->memory_limit) || out->memory_limit < 1))
        st = olla_error_set(err, OLLA_ERR_INPUT, "the olla.plan \"memory_limit\" is not a positive number of bytes");
done:
    json_object_put(root);
    if (st != OLLA_OK)
        olla_stored_plan_free(out);
    return st;
}
