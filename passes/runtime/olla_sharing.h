/* olla-onnx: which operator outputs may share an input's buffer, as ONNX
 * Runtime's CPU kernels declare it. One table, one lookup; the rules are
 * facts about ORT's kernel registrations, the contract below says what a plan
 * may do with them.
 *
 * Two kinds of share, both between input `input` and output `output` of one
 * node:
 *
 * - Alias: the output is a view of the input's buffer. It takes no new
 *   memory. The buffer then stays live until the last reader of any view of
 *   it (or to the end, when any view is a graph output). A view of a graph
 *   input or an initializer needs no arena memory at all.
 *
 * - In place: the output is written into the input's buffer. Allowed only
 *   when, in the order being evaluated, that buffer has no later reader (no
 *   later consumer of the input nor of any tensor sharing its buffer, and the
 *   node reads it once), the input is not a graph output, is planned (not a
 *   graph input or initializer, not a view of one) and has exactly the
 *   output's byte size. Otherwise the output gets a buffer of its own. This
 *   depends on the order: two orders of one graph can share differently.
 *
 * ORT itself is stricter in two ways. For in place its planner asks for the
 * same element size and the same static shape (every dim equal as a value or
 * as the same dim_param) and never shares strings. And an output that is a
 * graph output gets a buffer of its own under either kind (the kernel copies).
 * A model of ORT's own allocation should test both; a plan that follows its
 * own offsets only needs the byte size.
 *
 * A rule says the kernel *declares* the share. Whether a node uses it is the
 * planner's decision under the contract above. */
#ifndef OLLA_SHARING_H
#define OLLA_SHARING_H

#include <stddef.h>
#include <stdint.h>

typedef enum olla_share_kind {
    OLLA_SHARE_ALIAS = 1,   /* output is a view of the input (ORT: Alias, VariadicAlias) */
    OLLA_SHARE_INPLACE = 2  /* output may be written into the input (ORT: MayInplace) */
} olla_share_kind;

typedef struct olla_share_rule {
    const char *domain;  /* "" = default ONNX domain (a node's "ai.onnx" matches it too) */
    const char *op_type;
    /* Opset range of the kernel registration, inclusive; last_version 0 = open. */
    int since_version, last_version;
    olla_share_kind kind;
    /* Output `output` shares the buffer of input `input`. When variadic is 1,
     * output `output + i` shares input `input + i` for every i >= 0 (ORT's
     * VariadicAlias); use olla_share_rule_input() to resolve an output. */
    int input, output;
    int variadic;
    /* Bit (1 << ONNX TensorProto.DataType) of each element type of the
     * node's output 0 for which ORT selects the registration that declares
     * this share; 0 = every type the kernel takes. */
    uint64_t elem_types;
    const char *source; /* the ORT file that registers the kernel */
} olla_share_rule;

/* The whole table, sorted by (domain, op_type, since_version, kind, output,
 * input); *count receives its length. Static storage, never freed. */
const olla_share_rule *olla_share_rules(size_t *count);

/* The rules that apply to one node: its domain (NULL, "" and "ai.onnx" are the
 * default domain), op type, the opset the model imports for that domain, and
 * the element type of the node's output 0 (0 = do not filter by type). Writes
 * up to max pointers into out (out may be NULL when max is 0) and returns how
 * many rules apply, which may exceed max.
 *
 * ORT matches a kernel by the since-version of the schema the node resolves
 * to, not by the imported opset. ORT starts a registration at each schema
 * version, so both find the same row (checked against ONNX's schema history
 * for every default-domain rule up to opset 17). */
int olla_share_rules_for(const char *domain, const char *op_type, int64_t opset, int32_t out_elem_type,
                         const olla_share_rule **out, int max);

/* The input whose buffer output `output` shares under rule r, or -1 when r
 * says nothing about that output. */
int olla_share_rule_input(const olla_share_rule *r, int output);

#endif
