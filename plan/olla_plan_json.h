/* olla-onnx: the plan as stored in the model's metadata_props (olla.plan). */
#ifndef OLLA_PLAN_JSON_H
#define OLLA_PLAN_JSON_H

#include <stdint.h>

#include "olla_bindings.h"
#include "olla_error.h"

#define OLLA_META_VERSION "olla.version"
#define OLLA_META_ARENA "olla.arena_bytes"
#define OLLA_META_PLAN "olla.plan"
/* Version 2 adds buffer sharing; version 1 plans (no sharing) are still read. */
#define OLLA_PLAN_FORMAT_VERSION 2

#include "olla_plan.h"

typedef struct olla_stored_entry {
    char *name;
    int64_t offset, bytes;
    olla_buffer_share share;
    char *shares; /* the tensor whose buffer it takes, or NULL */
} olla_stored_entry;

typedef struct olla_stored_plan {
    int version;
    int64_t alignment, arena_bytes;
    int sharing; /* 1: made under the runtime's sharing rules */
    int n_entries;
    olla_stored_entry *entries; /* in allocation order */
    int n_dims;                 /* "dims": the bindings the plan was made for */
    olla_dim_binding *dims;     /* (names malloc'd); none in older plans */
    int n_inputs;               /* "inputs": every graph input's shape */
    olla_input_shape *inputs;   /* (names and dims malloc'd) */
    olla_runtime runtime;       /* "runtime": who executes the file; listed when absent */
    int n_order;                /* "order": the positions in graph.node in the order the runtime */
    int *order;                 /* executes them, which the offsets are for; none for listed */
    int64_t memory_limit;       /* "memory_limit": the peak (and, for listed, the arena) must be at
                                   most this; -1 when absent */
} olla_stored_plan;

/* {"version":2,"alignment":A,"arena_bytes":N,"sharing":"runtime"|"none",
 *  "tensors":[{"name","offset","bytes"[,"shares","sharing":"alias"|"inplace"]},...],
 *  "dims":{"batch":1},"inputs":{"x":[1,3,224,224]}[,"runtime":"ort","order":[2,0,1,...]]
 *  [,"memory_limit":N]};
 * malloc'd */
char *olla_plan_to_json(const olla_plan *plan);
/* Parses and validates the JSON text (types, non-negative numbers, a share
 * names a tensor and says its kind). */
olla_status olla_plan_from_json(const char *text, olla_stored_plan *out, olla_error *err);
void olla_stored_plan_free(olla_stored_plan *p);

#endif
